"""A plan that installs without an index is checked for its whole dependency closure, and a
Python that uv must download is checked for its download host, before the pre-flight calls it
ready (issue 28, blocker 2). Real wheels (tests.netlab builds them), the real planner and
pre-flight; the only network is a refused 127.0.0.1 port."""
from __future__ import annotations

import sys

import pytest

from app.core.base.text import render
from app.core.install import InstallRequest, plan, preflight
from app.core.install.checks import PYTHON_DOWNLOADS, check_closure, python_download_url
from app.core.sources.settings import SourceSettings
from tests.factories import make_recommendation
from tests.helpers import torch_alone
from tests.netlab.files import build_wheel

HERE = f"{sys.version_info[0]}.{sys.version_info[1]}"
ELSEWHERE = "linux" if sys.platform == "win32" else "win32"  # a platform this is not


@pytest.fixture
def half_folder(tmp_path):
    """netlab-demo 1.1 (which needs netlab-dep) without netlab-dep, and a marker-only dependency."""
    folder = tmp_path / "wheels"
    folder.mkdir()
    build_wheel(folder, "netlab-demo", "1.1", requires=["netlab-dep", f"netlab-elsewhere; sys_platform == '{ELSEWHERE}'"])
    return folder


def _offline_plan(tmp_path, folder, packages=("netlab-demo==1.1",)):
    rec = make_recommendation(index_url="", find_links=(str(folder),), no_index=True, packages=packages,
                              pythons=(HERE,))
    return plan(InstallRequest(tmp_path / "env", recommendation=rec, python=sys.executable))


def test_a_folder_that_lacks_a_dependency_is_refused_before_anything_is_made(tmp_path, half_folder):
    p = _offline_plan(tmp_path, half_folder)
    assert p.index.offline
    c = check_closure(p)
    assert c is not None and c.blocking and c.code == "preflight.closure_missing"
    text = render(c.message)
    assert "netlab-dep" in text and "netlab-elsewhere" not in text, text  # the marker is evaluated for this platform
    assert "netlab-dep" in render(c.message, "zh_CN") and "缺少" in render(c.message, "zh_CN")
    checks = preflight(p)
    assert any(x.blocking and x.name == "closure" for x in checks), checks
    assert not (tmp_path / "env").exists()


def test_the_whole_closure_in_the_folder_passes(tmp_path, half_folder):
    build_wheel(half_folder, "netlab-dep", "0.5")
    p = _offline_plan(tmp_path, half_folder)
    c = check_closure(p)
    assert c is not None and c.ok and c.code == "preflight.closure_ok" and "2 packages" in render(c.message)


def test_torch_alone_in_a_folder_takes_the_rest_from_the_package_index(tmp_path, local_wheels, unreachable,
                                                                      monkeypatch):
    """The issue's folder: torch and nothing it needs. The plan made from it is no longer an
    install with no index at all (it would stop at "no filelock that fits"): the rest comes from
    the package index, and here that index refuses, so the pre-flight refuses too."""
    monkeypatch.setenv("UV_DEFAULT_INDEX", unreachable.refused_url)
    local_wheels = torch_alone(local_wheels, tmp_path / "torch alone")  # (the Windows lane's folder holds its needs)
    torch = sorted(local_wheels.glob("torch-*.whl"))[-1].name
    pin = "torch==" + torch.split("-")[1]
    py = "3." + torch.split("-")[2].removeprefix("cp3")
    rec = make_recommendation(index_url="", find_links=(str(local_wheels),), no_index=True, packages=(pin,),
                              pythons=(py,))
    p = plan(InstallRequest(tmp_path / "env", recommendation=rec, python=sys.executable))
    if py != HERE:
        pytest.skip(f"the folder's torch is for Python {py}")
    assert not p.index.offline and p.index.torch_index is None
    checks = {c.name: c for c in preflight(p)}
    assert checks["closure"].ok and "filelock" in render(checks["closure"].message)
    assert checks["reach:package index"].blocking


def test_a_python_uv_must_download_needs_its_download_host(tmp_path, unreachable, monkeypatch, tiny_wheels):
    monkeypatch.delenv("UV_PYTHON_INSTALL_MIRROR", raising=False)
    p = plan(InstallRequest(tmp_path / "env", packages=["netlab-demo"], python="3.99", sources=SourceSettings(find_links=[str(tiny_wheels)])))
    assert p.python is None and python_download_url(p) == PYTHON_DOWNLOADS
    monkeypatch.setenv("UV_PYTHON_INSTALL_MIRROR", unreachable.refused_url)
    assert python_download_url(p) == unreachable.refused_url
    checks = {c.name: c for c in preflight(p)}
    c = checks["reach:python download"]
    assert c.blocking and c.code == "preflight.python_download_unreachable", c
    assert "3.99" in render(c.message) and "uv cannot download one" in render(c.message)
    assert checks["python"].severity == "warning"  # still said: uv would try to download it
    here = plan(InstallRequest(tmp_path / "env2", packages=["netlab-demo"], python=sys.executable))
    assert python_download_url(here) is None and "reach:python download" not in {c.name for c in preflight(here)}
