"""Issue 27, must show 3, the GUI's part: the System page's Copy and Save and the Done page's saved reports
are written through the one masker and are the user's alone (mode 0600). A token in the index URL
(its user:password part and a query token), one in the proxy, the way the wizard gets them (the
environment, remembered at start-up as the CLI does); real detection, real pages, real files."""
from __future__ import annotations

import os
import stat

import pytest

pytest.importorskip("PySide6")

from app.core.base import secrets

pytestmark = [pytest.mark.gui]

TOKEN, QTOKEN, PROXY_PW = "Gui-T0ken-9f3", "Query-T0ken-77a", "Pr0xy-Gui-Pw"


@pytest.fixture
def secret_env(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PIP_INDEX_URL", f"https://me:{TOKEN}@127.0.0.1:9/simple/?access_token={QTOKEN}")
    monkeypatch.setenv("HTTPS_PROXY", f"http://proxyuser:{PROXY_PW}@127.0.0.1:3128")
    secrets.remember_environ(os.environ)
    yield
    secrets.forget_all()


def _clean(path) -> None:
    data = path.read_bytes()
    for s in (TOKEN, QTOKEN, PROXY_PW):
        assert s.encode() not in data, (path.name, s)
    if os.name != "nt":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, (path.name, oct(path.stat().st_mode))


def test_the_system_pages_copy_and_save_and_the_done_pages_reports_hold_no_secret(qtbot, tmp_path, secret_env):
    from app.core.detection.detect import detect
    from app.core.pipeline.session import Session
    from app.gui.pages.done import DonePage
    from app.gui.pages.system import SystemPage
    from app.gui.state import WizardState

    old = os.umask(0o022)
    try:
        state = WizardState(session=Session.resume(system=detect()))
        system = SystemPage(state)
        qtbot.addWidget(system)
        assert "127.0.0.1" in system.report_json()  # the index is in the report, its secrets are not
        for s in (TOKEN, QTOKEN, PROXY_PW):
            assert s not in system.report_json()
        saved = system.save_report(tmp_path / "system.json")
        _clean(saved)
        system.copy.click()  # Copy: what reaches the clipboard is the same masked report
        from PySide6.QtGui import QGuiApplication

        copied = QGuiApplication.clipboard().text()
        assert "127.0.0.1" in copied and not any(s in copied for s in (TOKEN, QTOKEN, PROXY_PW)), copied[:2000]
        done = DonePage(state)
        qtbot.addWidget(done)
        files = done.save_report(tmp_path / "reports")
        assert {p.suffix for p in files} == {".html", ".md", ".json"}
        for p in files:
            _clean(p)
    finally:
        os.umask(old)


def test_copy_and_save_mask_a_report_that_came_with_its_secrets(qtbot, tmp_path, secret_env):
    """A report the page did not detect itself (a session resumed from a saved one, an older
    version's report) can carry what detection masks at the source: Copy and Save go through the
    one masker all the same (they wrote the report's JSON as it was)."""
    import json
    from pathlib import Path

    from PySide6.QtGui import QGuiApplication

    from app.core.detection.system import SystemReport
    from app.core.pipeline.session import Session
    from app.gui.pages.system import SystemPage
    from app.gui.state import WizardState

    doc = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "reports" / "macos-rosetta-python.json")
                     .read_text(encoding="utf-8"))
    doc["env"] = {"PIP_INDEX_URL": f"https://me:{TOKEN}@127.0.0.1:9/simple/?access_token={QTOKEN}",
                  "HTTPS_PROXY": f"http://proxyuser:{PROXY_PW}@127.0.0.1:3128"}
    page = SystemPage(WizardState(session=Session.resume(system=SystemReport.from_dict(doc))))
    qtbot.addWidget(page)
    page.copy.click()
    copied = QGuiApplication.clipboard().text()
    assert "127.0.0.1:9/simple/" in copied and not any(s in copied for s in (TOKEN, QTOKEN, PROXY_PW)), copied
    _clean(page.save_report(tmp_path / "resumed.json"))
