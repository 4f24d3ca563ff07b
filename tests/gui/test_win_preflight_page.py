"""The Environment page shows the Windows pre-flight's verdicts like its other checks (a row with
the reason and what to do) and their actions as buttons: the short folder offered is one click,
the Visual C++ runtime's installer runs after the user confirmed (app.core.install.winchecks;
tests/test_win_preflight.py has the checks themselves)."""
from __future__ import annotations

import ntpath
import os
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from app.core.base.actions import Action, ActionKind
from app.core.base.text import render
from app.core.install import Check
from app.core.install.winchecks import PathNeed, VcRuntime, path_verdict, vc_runtime_verdict
from app.gui.state import WizardState
from app.gui.widgets import StatusRow
from tests.helpers import fake_program

pytestmark = pytest.mark.gui


def _page(qtbot):
    from app.gui.pages.environment import EnvironmentPage

    page = EnvironmentPage(WizardState())
    qtbot.addWidget(page)
    page._debounce.stop()
    return page


def _show(page, *checks: Check) -> None:
    page._debounce.stop()
    page._on_checked(page._generation, (None, list(checks)))


def _buttons(page, name: str) -> list[QPushButton]:
    box = page.findChild(QWidget, f"actions:{name}")
    assert box is not None, f"no buttons for the {name} check"
    return box.findChildren(QPushButton)


def test_the_path_verdict_is_a_row_with_its_reason_and_the_short_folder_is_one_click(qtbot, tmp_path):
    file = "Lib\\site-packages\\" + "d" * 170
    deep = "C:\\Users\\Tom Smith\\AppData\\Local\\Temp\\a rather deep folder of mine\\envs\\torch env"
    check = path_verdict(deep, PathNeed(file, ntpath.dirname(file), "deep.whl"), False, {})
    assert check.blocking
    if os.name != "nt":  # the folder offered in this OS's own form, so the page can take it apart
        offered = tmp_path / "t" / "torch env"
        check = Check(check.name, False, check.message, check.hint, actions=(
            Action(ActionKind.CHOOSE_OTHER_LOCATION, value=str(offered), path=deep), *check.actions[1:]))
    page = _page(qtbot)
    _show(page, check)
    rows = [r for r in page.findChildren(StatusRow) if "too deep for Windows" in r.title_label.text()]
    assert rows and rows[0].status == "error" and "LongPathsEnabled" in rows[0].detail_label.text()
    use, how = _buttons(page, "path")
    assert how.text() == "How to allow long paths (Microsoft)"
    target = Path(check.actions[0].value)
    assert use.text() == f"Use {target}"
    use.click()
    assert page.env_path() == target
    assert Path(page.location.text()) == target.parent and page.name.text() == "torch env"


def test_the_runtime_installer_runs_after_the_user_confirms_then_the_checks_run_again(qtbot, tmp_path, monkeypatch):
    record = tmp_path / "args.txt"
    exe = fake_program(tmp_path / "bin", "vc_redist.x64",
                       f"import sys\nopen({str(record)!r}, 'w').write(' '.join(sys.argv[1:]))\n")
    page = _page(qtbot)
    _show(page, vc_runtime_verdict(VcRuntime(None), (14, 42), "2.13.0"))
    rows = [r for r in page.findChildren(StatusRow) if "Visual C++" in r.title_label.text()]
    assert rows and rows[0].status == "error"
    assert [b.text() for b in _buttons(page, "vcruntime")] == ["Download the Visual C++ runtime (Microsoft)",
                                                               "Install the Visual C++ runtime…"]
    asked: list[str] = []

    def answer(_parent, _title, text, *_args):  # the user's answer to the confirmation
        asked.append(text)
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", answer)
    page.run_vcredist(str(exe))
    qtbot.waitUntil(lambda: page.vcredist_result is not None, timeout=30000)
    assert "/install /quiet /norestart" in asked[0] and str(exe) in asked[0].replace('"', "")
    assert record.read_text() == "/install /quiet /norestart"
    assert page.vcredist_result.ok and render(page.vcredist_result.message) == "The Visual C++ runtime is installed."
    assert page._debounce.isActive() or page.is_busy()  # the checks run again


def test_declining_runs_nothing(qtbot, tmp_path, monkeypatch):
    record = tmp_path / "args.txt"
    exe = fake_program(tmp_path / "bin", "vc_redist.x64", f"open({str(record)!r}, 'w').write('ran')\n")
    page = _page(qtbot)
    monkeypatch.setattr(QMessageBox, "question", lambda *_a: QMessageBox.StandardButton.No)
    page.run_vcredist(str(exe))
    assert not page.is_busy() and not record.exists()
