"""The Install page over the real core: a real install, a real cancel (rolled back, no child
left), and a real failure (error, hint, log path offered)."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
psutil = pytest.importorskip("psutil")

from PySide6.QtCore import QObject, QUrl, Slot  # noqa: E402
from PySide6.QtGui import QDesktopServices, QGuiApplication  # noqa: E402
from PySide6.QtWidgets import QPushButton, QWizard  # noqa: E402

from app.core.base.events import LogEvent, PhaseEvent  # noqa: E402
from app.core.base.text import render  # noqa: E402
from app.core.pipeline.session import Session  # noqa: E402
from app.core.sources.settings import SourceSettings  # noqa: E402
from app.gui.state import WizardState  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.slow]


class _NextPage:
    """A stand-in for the page after Install, so the wizard has somewhere to go."""


def approved(request) -> WizardState:
    """A state whose session approved ``request``'s plan (plan + pre-flight), as the
    Environment page does before the Install page may start."""
    session = Session()
    session.plan(request)
    assert session.approved_plan is not None
    return WizardState(session=session)


@pytest.fixture
def install_wizard(qtbot):
    from PySide6.QtWidgets import QWizardPage

    from app.gui.pages.install import InstallPage

    def build(state: WizardState):
        wiz = QWizard()
        before = QWizardPage()
        before.setTitle("Environment")
        page = InstallPage(state)
        after = QWizardPage()
        after.setTitle("Verify")
        wiz.setPage(3, before)
        wiz.setPage(4, page)
        wiz.setPage(5, after)
        wiz.setStartId(3)
        qtbot.addWidget(wiz)
        wiz.resize(820, 640)
        wiz.show()
        qtbot.waitExposed(wiz)
        return wiz, page

    return build


def _children() -> list:
    out = []
    for c in psutil.Process().children(recursive=True):
        try:
            if c.status() != psutil.STATUS_ZOMBIE:
                out.append(c)
        except psutil.NoSuchProcess:
            pass
    return out


class _UrlCatcher(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


def test_real_install_drives_progress_and_completes(qtbot, install_wizard, tmp_path, local_wheels):
    from app.core.install import InstallRequest

    env = tmp_path / "venv"
    state = approved(InstallRequest(env_path=env, kind="venv", installer="uv", packages=["torch==2.13.0"],
                                    sources=SourceSettings(find_links=[str(local_wheels)])))
    plan = state.session.approved_plan
    wiz, page = install_wizard(state)
    phases, logs = [], []
    with qtbot.waitSignal(page.state_changed, timeout=10000, check_params_cb=lambda s: s == "running"):
        wiz.next()
    assert wiz.currentPage() is page and page.is_busy()
    page._task.event.connect(lambda e: phases.append(e.name) if isinstance(e, PhaseEvent) else
                             logs.append(e) if isinstance(e, LogEvent) else None)
    # While it runs: no way back, no way on, a Cancel button.
    assert not page.isComplete()
    assert not wiz.button(QWizard.WizardButton.BackButton).isEnabled()
    assert page.cancel_button.isVisible()
    with qtbot.waitSignal(page.state_changed, timeout=300000, check_params_cb=lambda s: s != "running") as done:
        pass
    assert done.args == ["succeeded"], page.error_panel.message.text() + "\n" + page.log.plain_text()[-2000:]
    res = state.session.install_result
    assert res.torch_version.startswith("2.13.0")
    assert Path(res.python).exists() and Path(res.env_path) == env
    # The plan the page ran is the approved one, with its find-links.
    assert state.session.approved_plan is plan
    assert str(local_wheels) in [str(x) for x in plan.index.find_links]
    assert "install" in phases
    assert page.isComplete() and wiz.button(QWizard.WizardButton.CommitButton).isEnabled()
    assert not wiz.button(QWizard.WizardButton.BackButton).isEnabled()
    assert page.progress.value() == page.progress.maximum()
    assert "2.13.0" in page.status_label.text() and str(env) in page.status_label.text()
    assert page.log.line_count() > 0 and "torch" in page.log.plain_text()
    assert page.time_label.text().startswith("Elapsed")
    assert not page.cancel_button.isVisible()


def test_cancel_during_install_removes_env_and_leaves_no_child(qtbot, install_wizard, tmp_path, local_wheels):
    """pip (slow enough to catch mid-install): cancel while the installer runs."""
    from app.core.install import InstallRequest

    env = tmp_path / "venv-cancel"
    state = approved(InstallRequest(env_path=env, kind="venv", installer="pip", packages=["torch==2.13.0"],
                                    sources=SourceSettings(find_links=[str(local_wheels)])))
    wiz, page = install_wizard(state)
    installing = []
    with qtbot.waitSignal(page.state_changed, timeout=10000, check_params_cb=lambda s: s == "running"):
        wiz.next()
    page._task.event.connect(lambda e: installing.append(e) if isinstance(e, PhaseEvent)
                             and e.name == "install" and e.state == "start" else None)
    qtbot.waitUntil(lambda: bool(installing), timeout=120000)
    qtbot.waitUntil(lambda: bool(_children()), timeout=30000)  # the installer process is running
    assert env.exists()
    with qtbot.waitSignal(page.state_changed, timeout=5000, check_params_cb=lambda s: s == "cancelling"):
        page.cancel_button.click()
    assert "Cancelling" in page.status_label.text()
    assert not page.cancel_button.isEnabled()
    with qtbot.waitSignal(page.state_changed, timeout=60000, check_params_cb=lambda s: s == "cancelled"):
        pass
    assert not env.exists(), (page.status_label.text() + "\n" + page.log.plain_text()[-3000:]
                              + str(list(env.rglob("*"))[:20]))
    assert _children() == []
    assert "nothing was left behind" in page.status_label.text()
    assert not page.isComplete() and not page.is_busy()
    # Now, and only now, the user may go back to the Environment page.
    back = wiz.button(QWizard.WizardButton.BackButton)
    assert back.isEnabled()
    back.click()
    assert wiz.currentId() == 3


def test_cancel_and_wait_for_window_close(qtbot, install_wizard, tmp_path, local_wheels):
    """What the wizard's closeEvent does: cancel, block until rolled back."""
    from app.core.install import InstallRequest

    env = tmp_path / "venv-close"
    state = approved(InstallRequest(env_path=env, kind="venv", installer="pip", packages=["torch==2.13.0"],
                                    sources=SourceSettings(find_links=[str(local_wheels)])))
    wiz, page = install_wizard(state)
    with qtbot.waitSignal(page.state_changed, timeout=10000, check_params_cb=lambda s: s == "running"):
        wiz.next()
    qtbot.waitUntil(lambda: env.exists() and bool(_children()), timeout=60000)
    assert page.is_busy()
    assert page.cancel_and_wait(60.0) is True
    assert not env.exists()
    assert _children() == []
    qtbot.waitUntil(lambda: page.status() == "cancelled", timeout=5000)


