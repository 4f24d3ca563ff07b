"""What every GUI test shares: the wizard's language is English before and after each test
(a test that switches to Simplified Chinese switches back)."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from app.gui import i18n


@pytest.fixture(autouse=True)
def english():
    i18n.set_language("en")
    yield
    i18n.set_language("en")
