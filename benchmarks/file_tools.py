"""The cost of opening beneath the working folder: one ``write``, ``read`` and ``edit`` through
the real tools, in a folder three levels deep, with ``openat2`` and with the ``O_NOFOLLOW``
walk that replaces it on older kernels.

Run from the repository root: ``python -m benchmarks.file_tools``. Each figure is the median
of 300 calls (a 4 KB file; writes include the fsync of the file and of its folder). Last line:
one JSON object, keys ``write_ms``, ``read_ms``, ``edit_ms`` (``openat2``, when the kernel has
it) and ``write_ms_walk``, ``read_ms_walk``, ``edit_ms_walk``.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from unittest import mock

from core.tools import beneath
from core.tools.base import ToolContext
from core.tools.edit import EditParams, EditTool
from core.tools.read import ReadParams, ReadTool
from core.tools.write import WriteParams, WriteTool

CALLS = 300
CONTENT = ("x" * 63 + "\n") * 64


async def _median_ms(call: Callable[[int], Awaitable[str]]) -> float:
    times: list[float] = []
    for n in range(CALLS):
        start = time.perf_counter()
        await call(n)
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 3)


async def measure(work: Path) -> dict[str, float]:
    ctx = ToolContext(cwd=work)
    path = "a/b/c/file.txt"
    await WriteTool().run(WriteParams(path=path, content=CONTENT), ctx)

    async def write(n: int) -> str:
        return await WriteTool().run(WriteParams(path=path, content=CONTENT + str(n)), ctx)

    async def read(_: int) -> str:
        return await ReadTool().run(ReadParams(path=path), ctx)

    async def edit(n: int) -> str:
        old, new = ("x", "y") if n % 2 == 0 else ("y", "x")
        params = EditParams(path=path, old_string=old * 63, new_string=new * 63, replace_all=True)
        return await EditTool().run(params, ctx)

    return {
        "write_ms": await _median_ms(write),
        "read_ms": await _median_ms(read),
        "edit_ms": await _median_ms(edit),
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as temp:
        os.environ.setdefault("BATON_CONFIG_DIR", str(Path(temp) / "config"))
        os.environ.setdefault("BATON_DATA_DIR", str(Path(temp) / "data"))
        work = Path(temp) / "work"
        work.mkdir()
        results: dict[str, float | bool] = {"openat2": beneath.openat2_works()}
        results.update(asyncio.run(measure(work)))
        with mock.patch.object(beneath, "openat2_works", lambda: False):
            walked = asyncio.run(measure(work))
        results.update({f"{key}_walk": value for key, value in walked.items()})
    for key, value in results.items():
        print(f"{key:>16}: {value}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
