"""Issue 28: what a beginner met walking the wizard, each walked again through the real wizard with
clicks and key presses (pytest-qt), each failing on the code before its fix.

* the keyboard: a page's first focus is a control with a name (it was the page's unnamed scroll area),
  and every Alt shortcut of the Environment page is one key for one control (Alt+B was Back and the
  bundle field, Alt+I Install and the index URL, Alt+N Next and Name);
* the Name field: left empty it is a failed check that says so (it silently became "torch-env"); on a
  second run the default name is a free one, and a name that is taken offers a free one as a button.

The network is loopback only (tests/gui/test_blockers.py's ``no_internet``: every server the wizard
could ask is a refused 127.0.0.1 port).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QPushButton, QScrollArea, QWidget, QWizard

from app.gui import i18n
from app.gui.pages import PageId
from app.gui.state import WizardState
from tests.gui.test_blockers import _checks_ended, _click, _next, no_internet  # noqa: F401 (a fixture)

pytestmark = pytest.mark.gui

Button = QWizard.WizardButton


def _wizard(qtbot, state: WizardState | None = None, lang: str = "en"):
    from app.gui.wizard import SetupWizard

    wiz = SetupWizard(state=state or WizardState(skip_bench=True), lang=lang)
    qtbot.addWidget(wiz)
    wiz.resize(980, 720)
    wiz.show()
    qtbot.waitExposed(wiz)
    return wiz


def _shot(qtbot, widget, stem: str, langs: tuple[str, ...] = ("en", "zh_CN")) -> None:
    """When TORCH_SETUP_SHOTS names a folder (docs/screenshots when refreshing the docs): ``widget`` as a PNG
    in each language (switched live), back to English after. Otherwise nothing."""
    out = os.environ.get("TORCH_SETUP_SHOTS")
    if not out:
        return
    Path(out).mkdir(parents=True, exist_ok=True)
    for lang in langs:
        i18n.set_language(lang)
        qtbot.wait(250)
        assert widget.grab().save(str(Path(out) / f"28-{stem}-{lang}.png"))
    i18n.set_language("en")
    qtbot.wait(250)


def _to_recommendation(qtbot, wiz):
    """Through System to the Recommendation page, once it has its recommendation."""
    for pid in (PageId.SYSTEM, PageId.RECOMMENDATION):
        _next(qtbot, wiz, pid)
        qtbot.waitUntil(wiz.currentPage().isComplete, timeout=60000)
    return wiz.currentPage()


def _to_environment(qtbot, wiz):
    _to_recommendation(qtbot, wiz)
    _next(qtbot, wiz, PageId.ENVIRONMENT)
    return wiz.currentPage()


# ------------------------------------------------------------------ the keyboard
def _said(w: QWidget) -> str:
    """What a screen reader says for ``w``: its accessible name, else its own text."""
    return w.accessibleName() or (w.text() if isinstance(w, (QAbstractButton, QLabel)) else "")


def test_every_page_gives_the_focus_to_a_control_with_a_name(qtbot, tmp_path, no_internet):  # noqa: F811
    """Polish: the first focus on every page was its scroll area, which has no name (a screen reader
    said nothing, and Space did nothing). Each page the walk reaches, busy or not, gives it to a
    control that says what it is, once the page has settled."""
    wiz = _wizard(qtbot)
    seen = []
    for pid in (PageId.SYSTEM, PageId.RECOMMENDATION, PageId.ENVIRONMENT):
        _next(qtbot, wiz, pid)  # System: detection still runs (Next went grey under the click)
        qtbot.wait(200)
        for phase in ("at once", "settled"):
            if phase == "settled":
                page = wiz.currentPage()
                qtbot.waitUntil(lambda p=page: not p.is_busy(), timeout=120000)
                qtbot.wait(200)
            focused = QApplication.focusWidget()
            seen.append((pid.name, phase, type(focused).__name__, _said(focused) if focused else None))
            if focused is None:
                assert phase == "at once", seen  # (while detection runs nothing can be pressed yet)
                continue
            assert not isinstance(focused, QScrollArea) and not isinstance(focused.parentWidget(), QScrollArea), seen
            assert _said(focused).strip(), seen


_MNEMONIC = re.compile(r"&(?!&)(\w)|\(&(\w)\)")


def _shortcut_keys(wiz, page) -> dict[str, list[str]]:
    """Alt+letter -> the controls it is on: the page's buttons and the labels that lead to a field
    (hidden ones too: Advanced expands, conda shows where conda is), and the wizard's buttons."""
    keys: dict[str, list[str]] = {}
    widgets = [w for w in page.findChildren(QWidget) if w.objectName() != "retired"]
    widgets += [wiz.button(b) for b in (Button.BackButton, Button.NextButton)]
    for w in widgets:
        if isinstance(w, QLabel) and w.buddy() is None:
            continue  # a label without a field: its & is no shortcut
        if not isinstance(w, (QAbstractButton, QLabel)):
            continue
        m = _MNEMONIC.search(w.text().replace("&&", ""))
        if m:
            keys.setdefault((m.group(1) or m.group(2)).lower(), []).append(w.text())
    return keys


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_every_alt_shortcut_of_the_environment_page_is_one_key(qtbot, tmp_path, no_internet, lang):  # noqa: F811
    """Polish: Alt+B was both "< Back" and the offline bundle field, Alt+I both Install and the index
    URL, Alt+N both Next and Name. Each letter now leads to one control, in both languages; and
    pressing one (Alt+M, the Name) puts the cursor in its field."""
    wiz = _wizard(qtbot, lang=lang)
    page = _to_environment(qtbot, wiz)
    page.advanced.set_expanded(True)
    qtbot.wait(50)
    keys = _shortcut_keys(wiz, page)
    assert wiz.button(Button.NextButton).isVisible() and "i" in keys and "b" in keys
    clashes = {k: v for k, v in keys.items() if len(v) > 1}
    assert not clashes, clashes
    names = {"en": "Na&me:", "zh_CN": "名称(&M)："}[lang]
    assert page.l_name.text() == names
    page.location.setFocus()
    qtbot.keyClick(page.location, Qt.Key.Key_M, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(page.name.hasFocus, timeout=2000)


# ------------------------------------------------------------------ the Name field
def _venv(path: Path) -> None:
    from uv import find_uv_bin

    subprocess.run([find_uv_bin(), "venv", "--quiet", "--python", sys.executable, str(path)], check=True,
                   timeout=120, capture_output=True)


def test_an_empty_name_is_refused_and_a_taken_name_offers_a_free_one(qtbot, tmp_path, monkeypatch, no_internet,  # noqa: F811
                                                                     torch_wheelhouse):
    """Polish: a Name left empty silently became "torch-env"; on a second run the default name was the
    first run's environment, refused with no way out but typing another. Now the page arrives with a
    free name (torch-env-2); emptied, the Name is a failed check that says so; "torch-env" typed again
    is refused as an environment that is already there, with a button that uses the free name."""
    monkeypatch.setenv("HOME", str(tmp_path))  # the default Location: <home>/torch-envs
    monkeypatch.setenv("USERPROFILE", str(tmp_path))
    first = tmp_path / "torch-envs" / "torch-env"
    _venv(first)  # the first run's environment
    before = sorted(p.name for p in first.rglob("*"))
    wiz = _wizard(qtbot)
    page = _to_environment(qtbot, wiz)
    assert page.location.text() == str(tmp_path / "torch-envs")
    assert page.name.text() == "torch-env-2", page.name.text()
    qtbot.keyClicks(page.find_links, str(torch_wheelhouse.folder))
    _checks_ended(qtbot, page)
    assert page.isComplete(), page.checks
    assert str(tmp_path / "torch-envs" / "torch-env-2") in page.target_label.text()

    # emptied: a failed check, Install grey
    page.name.setFocus()
    qtbot.keyClick(page.name, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(page.name, Qt.Key.Key_Backspace)
    assert page.name.text() == ""
    _checks_ended(qtbot, page)
    assert not page.isComplete() and not wiz.button(Button.NextButton).isEnabled()
    errors = " ".join(m for _n, s, m, _h in page.checks if s == "error")
    assert "Give the environment a name" in errors, page.checks

    # the first run's name: refused as an environment already there, with the free name offered
    qtbot.keyClicks(page.name, "torch-env")
    _checks_ended(qtbot, page)
    assert not page.isComplete()
    errors = " ".join(m for _n, s, m, _h in page.checks if s == "error")
    assert "already is a Python environment" in errors, page.checks
    offer = next(b for b in page.findChildren(QPushButton) if b.isVisible() and b.text().startswith("Use ")
                 and b.text().endswith("torch-env-2"))
    qtbot.mouseClick(offer, Qt.MouseButton.LeftButton)
    assert page.name.text() == "torch-env-2"
    _checks_ended(qtbot, page)
    assert page.isComplete(), page.checks
    assert sorted(p.name for p in first.rglob("*")) == before  # the first run's environment untouched
    _shot(qtbot, wiz, "environment-free-name")
    i18n.set_language("en")


# ------------------------------------------------------------------ the Done page
def _in_modal(qtbot, act) -> None:
    """``act(dialog)`` once the modal dialog about to open runs its own loop."""
    from PySide6.QtCore import QTimer

    def step() -> None:
        dlg = QApplication.activeModalWidget()
        if dlg is None:
            QTimer.singleShot(20, step)
            return
        try:
            act(dlg)
        except BaseException:
            dlg.reject()  # never left open: the assertion fails the test instead of a timeout
            raise

    QTimer.singleShot(0, step)


@pytest.fixture
def at_done(qtbot, tmp_path, monkeypatch):
    """The real wizard, started at its Done page over an install that happened (a session resumed
    from real result values: an environment folder with its python, a verification, a speed test)."""
    from app.core.pipeline.session import Session
    from app.gui.wizard import SetupWizard
    from tests.factories import make_bench_report, make_install_result, make_verify_report
    from tests.helpers import venv_python

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))
    env = tmp_path / "envs" / "torch-env"
    py = venv_python(env)
    py.parent.mkdir(parents=True)
    py.write_text("", encoding="utf-8")
    state = WizardState(session=Session.resume(install=make_install_result(env, py), verify=make_verify_report(),
                                               bench=make_bench_report()))
    wiz = SetupWizard(state=state, lang="en", auto_detect=False)
    wiz.setStartId(int(PageId.DONE))
    qtbot.addWidget(wiz)
    wiz.resize(980, 720)
    wiz.show()
    qtbot.waitExposed(wiz)
    assert wiz.currentId() == int(PageId.DONE)
    qtbot.waitUntil(lambda: bool(state.saved_reports), timeout=20000)
    return wiz, state, wiz.currentPage(), env


