"""The Windows pre-flight (issue 24, app.core.install.winchecks): the Visual C++ runtime, the path
budget against MAX_PATH with ``LongPathsEnabled`` off, OneDrive folders, and the PowerShell line
that works under the default execution policy.

The decisions are pure functions of what was read, tested on any OS with Windows path strings.
On the Windows lane the registry is written for real (HKLM under Wine; every value and key a
test writes is restored or removed at its end) and the CLI runs end to end: a folder too deep
for the wheels is refused before anything is created, with the reason and a short folder
offered, and the same folder installs once long paths are allowed; an env under %OneDrive%
gets the warning. (Wine has no MAX_PATH limit itself, so the lane shows the check, not the
failure it prevents.)
"""
from __future__ import annotations

import ntpath
import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.core.base.text import render
from tests.helpers import fake_program
from tests.netlab import build_wheel

REPO = Path(__file__).resolve().parents[1]
WINDOWS = os.name == "nt"
windows_only = pytest.mark.skipif(not WINDOWS, reason="reads and writes the Windows registry, runs the Windows CLI")
#: a torch-like licence path (torch 2.13's longest entry after its dist-info folder)
LONG_TAIL = ("licenses/third_party/kineto/libkineto/third_party/dynolog/third_party/prometheus-cpp/3rdparty/"
             "civetweb/src/third_party/duktape-1.5.2/LICENSE.txt")


def _wc():  # imported in each test: the CLI tests below also run against a checkout without it
    from app.core.install import winchecks

    return winchecks


# ------------------------------------------------------------------ the path budget (pure)

def test_the_longest_path_of_a_wheel_is_where_its_files_land(tmp_path):
    wheel = build_wheel(tmp_path, "deep-demo", "1.0", payload={LONG_TAIL: b"x"})
    need = _wc().wheel_paths(wheel)
    assert need is not None
    assert need.file == "Lib\\site-packages\\deep_demo\\" + LONG_TAIL.replace("/", "\\")
    assert need.folder == ntpath.dirname(need.file)
    # MAX_PATH is 260 with its NUL: 259 characters for the file, 247 for its folder (8.3 room)
    assert need.max_env_chars() == min(259 - 1 - len(need.file), 247 - 1 - len(need.folder))


def test_a_wheels_data_scheme_lands_outside_site_packages():
    placed = _wc()._placed
    assert placed("x-1.data/scripts/tool.exe", "x", "3.13") == "Scripts\\tool.exe"
    assert placed("x-1.data/purelib/x/a.py", "x", "3.13") == "Lib\\site-packages\\x\\a.py"
    assert placed("x-1.data/data/share/doc.txt", "x", "3.13") == "share\\doc.txt"
    assert placed("x-1.data/headers/h.h", "x", "3.12") == "Include\\site\\python3.12\\x\\h.h"


def test_the_torch_wheels_own_longest_path_matches_the_sourced_constant():
    """The constant used when the torch wheel is not at hand is what the real wheel holds."""
    folder = os.environ.get("TSA_WIN_WHEELS") or "/var/cache/torch-setup-wine-lane/downloads/torch"
    wheels = sorted(Path(folder).glob("torch-2.13.0-*win_amd64.whl")) if Path(folder).is_dir() else []
    if not wheels:
        pytest.skip("no torch 2.13.0 Windows wheel here (TSA_WIN_WHEELS)")
    real = _wc().wheel_paths(wheels[0])
    estimate = _wc()._torch_estimate("2.13.0")
    assert real is not None and estimate is not None
    assert real.file == estimate.file and len(real.file) == 18 + 167
    assert _wc().wheel_msvc(wheels[0]) == (14, 42)  # c10.dll's linker: the runtime it needs


ENV_OK = "C:\\Users\\Tom\\torch-envs\\torch-env"
ENV_DEEP = "C:\\Users\\Tom Smith\\AppData\\Local\\Temp\\pytest-of-tom\\pytest-12\\a_deep_test0\\envs\\torch env"


