"""What Baton's loop told a step beyond its agent's prompt shows in the step header ("context:
AGENTS.md, src/AGENTS.md · 1.2k tokens"); the Agents view lists the skills found and an agent's
own ``skills:``, and a broken SKILL.md is a problem that opens at its line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.model.events import ContextLoaded
from gui.run.run_view import RunView
from gui.window.main_window import MainWindow
from tests.gui.run_events import finished_chain

Window = Callable[..., MainWindow]


def test_the_step_header_shows_the_context_line(view: RunView) -> None:
    events = finished_chain()
    finished = events.index(next(e for e in events if e.type == "step_finished"))
    loaded = ContextLoaded(
        run_id=events[0].run_id,
        step=0,
        ts=0.5,
        files=["AGENTS.md", "src/AGENTS.md"],
        skills=["pdf-report"],
        tokens=1234,
    )
    events.insert(finished, loaded)
    view.load_events(events)

    label = view.pane(0).context
    assert label.isVisible()
    assert (
        label.full_text() == "context: AGENTS.md, src/AGENTS.md · skills: pdf-report · 1.2k tokens"
    )
    assert not view.pane(1).context.isVisible()  # a step that loaded nothing says nothing


def skill(folder: Path, name: str, description: str) -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n")


def test_the_agents_view_lists_skills_and_an_agents_skills(
    make_window: Window,
    project: Path,
    isolated_home: Path,
    write_agent: Callable[..., Path],
) -> None:
    skill(isolated_home / "config" / "skills", "pdf-report", "Makes PDF reports.")
    skill(project / ".claude" / "skills", "deploy", "Deploys the site.")
    (project / ".claude" / "skills" / "broken").mkdir()
    (project / ".claude" / "skills" / "broken" / "SKILL.md").write_text("---\nname: broken\n---\n")
    path = write_agent(project / ".claude" / "agents", "writer", "Writes", skills="[pdf-report]")

    window = make_window()
    view = window.agents_view
    assert view.skills_panel.isVisible()
    assert view.skills_panel.title.text() == "Skills (2)"
    assert view.skills_panel.names() == ["deploy", "pdf-report"]
    assert view.skills_panel.list.item(0).text() == "deploy — Deploys the site."
    rows = view.diagnostics.row_texts()
    assert any("SKILL.md:1" in row and "'description' is required" in row for row in rows)

    view.open_path(path)
    assert "Skills: pdf-report" in view.header.summary.full_text()
