"""Errors shared across the core.

``RunError`` — a run that cannot start (nothing was sent anywhere); its message says what to
fix. ``UntrustedProjectError`` (in :mod:`core.safety.untrusted`) is one, so callers that show
"cannot run" can catch ``RunError`` alone, and callers that offer a trust dialog catch the
subclass.
"""

from __future__ import annotations


class RunError(ValueError):
    """The run cannot start; nothing was sent anywhere. The message says what to fix."""
