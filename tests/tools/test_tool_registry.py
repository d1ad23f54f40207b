"""The registry offers every tool with a schema a model can follow."""

from __future__ import annotations

import pytest

from core.definitions.agents import BATON_TOOLS
from core.tools import registry
from core.tools.base import Tool, ToolContext
from core.tools.registry import builtin_tools, register_tool, select_tools

EXPECTED = ["read", "grep", "find", "ls", "bash", "edit", "write"]


def test_builtin_tools_by_name() -> None:
    tools = builtin_tools()
    assert list(tools)[: len(EXPECTED)] == EXPECTED
    assert all(name == tool.name for name, tool in tools.items())
    assert set(EXPECTED) <= set(BATON_TOOLS)


def test_every_schema_describes_every_parameter() -> None:
    for name, tool in builtin_tools().items():
        function = tool.schema()["function"]
        assert function["name"] == name
        assert len(function["description"]) > 40
        parameters = function["parameters"]
        assert parameters["type"] == "object"
        assert set(parameters.get("required", [])) <= set(parameters["properties"])
        for field, spec in parameters["properties"].items():
            assert spec.get("description"), f"{name}.{field} has no description"


def test_a_later_tool_registers_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "TOOL_CLASSES", list(registry.TOOL_CLASSES))

    class DocumentTool(Tool):
        name = "document"
        description = "Test stand-in."
        Params = builtin_tools()["ls"].Params

        async def run(self, params: object, ctx: ToolContext) -> str:
            return "ok"

    assert register_tool(DocumentTool) is DocumentTool
    register_tool(DocumentTool)
    assert list(builtin_tools()) == [*EXPECTED, "document"]
    assert list(select_tools(["document", "read", "unknown"])) == ["document", "read"]
