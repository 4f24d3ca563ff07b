"""The wizard itself: construction, page order, start-up order, closing during work, language."""
from __future__ import annotations

import sys

import pytest

pytest.importorskip("PySide6")

from PySide6.QtWidgets import QWizard

from app.core.sources.settings import SourceSettings
from app.gui import i18n
from app.gui.pages import PageId
from app.gui.state import WizardState

pytestmark = pytest.mark.gui



@pytest.fixture
def wizard(qtbot, english):
    from app.gui.wizard import SetupWizard

    def make(**kw):
        kw.setdefault("auto_detect", False)
        w = SetupWizard(**kw)
        qtbot.addWidget(w)
        return w

    return make


def test_builds_with_no_arguments(qtbot, english):
    from app.gui.pages.done import DonePage
    from app.gui.pages.env_task import EnvTaskPage
    from app.gui.pages.environment import EnvironmentPage
    from app.gui.pages.environments import EnvironmentsPage
    from app.gui.pages.install import InstallPage
    from app.gui.pages.recommendation import RecommendationPage
    from app.gui.pages.speedtest import SpeedTestPage
    from app.gui.pages.system import SystemPage
    from app.gui.pages.verify import VerifyPage
    from app.gui.pages.welcome import WelcomePage
    from app.gui.wizard import SetupWizard

    w = SetupWizard()
    qtbot.addWidget(w)
    assert w.pageIds() == [int(p) for p in PageId]
    expected = [WelcomePage, SystemPage, RecommendationPage, EnvironmentPage, InstallPage, VerifyPage,
                SpeedTestPage, DonePage, EnvironmentsPage, EnvTaskPage]
    for pid, cls in zip(PageId, expected, strict=True):
        page = w.page(int(pid))
        assert type(page) is cls, pid
        assert page.state is w.state, "every page shares the wizard's state"
        assert page.title(), f"{cls.__name__} has no title"
    assert w.page(int(PageId.INSTALL)).isCommitPage()
    avail = w.screen().availableGeometry()  # ~900 x 640, never larger than the screen
    assert w.minimumWidth() >= min(900, avail.width() - 40) and w.minimumHeight() >= min(640, avail.height() - 60)
    assert w.minimumWidth() <= avail.width() and w.minimumHeight() <= avail.height()
    assert w.windowTitle() == "Torch Setup Assistant"
    assert not w.windowIcon().isNull()
    assert w.startId() == int(PageId.WELCOME)


def test_window_shows_before_detection_then_detects(qtbot, english):
    pytest.importorskip("app.core.detection.detect")
    from app.gui.wizard import SetupWizard

    w = SetupWizard()
    qtbot.addWidget(w)
    assert w.state.session.system is None, "nothing is detected while the wizard is built"
    with qtbot.waitSignal(w.system_page.scan_finished, timeout=20000):
        w.show()
        qtbot.waitExposed(w)
        # The window is up; detection runs on a worker thread, the page is not complete yet.
        assert w.state.session.system is None
    assert w.state.session.system is not None
    assert w.state.session.system.schema_version == 1
    w.next()
    assert w.currentId() == int(PageId.SYSTEM)
    assert w.currentPage().isComplete()


def test_next_disabled_on_system_page_until_detection_finished(qtbot, wizard):
    pytest.importorskip("app.core.detection.detect")
    w = wizard()
    w.show()
    w.next()
    assert w.currentId() == int(PageId.SYSTEM)
    page = w.currentPage()
    assert page.is_busy() and not page.isComplete()
    assert not w.button(QWizard.WizardButton.NextButton).isEnabled()
    qtbot.waitUntil(page.isComplete, timeout=20000)
    assert w.button(QWizard.WizardButton.NextButton).isEnabled()


