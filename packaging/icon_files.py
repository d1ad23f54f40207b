"""Writers for Windows ``.ico`` and macOS ``.icns`` files from PNG images.

Both formats are plain containers that may hold PNG data directly (Windows Vista+, macOS
10.7+), so no imaging library is needed: the PNGs come from Qt rendering the SVG source.
"""

from __future__ import annotations

import struct

#: icns element types holding PNG data, by pixel size.
ICNS_TYPES = {
    16: b"icp4",
    32: b"icp5",
    64: b"icp6",
    128: b"ic07",
    256: b"ic08",
    512: b"ic09",
    1024: b"ic10",
}


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """An ICO file with one PNG entry per size (sizes ≤ 256)."""
    sizes = sorted(s for s in pngs if s <= 256)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, images = b"", b""
    for size in sizes:
        data = pngs[size]
        dimension = 0 if size == 256 else size  # 0 means 256 in an ICO directory entry
        entries += struct.pack("<BBBBHHII", dimension, dimension, 0, 0, 1, 32, len(data), offset)
        images += data
        offset += len(data)
    return header + entries + images


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """An ICNS file with one PNG element per size macOS knows."""
    body = b""
    for size in sorted(pngs):
        if size in ICNS_TYPES:
            body += ICNS_TYPES[size] + struct.pack(">I", 8 + len(pngs[size])) + pngs[size]
    return b"icns" + struct.pack(">I", 8 + len(body)) + body
