"""``--self-test`` judges a wizard page "blank" by what it drew, over the whole image.

It sampled a 24 x 24 grid before: with Windows' windowsvista style a sparse page (one
"Change..." button on plain white) fell between the grid's points, and the self-test of the
Windows app failed on a page that did draw, a different one from run to run. These tests render
such pages with the Qt of the platform they run on (offscreen on Linux; under the Windows lane,
Windows Qt), and run the real ``python -m app --self-test``: under the lane with its Xvfb display
and the ``windows`` platform plugin.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.gui


def _page(qtbot, width: int = 900, height: int = 640):
    """A wizard-sized page on plain white, as the windowsvista style paints it."""
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QWidget

    page = QWidget()
    qtbot.addWidget(page)
    palette = page.palette()
    palette.setColor(QPalette.ColorRole.Window, QColor("white"))
    page.setPalette(palette)
    page.setAutoFillBackground(True)
    page.resize(width, height)
    return page


def test_a_page_with_one_small_button_on_white_is_not_blank(qtbot):
    from PySide6.QtWidgets import QPushButton

    from app.selftest import _not_blank

    page = _page(qtbot)
    button = QPushButton("Change…", page)
    # between two rows of a 24-row grid (every 26 px on a 640 px page): where sampling looked past it
    button.setGeometry(410, 28, 76, 22)
    img = page.grab().toImage()
    assert img.width() == 900 and img.height() == 640
    assert _not_blank(img), "a page showing a button was judged blank"


@pytest.mark.parametrize("where", [(3, 3), (880, 610), (450, 300)], ids=["top-left", "bottom-right", "middle"])
def test_a_few_words_anywhere_on_the_page_are_not_blank(qtbot, where):
    from PySide6.QtWidgets import QLabel

    from app.selftest import _not_blank

    page = _page(qtbot)
    label = QLabel("ok", page)
    label.move(*where)
    label.adjustSize()
    assert _not_blank(page.grab().toImage())


def test_an_empty_page_is_blank(qtbot):
    from app.selftest import _not_blank

    page = _page(qtbot)
    assert not _not_blank(page.grab().toImage())


def test_an_empty_page_in_any_one_colour_is_blank(qtbot):
    from PySide6.QtGui import QColor, QImage

    from app.selftest import _not_blank

    for colour in ("white", "black", "#f0f0f0", "#2b2b2b"):
        img = QImage(900, 640, QImage.Format.Format_RGB32)
        img.fill(QColor(colour))
        assert not _not_blank(img), colour
    img = QImage(900, 640, QImage.Format.Format_RGB32)
    img.fill(QColor("white"))
    for x in range(3):  # a few stray pixels (a focus dot) are not a drawn page
        img.setPixelColor(100 + 40 * x, 17, QColor("black"))
    assert not _not_blank(img)


@pytest.mark.timeout(600)
def test_the_self_test_passes():
    """The real ``--self-test`` in a fresh process: every step ok, every wizard page drew something."""
    env = {k: v for k, v in os.environ.items() if k != "TORCH_SETUP_HOME"}
    env["PYTHONPATH"] = str(REPO)
    if os.name == "nt":
        env.pop("QT_QPA_PLATFORM", None)  # Windows Qt's own platform, on the lane's Xvfb display
    else:
        env["QT_QPA_PLATFORM"] = "offscreen"
    res = subprocess.run([sys.executable, "-X", "utf8", "-m", "app", "--self-test"], cwd=REPO, env=env,
                         capture_output=True, text=True, encoding="utf-8", errors="replace",
                         stdin=subprocess.DEVNULL, timeout=540)
    assert res.returncode == 0 and "self-test OK" in res.stdout, res.stdout[-3000:] + res.stderr[-2000:]
    assert "rendered blank" not in res.stdout
    assert "ok   wizard pages" in res.stdout
