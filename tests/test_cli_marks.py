"""The status marks of `verify` and `doctor`: symbols on a UTF-8 console, ASCII where the console
cannot write them (a cp1252 Windows console raises on "✗")."""
from __future__ import annotations

import io

import pytest

from app.commands._render import mark


@pytest.mark.parametrize("status, utf8, ascii_mark", [
    ("passed", "✓", "OK"), ("failed", "✗", "XX"), ("skipped", "–", "--"),
    ("error", "✗", "XX"), ("warning", "!", "!"), ("info", "i", "i"), ("unheard-of", "?", "?"),
])
def test_marks_fit_the_console(status, utf8, ascii_mark):
    utf = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    cp1252 = io.TextIOWrapper(io.BytesIO(), encoding="cp1252")
    assert mark(status, utf) == utf8
    assert mark(status, cp1252) == ascii_mark
    cp1252.write(mark(status, cp1252))  # never raises on that console
    cp1252.flush()
