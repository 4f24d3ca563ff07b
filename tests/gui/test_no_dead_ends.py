"""No dead ends in the wizard (issue 13): wishes are constraints, impossible entries are greyed
with the reason, a conflict is a choice (never an error page), the command shown is the one that
runs, and the Done page registers a Jupyter kernel with one click.

Real engine, planner and pre-flight; Qt offscreen. Machines are SystemReports built from dicts.
"""
from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtWidgets import QDialogButtonBox, QWizard

from app.core.detection.system import SystemReport
from app.core.pipeline.session import Session
from app.core.recommend import Choices, WheelFiles, options, recommend
from app.gui import i18n
from app.gui.state import WizardState

pytestmark = pytest.mark.gui

PYTHONS = [(f"3.{m}.1", f"/opt/py/bin/python3.{m}") for m in range(6, 14)]



@pytest.fixture
def host(qtbot):
    def build(*classes, state: WizardState):
        wiz = QWizard()
        pages = [cls(state) for cls in classes]
        for i, page in enumerate(pages):
            wiz.setPage(i, page)
        qtbot.addWidget(wiz)
        wiz.resize(960, 700)
        return wiz, pages

    return build


def cpu_box(**over) -> SystemReport:
    d = {"schema_version": 1, "os": {"family": "linux", "version": "Ubuntu 24.04", "glibc": "2.39"},
         "arch": "x86_64", "python": {"version": "3.11.7", "executable": sys.executable},
         "cpu": {"model": "test CPU", "cores": 4, "threads": 8}, "memory_mb": 16000, "disk_free_mb": 400000,
         "gpus": [], "env": {}, "probes": []}
    d.update(over)
    return SystemReport.from_dict(d)


def _ok(dlg) -> bool:
    return dlg.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()


# ---------------------------------------------------------------- Recommendation + Change…
def test_ticking_torchvision_gives_a_working_pair_not_an_error(qtbot, host):
    from app.gui.pages.recommendation import RecommendationPage

    state = WizardState(session=Session.resume(system=cpu_box()))
    _wiz, (page,) = host(RecommendationPage, state=state)
    with qtbot.waitSignal(page.recommended, timeout=20000):
        page.initializePage()
    dlg = page.change_dialog()
    qtbot.addWidget(dlg)
    assert dlg.pkg_boxes["torchvision"].isEnabled()
    dlg.pkg_boxes["torchvision"].setChecked(True)
    assert dlg.works() and _ok(dlg) and not dlg.choices.torch  # the torch version stays the engine's
    assert "torch 2.14.1" in dlg.gives.text()
    model = dlg.torch.model()
    greyed = {model.item(i).text(): model.item(i).toolTip() for i in range(dlg.torch.count())
              if not model.item(i).isEnabled()}
    assert "no torchvision release matches torch 2.15" in greyed["2.15.0"]
    assert "2.15.0: " in dlg.why_not.toPlainText()
    with qtbot.waitSignal(page.recommended, timeout=20000):
        page.apply_change(dlg.selection())
    qtbot.waitUntil(page.isComplete)
    rec = state.session.recommendation
    assert rec.torch_version == "2.14.1" and "torchvision==0.29.1+cpu" in rec.packages
    assert page.error_banner.isHidden() and not page.costs_title.isHidden()
    costs = [w.text() for w in page.findChildren(type(page.costs_box.itemAt(0).widget()))
             if w.parent() is not None and "torchvision needs torch 2.14.1 or older" in w.text()]
    assert costs


