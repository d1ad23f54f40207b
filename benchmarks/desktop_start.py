"""Does reading the login shell's environment delay the first paint of a desktop start?

The same fresh-process timing as :mod:`benchmarks.startup` (spawn until the main window's
first paint event), two kinds alternated run by run, :data:`RUNS` each, medians compared:

* ``terminal`` — ``BATON_LOGIN_SHELL=0``: started from a terminal, the shell is not read;
* ``desktop`` — ``BATON_LOGIN_SHELL=1`` and a ``~/.bash_profile`` that takes
  :data:`PROFILE_S` seconds (nvm and conda take about that): the shell runs on its own thread
  while the window is built and painted.

Last line, JSON: ``ratio`` = desktop / terminal [≤ 1.2: the shell runs beside the window,
not before it], ``profile_s``, and the medians in ms.
"""

from __future__ import annotations

import json
import statistics
import tempfile
from pathlib import Path

from benchmarks.startup import child_env, time_to_paint

RUNS = 8
PROFILE_S = 2


def sample(kind: str, scratch: Path) -> float:
    env = child_env(
        scratch,
        SHELL="/bin/bash",
        PATH="/usr/bin:/bin",
        BATON_LOGIN_SHELL="1" if kind == "desktop" else "0",
    )
    return time_to_paint(kind, "baton", scratch / "project", env)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="baton-desktop-start-") as tmp:
        scratch = Path(tmp)
        (scratch / "home").mkdir()
        (scratch / "project").mkdir()
        (scratch / "home" / ".bash_profile").write_text(f"sleep {PROFILE_S}\n", encoding="utf-8")
        kinds = ("terminal", "desktop")
        for kind in kinds:  # bytecode compiled, caches warm: not timed
            sample(kind, scratch)
        samples: dict[str, list[float]] = {kind: [] for kind in kinds}
        for _ in range(RUNS):
            for kind in kinds:
                samples[kind].append(sample(kind, scratch))
        medians = {kind: statistics.median(values) for kind, values in samples.items()}
        for kind, values in samples.items():
            print(
                f"{kind}: median {medians[kind]:.0f} ms "
                f"(min {min(values):.0f}, max {max(values):.0f})"
            )
        print(
            json.dumps(
                {
                    "ratio": round(medians["desktop"] / medians["terminal"], 2),
                    "profile_s": PROFILE_S,
                    **{f"{kind}_ms": round(value, 1) for kind, value in medians.items()},
                }
            )
        )


if __name__ == "__main__":
    main()