@pytest.mark.slow
def test_close_during_install_asks_then_cancels_and_rolls_back(qtbot, english, tmp_path, local_wheels,
                                                               monkeypatch):
    """A real install (cold uv cache: slow enough to catch), closed mid-way: No keeps it
    going; Yes cancels it, the half-made environment is removed, then the window closes."""
    pytest.importorskip("app.core.detection.detect")
    from app.core.detection.detect import detect
    from app.core.install import InstallRequest
    from app.core.pipeline.session import Session
    from app.core.recommend import Choices, recommend
    from app.gui.wizard import SetupWizard

    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "cold uv cache"))
    report = detect()
    rec = recommend(report, choices=Choices(backend="cpu", torch="2.13"))
    env = tmp_path / "envs" / "half made"
    session = Session.resume(system=report, recommendation=rec)
    session.plan(InstallRequest(  # approved, as the Environment page does
        env_path=env, kind="venv", installer="uv", recommendation=rec, sources=SourceSettings(torch_index="https://pypi.org/simple",
                                                                                              find_links=[str(local_wheels)])
        ))
    state = WizardState(session=session)
    w = SetupWizard(state=state, lang="en", auto_detect=False)
    qtbot.addWidget(w)
    w.setStartId(int(PageId.INSTALL))  # straight to the install, which starts on entry
    page = w.page(int(PageId.INSTALL))
    with qtbot.waitSignal(page.state_changed, timeout=10000, check_params_cb=lambda st: st == "running"):
        w.show()
    qtbot.waitUntil(lambda: (env / "pyvenv.cfg").exists(), timeout=120000)
    assert page.is_busy()

    asked = []
    monkeypatch.setattr(w, "confirm_cancel_install", lambda: asked.append("no") or False)
    w.close()
    assert asked == ["no"] and w.isVisible() and page.is_busy(), "No keeps the window and the install"

    monkeypatch.setattr(w, "confirm_cancel_install", lambda: asked.append("yes") or True)
    w.close()
    assert asked == ["no", "yes"]
    qtbot.waitUntil(lambda: not w.isVisible(), timeout=120000)  # closes once the rollback is done
    assert page.status() == "cancelled"
    assert not env.exists(), "the half-made environment was removed"
    assert state.session.install_result is None


def test_close_while_detecting_cancels_without_asking(qtbot, wizard, monkeypatch):
    pytest.importorskip("app.core.detection.detect")
    w = wizard()
    w.show()
    w.start_detection()
    assert w.system_page.is_busy()
    monkeypatch.setattr(w, "confirm_cancel_install", lambda: pytest.fail("only an install asks"))
    w.close()
    assert not w.isVisible()
    assert not w.system_page.is_busy()


def test_no_way_back_past_the_commit_page(qtbot, wizard):
    """QWizard's commit page semantics: after Install, Back never leads before it."""
    w = wizard()
    assert w.page(int(PageId.INSTALL)).isCommitPage()
    for pid in (PageId.WELCOME, PageId.SYSTEM, PageId.RECOMMENDATION, PageId.ENVIRONMENT):
        assert not w.page(int(pid)).isCommitPage()


def test_language_switch_is_live(qtbot, wizard):
    if not i18n.catalogue_path("zh_CN").is_file():
        pytest.fail("resources/i18n/torch_setup_zh_CN.qm is missing: run scripts/update_translations.py")
    w = wizard(lang="en")
    w.show()
    english = {pid: w.page(int(pid)).title() for pid in PageId}
    assert w.windowTitle() == "Torch Setup Assistant"
    w.welcome.select_language("zh_CN")
    assert w.state.language == "zh_CN"
    # Qt posts QEvent.LanguageChange to every widget; each page's retranslate() runs then.
    qtbot.waitUntil(lambda: w.windowTitle() == "Torch 安装助手", timeout=3000)
    for pid in PageId:
        title = w.page(int(pid)).title()
        assert title and title != english[pid], f"{pid.name} page title was not retranslated"
    assert "下一步" in w.buttonText(QWizard.WizardButton.NextButton)
    w.welcome.select_language("en")
    qtbot.waitUntil(lambda: w.windowTitle() == "Torch Setup Assistant", timeout=3000)
    assert {pid: w.page(int(pid)).title() for pid in PageId} == english


def test_language_choice(english):
    assert i18n.normalize("zh-CN") == "zh_CN"
    assert i18n.normalize("zh_Hans_CN") == "zh_CN"
    assert i18n.normalize("en_US") == "en"
    assert i18n.normalize("de_DE") == "en"
    assert i18n.system_language() in ("en", "zh_CN")
    assert i18n.set_language("zh_CN") == "zh_CN"
    assert i18n.current_language() == "zh_CN"