def test_a_conflict_is_a_choice_of_which_wish_to_drop(qtbot, host):
    from app.gui.pages.recommendation import RecommendationPage

    state = WizardState(session=Session.resume(system=cpu_box()))
    state.session.choose(Choices(torch="2.15.0", packages=["torchvision"]))
    _wiz, (page,) = host(RecommendationPage, state=state)
    page.initializePage()
    qtbot.waitUntil(lambda: not page.is_busy() and page._error is not None, timeout=20000)
    assert not page.error_banner.isHidden() and page.error_banner.kind == "warning"
    assert "No build satisfies all your choices" in page.error_banner.text()
    labels = [b.text() for b in page.drop_buttons]
    assert labels[:2] == ["Use torch 2.14.1", "Drop torchvision"] and labels[-1] == "Use the recommendation"
    i18n.set_language("zh_CN")
    qtbot.waitUntil(lambda: page.drop_buttons and "torchvision" in page.drop_buttons[1].text()
                    and "不装" in page.drop_buttons[1].text(), timeout=5000)
    assert "没有任何版本能同时满足" in page.error_banner.text()
    i18n.set_language("en")
    qtbot.waitUntil(lambda: page.drop_buttons and page.drop_buttons[0].text() == "Use torch 2.14.1", timeout=5000)
    with qtbot.waitSignal(page.recommended, timeout=20000):
        page.drop_buttons[0].click()
    qtbot.waitUntil(page.isComplete)
    assert state.session.recommendation.torch_version == "2.14.1"
    assert state.session.choices == Choices(torch="2.14.1", packages=["torchvision"])
    assert page.error_banner.isHidden()


def test_the_dialog_restores_the_nearest_working_choice(qtbot, host):
    from app.gui.pages.recommendation import RecommendationPage

    state = WizardState(session=Session.resume(system=cpu_box()))
    state.session.choose(Choices(torch="2.15.0", packages=["torchvision"]))
    _wiz, (page,) = host(RecommendationPage, state=state)
    dlg = page.change_dialog()
    qtbot.addWidget(dlg)
    assert not dlg.works() and not _ok(dlg) and not dlg.nearest.isHidden() and not dlg.conflict.isHidden()
    assert dlg.nearest.text() == "Use the nearest working choice: Use torch 2.14.1"
    dlg.nearest.click()
    assert dlg.works() and _ok(dlg) and dlg.choices == Choices(torch="2.14.1", packages=["torchvision"])
    assert dlg.nearest.isHidden()
    # a companion version typed by hand is a wish too: one that cannot be had is refused, with the way out
    dlg.other.setText("torchvision==0.28.0")
    dlg.other.editingFinished.emit()
    assert not dlg.works() and not _ok(dlg)
    dlg.nearest.click()
    assert dlg.works()


def test_the_dialog_offers_exactly_the_engines_entries(qtbot, host):
    from app.gui.pages.recommendation import RecommendationPage

    report = cpu_box(gpus=[{"vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080 Ti", "driver_version": "580.82.07",
                            "compute_capability": "6.1", "index": 0}])
    state = WizardState(session=Session.resume(system=report))
    _wiz, (page,) = host(RecommendationPage, state=state)
    dlg = page.change_dialog()
    qtbot.addWidget(dlg)
    i = dlg.backend.findData("cuda")
    dlg.backend.setCurrentIndex(i)
    assert dlg.choices.backend == "cuda"
    opts = options(report, None, dlg.choices)
    for combo, entries in ((dlg.backend, opts.backends), (dlg.variant, opts.variants), (dlg.torch, opts.torches),
                           (dlg.python, opts.pythons)):
        model = combo.model()
        assert [combo.itemData(j) or None for j in range(combo.count())] == [e.value for e in entries]
        assert [model.item(j).isEnabled() for j in range(combo.count())] == [e.valid for e in entries]
    # every entry it lets a user pick keeps a working combination
    for combo in (dlg.variant, dlg.torch, dlg.python):
        for j in range(combo.count()):
            if combo.model().item(j).isEnabled():
                before = dlg.choices
                combo.setCurrentIndex(j)
                assert dlg.works(), (combo.accessibleName(), combo.itemText(j))
                recommend(report, None, dlg.choices)
                dlg._set(before)


# ---------------------------------------------------------------- Environment: folders without an index
@pytest.mark.skipif(sys.version_info[:2] != (3, 11) or not sys.platform.startswith("linux"),
                    reason="the folder holds a Linux cp311 wheel for the environment's Python, this one (3.11 on Linux)")
