"""The first four pages: Welcome, Your system, Recommendation, Environment.

Real parts: the real detection on this machine, the real recommendation engine and compat
data, the real install planner and pre-flight, Qt offscreen. Reports of other machines
(an NVIDIA box with a hung tool, ...) are SystemReports built from dicts: the GPU edge.
"""
from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QWizard

from app.core.detection.system import SystemReport
from app.core.pipeline.session import Session
from app.gui import i18n
from app.gui.state import WizardState
from tests.helpers import torch_alone

pytestmark = pytest.mark.gui



@pytest.fixture
def host(qtbot):
    """A QWizard holding the given pages over one state (as the real wizard does)."""

    def build(*classes, state: WizardState | None = None):
        state = state or WizardState()
        wiz = QWizard()
        pages = [cls(state) for cls in classes]
        for i, page in enumerate(pages):
            wiz.setPage(i, page)
        qtbot.addWidget(wiz)
        wiz.resize(900, 640)
        return wiz, state, pages

    return build


@pytest.fixture(scope="module")
def real_report():
    detect = pytest.importorskip("app.core.detection.detect").detect
    return detect()


def _texts(widget) -> str:
    return "\n".join(lb.text() for lb in widget.findChildren(QLabel) if lb.text())


def _report(**over) -> SystemReport:
    base = {
        "schema_version": 1, "os": {"family": "linux", "version": "Ubuntu 22.04.4 LTS"}, "arch": "x86_64",
        "python": {"version": "3.11.7", "executable": "/usr/bin/python3"},
        "cpu": {"model": "AMD Ryzen 9 5950X", "cores": 16, "threads": 32},
        "memory_mb": 65536, "disk_free_mb": 400000, "gpus": [], "env": {}, "probes": [],
    }
    base.update(over)
    return SystemReport.from_dict(base)


# ---------------------------------------------------------------- Welcome
def test_welcome_reports_no_bundle_then_a_found_one(qtbot, host, tmp_path):
    from app.gui.pages.welcome import WelcomePage

    wiz, state, (page,) = host(WelcomePage)
    with qtbot.waitSignal(page.bundle_checked, timeout=10000):
        wiz.show()  # initializePage looks for a bundle next to the app, off the GUI thread
    assert state.bundle_dir is None
    assert "No offline bundle" in page.bundle_banner.text()

    state2 = WizardState(bundle_dir=tmp_path / "bundle")
    page2 = WelcomePage(state2)
    qtbot.addWidget(page2)
    page2.initializePage()
    assert str(tmp_path / "bundle") in page2.bundle_banner.text()
    assert page2.bundle_banner.kind == "ok"


def test_welcome_language_selector_switches_the_app(qtbot, host):
    from app.gui.pages.welcome import WelcomePage

    _wiz, state, (page,) = host(WelcomePage)
    assert page.language.accessibleName() == "Language"
    assert [page.language.itemData(i) for i in range(page.language.count())] == ["en", "zh_CN"]
    with qtbot.waitSignal(page.language_changed) as blocker:
        page.language.setCurrentIndex(1)
    assert blocker.args == ["zh_CN"] and state.language == "zh_CN"
    qtbot.waitUntil(lambda: page.title() == "欢迎使用 Torch 安装助手", timeout=3000)
    page.language.setCurrentIndex(0)
    qtbot.waitUntil(lambda: page.title() == "Welcome to Torch Setup Assistant", timeout=3000)


# ---------------------------------------------------------------- Your system
def test_system_page_detects_off_the_gui_thread(qtbot, host, tmp_path):
    pytest.importorskip("app.core.detection.detect")
    from app.gui.pages.system import SystemPage

    wiz, state, (page,) = host(SystemPage)
    assert not page.isComplete()
    with qtbot.waitSignal(page.scan_finished, timeout=20000):
        wiz.show()
        assert not page.busy.isHidden(), "a busy line while detecting"
        assert not page.isComplete()
    assert page.isComplete() and state.session.system is not None
    text = _texts(page)
    r = state.session.system
    assert r.cpu.model and r.cpu.model in text
    assert r.python.version in text
    if not r.gpus:
        assert "None that PyTorch can use" in text

    # Copy report: the clipboard holds the SystemReport as JSON.
    page.copy.click()
    data = json.loads(QGuiApplication.clipboard().text())
    assert data["schema_version"] == 1 and data["cpu"]["model"] == r.cpu.model
    assert page.copy.text() == "Copied"

    # Save report…: the file dialog's path is written with the same JSON.
    out = page.save_report(tmp_path / "report.json")
    assert json.loads(out.read_text(encoding="utf-8")) == data
    assert str(out) in page.saved_label.text()

    # Re-scan runs again and ends complete.
    with qtbot.waitSignal(page.scan_finished, timeout=20000):
        page.rescan.click()
        assert not page.isComplete()
    assert page.isComplete()