def _need(tail: str = "deep_demo/" + LONG_TAIL):
    file = "Lib\\site-packages\\" + tail.replace("/", "\\")
    return _wc().PathNeed(file, ntpath.dirname(file), "deep_demo-1.0-py3-none-any.whl")


def test_a_folder_within_the_budget_passes_and_one_character_more_is_refused():
    wc, need = _wc(), _need()
    allowed = need.max_env_chars()
    base = "C:\\" + "e" * (allowed - 3)
    assert len(base) == allowed and wc.path_verdict(base, need, False, {}).ok
    refused = wc.path_verdict(base + "x", need, False, {})
    assert not refused.ok and refused.blocking and refused.name == "path"


def test_a_deep_folder_is_refused_with_the_reason_a_short_folder_and_how_to_allow_long_paths():
    wc = _wc()
    c = wc.path_verdict(ENV_DEEP, _need(), False, {"LOCALAPPDATA": "C:\\Users\\Tom Smith\\AppData\\Local"})
    text, hint = render(c.message), render(c.hint)
    assert c.blocking
    assert ENV_DEEP in text and "259" in text and f"at most {_need().max_env_chars()}" in text
    assert "Nothing was changed" in text
    assert "C:\\torch-envs\\torch env" in hint
    assert "LongPathsEnabled" in hint and "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\FileSystem" in hint
    assert "Enable Win32 long paths" in hint
    kinds = [(a.kind.value, a.value or a.url) for a in c.actions]
    assert kinds == [("choose_other_location", "C:\\torch-envs\\torch env"), ("enable_long_paths", wc.LONG_PATHS_URL)]
    zh = render(c.message, "zh_CN") + render(c.hint, "zh_CN")
    assert "太深" in zh and "启用 Win32 长路径" in zh and "C:\\torch-envs\\torch env" in zh


def test_with_long_paths_allowed_the_same_folder_passes():
    c = _wc().path_verdict(ENV_DEEP, _need(), True, {})
    assert c.ok and "LongPathsEnabled = 1" in render(c.message)


def test_the_short_folder_fits_and_keeps_the_drive_and_stays_out_of_onedrive():
    wc = _wc()
    assert wc.short_folder("D:\\work\\deep\\env", 60, {}) == "D:\\torch-envs\\env"
    assert wc.short_folder("\\\\srv\\share\\a\\env", 60, {}) == "\\\\srv\\share\\torch-envs\\env"
    # too long a name: shortened into <drive>\t
    got = wc.short_folder("C:\\x\\" + "n" * 80, 30, {})
    assert got.startswith("C:\\t\\n") and len(got) <= 30


# ------------------------------------------------------------------ the Visual C++ runtime (pure)

def _key(**values):
    from app.core.detection.winregistry import RegKey

    return RegKey(values)


def test_the_runtime_key_gives_its_version_when_installed():
    wc = _wc()
    assert wc.runtime_from_key(_key(Installed=1, Major=14, Minor=44, Bld=35211, Version="v14.44.35211.00")) == \
        (14, 44, 35211)
    assert wc.runtime_from_key(_key(Installed=1, Version="v14.29.30133.00")) == (14, 29, 30133)
    assert wc.runtime_from_key(_key(Installed=0, Major=14, Minor=44)) is None
    assert wc.runtime_from_key(None) is None


def test_the_runtime_a_torch_release_needs_is_sourced():
    wc = _wc()
    assert wc.msvc_floor("2.13.0+cpu") == (14, 42)  # built with MSVC 14.42 since 2.9 (pytorch/pytorch#196987)
    assert wc.msvc_floor("2.9.0") == (14, 42)
    assert wc.msvc_floor(None) == (14, 42)  # an unpinned torch: the newest
    assert wc.msvc_floor("2.5.1") == (14, 20)  # the first runtime with vcruntime140_1.dll


