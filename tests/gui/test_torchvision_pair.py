"""Must show 1 (issue 13): with torchvision ticked, the wizard recommends and installs a WORKING
torch + torchvision pair from local sources, on this machine, with no error page on the way.

The sources: a wheel folder filled once by ``pip download`` from the indexes pip is configured
with (tests/pair_wheels.py: PyPI's torch 2.14.1 with its dependencies, torchvision 0.29.1 and
0.28.0, kept across runs in the temporary directory), beside the local folder with the torch
2.13.0 CPU wheel. PyPI's torchvision is a CUDA build, so torch 2.13.0+cpu with torchvision
0.28.0 must not be offered; the pair that works here is PyPI's torch 2.14.1 (the standard
build, its CUDA libraries unused) with torchvision 0.29.1, and the engine says what that costs.

The folders are typed into the Environment page's field, as a user would; no index can be reached
(the PyTorch server is a 127.0.0.1 port that refuses), so the session binds the engine to the
folders' wheels and asks again with the ticked companion. Everything is real: detection, the
engine, the plan and pre-flight, an offline uv install (with
a cold, then a warm, uv cache: both timed), the verification, and torchvision's own operator
run in the new environment. The command the Environment page shows is the one the report says
ran (must show 4). Screenshots of the pages go to $TORCH_SETUP_SHOTS (docs/screenshots when
refreshing the docs), else to the test's temporary folder.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWizard

from app.gui import i18n
from app.gui.pages import PageId
from app.gui.state import WizardState

pytestmark = [pytest.mark.gui, pytest.mark.slow, pytest.mark.timeout(3600)]
LANGS = ("en", "zh_CN")
NMS = ("import torch, torchvision; b = torch.tensor([[0., 0., 10., 10.], [1., 1., 11., 11.]]); "
       "print(torch.__version__, torchvision.__version__, torchvision.ops.nms(b, torch.tensor([.9, .8]), .5).tolist())")


@pytest.fixture(scope="module")
def pair():
    from tests.pair_wheels import pair_folder

    if sys.platform != "linux" or (sys.version_info[0], sys.version_info[1]) != (3, 11):
        pytest.skip("the pair's wheels are for CPython 3.11 on Linux x86-64 (this machine)")
    try:
        return pair_folder()
    except RuntimeError as exc:
        if os.environ.get("TORCH_SETUP_REQUIRE_WHEELS"):
            pytest.fail(str(exc))
        pytest.skip(str(exc))


def _shots(tmp_path: Path) -> Path:
    out = Path(os.environ.get("TORCH_SETUP_SHOTS") or tmp_path / "shots")
    out.mkdir(parents=True, exist_ok=True)
    return out


def _settle(qtbot, ms: int = 250) -> None:
    qtbot.wait(ms)
    QApplication.processEvents()


def _grab(qtbot, widget, out: Path, stem: str) -> list[Path]:
    """The widget in each language (switched live), back to English after."""
    saved = []
    for lang in LANGS:
        i18n.set_language(lang)
        _settle(qtbot)
        path = out / f"{stem}-{lang}.png"
        assert widget.grab().save(str(path)), path
        saved.append(path)
    i18n.set_language("en")
    _settle(qtbot)
    return saved


def _next(qtbot, w, expect: PageId) -> None:
    button = w.button(QWizard.WizardButton.CommitButton if w.currentPage().isCommitPage()
                      else QWizard.WizardButton.NextButton)
    assert button.isVisible() and button.isEnabled(), f"Next is not clickable on {PageId(w.currentId()).name}"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert w.currentId() == int(expect), f"expected {expect.name}, on {PageId(w.currentId()).name}"


# long: one user's whole path through the wizard, with its checks and screenshots on the way
def test_torchvision_ticked_installs_a_working_pair_from_local_sources(qtbot, tmp_path, monkeypatch, pair,
                                                                       local_wheels, unreachable):
    from app.core import install as core
    from app.gui.pages._commands import commands_text
    from app.gui.wizard import SetupWizard

    folder, downloaded = pair
    out = _shots(tmp_path)
    cache = tmp_path / "uv-cache"
    monkeypatch.setenv("UV_CACHE_DIR", str(cache))  # cold: nothing of these wheels unpacked yet
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter"))
    # no index can be reached (as on this machine, where the PyTorch server is out of reach): a
    # 127.0.0.1 port that refuses stands in for it, so the answer comes at once and never from outside
    monkeypatch.setenv("TORCH_SETUP_TORCH_INDEX", unreachable.refused_url.replace("/simple/", "/whl/"))
    envs_dir = tmp_path / "envs"
    i18n.set_language("en")
    state = WizardState(skip_bench=True)
    w = SetupWizard(state=state, lang="en")
    qtbot.addWidget(w)
    w.resize(1000, 760)
    w.show()
    qtbot.waitExposed(w)
    try:
        _next(qtbot, w, PageId.SYSTEM)
        qtbot.waitUntil(w.currentPage().isComplete, timeout=60000)

        # Recommendation: tick torchvision in "Change…"; the engine gives the newest pair there is
        _next(qtbot, w, PageId.RECOMMENDATION)
        rec_page = w.currentPage()
        qtbot.waitUntil(rec_page.isComplete, timeout=60000)
        dlg = rec_page.change_dialog()
        qtbot.addWidget(dlg)
        dlg.pkg_boxes["torchvision"].setChecked(True)
        assert dlg.works(), dlg.conflict.text()
        with qtbot.waitSignal(rec_page.recommended, timeout=60000):
            rec_page.apply_change(dlg.selection())
            dlg.accept()
        qtbot.waitUntil(rec_page.isComplete, timeout=60000)
        assert state.session.recommendation.packages == ("torch==2.14.1+cpu", "torchvision==0.29.1+cpu")

        # Environment: the two local folders typed into the page's field. No index answers, so the
        # folders' wheels are all there is: the same wishes are asked again over them
        _next(qtbot, w, PageId.ENVIRONMENT)
        env_page = w.currentPage()
        env_page.location.setText(str(envs_dir))
        env_page.name.setText("torch-vision")
        env_page.find_links.setText(f"{folder}; {local_wheels}")
        qtbot.waitUntil(env_page.isComplete, timeout=180000)
        rec = state.session.recommendation
        assert (rec.backend, rec.variant, rec.torch_version) == ("cpu", "cu130", "2.14.1"), rec.summary
        assert rec.packages == ("torch==2.14.1", "torchvision==0.29.1") and rec.no_index
        assert "rec.cost_standard_build_with" in rec.cost_codes
        assert not rec.warning_codes, rec.texts("en").warnings  # the folders hold it: nothing to warn of
        note = env_page.sources_note.text()
        assert not env_page.sources_note.isHidden()
        assert note.startswith("Why this version: torch 2.14.1, from the wheels in your folders alone, because "
                               "the PyTorch server cannot be reached (") and "refuses connections" in note
        assert "standard build of torch 2.14.1" in note and "torchvision 0.29.1 works on this computer" in note
        _grab(qtbot, w, out, "13-environment-folders")

        # Back on the Recommendation page: the pair the folders hold, and Change… shows why the
        # CPU-only build is not offered with torchvision
        w.back()
        assert w.currentId() == int(PageId.RECOMMENDATION)
        qtbot.waitUntil(lambda: rec_page.current_plan() is not None, timeout=60000)
        assert "2.14.1" in rec_page.headline.text() and rec_page.error_banner.isHidden()
        words = rec.texts("en")
        assert any("standard build of torch 2.14.1" in c and "torchvision 0.29.1 works on this computer" in c
                   for c in words.costs)
        _grab(qtbot, w, out, "13-recommendation-torchvision")
        dlg = rec_page.change_dialog()
        qtbot.addWidget(dlg)
        dlg.resize(760, 560)
        dlg.show()
        assert dlg.pkg_boxes["torchvision"].isChecked()
        dlg.backend.setCurrentIndex(dlg.backend.findData("cpu"))
        builds = {dlg.variant.itemData(i): dlg.variant.model().item(i) for i in range(dlg.variant.count())}
        assert not builds["cpu"].isEnabled() and "CUDA 13.0 build" in builds["cpu"].toolTip()
        assert builds["cu130"].isEnabled() and "standard build" in builds["cu130"].text()
        _grab(qtbot, dlg, out, "13-change-dialog")
        dlg.reject()
        _next(qtbot, w, PageId.ENVIRONMENT)
        env_page = w.currentPage()
        qtbot.waitUntil(env_page.isComplete, timeout=180000)
        assert state.session.recommendation is rec  # the same folders: the same recommendation

        # only the Pythons the held wheels are for; the command that will run
        model = env_page.python.model()
        current = env_page.python.currentIndex()
        assert model.item(current).isEnabled() and "3.11" in env_page.python.currentText()
        for i in range(env_page.python.count()):
            text = env_page.python.itemText(i)
            # (an interpreter whose version detection could not read in time, "Python ?", is offered:
            # the pre-flight runs it and checks; it is never the default)
            if "Python 3.11" not in text and not text.startswith("Python ?"):
                assert not model.item(i).isEnabled() and model.item(i).toolTip(), env_page.python.itemText(i)
        plan = state.session.approved_plan
        assert plan is not None and plan.index.offline
        shown = env_page.command.toPlainText()
        assert shown == commands_text(plan.shown_commands())
        _grab(qtbot, w, out, "13-environment-python")
        env_page.python.showPopup()
        _settle(qtbot)
        popup = env_page.python.view().window()
        _grab(qtbot, popup, out, "13-environment-python-list")
        env_page.python.hidePopup()

        # Install: offline from the two folders, a cold uv cache
        _next(qtbot, w, PageId.INSTALL)
        install = w.currentPage()
        qtbot.waitUntil(lambda: install.status() in ("succeeded", "failed", "cancelled"), timeout=3000000)
        assert install.status() == "succeeded", install.error_panel.message.text() + "\n" + \
            install.error_panel.lines.toPlainText()
        res = state.session.install_result
        assert res.packages["torch"] == "2.14.1" and res.packages["torchvision"] == "0.29.1"
        ran = commands_text([c.argv for c in res.commands_run])
        assert ran == shown, "the report records exactly the command the Environment page showed"
        env = Path(res.env_path)
        check = subprocess.run([str(res.python), "-c", NMS], capture_output=True, text=True, encoding="utf-8", timeout=600)
        assert check.returncode == 0, check.stderr[-2000:]
        assert check.stdout.split() == ["2.14.1+cu130", "0.29.1+cu130", "[0]"], check.stdout
        pip = subprocess.run([str(env / "bin" / "pip"), "--version"], capture_output=True, text=True, encoding="utf-8", timeout=120)
        assert pip.returncode == 0 and str(env) in pip.stdout  # seeded offline from ensurepip

        # Verify: green, on the processor
        _next(qtbot, w, PageId.VERIFY)
        verify = w.currentPage()
        qtbot.waitUntil(lambda: verify.status() not in ("idle", "running"), timeout=600000)
        vr = state.session.verify_report
        assert verify.status() == "passed" and vr is not None and vr.ok, vr

        # Done: the report says what ran; the kernel button with its commands
        _next(qtbot, w, PageId.SPEEDTEST)
        _next(qtbot, w, PageId.DONE)
        done = w.currentPage()
        qtbot.waitUntil(lambda: bool(state.saved_reports), timeout=60000)
        data = json.loads(next(p for p in state.saved_reports if p.suffix == ".json").read_text(encoding="utf-8"))
        assert commands_text([c["argv"] for c in data["install"]["commands_run"]]) == shown
        assert done.kernel_button.isEnabled() and "ipykernel install --user" in done.jupyter_kernel.edit.text()
        _grab(qtbot, w, out, "13-done-kernel")

        # the same plan again, into a second env with the now warm cache: the time a repeat takes
        second = core.plan(dataclasses.replace(plan.request, env_path=envs_dir / "warm"))
        warm = core.install(second)
        print(f"\npair: {downloaded['bytes'] / 1e9:.2f} GB in {len(downloaded['files'])} wheels "
              f"(pip download {downloaded['download_s']} s, cached across runs); uv install offline: cold cache "
              f"{res.duration_s:.1f} s, warm cache {warm.duration_s:.1f} s")
    finally:
        for p in w.busy_pages():
            p.cancel_and_wait(120)
        w.hide()
        shutil.rmtree(envs_dir, ignore_errors=True)  # gigabytes: not left for pytest's kept folders
        shutil.rmtree(cache, ignore_errors=True)
        i18n.set_language("en")
