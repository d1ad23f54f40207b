"""Test modules that need an optional extra (``baton[otel]``, …).

The README's test command installs no extra, so such a module skips itself there; ``.ci/run``
installs every extra and sets ``BATON_REQUIRE_EXTRAS=1`` for the pass that needs them, where a
missing one must fail the run instead of letting it pass by skipping.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def extra_missing(extra: str, error: ImportError) -> NoReturn:
    """Skip the calling test module for want of ``extra`` — or, under
    ``BATON_REQUIRE_EXTRAS=1``, raise the import's own error."""
    if os.environ.get("BATON_REQUIRE_EXTRAS") == "1":
        raise error
    pytest.skip(
        f"the {extra} extra is not installed (pip install 'baton[{extra}]')",
        allow_module_level=True,
    )
