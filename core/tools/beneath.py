"""Opening files *beneath* the working folder, so that a path cannot be raced out of it.

Checking a path and then opening it by name leaves a window: between the two, another task's
``bash`` can turn a folder on the path into a symlink to ``~/.config/baton`` and the write lands
there. So the file tools open everything relative to a descriptor held for the working folder:

* with ``openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`` where the kernel has it (Linux 5.6+,
  called through ``syscall`` because Python has no wrapper): the kernel itself refuses any
  ``..`` or symlink that would leave the folder, at the moment of the open;
* otherwise by walking the path one component at a time with ``O_NOFOLLOW`` and ``dir_fd=``,
  reading a symlink met on the way and splicing its (relative) target in, and refusing ``..``
  above the folder and absolute targets — the same rules, enforced by Baton.

Either way a symlink that stays inside the folder is followed (as the tools always allowed), and
one that leaves it is refused. The folder a file is opened in is then checked by identity
(device and inode, walking ``..`` up to the working folder): it must lie inside the working
folder and outside Baton's own folders (:func:`core.config.paths.protected_dirs`), however the path
reached it. Writes create their temporary file and rename it inside that held descriptor
(:func:`core.config.atomic.atomic_write_at`), so the file replaced is the one in the checked folder.
The last component is always opened with ``O_NOFOLLOW``: the path was resolved before, so a
symlink there now is a swap in progress, and it is refused rather than followed.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import platform
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from core.config.paths import protected_dirs
from core.tools.base import ToolError
from core.tools.paths import PROTECTED

SYS_OPENAT2 = 437
"""The same number on x86_64 and aarch64 (new system calls share one table)."""
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_BENEATH = 0x08
MAX_SYMLINKS = 40
"""As the kernel's own limit: a longer chain is a loop."""
MAX_RETRIES = 200
"""``openat2`` says ``EAGAIN`` when a rename elsewhere raced its lookup; an agent renaming in
a loop must not keep a tool spinning for ever."""
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _CLOEXEC


class _OpenHow(ctypes.Structure):
    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    )


def _syscall() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "aarch64", "arm64"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    function = libc.syscall
    function.restype = ctypes.c_long
    return function


def _openat2(dir_fd: int, relative: str, flags: int, mode: int) -> int:
    syscall = _syscall()
    if syscall is None:
        raise OSError(errno.ENOSYS, "openat2 is not available")
    resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS
    how = _OpenHow(flags, mode if flags & os.O_CREAT else 0, resolve)
    encoded = os.fsencode(relative)
    fd = int(
        syscall(
            ctypes.c_long(SYS_OPENAT2),
            ctypes.c_int(dir_fd),
            ctypes.c_char_p(encoded),
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), relative)
    return fd


@functools.cache
def openat2_works() -> bool:
    """Whether this kernel (and any seccomp filter around Baton) lets ``openat2`` through."""
    top = os.open("/", DIR_FLAGS)
    try:
        os.close(_openat2(top, ".", DIR_FLAGS, 0))
    except OSError:
        return False
    finally:
        os.close(top)
    return True


def open_beneath(root_fd: int, relative: str, flags: int, mode: int = 0o777) -> int:
    """Open ``relative`` under the folder ``root_fd``, never leaving it; ``OSError`` otherwise
    (``EXDEV`` when the path would leave it, ``ELOOP`` for a symlink loop)."""
    if openat2_works():
        for _ in range(MAX_RETRIES):
            try:
                return _openat2(root_fd, relative, flags | _CLOEXEC, mode)
            except InterruptedError:
                continue
            except OSError as exc:
                if exc.errno != errno.EAGAIN:  # a rename elsewhere raced the lookup: retry
                    raise
        raise OSError(errno.ELOOP, "the path kept changing while it was opened", relative)
    return _walk_open(root_fd, relative, flags | _CLOEXEC, mode)


def _walk_open(root_fd: int, relative: str, flags: int, mode: int) -> int:
    """``open_beneath`` without ``openat2``: one component at a time, symlinks read by hand."""
    pending = [part for part in relative.split("/") if part not in ("", ".")]
    stack = [os.dup(root_fd)]
    hops = 0
    try:
        while pending:
            name = pending.pop(0)
            if name == "..":
                if len(stack) == 1:
                    raise OSError(errno.EXDEV, "the path leaves the folder", relative)
                os.close(stack.pop())
                continue
            last = not pending
            wanted = (flags if last else DIR_FLAGS) | NOFOLLOW
            try:
                fd = os.open(name, wanted, mode, dir_fd=stack[-1])
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise
                try:
                    entry = os.stat(name, dir_fd=stack[-1], follow_symlinks=False)
                    is_link = stat.S_ISLNK(entry.st_mode)
                except OSError:
                    raise exc from None
                if not is_link:
                    raise
                hops += 1
                if hops > MAX_SYMLINKS:
                    raise OSError(errno.ELOOP, "too many symbolic links", relative) from None
                target = os.readlink(name, dir_fd=stack[-1])
                if target.startswith("/"):
                    raise OSError(errno.EXDEV, "an absolute symlink", relative) from None
                pending[:0] = [part for part in target.split("/") if part not in ("", ".")]
                continue
            if last:
                return fd
            stack.append(fd)
        return os.dup(stack[-1])  # the path named the folder itself (or nothing)
    finally:
        for fd in stack:
            os.close(fd)