def test_state_passed_in_is_used(qtbot, english):
    from app.gui.wizard import SetupWizard

    state = WizardState(language="en")
    w = SetupWizard(state=state, auto_detect=False)
    qtbot.addWidget(w)
    assert w.state is state
    assert all(w.page(pid).state is state for pid in w.pageIds())


def test_lazy_wizard_shows_welcome_first_then_builds_the_rest(qtbot, english):
    from app.gui.wizard import SetupWizard

    w = SetupWizard(lazy=True, auto_detect=False)
    qtbot.addWidget(w)
    assert w.pageIds() == [int(PageId.WELCOME)], "only the first page before the window shows"
    assert w.button(QWizard.WizardButton.NextButton).text() == "&Next >"
    w.show()
    qtbot.waitUntil(w.pages_built, timeout=5000)  # right after the first paint
    assert w.pageIds() == [int(p) for p in PageId]


def test_lazy_wizard_next_before_the_rest_is_built(qtbot, english):
    from app.gui.wizard import SetupWizard

    w = SetupWizard(lazy=True, auto_detect=False)
    qtbot.addWidget(w)
    w.show()  # the first paint is still queued: only Welcome exists
    w.next()  # Next before the rest was built: they are built on the spot
    assert w.pages_built()
    assert w.currentId() == int(PageId.SYSTEM)
    # the System page started its scan: stop it and wait, so no worker outlives the window (a
    # worker still running when a later test collects the closed window crashed the suite once)
    for page in w.busy_pages():
        assert page.cancel_and_wait(60)


def test_torch_setup_gui_command(qtbot, capsys, english):
    """`torch-setup gui --quit-after-show` builds the app and reports its first paint."""
    import json

    from app.commands.gui import launch

    assert launch(["--quit-after-show", "--lang", "en"]) == 0
    line = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("{")][-1]
    data = json.loads(line)
    assert data["shown_at"] > 0 and (data["rss_mb"] is None or data["rss_mb"] > 10)


def test_cli_registers_gui(english):
    from app.cli import build_parser

    args = build_parser().parse_args(["gui", "--lang", "zh_CN"])
    assert args.command == "gui" and args.lang == "zh_CN" and callable(args.func)


def test_torch_setup_without_a_command_opens_the_wizard(monkeypatch):
    import app.commands.gui as gui
    import app.gui.app as gui_app
    from app.cli import main

    opened, calls = [], []
    # no command at all: straight to the window, nothing to parse
    monkeypatch.setattr(gui_app, "launch", lambda **kw: opened.append(kw) or 0)
    monkeypatch.setattr(gui, "launch", lambda argv: calls.append(list(argv)) or 0)
    assert main([]) == 0
    assert opened == [{}] and calls == []
    assert main(["gui", "--lang", "zh_CN"]) == 0
    assert calls[-1] == ["--lang", "zh_CN"]


def test_the_gui_command_loads_no_qt_until_the_wizard_opens():
    """The launcher is argument parsing only: Qt is app.gui.app's, imported when the wizard opens."""
    import subprocess
    import sys

    code = ("import sys\n"
            "import app.cli, app.commands.gui\n"
            "app.cli.build_parser()\n"
            "print(sorted(m for m in sys.modules if m.startswith('PySide6')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_no_display_gives_a_clear_message_not_a_crash(tmp_path):
    """`torch-setup` over SSH (no X11/Wayland): a message and exit 1, not Qt's abort."""
    import os
    import subprocess
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("Linux only")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["TORCH_SETUP_HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-m", "app"], capture_output=True, text=True, encoding="utf-8", env=env, timeout=60)
    assert out.returncode == 1, out.stderr
    assert "No display was found" in out.stderr and "torch-setup detect" in out.stderr