def test_failed_install_shows_error_and_offers_the_log(qtbot, install_wizard, tmp_path, local_wheels):
    from app.core.install import InstallRequest

    env = tmp_path / "venv-fail"
    state = approved(InstallRequest(
        env_path=env, kind="venv", installer="uv", sources=SourceSettings(find_links=[str(local_wheels)]),
        packages=["torch==2.13.0", "torch-setup-no-such-package-4f7a==1.0"]))
    wiz, page = install_wizard(state)
    with qtbot.waitSignal(page.state_changed, timeout=10000, check_params_cb=lambda s: s == "running"):
        wiz.next()
    with qtbot.waitSignal(page.state_changed, timeout=300000, check_params_cb=lambda s: s != "running") as done:
        pass
    assert done.args == ["failed"]
    assert page.error_panel.isVisible()
    msg = page.error_panel.message.text()
    assert "failed" in msg.lower() and "Nothing was left behind" in msg
    assert "torch-setup-no-such-package-4f7a" in page.error_panel.lines.toPlainText() + msg
    log = page.error_panel.log_path
    assert log is not None and log.exists() and log.stat().st_size > 0
    assert str(log) in page.error_panel.path_label.text()
    assert page.error_panel.open_log.isVisible() and page.error_panel.copy_path.isVisible()
    page.error_panel.copy_path.click()
    assert QGuiApplication.clipboard().text() == str(log)
    catcher = _UrlCatcher()
    QDesktopServices.setUrlHandler("file", catcher, "open")
    try:
        page.error_panel.open_log.click()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert [u.toLocalFile() for u in catcher.urls] == [str(log)]
    assert not env.exists()
    assert not page.isComplete()
    assert wiz.button(QWizard.WizardButton.BackButton).isEnabled()
    assert page.retry_button.isVisible()
    assert log in state.log_paths


