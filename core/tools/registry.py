"""The tools Baton's own agent loop can offer, by name.

One list, :data:`TOOL_CLASSES`, is the source of truth; :func:`builtin_tools` makes fresh
instances from it (tools keep no state between calls, but a fresh set per step costs nothing
and keeps steps independent). A tool defined elsewhere joins with one line — an entry in the
list here, or :func:`register_tool` at import time.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.tools.base import Tool
from core.tools.bash import BashTool
from core.tools.document import DocumentTool
from core.tools.edit import EditTool
from core.tools.find import FindTool
from core.tools.grep import GrepTool
from core.tools.ls import LsTool
from core.tools.read import ReadTool
from core.tools.write import WriteTool

TOOL_CLASSES: list[type[Tool]] = [
    ReadTool,
    GrepTool,
    FindTool,
    LsTool,
    BashTool,
    EditTool,
    WriteTool,
    DocumentTool,
]


def register_tool(cls: type[Tool]) -> type[Tool]:
    """Add a tool class (usable as a decorator); a class already listed is not added twice."""
    if cls not in TOOL_CLASSES:
        TOOL_CLASSES.append(cls)
    return cls


def builtin_tools() -> dict[str, Tool]:
    """Every known tool, name → instance, in :data:`TOOL_CLASSES` order."""
    return {cls.name: cls() for cls in TOOL_CLASSES}


def select_tools(names: Iterable[str]) -> dict[str, Tool]:
    """The tools among ``names`` (an agent's allowed tools), in the given order; unknown
    names are skipped — agent files are validated against the tool list elsewhere."""
    available = builtin_tools()
    return {name: available[name] for name in names if name in available}