def test_screenshots_of_the_first_pages_in_both_languages(qtbot, tmp_path, english):
    """The screenshot driver (scripts/screenshots.py) on the first three pages, offscreen."""
    pytest.importorskip("app.core.detection.detect")
    from PySide6.QtGui import QImage

    from app.gui.screenshots import save_all

    paths = save_all(tmp_path, stop_after=PageId.RECOMMENDATION, wheels=None)
    names = sorted(p.name for p in paths)
    assert names == sorted(f"{n}-{lang}.png" for n in ("1-welcome", "2-system", "3-recommendation")
                           for lang in ("en", "zh_CN"))
    for p in paths:
        img = QImage(str(p))
        assert img.width() >= 640 and img.height() >= 480, p
        # every 3rd pixel (a grid 37 x 29 apart can miss the few lines of a sparse page: the
        # Windows style draws plain white around them)
        colours = {img.pixel(x, y) for x in range(0, img.width(), 3) for y in range(0, img.height(), 3)}
        assert len(colours) > 8, f"{p.name} looks blank"
    assert (tmp_path / "1-welcome-en.png").read_bytes() != (tmp_path / "1-welcome-zh_CN.png").read_bytes()
    assert i18n.current_language() == "en", "the driver switches back to the first language"


@pytest.mark.xfail(sys.platform == "win32", strict=True, reason="Windows: the QStyle type is built before the "
                   "first paint (a few ms of start-up the wizard saves on Linux)")
def test_torch_setup_alone_shows_the_window_before_anything_heavy_loads(tmp_path):
    """The real entry point with no arguments (TORCH_SETUP_REPORT_FIRST_PAINT=1 reports the
    first frame once it is painted, and closes): no QtCharts, no psutil, none of the core's larger modules, no worker
    and no page but Welcome before the window is painted."""
    import json
    import os
    import subprocess
    import sys

    code = ("import sys, json\n"
            "import app.gui.app as ga\n"
            "seen = {}\n"
            "def report(**_):\n"
            "    import PySide6.QtCore as C, PySide6.QtGui as G, PySide6.QtWidgets as W\n"
            "    seen.update(modules=sorted(sys.modules), qt_types=sorted(set(vars(G)) | set(vars(W))),\n"
            "                core_types=sorted(vars(C)))\n"
            "    print(json.dumps(seen), flush=True)\n"
            "ga.print_startup = report\n"
            "from app.cli import main\n"
            "sys.exit(main([]))\n")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "TORCH_SETUP_REPORT_FIRST_PAINT": "1",
           "TORCH_SETUP_HOME": str(tmp_path)}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, encoding="utf-8", timeout=120, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    seen = json.loads(next(ln for ln in res.stdout.splitlines() if ln.startswith("{")))
    mods = set(seen["modules"])
    # PySide6 builds a class's Python type on first use (QHeaderView ~3 ms, QIcon ~2 ms): the
    # classes only later pages need are not built before the window is painted
    later = {"QIcon", "QHeaderView", "QTreeWidget", "QPlainTextEdit", "QFontDatabase", "QProgressBar", "QStyle",
             "QFormLayout"}
    assert not later & set(seen["qt_types"]), sorted(later & set(seen["qt_types"]))
    # nor the ``Qt`` namespace (~15 ms: its ~100 enums), which any QPainter pen or brush call builds:
    # the report comes after the first paint pass, so the Welcome page's banner has been painted
    assert "Qt" not in seen["core_types"]
    heavy = {"PySide6.QtCharts", "psutil", "app.core.measure.bench", "app.core.detection.detect", "app.core.install",
             "app.gui.charts", "app.gui.pages.system", "app.gui.worker",
             # the pipeline and the error types (dataclasses) load after the first paint, when a page needs them
             "app.core.pipeline.session", "app.core.base.errors", "app.core.proc.runner", "subprocess", "dataclasses"}
    assert not heavy & mods, sorted(heavy & mods)
    assert "app.gui.pages.welcome" in mods and "app.core.base.secrets" in mods  # the console is masked from the start


def _loaded_libraries() -> set[str]:
    from pathlib import Path

    return {line.split()[-1] for line in Path("/proc/self/maps").read_text(encoding="utf-8").splitlines() if ".so" in line}


