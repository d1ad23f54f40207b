"""Screenshots of the Settings dialog: its sections listed beside the page, the provider that the
environment defines, and a search narrowing the list::

    Xvfb :95 -screen 0 1400x900x24 &
    DISPLAY=:95 .venv/bin/python docs/make_settings_screenshots.py [OUTPUT_FOLDER]

Writes ``settings.png``, ``settings-environment.png`` and ``settings-search.png``, from a
throwaway home (``docs/screenshot_support.py``) with one provider configured and
``OPENAI_BASE_URL`` set, as a person who exported it before starting Baton has it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from docs.screenshot_support import scratch_home, settle  # noqa: E402

SCRATCH = scratch_home("baton-settings-demo")
SIZE = (820, 560)


def main() -> int:
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots"
    output.mkdir(parents=True, exist_ok=True)
    os.environ["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"
    os.environ["OPENAI_API_KEY"] = "sk-demo"

    from PySide6.QtCore import QSettings

    from gui.app import create_application
    from gui.settings.settings_dialog import SettingsDialog

    create_application([])
    window_settings = QSettings(str(SCRATCH / "gui.ini"), QSettings.Format.IniFormat)
    dialog = SettingsDialog(window_settings=window_settings)
    dialog.resize(*SIZE)
    dialog.show()
    settle(400)

    def save(name: str) -> None:
        path = output / name
        dialog.grab().save(str(path))
        print(path)

    save("settings.png")
    providers = dialog.providers.list
    providers.setCurrentRow(providers.count() - 1)  # the environment's, listed last
    settle(200)
    save("settings-environment.png")
    dialog.search.setText("timeout")
    settle(300)
    save("settings-search.png")
    dialog.reject()
    return 0


if __name__ == "__main__":
    sys.exit(main())
