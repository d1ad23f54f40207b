"""A chain run by the built app inside an older distribution's chroot (made by
packaging/build_old_glibc.sh, which mounts the checkout at /src and calls this with
``--check``): proof the bundle works on that glibc, not only that it starts.

The scripted model listens on the host's 127.0.0.1, which the chroot shares. Run as
``python -m tests.bundle.chroot_run ROOT``; exits non-zero with the app's output on failure.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from tests.llm_server import LLMServer, Reply


def run_chain(root: Path) -> str:
    """Run a two-step chain with a bash call in ``root``; return the app's output."""
    work = Path(tempfile.mkdtemp(prefix="chain-", dir=root / "tmp"))
    inside = Path("/tmp") / work.name
    with LLMServer() as model:
        model.queue(
            Reply.tool("bash", {"command": "uname -s > kernel.txt"}),
            Reply.answer("## Found\n\nThe kernel is **Linux**."),
            Reply.answer("1. Nothing to change."),
        )
        command = [
            "chroot", str(root), "env", "-i", "PATH=/usr/bin:/bin", "HOME=/root",
            "LANG=C.UTF-8", "QT_QPA_PLATFORM=offscreen", f"OPENAI_BASE_URL={model.base_url}",
            "/src/dist/Baton/baton", "run", "--chain", "worker=look", "planner=plan {previous}",
            "--approve", "all", "--model", "gpt-4o-mini", "--cwd", str(inside),
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    output = done.stdout + done.stderr
    if done.returncode != 0 or "The kernel is **Linux**." not in output:
        raise SystemExit(f"the chain failed in {root} (exit {done.returncode}):\n{output}")
    if (work / "kernel.txt").read_text().strip() != "Linux":
        raise SystemExit(f"the bash call did not run in {root}:\n{output}")
    return output


if __name__ == "__main__":
    print(run_chain(Path(sys.argv[1])).splitlines()[-1])