def identity(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


def protected_identities() -> set[tuple[int, int]]:
    found: set[tuple[int, int]] = set()
    for folder in protected_dirs():
        try:
            found.add(identity(os.stat(folder)))
        except OSError:
            continue
    return found


def check_folder(dir_fd: int, root_fd: int, shown: str) -> None:
    """Refuse the open folder ``dir_fd`` unless it lies inside ``root_fd`` and outside Baton's
    folders, judged by identity: walk ``..`` from it up to the working folder."""
    root = identity(os.fstat(root_fd))
    protected = protected_identities()
    current = os.dup(dir_fd)
    try:
        for _ in range(4096):
            here = identity(os.fstat(current))
            if here in protected:
                raise ToolError(PROTECTED.format(path=shown))
            if here == root:
                return
            parent = os.open("..", DIR_FLAGS, dir_fd=current)
            os.close(current)
            current = parent
            if identity(os.fstat(current)) == here:  # the file system's root: never met ours
                break
        raise ToolError(f"The path {shown} is outside the working folder.")
    finally:
        os.close(current)


def _error(exc: OSError, shown: str, verb: str) -> ToolError:
    if exc.errno == errno.EXDEV:
        return ToolError(
            f"The path {shown} leads outside the working folder (a symlink or `..` on the way "
            "points out of it, or was just changed to)."
        )
    if exc.errno == errno.ELOOP:
        return ToolError(f"The path {shown} goes through a symlink loop or a changing symlink.")
    if exc.errno == errno.ENOENT:
        return ToolError(f"File not found: {shown}.")
    if exc.errno == errno.ENOTDIR:
        return ToolError(f"Cannot {verb} {shown}: a part of the path is not a folder.")
    return ToolError(f"Cannot {verb} {shown}: {exc.strerror or exc}.")


def open_root(root: Path) -> int:
    """A descriptor for the working folder (already resolved)."""
    return os.open(root, DIR_FLAGS)


@contextmanager
def folder_beneath(
    root: Path, relative: PurePosixPath, shown: str, *, create: bool = False
) -> Iterator[int]:
    """The checked descriptor of the folder ``relative`` (to the resolved working folder
    ``root``), its missing parts created when ``create`` (by name inside their parent's held
    descriptor, so a swap cannot move the creation elsewhere)."""
    try:
        root_fd = open_root(root)
    except OSError as exc:
        raise ToolError(f"Cannot open the working folder {root}: {exc.strerror or exc}.") from exc
    try:
        fd = _open_folder(root_fd, relative, shown, create)
        try:
            check_folder(fd, root_fd, shown)
            yield fd
        finally:
            os.close(fd)
    finally:
        os.close(root_fd)


def _open_folder(root_fd: int, relative: PurePosixPath, shown: str, create: bool) -> int:
    parts = [part for part in relative.parts if part not in ("", ".")]
    try:
        return open_beneath(root_fd, "/".join(parts) or ".", DIR_FLAGS)
    except OSError as exc:
        if not (create and exc.errno == errno.ENOENT):
            raise _error(exc, shown, "write" if create else "read") from exc
    current = os.dup(root_fd)
    try:
        for index, name in enumerate(parts):
            try:
                following = open_beneath(root_fd, "/".join(parts[: index + 1]), DIR_FLAGS)
            except FileNotFoundError:
                check_folder(current, root_fd, shown)  # never create inside Baton's folders
                with contextlib.suppress(FileExistsError):  # made meanwhile: the open decides
                    os.mkdir(name, dir_fd=current)
                following = open_beneath(root_fd, "/".join(parts[: index + 1]), DIR_FLAGS)
            os.close(current)
            current = following
        return current
    except OSError as exc:
        os.close(current)
        raise _error(exc, shown, "write") from exc
    except BaseException:
        os.close(current)
        raise


def split(root: Path, path: Path) -> tuple[PurePosixPath, str]:
    """The folder (relative to ``root``) and the name of the resolved ``path`` inside it."""
    relative = PurePosixPath(path.relative_to(root).as_posix())
    if relative.name in ("", "."):
        raise ToolError("The working folder itself is not a file.")
    return relative.parent, relative.name


def lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    """The entry ``name`` in ``dir_fd`` as it is (a symlink is not followed); None if absent."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def open_file_at(dir_fd: int, name: str, shown: str, flags: int) -> int:
    """Open the entry ``name`` of a checked folder, refusing a symlink in its place."""
    try:
        return os.open(name, flags | NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ToolError(
                f"{shown} was just replaced by a symlink; file tools do not follow a symlink "
                "that changes while they work. Try again."
            ) from exc
        raise _error(exc, shown, "open") from exc