def test_progress_from_bytes_never_runs_backwards_and_estimates_time_left(qtbot):
    """The presenter's arithmetic on the core's events (the real installs above drive it too)."""
    import time

    from app.core.base.events import ProgressEvent
    from app.core.base.progress_model import InstallProgress
    from app.gui.pages._common import LogBatch
    from app.gui.pages.install import InstallPage

    now = [1000.0]
    page = InstallPage(WizardState())
    qtbot.addWidget(page)
    page.model = InstallProgress(clock=lambda: now[0])
    page._status = "running"
    page._started_at = time.monotonic() - 20
    page.progress.setRange(0, 0)
    page.on_event(ProgressEvent("torch", 50_000_000, 200_000_000))
    assert page.progress.maximum() == 1000 and page.progress.value() == 250
    assert page.package_label.text() == "torch: 47.7 MiB of 190.7 MiB"
    # A second package makes the known total larger: the bar holds instead of jumping back.
    page.on_event(ProgressEvent("sympy", 0, 6_000_000))
    assert page.progress.value() == 250
    page.on_event(LogBatch([ProgressEvent("torch", 150_000_000, 200_000_000),
                            ProgressEvent("sympy", 6_000_000, 6_000_000)]))
    assert page.progress.value() == int(156 / 206 * 1000)
    # 156 MB in 10 s: 50 MB left is about 3 s.
    now[0] += 10
    left = page.model.eta()
    assert left is not None and 2.5 < left < 4.0
    page._update_times()
    assert "left" in page.time_label.text() and page.time_label.text().startswith("Elapsed: 20 s")
    # Every download done, the installer still unpacking: a busy bar, no made-up time left.
    page.on_event(ProgressEvent("torch", 200_000_000, 200_000_000))
    assert page.progress.maximum() == 0
    assert page.model.eta() is None
    page._update_times()
    assert "left" not in page.time_label.text()
    assert page.package_label.text() == "Unpacking and installing the packages…"
    # uv's "+ name" lines: packages done, the bar counts them.
    page.on_event(ProgressEvent("torch", 9, 10, unit="packages"))
    assert page.progress.maximum() == 1000 and page.progress.value() == 900
    # An installer that counts packages instead of bytes.
    page2 = InstallPage(WizardState())
    qtbot.addWidget(page2)
    page2._status = "running"  # (a page that is not installing shows no package line)
    page2.on_event(ProgressEvent("numpy", 3, 12, unit="packages"))
    assert page2.progress.value() == 250
    assert page2.package_label.text() == "numpy (package 3 of 12)"


def test_closing_the_wizard_during_a_real_install_asks_then_rolls_back(qtbot, tmp_path, local_wheels, monkeypatch):
    """The whole SetupWizard, opened at the Install page over a prefilled state: closing the
    window mid-install asks, cancels, closes once the rollback is done, leaves nothing behind."""
    from app.core.install import InstallRequest
    from app.gui import i18n
    from app.gui.pages import PageId
    from app.gui.wizard import SetupWizard

    env = tmp_path / "venv-wizard-close"
    state = approved(InstallRequest(env_path=env, kind="venv", installer="pip", packages=["torch==2.13.0"],
                                    sources=SourceSettings(find_links=[str(local_wheels)])))
    w = SetupWizard(state=state, lang="en", auto_detect=False)
    qtbot.addWidget(w)
    w.setStartId(int(PageId.INSTALL))
    w.show()
    qtbot.waitExposed(w)
    page = w.currentPage()
    assert w.currentId() == int(PageId.INSTALL) and page.is_busy()
    qtbot.waitUntil(lambda: env.exists() and bool(_children()), timeout=60000)
    asked = []
    monkeypatch.setattr(w, "confirm_cancel_install", lambda: asked.append(1) or True)
    w.close()
    assert asked == [1]
    # The window stays responsive while the core rolls back, showing "Cancelling…", then closes.
    qtbot.waitUntil(lambda: not w.isVisible(), timeout=60000)
    assert not page.is_busy()
    assert page.status() == "cancelled"
    assert not env.exists()
    assert _children() == []
    i18n.set_language("en")


def test_unreachable_index_is_refused_at_approval_and_the_install_page_runs_nothing(
        qtbot, install_wizard, tmp_path, local_wheels):
    """The pre-flight refuses the plan (nothing approved); the Install page, reached anyway,
    installs nothing and sends the user back to the Environment page."""
    from app.core.base.errors import BadInput
    from app.core.install import InstallRequest

    env = tmp_path / "venv-unreachable"
    session = Session()
    with pytest.raises(BadInput) as refused:
        session.plan(InstallRequest(env_path=env, kind="venv", installer="uv", packages=["torch==2.13.0"],
                                    sources=SourceSettings(torch_index="http://127.0.0.1:9/simple",
                                                           find_links=[str(local_wheels)])))
    err = refused.value
    assert "127.0.0.1:9" in render(err.message) + "\n".join(err.lines) + render(err.hint)
    assert err.hint and err.log_path is not None and err.log_path.exists()
    assert session.approved_plan is None and session.planned is not None and not session.planned.approvable
    wiz, page = install_wizard(WizardState(session=session))
    with qtbot.waitSignal(page.state_changed, timeout=10000, check_params_cb=lambda s: s == "failed"):
        wiz.next()
    assert page.error_panel.hint.isVisible() and page.error_panel.hint.text().startswith("What to do:")
    assert "Environment page" in page.error_panel.hint.text()
    assert page.error_panel.log_path is not None and page.error_panel.log_path.exists()
    assert not env.exists() and session.install_result is None
    assert wiz.button(QWizard.WizardButton.BackButton).isEnabled()


