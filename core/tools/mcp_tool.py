"""MCP tools as Baton tools: ``mcp__<server>__<tool>``, gated and shown like every other
(architecture: "Tools, approvals and trust").

An agent chooses what it gets in its frontmatter — whole servers (``mcp: [github]``) or single
tools in ``tools:`` (``mcp__github__create_issue``, or ``mcp__github__*``), Claude Code's
names — and nothing is offered by default. :func:`offer_mcp_tools` starts the servers chosen
(through the run's :class:`~core.tools.mcp_hub.McpHub`) and returns one :class:`McpTool` per
tool, plus a warning per server that could not start or offered too much; the step goes on
with the rest.

A call's arguments are checked against the tool's JSON Schema before the gate sees them (so a
person approves what will really be sent); its result becomes text for the model: text blocks
as they are, structured content as JSON, an image or audio block as a line naming its type and
size, an embedded resource as its text (or a line naming it). The same blocks go to the step
pane as :class:`~core.model.events.ToolAttachment` items. A result the server marks
``isError`` is the tool's error.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import jsonschema
from pydantic import BaseModel, ConfigDict

from core.config.mcp_servers import ServerEntry
from core.model.events import ToolAttachment
from core.tools.base import Tool, ToolContext, ToolError
from core.tools.mcp_hub import Confinement, McpConnection, McpHub, McpServerError

PREFIX = "mcp__"
MAX_OFFERED_PER_SERVER = 100
"""Tools of one server offered to the model when an agent takes the whole server: every
declaration costs prompt tokens, and providers cap how many tools a request may carry."""
FUNCTION_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""What OpenAI-compatible providers accept as a function name."""
ATTACHMENT_BYTES = 2_000_000
"""Bytes of one image kept for the step pane; a larger one is named, not kept."""


class McpArguments(BaseModel):
    """Any JSON object: the server's own schema is checked in :meth:`McpTool.run`."""

    model_config = ConfigDict(extra="allow")


def tool_name(server: str, tool: str) -> str:
    return f"{PREFIX}{server}__{tool}"


@dataclass(frozen=True)
class McpSelection:
    """What an agent asked for: whole servers, and single tools per server."""

    servers: frozenset[str] = frozenset()
    tools: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, servers: Iterable[str], tool_names: Iterable[str]) -> McpSelection:
        whole = set(servers)
        single: dict[str, set[str]] = {}
        for name in tool_names:
            if not name.startswith(PREFIX):
                continue
            server, _, tool = name[len(PREFIX) :].partition("__")
            if not server:
                continue
            if tool in ("", "*"):
                whole.add(server)
            else:
                single.setdefault(server, set()).add(tool)
        return cls(frozenset(whole), {s: frozenset(t) for s, t in single.items()})

    @property
    def wanted(self) -> set[str]:
        return set(self.servers) | set(self.tools)

    def __bool__(self) -> bool:
        return bool(self.servers or self.tools)


class McpTool(Tool):
    """One tool of one server. Each instance has its own name and schema, so the class-level
    ones are placeholders (:func:`_make` sets them on a subclass per tool)."""

    name: ClassVar[str] = "mcp"
    description: ClassVar[str] = "an MCP tool"
    Params: ClassVar[type[BaseModel]] = McpArguments
    server: ClassVar[str] = ""
    remote_name: ClassVar[str] = ""
    server_description: ClassVar[str] = ""
    input_schema: ClassVar[dict[str, Any]] = {}
    annotations: ClassVar[dict[str, Any]] = {}

    def __init__(self, connection: McpConnection) -> None:
        self._connection = connection
        self._validator: Any = None
        """The schema's validator, made once (checking the schema costs more than a call)."""

    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.input_schema,
            },
        }

    def approval_note(self) -> str:
        """What the approval shows beside the arguments: the server, and its hints."""
        hints = []
        if self.annotations.get("readOnlyHint"):
            hints.append("read-only")
        if self.annotations.get("destructiveHint"):
            hints.append("destructive")
        if self.annotations.get("openWorldHint"):
            hints.append("reaches outside (open world)")
        about = f" — {self.server_description}" if self.server_description else ""
        said = f" ({', '.join(hints)}, as the server says)" if hints else ""
        return f"MCP server {self.server}{about}; tool {self.remote_name}{said}"

    async def run(self, params: Any, ctx: ToolContext) -> str:
        arguments = params.model_dump() if isinstance(params, BaseModel) else dict(params)
        problem = self._invalid(arguments)
        if problem is not None:
            raise ToolError(f"invalid arguments for {self.name}: {problem}")
        try:
            result = await self._connection.call(
                self.remote_name, arguments, ctx.limits.bash_timeout_s
            )
        except McpServerError as error:
            raise ToolError(str(error)) from None
        text, attachments = render_result(result)
        ctx.attach(attachments)
        if getattr(result, "isError", False):
            raise ToolError(text or f"{self.name} reported an error")
        return text

    def _invalid(self, arguments: dict[str, Any]) -> str | None:
        """Why ``arguments`` do not fit the tool's schema; None when they do, or when the
        server's schema is itself broken (then the server judges them)."""
        if self._validator is None:
            cls = jsonschema.validators.validator_for(self.input_schema)
            try:
                cls.check_schema(self.input_schema)
            except jsonschema.SchemaError:
                self._validator = False
                return None
            self._validator = cls(self.input_schema)
        if self._validator is False:
            return None
        error = jsonschema.exceptions.best_match(self._validator.iter_errors(arguments))
        return None if error is None else str(error.message)


