"""The bundled executable's entry point: the same ``baton`` command as the installed one.

The bundle is built windowed (no console window pops up when the app is double-clicked). On
Windows such a program has no stdout, so when it is started from a terminal with a
sub-command it attaches to that terminal's console first, and ``baton runs list`` still prints.
"""

from __future__ import annotations

import os
import sys


def _attach_parent_console() -> None:
    import ctypes

    if ctypes.windll.kernel32.AttachConsole(-1):  # type: ignore[attr-defined]
        sys.stdout = open("CONOUT$", "w", encoding="utf-8")  # noqa: SIM115
        sys.stderr = open("CONOUT$", "w", encoding="utf-8")  # noqa: SIM115


if __name__ == "__main__":
    if os.environ.get("BATON_RULE_WORKER"):  # core.safety.rule_judge's worker process
        from core.safety.rule_judge import serve

        sys.exit(serve())
    # Output already going somewhere (a pipe or file, as in the acceptance test) stays there.
    if sys.platform == "win32" and len(sys.argv) > 1 and sys.stdout is None:
        _attach_parent_console()
    from gui.launcher import main

    sys.exit(main())
