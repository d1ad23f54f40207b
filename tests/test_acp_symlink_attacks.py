"""ACP's file methods and terminals stay in the working folder even through symbolic links the
checkout plants: a file linked to one outside is not read, a folder linked outside is not
written into, and a terminal cannot start in it. The agent is the tiny hostile one of
tests/acp_agent.py, calling the client's methods without asking first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.model.events import Event
from tests.test_acp_backend import SANDBOXES, Person, make_ctx, run_step, text


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path]:
    """A working folder with a link to a secret file outside it and a link to a folder."""
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id_rsa").write_text("PRIVATE-KEY-OUTSIDE\n", encoding="utf-8")
    os.symlink(outside / "id_rsa", work / "notes.md")
    os.symlink(outside, work / "docs")
    return work, outside


@pytest.mark.parametrize("sandbox", SANDBOXES)
async def test_attack_links_out_of_the_folder_are_refused(
    planted: tuple[Path, Path], sandbox: bool
) -> None:
    work, outside = planted
    task = "\n".join(
        [
            "CAT notes.md",
            "CAT docs/id_rsa",
            f"TERM touch {outside}/by-term",  # starts in the folder: the sandbox keeps it in
            "WRITE docs/planted.txt written-through-a-link",
        ]
    )
    events: list[Event] = []
    finished = await run_step(make_ctx(work, task, Person(), events, sandbox=sandbox), events)
    said = text(events)
    assert finished.status in ("ok", "error"), finished
    assert "PRIVATE-KEY-OUTSIDE" not in said
    assert said.count("refused:") >= 2
    assert not (outside / "planted.txt").exists()
    if sandbox:
        assert not (outside / "by-term").exists()
