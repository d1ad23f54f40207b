"""The host's Unix sockets a confined command must not reach, as bubblewrap mounts.

A socket is a door out of any filesystem sandbox: the session bus (``/run/user/$UID/bus``) starts
programs through ``systemd-run --user``, ``docker.sock`` is root, an ssh or gpg agent signs with
the person's keys. A read-only view of the filesystem still lets ``connect()`` through, so the
sandbox hides them in two layers:

* the folders where services put their sockets (``/run``, ``/var/run``, ``/var/tmp``,
  ``$XDG_RUNTIME_DIR``) are replaced by empty ones;
* every socket the host has *bound to a path right now* — read from ``/proc/net/unix``, which
  lists them wherever they are (the home folder's ``~/.gnupg/S.gpg-agent``, a Docker Desktop
  socket, a database's socket under ``/var/lib``) — is covered by ``/dev/null``, on which
  ``connect()`` is refused.

Abstract sockets (no path) live in the network namespace, so only ``--unshare-net`` (the
``--no-network`` switch) cuts them. Sockets a host program binds *after* the command started, in
a folder not replaced above, are not covered; sockets inside the working folder are left alone
(covering one that vanished in between would leave a stray empty file in the person's folder).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

PROC_NET_UNIX = Path("/proc/net/unix")
SOCKET_FOLDERS = ("/run", "/var/run", "/var/tmp")
"""Where system and user services put their sockets (``/run/user/$UID`` lies inside ``/run``)."""


def socket_mounts(
    *,
    keep: Sequence[Path],
    shown_temp: Sequence[Path] = (),
    resolv: Path = Path("/etc/resolv.conf"),
) -> list[str]:
    """bwrap arguments hiding the host's sockets; ``keep`` lists folders left untouched (the
    working folder, already-masked ones). ``/tmp`` is private inside the sandbox, so its
    sockets are hidden already, except under ``shown_temp``: host folders of ``/tmp`` bound
    back in (:func:`core.safety.sandbox.named_temp_folders`), whose sockets are masked here.

    ``/etc/resolv.conf`` often points into ``/run`` (systemd-resolved), so when it does, its
    target is bound back after ``/run`` is emptied: name resolution keeps working when the
    network is on.
    """
    folders = _masked_folders()
    mounts: list[str] = []
    for folder in folders:
        mounts += ["--tmpfs", folder]
    spared = [*folders, *(os.path.realpath(folder) for folder in keep), "/tmp"]
    for path in host_socket_paths():
        if not _under_any(path, spared) or _under_any(path, shown_temp):
            mounts += ["--ro-bind", "/dev/null", path]
    target = _resolved(resolv)
    if target is not None and _under_any(target, folders) and os.path.isfile(target):
        mounts += ["--ro-bind", target, target]
    return mounts


def _masked_folders() -> list[str]:
    """The socket folders that exist as real folders here (a symlink such as ``/var/run ->
    /run`` is covered by its target; a missing folder cannot be mounted over)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    candidates = [*SOCKET_FOLDERS, *([runtime] if os.path.isabs(runtime) else [])]
    folders: list[str] = []
    for folder in candidates:
        if os.path.isdir(folder) and not os.path.islink(folder):
            folders.append(os.path.normpath(folder))
    return folders


def host_socket_paths(table: Path = PROC_NET_UNIX) -> list[str]:
    """Absolute paths of the sockets currently bound on the host that still exist as sockets
    (``/proc/net/unix`` keeps listing a socket whose file was deleted)."""
    try:
        text = table.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found: dict[str, None] = {}
    for bound in _bound_paths(text.splitlines()[1:]):
        path = os.path.realpath(bound)  # bound through a symlink such as /var/run -> /run
        if path not in found and _is_socket(path):
            found[path] = None
    return list(found)


def _bound_paths(rows: Iterable[str]) -> Iterable[str]:
    for row in rows:
        fields = row.split(None, 7)
        if len(fields) == 8 and fields[7].startswith("/"):
            yield fields[7]


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except OSError:
        return False


def _under_any(path: str, folders: Iterable[str | Path]) -> bool:
    return any(_under(path, str(folder)) for folder in folders)


def _under(path: str, folder: str) -> bool:
    folder = folder.rstrip("/") or "/"
    return path == folder or path.startswith(folder + "/") or folder == "/"


def _resolved(path: Path) -> str | None:
    try:
        return str(path.resolve(strict=True))
    except (OSError, RuntimeError):
        return None
