"""The run header's Usage panel: totals per agent across the run, each agent's steps, and the
sub-agents a step ran nested under it with their own model, tool calls and tokens."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.model.events import ToolCallStarted
from gui.run.run_view import RunView
from tests.gui.run_events import RunBuilder


def _subagent_chain() -> RunBuilder:
    b = RunBuilder()
    b.start("chain", [("scout", "look", "sonnet"), ("worker", "do", "sonnet"),
                      ("scout", "check", "sonnet")])  # fmt: skip
    b.step_started(0, "look", "sonnet")
    task = b.tool(0, "Task", {"subagent_type": "explorer", "prompt": "dig"}, "found")
    b.events.append(
        ToolCallStarted(run_id=b.run_id, step=0, ts=b.now, call_id="sub_read", tool="read",
                        arguments={"path": "a"}, parent_call_id=task)
    )  # fmt: skip
    b.usage(0, "haiku", 3000, 200, 0.0021, parent_call_id=task)
    b.usage(0, "sonnet", 1000, 100, 0.01)
    b.step_finished(0, output="files")
    b.step_started(1, "do", "sonnet")
    b.tool(1, "edit", {"path": "a"}, "ok")
    b.tool(1, "bash", {"command": "make"}, "ok")
    b.usage(1, "sonnet", 2000, 500, 0.02)
    b.step_finished(1, output="done")
    b.step_started(2, "check", "sonnet")
    b.usage(2, "sonnet", 500, 50, 0.005)
    b.step_finished(2, output="fine")
    b.run_finished()
    return b


def test_usage_per_agent_with_sub_agents_under_their_step(qtbot: QtBot, view: RunView) -> None:
    view.load_events(_subagent_chain().events)
    header = view.header
    assert header.rollup is None  # built on first use
    qtbot.mouseClick(header.charts_button, Qt.MouseButton.LeftButton)
    rollup = header.rollup
    assert rollup is not None and rollup.isVisible()
    assert rollup.rows() == [
        ["scout · 2 steps", "sonnet", "2", "↑4.5k ↓350", "$0.0171"],
        ["  Step 1", "sonnet", "1", "↑4k ↓300", "$0.0121"],
        ["    ↳ explorer", "haiku", "1", "↑3k ↓200", "$0.0021"],
        ["  Step 3", "sonnet", "0", "↑500 ↓50", "$0.0050"],
        ["worker · 1 step", "sonnet", "2", "↑2k ↓500", "$0.0200"],
        ["  Step 2", "sonnet", "2", "↑2k ↓500", "$0.0200"],
    ]
    qtbot.mouseClick(header.charts_button, Qt.MouseButton.LeftButton)
    assert not rollup.isVisible()
