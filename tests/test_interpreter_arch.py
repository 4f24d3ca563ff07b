"""Issue 24: each interpreter's OWN architecture is probed, and one no torch wheel serves (a 32-bit
Python, an x86_64 Python under Rosetta on an Apple silicon Mac, an ARM64 Python on Windows on Arm)
is never offered as fitting: the recommendation picks another interpreter, or a managed Python,
and says why (English and Chinese).

The machine reports are tests/fixtures/reports/*.json (see the README there); the recommendation
is read from them by the real ``recommend --from-report`` command.
"""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from app.core.base.pyarch import ArchFacts, interpreter_arch, parse_facts, uv_request
from app.core.base.text import render
from app.core.detection.system import SystemReport, ToolInfo
from app.core.env import backends as envs
from app.core.recommend import recommend
from app.core.recommend.machine import python_arch_for

REPO = Path(__file__).resolve().parents[1]
REPORTS = REPO / "tests" / "fixtures" / "reports"

WIN32_RUNNING = r"C:\Users\张伟\AppData\Local\Programs\Python\Python312-32\python.exe"
WIN32_OTHER = r"C:\Python311-32\python.exe"
WIN64 = r"C:\Users\张伟\AppData\Local\Programs\Python\Python311\python.exe"


def _report(name: str) -> dict:
    return json.loads((REPORTS / name).read_text(encoding="utf-8"))