def test_fontconfig_loads_in_a_thread_only_where_it_helps(monkeypatch):
    """``launch()`` has fontconfig read its configuration (FcInit, through ctypes: without the GIL)
    in a thread while the first page is built: only on Linux with a second core, only the copy Qt
    loaded, and only a fontconfig that is thread-safe (2.11 or later)."""
    import glob
    import os
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("fontconfig is Linux's")
    from app.gui import app as gui_app

    fontconfig = {p for p in _loaded_libraries() if "/libfontconfig.so" in p}
    if not fontconfig:
        pytest.skip("this Qt does not use fontconfig")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    thread = gui_app.warm_fontconfig()
    assert thread is not None and thread.name == "fontconfig" and thread.daemon
    thread.join(30)
    assert not thread.is_alive()
    assert {p for p in _loaded_libraries() if "/libfontconfig.so" in p} == fontconfig  # Qt's copy, no other

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert gui_app.warm_fontconfig() is None, "one core: a thread would only take turns"

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(gui_app, "FONTCONFIG_THREAD_SAFE", 10**9)
    assert gui_app.warm_fontconfig() is None, "a fontconfig older than the limit is left alone"

    # a library on disk that this process has not loaded is never loaded by it
    loaded_names = {os.path.basename(p) for p in _loaded_libraries()}
    unloaded = [p for pattern in ("/usr/lib/x86_64-linux-gnu/lib*.so.[0-9]", "/usr/lib/aarch64-linux-gnu/lib*.so.[0-9]",
                                  "/usr/lib64/lib*.so.[0-9]", "/usr/lib/lib*.so.[0-9]")
                for p in sorted(glob.glob(pattern)) if os.path.basename(p) not in loaded_names]
    if unloaded:
        monkeypatch.setattr(gui_app, "FONTCONFIG", os.path.basename(unloaded[0]))
        monkeypatch.setattr(gui_app, "FONTCONFIG_THREAD_SAFE", 0)
        assert gui_app.warm_fontconfig() is None
        assert os.path.basename(unloaded[0]) not in {os.path.basename(p) for p in _loaded_libraries()}


def test_the_lighter_pyside_import_check_answers_as_pyside_does():
    """app.gui replaces PySide6's per-import source check (inspect.getsource, ~25 ms over the
    wizard's start) with a read of the file's bytes: for every module loaded now (ours with and
    without Qt, the standard library, extension modules) both give the same answer."""
    import json
    import sys

    import app.gui
    import app.gui.wizard

    feature = sys.modules.get("shibokensupport.feature")
    if feature is None or not callable(getattr(feature, "_mod_uses_pyside", None)):
        pytest.skip("this PySide6 has no per-import source check")
    assert app.gui.lighter_feature_check()
    ours = feature._mod_uses_pyside
    own = ours.pyside_own
    modules = [m for m in list(sys.modules.values()) if isinstance(getattr(m, "__file__", None), str)]
    assert len(modules) > 200
    differ = [m.__name__ for m in modules if ours(m) != own(m)]
    assert not differ, differ
    assert ours(app.gui.wizard) and not ours(json)
    assert app.gui.lighter_feature_check() and feature._mod_uses_pyside is ours  # once only


def test_a_long_note_in_a_form_row_is_as_tall_as_its_text(qtbot, wizard):
    """The Environment page's "Not offered" note under the Python list: a plain wrapped QLabel
    there got Qt's narrow-width height (blank bands above and below the sentence)."""
    w = wizard()
    w.resize(980, 720)
    page = w.page(int(PageId.ENVIRONMENT))
    w.setStartId(int(PageId.ENVIRONMENT))
    w.show()
    qtbot.waitUntil(lambda: w.currentId() == int(PageId.ENVIRONMENT))
    note = page.python_note
    note.setText("Not offered: Python 3.6.15, 3.7.16, 3.8.18, 3.9.18, 3.10.13 (torch 2.15.0 supports Python "
                 "3.11–3.15). To use one of them, choose its Python under \"Change…\" on the Recommendation page.")
    note.setVisible(True)
    qtbot.waitUntil(lambda: note.isVisible() and note.width() > 400)
    qtbot.waitUntil(lambda: note.height() == note.heightForWidth(note.width()))
    # the row below follows right after the text
    assert page.existing.geometry().top() - note.geometry().bottom() < 3 * page.form.verticalSpacing() + 12