def test_a_missing_or_old_runtime_is_refused_and_offered_and_a_new_one_passes():
    wc = _wc()
    missing = wc.vc_runtime_verdict(wc.VcRuntime(None), (14, 42), "2.13.0")
    old = wc.vc_runtime_verdict(wc.VcRuntime((14, 0, 24215), "registry"), (14, 42), "2.13.0")
    ok = wc.vc_runtime_verdict(wc.VcRuntime((14, 44, 35211), "registry"), (14, 42), "2.13.0")
    assert missing.blocking and old.blocking and ok.ok
    assert "not installed" in render(missing.message) and "DLL load failed" in render(missing.message)
    assert "14.0.24215" in render(old.message) and "14.42" in render(old.message)
    for c in (missing, old):
        assert "https://aka.ms/vc14/vc_redist.x64.exe" in render(c.hint)
        assert "/install /quiet /norestart" in render(c.hint)
        assert [a.kind.value for a in c.actions] == ["install_vcredist", "run_vcredist"]
        assert "运行库" in render(c.message, "zh_CN") and "vc_redist.x64.exe" in render(c.hint, "zh_CN")
    assert "14.44.35211" in render(ok.message)


def test_a_dlls_linker_version_is_read_from_its_pe_header():
    head = bytearray(512)
    head[:2] = b"MZ"
    struct.pack_into("<I", head, 0x3C, 0x80)
    head[0x80:0x84] = b"PE\0\0"
    head[0x80 + 24 + 2:0x80 + 24 + 4] = bytes([14, 42])
    assert _wc().dll_linker_version(bytes(head)) == (14, 42)
    assert _wc().dll_linker_version(b"not a dll") is None


def _fake_vcredist(tmp_path: Path, code: int) -> tuple[Path, Path]:
    record = tmp_path / "args.txt"
    src = (f"import sys\nopen({str(record)!r}, 'w', encoding='utf-8').write(' '.join(sys.argv[1:]))\n"
           f"sys.exit({code})\n")
    return fake_program(tmp_path / f"bin{code}", "vc_redist.x64", src), record


@pytest.mark.parametrize(("code", "ok", "words"), [
    (0, True, "is installed"), (3010, True, "restart"), (1638, True, "is installed"),
    (1602, False, "declined"), (5, False, "exit code 5")])
def test_the_runtime_installer_runs_with_the_silent_flags(tmp_path, code, ok, words):
    if code > 255 and not WINDOWS:
        pytest.skip("a POSIX exit status has 8 bits; Windows' installer codes need Windows")
    exe, record = _fake_vcredist(tmp_path, code)
    result = _wc().run_vcredist(exe)
    assert record.read_text(encoding="utf-8") == "/install /quiet /norestart"
    assert result.ok is ok and words in render(result.message) and result.exit_code == code


def test_the_runtime_installer_must_be_a_file(tmp_path):
    result = _wc().run_vcredist(tmp_path / "vc_redist.x64.exe")
    assert not result.ok and "https://aka.ms/vc14/vc_redist.x64.exe" in render(result.message)


# ------------------------------------------------------------------ OneDrive (pure)

HOME = "C:\\Users\\张伟"
ONEDRIVE = HOME + "\\OneDrive"


def test_an_env_under_onedrive_is_warned_with_the_reason_and_a_folder_outside():
    wc = _wc()
    environ = {"OneDrive": ONEDRIVE, "LOCALAPPDATA": HOME + "\\AppData\\Local"}
    roots = wc.cloud_roots(environ, registry=False)
    env = ONEDRIVE + "\\Documents\\envs\\torch-env"
    c = wc.cloud_verdict(env, roots, "torch-env", environ, HOME)
    assert c is not None and not c.ok and c.severity == "warning" and not c.blocking
    text = render(c.message)
    assert env in text and "OneDrive" in text
    assert all(w in text for w in ("uploads gigabytes", "locks files", "placeholders"))
    assert wc.default_env_root(environ, HOME, roots, windows=True) + "\\torch-env" in render(c.hint)
    assert [(a.kind.value, a.value) for a in c.actions] == [("choose_other_location", HOME + "\\torch-envs\\torch-env")]
    assert "OneDrive" in render(c.message, "zh_CN") and "占位" in render(c.message, "zh_CN")
    assert wc.cloud_verdict(HOME + "\\torch-envs\\e", roots, "e", environ, HOME) is None