def render_result(result: Any) -> tuple[str, list[ToolAttachment]]:
    """The model's text for a ``CallToolResult``, and what the step pane shows besides."""
    parts: list[str] = []
    attachments: list[ToolAttachment] = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            raw = _decoded_size(block.data)
            parts.append(f"[{kind}: {block.mimeType}, {raw:,} bytes]")
            kept = block.data if raw <= ATTACHMENT_BYTES else ""
            attachments.append(
                ToolAttachment(kind=kind, mime_type=block.mimeType, data=kept, size=raw)
            )
        elif kind == "resource":
            resource = block.resource
            uri = str(resource.uri)
            body = getattr(resource, "text", None)
            parts.append(body if body is not None else f"[resource {uri}]")
            attachments.append(
                ToolAttachment(
                    kind="resource", uri=uri, mime_type=resource.mimeType or "", text=body or ""
                )
            )
        elif kind == "resource_link":
            uri = str(block.uri)
            parts.append(f"[resource link {block.name}: {uri}]")
            attachments.append(ToolAttachment(kind="resource", uri=uri, text=block.name))
    structured = getattr(result, "structuredContent", None)
    if structured is not None:
        shown = json.dumps(structured, ensure_ascii=False, indent=2)
        attachments.append(ToolAttachment(kind="structured", text=shown))
        if not parts:
            parts.append(shown)
    return "\n".join(parts), attachments


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except ValueError:
        return len(data)


def _make(connection: McpConnection, remote: Any, description: str) -> McpTool | None:
    full = tool_name(connection.name, remote.name)
    if not FUNCTION_NAME.match(full):
        return None
    annotations = remote.annotations.model_dump(exclude_none=True) if remote.annotations else {}
    schema = dict(remote.inputSchema or {"type": "object"})
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    namespace = {
        "name": full,
        "description": (remote.description or remote.title or remote.name)[:1024],
        "server": connection.name,
        "remote_name": remote.name,
        "server_description": description,
        "input_schema": schema,
        "annotations": annotations,
    }
    cls: type[McpTool] = type(f"McpTool_{full}", (McpTool,), namespace)
    return cls(connection)


async def offer_mcp_tools(
    selection: McpSelection,
    entries: Sequence[ServerEntry],
    hub: McpHub,
    confinement: Confinement,
) -> tuple[dict[str, Tool], list[str]]:
    """The chosen tools, name → tool, and one warning per thing that did not work."""
    if not selection:
        return {}, []
    known = {entry.name: entry for entry in entries}
    offered: dict[str, Tool] = {}
    warnings: list[str] = []
    for server in sorted(selection.wanted):
        entry = known.get(server)
        if entry is None:
            warnings.append(
                f"MCP server {server} is not configured (or its project is not trusted, or it "
                "is switched off here); its tools are not offered"
            )
            continue
        try:
            connection = await hub.connect(entry, confinement)
            listed = await connection.start()
        except McpServerError as error:
            warnings.append(f"{error}; its tools are not offered")
            continue
        if connection.garbage:
            warnings.append(
                f"MCP server {server} wrote {connection.garbage} line(s) on stdout that are not "
                "MCP messages (ignored; a server must log to stderr)"
            )
        if listed.truncated:
            warnings.append(
                f"MCP server {server} lists more than {len(listed.tools)} tools; only those "
                "are read"
            )
        whole = server in selection.servers
        chosen = selection.tools.get(server, frozenset())
        names = {tool.name for tool in listed.tools}
        for missing in sorted(chosen - names):
            warnings.append(f"MCP server {server} has no tool named {missing}")
        count = 0
        for remote in listed.tools:
            if not (whole or remote.name in chosen):
                continue
            if whole and remote.name not in chosen and count >= MAX_OFFERED_PER_SERVER:
                continue
            tool = _make(connection, remote, listed.description)
            if tool is None:
                warnings.append(
                    f"MCP server {server}: tool name {remote.name!r} cannot be offered "
                    "(letters, digits, '_' and '-' only, 64 characters with the prefix)"
                )
                continue
            offered[tool.name] = tool
            count += 1
        if whole and len(listed.tools) > MAX_OFFERED_PER_SERVER:
            warnings.append(
                f"MCP server {server} has {len(listed.tools)} tools; the first "
                f"{MAX_OFFERED_PER_SERVER} are offered (name others in 'tools:' as "
                f"mcp__{server}__<tool>)"
            )
    return offered, warnings
