"""The wizard's second path: Welcome -> the environments list -> a task (check, repair, upgrade)."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtWidgets import QWizard

from app.core.env import registry
from app.gui import i18n
from app.gui.pages import PageId
from tests.helpers import site_packages, venv_python

pytestmark = pytest.mark.gui



@pytest.fixture
def wizard(qtbot, english):
    from app.gui.wizard import SetupWizard

    w = SetupWizard(auto_detect=False)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    return w


def _fake(root: Path, torch: str = "2.13.0+cpu", cuda: str | None = None) -> Path:
    sp = site_packages(root)
    sp.mkdir(parents=True)
    venv_python(root).parent.mkdir()
    venv_python(root).write_text("", encoding="utf-8")
    home = os.path.dirname(getattr(sys, "_base_executable", sys.executable))  # a Python's folder that exists
    (root / "pyvenv.cfg").write_text(f"home = {home}\nversion_info = 3.11.7\n", encoding="utf-8")
    d = sp / f"torch-{torch}.dist-info"
    d.mkdir()
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {torch}\n", encoding="utf-8")
    (sp / "torch").mkdir()
    (sp / "torch" / "version.py").write_text(f"__version__ = '{torch}'\ncuda: Optional[str] = {cuda!r}\n",
                                             encoding="utf-8")
    return root


def test_welcome_offers_two_paths_and_each_ends_on_its_own_last_page(wizard, qtbot):
    wiz = wizard
    assert wiz.welcome.nextId() == int(PageId.SYSTEM)
    assert wiz.welcome.steps_title.isVisible() and not wiz.welcome.existing_note.isVisible()
    wiz.welcome.choose_existing(True)
    assert wiz.welcome.nextId() == int(PageId.ENVS)
    assert wiz.welcome.existing_note.isVisible() and not wiz.welcome.steps_title.isVisible()
    wiz.setStartId(int(PageId.DONE))
    wiz.restart()
    assert wiz.nextId() == -1  # Done stays the last page of the setup path
    assert not wiz.button(QWizard.WizardButton.NextButton).isVisible()


def test_environments_list_shows_each_env_and_follows_the_language(wizard, qtbot, tmp_path):
    from app.core.lifecycle.discover import describe

    ok = _fake(tmp_path / "ok-env")
    cuda = _fake(tmp_path / "cuda-env", "2.14.1", "13.0")
    registry.record_verification(ok, registry.Verification(True, "2026-12-01T10:15:00+00:00", "2.13.0+cpu"),
                                 {"torch": "2.13.0+cpu"})
    page = wizard.page(int(PageId.ENVS))
    page.set_environments([describe(ok, ["registry"]), describe(cuda, ["~/.venvs"])])
    assert page.tree.topLevelItemCount() == 2
    rows = {page.tree.topLevelItem(i).text(0).split()[0]: page.tree.topLevelItem(i) for i in range(2)}
    assert rows[str(ok)].text(1) == "2.13.0+cpu" and rows[str(ok)].text(2) == "CPU only"
    assert rows[str(ok)].text(6) == "verified 2026-12-01 10:15"
    assert rows[str(cuda)].text(2) == "CUDA 13.0" and rows[str(cuda)].text(5) == "never"
    assert rows[str(cuda)].text(6) == "not checked yet"
    page.select(cuda)
    assert page.check_btn.isEnabled() and page.upgrade_btn.isEnabled() and page.remove_btn.isEnabled()
    assert not page.isComplete()  # Next waits for an action
    i18n.set_language("zh_CN")
    qtbot.waitUntil(lambda: page.title() == "你的 PyTorch 环境", timeout=3000)
    assert rows[str(cuda)].text(6) == "尚未检查" and rows[str(ok)].text(2) == "仅 CPU"
    assert re.search(r"[\u4e00-\u9fff]", page.check_btn.text())


def test_remove_asks_first_and_deletes_only_after_yes(wizard, qtbot, tmp_path):
    from app.core.env.backends import backend_for
    from app.core.install import InstallPlan, InstallRequest
    from app.core.lifecycle.discover import describe
    from app.core.sources.settings import SourceSettings
    from tests.factories import make_install_result

    env = _fake(tmp_path / "made-here")
    p = InstallPlan(request=InstallRequest(env_path=env), env_path=env, backend=backend_for("venv", "uv"),
                    python=None, python_request=None, packages=("torch",), index=SourceSettings(), new_env=True,
                    estimate_mb=1, estimate_why="test")
    registry.record_install(make_install_result(env), p, None)
    page = wizard.page(int(PageId.ENVS))
    page.set_environments([describe(env, ["registry"])])
    page.select(env)
    asked: list[str] = []
    page.confirm_remove = lambda summary, ours: asked.append(summary) or False
    page.remove_selected()
    qtbot.waitUntil(lambda: bool(asked) and not page.is_busy(), timeout=10000)
    assert env.exists() and "files" in asked[0]  # "No": nothing deleted
    page.confirm_remove = lambda summary, ours: True
    page.remove_selected()
    qtbot.waitUntil(lambda: not env.exists() and not page.is_busy(), timeout=10000)
    assert registry.find(env) is None


def test_a_refused_upgrade_plan_says_why_in_the_wizards_language(wizard, qtbot, tmp_path):
    env = _fake(tmp_path / "e")
    page = wizard.page(int(PageId.ENV_TASK))
    page.set_task("upgrade", str(env))  # plans at once (the recommendation for this machine)
    qtbot.waitUntil(lambda: page.status() in ("ready", "failed"), timeout=60000)
    page.torch_edit.setText("torch==2.13.0+cpu")  # the expert's field: exactly this build
    page.make_plan()
    qtbot.waitUntil(lambda: page.status() == "failed", timeout=20000)
    assert "torch 2.13.0+cpu is already installed" in page.result.text()
    assert "envs repair" in page.result.text()
    i18n.set_language("zh_CN")
    qtbot.waitUntil(lambda: page.title() == "安全地升级 PyTorch", timeout=3000)
    assert "已经安装了 torch 2.13.0+cpu" in page.result.text()


@pytest.mark.slow
def test_check_from_the_list_runs_verify_and_doctor(wizard, qtbot, torch_env):
    from app.core.lifecycle.discover import describe

    env, _py = torch_env
    wiz = wizard
    wiz.welcome.choose_existing(True)
    wiz.next()
    envs = wiz.currentPage()
    assert wiz.currentId() == int(PageId.ENVS)
    qtbot.waitUntil(lambda: not envs.is_busy(), timeout=60000)
    envs.set_environments([describe(env, ["test"])])
    envs.select(env)
    envs.choose("check")
    assert wiz.currentId() == int(PageId.ENV_TASK)
    task = wiz.currentPage()
    qtbot.waitUntil(lambda: task.status() == "succeeded", timeout=240000)
    assert task.checks.topLevelItemCount() >= 6
    assert "works here" in task.result.text()
    assert task.findings.isVisible()
    assert wiz.button(QWizard.WizardButton.FinishButton).isVisible()
    assert registry.find(env).verification.ok