def test_open_folder_and_open_report_show_the_path_where_nothing_opens_it(qtbot, at_done):
    """Confusing: "Open folder" and "Open report" did nothing on a computer without a program that
    opens them (the desktop's answer was ignored). Now the path shows, with a Copy button that copies
    it; as "Open a terminal here" shows its command. (Qt's offscreen platform opens nothing.)"""
    _wiz, state, page, env = at_done
    note = page.path_note
    assert not note.isVisible()
    qtbot.mouseClick(page.open_folder, Qt.MouseButton.LeftButton)
    assert note.isVisible() and str(env) in note.label.text(), note.label.text()
    page.scroll_area.ensureWidgetVisible(note)
    _shot(qtbot, _wiz, "done-open-folder")
    qtbot.mouseClick(note.copy, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == str(env)
    qtbot.mouseClick(page.open_report, Qt.MouseButton.LeftButton)
    html = next(p for p in state.saved_reports if p.suffix == ".html")
    assert str(html) in note.label.text() and "file" in note.label.text()
    qtbot.mouseClick(note.copy, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == str(html)


def _reading_order(w: QWidget, page) -> tuple[int, int]:
    at = w.mapTo(page, w.rect().topLeft())
    return (at.y() // 8, at.x())  # a row: the same line within a few pixels


def test_the_done_page_tabs_down_as_it_reads_and_names_each_copy_button(qtbot, at_done):
    """Polish: Tab went from the buttons at the bottom back up to the activation lines (made after the
    rest, so last in Qt's chain), and every Copy button was "Copy the command" to a screen reader."""
    _wiz, _state, page, _env = at_done
    first = page.shell_rows[0][1].edit
    first.setFocus()
    qtbot.waitUntil(first.hasFocus, timeout=2000)
    order = []
    for _ in range(40):
        w = QApplication.focusWidget()
        if w is not None and page.isAncestorOf(w) and w not in order:
            order.append(w)
        qtbot.keyClick(w, Qt.Key.Key_Tab)
    names = [f"{type(w).__name__}:{_said(w)}" for w in order]
    assert page.open_report in order and page.shell_rows[-1][1].copy in order, names
    positions = [_reading_order(w, page) for w in order]
    assert positions == sorted(positions), names
    copies = [b for b in page.findChildren(QAbstractButton) if b.isVisible() and b.text() == "Copy"]
    said = [b.accessibleName() for b in copies]
    assert len(copies) >= 6 and len(set(said)) == len(said), said


def test_save_report_as_asks_for_a_file_and_writes_it(qtbot, tmp_path, at_done):
    """Polish: "Save report as…" opened a folder chooser. It asks for a file name (a save dialog), and
    the report is written there in the format the name says."""
    from PySide6.QtWidgets import QDialogButtonBox, QFileDialog, QLineEdit

    _wiz, state, page, _env = at_done
    target = tmp_path / "my report.md"  # (the dialog opens in the home folder)

    def save(dlg) -> None:
        assert isinstance(dlg, QFileDialog), type(dlg)
        assert dlg.acceptMode() == QFileDialog.AcceptMode.AcceptSave, "not a save dialog"
        assert dlg.fileMode() != QFileDialog.FileMode.Directory, "a folder chooser"
        name = dlg.findChild(QLineEdit, "fileNameEdit")
        name.selectAll()
        qtbot.keyClicks(name, target.name)
        qtbot.wait(100)
        ok = dlg.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save)
        qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)

    _in_modal(qtbot, save)
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(target.exists, timeout=5000)
    text = target.read_text(encoding="utf-8")
    assert text.startswith("#") and "2.13.0+cpu" in text  # Markdown, as the name says
    assert target in state.saved_reports


# ------------------------------------------------------------------ the words of the checks
def _depth(text: str) -> int:
    """How deep parentheses nest in ``text`` ("a (b (c))" is 2)."""
    deepest = level = 0
    for ch in text:
        if ch in "(（":
            level += 1
            deepest = max(deepest, level)
        elif ch in ")）":
            level = max(0, level - 1)
    return deepest


def test_the_checks_speak_plainly_and_say_why_once(qtbot, tmp_path, no_internet, torch_wheelhouse):  # noqa: F811
    """Polish: the checks said "uv venv with uv", "find-links … is reachable", "(torch: local wheel x 4)",
    nested parentheses of errors and raw Markdown backticks; the page said why this version twice
    ("Why this version: …" and "Why torch 2.13.0: …"), and Change… summed up the build as
    "CPU only, CPU-only build (cpu)". Read off the real page with a wheel folder typed in."""
    wiz = _wizard(qtbot)
    page = _to_environment(qtbot, wiz)
    page.location.clear()
    qtbot.keyClicks(page.location, str(tmp_path / "envs"))
    qtbot.keyClicks(page.find_links, str(torch_wheelhouse.folder))
    _checks_ended(qtbot, page)
    assert page.isComplete(), page.checks
    shown = [t for _n, _s, m, h in page.checks for t in (m, h) if t]
    shown += [page.sources_note.text(), page.plan_label.text(), page.result_banner.text()]
    for text in shown:
        assert not any(w in text for w in ("uv venv with uv", "find-links", "local wheel x", "`")), text
        assert _depth(text) <= 1, text
    rows = {n: m for n, _s, m, _h in page.checks}
    assert rows["backend"] == "uv makes the environment and installs the packages"
    page.scroll_area.ensureWidgetVisible(page.checks_title, 0, 0)
    _shot(qtbot, wiz, "environment-checks")
    assert rows["reach:find-links"] == f"The wheel folder {torch_wheelhouse.folder} is there"
    whys = [line for text in (page.sources_note.text(), page.plan_label.text()) for line in text.splitlines()
            if line.startswith("Why")]
    assert len(whys) == 1, whys
    # Back, Change…: what the choices give, in one word for the build
    _click(qtbot, wiz, Button.BackButton)
    rec_page = wiz.currentPage()
    qtbot.waitUntil(rec_page.isComplete, timeout=60000)
    seen = []

    def read(dlg) -> None:
        seen.append(dlg.gives.text())
        dlg.reject()

    _in_modal(qtbot, read)
    qtbot.mouseClick(rec_page.change, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(seen), timeout=10000)
    assert "CPU only, CPU-only" not in seen[0] and seen[0].count("CPU") == 1, seen


# ------------------------------------------------------------------ Remove: the command line's rule
def _answer_modal(qtbot, which, within_ms: int = 4000) -> dict:
    """Press ``which`` (a QMessageBox button) on the next modal message box that opens within
    ``within_ms``, as a beginner answers it. Returns ``{"seen": texts of the boxes answered, "stop":
    False}``; set "stop" to stop waiting for one."""
    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtWidgets import QMessageBox

    state: dict = {"seen": [], "stop": False}
    clock = QElapsedTimer()
    clock.start()

    def step() -> None:
        if state["stop"]:
            return
        dlg = QApplication.activeModalWidget()
        if isinstance(dlg, QMessageBox):
            state["seen"].append(dlg.text())
            dlg.button(which).click()
            return
        if clock.elapsed() < within_ms:
            QTimer.singleShot(20, step)

    QTimer.singleShot(0, step)
    return state


def _tick(qtbot, box) -> None:
    """Click a check box or radio button on its indicator (its middle may be past its text)."""
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))
    assert box.isChecked(), box.text()


