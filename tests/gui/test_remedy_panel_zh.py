"""Must-show: the ten most common failures, in the zh_CN wizard's error panel, in Chinese.

Each recorded real output goes through the core call that meets it (an installer run's failure
through :func:`app.core.install.run.installer_failure`, PyTorch's own errors through a real
:func:`app.core.measure.probe.run_probe` of an interpreter that prints them), the resulting UserError
into the wizard's :class:`~app.gui.pages._common.ErrorPanel` with the language set to zh_CN,
and every text the panel shows (labels, buttons, tooltips, accessible names) is read: no
Latin-script word may appear but names of packages and products, versions, paths and numbers.

Why these ten: the project's field research (research/field-2026-12.md §1) ranks the pain points by frequency ×
damage; the top four are PyTorch's own errors (a CPU build on a GPU machine, "no kernel image",
Windows DLL failures, the driver too old), then mirrors refusing files (#5), slow downloads that
time out (#5/#8), damaged huge downloads and full disks (#8), "no version of torch==X+cpu"
(#9, the issue's own example) and the DNS failure issue 13 names ("Name or service not known").
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QAbstractButton, QLabel, QPlainTextEdit, QWidget

from app.core import remedies
from app.core.base.actions import ActionKind
from app.core.base.errors import UserError
from app.core.base.text import msg
from app.core.compat.data import load_compat
from app.core.install.run import installer_failure
from app.core.measure.probe import ProbeFailed, run_probe
from app.core.proc import runner
from app.gui import i18n
from app.gui.pages._common import ErrorPanel
from tests.helpers import fake_program

FIX = Path(__file__).resolve().parents[1] / "fixtures"

#: (fixture, how the core meets it, its code)
TOP10 = [
    ("failures/torch-not-compiled-with-cuda.txt", "probe", "cpu-build"),
    ("failures/torch-no-kernel-image.txt", "probe", "arch-missing"),
    ("failures/torch-fbgemm-dll-winerror-126.txt", "probe", "dll-load-failed"),
    ("failures/torch-driver-too-old-11040.txt", "probe", "driver-too-old"),
    ("failures/uv-403-tuna-mirror-win.txt", "install", "http-403"),
    ("failures/uv-network-timeout-torch.txt", "install", "timeout"),
    ("failures/pip-hash-mismatch-torch-cu118.txt", "install", "hash-mismatch"),
    ("uv/fail-disk-full-0.13.9.txt", "install", "disk-full"),
    ("failures/uv-no-version-torch-cpu-0.1.2.txt", "install", "version-not-found"),
    ("failures/pip-dns-name-or-service-not-known.txt", "install", "dns-failure"),
]

#: Names that stay as they are in Chinese text: packages, products, tools, variables.
NAMES = {
    "PyTorch", "torch", "torchvision", "torchaudio", "CUDA", "NVIDIA", "Python", "Windows", "Microsoft",
    "Visual", "C++", "uv", "pip", "conda", "venv", "python3-venv", "Debian", "Ubuntu", "CUDA_VISIBLE_DEVICES",
    "GB", "MB", "GiB", "MiB",
}
_CJK = r"\u3000-\u303f\u4e00-\u9fff\uff00-\uffef"
_TOKEN = re.compile(rf"[^\s{_CJK}“”‘’…•]+")


def allowed(token: str) -> bool:
    """A token of Latin script that may stand in Chinese text."""
    t = token.strip("()[]{}<>,.;:!?'\"`=")
    if not re.search(r"[A-Za-z]", t):
        return True  # numbers, punctuation
    if t in NAMES:
        return True
    if re.fullmatch(r"v?\d+(\.\d+)*([+.\-]?[A-Za-z0-9]+)*", t):  # 2.14.1, 2.1.0+cpu, 12.4
        return True
    if re.fullmatch(r"(cu|rocm|sm_)\d+(\.\d+)?", t):  # build and architecture names
        return True
    if re.fullmatch(r"[A-Za-z0-9_.\-]+([=<>!~]=?[A-Za-z0-9_.+*\-]+)+", t):  # requirements: torch==2.1.0+cpu
        return True
    if "/" in t or "\\" in t or re.match(r"^[A-Za-z]:", t):  # paths and URLs
        return True
    # host names and file names (c10.dll)
    return re.fullmatch(r"[A-Za-z0-9\-]+(\.[A-Za-z0-9\-]+)+(:\d+)?", t) is not None


def foreign_words(texts: list[str]) -> list[str]:
    return [tok for text in texts for tok in _TOKEN.findall(text) if not allowed(tok)]


def visible_texts(panel: ErrorPanel) -> list[str]:
    out: list[str] = []
    for w in [panel, *panel.findChildren(QWidget)]:
        if not w.isVisibleTo(panel) and w is not panel:
            continue
        if isinstance(w, (QLabel, QAbstractButton)):
            out.append(w.text())
        elif isinstance(w, QPlainTextEdit):
            out.append(w.toPlainText())
        out += [w.toolTip(), w.accessibleName()]
    return [t for t in out if t]


def _lines(name: str) -> list[str]:
    return (FIX / name).read_text(encoding="utf-8").splitlines()


def fake_python(tmp_path: Path, name: str) -> Path:
    """An "interpreter" that prints the recorded PyTorch error on stderr and fails, as the
    environment's Python does when importing torch goes wrong."""
    return fake_program(tmp_path / "fake python", "python", (
        f"import sys\nwith open({str(FIX / name)!r}, encoding='utf-8') as fh:\n    sys.stderr.write(fh.read())\n"
        "sys.exit(1)\n"))