def test_onedrive_is_found_in_any_case_and_by_every_variable():
    wc = _wc()
    roots = wc.cloud_roots({"ONEDRIVECOMMERCIAL": "D:\\OneDrive - Contoso"}, registry=False)
    assert wc.cloud_folder_of("d:\\onedrive - contoso\\x\\env", roots) is not None
    assert wc.cloud_folder_of("D:\\OneDrive - Contoso2\\env", roots) is None  # a sibling, not inside


def test_a_desktop_redirected_into_onedrive_is_named():
    wc = _wc()
    environ = {"USERPROFILE": HOME}
    roots = wc.cloud_roots(environ, registry=False, known={"Desktop": HOME + "\\OneDrive\\Desktop"})
    found = wc.cloud_folder_of(HOME + "\\OneDrive\\Desktop\\ai\\env", roots)
    assert found == ("Desktop", HOME + "\\OneDrive\\Desktop")
    c = wc.cloud_verdict(HOME + "\\OneDrive\\Desktop\\ai\\env", roots, "env", environ, HOME)
    assert c is not None and "Desktop folder, which OneDrive keeps" in render(c.message)
    assert "桌面" in render(c.message, "zh_CN")


def test_the_default_location_is_never_inside_onedrive():
    wc = _wc()
    local = HOME + "\\AppData\\Local"
    # a profile whose home itself is synced: the default moves to %LOCALAPPDATA%, then the system drive
    assert wc.default_env_root({"LOCALAPPDATA": local}, HOME, [("OneDrive", HOME)], windows=True) == \
        "C:\\torch-envs"
    assert wc.default_env_root({"LOCALAPPDATA": local}, HOME, [("OneDrive", ONEDRIVE)], windows=True) == \
        HOME + "\\torch-envs"
    assert wc.default_env_root({"LOCALAPPDATA": "E:\\local"}, HOME, [("OneDrive", HOME)], windows=True) == \
        "E:\\local\\torch-envs"


# ------------------------------------------------------------------ PowerShell's execution policy

def test_the_powershell_line_lifts_the_execution_policy_for_its_window_only():
    from app.core.lifecycle.terminal import windows_activation

    acts = {a.shell: a for a in windows_activation("C:\\Users\\张伟\\torch env")}
    ps = acts["powershell"]
    assert ps.command == ("Set-ExecutionPolicy -Scope Process -ExecutionPolicy Bypass -Force; "
                          "& 'C:\\Users\\张伟\\torch env\\Scripts\\Activate.ps1'")
    assert "LocalMachine" not in ps.command and "CurrentUser" not in ps.command
    assert "Restricted" in render(ps.note) and "this PowerShell window only" in render(ps.note)
    assert "Restricted" in render(ps.note, "zh_CN") and "窗口" in render(ps.note, "zh_CN")
    assert ps.to_dict()["note"] == render(ps.note)
    assert not acts["cmd"].note


# ------------------------------------------------------------------ the command line's refusal

def test_a_refusal_with_actions_names_the_env_option_with_the_folder_offered():
    from app.commands._errors import format_error
    from app.core.base.errors import BadInput
    from app.core.install import raise_for_checks

    c = _wc().path_verdict(ENV_DEEP, _need(), False, {})
    with pytest.raises(BadInput) as got:
        raise_for_checks([c])
    err = got.value
    assert err.exit_code == 2 and err.error_code == "preflight.path_too_long"
    shown = format_error(err, ["install", "--env", ENV_DEEP, "--yes"])
    assert "C:\\torch-envs\\torch env" in shown and "--env" in shown
    assert "torch-setup install --yes --env" in shown.replace('"', "").replace("'", "")
    assert [a["kind"] for a in err.to_dict()["actions"]] == ["choose_other_location", "enable_long_paths"]


def _cli(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, encoding="utf-8", errors="replace", timeout=600, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})})


@pytest.mark.skipif(WINDOWS, reason="the Windows lane runs the --vcredist install below")
def test_vcredist_is_refused_off_windows(tmp_path):
    r = _cli("install", "--env", tmp_path / "e", "--packages", "six", "--vcredist", tmp_path / "x.exe", "--yes")
    assert r.returncode == 2 and "--vcredist is for Windows" in r.stderr
    assert not (tmp_path / "e").exists()


