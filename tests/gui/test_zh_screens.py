"""No English on the Chinese screens, except names (issue 28, must show 4).

The real wizard is walked under zh_CN, the way a person would: detection, the recommendation,
the Environment page (a new venv in a temporary folder, the local wheel folder as its source), a
real install, verification, a short speed test and Done. On every page each visible label,
button, tooltip, check item, group title, combo item and placeholder is scanned for ASCII words;
a word is allowed only when it is a name (PyTorch, CUDA, uv, pip, a GPU or CPU model, a dtype, a
unit, a shell), part of a path, a URL, a version or a number. Logs (tool output) are not scanned.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QTextEdit,
    QTreeWidget,
    QWidget,
    QWizard,
)

pytestmark = [pytest.mark.gui]

#: names a Chinese screen keeps as they are (case-sensitive where the name is)
NAMES = {
    "PyTorch", "torch", "torchvision", "torchaudio", "CUDA", "cuda", "ROCm", "rocm", "uv", "pip", "Python", "python",
    "GPU", "GPUs", "CPU", "CPUs", "NVIDIA", "AMD", "Intel", "Apple", "MPS", "XPU", "mps", "xpu", "cpu",
    "GFLOP", "GB", "GiB", "MB", "MiB", "KB", "KiB", "TB", "s", "ms", "min", "fp32", "bf16", "fp16", "tf32", "TF32",
    "Linux", "Windows", "macOS", "PowerShell", "cmd", "bash", "zsh", "fish", "Jupyter", "ipykernel", "VS", "Code",
    "PyPI", "HTTPS", "HTTP", "URL", "SSL", "TLS", "AVX", "AVX2", "AVX512", "AMX", "SIMD", "FMA", "numpy", "conda",
    "venv", "JSON", "HTML", "Markdown", "x86_64", "arm64", "AArch64", "aarch64", "ARM", "Torch", "Setup", "Assistant",
    "Tsinghua", "TUNA", "Aliyun", "USTC", "SJTU", "NJU", "Tencent", "Huawei", "Qt", "OK", "Ubuntu", "Debian",
    "Fedora", "GNU", "glibc", "musl", "WSL", "Xeon", "Core", "Ryzen", "EPYC", "GeForce", "RTX", "GTX", "Ti",
    "Radeon", "Arc", "Iris", "Quadro", "Tesla", "A100", "H100", "H200", "M1", "M2", "M3", "M4", "Pro", "Max",
    "Ultra", "R", "TM", "CPU-only", "cu", "cu118", "cu121", "cu124", "cu126", "cu128", "cu129", "cu130",
    "Alt", "Ctrl", "Shift", "Tab", "Esc", "Enter", "Return", "Platinum", "Gold", "Silver", "Processor",
    "Virtual", "CPUID", "GLIBC", "Visual", "C", "Redistributable", "Microsoft", "MSVC", "CI",
    "English", "PyCharm", "wheel", "wheels", "MLP", "SGD", "autocast", "all_reduce", "gloo", "NCCL", "cuDNN",
    "MIOpen", "bfloat16", "float16", "float32", "GLOO", "SDPA", "DataLoader", "TorchScript", "compile", "ipynb",
    # the packages torch needs, by their names
    "filelock", "typing-extensions", "typing_extensions", "setuptools", "sympy", "networkx", "jinja2", "fsspec",
    "mpmath", "MarkupSafe", "markupsafe", "pillow", "triton", "nvidia",
    # file kinds and certificates, by their names
    "CA", "pem", "PEM", "SHA", "whl", "CERNET",
}
_MNEMONIC = re.compile(r"\(&\w\)|&(?=\w)")
_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"|`[^`]*`")  # a command or setting the user types, quoted
_HOST = re.compile(r"\b[\w-]+(?:\.[\w-]+)+(?::\d+)?\b")
_PATHISH = re.compile(r"""(?:[A-Za-z]:[\\/]|[\\/~]|https?://|file:|\S+[\\/]\S*|\S+\.(?:py|exe|json|html|md|whl|txt|log|toml|bat|ps1|sh)\b)\S*""")
_VERSIONISH = re.compile(r"\b[A-Za-z]*\d[\w.+\-]*")
_WORD = re.compile(r"[A-Za-z][\w'\-]*[A-Za-z]|[A-Za-z]", re.ASCII)  # all_reduce is one word
_TAG = re.compile(r"<[^>]+>")


def english_words(text: str, extra_names: Iterable[str] = ()) -> list[str]:
    """The ASCII words of ``text`` that are not names, paths, URLs, versions or numbers."""
    allowed = NAMES | set(extra_names)
    text = _TAG.sub(" ", text).replace("&nbsp;", " ").replace("&amp;", "&")
    text = _MNEMONIC.sub(" ", text)
    text = _QUOTED.sub(" ", text)
    text = _PATHISH.sub(" ", text)
    text = _HOST.sub(" ", text)
    for name in sorted(allowed, key=len, reverse=True):  # multi-word names (a CPU model) first
        if " " in name:
            text = text.replace(name, " ")
    text = _VERSIONISH.sub(" ", text)
    return [w for w in _WORD.findall(text) if w not in allowed and w.strip("-'") not in allowed]


def visible_texts(root: QWidget) -> list[tuple[str, str]]:
    """(where, text) of everything a person reads on ``root``: labels, buttons, tooltips, check
    items, group titles, combo items and placeholders of the widgets that are visible."""
    out: list[tuple[str, str]] = []
    widgets = [root, *root.findChildren(QWidget)]
    for w in widgets:
        if not w.isVisibleTo(root) and w is not root:
            continue
        if isinstance(w, (QPlainTextEdit, QTextEdit)) and w.isReadOnly():
            continue  # a log: the tools' own output
        where = f"{type(w).__name__} {w.objectName() or w.accessibleName() or ''}".strip()
        if w.toolTip():
            out.append((where + " (tooltip)", w.toolTip()))
        if (isinstance(w, QLabel) and w.text()) or (isinstance(w, QAbstractButton) and w.text()):
            out.append((where, w.text()))
        elif isinstance(w, QGroupBox) and w.title():
            out.append((where, w.title()))
        elif isinstance(w, QLineEdit) and w.placeholderText():
            out.append((where + " (placeholder)", w.placeholderText()))
        elif isinstance(w, QComboBox):
            out += [(where + " (item)", w.itemText(i)) for i in range(w.count())]
        elif isinstance(w, QListWidget):
            for i in range(w.count()):
                item = w.item(i)
                out.append((where + " (item)", item.text()))
                if item.toolTip():
                    out.append((where + " (item tooltip)", item.toolTip()))
        elif isinstance(w, QTreeWidget):
            for i in range(w.topLevelItemCount()):
                item = w.topLevelItem(i)
                out += [(where + " (item)", item.text(c)) for c in range(w.columnCount()) if item.text(c)]
    return out


def english_on(wiz: QWizard, extra_names: Iterable[str] = ()) -> list[str]:
    """'where: text -> words' for each visible text of the wizard's current page (its title,
    subtitle and buttons included) that holds English words."""
    page = wiz.currentPage()
    found = [("title", page.title()), ("subtitle", page.subTitle())]
    found += visible_texts(page)
    for which in (QWizard.WizardButton.BackButton, QWizard.WizardButton.NextButton,
                  QWizard.WizardButton.CommitButton, QWizard.WizardButton.FinishButton,
                  QWizard.WizardButton.CancelButton):
        b = wiz.button(which)
        if b.isVisible():
            found.append(("wizard button", b.text()))
    names = list(extra_names)
    bad = []
    for where, text in found:
        words = english_words(text, names)
        if words:
            bad.append(f"{where}: {text[:160]!r} -> {sorted(set(words))}")
    return bad


def machine_names(state) -> list[str]:
    """The names this machine's report shows (CPU and GPU models, the OS), allowed as they are."""
    names: list[str] = []
    sysrep = state.session.system
    if sysrep is not None:
        cpu = getattr(sysrep, "cpu", None)
        for attr in ("model", "name", "brand", "vendor"):
            v = getattr(cpu, attr, None) if cpu is not None else None
            if isinstance(v, str) and v:
                names.append(v)
        for gpu in getattr(sysrep, "gpus", ()) or ():
            v = getattr(gpu, "name", None)
            if isinstance(v, str) and v:
                names.append(v)
        osr = getattr(sysrep, "os", None)
        for attr in ("name", "pretty_name", "distro", "version", "release"):
            v = getattr(osr, attr, None) if osr is not None else None
            if isinstance(v, str) and v:
                names.append(v)
    rep = state.session.bench_report
    if rep is not None:
        names += [n for n in (rep.cpu_name, rep.device_name) if n]
    out = []
    for n in names:
        out.append(n)
        out += _WORD.findall(n)  # each word of a model name is part of that name
    return out


# ------------------------------------------------------------------------------- the scanner

def test_the_scanner_finds_english_and_lets_names_paths_and_numbers_through():
    assert english_words("安装 PyTorch 2.13.0+cpu 到 /tmp/torch-env (CUDA 12.8, 1.5 GiB)") == []
    assert english_words("用 uv 和 pip 安装；C:\\Users\\张三\\envs\\torch-env") == []
    assert english_words("fp32: 101.5 GFLOP/s，2048×2048") == []
    assert english_words("下载源：Tsinghua mirror") == ["mirror"]
    assert english_words("正在检查 find-links … is reachable") == ["find-links", "is", "reachable"]
    assert english_words("<b>完成</b>&nbsp;Open folder") == ["Open", "folder"]
    assert english_words("Intel(R) Xeon(R) Platinum 8480C", []) == []


# ----------------------------------------------------------------------------- the whole walk

def _wait(qtbot, pred, timeout_s: float) -> None:
    qtbot.waitUntil(pred, timeout=int(timeout_s * 1000))


@pytest.mark.slow
def test_no_english_on_any_chinese_page_of_a_real_run(qtbot, tmp_path, local_wheels):
    """The whole wizard under zh_CN: every page, once its work is done, shows no English word
    that is not a name; also its Done page's saved report is in Chinese."""
    from app.gui import i18n
    from app.gui.pages import PageId
    from app.gui.state import WizardState
    from app.gui.wizard import SetupWizard

    i18n.set_language("zh_CN")
    state = WizardState(bench_sizes=[128, 256], bench_dtypes=["fp32"], bench_budget_s=8)
    wiz = SetupWizard(state=state, lang="zh_CN")
    qtbot.addWidget(wiz)
    wiz.resize(980, 720)
    wiz.show()
    timeouts = {PageId.SYSTEM: 60, PageId.RECOMMENDATION: 60, PageId.ENVIRONMENT: 120, PageId.INSTALL: 900,
                PageId.VERIFY: 300, PageId.SPEEDTEST: 300, PageId.DONE: 60}
    problems: dict[str, list[str]] = {}
    try:
        for pid in (PageId.WELCOME, PageId.SYSTEM, PageId.RECOMMENDATION, PageId.ENVIRONMENT, PageId.INSTALL,
                    PageId.VERIFY, PageId.SPEEDTEST, PageId.DONE):
            _wait(qtbot, lambda pid=pid: wiz.currentId() == int(pid), 20)
            page = wiz.currentPage()
            if pid == PageId.ENVIRONMENT:
                page.location.setText(str(tmp_path / "envs"))
                page.name.setText("torch-env")
                page.advanced.set_expanded(True)
                page.find_links.setText(str(local_wheels))
            if pid != PageId.WELCOME:
                _wait(qtbot, lambda page=page: page.isComplete() and not page.is_busy(), timeouts[pid])
            qtbot.wait(200)
            bad = english_on(wiz, [*machine_names(state), str(tmp_path), "torch-env", str(local_wheels)])
            if bad:
                problems[pid.name] = bad
            if pid == PageId.DONE:
                break
            button = wiz.button(QWizard.WizardButton.CommitButton if page.isCommitPage()
                                else QWizard.WizardButton.NextButton)
            qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        reports = [Path(p) for p in state.saved_reports]
        md = [p for p in reports if p.suffix == ".md"]
        assert md, "the Done page saved a report"
        text = md[0].read_text(encoding="utf-8")
        if not re.search(r"[\u4e00-\u9fff]{4}", text) or "## Summary" in text or "## 概要" not in text:
            problems["saved report"] = ["the saved report is not in the wizard's language: " + text[:200]]
    finally:
        for p in wiz.busy_pages():
            p.cancel_and_wait(60)
        i18n.set_language("en")
    assert not problems, "English on the Chinese screens:\n" + "\n".join(
        f"{page}:\n  " + "\n  ".join(lines) for page, lines in problems.items())