def test_target_taken_after_approval_is_refused_before_anything_is_written(qtbot, install_wizard, tmp_path,
                                                                           local_wheels):
    """Between approval and the run only the disk is measured again: a folder that filled up
    meanwhile refuses the install; nothing is written and the approved plan is not changed."""
    from app.core.install import InstallRequest

    env = tmp_path / "venv-taken"
    state = approved(InstallRequest(env_path=env, kind="venv", installer="uv", packages=["torch==2.13.0"],
                                    sources=SourceSettings(find_links=[str(local_wheels)])))
    plan = state.session.approved_plan
    env.mkdir()
    (env / "thesis.tex").write_text("do not delete", encoding="utf-8")
    wiz, page = install_wizard(state)
    with qtbot.waitSignal(page.state_changed, timeout=10000, check_params_cb=lambda s: s == "running"):
        wiz.next()
    with qtbot.waitSignal(page.state_changed, timeout=120000, check_params_cb=lambda s: s != "running") as done:
        pass
    assert done.args == ["failed"]
    text = page.error_panel.message.text() + page.error_panel.lines.toPlainText()
    assert str(env) in text and "Nothing was changed" in text
    # what to do, and a button that offers the first free folder beside it (env-2)
    assert page.error_panel.explanation.isVisible()
    assert "Choose a new or empty folder" in page.error_panel.explanation.text()
    assert any(f"{env.name}-2" in (b.text() + b.toolTip()) for b in page.error_panel.findChildren(QPushButton)), \
        [b.text() for b in page.error_panel.findChildren(QPushButton)]
    assert page.error_panel.log_path is not None and page.error_panel.log_path.exists()
    assert sorted(p.name for p in env.iterdir()) == ["thesis.tex"]
    assert (env / "thesis.tex").read_text(encoding="utf-8") == "do not delete"
    assert state.session.approved_plan is plan and state.session.install_result is None
    assert wiz.button(QWizard.WizardButton.BackButton).isEnabled()


def test_install_page_installs_the_approved_plan_object_and_plans_nothing(qtbot, install_wizard, tmp_path,
                                                                          monkeypatch):
    """The object the Install page hands to the installer IS the approved plan: no plan() or
    preflight() runs on the Install page (both fail here if called)."""
    import app.core.install
    import app.core.install.checks
    import app.core.install.planning
    from app.core.install import Check, InstallRequest
    from app.core.install import plan as make_plan
    from app.core.pipeline.session import Planned
    from tests.factories import make_install_result

    env = tmp_path / "venv-approved"
    session = Session()
    the_plan = make_plan(InstallRequest(env_path=env, kind="venv", installer="uv", packages=["six"]))  # small: fits
    session.approve(Planned(the_plan, (Check("target", True, "ok"), Check("disk", True, "ok"))))
    assert session.approved_plan is the_plan

    def no_planning(*_args, **_kw):
        raise AssertionError("the Install page must not plan or run the pre-flight again")

    for module, name in ((app.core.install, "plan"), (app.core.install, "preflight"),
                         (app.core.install.planning, "plan"), (app.core.install.checks, "preflight")):
        monkeypatch.setattr(module, name, no_planning)
    installed = []

    def fake_install(p, *, on_event=None, cancel=None, checks=None, lock=None):
        installed.append((p, checks))
        return make_install_result(env)

    monkeypatch.setattr(app.core.install, "install", fake_install)
    wiz, page = install_wizard(WizardState(session=session))
    with qtbot.waitSignal(page.state_changed, timeout=10000, check_params_cb=lambda s: s == "succeeded"):
        wiz.next()
    assert len(installed) == 1
    ran, checks = installed[0]
    assert ran is the_plan and ran is session.approved_plan
    assert [c.name for c in checks] == ["target", "disk"]  # measured again, not planned again
    assert checks[0].ok and checks[0].message != "ok"
    assert session.install_result is not None and Path(session.install_result.env_path) == env