def core_error(name: str, how: str, tmp_path: Path) -> UserError:
    """The UserError the core raises for this output."""
    if how == "probe":
        with pytest.raises(ProbeFailed) as info:
            run_probe("verify", fake_python(tmp_path, name), what="the verification", timeout_s=60)
        return info.value
    res = runner.RunResult(argv=["uv", "pip", "install"], returncode=2, stdout="", stderr="", duration_s=1.0,
                           tail=_lines(name), log_path=tmp_path / "install.log")
    ctx = remedies.Context(os_family="linux", path=str(tmp_path / "torch-envs" / "torch"), python="3.11.7",
                           torch="2.1.0+cpu", variant="cpu", installer="uv", need_mb=4300, free_mb=1200,
                           data=load_compat())
    (tmp_path / "install.log").write_text("\n".join(_lines(name)), encoding="utf-8")
    return installer_failure(msg("install.install_failed", "Installing {packages} failed", packages=("torch",)),
                             res, ctx, log_path=tmp_path / "install.log")


@pytest.fixture
def zh_panel(qtbot):
    i18n.set_language("zh_CN")
    holder = QWidget()
    holder.resize(760, 520)
    panel = ErrorPanel(holder)
    qtbot.addWidget(holder)
    holder.show()
    yield panel
    i18n.set_language("en")


@pytest.mark.parametrize("name,how,code", TOP10, ids=[t[2] for t in TOP10])
def test_the_ten_most_common_failures_read_in_chinese(zh_panel, tmp_path, name, how, code):
    err = core_error(name, how, tmp_path)
    assert err.remedies and err.remedies[0].code == code, [r.code for r in err.remedies]
    zh_panel.show_error(err)
    texts = visible_texts(zh_panel)
    assert texts and any(re.search(r"[\u4e00-\u9fff]", t) for t in texts)
    assert not foreign_words(texts), (name, foreign_words(texts), texts)
    # one button per action, each labelled and explained in Chinese
    labels = [b.text() for b in zh_panel.action_buttons]
    assert len(labels) == len([a for a in err.actions if a.kind is not ActionKind.OPEN_LOG]) >= 1
    assert all(re.search(r"[\u4e00-\u9fff]", b.toolTip()) for b in zh_panel.action_buttons)
    # the tool's own output is kept (folded away, one click from view)
    assert zh_panel.lines.toPlainText() and not zh_panel.lines.isVisibleTo(zh_panel)
    zh_panel.show_output.click()
    assert zh_panel.lines.isVisibleTo(zh_panel)


def test_the_check_finds_english(zh_panel, tmp_path):
    err = UserError("The installer failed for an unknown reason", lines=["x"])
    zh_panel.show_error(err)
    assert "installer" in foreign_words(visible_texts(zh_panel))
    assert allowed("torch==2.1.0+cpu") and allowed("mirrors.tuna.tsinghua.edu.cn") and allowed("C:\\envs\\torch")
    assert not allowed("HTTP") and not allowed("failed")


def test_switching_the_language_re_renders_the_panel(qtbot, zh_panel, tmp_path):
    err = core_error("uv/fail-disk-full-0.13.9.txt", "install", tmp_path)
    zh_panel.show_error(err)
    zh = zh_panel.explanation.text()
    assert "磁盘已满" in zh
    i18n.set_language("en")  # Qt posts LanguageChange to every widget
    qtbot.waitUntil(lambda: zh_panel.explanation.text().startswith("The disk of"), timeout=5000)
    assert zh_panel.action_buttons[0].text() == "Free 3.1 GiB, then check again"


# ------------------------------------------------------------------ the buttons do what they say

def test_free_space_and_other_folder_go_back_to_the_environment_page(qtbot, tmp_path):
    from app.gui.pages import PageId
    from app.gui.pages._common import AcceptsAction

    applied = []

    class Env(QWidget):
        def apply_action(self, action):
            applied.append(action)

    assert isinstance(Env(), AcceptsAction)
    err = core_error("uv/fail-disk-full-0.13.9.txt", "install", tmp_path)
    panel = ErrorPanel()
    qtbot.addWidget(panel)
    panel.show_error(err)
    kinds = [a.kind for a in err.actions]
    assert kinds == [ActionKind.FREE_SPACE, ActionKind.CHOOSE_OTHER_LOCATION]
    assert err.actions[0].step == "environment" and PageId.ENVIRONMENT is not None
    panel.action_buttons[1].click()  # outside a wizard it records, and goes nowhere
    assert panel.applied == [err.actions[1]]