def test_folders_without_the_pair_and_no_index_lead_back_to_the_ways_out(qtbot, host, tmp_path, monkeypatch,
                                                                         unreachable):
    """torchvision ticked, a wheel folder holding only torch 2.13.0+cpu, no index in reach: the
    Environment page refuses with the reason, and back on the Recommendation page the engine's ways
    out are buttons; dropping torchvision gives the CPU build the folder holds, which the
    Environment page then passes."""
    from app.gui.pages.environment import EnvironmentPage
    from app.gui.pages.recommendation import RecommendationPage

    monkeypatch.setenv("TORCH_SETUP_TORCH_INDEX", unreachable.refused_url.replace("/simple/", "/whl/"))
    folder = tmp_path / "wheels"
    folder.mkdir()
    (folder / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    wish = Choices(packages=("torchvision",))
    state = WizardState(session=Session.resume(system=cpu_box(), choices=wish,
                                               recommendation=recommend(cpu_box(), None, wish)))
    wiz, (rec_page, env_page) = host(RecommendationPage, EnvironmentPage, state=state)
    wiz.show()
    qtbot.waitUntil(rec_page.isComplete, timeout=20000)
    wiz.next()
    assert wiz.currentPage() is env_page
    env_page.advanced.set_expanded(True)
    with qtbot.waitSignal(env_page.preflight_done, timeout=60000):
        env_page.location.setText(str(tmp_path / "envs"))
        env_page.find_links.setText(str(folder))
    qtbot.waitUntil(lambda: not env_page.is_busy() and not env_page._debounce.isActive(), timeout=60000)
    refused = [c for c in env_page.checks if c[1] == "error"]
    assert refused and "your sources hold no torchvision" in refused[0][2], env_page.checks
    # the ways out are one page back: the hint says so (not "choose one of the combinations", listed nowhere here)
    assert "Go Back to the Recommendation page" in refused[0][3], refused[0]
    assert not env_page.isComplete() and state.session.recommendation is None
    # back: the Recommendation page asks again and offers the ways out as buttons
    wiz.back()
    qtbot.waitUntil(lambda: not rec_page.is_busy() and bool(rec_page.drop_buttons), timeout=20000)
    assert not rec_page.error_banner.isHidden()
    labels = [b.text() for b in rec_page.drop_buttons]
    assert labels == ["Drop torchvision"], labels  # the only wish: one way out, not two that are the same
    with qtbot.waitSignal(rec_page.recommended, timeout=20000):
        rec_page.drop_buttons[0].click()
    rec = state.session.recommendation
    assert rec.packages == ("torch==2.13.0+cpu",) and rec.no_index  # what the folder holds
    wiz.next()
    qtbot.waitUntil(env_page.isComplete, timeout=60000)
    assert state.session.approved_plan.index.offline


# ---------------------------------------------------------------- Environment: Python and the command
def test_the_environment_offers_only_pythons_the_release_supports(qtbot, host, tmp_path):
    from app.gui.pages.environment import EnvironmentPage

    report = cpu_box(interpreters=[{"version": v, "executable": exe} for v, exe in PYTHONS])
    rec = recommend(report)  # torch 2.15.0: Python 3.11-3.15
    state = WizardState(session=Session.resume(system=report, recommendation=rec))
    _wiz, (page,) = host(EnvironmentPage, state=state)
    page.initializePage()
    model = page.python.model()
    items = {page.python.itemData(i): model.item(i) for i in range(page.python.count())}
    for v, exe in PYTHONS:
        minor = int(v.split(".")[1])
        assert items[exe].isEnabled() == (minor >= 11), v
        if minor < 11:
            assert items[exe].toolTip() == "torch 2.15.0 supports Python 3.11–3.15"
    assert model.item(page.python.currentIndex()).isEnabled()
    assert "(recommended)" in page.python.currentText()
    note = page.python_note.text()
    assert "3.6.1" in note and "3.10.1" in note and "Change…" in note and not page.python_note.isHidden()
    # a folder holding only cp311 wheels: 3.12 and 3.13 are not offered either, with that reason
    d = tmp_path / "w"
    d.mkdir()
    (d / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    state.session.use_available(WheelFiles.from_folders([d]))
    state.session.recommend()
    page.initializePage()
    model = page.python.model()
    enabled = [page.python.itemData(i) for i in range(page.python.count()) if model.item(i).isEnabled()]
    assert enabled and all("3.11" in str(x) or x == sys.executable for x in enabled)
    i13 = page.python.findData("/opt/py/bin/python3.13")
    assert model.item(i13).toolTip() == "your sources hold torch 2.13.0 only for Python 3.11"


@pytest.mark.slow
def test_a_python_outside_the_range_fails_the_preflight_and_the_command_is_shown(qtbot, host, tmp_path,
                                                                                   local_wheels):
    from app.gui.pages._commands import commands_text
    from app.gui.pages.environment import EnvironmentPage

    old = f"3.{sys.version_info[1] - 2}" if sys.version_info[1] > 9 else "3.6"
    wish = Choices(python=old)
    rec = recommend(cpu_box(), None, wish)  # a build for another Python than this one
    state = WizardState(session=Session.resume(system=cpu_box(), choices=wish, recommendation=rec))
    _wiz, (page,) = host(EnvironmentPage, state=state)
    page.initializePage()
    page.advanced.set_expanded(True)
    page.index_url.setText("https://pypi.org/simple")
    page.find_links.setText(str(local_wheels))
    i = page.python.findData(sys.executable)
    assert i >= 0 and not page.python.model().item(i).isEnabled()  # greyed: never offered
    with qtbot.waitSignal(page.preflight_done, timeout=60000):
        page.location.setText(str(tmp_path / "envs"))
        page.python.setCurrentIndex(i)  # forced anyway (a script, an old answer): the pre-flight refuses it
    qtbot.waitUntil(lambda: not page.is_busy() and not page._debounce.isActive(), timeout=60000)
    python = next(c for c in page.checks if c[0] == "python")
    assert python[1] == "error" and f"you chose Python {old}" in python[2]
    assert not page.isComplete()
    # the command that would run is shown all the same, from the plan
    planned = page._planned
    assert planned is not None and page.command.toPlainText() == commands_text(planned.plan.shown_commands())
    assert shlex.split(page.command.toPlainText().splitlines()[-1])[:3] == [planned.plan.backend.uv, "pip",
                                                                            "install"]


# ---------------------------------------------------------------- Done: the Jupyter kernel button
@pytest.mark.slow
def test_the_done_page_registers_a_jupyter_kernel(qtbot, host, tmp_path, monkeypatch):
    from app.core.env import backends as envs
    from app.core.proc.runner import run
    from app.gui.pages.done import DonePage
    from tests.factories import make_install_result

    env = tmp_path / "nb env"
    run([envs.uv_bin(), "venv", "--quiet", "--python", sys.executable, str(env)], timeout=120).raise_for_status("uv")
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter"))
    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "home"))
    state = WizardState(session=Session.resume(install=make_install_result(env, envs.env_python(env))))
    wiz, (page,) = host(DonePage, state=state)
    wiz.show()
    assert page.kernel_button.text() == "Register as a Jupyter kernel" and page.kernel_button.isEnabled()
    shown = [page.jupyter_install.edit.text(), page.jupyter_kernel.edit.text()]
    assert "ipykernel" in shown[0] and "-m ipykernel install --user --name torch-nb-env-" in shown[1]
    page.kernel_button.click()
    qtbot.waitUntil(lambda: page.kernel_result is not None or page._kernel_error is not None, timeout=600000)
    assert page.kernel_result is not None, page._kernel_error
    ran = [shlex.join(c.argv) for c in page.kernel_result.commands_run]
    assert ran == shown
    spec = json.loads((Path(page.kernel_result.path) / "kernel.json").read_text(encoding="utf-8"))
    assert Path(spec["argv"][0]) == envs.env_python(env)
    assert page.kernel_status.status == "ok" and page.jupyter_install.isHidden()