def test_system_page_says_what_looks_wrong(qtbot, host):
    from app.gui.pages.system import SystemPage

    report = _report(
        gpus=[{"vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080 Ti", "driver_version": "470.256.02",
               "compute_capability": "6.1", "memory_mb": 11264}],
        nvidia_cuda_version="11.4",
        env={"CUDA_VISIBLE_DEVICES": ""},
        disk_free_mb=3000,
        probes=[{"name": "rocminfo", "status": "timeout", "detail": "no answer after 3.0 s"},
                {"name": "nvidia-smi", "status": "garbage", "detail": "could not parse the CSV"}],
    )
    state = WizardState(session=Session.resume(system=report))
    _wiz, state, (page,) = host(SystemPage, state=state)
    page.initializePage()
    assert page.isComplete()
    titles = [t for _, t, _ in page.problems]
    assert "rocminfo did not answer in time" in titles
    assert "nvidia-smi printed something that could not be read" in titles
    assert 'CUDA_VISIBLE_DEVICES is set to ""' in titles
    assert any(t.startswith("Only 2.9 GiB of free disk space") for t in titles)
    text = _texts(page)
    assert "NVIDIA GeForce GTX 1080 Ti" in text and "driver 470.256.02" in text
    assert "compute capability 6.1" in text and "supports CUDA up to 11.4" in text


def test_system_page_shows_the_engines_warning_for_an_old_driver(qtbot, host):
    """"driver 470 is too old for current PyTorch CUDA builds": the engine's facts, shown here."""
    pytest.importorskip("app.core.recommend")
    from app.core.recommend import recommend
    from app.gui.pages.system import SystemPage

    old = _report(gpus=[{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 3090", "driver_version": "470.256.02",
                         "compute_capability": "8.6", "memory_mb": 24576}], nvidia_cuda_version="11.4")
    rec = recommend(old)
    assert rec.driver_upgrade, "the engine knows a newer driver would unlock newer builds"
    state = WizardState(session=Session.resume(system=old, recommendation=rec))
    _wiz, state, (page,) = host(SystemPage, state=state)
    page.initializePage()
    titles = [t for _, t, _ in page.problems]
    assert "NVIDIA driver 470.256.02 is too old for current PyTorch CUDA builds" in titles
    detail = next(d for _, t, d in page.problems if t.startswith("NVIDIA driver 470"))
    assert str(rec.driver_upgrade.driver) in detail
    for w in rec.texts("en").warnings:
        assert w in titles

    # A current driver: no such line.
    new = _report(gpus=[{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 3090", "driver_version": "580.95.05",
                         "compute_capability": "8.6", "memory_mb": 24576}], nvidia_cuda_version="13.0")
    state.session.use_system(new)  # a new report forgets the old recommendation
    assert state.session.recommendation is None
    state.session.recommend()
    page.initializePage()
    assert not any("too old" in t for _, t, _ in page.problems)


