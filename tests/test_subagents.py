"""Sub-agents inside a step (Claude Code's Task tool, pi's subagent tool): their usage names the
call that started them, counts in the step and the run, never becomes the step's model, and
folds into rows with their own name, model, tool calls and tokens."""

from __future__ import annotations

import json
from typing import Any

from core.backends.claude_events import ClaudeEventParser
from core.backends.pi_events import PiEventParser
from core.history.subagents import subagent_rows
from core.model.events import Event, Usage
from core.record.run_state import RunState, fold
from tests.fake_claude import assistant, streamed_text, tool_result, tool_use
from tests.test_claude_events import one_step


def _run(events: list[Event]) -> RunState:
    return fold(one_step(events))


def test_a_claude_sub_agent_has_its_own_model_calls_and_tokens() -> None:
    parser = ClaudeEventParser("r", 0)

    def sub(line: dict[str, Any]) -> dict[str, Any]:
        return {**line, "parent_tool_use_id": "toolu_task"}

    haiku = {"input_tokens": 300, "output_tokens": 40}
    read = {"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "/w/a"}}
    lines = [
        *streamed_text("m1", ["Delegating."], input_tokens=100, output_tokens=10),
        tool_use("m1", "toolu_task", "Task", {"subagent_type": "scout", "prompt": "look"}),
        sub(assistant("s1", {"type": "text", "text": "Looking."}, model="haiku", usage=haiku)),
        sub(assistant("s2", read, model="haiku", usage={"input_tokens": 10, "output_tokens": 5})),
        sub(tool_result("toolu_read", "a")),
        tool_result("toolu_task", "found"),
    ]
    events = [e for line in lines for e in parser.feed(json.dumps(line))]
    usages = [e for e in events if isinstance(e, Usage)]
    assert [u.parent_call_id for u in usages] == [None, "toolu_task", "toolu_task"]
    assert parser.model == "claude-sonnet-4-5"  # the step's model, not the sub-agent's

    state = _run(events)
    step = state.steps[0]
    (row,) = subagent_rows(step)
    assert (row.call_id, row.name, row.model, row.tool_calls) == ("toolu_task", "scout", "haiku", 1)
    assert (row.usage.input, row.usage.output) == (300 + 10, 40 + 5)  # s1 and s2's messages
    assert step.model == "claude-sonnet-4-5"
    assert step.usage.input == 100 + 310  # the sub-agent counts in its step


def _pi(parser: PiEventParser, line: dict[str, Any]) -> list[Event]:
    return parser.feed(json.dumps(line))


def test_pi_s_subagent_tool_reports_each_agent_it_ran() -> None:
    parser = PiEventParser("r", 0)
    details = {
        "mode": "parallel",
        "results": [
            {
                "agent": "scout",
                "model": "gpt-5-mini",
                "usage": {"input": 1200, "output": 300, "cacheRead": 0, "cacheWrite": 0,
                          "cost": 0.004, "contextTokens": 1500, "turns": 2},
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "look"}]},
                    {"role": "assistant", "content": [
                        {"type": "toolCall", "id": "t1", "name": "read", "arguments": {}},
                        {"type": "toolCall", "id": "t2", "name": "ls", "arguments": {}},
                    ]},
                    {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
                ],
            },
            {"agent": "reviewer", "usage": {"input": 50, "output": 5, "cost": 0.001, "turns": 1},
             "messages": []},
        ],
    }  # fmt: skip
    events = _pi(
        parser,
        {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "subagent", "args": {}},
    )
    events += _pi(
        parser,
        {
            "type": "tool_execution_end",
            "toolCallId": "c1",
            "toolName": "subagent",
            "result": {"content": [{"type": "text", "text": "both done"}], "details": details},
            "isError": False,
        },
    )
    assert [(e.subagent, e.tool_calls) for e in events if isinstance(e, Usage)] == [
        ("scout", 2),
        ("reviewer", 0),
    ]
    assert parser.usage.input == 1250 and parser.usage.model is None  # in the step's total

    step = _run(events).steps[0]
    rows = [
        (r.name, r.model, r.tool_calls, r.usage.input, r.usage.cost) for r in subagent_rows(step)
    ]
    assert rows == [("scout", "gpt-5-mini", 2, 1200, 0.004), ("reviewer", None, 0, 50, 0.001)]


def test_another_tool_s_details_are_not_sub_agents() -> None:
    parser = PiEventParser("r", 0)
    start = {"type": "tool_execution_start", "toolCallId": "c", "toolName": "bash", "args": {}}
    end = {
        "type": "tool_execution_end",
        "toolCallId": "c",
        "toolName": "bash",
        "result": {"content": [], "details": {"results": [{"agent": "x"}]}},
    }
    events = _pi(parser, start) + _pi(parser, end)
    assert not [e for e in events if isinstance(e, Usage)]