# ------------------------------------------------------------------ the Windows lane: the registry for real

@contextmanager
def hklm(path: str, values: dict[str, int | str]) -> Iterator[None]:
    """``values`` (ints as DWORD, strings as REG_SZ) in HKLM\\``path`` (64-bit view) for the block;
    afterwards each value is put back as it was (or deleted) and the keys made for it removed."""
    import winreg

    view = winreg.KEY_WOW64_64KEY
    parts = path.split("\\")
    made: list[str] = []
    for i in range(1, len(parts) + 1):
        sub = "\\".join(parts[:i])
        try:
            winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, sub, 0, winreg.KEY_READ | view).Close()
        except OSError:
            made.append(sub)
    key = winreg.CreateKeyEx(winreg.HKEY_LOCAL_MACHINE, path, 0, winreg.KEY_ALL_ACCESS | view)
    before: dict[str, tuple[object, int] | None] = {}
    try:
        for name, value in values.items():
            try:
                before[name] = winreg.QueryValueEx(key, name)
            except OSError:
                before[name] = None
            kind = winreg.REG_DWORD if isinstance(value, int) else winreg.REG_SZ
            winreg.SetValueEx(key, name, 0, kind, value)
        yield
    finally:
        for name, old in before.items():
            if old is None:
                winreg.DeleteValue(key, name)
            else:
                winreg.SetValueEx(key, name, 0, old[1], old[0])
        key.Close()
        for sub in reversed(made):
            winreg.DeleteKeyEx(winreg.HKEY_LOCAL_MACHINE, sub, view, 0)


def _key_exists(path: str) -> bool:
    import winreg

    try:
        winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, path, 0, winreg.KEY_READ | winreg.KEY_WOW64_64KEY).Close()
    except OSError:
        return False
    return True


VC_KEY = r"SOFTWARE\Microsoft\VisualStudio\14.0\VC\Runtimes\x64"
LONG_KEY = r"SYSTEM\CurrentControlSet\Control\FileSystem"


@windows_only
@pytest.mark.lane
def test_lane_the_runtime_key_decides_when_no_dll_is_there(tmp_path):
    """No key: refused and offered; 14.29 fits a torch 2.5 but not a 2.13 (MSVC 14.42); 14.0 is
    too old; 14.44 fits. ``tmp_path`` stands for a System32 without the runtime's DLLs."""
    wc = _wc()
    if any(_key_exists(k) for k in wc.VC_RUNTIME_KEYS):
        pytest.skip("this machine has the runtime's registry key; the test may not remove it")
    no_dlls = str(tmp_path)
    assert wc.read_vc_runtime(no_dlls) == wc.VcRuntime(None)
    assert wc.vc_runtime_verdict(wc.read_vc_runtime(no_dlls), (14, 42), "2.13.0").blocking
    cases = [("v14.29.30133.00", 14, 29, 30133, "2.5.1", True), ("v14.29.30133.00", 14, 29, 30133, "2.13.0", False),
             ("v14.0.24215.01", 14, 0, 24215, "2.5.1", False), ("v14.44.35211.00", 14, 44, 35211, "2.13.0", True)]
    for version, major, minor, bld, torch, fits in cases:
        with hklm(VC_KEY, {"Installed": 1, "Major": major, "Minor": minor, "Bld": bld, "Rbld": 0, "Version": version}):
            have = wc.read_vc_runtime(no_dlls)
            assert have == wc.VcRuntime((major, minor, bld), "registry")
            c = wc.vc_runtime_verdict(have, wc.msvc_floor(torch), torch)
            assert c.ok is fits, (version, torch, render(c.message))
            if not fits:
                assert [a.kind.value for a in c.actions] == ["install_vcredist", "run_vcredist"]
    assert not _key_exists(VC_KEY)  # put back as it was


@windows_only
@pytest.mark.lane
def test_lane_the_runtime_dll_in_system32_counts():
    """System32's msvcp140.dll gives the version when no key says anything (Wine's own reports 14.42)."""
    wc = _wc()
    have = wc.read_vc_runtime()
    if have.version is None:
        pytest.skip("no Visual C++ runtime DLLs in System32 here")
    assert have.version[0] == 14 and have.where