# ---------------------------------------------------------------- Recommendation
def test_recommendation_page_shows_choice_reasons_and_command(qtbot, host, real_report, tmp_path, monkeypatch):
    pytest.importorskip("app.core.recommend")
    monkeypatch.setenv("HOME", str(tmp_path))  # the default environment folder is a new one
    from app.gui.pages.recommendation import RecommendationPage, commands_text, default_env_path

    state = WizardState(session=Session.resume(system=real_report))
    _wiz, state, (page,) = host(RecommendationPage, state=state)
    with qtbot.waitSignal(page.recommended, timeout=20000):
        page.initializePage()
        assert not page.busy.isHidden() and not page.isComplete()  # until the result arrives
    qtbot.waitUntil(page.isComplete, timeout=5000)
    rec = state.session.recommendation
    assert rec.torch_version in page.headline.text()
    # Before the Environment page, the command is the full one the defaults would run (the plan
    # made from this recommendation: environment, installer, packages, index, options).
    qtbot.waitUntil(lambda: page.current_plan() is not None, timeout=20000)
    for installer in ("pip", "uv"):
        page.installer.setCurrentIndex(page.installer.findData(installer))
        plan = page.current_plan()
        assert plan is not None and plan.installer == installer and plan.recommendation is rec
        text = page.command.toPlainText()
        assert text == commands_text(plan.shown_commands())
        if os.name == "nt":  # cmd's quoting, which shlex does not read: the commands shown, as argument lists
            lines = [list(c) for c in plan.shown_commands() if c]
        else:
            lines = [shlex.split(line) for line in text.splitlines()]
        assert str(default_env_path()) in lines[0]  # the environment is created first
        install = lines[-1]
        assert all(p in install for p in rec.packages)
        assert rec.index_url in install or rec.index_url.startswith("https://pypi.org/")
    reasons = _texts(page)
    for r in rec.texts("en").reasons:
        assert r in reasons
    page.copy.click()
    assert QGuiApplication.clipboard().text() == page.command.toPlainText()


def test_change_dialog_offers_only_valid_choices(qtbot, host):
    pytest.importorskip("app.core.recommend")
    from app.core.recommend import recommend
    from app.gui.pages.recommendation import RecommendationPage, options_for

    report = _report(gpus=[{"vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080 Ti", "driver_version": "550.54.14",
                            "compute_capability": "6.1", "memory_mb": 11264}], nvidia_cuda_version="12.4")
    rec = recommend(report)
    state = WizardState(session=Session.resume(system=report, recommendation=rec))
    _wiz, state, (page,) = host(RecommendationPage, state=state)
    page._render()
    opts = options_for(report, rec)
    assert any(o["valid"] for o in opts) and any(not o["valid"] for o in opts), \
        "a Pascal card with a 550 driver has valid and invalid builds"
    dlg = page.change_dialog()
    qtbot.addWidget(dlg)
    combos = (dlg.backend, dlg.variant, dlg.torch)
    greyed = []
    for combo in combos:
        model = combo.model()
        for i in range(combo.count()):
            item = model.item(i)
            if not item.isEnabled():
                greyed.append(item)
                assert item.toolTip(), f"greyed {item.text()} says why"
    # Every invalid option the engine reports is unreachable: selecting it falls back to a
    # selection the engine accepts (the builds it leaves to the engine may be None: "automatic").
    from app.core.recommend import Choices

    for o in opts:
        if o["valid"]:
            continue
        dlg.select(o["backend"], o["variant"], o["torch_version"])
        sel = dlg.selection()
        picked = (sel.backend, sel.variant, sel.torch)
        assert picked != (o["backend"], o["variant"], o["torch_version"]), f"{o} could be picked"
        assert dlg.works() and dlg.buttons.button(dlg.buttons.StandardButton.Ok).isEnabled()
        got = recommend(report, None, Choices(backend=sel.backend, variant=sel.variant, torch=sel.torch,
                                              python=sel.python, packages=sel.packages))
        assert o["torch_version"] is None or (got.variant, got.torch_version) != (o["variant"], o["torch_version"])
    if greyed:
        assert "Not available on this computer" in dlg.why_not.toPlainText()