def _cli_recommend(report: Path) -> dict:
    res = subprocess.run([sys.executable, "-m", "app", "recommend", "--from-report", str(report), "--json"],
                         capture_output=True, text=True, encoding="utf-8", timeout=120, cwd=REPO,
                         env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


# ------------------------------------------------------------------ the facts -> one architecture

@pytest.mark.parametrize(("line", "family", "arch", "translated"), [
    ("32 win32 x86 - AMD64", "windows", "x86", False),  # a 32-bit Python on 64-bit Windows (WOW64)
    ("64 win-amd64 AMD64 - AMD64", "windows", "x86_64", False),
    ("64 win-amd64 AMD64 - ARM64", "windows", "x86_64", True),  # x64 Python on Windows on Arm: emulated
    ("64 win-arm64 ARM64 - ARM64", "windows", "arm64", False),
    ("64 macosx-10.9-universal2 x86_64 1 arm64", "macos", "x86_64", True),  # universal2 started under Rosetta
    ("64 macosx-10.9-universal2 arm64 0 arm64", "macos", "arm64", False),
    ("64 macosx-10.9-x86_64 x86_64 1 arm64", "macos", "x86_64", True),
    ("64 macosx-11.0-arm64 arm64 0 arm64", "macos", "arm64", False),
    ("64 macosx-10.9-x86_64 x86_64 0 x86_64", "macos", "x86_64", False),  # an Intel Mac
    ("32 linux-x86_64 x86_64 - -", "linux", "x86", None),  # sysconfig names the 64-bit kernel
    ("64 linux-aarch64 aarch64 - -", "linux", "aarch64", None),
])
def test_an_interpreter_is_the_architecture_it_reports_not_the_machines(line, family, arch, translated):
    facts = parse_facts(line, family)
    assert interpreter_arch(facts, family) == arch
    assert facts.translated is translated


def test_what_the_machine_says_is_not_enough():
    """platform.machine() says AMD64 inside a 32-bit Python on 64-bit Windows: the pointer width and
    sysconfig's win32 decide; without any facts nothing is guessed."""
    assert interpreter_arch(ArchFacts(bits=32, machine="AMD64"), "windows") == "x86"
    assert interpreter_arch(ArchFacts(bits=64, platform_tag="win32", machine="AMD64"), "windows") == "x86"
    assert interpreter_arch(ArchFacts(), "windows") is None
    assert parse_facts("garbage") == ArchFacts()


def test_uv_is_asked_for_a_python_of_the_wheels_architecture():
    assert uv_request("3.12", "macos", "arm64") == "cpython-3.12-macos-aarch64-none"
    assert uv_request("3.12", "windows", "x86_64") == "cpython-3.12-windows-x86_64-none"
    assert uv_request("3.12", "windows", "riscv64") is None
    assert python_arch_for("windows-arm64") == "x86_64"  # Windows on Arm: the x64 wheels, emulated
    assert python_arch_for("macos-arm64") == "arm64"


# ------------------------------------------------------------------ both probes, on real interpreters

def _expected_here() -> str:
    plat = sysconfig.get_platform()
    bits = struct.calcsize("P") * 8
    if plat == "win32" or bits == 32:
        return "x86"
    return {"win-amd64": "x86_64", "win-arm64": "arm64"}.get(plat, plat.rsplit("-", 1)[-1].replace("amd64", "x86_64"))


def test_both_probes_report_this_interpreters_own_architecture(tmp_path):
    """detect's probe and the install's (one probe, one PythonInfo since issue 26) run this
    interpreter as a separate process and agree on its architecture and width."""
    from app.core.detection import pythons

    want = _expected_here()
    running = pythons.running_interpreter()
    assert running.arch == want and running.bits == struct.calcsize("P") * 8
    info, why = envs.probe_python(sys.executable, use_cache=False)
    assert info is not None, why
    assert (info.arch, info.bits) == (want, struct.calcsize("P") * 8)
    res = subprocess.run([sys.executable, "-E", "-s", "-S", "-c", pythons.PROBE_SCRIPT], capture_output=True,
                         text=True, timeout=60)
    parsed = pythons.parse_probe_output(res.stdout)
    assert parsed is not None and parsed["platform_tag"] == sysconfig.get_platform()
    assert pythons._info(sys.executable, "path", parsed, "riscv64").arch == want  # its own, not the machine's


@pytest.mark.posix_only("the fake interpreter is a shell script named python3.12 (the lane test probes a real one)")
def test_detection_reads_a_32bit_answer_as_x86_on_a_64bit_machine(tmp_path):
    """An interpreter answering as a 32-bit Windows Python does (recorded shape of the probe's line)
    is x86 although the machine is x86_64."""
    from app.core.detection.pythons import detect_pythons

    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "python3.12"
    fake.write_text("#!/bin/sh\necho 'TSA-PY 3.12.10 cpython 1 32 win32 ; 32 win32 x86 - AMD64'\n", encoding="utf-8")
    fake.chmod(0o755)
    _running, found, _records = detect_pythons(3.0, None, family="linux", arch="x86_64",
                                               environ={"PATH": str(bindir)})
    mine = [p for p in found if p.executable == str(fake)]
    assert [(p.arch, p.bits, p.platform_tag) for p in mine] == [("x86", 32, "win32")]


# ------------------------------------------------------------------ must show 2: the recommendation

def test_a_32bit_windows_python_is_not_used_and_the_recommendation_says_why():
    rec = _cli_recommend(REPORTS / "windows-32bit-python.json")
    assert rec["python_ok"] is False and rec["env_python"] == "3.11"
    assert "rec.python_arch" in rec["reason_codes"]
    why = next(r for r in rec["reasons"] if "32-bit" in r and WIN32_RUNNING in r)
    assert "PyTorch publishes no 32-bit wheels" in why and f"found at {WIN64}" in why
    skipped = [r for r in rec["reasons"] if WIN32_OTHER in r]
    assert skipped and "not offered" in skipped[0]
    assert not any(f"found at {WIN32_OTHER}" in r or f"found at {WIN32_RUNNING}" in r for r in rec["reasons"])


def test_an_x86_64_python_under_rosetta_is_not_used_on_an_apple_silicon_mac():
    rec = _cli_recommend(REPORTS / "macos-rosetta-python.json")
    assert rec["backend"] == "mps" and rec["python_ok"] is False and rec["env_python"] == "3.12"
    why = next(r for r in rec["reasons"] if "Rosetta" in r and "/usr/local/bin/python3.12" in r)
    assert "torch 2.2.2" in why and "arm64" in why  # the last macOS x86_64 wheels, from the compat data
    assert "uv downloads a managed one" in why  # no arm64 3.12 here: a managed Python
    assert "found at" not in why
    assert any("/usr/local/Cellar/python@3.11" in r and "not offered" in r for r in rec["reasons"])


def test_an_arm64_python_on_windows_on_arm_gives_way_to_the_x64_one():
    rec = _cli_recommend(REPORTS / "windows-arm64-python.json")
    x64 = r"C:\Users\Tom\AppData\Local\Programs\Python\Python312\python.exe"
    assert rec["python_ok"] is False and rec["env_python"] == "3.12"
    why = next(r for r in rec["reasons"] if "ARM64" in r)
    assert "win_arm64" in why and f"found at {x64}" in why


def test_a_64bit_python_still_fits():
    """The control: the same machine with its 64-bit Python running keeps that Python."""
    data = _report("windows-32bit-python.json")
    data["python"] = data["interpreters"][2]
    rec = recommend(data)
    assert rec.python_ok is True and rec.env_python is None
    assert "rec.python_arch" not in rec.reason_codes


def test_the_reasons_are_in_chinese_too():
    rec = recommend(_report("windows-32bit-python.json"))
    zh = rec.texts("zh_CN").reasons
    assert any("32 位" in r and WIN64 in r for r in zh), zh
    mac = recommend(_report("macos-rosetta-python.json")).texts("zh_CN").reasons
    assert any("Rosetta 2" in r and "托管 Python" in r for r in mac), mac
    assert all(render(t, "zh_CN") for t in rec.reasons)


# ------------------------------------------------------------------ the install passes over it too

@pytest.mark.posix_only("the fake interpreter is a shell script; cmd.exe cannot take the probe's multi-line -c")
def test_the_install_never_builds_the_env_on_an_interpreter_of_another_architecture(tmp_path):
    """find_python, given the wheels' architecture, passes over a found 32-bit interpreter (named by
    the report's tools) and says why; without the architecture it would have used it."""
    fake = tmp_path / "python3.12"
    answer = 'TSA-PY 3.12.10 cpython 1 32 win32 ; 32 win32 x86 - AMD64\nTSA-PIP ["25.0", null]'  # the one probe's
    fake.write_text(f"#!/bin/sh\ncat <<'EOF'\n{answer}\nEOF\n", encoding="utf-8")
    fake.chmod(0o755)
    report = SystemReport(tools={"python3.12": ToolInfo("python3.12", str(fake), "3.12.10")})
    plain, _ = envs.find_python("3.12", report)
    assert plain is not None and plain.executable == str(fake) and plain.arch == "x86"
    fitting, notes = envs.find_python("3.12", report, arch="x86_64")
    assert fitting is None or fitting.executable != str(fake)
    assert any(str(fake) in n and "x86 Python" in n and "need x86_64" in n for n in notes), notes


# ------------------------------------------------------------------ no fitting Python here: uv is asked by key

def _only_a_32bit_python(tmp_path: Path) -> SystemReport:
    """A report whose only Python 3.19 (a version no machine has yet) is a 32-bit one: a real script
    that answers the probe as one."""
    fake = tmp_path / "python3.19"
    answer = 'TSA-PY 3.19.0 cpython 1 32 win32 ; 32 win32 x86 - AMD64\nTSA-PIP ["25.0", null]'  # the one probe's
    fake.write_text(f"#!/bin/sh\n/bin/cat <<'EOF'\n{answer}\nEOF\n", encoding="utf-8")
    fake.chmod(0o755)
    return SystemReport(tools={"python3.19": ToolInfo("python3.19", str(fake), "3.19.0")})


@pytest.mark.posix_only("the stand-in 32-bit interpreter is a shell script")
def test_with_no_fitting_python_uv_is_asked_for_one_of_the_wheels_architecture(tmp_path):
    """The 32-bit Python is passed over; ``uv venv --python 3.19`` would take it again (uv looks for
    any 3.19), so the plan names uv's key: this OS, the wheels' architecture."""
    from app.core.base.pyarch import this_family
    from app.core.install import InstallRequest, plan
    from tests.factories import make_recommendation

    report = _only_a_32bit_python(tmp_path)
    here = {"linux": "linux-x86_64", "windows": "win-amd64", "macos": "macos-arm64"}[this_family() or "linux"]
    rec = make_recommendation(platform=here)
    p = plan(InstallRequest(tmp_path / "env", python="3.19", recommendation=rec), report)
    assert p.python is None and any("x86 Python" in n for n in p.python_notes), p.python_notes
    key = uv_request("3.19", this_family(), python_arch_for(here))
    assert key is not None and p.uv_python == key
    create = p.commands()[0]
    assert create[create.index("--python") + 1] == key, create
    assert p.to_dict()["uv_python"] == key
    # an interpreter given by path is used as given, not asked for by key
    assert plan(InstallRequest(tmp_path / "env2", python=str(tmp_path / "python3.19"), recommendation=rec),
                report).uv_python is None


def test_the_real_uv_takes_the_key_and_never_an_interpreter_of_another_architecture(tmp_path):
    """uv itself: the key for this interpreter's own architecture finds it (``uv venv`` makes the env
    on it); the same version for another architecture finds none here (no download allowed)."""
    from app.core.base.pyarch import this_family

    uv = envs.uv_bin()
    assert uv, "uv is a dependency of the assistant"
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    own = _expected_here()
    other = "aarch64" if own == "x86_64" else "x86_64"
    # this interpreter's own folder first on PATH, where uv looks (the lane's venv Python is not one it takes)
    base = str(Path(getattr(sys, "_base_executable", sys.executable)).parent)
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_NO_CONFIG": "1",
           "PATH": base + os.pathsep + os.environ.get("PATH", "")}
    good = uv_request(version, this_family(), own)
    made = subprocess.run([uv, "venv", str(tmp_path / "ok"), "--python", good, "--no-project", "--quiet"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    bad = uv_request(version, this_family(), other)
    refused = subprocess.run([uv, "venv", str(tmp_path / "no"), "--python", bad, "--no-project", "--quiet"],
                             env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and bad in refused.stderr, (refused.returncode, refused.stderr)
    assert not (tmp_path / "no" / "pyvenv.cfg").exists()
