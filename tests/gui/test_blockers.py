"""Issue 28's blockers, each walked through the real wizard with clicks and key presses.

0. A worker that outlives its page (the user goes Back, closes or the window is destroyed while
   detection still reports) never crashes the wizard: run in a child pytest, so a segfault fails
   the test here instead of killing the run.
1. No wheel folder and the PyTorch index out of reach: the Environment page reaches a verdict as
   soon as its checks end, and it points at the page's own "Install from files" fields, shown
   under it (not under the collapsed Advanced, no command-line option named).
2. A wheel folder with torch alone, an unsupported Python under Change…, Back, "Use the
   recommendation": never "Everything is ready" for a plan whose packages nothing can supply; a
   Python that uv must download from a host that does not answer is not ready either.
3. 200 % on a 1366x768 screen (and 1024x768 at any scale): Next stays on the screen on every page
   (a child process with Qt's offscreen screen of that size).

The network is loopback only: the PyTorch index (TORCH_SETUP_TORCH_INDEX), the package index
(UV_DEFAULT_INDEX), uv's Python downloads (UV_PYTHON_INSTALL_MIRROR) and the mirror catalogue's
PyTorch mirrors point at a refused 127.0.0.1 port, as a machine without internet sees them.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, QRect, Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QWizard

from app.core.base.events import LogEvent
from app.gui import i18n
from app.gui.pages import PageId
from app.gui.state import WizardState
from tests.helpers import torch_alone

pytestmark = pytest.mark.gui

Button = QWizard.WizardButton
CHILD = "TSA_BLOCKERS_CHILD"


def _click(qtbot, wiz, which) -> None:
    button = wiz.button(which)
    assert button.isVisible() and button.isEnabled(), f"{which} is not there to click"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def _worker_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("torch-setup-")]


# ------------------------------------------------------------------ 0. a worker outlives its page
FLOOD_EVENTS = 60_000  # a detection that reports this many lines as fast as it can, whatever cancel says


def _flooding_scan(started: threading.Event):
    def scan(on_event, cancel, _session):
        started.set()
        for i in range(FLOOD_EVENTS):  # a core call blocked where a cancel cannot reach it at once
            on_event(LogEvent(f"probe line {i}"))
        cancel.raise_if_cancelled()
        return None

    return scan


@pytest.mark.skipif(os.environ.get(CHILD) != "outlive", reason="run in a child process by "
                    "test_a_worker_that_outlives_its_page_never_crashes_the_wizard")
def test_child_worker_outlives_its_page(qtbot, monkeypatch):
    from app.gui.pages import system
    from app.gui.wizard import SetupWizard

    rounds = int(os.environ.get("TSA_BLOCKERS_ROUNDS", "20"))
    for r in range(rounds):
        started = threading.Event()
        monkeypatch.setattr(system, "scan", _flooding_scan(started))
        wiz = SetupWizard(state=WizardState(), lang="en")  # detection starts after its first paint
        wiz.show()
        qtbot.waitUntil(started.is_set, timeout=10000)
        _click(qtbot, wiz, Button.NextButton)  # to "Your system" while detection still reports
        qtbot.waitUntil(lambda w=wiz: w.currentPage() is w.system_page)
        _click(qtbot, wiz, Button.BackButton)  # and back, detection still going
        if r % 2:  # the window's Cancel: closes once the work it cancelled has ended
            _click(qtbot, wiz, Button.CancelButton)
        wiz.deleteLater()  # the window goes, its pages with it, while the worker may still report
        qtbot.wait(20)
        qtbot.waitUntil(lambda: not _worker_threads(), timeout=60000)
        qtbot.wait(20)  # whatever the workers queued is delivered (or dropped) now
    print(f"{rounds} rounds, no crash")


def test_a_worker_that_outlives_its_page_never_crashes_the_wizard():
    """Next, Back, Cancel and the window destroyed while detection floods the GUI thread with
    events, twenty times over: no segfault (the worker's thread emits only through an object that
    outlives it), nothing raised in a slot."""
    env = {**os.environ, CHILD: "outlive", "TSA_BLOCKERS_ROUNDS": "20", "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-W", "error",
                           f"{__file__}::test_child_worker_outlives_its_page"], env=env, capture_output=True,
                          text=True, encoding="utf-8", errors="replace", timeout=280)
    out = proc.stdout + proc.stderr
    assert "Fatal Python error" not in out and proc.returncode == 0, out[-4000:]
    assert "20 rounds, no crash" in out and "1 passed" in out, out[-4000:]


# ------------------------------------------------------------------ a world without internet
@pytest.fixture
def no_internet(monkeypatch, unreachable, tmp_path):
    """Every server the wizard could ask is a refused 127.0.0.1 port (nothing else is asked)."""
    from app.core.sources import mirrors

    refused = unreachable.refused_url  # http://127.0.0.1:PORT/simple/
    monkeypatch.setenv("TORCH_SETUP_TORCH_INDEX", refused.replace("/simple/", "/whl/"))
    monkeypatch.setenv("UV_DEFAULT_INDEX", refused)
    monkeypatch.setenv("UV_PYTHON_INSTALL_MIRROR", refused.replace("/simple/", "/python"))
    text = mirrors.mirrors_file().read_text(encoding="utf-8")
    port = unreachable.refused_port  # (the catalogue takes https URLs only; the port refuses them all the same)
    lines = [f'url = "https://127.0.0.1:{port}/mirror/{{variant}}/"' if line.startswith("url = ") and
             "{variant}" in line else line for line in text.splitlines()]
    catalogue = tmp_path / "mirrors.toml"
    catalogue.write_text("\n".join(lines) + "\n", encoding="utf-8")
    mirrors.default_catalogue.cache_clear()
    monkeypatch.setattr(mirrors, "mirrors_file", lambda: catalogue)
    yield unreachable
    mirrors.default_catalogue.cache_clear()


def _next(qtbot, wiz, expect: PageId) -> None:
    _click(qtbot, wiz, Button.CommitButton if wiz.currentPage().isCommitPage() else Button.NextButton)
    assert wiz.currentId() == int(expect), f"expected {expect.name}, on {PageId(wiz.currentId()).name}"


def _wizard_at_environment(qtbot, tmp_path):
    from app.gui.wizard import SetupWizard

    state = WizardState(skip_bench=True)
    wiz = SetupWizard(state=state, lang="en")
    qtbot.addWidget(wiz)
    wiz.resize(980, 720)
    wiz.show()
    qtbot.waitExposed(wiz)
    _next(qtbot, wiz, PageId.SYSTEM)
    qtbot.waitUntil(wiz.currentPage().isComplete, timeout=60000)
    _next(qtbot, wiz, PageId.RECOMMENDATION)
    qtbot.waitUntil(wiz.currentPage().isComplete, timeout=60000)
    _next(qtbot, wiz, PageId.ENVIRONMENT)
    page = wiz.currentPage()
    page.location.clear()
    qtbot.keyClicks(page.location, str(tmp_path / "envs"))
    return wiz, state, page


def _checks_ended(qtbot, page) -> None:
    """The pre-flight for the current inputs has ended, and the mirror check it may start too."""
    qtbot.waitUntil(lambda: not page._debounce.isActive() and not page._tasks
                    and page._result_generation == page._generation, timeout=120000)
    qtbot.waitUntil(lambda: not page.is_busy(), timeout=120000)
    qtbot.wait(50)  # what the last "finished" queued is drawn


# ------------------------------------------------------------------ 1. a verdict, with the way out
def test_no_folder_and_no_index_ends_in_a_verdict_that_shows_the_way_out(qtbot, tmp_path, no_internet,
                                                                         torch_wheelhouse):
    wiz, state, page = _wizard_at_environment(qtbot, tmp_path)
    _checks_ended(qtbot, page)
    assert not page.busy.isVisible(), "still \"Checking…\" after every check has ended"
    assert page.result_banner.isVisible()
    verdict = page.result_banner.text()
    assert "Install from files on this computer" in verdict and "wheel files" in verdict, verdict
    assert not wiz.button(Button.NextButton).isEnabled() and not page.isComplete()
    # the way out is right there, under the verdict, with Advanced still collapsed
    assert not page.advanced.is_expanded()
    for w in (page.files_box, page.find_links, page.browse_links, page.bundle, page.browse_bundle):
        assert w.isVisible(), w.accessibleName()
    assert page.files_box.y() > page.result_banner.y()
    shown = [verdict, *(f"{m} {h}" for _n, _s, m, h in page.checks)]
    assert not any(flag in text for text in shown for flag in ("--index-url", "--from-bundle", "--find-links")), shown
    assert any(s == "error" and "fields below" in h for n, s, _m, h in page.checks if n == "reach:torch index")
    # ... and it works: the folder typed into the field shown, the page is ready
    qtbot.keyClicks(page.find_links, str(torch_wheelhouse.folder))
    _checks_ended(qtbot, page)
    assert page.isComplete() and wiz.button(Button.NextButton).isEnabled(), page.checks
    assert "Everything is ready" in page.result_banner.text()
    plan = state.session.approved_plan
    assert plan is not None and plan.index.offline
    assert any(n == "closure" and s == "ok" for n, s, _m, _h in page.checks), page.checks


def test_the_verdict_speaks_chinese(qtbot, tmp_path, no_internet):
    _wiz, _state, page = _wizard_at_environment(qtbot, tmp_path)
    _checks_ended(qtbot, page)
    i18n.set_language("zh_CN")
    qtbot.waitUntil(lambda: "从本机文件安装" in page.result_banner.text(), timeout=5000)
    assert page.files_title.text() == "从本机文件安装" and page.files_box.isVisible()
    assert not page.busy.isVisible()


# ------------------------------------------------------------------ 2. no "ready" that fails
def _in_modal(qtbot, act) -> None:
    """Run ``act(dialog)`` once the modal dialog that is about to open runs its own loop."""
    def step() -> None:
        dlg = QApplication.activeModalWidget()
        if dlg is None:
            QTimer.singleShot(20, step)
            return
        act(dlg)

    QTimer.singleShot(0, step)


def _pick_python(qtbot, version: str):
    def act(dlg) -> None:
        i = dlg.python.findData(version)
        if not (i >= 0 and dlg.python.model().item(i).isEnabled()):
            dlg.reject()  # not left open: the walk fails here instead of waiting for the timeout
            raise AssertionError(f"Python {version} is not offered")
        dlg.python.setCurrentIndex(i)
        qtbot.mouseClick(dlg.buttons.button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton)

    return act


def test_a_folder_with_torch_alone_is_never_ready_without_an_index(qtbot, tmp_path, no_internet, local_wheels):
    """The issue's walk: the folder holds torch and nothing it needs (filelock, sympy, ...), no index
    answers; an unsupported Python under Change…, Back, "Use the recommendation", Next: the page must
    not call that plan ready (uv would stop at "no filelock that fits")."""
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    folder = torch_alone(local_wheels, tmp_path / "torch alone")  # (the Windows lane's folder holds its needs too)
    wiz, state, env_page = _wizard_at_environment(qtbot, tmp_path)
    qtbot.keyClicks(env_page.find_links, str(folder))
    _checks_ended(qtbot, env_page)
    assert not env_page.isComplete(), env_page.checks
    # Back, Change…: a Python the folder's torch does not support
    _click(qtbot, wiz, Button.BackButton)
    rec_page = wiz.currentPage()
    qtbot.waitUntil(rec_page.isComplete, timeout=60000)
    dlg = rec_page.change_dialog()  # which Pythons it offers depends on this machine's interpreters
    offered = [e.value for e in dlg.opts.pythons if e.value and e.valid and e.value != here]
    dlg.deleteLater()
    if not offered:
        pytest.skip(f"the Change… dialog offers no Python but {here} here")
    other = next((v for v in ("3.12", "3.13", "3.10") if v in offered), offered[0])
    _in_modal(qtbot, _pick_python(qtbot, other))
    with qtbot.waitSignal(rec_page.recommended, timeout=60000):
        qtbot.mouseClick(rec_page.change, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(rec_page.isComplete, timeout=60000)
    _next(qtbot, wiz, PageId.ENVIRONMENT)
    _checks_ended(qtbot, env_page)
    assert not env_page.isComplete()
    # Back: the Recommendation page offers its ways out; "Use the recommendation"
    _click(qtbot, wiz, Button.BackButton)
    qtbot.waitUntil(lambda: not rec_page.is_busy() and bool(rec_page.drop_buttons), timeout=60000)
    restore = next(b for b in rec_page.drop_buttons if b.text() == "Use the recommendation")
    qtbot.mouseClick(restore, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(rec_page.isComplete, timeout=60000)
    _next(qtbot, wiz, PageId.ENVIRONMENT)
    _checks_ended(qtbot, env_page)
    plan = state.session.approved_plan
    assert "Everything is ready" not in env_page.result_banner.text(), env_page.checks
    assert not env_page.isComplete() and not wiz.button(Button.NextButton).isEnabled() and plan is None
    errors = [(n, m) for n, s, m, _h in env_page.checks if s == "error"]
    assert errors, env_page.checks
    assert any("filelock" in m for _n, _s, m, _h in env_page.checks), env_page.checks  # what the folder lacks


def test_a_python_uv_must_download_from_a_host_that_does_not_answer_is_not_ready(qtbot, tmp_path, no_internet,
                                                                                torch_wheelhouse):
    """A Python this computer does not have, chosen under Change…: uv would download it, and its
    download host (UV_PYTHON_INSTALL_MIRROR) refuses: a blocking check, not "ready"."""
    wiz, state, env_page = _wizard_at_environment(qtbot, tmp_path)
    have = {".".join((i.version or "").split(".")[:2]) for i in state.session.system.interpreters}
    have.add(f"{sys.version_info[0]}.{sys.version_info[1]}")
    _click(qtbot, wiz, Button.BackButton)
    rec_page = wiz.currentPage()
    qtbot.waitUntil(rec_page.isComplete, timeout=60000)
    dlg = rec_page.change_dialog()
    offered = [e.value for e in dlg.opts.pythons if e.value and e.valid and e.value not in have]
    dlg.deleteLater()
    if not offered:
        pytest.skip("every Python the engine offers is on this machine")
    _in_modal(qtbot, _pick_python(qtbot, offered[0]))
    with qtbot.waitSignal(rec_page.recommended, timeout=60000):
        qtbot.mouseClick(rec_page.change, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(rec_page.isComplete, timeout=60000)
    _next(qtbot, wiz, PageId.ENVIRONMENT)
    assert env_page.python.currentData() == offered[0], env_page.python.currentText()  # "found or downloaded by uv"
    _checks_ended(qtbot, env_page)
    rows = {n: (s, m) for n, s, m, _h in env_page.checks}
    assert rows.get("reach:python download", ("", ""))[0] == "error", env_page.checks
    assert "uv cannot download one" in rows["reach:python download"][1]
    assert not env_page.isComplete() and state.session.approved_plan is None


# ------------------------------------------------------------------ 3. the buttons stay on the screen
SCREEN = "TSA_BLOCKERS_SCREEN"  # "WxH@scale" for the child


def _button_on_screen(wiz) -> QRect:
    which = Button.CommitButton if wiz.currentPage().isCommitPage() else Button.NextButton
    if wiz.currentId() in (int(PageId.DONE), int(PageId.ENV_TASK)):
        which = Button.FinishButton
    b = wiz.button(which)
    assert b.isVisible(), f"no {which} on {PageId(wiz.currentId()).name}"
    return QRect(b.mapToGlobal(QPoint(0, 0)), b.size())


def _assert_fits(wiz, lines: list[str]) -> None:
    wiz.activateWindow()
    avail = wiz.screen().availableGeometry()
    where = _button_on_screen(wiz)
    frame = wiz.frameGeometry()
    lines.append(f"{PageId(wiz.currentId()).name}: screen {avail.getRect()} window {frame.getRect()} "
                 f"button {where.getRect()}")
    assert avail.contains(where), lines[-1]
    assert avail.contains(frame), lines[-1]


@pytest.mark.skipif(SCREEN not in os.environ, reason="run in a child process with a small screen by "
                    "test_next_stays_on_a_small_screen_at_any_scale")
def test_child_next_on_a_small_screen(qtbot, tmp_path, torch_wheelhouse):
    from app.gui.wizard import SetupWizard

    full = os.environ.get("TSA_BLOCKERS_FULL") == "1"
    state = WizardState(bench_sizes=[64, 128], bench_dtypes=["fp32"], bench_budget_s=10)
    wiz = SetupWizard(state=state, lang=os.environ.get("TSA_BLOCKERS_LANG", "en"))
    qtbot.addWidget(wiz)
    wiz.show()
    qtbot.waitExposed(wiz)
    lines: list[str] = []
    _assert_fits(wiz, lines)
    for pid in (PageId.SYSTEM, PageId.RECOMMENDATION, PageId.ENVIRONMENT):
        _next(qtbot, wiz, pid)
        if pid == PageId.ENVIRONMENT:
            page = wiz.currentPage()
            page.location.clear()
            qtbot.keyClicks(page.location, str(tmp_path / "envs"))
            qtbot.keyClicks(page.find_links, str(torch_wheelhouse.folder))
        qtbot.waitUntil(wiz.currentPage().isComplete, timeout=120000)
        _assert_fits(wiz, lines)
    if full:  # a real install from the folder, the verification, a tiny speed test, Done
        for pid, wait_s in ((PageId.INSTALL, 600), (PageId.VERIFY, 300), (PageId.SPEEDTEST, 300), (PageId.DONE, 60)):
            _next(qtbot, wiz, pid)
            _assert_fits(wiz, lines)
            qtbot.waitUntil(lambda: wiz.currentPage().isComplete() and not wiz.currentPage().is_busy(),
                            timeout=wait_s * 1000)
            _assert_fits(wiz, lines)
    print("\n".join(lines))
    print("FITS", len(lines))


@pytest.mark.parametrize(("screen", "scale", "full"), [
    pytest.param("1366x768", "2", True, marks=pytest.mark.slow, id="1366x768@200%-every-page"),
    pytest.param("1366x768", "2", False, id="1366x768@200%"), pytest.param("1024x768", "2", False, id="1024x768@200%"),
    pytest.param("1024x768", "1.5", False, id="1024x768@150%"), pytest.param("1024x768", "1", False, id="1024x768@100%")])
def test_next_stays_on_a_small_screen_at_any_scale(tmp_path, screen, scale, full, local_wheels):
    """Qt's offscreen screen of that many physical pixels at QT_SCALE_FACTOR: the window fits the
    screen and Next (Install, Finish) lies inside its available geometry on every page."""
    w, h = screen.split("x")
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "small", "x": 0, "y": 0, "width": int(w), "height": int(h),
                                               "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}), encoding="utf-8")
    # relative to the child's folder: ':' separates the platform's options (C:\... would be cut there)
    env = {**os.environ, SCREEN: f"{screen}@{scale}", "QT_QPA_PLATFORM": f"offscreen:configfile={config.name}",
           "QT_SCALE_FACTOR": scale, "TSA_BLOCKERS_FULL": "1" if full else "0"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                           f"{Path(__file__)}::test_child_next_on_a_small_screen"], env=env, capture_output=True,
                          text=True, encoding="utf-8", errors="replace", timeout=1500, cwd=config.parent)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "FITS" in out and "1 passed" in out, out[-5000:]


# ------------------------------------------------------------------ Confusing: Return in a field
def test_return_in_a_field_never_starts_the_install(qtbot, tmp_path, torch_wheelhouse):
    """With the plan ready (Install enabled), Return pressed in the Environment page's fields (name,
    location, wheel folder) leaves the wizard on that page and starts nothing; the Install button
    itself still takes Return once it has the focus."""
    wiz, _state, page = _wizard_at_environment(qtbot, tmp_path)
    qtbot.keyClicks(page.find_links, str(torch_wheelhouse.folder))
    _checks_ended(qtbot, page)
    install = wiz.button(Button.CommitButton)
    assert page.isComplete() and install.isEnabled(), page.checks
    assert not install.isDefault() and not wiz.button(Button.NextButton).isDefault()
    for field in (page.name, page.location, page.find_links):
        field.setFocus()
        qtbot.keyClick(field, Qt.Key.Key_Return)
        qtbot.keyClick(field, Qt.Key.Key_Enter)
        qtbot.wait(100)
        assert wiz.currentId() == int(PageId.ENVIRONMENT), field.accessibleName()
        assert not (tmp_path / "envs" / page.name.text()).exists()
    install.setFocus()
    qtbot.keyClick(install, Qt.Key.Key_Return)  # the button itself: on purpose
    qtbot.waitUntil(lambda: wiz.currentId() == int(PageId.INSTALL), timeout=10000)
    for p in wiz.busy_pages():
        p.cancel_and_wait(60)


def test_a_name_with_a_path_in_it_is_refused_and_the_target_line_is_normalised(qtbot, tmp_path, torch_wheelhouse):
    """Confusing: Name accepted "a/b" and "../../x", putting the environment outside Location, and the
    target line showed the path as typed. Typed into the real field, each is a failed check that
    names the way out, Install stays off, and nothing is created anywhere."""
    wiz, _state, page = _wizard_at_environment(qtbot, tmp_path)
    qtbot.keyClicks(page.find_links, str(torch_wheelhouse.folder))
    for bad in ("a/b", "../../x", ".."):
        page.name.clear()
        qtbot.keyClicks(page.name, bad)
        _checks_ended(qtbot, page)
        assert not page.isComplete() and not wiz.button(Button.CommitButton).isEnabled(), bad
        texts = " ".join(f"{m} {h}" for _n, s, m, h in page.checks if s == "error")
        assert "is not one folder name" in texts and "change Location" in texts, (bad, page.checks)
        assert ".." not in page.target_label.text()
    assert not (tmp_path / "x").exists() and not (tmp_path.parent / "x").exists()
    page.name.clear()
    qtbot.keyClicks(page.name, "torch-ok")
    _checks_ended(qtbot, page)
    assert page.isComplete(), page.checks
    assert str(tmp_path / "envs" / "torch-ok") in page.target_label.text()


def test_the_mouse_wheel_over_a_choice_scrolls_the_page_instead(qtbot, tmp_path):
    """Confusing: the wheel over a combo box changed the choice (the download source, the version)
    while the user meant to scroll the page. Over a box without the focus it changes nothing; once
    the box has the focus, the wheel chooses as usual."""
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QWheelEvent

    wiz, _state, page = _wizard_at_environment(qtbot, tmp_path)
    _checks_ended(qtbot, page)
    page.advanced.set_expanded(True)
    combo = next(c for c in (page.mirror_choice, page.python) if c.isEnabled() and c.count() > 1)

    def wheel(delta: int) -> None:
        centre = QPointF(combo.width() / 2, combo.height() / 2)
        ev = QWheelEvent(centre, combo.mapToGlobal(centre), QPoint(0, 0), QPoint(0, delta), Qt.MouseButton.NoButton,
                         Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
        QApplication.sendEvent(combo, ev)
        qtbot.wait(50)

    combo.setCurrentIndex(0)
    wiz.button(Button.NextButton).setFocus()
    for delta in (-120, -120, 120, -120):
        wheel(delta)
        assert combo.currentIndex() == 0, "the wheel changed a choice the user was not on"
    combo.setFocus()
    qtbot.waitUntil(combo.hasFocus, timeout=2000)
    wheel(-120)
    assert combo.currentIndex() != 0  # focused: the wheel chooses
