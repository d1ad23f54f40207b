"""A real MCP server for the tests, written with the official SDK's FastMCP.

Run as ``python -m tests.mcp_test_server [MODE] [--http PORT]``. The tools cover what Baton must
show: plain text, annotations (read-only / destructive), an image, structured content, an error
result, the environment (to prove secrets were scrubbed), a file write and a TCP connection (to
prove the sandbox and its network switch), and a call that exits the process. The modes
misbehave the ways real servers do:

* ``normal`` — the tools above, over stdio (or streamable HTTP with ``--http PORT``; add
  ``--access-log`` for a line per HTTP request on stderr: ``DELETE /mcp 200``);
* ``crash`` — exits at start-up with a message on stderr;
* ``hang`` — starts and never answers;
* ``garbage`` — prints lines that are not JSON-RPC, then serves normally;
* ``many`` — lists 1,000 tools;
* ``spawn`` — starts a child process that would outlive it, writing its pid to ``child.pid``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mcp.server.fastmcp import FastMCP, Image
from mcp.types import ToolAnnotations
from pydantic import BaseModel

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f"
    "15c4890000000d49444154789c63f8dfc0f01f000680027f104c1be10000000049454e44ae426082"
)
"""A 1×1 PNG."""


class Weather(BaseModel):
    city: str
    celsius: float


def build(port: int = 8000) -> FastMCP:
    server = FastMCP(
        "baton-test",
        instructions="A test server for Baton's MCP client.",
        port=port,
        log_level="WARNING",
    )

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def echo(text: str) -> str:
        """Say the text back."""
        return f"echo: {text}"

    @server.tool(annotations=ToolAnnotations(destructiveHint=True))
    def delete_everything(confirm: bool) -> str:
        """Pretend to delete everything."""
        return "deleted" if confirm else "kept"

    @server.tool()
    def picture() -> Image:
        """A tiny picture."""
        return Image(data=PNG, format="png")

    @server.tool()
    def weather(city: str) -> Weather:
        """The weather, as structured content."""
        return Weather(city=city, celsius=21.5)

    @server.tool()
    def fail() -> str:
        """Always an error result."""
        raise ValueError("this tool always fails")

    @server.tool()
    def environment(name: str) -> str:
        """One environment variable of the server's process."""
        return os.environ.get(name, "<unset>")

    @server.tool()
    def write_file(path: str, text: str) -> str:
        """Write a file (relative paths from the server's folder)."""
        try:
            Path(path).write_text(text, encoding="utf-8")
        except OSError as error:
            return f"refused: {error.strerror}"
        return "written"

    @server.tool()
    def connect(port: int) -> str:
        """Open a TCP connection to 127.0.0.1:``port`` and say hello (the sandbox's network
        switch: the test's listener sees the hello, or nothing)."""
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
                connection.sendall(b"hello from the MCP server\n")
        except OSError as error:
            return f"refused: {error}"
        return "connected"

    @server.tool()
    async def sleep(seconds: float) -> str:
        """Wait, then answer (a call that is still running when the run is cancelled)."""
        import anyio

        # A test waits for this line: the call is in the server's hands.
        print(f"sleep: {seconds:g} s", file=sys.stderr, flush=True)
        await anyio.sleep(seconds)
        return "slept"

    @server.tool()
    def exit_now() -> str:
        """End the server's process in the middle of a call."""
        os._exit(3)

    return server


def _many(server: FastMCP) -> None:
    def tool(value: int = 0) -> str:
        return f"tool: {value}"

    for number in range(1000):
        server.add_tool(tool, name=f"tool_{number:04d}", description=f"Numbered tool {number}.")


def _serve_logged(server: FastMCP, port: int) -> None:
    """Streamable HTTP with one plain line per request on stderr, ``METHOD PATH STATUS``, when
    its answer starts (uvicorn's access log needs FastMCP's INFO level, whose rich lines wrap)."""
    import uvicorn

    app = server.streamable_http_app()

    async def logged(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def noted(message: Any) -> None:
            if message["type"] == "http.response.start":
                line = f"{scope['method']} {scope['path']} {message['status']}"
                print(line, file=sys.stderr, flush=True)
            await send(message)

        await app(scope, receive, noted)

    uvicorn.run(logged, host="127.0.0.1", port=port, log_level="warning")


def main(argv: list[str]) -> None:
    mode = argv[0] if argv and not argv[0].startswith("--") else "normal"
    port = int(argv[argv.index("--http") + 1]) if "--http" in argv else 0
    if mode == "crash":
        print("fatal: the test server refuses to start", file=sys.stderr, flush=True)
        sys.exit(1)
    if mode == "hang":
        while True:
            time.sleep(3600)
    server = build(port or 8000)
    if mode == "many":
        _many(server)
    if mode == "garbage":
        sys.stdout.write("this is not JSON-RPC\n{broken\n")
        sys.stdout.flush()
    if mode == "spawn":
        marker = f"import time; time.sleep(3600)  # spawned in {Path.cwd()}"
        child = subprocess.Popen([sys.executable, "-c", marker], start_new_session=True)
        Path("child.pid").write_text(str(child.pid), encoding="utf-8")
    if port and "--access-log" in argv:
        _serve_logged(server, port)
    elif port:
        server.run(transport="streamable-http")
    else:
        server.run()


if __name__ == "__main__":
    main(sys.argv[1:])
