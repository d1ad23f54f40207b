"""The agents' ``document`` tool: every action against a real store, the errors a model reads,
and the approval policy on delete through the real gate and tool-call path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from core.backends.base import RunClock, StepContext
from core.backends.tool_calls import ToolOutcome, run_tool_call, validate_arguments
from core.config.settings import DEFAULT_POLICY, Limits, Settings
from core.definitions.agents import AgentDefinition
from core.documents.store import DocumentNotFound, DocumentProvenance, DocumentStore
from core.model.events import ApprovalRequested, Event, ToolCallFinished
from core.safety.approvals import ApprovalAnswer, ApprovalGate, ApprovalRequest, approve_all
from core.tools.base import Provenance, ToolContext, ToolError
from core.tools.document import DocumentParams, DocumentTool
from core.tools.registry import TOOL_CLASSES, builtin_tools


@pytest.fixture
def store(tmp_path: Path) -> Iterator[DocumentStore]:
    with DocumentStore(tmp_path / "documents.sqlite") as opened:
        yield opened


@pytest.fixture
def tool(store: DocumentStore) -> DocumentTool:
    return DocumentTool(store)


def context(tmp_path: Path, **limits: Any) -> ToolContext:
    return ToolContext(
        cwd=tmp_path,
        limits=Limits(**limits),
        provenance=Provenance(run_id="run-1", step=2, agent="writer", call_id="call-7"),
    )


async def call(tool: DocumentTool, ctx: ToolContext, **arguments: Any) -> str:
    return await tool.run(DocumentParams.model_validate(arguments), ctx)


# ---- actions -------------------------------------------------------------------------------


async def test_create_records_who_wrote_it(
    tool: DocumentTool, store: DocumentStore, tmp_path: Path
) -> None:
    text = await call(
        tool,
        context(tmp_path),
        action="create",
        title="登录方案",
        content="用 OAuth 登录。",
        type="memory",
        tags=["auth"],
    )
    assert text == "Created #1 '登录方案' (memory, 11 chars, tags: auth, version 1)."
    doc = store.get(1)
    assert (doc.provenance.run_id, doc.provenance.step) == ("run-1", 2)
    assert (doc.provenance.agent, doc.provenance.call_id) == ("writer", "call-7")


async def test_read_gives_the_summary_then_the_whole_in_parts(
    tool: DocumentTool, store: DocumentStore, tmp_path: Path
) -> None:
    content = "".join(f"Paragraph {i} of the long design.\n" for i in range(120))
    doc = store.create("Design", content)
    ctx = context(tmp_path, document_read_tokens=300)
    summary = await call(tool, ctx, action="read", id=doc.id)
    assert summary.startswith(f"#1 'Design' (document, {len(content):,} chars, version 1, updated ")
    assert "written by a person" in summary
    assert "Paragraph 0 of the long design." in summary
    assert "read with full=true" in summary
    first = await call(tool, ctx, action="read", id=doc.id, full=True)
    assert "Cut at the read budget of 300 tokens" in first
    assert "Paragraph 119" not in first
    offset = int(first.rsplit("offset=", 1)[1].split(" ")[0])
    rest = await call(tool, ctx, action="read", id=doc.id, full=True, offset=offset)
    assert rest.split("\n\n", 1)[1].startswith(content[offset : offset + 30])


async def test_read_shows_the_agent_that_wrote_it(
    tool: DocumentTool, store: DocumentStore, tmp_path: Path
) -> None:
    await call(tool, context(tmp_path), action="create", title="t", content="short")
    text = await call(tool, context(tmp_path), action="read", id=1)
    assert "by writer (run run-1, step 2)" in text
    assert text.endswith("\n\nshort")


async def test_update_reports_what_changed(
    tool: DocumentTool, store: DocumentStore, tmp_path: Path
) -> None:
    doc = store.create("Plan", "v1")
    ctx = context(tmp_path)
    text = await call(tool, ctx, action="update", id=doc.id, content="v2", tags=["x"])
    assert text == "Updated #1 'Plan': content, tags (now version 2)."
    assert store.get(doc.id, full=True).content == "v2"
    again = await call(tool, ctx, action="update", id=doc.id, content="v2")
    assert again == "No change: #1 'Plan' already had these values."


async def test_delete(tool: DocumentTool, store: DocumentStore, tmp_path: Path) -> None:
    doc = store.create("Old notes", "x")
    assert await call(tool, context(tmp_path), action="delete", id=doc.id) == (
        "Deleted #1 'Old notes'."
    )
    with pytest.raises(DocumentNotFound):
        store.get(doc.id)


async def test_list_pages_and_searches(
    tool: DocumentTool, store: DocumentStore, tmp_path: Path
) -> None:
    for i in range(5):
        store.create(f"日志 {i}", "系统日志 " + "x" * 300, tags=["log"] if i % 2 else [])
    store.create("Memory", "remember this", type="memory")
    ctx = context(tmp_path, document_page_size=2)
    first = await call(tool, ctx, action="list")
    assert first.splitlines()[0] == "Page 1 of 3 (6 documents):"
    assert "- #6 'Memory' memory, " in first
    assert "remember this" not in first  # short content has no summary; lists carry no content
    assert first.endswith("More: page=2.")
    found = await call(tool, ctx, action="list", query="日志", tag="log")
    assert found.splitlines()[0] == "Page 1 of 1 (2 documents matching query='日志', tag='log'):"
    assert "[日志]" in found
    memories = await call(tool, ctx, action="list", type="memory")
    assert "(1 document matching type='memory')" in memories
    assert await call(tool, ctx, action="list", query="nowhere") == (
        "No documents matching query='nowhere'."
    )
    assert "past the end" in await call(tool, ctx, action="list", page=9)


# ---- what the model reads when something is wrong -----------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"action": "read"}, "read needs 'id'"),
        ({"action": "delete"}, "delete needs 'id'"),
        ({"action": "update", "id": 1}, "update needs at least one of 'title', 'content'"),
        ({"action": "create", "title": "t"}, "create needs 'content'"),
        ({"action": "create"}, "create needs 'title' and 'content'"),
        ({"action": "remove", "id": 1}, "action: Input should be 'create', 'read'"),
        ({"action": "list", "text": "x"}, "text: Extra inputs are not permitted"),
        ({"action": "list", "page": 0}, "page: Input should be greater than or equal to 1"),
    ],
)
def test_invalid_arguments_are_explained(
    tool: DocumentTool, arguments: dict[str, Any], message: str
) -> None:
    params, problem = validate_arguments(tool, arguments)
    assert params is None
    assert problem is not None and message in problem


def test_params_validator_raises_a_validation_error() -> None:
    with pytest.raises(ValidationError, match="update needs 'id'"):
        DocumentParams(action="update", title="x")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"action": "read", "id": 99}, "There is no document #99."),
        ({"action": "create", "title": " ", "content": "c"}, "The title must not be empty."),
        ({"action": "create", "title": "t", "content": "x" * 101}, "the limit is 100"),
        ({"action": "update", "id": 1, "content": "x" * 101}, "the limit is 100"),
    ],
)
async def test_store_errors_become_tool_errors(
    tool: DocumentTool,
    store: DocumentStore,
    tmp_path: Path,
    arguments: dict[str, Any],
    message: str,
) -> None:
    store.create("exists", "c")
    with pytest.raises(ToolError, match=message):
        await call(tool, context(tmp_path, document_max_chars=100), **arguments)


# ---- approval ------------------------------------------------------------------------------


def test_delete_asks_by_default_and_the_rest_runs(tool: DocumentTool, store: DocumentStore) -> None:
    gate = ApprovalGate(DEFAULT_POLICY, approve_all, lambda event: None, lambda: 0.0)
    store.create("mine", "c", provenance=DocumentProvenance(run_id="run-1"))
    store.create("theirs", "c")
    me = Provenance(run_id="run-1")
    for arguments, action, verdict in [
        ({"action": "delete", "id": 1}, "delete", "ask"),
        ({"action": "update", "id": 1, "content": "x"}, "update", "allow"),
        ({"action": "update", "id": 2, "content": "x"}, "update_other", "ask"),
        ({"action": "update", "id": 9, "content": "x"}, "update_other", "ask"),  # unknown
        ({"action": "update", "id": 1, "type": "memory"}, "retype", "ask"),
        ({"action": "update", "id": 1, "type": "document"}, "update", "allow"),  # same type
        ({"action": "create", "title": "t", "content": "c"}, "create", "allow"),
        ({"action": "read", "id": 1}, "read", "allow"),
        ({"action": "list"}, "list", "allow"),
    ]:
        params = DocumentParams.model_validate(arguments)
        assert tool.approval_action(params, me) == action
        assert gate.policy_for("document", action) == verdict
    other_run = DocumentParams.model_validate({"action": "update", "id": 1, "content": "x"})
    assert tool.approval_action(other_run, Provenance(run_id="run-2")) == "update_other"


async def _delete_through_the_loop(
    tool: DocumentTool, tmp_path: Path, decision: str
) -> tuple[list[Event], ToolOutcome]:
    events: list[Event] = []
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(decision=decision, reason="keep it")

    clock = RunClock()
    ctx = StepContext(
        run_id="run-1",
        step=0,
        agent=AgentDefinition(name="cleaner", description="d", system_prompt="p"),
        task="clean up",
        cwd=tmp_path,
        model=None,
        tools=("document",),
        settings=Settings(),
        approvals=ApprovalGate(DEFAULT_POLICY, person, events.append, clock.now),
        clock=clock,
    )
    outcome = ToolOutcome()
    async for event in run_tool_call(
        ctx, "call-1", "document", '{"action": "delete", "id": 1}', {"document": tool}, outcome
    ):
        events.append(event)
    assert [r.action for r in asked] == ["delete"]
    return events, outcome


async def test_a_denied_delete_does_not_run(
    tool: DocumentTool, store: DocumentStore, tmp_path: Path
) -> None:
    store.create("precious", "c")
    events, outcome = await _delete_through_the_loop(tool, tmp_path, "deny")
    assert outcome.status == "error"
    assert outcome.result == "Denied by the user: keep it"
    assert any(isinstance(e, ApprovalRequested) for e in events)
    assert store.get(1).title == "precious"


async def test_an_approved_delete_runs(
    tool: DocumentTool, store: DocumentStore, tmp_path: Path
) -> None:
    store.create("stale", "c")
    events, outcome = await _delete_through_the_loop(tool, tmp_path, "approve")
    assert (outcome.status, outcome.result) == ("ok", "Deleted #1 'stale'.")
    assert isinstance(events[-1], ToolCallFinished)
    assert store.list().total == 0


# ---- wiring --------------------------------------------------------------------------------


def test_the_tool_is_registered_and_declared() -> None:
    assert DocumentTool in TOOL_CLASSES
    declared = builtin_tools()["document"].schema()["function"]
    assert declared["name"] == "document"
    assert declared["parameters"]["properties"]["action"]["enum"] == [
        "create",
        "read",
        "update",
        "delete",
        "list",
    ]
    assert declared["parameters"]["required"] == ["action"]


async def test_without_a_store_it_uses_the_one_in_the_data_folder(
    isolated_home: Path, tmp_path: Path
) -> None:
    try:
        await call(DocumentTool(), context(tmp_path), action="create", title="t", content="c")
        assert DocumentStore.default().path == isolated_home / "data" / "documents.sqlite"
        assert DocumentStore.default().list().total == 1
    finally:
        DocumentStore.default().close()
