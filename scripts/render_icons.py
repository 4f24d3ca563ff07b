#!/usr/bin/env python3
"""Render resources/icons/*.svg to PNGs at the sizes the GUI draws them (1x to 4x), and the app
icon to the platform icon files the installers use: app.ico (Windows: the exe, the setup) and
app.icns (macOS: the .app).

The wizard loads the PNGs (Qt's built-in PNG reader) so that start-up need not load the
SVG plugin; a QIcon holding every size stays crisp at any device pixel ratio.

    .venv/bin/python scripts/render_icons.py              # everything, after editing an icon
    .venv/bin/python scripts/render_icons.py --if-stale   # app.ico/app.icns only if app.svg changed
    .venv/bin/python scripts/render_icons.py --platform-only --out DIR   # app.ico/app.icns into DIR

app.ico and app.icns are written here with struct (no image library: Qt renders, the containers
are a few headers). Beside them, app-icons.json records the SHA-256 of the app.svg they were made
from; build.spec re-runs this script when it no longer matches, and tests/test_installers.py fails.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import struct
import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"
SIZES = {"app": (16, 24, 32, 48, 64, 96, 128, 256)}
DEFAULT = (16, 20, 24, 32, 40, 48, 64, 96)

# Windows: the sizes Explorer, the taskbar and the setup ask for at 100-200 % scaling. Below 256
# as 32-bit BMP (BGRA + AND mask: every Windows tool reads those), 256 as PNG (Vista and later;
# a 256 px BMP would be 256 KiB on its own).
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
ICO_PNG_FROM = 256
# macOS: every PNG-based icon type (10.7 and later read PNG in all of them): 1x and @2x from
# 16 to 512 points (ic10 is 512@2x = 1024 px).
ICNS_TYPES = (
    ("icp4", 16), ("icp5", 32), ("icp6", 64), ("ic07", 128), ("ic08", 256), ("ic09", 512),
    ("ic10", 1024), ("ic11", 32), ("ic12", 64), ("ic13", 256), ("ic14", 512),
)
RECORD = "app-icons.json"


def svg_sha256(svg: Path) -> str:
    """The SVG's SHA-256 with CRLF read as LF: a Windows checkout (Git's autocrlf) is the same SVG."""
    return hashlib.sha256(svg.read_bytes().replace(b"\r\n", b"\n")).hexdigest()


def is_stale(icons: Path = ICONS, svg: Path = ICONS / "app.svg") -> bool:
    """True when app.ico / app.icns in `icons` are missing or were made from another app.svg, or
    by a version of this script that wrote other sizes (no Qt needed)."""
    try:
        record = json.loads((icons / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    return (record.get("source_sha256") != svg_sha256(svg)
            or record.get("ico_sizes") != list(ICO_SIZES)
            or record.get("icns_types") != [kind for kind, _px in ICNS_TYPES]
            or not (icons / "app.ico").is_file() or not (icons / "app.icns").is_file())


# ------------------------------------------------------------------ the containers (pure struct)

def ico_bytes(images: dict[int, tuple[bytes, bytes]]) -> bytes:
    """An .ico from {size: (bgra_top_down, png)}: BMP entries below ICO_PNG_FROM, PNG from there."""
    entries, blobs = [], []
    offset = 6 + 16 * len(images)
    for size in sorted(images):
        bgra, png = images[size]
        blob = png if size >= ICO_PNG_FROM else _ico_bmp(size, bgra)
        dim = 0 if size >= 256 else size  # 0 means 256 in an ICONDIRENTRY
        entries.append(struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(blob), offset))
        blobs.append(blob)
        offset += len(blob)
    return struct.pack("<HHH", 0, 1, len(images)) + b"".join(entries) + b"".join(blobs)


def _ico_bmp(size: int, bgra: bytes) -> bytes:
    """A 32-bit DIB as an icon stores it: the height doubled (XOR image + AND mask), rows bottom-up,
    the AND mask set where the pixel is fully transparent (for the tools that ignore alpha)."""
    row = size * 4
    rows = [bgra[y * row:(y + 1) * row] for y in range(size)]
    mask_row = ((size + 31) // 32) * 4
    mask = bytearray()
    for y in reversed(range(size)):
        bits = bytearray(mask_row)
        for x in range(size):
            if rows[y][x * 4 + 3] == 0:
                bits[x // 8] |= 0x80 >> (x % 8)
        mask += bits
    pixels = b"".join(reversed(rows))
    header = struct.pack("<IiiHHIIiiII", 40, size, size * 2, 1, 32, 0, len(pixels) + len(mask), 0, 0, 0, 0)
    return header + pixels + bytes(mask)


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """An .icns holding every ICNS_TYPES entry as PNG, from {pixel size: png}."""
    chunks = b"".join(kind.encode("ascii") + struct.pack(">I", 8 + len(pngs[px])) + pngs[px]
                      for kind, px in ICNS_TYPES)
    return b"icns" + struct.pack(">I", 8 + len(chunks)) + chunks


# ------------------------------------------------------------------ rendering (Qt)

_APP = None  # the QGuiApplication, kept alive while this script renders


def _qt():
    """(QtCore, QtGui, QtSvg), imported on first use: --if-stale on current icons never starts Qt."""
    global _APP
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6 import QtCore, QtGui, QtSvg

    if _APP is None:
        _APP = QtGui.QGuiApplication.instance() or QtGui.QGuiApplication(sys.argv[:1])
    return QtCore, QtGui, QtSvg


def _render(renderer, size: int):
    core, gui, _svg = _qt()
    img = gui.QImage(size, size, gui.QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(core.Qt.GlobalColor.transparent)
    p = gui.QPainter(img)
    p.setRenderHint(gui.QPainter.RenderHint.Antialiasing)
    renderer.render(p, core.QRectF(0, 0, size, size))
    p.end()
    return img


def _png(img) -> bytes:
    core, _gui, _svg = _qt()
    buf = core.QBuffer()
    buf.open(core.QIODevice.OpenModeFlag.WriteOnly)
    img.save(buf, "PNG")
    return bytes(buf.data())


def _bgra(img) -> bytes:
    """Straight (not premultiplied) alpha, B G R A in memory on every little-endian machine."""
    _core, gui, _svg = _qt()
    straight = img.convertToFormat(gui.QImage.Format.Format_ARGB32)
    data = bytes(straight.constBits())[: straight.sizeInBytes()]
    if sys.byteorder != "little":  # QImage stores 0xAARRGGBB words
        data = b"".join(data[i:i + 4][::-1] for i in range(0, len(data), 4))
    return data


def write_platform_icons(svg: Path, out: Path) -> None:
    _core, _gui, svg_mod = _qt()
    renderer = svg_mod.QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"render_icons: {svg} is not an SVG Qt can render")
    sizes = sorted(set(ICO_SIZES) | {px for _kind, px in ICNS_TYPES})
    images = {size: _render(renderer, size) for size in sizes}
    pngs = {size: _png(img) for size, img in images.items()}
    out.mkdir(parents=True, exist_ok=True)
    (out / "app.ico").write_bytes(ico_bytes({s: (_bgra(images[s]), pngs[s]) for s in ICO_SIZES}))
    (out / "app.icns").write_bytes(icns_bytes(pngs))
    record = {
        "source": svg.name,
        "source_sha256": svg_sha256(svg),
        "made_by": "scripts/render_icons.py",
        "ico_sizes": list(ICO_SIZES),
        "icns_types": [kind for kind, _px in ICNS_TYPES],
    }
    (out / RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def write_pngs() -> int:
    _core, _gui, svg_mod = _qt()
    out = ICONS / "png"
    out.mkdir(exist_ok=True)
    for svg in sorted(ICONS.glob("*.svg")):
        renderer = svg_mod.QSvgRenderer(str(svg))
        for size in SIZES.get(svg.stem, DEFAULT):
            _render(renderer, size).save(str(out / f"{svg.stem}-{size}.png"))
    return len(list(out.glob("*.png")))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--platform-only", action="store_true", help="only app.ico, app.icns and their record")
    ap.add_argument("--if-stale", action="store_true",
                    help="only the platform icons, and only when app.svg no longer matches their record")
    ap.add_argument("--out", type=Path, default=ICONS, help="where app.ico / app.icns go (default resources/icons)")
    args = ap.parse_args(argv)
    if args.if_stale:
        if not is_stale(args.out):
            print(f"render_icons: {args.out / 'app.ico'} and app.icns are current")
            return 0
        args.platform_only = True
    if not args.platform_only:
        print(f"rendered {write_pngs()} PNGs into {ICONS / 'png'}")
    write_platform_icons(ICONS / "app.svg", args.out)
    print(f"wrote {args.out / 'app.ico'} ({len(ICO_SIZES)} sizes) and {args.out / 'app.icns'} "
          f"({len(ICNS_TYPES)} types) from app.svg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
