"""Start-up work the window's first picture does not need, run right after that picture.

Reading settings (pydantic, yaml) and listing the agent files take longer than painting a
window; doing them after the first paint puts the window on screen first. The steps run from
the event loop, not inside the paint event, so a slow step never holds a paint.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer


class FirstPaint:
    """Runs :attr:`steps` once, from the event loop, after :meth:`painted` is first called
    (and after :meth:`release`, when held)."""

    def __init__(self, *steps: Callable[[], None]) -> None:
        self.steps: list[Callable[[], None]] = list(steps)
        """Called in turn once the window has painted; more may be appended until then."""
        self._painted = False
        self._on_paint: list[Callable[[], None]] = []
        self._held = False
        self._scheduled = False
        self.started = False
        """True once the steps ran."""

    def hold(self) -> None:
        """Keep the steps waiting, painted or not, until :meth:`release`. ``baton`` paints its
        window before it starts the asyncio event loop, which some steps need."""
        self._held = True

    def release(self) -> None:
        """Let the steps run: now, from the event loop, if the window has painted."""
        self._held = False
        self._schedule()

    def is_painted(self) -> bool:
        return self._painted

    def when_painted(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` at the first paint, inside the paint event: something cheap, such
        as ending a wait for it (``baton`` starts its asyncio loop after the first paint)."""
        self._on_paint.append(callback)

    def painted(self) -> None:
        """The window painted (call from its paintEvent): the first time, schedule the steps.
        The window paints before its children, so its first paint is the first picture."""
        if not self._painted:
            self._painted = True
            for callback in self._on_paint:
                callback()
            self._schedule()

    def _schedule(self) -> None:
        if self._painted and not self._held and not self._scheduled:
            self._scheduled = True  # once, however often it is released
            QTimer.singleShot(0, self._run)  # after this paint, not in it

    def _run(self) -> None:
        self.started = True
        for step in self.steps:
            step()
