"""Can Qt's X11 platform plugin start here: system libraries present, display reachable?

Qt answers a missing library with SIGABRT and a misleading hint ("xcb-cursor0 is needed" even
when that one is installed and two others are not). Checked here before Qt is imported, without
importing Qt: loading the plugin with ``dlopen`` costs about a millisecond (the libraries stay
loaded for Qt afterwards) and fails on the first missing library; only then ``ldd`` is asked
for the whole list, so the user installs everything in one go. Nothing in this module imports Qt,
and what only the X11 check needs (ctypes, subprocess: ~8 ms) is imported when it runs, so the
start-up of a window on another platform (Wayland, offscreen, macOS, Windows) does not pay it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

DEBIAN_PACKAGES = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
}
"""Shared-library names → the Debian/Ubuntu package that ships them (the README lists the
Fedora names too)."""

_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)
_FIRST_MISSING = re.compile(r"(\S+\.so[.\d]*): cannot open shared object file")


def xcb_plugin() -> Path | None:
    """The X11 platform plugin of the installed PySide6, found without importing it."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or spec.origin is None:
        return None
    plugin = Path(spec.origin).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    return plugin if plugin.is_file() else None


def uses_xcb() -> bool:
    """Qt will pick its X11 plugin: Linux, and no other platform chosen or preferred."""
    if not sys.platform.startswith("linux"):
        return False
    chosen = os.environ.get("QT_QPA_PLATFORM", "")
    if chosen:
        return chosen.split(":")[0] == "xcb"
    return bool(os.environ.get("DISPLAY")) and not os.environ.get("WAYLAND_DISPLAY")


def missing_libraries(library: Path) -> list[str]:
    """Shared-library names ``library`` needs and the loader cannot find (empty: all there)."""
    import ctypes

    try:
        ctypes.CDLL(str(library))
    except OSError as error:
        first = _FIRST_MISSING.search(str(error))
        listed = _ldd_missing(library)
        names = listed or ([first.group(1)] if first else [])
        return sorted(set(names))
    return []


def _ldd_missing(library: Path) -> list[str]:
    import shutil
    import subprocess

    ldd = shutil.which("ldd")
    if ldd is None:
        return []
    try:
        result = subprocess.run(
            [ldd, str(library)], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    return _NOT_FOUND.findall(result.stdout)


def display_unreachable(display: str | None) -> bool:
    """True when an X server at ``display`` refuses us — Qt would abort on it. Asked through
    libxcb (already loaded by the plugin check), which costs a round trip of a millisecond."""
    import ctypes

    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return False  # cannot tell; let Qt try
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    connection = xcb.xcb_connect(display.encode() if display else None, None)
    try:
        return bool(xcb.xcb_connection_has_error(connection))
    finally:
        xcb.xcb_disconnect(connection)


def missing_libraries_problem() -> str | None:
    """None when the window can load; otherwise what to install or fix, in one paragraph."""
    if not uses_xcb():
        return None
    plugin = xcb_plugin()
    if plugin is None:
        return None
    missing = missing_libraries(plugin)
    if not missing:
        display = os.environ.get("DISPLAY")
        if display_unreachable(display):
            return f"cannot connect to the X display {display!r}; is the X server running?"
        return None
    packages = sorted({DEBIAN_PACKAGES.get(name, name) for name in missing})
    return (
        f"the window needs system libraries that are missing: {', '.join(missing)}.\n"
        f"On Debian or Ubuntu: sudo apt install {' '.join(packages)}\n"
        "(the README lists every library, for Fedora too; 'baton run ...' works without them)"
    )
