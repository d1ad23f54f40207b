"""The README's picture of the installed app: a chain run by the *built* Baton, then shown.

    .venv/bin/python -m docs.make_installed_screenshot dist/Baton/baton OUT.png

The app (any ``baton`` command line: the bundle, ``/usr/bin/baton`` of the .deb) runs a
scout → planner → worker chain with tool calls against the tests' scripted model, in scratch
folders, then ``baton open RUN --screenshot`` draws the run as the window shows it.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.llm_server import LLMServer, Reply

OLD = "def total(items):\n    return sum(i.price for i in items)\n"
NEW = "def total(items, discount=0.0):\n    return sum(i.price for i in items) * (1 - discount)\n"
SCOUT = "## Files Retrieved\n- `cart.py` — `total()` sums prices\n\n## Start Here\n`cart.py:1`"
PLAN = "## Goal\nAdd a discount to `total()`.\n\n## Plan\n1. Add `discount=0.0`\n2. Apply it"
DONE = "## Completed\n`total()` takes a `discount`.\n\n## Files Changed\n- `cart.py`"
CHAIN = ["scout=find the cart total", "planner=plan a discount: {previous}", "worker={previous}"]


def _project(folder: Path) -> Path:
    project = folder / "shop"
    project.mkdir()
    (project / "cart.py").write_text(OLD, encoding="utf-8")
    git = ["git", "-c", "user.email=baton@example.com", "-c", "user.name=Baton"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "init"]):
        subprocess.run([*git, *args], cwd=project, check=True)
    return project


def main(argv: list[str]) -> int:
    baton, out = shlex.split(argv[0]), argv[1]
    scratch = Path(tempfile.mkdtemp())
    project = _project(scratch)
    env = {
        **os.environ,
        "HOME": str(scratch / "home"),
        "BATON_CONFIG_DIR": str(scratch / "config"),
        "BATON_DATA_DIR": str(scratch / "data"),
        "BATON_LOGIN_SHELL": "0",
    }
    with LLMServer() as server:
        env |= {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-scripted"}
        server.queue(
            Reply.tool("grep", {"pattern": "def total", "path": "."}),
            Reply.answer(SCOUT),
            Reply.answer(PLAN),
            Reply.tool("edit", {"path": "cart.py", "old_string": OLD, "new_string": NEW}),
            Reply.tool("bash", {"command": "python3 -c 'import cart; print(cart.total([], 0.1))'"}),
            Reply.answer(DONE),
        )
        run = [*baton, "run", "--chain", *CHAIN, "--approve", "all", "--cwd", str(project)]
        subprocess.run([*run, "--model", "gpt-4o-mini"], env=env, check=True, timeout=300)
    (run_file,) = (scratch / "data" / "runs").glob("*.jsonl")
    shown = {**env, "QT_QPA_PLATFORM": "offscreen"}
    subprocess.run([*baton, "open", str(run_file), "--screenshot", out], env=shown, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
