#!/usr/bin/env python3
"""Render resources/icons/*.svg to PNGs at the sizes the GUI draws them (1x to 4x).

The wizard loads the PNGs (Qt's built-in PNG reader) so that start-up need not load the
SVG plugin; a QIcon holding every size stays crisp at any device pixel ratio.

    .venv/bin/python scripts/render_icons.py
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"
SIZES = {"app": (16, 24, 32, 48, 64, 96, 128, 256)}
DEFAULT = (16, 20, 24, 32, 40, 48, 64, 96)


def main() -> int:
    app = QGuiApplication(sys.argv[:1])  # noqa: F841
    out = ICONS / "png"
    out.mkdir(exist_ok=True)
    for svg in sorted(ICONS.glob("*.svg")):
        renderer = QSvgRenderer(str(svg))
        for size in SIZES.get(svg.stem, DEFAULT):
            img = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
            img.fill(Qt.GlobalColor.transparent)
            p = QPainter(img)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            renderer.render(p, QRectF(0, 0, size, size))
            p.end()
            img.save(str(out / f"{svg.stem}-{size}.png"))
    print(f"rendered {len(list(out.glob('*.png')))} PNGs into {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