def test_unset_env_clears_the_variable_and_runs_the_step_again(qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QWizardPage

    class Page(QWizardPage):
        runs = 0

        def start(self):
            Page.runs += 1

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2")
    page = Page()
    qtbot.addWidget(page)
    panel = ErrorPanel(page)
    err = UserError("x", remedies=remedies.diagnose(_lines("failures/torch-cuda-visible-devices.txt")))
    panel.show_error(err)
    assert [b.text() for b in panel.action_buttons] == ["Ignore CUDA_VISIBLE_DEVICES and try again"]
    panel.action_buttons[0].click()
    assert "CUDA_VISIBLE_DEVICES" not in os.environ and Page.runs == 1


def test_a_button_goes_back_to_its_page_and_applies_the_choice_there(qtbot, tmp_path):
    """set_torch_version from the (commit) Install page: back on the Recommendation page, which applies it."""
    from PySide6.QtWidgets import QVBoxLayout, QWizard, QWizardPage

    from app.gui.pages import PageId

    class Target(QWizardPage):
        def __init__(self):
            super().__init__()
            self.got = []

        def apply_action(self, action):
            self.got.append(action)

    wizard = QWizard()
    qtbot.addWidget(wizard)
    pages = {pid: Target() for pid in (PageId.RECOMMENDATION, PageId.ENVIRONMENT)}
    install = QWizardPage()
    install.setCommitPage(True)
    panel = ErrorPanel(install)
    QVBoxLayout(install).addWidget(panel)
    for pid, page in pages.items():
        wizard.setPage(int(pid), page)
    wizard.setPage(int(PageId.INSTALL), install)
    wizard.setStartId(int(PageId.RECOMMENDATION))
    wizard.show()
    wizard.next()
    wizard.next()
    assert wizard.currentId() == int(PageId.INSTALL)
    lines = _lines("failures/pip-resolution-impossible-22.2.2.txt")
    panel.show_error(UserError("x", remedies=remedies.diagnose(lines)))
    assert [b.text() for b in panel.action_buttons] == ["Use torch 1.12.0", "Choose another package source…"]
    panel.action_buttons[0].click()
    assert wizard.currentId() == int(PageId.RECOMMENDATION)
    assert [a.value for a in pages[PageId.RECOMMENDATION].got] == ["1.12.0"]
    # from there forward again, and "another source" goes to the Environment page
    wizard.next()
    wizard.next()
    panel.action_buttons[1].click()
    assert wizard.currentId() == int(PageId.ENVIRONMENT)
    assert [a.kind for a in pages[PageId.ENVIRONMENT].got] == [ActionKind.SWITCH_SOURCE]


def test_the_real_pages_apply_the_actions(qtbot):
    """RecommendationPage pins the version (the engine is asked again); EnvironmentPage opens the
    sources, fills the certificates and picks the installer, then checks again."""
    from PySide6.QtWidgets import QWizard

    from app.core.base.actions import Action
    from app.core.detection.system import SystemReport
    from app.core.pipeline.session import Session
    from app.gui.pages.environment import EnvironmentPage
    from app.gui.pages.recommendation import RecommendationPage
    from app.gui.state import WizardState

    report = SystemReport.from_dict({"schema_version": 1, "os": {"family": "linux"}, "arch": "x86_64",
                                     "python": {"version": "3.11.7", "executable": sys.executable}, "gpus": []})
    state = WizardState(session=Session.resume(system=report))
    wiz = QWizard()
    qtbot.addWidget(wiz)
    rec_page, env_page = RecommendationPage(state), EnvironmentPage(state)
    wiz.setPage(0, rec_page)
    wiz.setPage(1, env_page)
    with qtbot.waitSignal(rec_page.recommended, timeout=30000):
        rec_page.apply_action(Action(ActionKind.SET_TORCH_VERSION, "2.13.0"))
    assert state.session.choices is not None and state.session.choices.torch == "2.13.0"
    assert state.session.recommendation is not None and state.session.recommendation.torch_version == "2.13.0"
    with qtbot.waitSignal(rec_page.recommended, timeout=30000):
        rec_page.apply_action(Action(ActionKind.SET_TORCH_VERSION, ""))
    assert state.session.choices.torch is None
    env_page.initializePage()
    env_page.apply_action(Action(ActionKind.SET_CA_BUNDLE, "system"))
    assert env_page.ca_bundle.text() == "system" and env_page.advanced.is_expanded()
    env_page.apply_action(Action(ActionKind.USE_INSTALLER, "pip"))
    assert env_page.kind_installer() == ("venv", "pip")
    env_page.cancel_and_wait(30)
