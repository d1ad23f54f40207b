"""Work around a reference-counting bug of PySide6 6.12 on CPython 3.11.

PySide6 6.12.0 returns ``None`` from every void method (``widget.setEnabled(True)``,
``document.setHtml(...)``) and ``True`` from every ``signal.emit()`` without taking a
reference. CPython 3.12+ does not care (``None``, ``True`` and ``False`` are immortal there,
PEP 683), but on 3.11 each such call lowers the object's reference count by one, and after a
few thousand calls the interpreter aborts with "Fatal Python error: none_dealloc" (or
``bool_dealloc``). A GUI makes that many calls in seconds.

The fix mirrors what 3.12 does: give these three singletons a reference count so large that no
run can bring it to zero. They are static objects that CPython never frees anyway, so nothing
else changes. It must run before the GUI does any work, which is why ``gui/__init__.py``
imports this module. Remove it once Baton requires Python ≥ 3.12 or PySide6 fixes the bug.
"""

from __future__ import annotations

import ctypes
import sys

_HEADROOM = 1 << 40
"""Extra references: a trillion void calls before the count could reach zero again."""


def make_singletons_immortal() -> None:
    """Raise the reference counts of ``None``, ``True`` and ``False`` (CPython < 3.12 only)."""
    if sys.implementation.name != "cpython" or sys.version_info >= (3, 12):
        return
    for singleton in (None, True, False):
        count = ctypes.c_ssize_t.from_address(id(singleton))  # ob_refcnt is the first field
        if count.value < _HEADROOM:
            count.value += _HEADROOM


make_singletons_immortal()