def test_change_applies_choices_and_restores(qtbot, host, real_report):
    pytest.importorskip("app.core.recommend")
    from app.core.recommend import Choices
    from app.gui.pages.recommendation import RecommendationPage

    state = WizardState(session=Session.resume(system=real_report))
    _wiz, state, (page,) = host(RecommendationPage, state=state)
    with qtbot.waitSignal(page.recommended, timeout=20000):
        page.initializePage()
    qtbot.waitUntil(page.isComplete)
    rec = state.session.recommendation
    with qtbot.waitSignal(page.recommended, timeout=20000):
        page.apply_change(Choices(backend=rec.backend, variant=rec.variant, torch=None, packages=("torchvision",)))
    qtbot.waitUntil(page.isComplete)
    assert state.session.choices is not None and list(state.session.choices.packages) == ["torchvision"]
    assert any(str(p).startswith("torchvision") for p in state.session.recommendation.packages)
    assert "own choice" in page.summary.text()

    # A choice the engine refuses (a torch release it does not know): its reason is shown,
    # and the page is not complete.
    page.apply_change(Choices(backend=rec.backend, variant=rec.variant, torch="1.0"))
    qtbot.waitUntil(lambda: not page.is_busy() and page._error is not None, timeout=20000)
    assert not page.isComplete() and state.session.recommendation is None
    assert not page.error_banner.isHidden()
    assert "1.0" in page.error_banner.text() and page._error.text() in page.error_banner.text()

    with qtbot.waitSignal(page.recommended, timeout=20000):
        page.apply_change(None)
    qtbot.waitUntil(page.isComplete)
    assert state.session.choices is None and page._error is None
    assert "fits this computer best" in page.summary.text()


# ---------------------------------------------------------------- Environment
@pytest.fixture
def env_state(real_report):
    rec_mod = pytest.importorskip("app.core.recommend")
    pytest.importorskip("app.core.install")
    return WizardState(session=Session.resume(system=real_report, recommendation=rec_mod.recommend(real_report)))


def test_environment_preflight_passes_and_fills_the_request(qtbot, host, env_state, tmp_path, local_wheels):
    from app.gui.pages.environment import EnvironmentPage

    _wiz, state, (page,) = host(EnvironmentPage, state=env_state)
    page.initializePage()
    assert not page.isComplete(), "not complete before the pre-flight ran"
    with qtbot.waitSignal(page.preflight_done, timeout=30000):
        page.location.setText(str(tmp_path / "envs"))
        page.name.setText("my torch")
        page.advanced.set_expanded(True)
        page.index_url.setText("https://pypi.org/simple")
        page.find_links.setText(str(local_wheels))
    qtbot.waitUntil(lambda: not page.is_busy() and not page._debounce.isActive(), timeout=30000)
    failed = [(n, m) for n, s, m, h in page.checks if s == "error"]
    assert page.isComplete(), failed
    plan = state.session.approved_plan
    assert plan is not None and plan.request.recommendation is state.session.recommendation
    req = plan.request
    assert Path(req.env_path) == tmp_path / "envs" / "my torch"
    assert req.installer == "uv" and req.kind == "venv" and not req.existing
    assert [str(p) for p in req.sources.find_links] == [str(local_wheels)]
    assert req.sources.torch_index == "https://pypi.org/simple"
    assert [str(p) for p in plan.index.find_links] == [str(local_wheels)]  # the plan that will run uses them
    assert "free there" in page.target_label.text()
    assert str(tmp_path / "envs" / "my torch") in page.target_label.text()


def test_environment_blocks_a_non_empty_folder_and_recovers(qtbot, host, env_state, tmp_path, local_wheels):
    from app.gui.pages.environment import EnvironmentPage

    busy = tmp_path / "envs" / "taken"
    busy.mkdir(parents=True)
    (busy / "thesis.tex").write_text("do not delete", encoding="utf-8")
    _wiz, state, (page,) = host(EnvironmentPage, state=env_state)
    page.initializePage()
    page.index_url.setText("https://pypi.org/simple")
    page.find_links.setText(str(local_wheels))
    with qtbot.waitSignal(page.preflight_done, timeout=30000) as blocker:
        page.location.setText(str(tmp_path / "envs"))
        page.name.setText("taken")
    qtbot.waitUntil(lambda: not page.is_busy() and not page._debounce.isActive(), timeout=30000)
    assert not page.isComplete()
    assert state.session.approved_plan is None and state.session.checks == ()
    assert any(s == "error" for _, s, _, _ in page.checks)
    assert (busy / "thesis.tex").read_text(encoding="utf-8") == "do not delete"
    with qtbot.waitSignal(page.preflight_done, timeout=30000):
        page.name.setText("fresh")
    qtbot.waitUntil(lambda: page.isComplete() or (not page.is_busy() and not page._debounce.isActive()),
                    timeout=30000)
    assert page.isComplete(), page.checks
    assert blocker.args == [False]


