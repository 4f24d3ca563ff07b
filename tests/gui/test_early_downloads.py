"""The wizard's early downloads (issue 29, item 4): the Recommendation page starts downloading the
build it shows; changing the choice (Change… → another build) cancels that download at once, and
the download folder then holds nothing but complete, hash-checked files. The Environment page's
check box turns early downloads off, kept in settings.toml.

Real engine and session, a real netlab index on 127.0.0.1 (the generated CUDA-like set at 1 %, on
a slow link so that the choice changes mid-download), the real downloader; Qt offscreen.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtWidgets import QWizard

from app.core.detection.system import SystemReport
from app.core.pipeline.session import Session
from app.core.recommend import Choices
from app.core.sources.wheelhouse import download_folder
from app.gui.state import WizardState
from tests.netlab import Link, file_sha256
from tests.netlab.clients import clean_env

pytestmark = pytest.mark.gui

PY = f"{sys.version_info[0]}.{sys.version_info[1]}"
CUDA_BOX = {"os": {"family": "linux", "glibc": "2.36"}, "arch": "x86_64",
            "python": {"version": f"{PY}.0", "executable": sys.executable},
            "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "driver_version": "580.65",
                      "compute_capability": "8.9", "memory_mb": 24564}]}


@pytest.fixture
def lab(index_server, cuda_set, monkeypatch, tmp_path):
    """The set on a slow link as the PyTorch server and the package index; a fresh home."""
    server = index_server(cuda_set.files, link=Link(per_conn_bps=250_000, latency_s=0.01))
    for k in [k for k in os.environ if k.startswith(("PIP_", "UV_", "TORCH_SETUP_EARLY"))]:
        monkeypatch.delenv(k)
    for k, v in clean_env(TORCH_SETUP_HOME=str(tmp_path / "home"), UV_CACHE_DIR=str(tmp_path / "uv"),
                          TORCH_SETUP_TORCH_INDEX=server.origin + "/whl/",
                          UV_DEFAULT_INDEX=server.simple_url()).items():
        monkeypatch.setenv(k, v)
    return server


def _host(qtbot, page_class, state):
    wiz = QWizard()
    page = page_class(state)
    wiz.setPage(0, page)
    qtbot.addWidget(wiz)
    return wiz, page


def _only_complete_checked_files(cuda_set) -> list[str]:
    real = {f.name: file_sha256(f) for f in cuda_set.files}
    names = []
    for f in Path(download_folder()).iterdir():
        assert not f.name.endswith(".part"), f"a partial file was left: {f.name}"
        sha, _, name = f.name.partition("-")
        assert real[name].startswith(sha) and file_sha256(f) == real[name], f"{f.name}: not the listed file"
        names.append(name)
    return names


def test_changing_the_choice_cancels_the_early_download(qtbot, lab, cuda_set):
    from app.gui.early import early_downloads
    from app.gui.pages.recommendation import RecommendationPage

    state = WizardState(session=Session.resume(system=SystemReport.from_dict(CUDA_BOX)))
    state.session.choose(Choices(torch="2.13.0"))
    _wiz, page = _host(qtbot, RecommendationPage, state)
    early = early_downloads(state)
    try:
        with qtbot.waitSignal(page.recommended, timeout=30000):
            page.initializePage()
        assert state.session.recommendation.packages == ("torch==2.13.0+cu132",)
        first = early.current
        assert first is not None and first.ahead.requirements == ("torch==2.13.0+cu132",)
        qtbot.waitUntil(lambda: first.done_bytes > 500_000, timeout=60000)  # arriving while the page is read
        assert page.early_note.isVisibleTo(page) and "Downloading the build while you read" in page.early_note.text()
        assert first.running and first.done_bytes < cuda_set.total_bytes

        dlg = page.change_dialog()  # Change… → the CPU build → OK
        qtbot.addWidget(dlg)
        dlg.backend.setCurrentIndex(dlg.backend.findData("cpu"))
        with qtbot.waitSignal(page.recommended, timeout=30000):
            page.apply_change(dlg.selection())
            assert first.token.cancelled and early.current is None  # at the click, before the new build is known
        qtbot.waitUntil(lambda: not first.running, timeout=30000)
        assert first.state == "cancelled"
        assert state.session.recommendation.backend == "cpu"
        kept = _only_complete_checked_files(cuda_set)
        assert len(kept) < len(cuda_set.files)  # it did not go on to the end
    finally:
        early.stop(wait_s=30)


def test_the_environment_page_turns_early_downloads_off_and_keeps_the_setting(qtbot, lab, tmp_path):
    from app.core.base.prefs import load_prefs
    from app.gui.early import early_downloads
    from app.gui.pages.environment import EnvironmentPage

    state = WizardState(session=Session.resume(system=SystemReport.from_dict(CUDA_BOX)))
    _wiz, page = _host(qtbot, EnvironmentPage, state)
    page.retranslate()
    assert page.early_box.isChecked() and early_downloads(state).enabled
    assert "metered" in page.early_box.text()
    page.early_box.setChecked(False)
    assert load_prefs().early_downloads is False and not early_downloads(state).enabled
    assert "early = false" in (tmp_path / "home" / "config" / "settings.toml").read_text(encoding="utf-8")
    early_downloads(state).want(None)
    assert early_downloads(state).current is None
