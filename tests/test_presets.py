"""Presets: parsing, discovery with overrides, argument expansion, validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import paths
from core.definitions.agents import discover_agents
from core.definitions.presets import (
    PresetError,
    check_agents,
    discover_presets,
    expand_template,
    parse_preset_text,
    required_argument_count,
)


def test_builtin_presets_are_valid_and_use_builtin_agents(tmp_path: Path) -> None:
    catalog = discover_presets(tmp_path)
    assert [p.name for p in catalog.presets] == [
        "best-of-3",
        "fan-in",
        "implement",
        "implement-and-review",
        "review-loop",
        "scout-and-plan",
    ]
    assert catalog.diagnostics == []
    agents = discover_agents(tmp_path)
    for preset in catalog.presets:
        check_agents(preset, agents)
    review = catalog.get("implement-and-review")
    assert review is not None
    assert [s.agent for s in review.steps] == ["worker", "reviewer", "worker"]
    assert review.argument_hint == "<what to build>"


@pytest.mark.parametrize(
    ("template", "args", "expected"),
    [
        ("Do $@", ["a", "b c"], "Do a b c"),
        ("Do $ARGUMENTS!", ["x", "y"], "Do x y!"),
        ("$2 then $1", ["first", "second"], "second then first"),
        ("missing: [$3]", ["a"], "missing: []"),
        ("cost $10", ["a"], "cost "),
    ],
)
def test_argument_expansion(template: str, args: list[str], expected: str) -> None:
    assert expand_template(template, args=args) == expected


def test_params_and_previous_substitution() -> None:
    template = "mode {mode}, strict {strict}, {previous}, {unknown}"
    values = {"mode": "polish", "strict": True}
    planned = expand_template(template, params=values)
    assert planned == "mode polish, strict true, {previous}, {unknown}"
    sent = expand_template(template, params=values, previous="OUT")
    assert sent == "mode polish, strict true, OUT, {unknown}"


def test_expansion_is_one_pass_so_substituted_text_is_never_expanded_again() -> None:
    """An argument, a parameter value or a previous answer that contains
    ``{previous}``, ``{name}`` or ``$1`` arrives as written."""
    template = "start $1 / {tone} / {previous}"
    sent = expand_template(
        template,
        args=["X{previous}Y"],
        params={"tone": "$1 {previous}"},
        previous="answer with $1 and {tone}",
    )
    assert sent == "start X{previous}Y / $1 {previous} / answer with $1 and {tone}"


def test_ad_hoc_tasks_keep_dollar_signs() -> None:
    assert expand_template("cost $10 for $@", args=None) == "cost $10 for $@"


def test_required_argument_count() -> None:
    preset = parse_preset_text("name: p\nsteps:\n  - {agent: a, task: '$1 and $3'}\n")
    assert required_argument_count(preset) == 3
    plain = parse_preset_text("name: p\nsteps:\n  - {agent: a, task: 'no args'}\n")
    assert required_argument_count(plain) == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: p\n", "steps: Field required"),
        (
            "name: p\nmode: single\nsteps: [{agent: a, task: x}, {agent: b, task: y}]\n",
            "exactly one step",
        ),
        (
            "name: p\nmode: parallel\nsteps: [" + ", ".join(["{agent: a, task: x}"] * 9) + "]\n",
            "at most 8",
        ),
        ("name: p\nmode: loop\nsteps: [{agent: a, task: x}]\n", "mode"),
        ("- just\n- a list\n", "key: value"),
        ("name: [\n", "not valid YAML"),
    ],
)
def test_invalid_presets_explain_themselves(text: str, message: str) -> None:
    with pytest.raises(PresetError, match=message):
        parse_preset_text(text)


def test_unknown_agent_names_preset_step_and_available(tmp_path: Path) -> None:
    preset = parse_preset_text(
        "name: review-it\nsteps:\n  - {agent: scout, task: a}\n  - {agent: critic, task: b}\n"
    )
    with pytest.raises(PresetError) as caught:
        check_agents(preset, discover_agents(tmp_path))
    message = str(caught.value)
    assert message.startswith("preset 'review-it', step 2: unknown agent 'critic'")
    assert "available: " in message and "scout" in message


def test_project_overrides_user_overrides_builtin(tmp_path: Path) -> None:
    user = paths.config_dir() / "presets"
    user.mkdir(parents=True)
    (user / "implement.yaml").write_text(
        "name: implement\ndescription: mine\nsteps: [{agent: worker, task: $@}]\n",
        encoding="utf-8",
    )
    (user / "broken.yaml").write_text("name: broken\n", encoding="utf-8")
    project = tmp_path / "proj"
    (project / ".baton" / "presets").mkdir(parents=True)
    (project / ".baton" / "presets" / "ship.yml").write_text(
        "name: ship\nmode: single\nsteps: [{agent: worker, task: ship it}]\n", encoding="utf-8"
    )
    (project / "sub").mkdir()
    catalog = discover_presets(project / "sub")
    implement = catalog.get("IMPLEMENT")
    assert implement is not None and implement.description == "mine"
    assert implement.source == "user"
    ship = catalog.get("ship")
    assert ship is not None and ship.source == "project"
    assert [Path(d.path).name for d in catalog.diagnostics] == ["broken.yaml"]
    assert discover_presets(project, "user").get("ship") is None
