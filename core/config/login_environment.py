"""The login shell's environment, for an app started from a desktop menu or dock.

Such an app inherits the desktop session's environment, not what ``~/.profile`` and
``~/.bashrc`` add (nvm, npm's global folder, ``~/.local/bin``…), which is where the agent CLIs
usually are. Editors solve this the same way: run ``$SHELL -ilc env`` once at start-up and take
PATH and the variables the app does not have from it. ``env -0`` after a marker makes the
output unambiguous whatever the profile prints; a timeout and a kill of the shell's whole
process group bound a slow or hanging profile. Any failure is an error value, never a hang:
the caller (off the GUI thread) carries on with the environment it has.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field

MARKER = "__BATON_LOGIN_ENVIRONMENT__"
DEFAULT_TIMEOUT_S = 10.0
"""Long enough for a heavy profile (nvm, conda), short enough not to be forgotten."""
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
SHELL_ONLY = frozenset(
    {"PWD", "OLDPWD", "SHLVL", "_", "PS1", "PS2", "PROMPT_COMMAND", "COLUMNS", "LINES", "TERM"}
)
"""Variables that describe the shell that printed them, not the user's environment."""


class LoginShellError(Exception):
    """The login shell could not tell its environment (slow, failing, or printing nonsense)."""


@dataclass(frozen=True)
class LoginEnvironment:
    """What the login shell's environment changes in ours."""

    path: str | None
    """The merged PATH (login shell's folders first), None when it adds nothing."""
    added: dict[str, str] = field(default_factory=dict)
    """Variables we did not have (NVM_DIR, a provider key the profile exports…)."""
    path_folders: tuple[str, ...] = ()
    """PATH folders that only the login shell has."""


def started_from_terminal(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the process has a terminal (its environment is already the shell's).

    ``BATON_LOGIN_SHELL=1`` / ``0`` overrides the guess (tests, odd launchers)."""
    environ = os.environ if environ is None else environ
    forced = environ.get("BATON_LOGIN_SHELL")
    if forced in ("0", "1"):
        return forced == "0"
    return any(os.isatty(fd) for fd in (0, 1, 2))


def login_shell(environ: Mapping[str, str] | None = None) -> str | None:
    """The user's login shell: ``$SHELL``, else the password database's; None on Windows."""
    if sys.platform == "win32":
        return None
    environ = os.environ if environ is None else environ
    shell = environ.get("SHELL")
    if shell:
        return shell
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_shell or None
    except (ImportError, KeyError):
        return None


def read_login_environment(shell: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> dict[str, str]:
    """Run ``shell -ilc`` to print its environment; LoginShellError when it fails, prints
    no environment, or takes longer than ``timeout_s`` (it is killed, with its children)."""
    command = f"printf '%s\\0' {MARKER}; env -0"
    try:
        process = subprocess.Popen(
            [shell, "-ilc", command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            # In the home folder, never the project's: hooks in a profile (direnv, nvm's
            # .nvmrc, a prompt reading .env) would otherwise run what a checkout says.
            cwd=_home(),
            start_new_session=True,  # its own process group: a timeout kills all of it
        )
    except OSError as error:
        raise LoginShellError(f"cannot start {shell}: {error.strerror or error}") from None
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise LoginShellError(f"{shell} did not answer within {timeout_s:g} s") from None
    if process.returncode != 0:
        raise LoginShellError(f"{shell} exited with status {process.returncode}")
    return parse_environment(output)


def _home() -> str:
    home = os.path.expanduser("~")
    return home if os.path.isdir(home) else "/"


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    try:
        process.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # a grandchild that left the group holds the pipe
        if process.stdout is not None:
            process.stdout.close()
        process.wait()


def parse_environment(output: bytes) -> dict[str, str]:
    """The ``NAME=value`` entries after the marker (whatever the profile printed before)."""
    start = output.rfind(MARKER.encode() + b"\0")
    if start < 0:
        raise LoginShellError("the login shell printed no environment")
    environment: dict[str, str] = {}
    for entry in output[start + len(MARKER) + 1 :].split(b"\0"):
        name, equals, value = entry.decode("utf-8", "surrogateescape").partition("=")
        if equals and NAME.match(name):
            environment[name] = value
    if "PATH" not in environment:
        raise LoginShellError("the login shell's environment has no PATH")
    return environment


def merge(current: Mapping[str, str], login: Mapping[str, str]) -> LoginEnvironment:
    """What to change in ``current``: PATH becomes the login shell's folders followed by ours
    it lacks; variables we lack are added; everything we have wins (the launcher may have
    set it on purpose, and a bundle's own library paths must stay)."""
    ours = [folder for folder in current.get("PATH", "").split(os.pathsep) if folder]
    theirs = [folder for folder in login.get("PATH", "").split(os.pathsep) if folder]
    new = [folder for folder in dict.fromkeys(theirs) if folder not in ours]
    merged = list(dict.fromkeys([*theirs, *ours]))
    added = {
        name: value
        for name, value in login.items()
        if name not in current and name not in SHELL_ONLY and name != "PATH"
    }
    path = os.pathsep.join(merged) if new else None
    return LoginEnvironment(path=path, added=added, path_folders=tuple(new))


def apply(change: LoginEnvironment, environ: MutableMapping[str, str] | None = None) -> None:
    """Put ``change`` into the process environment (call it from one thread: the GUI's)."""
    from core.config.program_locations import note_login_path

    target: MutableMapping[str, str] = os.environ if environ is None else environ
    for name, value in change.added.items():
        target.setdefault(name, value)
    if change.path is not None:
        target["PATH"] = change.path
    note_login_path(change.path_folders)