@windows_only
@pytest.mark.lane
def test_lane_long_paths_enabled_is_read_from_the_registry():
    wc = _wc()
    with hklm(LONG_KEY, {"LongPathsEnabled": 1}):
        assert wc.long_paths_enabled()
    with hklm(LONG_KEY, {"LongPathsEnabled": 0}):
        assert not wc.long_paths_enabled()


@pytest.fixture(scope="module")
def deep_wheels(tmp_path_factory) -> Path:
    """A wheel whose longest file is as long as torch's (inside the env: 176 characters)."""
    folder = tmp_path_factory.mktemp("wh")
    build_wheel(folder, "deep-demo", "1.0", payload={LONG_TAIL: b"licence\n"})
    return folder


@windows_only
@pytest.mark.slow
@pytest.mark.lane
def test_lane_a_folder_too_deep_is_refused_before_anything_is_created_and_installs_with_long_paths(
        tmp_path, deep_wheels):
    top = tmp_path / ("deep-" + "x" * 60) / "envs"  # deep whatever the temporary folder (the lane's is short)
    env = top / "torch env"
    args = ("install", "--env", env, "--installer", "uv", "--packages", "deep-demo", "--find-links", deep_wheels,
            "--yes", "--no-verify")
    with hklm(LONG_KEY, {"LongPathsEnabled": 0}):
        refused = _cli(*args)
    out = refused.stdout + refused.stderr
    assert refused.returncode == 2, out
    assert not top.parent.exists()  # nothing was created, not even the parent folders
    assert "is too deep for Windows" in out and "Nothing was changed" in out
    assert f"{ntpath.splitdrive(str(env))[0]}\\torch-envs\\torch env" in out  # the short folder offered
    assert "--env" in out and "LongPathsEnabled" in out
    with hklm(LONG_KEY, {"LongPathsEnabled": 1}):
        done = _cli(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Long paths are allowed on this computer" in done.stderr
    installed = env / "Lib" / "site-packages" / "deep_demo" / Path(LONG_TAIL)
    assert installed.is_file() and len(str(installed)) > 259


@windows_only
@pytest.mark.slow
@pytest.mark.lane
def test_lane_an_env_under_onedrive_gets_the_warning(tmp_path, deep_wheels):
    onedrive = tmp_path / "OneDrive"
    onedrive.mkdir()
    build_wheel(tmp_path / "small", "tiny-demo", "1.0")
    env = onedrive / "e"
    r = _cli("install", "--env", env, "--installer", "uv", "--packages", "tiny-demo", "--find-links",
             tmp_path / "small", "--yes", "--no-verify", env={"OneDrive": str(onedrive)})
    assert r.returncode == 0, r.stdout + r.stderr  # a warning: with --yes the user has confirmed
    warning = next((ln for ln in r.stderr.splitlines() if "is inside OneDrive" in ln), "")
    assert warning.lstrip().startswith("?") and "uploads gigabytes" in warning, r.stderr
    default = _wc().default_env_root({**os.environ, "OneDrive": str(Path.home())})
    assert not default.lower().startswith(str(Path.home()).lower() + "\\")


@windows_only
@pytest.mark.slow
@pytest.mark.lane
def test_lane_vcredist_runs_the_installer_the_user_gives_then_installs(tmp_path):
    exe, record = _fake_vcredist(tmp_path, 0)
    build_wheel(tmp_path / "small", "tiny-demo", "1.0")
    env = tmp_path / "e"
    r = _cli("install", "--env", env, "--installer", "uv", "--packages", "tiny-demo", "--find-links",
             tmp_path / "small", "--vcredist", exe, "--yes", "--no-verify")
    assert r.returncode == 0, r.stdout + r.stderr
    assert record.read_text(encoding="utf-8") == "/install /quiet /norestart"
    assert "The Visual C++ runtime installer will run:" in r.stderr
    assert "The Visual C++ runtime is installed." in r.stderr
