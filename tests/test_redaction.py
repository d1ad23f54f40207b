"""Redaction of secrets on the event stream: a secret split across pieces is still caught."""

from __future__ import annotations

import itertools

import pytest

from core.config.settings import Provider, Settings
from core.model.events import (
    Event,
    Log,
    PlannedStep,
    RunFinished,
    RunStarted,
    StepFinished,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallOutput,
    ToolCallStarted,
    Usage,
    UsageStats,
)
from core.safety.redaction import Redactor, StreamRedactor, is_secret_name

KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c"
TEXT = f"The key is {KEY}, and the proxy is http://bob:{KEY}@proxy.local/v1 — done."


def texts(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def stream(redactor: Redactor, pieces: list[str], end: Event | None = None) -> list[Event]:
    streaming = StreamRedactor(redactor)
    out: list[Event] = []
    for piece in pieces:
        out += streaming.feed(TextDelta(run_id="r", step=0, text=piece))
    out += streaming.feed(end or StepFinished(run_id="r", step=0, status="ok"))
    return out


def test_a_secret_split_anywhere_across_three_deltas_never_comes_out() -> None:
    redactor = Redactor([KEY])
    expected = redactor.scrub(TEXT)
    assert KEY not in expected and expected.count("[redacted]") == 2
    assert "http://[redacted]@proxy.local/v1" in expected
    for i, j in itertools.combinations(range(1, len(TEXT)), 2):
        out = stream(redactor, [TEXT[:i], TEXT[i:j], TEXT[j:]])
        assert texts(out) == expected, (i, j)


def test_url_credentials_and_bearer_tokens_are_caught_across_deltas_without_known_values() -> None:
    redactor = Redactor()
    text = "curl -H 'Authorization: Bearer abcdefghijklmnop' https://joe:pa55word99@host/x ok"
    expected = "curl -H 'Authorization: Bearer [redacted]' https://[redacted]@host/x ok"
    assert redactor.scrub(text) == expected
    for i, j in itertools.combinations(range(1, len(text)), 2):
        assert texts(stream(redactor, [text[:i], text[i:j], text[j:]])) == expected, (i, j)


def test_ordinary_text_is_passed_on_at_once() -> None:
    streaming = StreamRedactor(Redactor([KEY]))
    for piece in ["Hello ", "world, ", "nothing secret ", "here."]:
        [out] = streaming.feed(TextDelta(run_id="r", step=0, text=piece))
        assert isinstance(out, TextDelta) and out.text == piece


def test_a_held_tail_is_released_before_the_event_that_ends_its_block() -> None:
    streaming = StreamRedactor(Redactor([KEY]))
    assert streaming.feed(ThinkingDelta(run_id="r", step=0, text="maybe sk-live")) == [
        ThinkingDelta(run_id="r", step=0, text="maybe ")
    ]
    released, text = streaming.feed(TextDelta(run_id="r", step=0, text="Answer"))
    assert released == ThinkingDelta(run_id="r", step=0, text="sk-live")
    assert text == TextDelta(run_id="r", step=0, text="Answer")
    assert streaming.feed(TextDelta(run_id="r", step=0, text=" sk-")) == [
        TextDelta(run_id="r", step=0, text=" ")
    ]
    usage = Usage(run_id="r", step=0, usage=UsageStats(turns=1))
    assert streaming.feed(usage) == [usage]  # does not end the text block: still held
    call = ToolCallStarted(run_id="r", step=0, call_id="c", tool="ls")
    assert streaming.feed(call) == [TextDelta(run_id="r", step=0, text="sk-"), call]


def test_parallel_steps_keep_their_own_tails() -> None:
    streaming = StreamRedactor(Redactor([KEY]))
    assert streaming.feed(TextDelta(run_id="r", step=1, text="a sk-live-4f9")) == [
        TextDelta(run_id="r", step=1, text="a ")
    ]
    finished = StepFinished(run_id="r", step=0, status="ok")
    assert streaming.feed(finished) == [finished]
    out = streaming.feed(TextDelta(run_id="r", step=1, text="a8b7c6d5e4f3a2b1c!"))
    assert texts(out) == "[redacted]!"
    assert streaming.flush() == []


def test_runs_fed_through_one_redactor_keep_their_own_tails() -> None:
    streaming = StreamRedactor(Redactor([KEY]))
    assert texts(streaming.feed(TextDelta(run_id="a", step=0, text="x sk-live-4f"))) == "x "
    other_run_ends = RunFinished(run_id="b", status="ok")
    assert streaming.feed(other_run_ends) == [other_run_ends]
    rest = streaming.feed(TextDelta(run_id="a", step=0, text="9a8b7c6d5e4f3a2b1c"))
    assert streaming.feed(RunFinished(run_id="a", status="ok"))[0] == TextDelta(
        run_id="a", step=0, text="[redacted]"
    )
    assert rest == []


def test_tool_output_chunks_appended_or_replaced_are_redacted() -> None:
    streaming = StreamRedactor(Redactor([KEY]))
    out: list[Event] = []
    for chunk in ["OPENAI=sk-live-4f9a", "8b7c6d5e4f3a2b1c\n", "next sk-li"]:
        out += streaming.feed(ToolCallOutput(run_id="r", step=0, call_id="c", chunk=chunk))
    done = ToolCallFinished(run_id="r", step=0, call_id="c", status="ok", result=f"x {KEY}")
    out += streaming.feed(done)
    chunks = [e.chunk for e in out if isinstance(e, ToolCallOutput)]
    assert "".join(chunks) == "OPENAI=[redacted]\nnext sk-li"
    assert out[-1] == done.model_copy(update={"result": "x [redacted]"})

    cumulative = [f"a {KEY[:6]}", f"a {KEY}", f"a {KEY} ok"]
    fed = [
        e
        for c in cumulative
        for e in streaming.feed(
            ToolCallOutput(run_id="r", step=0, call_id="d", chunk=c, replace=True)
        )
    ]
    assert all(isinstance(e, ToolCallOutput) for e in fed)
    assert [e.chunk for e in fed if isinstance(e, ToolCallOutput)] == [
        "a ",
        "a ",
        "a [redacted] ok",
    ]


def test_every_string_field_is_scrubbed_and_clean_events_pass_unchanged() -> None:
    streaming = StreamRedactor(Redactor([KEY]))
    start = RunStarted(
        run_id="r",
        mode="single",
        args=[KEY],
        steps=[PlannedStep(agent="a", task=f"use {KEY}", cwd="/w")],
        cwd="/w",
        started_at="2026-12-03T10:00:00+00:00",
    )
    [clean] = streaming.feed(start)
    assert KEY not in clean.model_dump_json() and clean.steps[0].task == "use [redacted]"  # type: ignore[union-attr]
    call = ToolCallStarted(
        run_id="r", step=0, call_id="c", tool="bash", arguments={"env": {"K": [KEY, 1]}}
    )
    [clean] = streaming.feed(call)
    assert clean.arguments == {"env": {"K": ["[redacted]", 1]}}  # type: ignore[union-attr]
    log = Log(run_id="r", step=0, message="nothing to hide")
    assert streaming.feed(log)[0] is log


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("OPENAI_API_KEY", True),
        ("GH_TOKEN", True),
        ("GITHUB_TOKEN", True),
        ("CLIENT_SECRET", True),
        ("DB_PASSWORD_FILE_CONTENT", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("AWS_ACCESS_KEY_ID", True),
        ("AWS_REGION", False),
        ("HOME", False),
        ("TOKENIZER_PATH", False),
    ],
)
def test_secret_environment_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_the_redactor_knows_environment_values_provider_keys_and_base_url_passwords(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-0123456789abcdef")
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # too short to be a key: ordinary words stay
    monkeypatch.setenv("PROVIDER_KEY_VAR", "pk-provider-987654321")
    # Built without validation: settings may refuse credentials in a base_url, but a key
    # that got there (an old config, the environment) must still never be shown.
    provider = Provider.model_construct(
        name="p", base_url="http://u:basepass12345@host/v1", api_key_env="PROVIDER_KEY_VAR"
    )
    settings = Settings(providers=[provider], default_provider="p")
    redactor = Redactor.for_settings(settings)
    text = "tok-0123456789abcdef pk-provider-987654321 basepass12345 abc"
    assert redactor.scrub(text) == "[redacted] [redacted] [redacted] abc"


@pytest.mark.parametrize(
    "text",
    [
        f"plain {KEY} and more",
        f"no scheme but {KEY[::-1]} reversed, and an@sign",
        f"a long one {'x' * 600} {KEY}",
        f"a long one {'x' * 600} nothing",
        f"bearer {KEY} Bearer abcdefghijkl",
        f"https://u:{KEY}@host and {KEY}",
        f"https://u:pw@host/{'y' * 600}",
        "nothing secret at all",
    ],
)
def test_scrub_searches_for_urls_and_bearer_tokens_only_where_they_can_be(text: str) -> None:
    from core.safety.redaction import _replacement

    redactor = Redactor([KEY])
    assert redactor.scrub(text) == redactor.pattern.sub(_replacement, text)
    assert KEY not in redactor.scrub(text) and KEY[::-1] not in redactor.scrub(text)
    assert Redactor().scrub(text) == Redactor().pattern.sub(_replacement, text)


def test_the_environment_is_read_as_it_is_at_each_redactor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its secrets are worked out once per state of the environment, never kept past one."""
    monkeypatch.delenv("LATE_SERVICE_TOKEN", raising=False)
    assert Redactor.from_environment().scrub("tok-late-0123456789") == "tok-late-0123456789"
    monkeypatch.setenv("LATE_SERVICE_TOKEN", "tok-late-0123456789")
    assert Redactor.from_environment().scrub("tok-late-0123456789") == "[redacted]"
    monkeypatch.delenv("LATE_SERVICE_TOKEN")
    assert Redactor.from_environment().scrub("tok-late-0123456789") == "tok-late-0123456789"


@pytest.mark.parametrize("known", [1, 10, 30])
def test_every_value_is_found_with_few_known_values_and_with_many(known: int) -> None:
    """Up to :data:`ONE_BY_ONE_FORMS` forms a text is searched for each in turn before the
    expression runs; past it, the expression alone: both find every value, whole and across
    stream pieces (a key has seven forms)."""
    from core.safety.redaction import ONE_BY_ONE_FORMS, encoded_forms

    keys = [f"sk-{number:03d}-{KEY}" for number in range(known)]
    redactor = Redactor(keys)
    forms = sum(len(encoded_forms(key)) for key in keys)
    assert (forms <= ONE_BY_ONE_FORMS) == (known < 30), forms
    for key in (keys[0], keys[-1]):
        text = f'{{"text": "the key {key} and more"}}'
        assert redactor.scrub(text) == '{"text": "the key [redacted] and more"}'
        pieces = [text[:20], text[20:30], text[30:]]
        assert key not in texts(stream(redactor, pieces))
    assert redactor.scrub('{"text": "nothing known here"}') == '{"text": "nothing known here"}'
