"""Issue 24, macOS pre-flight, on a simulated Mac (a fake file system tree given as ``root``):

* without the Command Line Tools, detection and the install's search never run ``/usr/bin/python3``
  (Apple's stub opens the install dialog): ``xcode-select -p`` is asked first (a fake printing the
  recorded output, tests/fixtures/xcode-select/, and exiting 2), and the report says why;
* with the minimal PATH of an app started from Finder (``/usr/bin:/bin``), Homebrew's
  (``/opt/homebrew/bin`` before ``/usr/local/bin``), python.org's framework and uv-managed
  Pythons are found.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from app.core.base.text import Msg, render
from app.core.detection.apple import native_arch, parse_sysctl
from app.core.detection.explain import explain
from app.core.detection.pythons import detect_pythons
from app.core.detection.system import OSInfo, SystemReport
from app.core.detection.xcode import is_clt_shim, parse_xcode_select
from app.core.env import backends as envs

FIXTURES = Path(__file__).resolve().parent / "fixtures"
NO_CLT = FIXTURES / "xcode-select" / "p-no-developer-dir-macos14.6.1-m2.txt"
FINDER = {"PATH": "/usr/bin:/bin", "HOME": "/Users/tom"}  # what launchd gives an app opened from Finder

pytestmark = pytest.mark.posix_only("the simulated Mac's programs are shell scripts")


def _program(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)
    return path


def _python(path: Path, version: str, facts: str, record: Path | None = None) -> Path:
    ran = f"echo \"$0 $*\" >> '{record}'\n" if record else ""
    return _program(path, ran + f"echo 'TSA-PY {version} cpython 1 64 darwin ; {facts}'\n")


ARM64 = "64 macosx-11.0-arm64 arm64 0 arm64"


@pytest.fixture
def mac(tmp_path):
    """A fake Apple silicon Mac without the Command Line Tools."""
    root = tmp_path / "mac"
    ran = tmp_path / "usr-bin-python3-was-run"
    asked = tmp_path / "xcode-select-was-asked"
    _program(root / "usr/bin/xcode-select", f"echo \"$*\" >> '{asked}'\ncat '{NO_CLT}' >&2\nexit 2\n")
    _python(root / "usr/bin/python3", "3.9.6", "64 macosx-10.9-universal2 arm64 0 arm64", record=ran)
    (root / "opt/homebrew/Cellar").mkdir(parents=True)
    brew = _python(root / "opt/homebrew/bin/python3.13", "3.13.1", ARM64)
    (root / "usr/local").mkdir(parents=True)
    intel = _python(root / "usr/local/bin/python3.12", "3.12.8", "64 macosx-10.13-x86_64 x86_64 1 arm64")
    framework = _python(root / "Library/Frameworks/Python.framework/Versions/3.12/bin/python3.12", "3.12.7",
                        "64 macosx-10.13-universal2 arm64 0 arm64")
    uv = _python(root / "Users/tom/.local/share/uv/python/cpython-3.11.11-macos-aarch64-none/bin/python3.11",
                 "3.11.11", ARM64)
    return {"root": root, "ran": ran, "asked": asked, "brew": brew, "intel": intel, "framework": framework, "uv": uv}


def _detect(mac):
    _running, found, records = detect_pythons(3.0, None, family="macos", arch="arm64", environ=FINDER,
                                               root=str(mac["root"]))
    return {p.executable: p for p in found[1:]}, records


def test_without_the_command_line_tools_usr_bin_python3_is_never_run(mac):
    found, records = _detect(mac)
    assert mac["asked"].read_text(encoding="utf-8").split() == ["-p"]  # xcode-select -p was asked first
    assert not mac["ran"].exists(), "detection ran /usr/bin/python3 (Apple's stub opens the install dialog)"
    assert str(mac["root"] / "usr/bin/python3") not in found
    rec = next(r for r in records if r.name == "xcode-select")
    assert rec.status == "not-found"
    assert "Unable to get active developer directory" in rec.detail and "/usr/bin/python3" in rec.detail


def test_the_report_says_why_in_english_and_chinese(mac):
    _found, records = _detect(mac)
    report = SystemReport(os=OSInfo(family="macos", version="14.6.1"), arch="arm64", probes=records)
    problems = explain(report).problems
    clt = next(t for t in problems if isinstance(t, Msg) and t.code == "detect.no_clt")
    assert "xcode-select --install" in render(clt, "en") and "/usr/bin/python3" in render(clt, "en")
    assert "命令行工具" in render(clt, "zh_CN")


def test_finder_path_still_finds_homebrew_python_org_and_uv_pythons(mac):
    found, _records = _detect(mac)
    brew, intel, framework, uv = (str(mac[k]) for k in ("brew", "intel", "framework", "uv"))
    assert (found[brew].source, found[brew].version, found[brew].arch) == ("homebrew", "3.13.1", "arm64")
    assert (found[framework].source, found[framework].arch) == ("python.org", "arm64")
    assert (found[uv].source, found[uv].arch) == ("uv", "arm64")
    assert found[intel].arch == "x86_64" and found[intel].translated is True  # Intel Homebrew's, under Rosetta
    order = list(found)
    assert order.index(brew) < order.index(intel)  # /opt/homebrew/bin before /usr/local/bin


def test_with_the_command_line_tools_usr_bin_python3_is_apples_python(mac, tmp_path):
    """The control: xcode-select names an existing folder, so the shim is a real Python and is run."""
    root = mac["root"]
    (root / "Library/Developer/CommandLineTools").mkdir(parents=True)
    _program(root / "usr/bin/xcode-select", "echo /Library/Developer/CommandLineTools\n")
    found, records = _detect(mac)
    assert mac["ran"].exists() and str(root / "usr/bin/python3") in found
    assert next(r for r in records if r.name == "xcode-select").status == "ok"


def test_a_developer_folder_that_is_gone_counts_as_missing(mac):
    _program(mac["root"] / "usr/bin/xcode-select", "echo /Applications/Xcode-7.2.app/Contents/Developer\n")
    _found, records = _detect(mac)
    assert not mac["ran"].exists()
    assert "does not exist" in next(r for r in records if r.name == "xcode-select").detail


def test_the_install_search_passes_over_the_stub_too(mac, monkeypatch):
    """envs.python_candidates (what the install probes) on the simulated Mac: /usr/bin/python3 is on
    PATH but not among the candidates while xcode-select says the tools are missing."""
    stub = str(mac["root"] / "usr/bin/python3")
    monkeypatch.setenv("PATH", str(mac["root"] / "usr/bin"))
    cands = envs.python_candidates(None, family="macos", root=str(mac["root"]))
    assert stub not in cands and not mac["ran"].exists()
    assert stub in envs.python_candidates(None, family="linux", root=str(mac["root"]))  # only macOS has the stub


def test_recorded_outputs_read_as_they_mean():
    assert parse_xcode_select("") is None and parse_xcode_select(NO_CLT.read_text(encoding="utf-8")) is None
    assert parse_xcode_select("/Library/Developer/CommandLineTools\n") == "/Library/Developer/CommandLineTools"
    assert is_clt_shim("/usr/bin/python3") and is_clt_shim("/usr/bin/pip3") and not is_clt_shim("/usr/bin/env")
    assert not is_clt_shim("/opt/homebrew/bin/python3")

    def sysctl(name: str) -> dict[str, str]:
        return parse_sysctl((FIXTURES / "sysctl" / name).read_text(encoding="utf-8"))

    assert native_arch(sysctl("proc-translated-1-arch-x86_64-apple-silicon.txt"), "x86_64") == ("arm64", True)
    assert native_arch(sysctl("proc-translated-0-arch-arm64-apple-silicon.txt"), "arm64") == ("arm64", False)
    assert native_arch(sysctl("proc-translated-unknown-oid-intel-mac.txt"), "x86_64") == ("x86_64", False)
    assert native_arch({"hw.optional.arm64": "1"}, "x86_64") == ("arm64", False)  # Apple silicon, seen from x86_64
