"""A throwaway home for the screenshot scripts: Baton's config and data folders under it and
one Ollama provider configured, so a picture never shows (or changes) the real user's runs."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def scratch_home(name: str) -> Path:
    """Empty ``<tmp>/<name>``, point HOME and Baton's folders into it, and return it. Call
    before anything of Baton's is imported: the folders are read from the environment."""
    scratch = Path(tempfile.gettempdir()) / name
    shutil.rmtree(scratch, ignore_errors=True)
    for variable, sub in (("HOME", "home"), ("BATON_CONFIG_DIR", "home/.config/baton"),
                          ("BATON_DATA_DIR", "home/.local/share/baton")):  # fmt: skip
        os.environ[variable] = str(scratch / sub)
        (scratch / sub).mkdir(parents=True, exist_ok=True)
    (scratch / "home/.config/baton/config.yaml").write_text(
        "providers:\n  - name: ollama\n    base_url: http://127.0.0.1:11434/v1\n"
        "default_model: qwen2.5-coder:7b\n",
        encoding="utf-8",
    )
    return scratch