def test_remove_refuses_an_environment_the_assistant_did_not_make_unless_asked_on_purpose(qtbot, tmp_path,
                                                                                          monkeypatch):
    """Confusing: Remove deleted an environment the assistant did not make after one Yes, where
    `torch-setup envs remove` refuses it without --force. The same rule in the wizard: Remove (and
    Yes, if asked) leaves it and says why; only with the box ticked on purpose (the wizard's --force)
    and Yes is it deleted."""
    from PySide6.QtWidgets import QMessageBox

    wiz, page, theirs = _at_environments(qtbot, tmp_path, monkeypatch, "theirs")  # selected with a click
    answered = _answer_modal(qtbot, QMessageBox.StandardButton.Yes)
    qtbot.mouseClick(page.remove_btn, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not page.is_busy() and page.message.isVisible(), timeout=20000)
    qtbot.wait(300)
    answered["stop"] = True
    assert theirs.is_dir(), f"deleted after {answered['seen']}"
    assert "is not in this assistant's list of the environments it made, so it is not removed" in page.message.text(), \
        page.message.text()
    assert "--force" not in page.message.text()
    box = page.force_remove
    assert box.isVisible() and not box.isChecked()
    _shot(qtbot, wiz, "remove-not-made-here")
    # on purpose: the box, Remove, Yes
    _tick(qtbot, box)
    answered = _answer_modal(qtbot, QMessageBox.StandardButton.Yes)
    qtbot.mouseClick(page.remove_btn, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not theirs.exists(), timeout=20000)
    assert answered["seen"] and "not in this assistant's list of the environments it made" in answered["seen"][0]
    qtbot.waitUntil(lambda: not page.is_busy(), timeout=20000)


