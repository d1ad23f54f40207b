"""Render the application icon (``resources/icons/baton.svg``) to PNG sizes, ``.ico`` and
``.icns``.

``python packaging/make_icons.py OUT_DIR`` writes ``baton-<size>.png`` for every size plus
``baton.ico`` and ``baton.icns`` into OUT_DIR. The build runs it, so the raster icons always
match the SVG; the Linux installer takes its PNGs from the same folder.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from icon_files import icns_bytes, ico_bytes

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "resources" / "icons" / "baton.svg"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512, 1024)


def render(renderer: QSvgRenderer, size: int) -> bytes:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


def main(out: Path) -> None:
    app = QGuiApplication.instance() or QGuiApplication([])  # noqa: F841 - Qt needs one
    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        raise SystemExit(f"cannot read {SOURCE}")
    out.mkdir(parents=True, exist_ok=True)
    pngs = {size: render(renderer, size) for size in SIZES}
    for size, data in pngs.items():
        (out / f"baton-{size}.png").write_bytes(data)
    (out / "baton.ico").write_bytes(ico_bytes(pngs))
    (out / "baton.icns").write_bytes(icns_bytes(pngs))
    print(f"icons: {len(pngs)} PNG sizes, baton.ico, baton.icns in {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "icons")