def test_environment_free_space_follows_the_path(qtbot, host, env_state, tmp_path):
    from app.core.base.disk import existing_ancestor, free_mb
    from app.gui.pages.environment import EnvironmentPage

    deep = tmp_path / "a" / "b" / "c"
    assert existing_ancestor(deep) == tmp_path
    assert free_mb(deep) is not None and free_mb(deep) > 0
    _wiz, _state, (page,) = host(EnvironmentPage, state=env_state)
    page.initializePage()
    page.location.setText(str(deep))  # the free space is read off the GUI thread
    qtbot.waitUntil(lambda: page._free_for == deep / "torch-env" and "free there" in page.target_label.text())
    assert abs(page.free_space_mb - free_mb(deep)) < 64  # other tests write meanwhile
    assert str(deep / "torch-env") in page.target_label.text()
    page.existing.setChecked(True)
    assert not page.name.isEnabled()
    assert "added to the environment" in page.target_label.text()


def test_environment_offers_conda_only_when_found(qtbot, host, env_state):
    from app.core.detection.system import ToolInfo
    from app.gui.pages.environment import EnvironmentPage

    _wiz, state, (page,) = host(EnvironmentPage, state=env_state)
    page.initializePage()
    if not any(t in (env_state.session.system.tools or {}) for t in ("conda", "mamba", "micromamba")):
        assert page._conda_tool is None and page.r_conda.isHidden()
    tools = dict(env_state.session.system.tools or {})
    tools["micromamba"] = ToolInfo(name="micromamba", path="/opt/bin/micromamba", version="2.0.5")
    import dataclasses

    state.session.use_system(dataclasses.replace(env_state.session.system, tools=tools))
    page.initializePage()
    assert page._conda_tool is not None and "micromamba" in page.r_conda.text()
    page.r_conda.setChecked(True)
    assert page.kind_installer() == ("conda", "pip")


# ---------------------------------------------------------------- accessibility
def test_every_interactive_widget_has_a_name(qtbot, host):
    """Screen readers get a name for every control of the first four pages, in both languages."""
    from PySide6.QtWidgets import QAbstractButton, QComboBox, QLineEdit, QPlainTextEdit

    from app.gui.pages.environment import EnvironmentPage
    from app.gui.pages.recommendation import RecommendationPage
    from app.gui.pages.system import SystemPage
    from app.gui.pages.welcome import WelcomePage

    state = WizardState(session=Session.resume(system=_report()))
    _wiz, state, pages = host(WelcomePage, SystemPage, RecommendationPage, EnvironmentPage, state=state)
    for lang in ("en", "zh_CN"):
        i18n.set_language(lang)
        for page in pages:
            page.retranslate()
            for w in page.findChildren(QAbstractButton):
                if w.objectName().startswith("qt_"):
                    continue
                assert w.accessibleName() or w.text().replace("&", ""), f"{type(page).__name__}: unnamed button"
            for w in page.findChildren(QLineEdit) + page.findChildren(QComboBox) + page.findChildren(QPlainTextEdit):
                if isinstance(w.parent(), QComboBox) or w.objectName().startswith("qt_"):
                    continue
                assert w.accessibleName(), f"{type(page).__name__}: {type(w).__name__} has no accessible name"
    i18n.set_language("en")


