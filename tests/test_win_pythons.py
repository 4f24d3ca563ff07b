"""Windows Python discovery: the PEP 514 registry first (paths as they are, 张伟 included), the
``py -0p`` list only as a fallback, and a launcher path garbled by its code page asked again.

The registry tests write a PEP 514 tree under a key of their own in HKEY_CURRENT_USER (winreg
works under Wine) and remove it afterwards; the launcher test runs a stand-in ``py`` that prints
its list in cp1252, as a launcher writing in a Western code page would, on every OS.
"""
from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from app.core.detection import pythons
from tests.helpers import bare_venv, fake_program

windows_only = pytest.mark.skipif(os.name != "nt", reason="the Windows registry (the Windows lane)")


# ------------------------------------------------------------------------------ the PEP 514 tree

def _install(exe: str | None = None, folder: str | None = None):
    from app.core.detection.winregistry import RegKey

    values = {}
    if folder is not None:
        values[""] = folder
    if exe is not None:
        values["ExecutablePath"] = exe
    return RegKey(values)


def test_pep514_tree_gives_each_install_its_python():
    from app.core.detection.winregistry import RegKey

    tree = RegKey(keys={
        "PythonCore": RegKey(keys={
            "3.12": RegKey({"SysVersion": "3.12"}, {"InstallPath": _install(r"C:\Users\张伟\Python312\python.exe")}),
            "3.11-32": RegKey({}, {"InstallPath": _install(folder="C:\\Program Files (x86)\\Python311-32\\")}),
            "3.10": RegKey({}, {}),  # no InstallPath: not an install
        }),
        "PyLauncher": RegKey(keys={"x": RegKey({}, {"InstallPath": _install(r"C:\launcher\py.exe")})}),
        "ContinuumAnalytics": RegKey(keys={
            "Anaconda39-64": RegKey({"SysVersion": "3.9"}, {"InstallPath": _install(folder=r"D:\张伟\anaconda3")})}),
    })
    assert pythons.pep514_pythons(tree) == [
        ("3.12", r"C:\Users\张伟\Python312\python.exe"),
        ("3.11", "C:\\Program Files (x86)\\Python311-32\\python.exe"),
        ("3.9", r"D:\张伟\anaconda3\python.exe"),
    ]
    assert pythons.pep514_pythons(None) == []


# ------------------------------------------------------------------------------ the py launcher fallback

def _launcher_that_prints_cp1252(bindir: Path, target: str) -> None:
    fake_program(bindir, "py", f"""
import subprocess, sys
TARGET = {target!r}
if sys.argv[1:] == ["-0p"]:
    sys.stdout.buffer.write((" -V:3.13 *        " + TARGET + "\\r\\n").encode("cp1252", "replace"))
elif sys.argv[1:2] == ["-3.13"]:
    sys.exit(subprocess.call([TARGET, *sys.argv[2:]]))
else:
    sys.exit(103)
""")


def test_a_launcher_path_garbled_by_its_code_page_is_asked_again(tmp_path, monkeypatch):
    folder = tmp_path / "Users" / "张伟" / "Python 3.13"
    folder.mkdir(parents=True)
    target = folder / ("python.exe" if os.name == "nt" else "python")
    if os.name == "nt":
        shutil.copy2(sys.executable, target)  # a python.exe that finds its runtime through pyvenv.cfg
        cfg = Path(sys.executable).parent.parent / "pyvenv.cfg"
        if cfg.is_file():
            shutil.copy2(cfg, folder / "pyvenv.cfg")
    else:
        target.symlink_to(sys.executable)
    _launcher_that_prints_cp1252(tmp_path / "bin", str(target))
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ.get("PATH", ""))
    records = []
    found = pythons._launcher_list(30.0, time.monotonic(), records)
    assert found == [("3.13", str(target))], records
    assert "asked again" in records[-1].detail


# ------------------------------------------------------------------------------ the real registry (Windows)

@pytest.fixture(scope="module")
def cjk_venv(tmp_path_factory) -> Path:
    """A real venv (uv) in a folder with a Chinese name."""
    env = tmp_path_factory.mktemp("pep514") / "Users" / "张伟" / "Python 环境"
    env.parent.mkdir(parents=True)
    bare_venv(env)
    yield env
    shutil.rmtree(env.parent.parent, ignore_errors=True)


@pytest.fixture
def test_key():
    """A PEP 514 tree under a key of this test's own in HKEY_CURRENT_USER, removed afterwards."""
    import winreg

    key = rf"Software\TorchSetupAssistantTest-{os.getpid()}\Python"

    def put(company: str, tag: str, values: dict[str, str], install: dict[str, str]) -> None:
        with winreg.CreateKey(winreg.HKEY_CURRENT_USER, rf"{key}\{company}\{tag}") as k:
            for name, value in values.items():
                winreg.SetValueEx(k, name, 0, winreg.REG_SZ, value)
        with winreg.CreateKey(winreg.HKEY_CURRENT_USER, rf"{key}\{company}\{tag}\InstallPath") as k:
            for name, value in install.items():
                winreg.SetValueEx(k, name, 0, winreg.REG_SZ, value)

    def delete(path: str) -> None:
        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, path) as k:
                subs = []
                while True:
                    try:
                        subs.append(winreg.EnumKey(k, len(subs)))
                    except OSError:
                        break
        except OSError:
            return
        for sub in subs:
            delete(rf"{path}\{sub}")
        winreg.DeleteKey(winreg.HKEY_CURRENT_USER, path)

    yield key, put
    delete(key.rsplit("\\", 1)[0])


@windows_only
def test_registry_interpreter_in_a_chinese_folder_is_found_unchanged(cjk_venv, test_key):
    key, put = test_key
    exe = str(cjk_venv / "Scripts" / "python.exe")
    put("TsaTest", "3.13", {"SysVersion": "3.13", "DisplayName": "Python 3.13 (张伟)"},
        {"": str(cjk_venv / "Scripts"), "ExecutablePath": exe})
    put("TsaTest", "2.7", {}, {"": r"C:\Python27"})  # only the folder: python.exe is added
    put("PyLauncher", "x", {}, {"": r"C:\launcher"})  # the launcher's settings, not an install
    assert sorted(pythons.registry_pythons(key)) == [("2.7", r"C:\Python27\python.exe"), ("3.13", exe)]

    _running, found, records = pythons.detect_pythons(30.0, None, family="windows", arch="x86_64",
                                                      registry_key=key)
    mine = [p for p in found if p.executable == exe]
    assert len(mine) == 1, [p.executable for p in found]
    v = sys.version_info
    assert mine[0].source == "registry" and mine[0].version == f"{v[0]}.{v[1]}.{v[2]}"
    assert any(r.name == "python-registry" and r.status == "ok" for r in records)


@windows_only
def test_no_registry_entries_fall_back_to_the_launcher(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))  # and no py either: nothing to run
    _running, _found, records = pythons.detect_pythons(10.0, None, family="windows", arch="x86_64",
                                                       registry_key=rf"Software\TorchSetupNoSuchKey-{os.getpid()}")
    names = [(r.name, r.status) for r in records]
    assert ("python-registry", "empty") in names
