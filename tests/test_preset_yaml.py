"""Editing a preset's steps in its YAML: comments, quoting and block scalars survive."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.definitions.preset_yaml import PresetDocument, PresetYAMLError

GRAPH = """\
name: review-loop   # my favourite
mode: graph
steps:
  - name: work
    agent: worker
    task: "$@"
  - loop:
      name: review
      max_iterations: 3
      until: "check.count(critical) == 0"
      steps:
        - name: check
          agent: reviewer
          task: "Review: {previous}"
        # fix only what matters
        - name: fix
          agent: worker
          task: |
            Fix these:
            {step.check}
          when: "check.max_severity >= major"
  - name: ship
    agent: worker
    after: [review, work]
"""


def test_an_untouched_document_is_written_back_byte_for_byte() -> None:
    assert PresetDocument(GRAPH).text() == GRAPH


def test_steps_inside_a_loop_are_read_and_edited_in_place() -> None:
    document = PresetDocument(GRAPH)
    steps = document.steps()
    assert [(s.path, s.name, s.loop) for s in steps] == [
        ((0,), "work", None),
        ((1, 0), "check", "review"),
        ((1, 1), "fix", "review"),
        ((2,), "ship", None),
    ]
    assert steps[3].after == ("review", "work")
    document.set_field((1, 1), "when", "check.count(major) > 0")
    document.set_field((1, 1), "task", "Fix:\n{step.check}\n")
    document.set_field((2,), "gate", "Ship it?")
    text = document.text()
    assert '          when: "check.count(major) > 0"\n' in text  # its quotes kept
    assert "          task: |\n            Fix:\n            {step.check}\n" in text
    assert "        # fix only what matters\n" in text
    assert "name: review-loop   # my favourite\n" in text
    assert text.endswith("    after: [review, work]\n    gate: {question: Ship it?}\n")


def test_removing_a_step_takes_its_name_out_of_the_others_after() -> None:
    document = PresetDocument(GRAPH)
    document.remove_step((0,))
    ship = next(s for s in document.steps() if s.name == "ship")
    assert ship.after == ("review",)
    path = document.add_step("reviewer", "{outputs}", document.free_name())
    document.set_field(path, "after", ["ship"])
    document.remove_step((1,))  # ship: its only follower's after: goes (the default again)
    assert document.steps()[-1].after is None
    assert document.steps()[-1].name == "step-1"


def test_what_the_form_cannot_edit_is_refused_with_the_reason() -> None:
    with pytest.raises(PresetYAMLError, match="does not parse"):
        PresetDocument("name: [oops\n")
    with pytest.raises(PresetYAMLError, match="not a mapping"):
        PresetDocument("- just a list\n")
    with pytest.raises(PresetYAMLError, match="does not edit"):
        PresetDocument(GRAPH).set_field((0,), "model", "x")


def test_a_python_tag_in_a_hostile_file_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = (
        "name: evil\nmode: chain\nsteps:\n"
        f'  - agent: !!python/object/apply:os.system ["touch {marker}"]\n'
        "    task: hi\n"
    )
    try:
        document = PresetDocument(text)
        document.set_field((0,), "task", "changed")
        document.text()
    except PresetYAMLError:
        pass  # refused is fine too: the person edits the text
    assert not marker.exists()