def test_banner_is_readable_in_dark_mode(qtbot):
    """Banners mix a tint into the window colour around them: text keeps its contrast on dark,
    also when the palette changes while the banner is shown (a live switch to dark mode)."""
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from app.gui.widgets import Banner

    def themed(window: str, text: str) -> QPalette:
        pal = QPalette()
        pal.setColor(QPalette.ColorRole.Window, QColor(window))
        pal.setColor(QPalette.ColorRole.WindowText, QColor(text))
        return pal

    def fill_of(b: Banner) -> QColor:
        img = b.grab().toImage()
        return img.pixelColor(img.width() - 8, img.height() // 2)

    themes = (("#2b2b2b", "#e8e8e8"), ("#f0f0f0", "#1a1a1a"))
    for ((window, text), (later_window, later_text)), made_in_page in zip(
            zip(themes, reversed(themes), strict=True), (True, False), strict=True):
        page = QWidget()
        qtbot.addWidget(page)
        page.setPalette(themed(window, text))
        b = Banner("warning", "Driver too old", page if made_in_page else None)  # else: the layout adopts it
        QVBoxLayout(page).addWidget(b)
        page.resize(300, 60)
        page.show()
        qtbot.waitExposed(page)
        fill = fill_of(b)
        assert abs(fill.lightness() - QColor(text).lightness()) > 120, (window, fill.name())
        assert fill != QColor(window), "the banner is tinted"
        assert b.text_label.palette().color(QPalette.ColorRole.WindowText) == QColor(text), "the text keeps its colour"
        page.setPalette(themed(later_window, later_text))  # the theme changes while it is shown
        fill = fill_of(b)
        assert abs(fill.lightness() - QColor(later_text).lightness()) > 120, (later_window, fill.name())
        assert b.text_label.palette().color(QPalette.ColorRole.WindowText) == QColor(later_text)


def test_environment_keyboard_order_follows_the_layout(qtbot, host, env_state):
    from app.gui.pages.environment import EnvironmentPage

    wiz, _state, (page,) = host(EnvironmentPage, state=env_state)
    page.initializePage()
    wiz.show()
    page.advanced.set_expanded(True)
    wanted = [page.r_uv, page.location, page.browse, page.name, page.python, page.existing, page.advanced.button,
              page.index_url, page.extra_index, page.find_links, page.browse_links, page.bundle, page.browse_bundle]
    order, w = [], page.r_uv
    for _ in range(200):
        if w in wanted and w not in order:
            order.append(w)
        w = w.nextInFocusChain()
        if w is page.r_uv:
            break
    assert order == wanted, [x.accessibleName() or x.text() for x in order]


def test_results_are_retranslated_live(qtbot, host):
    """Switching the language re-renders what the pages show, not only their titles."""
    from app.gui.pages.system import SystemPage

    state = WizardState(session=Session.resume(system=_report(env={"CUDA_VISIBLE_DEVICES": ""})))
    _wiz, state, (page,) = host(SystemPage, state=state)
    page.initializePage()
    assert "Processor" in _texts(page) and 'CUDA_VISIBLE_DEVICES is set to ""' in _texts(page)
    i18n.set_language("zh_CN")
    qtbot.waitUntil(lambda: "处理器" in _texts(page), timeout=3000)
    assert "CUDA_VISIBLE_DEVICES 被设置为“”" in _texts(page)
    assert "Processor" not in _texts(page)


def test_environment_network_settings_reach_the_request(qtbot, host, env_state, tmp_path, local_wheels):
    """Mirror, proxy and CA file (labs and campuses) go into the InstallRequest as typed."""
    from app.gui.pages.environment import EnvironmentPage

    _wiz, _state, (page,) = host(EnvironmentPage, state=env_state)
    page.initializePage()
    page.location.setText(str(tmp_path / "envs"))
    # the torch wheel alone (a folder that also holds its dependencies, as the Windows lane's does,
    # would need no index, and the index checks below would not run)
    page.find_links.setText(str(torch_alone(local_wheels, tmp_path / "torch only")))
    page.index_url.setText("https://pypi.org/simple")
    page.mirror.setText("https://pypi.org/simple")
    page.proxy.setText("")
    page.ca_bundle.setText("system")
    req = page.build_request()
    assert req.sources.default_index == "https://pypi.org/simple" and req.sources.ca_bundle == "system" and req.sources.proxy is None
    page.proxy.setText("http://127.0.0.1:9")  # nothing listens there: the index checks must say so
    with qtbot.waitSignal(page.preflight_done, timeout=60000) as blocker:
        pass
    assert blocker.args == [False]
    assert page.build_request().sources.proxy == "http://127.0.0.1:9"
    assert any(s == "error" and "reach" in n for n, s, _, _ in page.checks), page.checks


def test_environment_wheel_folders_may_hold_spaces(qtbot, host, env_state, tmp_path):
    from app.gui.pages.environment import EnvironmentPage

    _wiz, _state, (page,) = host(EnvironmentPage, state=env_state)
    page.initializePage()
    a, b = tmp_path / "Jane Doe" / "wheels", tmp_path / "more wheels"
    page.find_links.setText(f"{a}; {b}")
    page.extra_index.setText("https://a.example/simple https://b.example/simple")
    req = page.build_request()
    assert [str(p) for p in req.sources.find_links] == [str(a), str(b)]
    assert list(req.sources.extra_index_urls) == ["https://a.example/simple", "https://b.example/simple"]


def test_icons_are_crisp_on_high_dpi_screens(qtbot):
    """Every icon has renditions up to 4x of the sizes the pages draw (no upscaled blur)."""
    from PySide6.QtCore import QSize

    from app.gui.widgets import icon

    for name in ("ok", "warning", "error", "info", "pending", "skipped", "os", "cpu", "memory", "disk",
                 "python", "gpu", "app"):
        ic = icon(name)
        sizes = {s.width() for s in ic.availableSizes()}
        assert sizes, f"{name}: no renditions"
        for drawn in (20, 22):
            for dpr in (1, 2, 4):
                assert max(sizes) >= drawn * dpr, f"{name} at {drawn}px x{dpr}"
        pm = ic.pixmap(QSize(20, 20), 2.0)
        assert pm.width() == 40 and pm.devicePixelRatio() == 2.0


# ---------------------------------------------------------------- the approval point
def _settle(qtbot, page) -> None:
    qtbot.waitUntil(lambda: not page.is_busy() and not page._debounce.isActive(), timeout=30000)


def test_environment_page_approves_the_plan_and_plans_anew_when_anything_changes(qtbot, host, env_state,
                                                                                  tmp_path, monkeypatch):
    """The Environment page is where the plan is made and approved; any change of its inputs,
    or of the recommendation behind it, withdraws the approval until the checks pass again."""
    import app.core.install.checks
    from app.core.recommend import Choices
    from app.gui.pages.environment import EnvironmentPage

    monkeypatch.setattr(app.core.install.checks, "check_indexes", lambda p: [])  # no network here
    _wiz, state, (page,) = host(EnvironmentPage, state=env_state)
    session = state.session
    page.initializePage()
    with qtbot.waitSignal(page.preflight_done, timeout=30000, check_params_cb=lambda ok: ok):
        page.location.setText(str(tmp_path / "envs"))
    _settle(qtbot, page)
    first = session.approved_plan
    assert page.isComplete() and first is not None and first.request.recommendation is session.recommendation
    assert session.checks and [c.name for c in session.checks] == [n for n, *_ in page.checks]

    page.name.setText("other")  # withdrawn at once, before the new checks ran
    assert session.approved_plan is None and not page.isComplete()
    with qtbot.waitSignal(page.preflight_done, timeout=30000, check_params_cb=lambda ok: ok):
        pass
    _settle(qtbot, page)
    second = session.approved_plan
    assert second is not None and second is not first and second.env_path == tmp_path / "envs" / "other"

    # Back on the Recommendation page, other choices: the plan is gone; this page plans anew.
    session.choose(Choices(backend="cpu", torch=session.recommendation.torch_version))
    session.recommend()
    assert session.approved_plan is None
    with qtbot.waitSignal(page.preflight_done, timeout=30000, check_params_cb=lambda ok: ok):
        page.initializePage()
    _settle(qtbot, page)
    third = session.approved_plan
    assert third is not None and third.request.recommendation is session.recommendation
    assert page.isComplete()


def test_environment_page_refuses_an_unreachable_index(qtbot, host, env_state, tmp_path, unreachable):
    """The pre-flight's refusal is shown on the page, and nothing is approved."""
    from app.gui.pages.environment import EnvironmentPage

    _wiz, state, (page,) = host(EnvironmentPage, state=env_state)
    page.initializePage()
    page.advanced.set_expanded(True)
    with qtbot.waitSignal(page.preflight_done, timeout=60000, check_params_cb=lambda ok: not ok):
        page.location.setText(str(tmp_path / "envs"))
        page.index_url.setText(unreachable.refused_url)
        page.mirror.setText(unreachable.refused_url)  # no other host is asked either
    _settle(qtbot, page)
    assert not page.isComplete() and state.session.approved_plan is None
    port = unreachable.refused_url.split("//", 1)[1].split("/", 1)[0]
    assert any(s == "error" and port in m and h for _n, s, m, h in page.checks), page.checks
    assert not (tmp_path / "envs").exists()