# ------------------------------------------------------------------ Upgrade from an index out of reach
def _at_environments(qtbot, tmp_path, monkeypatch, env_name: str):
    """The real wizard on its second path, the environment ``~/.venvs/<env_name>`` (torch 2.13.0+cpu,
    not made by the assistant) selected in the list with a click."""
    from app.gui.wizard import SetupWizard
    from tests.gui.test_envs_pages import _fake

    monkeypatch.setenv("HOME", str(tmp_path))  # discovery looks in ~/.venvs
    monkeypatch.setenv("USERPROFILE", str(tmp_path))
    env = _fake(tmp_path / ".venvs" / env_name)
    wiz = SetupWizard(lang="en", auto_detect=False)
    qtbot.addWidget(wiz)
    wiz.resize(980, 720)
    wiz.show()
    qtbot.waitExposed(wiz)
    _tick(qtbot, wiz.welcome.existing_env)
    _next(qtbot, wiz, PageId.ENVS)
    page = wiz.currentPage()
    qtbot.waitUntil(lambda: not page.is_busy() and page.tree.topLevelItemCount() > 0, timeout=60000)
    paths = [page.tree.topLevelItem(i).data(0, Qt.ItemDataRole.UserRole) for i in range(page.tree.topLevelItemCount())]
    rect = page.tree.visualItemRect(page.tree.topLevelItem(paths.index(str(env))))
    qtbot.mouseClick(page.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert page.selected_path() == str(env)
    return wiz, page, env


def test_an_upgrade_from_an_index_out_of_reach_is_refused_at_its_plan_with_the_way_out(qtbot, tmp_path, monkeypatch,
                                                                                       no_internet):  # noqa: F811
    """Confusing: Upgrade planned from a PyTorch index it could not reach, then "Start" ended in uv's
    raw cause chain, with "What to do: Your environment was not changed." The plan now asks the
    index first: out of reach, it is refused at once, in words, with the way out in the page's own
    fields (Local wheels folder, Plan again), no Start button, nothing created beside the env."""
    wiz, envs, env = _at_environments(qtbot, tmp_path, monkeypatch, "old-torch")
    before = sorted(p.name for p in env.parent.iterdir())
    qtbot.mouseClick(envs.upgrade_btn, Qt.MouseButton.LeftButton)
    assert wiz.currentId() == int(PageId.ENV_TASK)
    task = wiz.currentPage()
    qtbot.waitUntil(lambda: task.status() in ("ready", "failed"), timeout=120000)
    text = task.result.text() if task.result.isVisible() else ""
    assert task.status() == "failed" and not task.start_btn.isVisible(), (task.status(), task.plan_view.text())
    assert "cannot be reached" in text and "127.0.0.1" in text, text
    assert "Local wheels folder" in text and "Plan again" in text, text
    assert "--find-links" not in text and "What to do: Your environment was not changed" not in text, text
    assert task.advanced.isVisible()  # where the wheel folder goes
    _shot(qtbot, wiz, "upgrade-index-unreachable")
    assert sorted(p.name for p in env.parent.iterdir()) == before


@pytest.mark.posix_only("the fake environment's layout and the staging env's rename are POSIX here")
def test_a_failed_upgrade_says_what_happened_in_words_not_as_an_action(qtbot, tmp_path, monkeypatch, no_internet,  # noqa: F811
                                                                       index_server):
    """The other half: an index that answers at the plan but has no such torch (a loopback index with
    torch 2.13.0 only), typed into the page's own field, Plan again, Start. The failure is said in the
    catalogue's words (uv's raw cause chain stays in the log), and "Your environment was not changed"
    is said as what it is, not offered as "What to do"."""
    wiz, envs, env = _at_environments(qtbot, tmp_path, monkeypatch, "old-torch")
    server = index_server()
    qtbot.mouseClick(envs.upgrade_btn, Qt.MouseButton.LeftButton)
    task = wiz.currentPage()
    qtbot.waitUntil(lambda: task.status() in ("ready", "failed"), timeout=120000)
    task.advanced.set_expanded(True)
    qtbot.keyClicks(task.index_edit, server.whl_url("cpu"))
    qtbot.mouseClick(task.replan, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: task.status() == "ready", timeout=120000)
    qtbot.mouseClick(task.start_btn, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: task.status() in ("succeeded", "failed"), timeout=300000)
    text = task.result.text()
    assert task.status() == "failed", text
    assert "What to do: Your environment was not changed" not in text, text
    assert "Your environment was not changed." in text.splitlines(), text
    assert "no torch==2.15.0" in text.replace("has no ", "no ") or "The package sources" in text, text
    assert not any(line.lstrip().startswith(("╰─▶", "×", "Caused by")) for line in text.splitlines()), text
    assert task.rows["install"].status == "error", task.rows["install"].status  # not left "waiting"
    assert env.is_dir() and not any(p.name.endswith("torch-setup-staging") for p in env.parent.iterdir())
    _shot(qtbot, wiz, "upgrade-failed")


# ------------------------------------------------------------------ "Choose another Python…" after a failure
def _ready_from_folder(qtbot, page, tmp_path, folder) -> None:
    """The Environment page set to install from ``folder`` into a fresh location, its checks passed."""
    page.location.clear()
    qtbot.keyClicks(page.location, str(tmp_path / "envs"))
    qtbot.keyClicks(page.find_links, str(folder))
    _checks_ended(qtbot, page)
    assert page.isComplete(), page.checks


def _fail_install_and_choose_another_python(qtbot, wiz, folder):
    """The folder's wheels moved away after the checks passed: Install fails for real (uv finds no torch);
    returns the Install page, its failure's "Choose another Python…" button not clicked yet."""
    for wheel in folder.glob("*.whl"):
        wheel.unlink()
    _click(qtbot, wiz, Button.NextButton)  # "Install"
    install = wiz.currentPage()
    assert wiz.currentId() == int(PageId.INSTALL)
    qtbot.waitUntil(lambda: install.status() in ("succeeded", "failed", "cancelled"), timeout=300000)
    assert install.status() == "failed"
    choose = next((b for b in install.error_panel.action_buttons if b.text() == "Choose another Python…"), None)
    assert choose is not None, [b.text() for b in install.error_panel.action_buttons]
    return install, choose


def test_choose_another_python_after_a_failure_lands_on_the_open_list_in_view(qtbot, tmp_path, no_internet,  # noqa: F811
                                                                            torch_wheelhouse):
    """Confusing: "Choose another Python…" on a failed install went back to the Environment page with the
    Python list scrolled out of view (the page was where the user had left it, further down). The
    install fails for real: the wheel folder's files were moved away after the checks passed (uv finds
    no torch in it). The button lands on the Python list, in view, open, with the focus. On the way,
    the failure's "Open log" shows the log's path with a Copy button (Qt's offscreen platform opens
    nothing: it did nothing)."""
    import shutil

    folder = tmp_path / "wheels"
    shutil.copytree(torch_wheelhouse.folder, folder, copy_function=os.link)  # (links: no copy of torch)
    wiz = _wizard(qtbot)
    page = _to_environment(qtbot, wiz)
    _ready_from_folder(qtbot, page, tmp_path, folder)
    bar = page.scroll_area.verticalScrollBar()
    bar.setValue(bar.maximum())  # down to the command and the Install button, as the user read it
    assert bar.value() > 0
    at = page.python.mapTo(page.scroll_area.viewport(), page.python.rect().topLeft())
    assert at.y() < 0, "the Python list is in view already: the walk shows nothing"
    install, choose = _fail_install_and_choose_another_python(qtbot, wiz, folder)
    panel = install.error_panel  # "Open log" where nothing opens it: the log's path, to copy (it did nothing)
    qtbot.mouseClick(panel.open_log, Qt.MouseButton.LeftButton)
    assert panel.path_note.isVisible() and str(panel.log_path) in panel.path_note.label.text()
    qtbot.mouseClick(panel.path_note.copy, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == str(panel.log_path)
    qtbot.mouseClick(choose, Qt.MouseButton.LeftButton)
    assert wiz.currentId() == int(PageId.ENVIRONMENT)
    _checks_ended(qtbot, page)
    qtbot.wait(300)
    view = page.scroll_area.viewport()
    at = page.python.mapTo(view, page.python.rect().topLeft())
    assert at.y() >= 0 and at.y() + page.python.height() <= view.height(), (at.y(), view.height())
    assert page.python.hasFocus() or page.python.view().isVisible()
    assert page.python.view().isVisible(), "the list is not open"
    usable = [page.python.itemText(i) for i in range(page.python.count()) if page.python.model().item(i).isEnabled()]
    assert len(usable) > 1, usable
    page.python.hidePopup()
    _shot(qtbot, wiz, "choose-another-python")


def test_choose_another_python_sets_aside_the_python_chosen_under_change(qtbot, tmp_path, no_internet,  # noqa: F811
                                                                       torch_wheelhouse):
    """Confusing: with a Python chosen under Change…, the build was bound to that Python, so after its
    install failed, "Choose another Python…" opened a list with every other interpreter greyed ("you
    chose Python 3.11 for torch …"): the one way out was back through Change…. The button sets that
    choice aside now: the list offers every Python the build supports, and the note says why."""
    import shutil

    from tests.gui.test_blockers import _in_modal as in_modal
    from tests.gui.test_blockers import _pick_python

    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    folder = tmp_path / "wheels"
    shutil.copytree(torch_wheelhouse.folder, folder, copy_function=os.link)
    wiz = _wizard(qtbot)
    rec_page = _to_recommendation(qtbot, wiz)
    report = wiz.state.session.system
    others = sorted({".".join((i.version or "").split(".")[:2]) for i in report.interpreters
                     if i.can_venv and i.version} - {here})
    in_modal(qtbot, _pick_python(qtbot, here))  # the Python the assistant runs on, chosen by the user
    with qtbot.waitSignal(rec_page.recommended, timeout=60000):
        qtbot.mouseClick(rec_page.change, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(rec_page.isComplete, timeout=60000)
    assert wiz.state.session.choices.python == here
    page = _to_environment_from_rec(qtbot, wiz)
    _ready_from_folder(qtbot, page, tmp_path, folder)
    model = page.python.model()
    greyed = {page.python.itemText(i) for i in range(page.python.count()) if not model.item(i).isEnabled()}
    if not any(f"Python {v}." in t for t in greyed for v in others):
        pytest.skip(f"no interpreter here besides Python {here} for the choice to grey ({others})")
    assert f"you chose Python {here}" in page.python_note.text()  # the state the issue describes
    _install, choose = _fail_install_and_choose_another_python(qtbot, wiz, folder)
    qtbot.mouseClick(choose, Qt.MouseButton.LeftButton)
    assert wiz.currentId() == int(PageId.ENVIRONMENT)
    _checks_ended(qtbot, page)
    qtbot.waitUntil(lambda: wiz.state.session.recommendation is not None, timeout=60000)
    _checks_ended(qtbot, page)
    qtbot.wait(300)
    assert page.python.view().isVisible(), "the list is not open"
    model = page.python.model()
    offered = [page.python.itemText(i) for i in range(page.python.count()) if model.item(i).isEnabled()]
    fit = [v for v in others if wiz.state.session.recommendation.python_problem(v) is None]
    assert fit, (others, wiz.state.session.recommendation.pythons)  # torch supports more than one Python
    for v in fit:  # offered again: greyed only for the choice, which is set aside
        assert any(f"Python {v}." in t for t in offered), (v, offered)
    assert wiz.state.session.choices is None or not wiz.state.session.choices.python
    note = page.python_note.text()
    assert page.python_note.isVisible() and f"Your choice of Python {here}" in note, note
    assert "you chose Python" not in note, note
    page.python.hidePopup()
    _shot(qtbot, wiz, "choose-another-python-after-change")


# ------------------------------------------------------------------ the Python the user chose
def test_a_python_the_user_chose_is_called_their_choice_not_a_limit_of_pytorch(qtbot, tmp_path,
                                                                             no_internet):  # noqa: F811
    """Confusing: with another Python chosen under Change…, the Recommendation page warned "This
    PyTorch version does not support the Python you are running", which it does: the reason was the
    user's own choice. It says so now."""
    from tests.gui.test_blockers import _in_modal as in_modal
    from tests.gui.test_blockers import _pick_python

    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    wiz = _wizard(qtbot)
    page = _to_recommendation(qtbot, wiz)
    dlg = page.change_dialog()  # (which Pythons it offers depends on this machine's interpreters)
    offered = [e.value for e in dlg.opts.pythons if e.value and e.valid and e.value != here]
    dlg.deleteLater()
    if not offered:
        pytest.skip(f"the Change… dialog offers no Python but {here} here")
    other = next((v for v in ("3.12", "3.13", "3.10") if v in offered), offered[0])
    in_modal(qtbot, _pick_python(qtbot, other))
    with qtbot.waitSignal(page.recommended, timeout=60000):
        qtbot.mouseClick(page.change, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(page.isComplete, timeout=60000)
    qtbot.wait(100)  # (the new banners show at the next turn of the event loop)
    banners = [w.text() for w in page.findChildren(QWidget) if w.isVisible() and type(w).__name__ == "Banner"]
    assert not any("does not support the Python you are running" in b for b in banners), banners
    assert any(f"You chose Python {other}" in b and f"runs on Python {here}" in b for b in banners), banners
    _shot(qtbot, wiz, "recommendation-your-python")


# ------------------------------------------------------------------ Change…: companions the folder lacks
def test_companions_the_folder_lacks_never_lock_their_boxes(qtbot, tmp_path, no_internet, torch_wheelhouse):  # noqa: F811
    """Confusing: torchvision and torchaudio ticked under Change…, then a wheel folder without them (no
    index can be reached): back in Change…, both boxes were greyed while ticked, each with the other's
    reason, and only "Use the recommendation" got out. A ticked box can always be unticked, its note
    never speaks of the other package, and unticking both gives a build again."""
    wiz = _wizard(qtbot)
    _next(qtbot, wiz, PageId.SYSTEM)
    qtbot.waitUntil(wiz.currentPage().isComplete, timeout=60000)
    _next(qtbot, wiz, PageId.RECOMMENDATION)
    rec_page = wiz.currentPage()
    qtbot.waitUntil(rec_page.isComplete, timeout=60000)

    def tick_both(dlg) -> None:
        for name in ("torchvision", "torchaudio"):
            _tick(qtbot, dlg.pkg_boxes[name])
        ok = dlg.buttons.button(dlg.buttons.StandardButton.Ok)
        assert ok.isEnabled(), dlg.conflict.text()
        qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)

    _in_modal(qtbot, tick_both)
    with qtbot.waitSignal(rec_page.recommended, timeout=60000):
        qtbot.mouseClick(rec_page.change, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(rec_page.isComplete, timeout=60000)
    env_page = _to_environment_from_rec(qtbot, wiz)
    env_page.location.clear()
    qtbot.keyClicks(env_page.location, str(tmp_path / "envs"))
    qtbot.keyClicks(env_page.find_links, str(torch_wheelhouse.folder))  # torch and its needs, no companions
    _checks_ended(qtbot, env_page)
    assert not env_page.isComplete()
    _click(qtbot, wiz, Button.BackButton)
    qtbot.waitUntil(lambda: not rec_page.is_busy(), timeout=60000)
    seen: dict = {}

    def untick(dlg) -> None:
        boxes, notes = dlg.pkg_boxes, dlg.pkg_notes
        seen["before"] = {n: (boxes[n].isChecked(), boxes[n].isEnabled(), notes[n].text())
                          for n in ("torchvision", "torchaudio")}
        for name, other in (("torchvision", "torchaudio"), ("torchaudio", "torchvision")):
            checked, enabled, note = seen["before"][name]
            assert checked and enabled, seen  # ticked, and can be unticked
            assert other not in note, seen  # never the other one's reason
        _shot(qtbot, dlg, "change-companions-ticked")
        for name in ("torchvision", "torchaudio"):
            qtbot.mouseClick(boxes[name], Qt.MouseButton.LeftButton, pos=boxes[name].rect().topLeft() + QPoint(8, 8))
            assert not boxes[name].isChecked(), name
        seen["works"] = dlg.works()
        _shot(qtbot, dlg, "change-companions-unticked")
        dlg.reject()

    _in_modal(qtbot, untick)
    qtbot.mouseClick(rec_page.change, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "works" in seen, timeout=20000)
    assert seen["works"], seen
    i18n.set_language("en")


def _to_environment_from_rec(qtbot, wiz):
    _next(qtbot, wiz, PageId.ENVIRONMENT)
    return wiz.currentPage()


# ------------------------------------------------------------------ Qt's own file dialog, in Chinese
def test_the_file_dialog_browse_opens_speaks_chinese(qtbot, tmp_path, no_internet):  # noqa: F811
    """Polish: on a Chinese screen, "Browse…" opened Qt's own file dialog with "Look in:" and "Files of
    type:" in English (Qt's Chinese catalogue lacks them since they gained a shortcut letter). Every
    visible word of the dialog is Chinese now, but names."""
    from PySide6.QtWidgets import QFileDialog, QLineEdit

    from tests.gui.test_zh_screens import english_words

    wiz = _wizard(qtbot, lang="zh_CN")
    page = _to_environment(qtbot, wiz)
    seen: dict = {}

    def scan(dlg) -> None:
        assert isinstance(dlg, QFileDialog), type(dlg)
        texts = []
        for w in dlg.findChildren(QWidget):
            if not w.isVisible():
                continue
            own = w.text() if isinstance(w, (QLabel, QAbstractButton)) else ""
            hint = w.placeholderText() if isinstance(w, QLineEdit) else ""
            texts += [t for t in (own, hint, w.toolTip(), w.accessibleName()) if t]
        seen["words"] = {t: english_words(t) for t in texts if english_words(t)}
        _shot(qtbot, dlg, "file-dialog", ("zh_CN",))
        i18n.set_language("zh_CN")
        dlg.reject()

    _in_modal(qtbot, scan)
    qtbot.mouseClick(page.browse_links, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "words" in seen, timeout=10000)
    assert not seen["words"], seen["words"]
    i18n.set_language("en")


# ------------------------------------------------------------------ Next pressed while the window starts
def test_a_next_pressed_while_the_window_starts_says_so_at_once(qtbot):
    """Polish: the wizard makes its other pages after its first paint (seconds on a slow machine); a
    Next pressed meanwhile was handled seconds later with nothing to show it had been pressed. Now
    the Welcome page says "Getting the next steps ready…" (and the cursor is busy) while they are
    made, then the wizard goes on."""
    from PySide6.QtCore import QEvent, QObject

    from app.gui.wizard import SetupWizard

    said: list[str] = []

    class Spy(QObject):
        def eventFilter(self, obj, event) -> bool:
            if event.type() == QEvent.Type.Show and isinstance(obj, QLabel) and "ready" in obj.text():
                said.append(obj.text())
                said.append("busy cursor" if QApplication.overrideCursor() is not None else "no busy cursor")
            return False

    spy = Spy()
    QApplication.instance().installEventFilter(spy)
    try:
        wiz = SetupWizard(state=WizardState(skip_bench=True), lang="en", lazy=True, auto_detect=False)
        qtbot.addWidget(wiz)
        wiz.show()
        assert not wiz.pages_built()  # the window is up; its other pages come after its first paint
        _click(qtbot, wiz, Button.NextButton)  # at once, as an eager user does
    finally:
        QApplication.instance().removeEventFilter(spy)
    assert said == ["Getting the next steps ready…", "busy cursor"], said
    assert wiz.currentId() == int(PageId.SYSTEM)
    assert QApplication.overrideCursor() is None
    qtbot.waitUntil(lambda: not wiz.busy_pages(), timeout=20000)


# ------------------------------------------------------------------ Change… on a small screen at 200 %
SMALL = "TSA_WALK_SMALL_SCREEN"


@pytest.mark.skipif(SMALL not in os.environ, reason="run in a child process with a small screen by "
                    "test_the_change_dialog_fits_1024x768_at_200_percent")
def test_child_change_dialog_on_a_small_screen(qtbot):
    from app.gui.wizard import SetupWizard

    wiz = SetupWizard(state=WizardState(skip_bench=True), lang="en")
    qtbot.addWidget(wiz)
    wiz.show()
    qtbot.waitExposed(wiz)
    _next(qtbot, wiz, PageId.SYSTEM)
    qtbot.waitUntil(wiz.currentPage().isComplete, timeout=60000)
    _next(qtbot, wiz, PageId.RECOMMENDATION)
    page = wiz.currentPage()
    qtbot.waitUntil(page.isComplete, timeout=60000)
    seen: dict = {}

    def measure(dlg) -> None:
        seen["dialog"] = dlg.frameGeometry()
        seen["screen"] = dlg.screen().availableGeometry()
        seen["ok"] = dlg.buttons.geometry()
        dlg.reject()

    _in_modal(qtbot, measure)
    qtbot.mouseClick(page.change, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "dialog" in seen, timeout=20000)
    line = f"screen {seen['screen'].getRect()} dialog {seen['dialog'].getRect()}"
    print(line)
    assert seen["dialog"].width() <= seen["screen"].width(), line
    print("FITS")


def test_the_change_dialog_fits_1024x768_at_200_percent(tmp_path, unreachable):
    """The Change… dialog's 600 px minimum width was wider than a 1024x768 screen at 200 % (512 px): its
    OK button off the screen. A child process with Qt's offscreen screen of that size opens it."""
    import json

    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "small", "x": 0, "y": 0, "width": 1024, "height": 768,
                                               "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}), encoding="utf-8")
    env = {**os.environ, SMALL: "1", "QT_QPA_PLATFORM": f"offscreen:configfile={config.name}", "QT_SCALE_FACTOR": "2",
           "TORCH_SETUP_TORCH_INDEX": unreachable.refused_url.replace("/simple/", "/whl/"),
           "UV_DEFAULT_INDEX": unreachable.refused_url}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                           f"{Path(__file__)}::test_child_change_dialog_on_a_small_screen"], env=env,
                          capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=600,
                          cwd=config.parent)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "FITS" in out and "1 passed" in out, out[-4000:]


# ------------------------------------------------------------------ the speed test's words
@pytest.mark.slow
def test_the_speed_test_names_no_source_file_and_counts_in_words(qtbot, torch_env, tmp_path):
    """Polish: the speed test's "How the peak is estimated" said "Source: estimate from cores, clock and
    SIMD width (app/core/measure/peak.py)": a source file of this program, shown to a user, and in English on a
    Chinese screen; and its counts read "median of 1 runs", "4 more round(s)". A real, short speed test
    in the real wizard (started at its Speed test page, over a real environment with torch)."""
    from app.core.pipeline.session import Session
    from app.gui.wizard import SetupWizard
    from tests.factories import make_install_result

    env, py = torch_env
    state = WizardState(session=Session.resume(install=make_install_result(env, py)), bench_sizes=[64, 128],
                        bench_dtypes=["fp32"], bench_budget_s=8)
    wiz = SetupWizard(state=state, lang="en", auto_detect=False)
    wiz.setStartId(int(PageId.SPEEDTEST))
    qtbot.addWidget(wiz)
    wiz.resize(980, 720)
    wiz.show()
    qtbot.waitExposed(wiz)
    page = wiz.currentPage()
    qtbot.waitUntil(lambda: page.status() not in ("idle", "running"), timeout=300000)
    assert page.status() == "done", page.error_panel.message.text()
    assert page.peak_box.isVisible()
    qtbot.mouseClick(page.peak_box.button, Qt.MouseButton.LeftButton)  # "How the peak is estimated"
    assert page.peak_text.isVisible()
    for lang in ("en", "zh_CN"):
        i18n.set_language(lang)
        qtbot.wait(100)
        shown = [w.text() for w in page.findChildren(QLabel) if w.isVisible() and w.text()]
        assert not any(re.search(r"\w+\.py\b|app/core|app/gui", t) for t in shown), shown
        assert not any(x in t for t in shown for x in ("round(s)", "of 1 runs", "run(s)")), shown
    from tests.gui.test_zh_screens import english_words

    words = {t: english_words(t) for t in shown if english_words(t)}
    assert not any("estimate" in w or "SIMD" in w for t in words for w in words[t]), words
    i18n.set_language("en")

