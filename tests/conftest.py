"""Shared test setup.

* Qt runs offscreen (no display needed); tests that need Xvfb start it themselves.
* ``TORCH_SETUP_HOME`` points logs/config/cache at a per-session temp dir so tests never
  write into the real user directories; ``TORCH_SETUP_EARLY_DOWNLOADS=0`` keeps the wizard's early
  downloads off (their own tests turn them on against a local server).
* ``local_wheels`` is the folder holding the torch CPU wheel that this machine (and CI)
  installs from: pip's configured find-links, or ``TORCH_SETUP_TEST_WHEELS``.
* ``@pytest.mark.posix_only("why")``: a test that cannot run on Windows (a POSIX shell script, a
  signal, a network namespace); it is skipped there with its reason (so is every ``netns`` test).
  A mark without a reason is an error, on every OS. tests/windows-lane.txt lists what the Windows
  lane runs; under it (TSA_WINE_LANE=1) the ``slow`` tests are left out unless marked ``lane``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# the Pythons the tests start write UTF-8 into their pipes, which the tests read as UTF-8
# (subprocess.run(..., encoding="utf-8")); on Windows a pipe's default is the ANSI code page.
# Tests of the product's own console handling set their child's encoding themselves.
os.environ.setdefault("PYTHONIOENCODING", "utf-8")
# The wizard's early downloads would start from every Recommendation page a test shows, towards the
# real PyTorch server: off in the suite; the tests of them (test_prefetch, gui/test_early_downloads)
# turn them on against 127.0.0.1.
os.environ.setdefault("TORCH_SETUP_EARLY_DOWNLOADS", "0")

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="session", autouse=True)
def _isolated_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("torch-setup-home")
    old = os.environ.get("TORCH_SETUP_HOME")
    os.environ["TORCH_SETUP_HOME"] = str(home)
    yield home
    if old is None:
        os.environ.pop("TORCH_SETUP_HOME", None)
    else:
        os.environ["TORCH_SETUP_HOME"] = old


def _pip_find_links() -> list[Path]:
    env_dir = os.environ.get("TORCH_SETUP_TEST_WHEELS")
    if env_dir:
        return [Path(p) for p in env_dir.split(os.pathsep) if p]
    try:
        out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True,
                             text=True, encoding="utf-8", timeout=30).stdout
    except Exception:
        return []
    found = []
    for line in out.splitlines():
        key, _, value = line.partition("=")
        if key.strip().endswith("find-links"):
            for part in value.strip().strip("'\"").split():
                p = Path(part.replace("file://", ""))
                if p.is_dir() and p not in found:
                    found.append(p)
    return found


@pytest.fixture(scope="session")
def local_wheels() -> Path:
    """The folder holding a torch CPU wheel; tests that need a real torch skip without it."""
    for d in _pip_find_links():
        if any(d.glob("torch-*.whl")):
            return d
    if os.environ.get("TORCH_SETUP_REQUIRE_WHEELS"):  # .ci/run: the real-torch tier must run, never skip
        pytest.fail("no local torch wheel folder, and TORCH_SETUP_REQUIRE_WHEELS is set: the real-torch tests "
                    "(install, verify, bench) would be skipped (set TORCH_SETUP_TEST_WHEELS)")
    pytest.skip("no local torch wheel folder (set TORCH_SETUP_TEST_WHEELS)")


@pytest.fixture
def fixture_text():
    def read(*parts: str) -> str:
        return (FIXTURES.joinpath(*parts)).read_text(encoding="utf-8")

    return read


@pytest.fixture(scope="session")
def torch_env(tmp_path_factory, local_wheels) -> tuple[Path, Path]:
    """(env folder, python) of a real uv venv holding the torch 2.13.0 CPU wheel (+ numpy),
    created once per test session through the project's runner. uv always gets --find-links
    to the local wheel folder (never the network's 3 GB CUDA build)."""
    from uv import find_uv_bin

    from app.core.proc.runner import run

    root = tmp_path_factory.mktemp("torch-env") / "env"
    uv = find_uv_bin()
    run([uv, "venv", "--quiet", "--python", sys.executable, str(root)], timeout=120).raise_for_status(
        "uv venv failed")
    py = root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    run([uv, "pip", "install", "--quiet", "--python", str(py), "--find-links", str(local_wheels),
         "torch==2.13.0", "numpy"], timeout=600).raise_for_status("installing the torch CPU wheel failed")
    return root, py


def pytest_collection_modifyitems(config, items):
    """``posix_only`` marks: each needs its reason; on Windows the test is skipped with it.
    Under the Windows lane (TSA_WINE_LANE=1) with no ``-m`` given, the ``slow`` tests are
    deselected unless also marked ``lane``: Python under Wine is slower, and the lane's budget
    holds one real torch install, which scripts/wine-lane-checks does end to end anyway."""
    for item in items:
        for mark in item.iter_markers("posix_only"):
            if not (mark.args and isinstance(mark.args[0], str) and mark.args[0].strip()):
                raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.posix_only needs a reason "
                                        "(why this test cannot run on Windows)")
            if os.name == "nt":
                item.add_marker(pytest.mark.skip(reason=f"POSIX only: {mark.args[0]}"))
        if os.name == "nt" and item.get_closest_marker("netns"):
            item.add_marker(pytest.mark.skip(reason="POSIX only: a network namespace (unshare -n, Linux)"))
    if os.environ.get("TSA_WINE_LANE") == "1" and not config.getoption("markexpr", ""):
        slow = [i for i in items if i.get_closest_marker("slow") and not i.get_closest_marker("lane")]
        if slow:
            config.hook.pytest_deselected(items=slow)
            gone = {id(i) for i in slow}
            items[:] = [i for i in items if id(i) not in gone]


# netlab: real servers on 127.0.0.1 (index, proxy, unreachable ports, test CA) as fixtures
pytest_plugins = ["tests.netlab.fixtures"]
