"""Confining ``bash``: what it may write, see and start.

A command the model wrote is assumed hostile. Where the platform allows, it runs confined:

* **Linux — bubblewrap** (``bwrap``): the whole filesystem read-only, except the working folder
  and a private ``/tmp`` (a configured program installed under the host's ``/tmp``, such as an
  MCP server in a virtualenv there, sees the folders its command names, read-only:
  :func:`named_temp_folders`); Baton's own folders (:func:`core.config.paths.protected_dirs`)
  replaced by empty ones; the host's Unix sockets hidden (:mod:`core.safety.host_sockets`); its
  own PID namespace, so every process it starts — ``setsid``, ``nohup`` and ``disown``
  included — ends with it (``--die-with-parent`` ends it with Baton); network on
  unless the agent (``sandbox: {network: false}``) or the run (``--no-network``) cuts it, and
  with it the host's abstract sockets (its own network namespace).
* **macOS — sandbox-exec**: a generated profile (:func:`seatbelt_profile`) allowing writes only
  under the working folder and a private temp folder, denying Baton's folders, and the network
  when cut. Process containment there is :mod:`core.tools.process_tree`'s tracking.
* **Elsewhere** (Windows, bwrap missing or refused by the kernel, or the Settings switch off)
  bash runs unconfined and every place that asks about bash says **not sandboxed**
  (:meth:`SandboxStatus.describe`).

The availability probe runs bwrap once per process (a few milliseconds) and is cached.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.safety.host_sockets import socket_mounts

SandboxKind = Literal["bubblewrap", "sandbox-exec", "none"]
PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class SandboxStatus:
    """Which sandbox ``bash`` gets here, or why it gets none."""

    kind: SandboxKind
    reason: str = ""
    """Why there is no sandbox (empty when there is one)."""

    @property
    def active(self) -> bool:
        return self.kind != "none"

    def describe(self) -> str:
        """``sandboxed (bubblewrap)`` or ``not sandboxed: <reason>``, for dialogs and the CLI."""
        return f"sandboxed ({self.kind})" if self.active else f"not sandboxed: {self.reason}"


def sandbox_status(enabled: bool = True) -> SandboxStatus:
    """The sandbox bash would run in, given the Settings switch ``enabled``."""
    if not enabled:
        return SandboxStatus("none", "the sandbox is turned off in Settings")
    return _platform_sandbox()


@functools.cache
def _platform_sandbox() -> SandboxStatus:
    if sys.platform.startswith("linux"):
        return _probe_bwrap()
    if sys.platform == "darwin":
        if shutil.which("sandbox-exec"):
            return SandboxStatus("sandbox-exec")
        return SandboxStatus("none", "sandbox-exec was not found")
    return SandboxStatus("none", f"no sandbox is available on {sys.platform}")


def _probe_bwrap() -> SandboxStatus:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return SandboxStatus("none", "bubblewrap (bwrap) is not installed")
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid"]
    try:
        done = subprocess.run(
            [*argv, "--die-with-parent", "--new-session", "--", "true"],
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return SandboxStatus("none", f"bubblewrap cannot run ({error})")
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        why = detail[-1] if detail else f"exit code {done.returncode}"
        return SandboxStatus("none", f"bubblewrap was refused by the system ({why})")
    return SandboxStatus("bubblewrap")


def confine(
    status: SandboxStatus,
    argv: Sequence[str],
    *,
    cwd: Path,
    protected: Sequence[Path],
    network: bool,
    temp: Path | None,
    writable: Sequence[Path] = (),
    readable_temp: Sequence[Path] = (),
) -> list[str]:
    """``argv`` wrapped in the sandbox ``status`` names (unchanged without one).

    ``temp`` is the private temp folder for sandbox-exec (bubblewrap mounts its own ``/tmp``);
    ``writable``: more folders writable beside the working folder (an ACP agent's own state);
    ``readable_temp``: folders of the host's ``/tmp`` shown read-only in bubblewrap's private
    one (:func:`named_temp_folders`; sandbox-exec leaves ``/tmp`` readable anyway).
    """
    if status.kind == "bubblewrap":
        return bwrap_argv(
            argv,
            cwd=cwd,
            protected=protected,
            network=network,
            writable=writable,
            readable_temp=readable_temp,
        )
    if status.kind == "sandbox-exec":
        writable_temp = [*([temp] if temp is not None else []), *writable]
        profile = seatbelt_profile(
            cwd=cwd, temp=None, protected=protected, network=network, writable=writable_temp
        )
        return ["sandbox-exec", "-p", profile, *argv]
    return list(argv)


def bwrap_argv(
    argv: Sequence[str],
    *,
    cwd: Path,
    protected: Sequence[Path],
    network: bool,
    writable: Sequence[Path] = (),
    readable_temp: Sequence[Path] = (),
) -> list[str]:
    """The bubblewrap command line; mounts apply in order, so later ones cover earlier ones."""
    mounts = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for folder in readable_temp:
        mounts += ["--ro-bind", str(folder), str(folder)]
    mounts += socket_mounts(keep=[cwd, *protected, *writable], shown_temp=readable_temp)
    mounts += ["--bind", str(cwd), str(cwd)]
    for folder in writable:
        mounts += ["--bind", str(folder), str(folder)]
    for folder in protected:
        mounts += ["--tmpfs", str(folder)]  # masked even inside the working folder
    isolation = ["--unshare-pid", "--unshare-ipc", "--new-session", "--die-with-parent"]
    if not network:
        isolation.append("--unshare-net")
    where = ["--chdir", str(cwd), "--setenv", "TMPDIR", "/tmp"]
    return [shutil.which("bwrap") or "bwrap", *mounts, *isolation, *where, "--", *argv]


def named_temp_folders(argv: Sequence[str], env: Mapping[str, str]) -> list[Path]:
    """The host's ``/tmp`` folders a configured program's command line and environment name.

    bubblewrap gives the sandbox a private, empty ``/tmp``: an MCP server or ACP agent run by
    an interpreter in a virtualenv under ``/tmp``, or with ``PYTHONPATH`` there, could not
    even start (bwrap's ``execvp`` finds nothing). Each absolute path in ``argv`` or in an
    environment value (split on ``:``) that lies under ``/tmp`` names its top folder there
    (``/tmp/project`` for ``/tmp/project/.venv/bin/python``), shown back read-only. Only
    what exists; never ``/tmp`` itself; each once. Nothing widens for the model's own
    commands: bash is confined without these.
    """
    named: list[Path] = []
    values = [*argv, *(part for value in env.values() for part in value.split(os.pathsep))]
    for value in values:
        parts = Path(value).parts if value.startswith("/") else ()
        if len(parts) < 3 or parts[1] != "tmp" or parts[2] in (".", ".."):
            continue
        top = Path("/tmp", parts[2])
        if top not in named and os.path.lexists(top):
            named.append(top)
    return named


def seatbelt_profile(
    *,
    cwd: Path,
    temp: Path | None,
    protected: Sequence[Path],
    network: bool,
    writable: Sequence[Path] = (),
) -> str:
    """The sandbox-exec (Seatbelt) profile. Later rules win, so the protected-folder denial
    comes after the working-folder allowance it must override."""
    writable = [cwd, *([temp] if temp is not None else []), *writable]
    lines = [
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        "(allow file-write*",
        *(f"    (subpath {_sbpl_string(folder)})" for folder in writable),
        '    (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty")',
        '    (literal "/dev/dtracehelper") (regex #"^/dev/fd/"))',
    ]
    if protected:
        lines.append("(deny file-read* file-write*")
        lines += [f"    (subpath {_sbpl_string(folder)})" for folder in protected]
        lines[-1] += ")"
    if not network:
        lines.append("(deny network*)")
    return "\n".join(lines) + "\n"


def _sbpl_string(path: Path) -> str:
    """A Seatbelt string literal: backslashes and quotes escaped, so no path breaks out."""
    text = str(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'
