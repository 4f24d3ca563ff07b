"""The Windows pre-flight: machine facts that make a PyTorch install fail on Windows only after
minutes of downloading, checked before anything is downloaded or created (issue 24).

* **The Visual C++ runtime** (:func:`check_vc_runtime`): torch's DLLs (``c10.dll``,
  ``torch_cpu.dll``) import ``MSVCP140.dll``, ``VCRUNTIME140.dll`` and ``VCRUNTIME140_1.dll`` from
  Microsoft's Visual C++ 2015–2022 runtime, which the wheels do not carry; an old or missing one is
  PyTorch's most reported Windows failure ("DLL load failed", WinError 126 / 1114). The installed
  version is read from the runtime's registry key (through :mod:`app.core.detection.winregistry`)
  and from the file version of ``System32\\msvcp140.dll``; the version needed is the MSVC toolset
  the torch DLLs were linked with (read from the wheel when it is in a local folder, else
  :data:`MSVC_FLOORS`). :func:`run_vcredist` runs Microsoft's ``vc_redist.x64.exe`` with
  :data:`VCREDIST_ARGS` once the user has confirmed.
* **The path budget** (:func:`check_path_budget`): without ``LongPathsEnabled`` a Windows path
  has at most :data:`MAX_PATH_CHARS` characters (MAX_PATH, 260 with its NUL) and a folder
  :data:`MAX_DIR_CHARS`; the longest file of the chosen wheels, as it lands in the env
  (:func:`wheel_paths`), plus the env's own path must fit, else the folder is refused with a
  short one offered (:func:`short_folder`) and how to allow long paths.
* **Cloud folders** (:func:`check_cloud_folder`): an env under OneDrive (its folders from
  ``%OneDrive%``, ``%OneDriveConsumer%``, ``%OneDriveCommercial%`` and OneDrive's accounts in
  the registry; a Desktop or Documents redirected into it) gets a warning with the reason and
  a folder outside it; :func:`default_env_root` is never inside one.

The decisions are pure functions of what was read (testable on any OS with ``ntpath``
strings); the check functions are None off Windows.
"""
from __future__ import annotations

import ntpath
import os
import re
import struct
import sys
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from app.core.base.actions import Action, ActionKind
from app.core.base.cancel import CancelToken
from app.core.base.text import Text, msg
from app.core.detection.winregistry import RegKey, read_key
from app.core.install.request import Check, InstallPlan
from app.core.proc import runner

__all__ = [
    "CLOUD_VARS",
    "LONG_PATHS_URL",
    "MAX_DIR_CHARS",
    "MAX_PATH_CHARS",
    "MSVC_FLOORS",
    "TORCH_LONGEST_TAIL",
    "VCREDIST_ARGS",
    "VCREDIST_URL",
    "PathNeed",
    "VcRuntime",
    "VcredistResult",
    "check_cloud_folder",
    "check_path_budget",
    "check_vc_runtime",
    "cloud_folder_of",
    "cloud_roots",
    "default_env_root",
    "dll_linker_version",
    "long_paths_enabled",
    "path_need",
    "path_verdict",
    "read_vc_runtime",
    "run_vcredist",
    "runtime_from_key",
    "short_folder",
    "vc_runtime_verdict",
    "wheel_msvc",
    "wheel_paths",
]

# --------------------------------------------------------------------------- facts (each with its source)

#: Microsoft's permanent link to the latest supported x64 Visual C++ v14 runtime (2015–2022 and
#: later), from learn.microsoft.com/en-us/cpp/windows/latest-supported-vc-redist ("Latest
#: supported redistributable version"); the same link is what torch users are pointed to
#: (nagadomi/nunif#701).
VCREDIST_URL = "https://aka.ms/vc14/vc_redist.x64.exe"
#: vc_redist.x64.exe's unattended options (a WiX bundle: install, no UI, never restart by itself).
VCREDIST_ARGS = ("/install", "/quiet", "/norestart")
#: vc_redist's exit codes that leave a usable runtime: done, done but a restart is pending
#: (ERROR_SUCCESS_REBOOT_REQUIRED), a newer version is already there (ERROR_PRODUCT_VERSION).
_VCREDIST_OK = {0: "done", 3010: "restart", 1638: "newer"}
#: The runtime's registry key (Microsoft, "Determine if the Visual C++ Redistributable is
#: installed": HKLM\SOFTWARE\Microsoft\VisualStudio\14.0\VC\Runtimes\<arch>, values Installed,
#: Major, Minor, Bld, Version); the 32-bit installer of the x64 runtime writes it in the 32-bit view.
VC_RUNTIME_KEYS = (r"SOFTWARE\Microsoft\VisualStudio\14.0\VC\Runtimes\x64",
                   r"SOFTWARE\WOW6432Node\Microsoft\VisualStudio\14.0\VC\Runtimes\x64")
#: The runtime DLLs torch's own DLLs import (the PE import tables of torch/lib/c10.dll and
#: torch_cpu.dll in torch-2.13.0-cp313-cp313-win_amd64.whl, read 2026-12-04); torch_python.dll
#: also imports MSVCP140_ATOMIC_WAIT.dll, part of the same runtime since 14.28.
RUNTIME_DLLS = ("msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll")
#: The MSVC toolset torch's Windows wheels are linked with, from a torch release on: "Since 2.9.0
#: the Windows wheels are built with MSVC 14.42" (pytorch/pytorch#196987, fixing #169429; the
#: PE headers of torch-2.13.0's DLLs say linker 14.42, read 2026-12-04); Microsoft: "The
#: Redistributable version must be at least as recent as the MSVC build toolset used to build
#: your app" (learn.microsoft.com/en-us/cpp/windows/latest-supported-vc-redist), and a runtime
#: older than 14.40 crashes in c10.dll's first std::mutex lock (WinError 1114; microsoft/STL#4730).
#: Older releases need at least the first runtime with VCRUNTIME140_1.dll, VS 2019's 14.20
#: (pytorch/pytorch#32916).
MSVC_FLOORS: tuple[tuple[tuple[int, int], tuple[int, int]], ...] = (((2, 9), (14, 42)), ((0, 0), (14, 20)))

#: Microsoft, "Maximum Path Length Limitation": MAX_PATH is 260 with the terminating NUL, so a
#: path has at most 259 characters; a folder must leave room for an 8.3 name (MAX_PATH - 12,
#: NUL included: 247 characters), the limit CreateDirectory enforces.
MAX_PATH_CHARS = 259
MAX_DIR_CHARS = 247
LONG_PATHS_URL = "https://learn.microsoft.com/en-us/windows/win32/fileio/maximum-file-path-limitation"
LONG_PATHS_KEY = r"SYSTEM\CurrentControlSet\Control\FileSystem"
#: Where a venv's (and a conda env's) packages go on Windows, relative to the env.
SITE_PACKAGES = "Lib\\site-packages"
#: The longest file of torch's Windows wheel after its ``torch-<version>.dist-info/`` folder,
#: for the wheels that are not in a local folder (torch >= 2.13): in
#: torch-2.13.0-cp313-cp313-win_amd64.whl (PyPI) it is
#: torch-2.13.0.dist-info/licenses/third_party/kineto/libkineto/third_party/dynolog/third_party/
#: prometheus-cpp/3rdparty/civetweb/src/third_party/duktape-1.5.2/LICENSE.txt, 167 characters
#: (read 2026-12-04; issue 24 says ~171 with a local version label such as +cu130).
TORCH_LONGEST_TAIL = ("licenses/third_party/kineto/libkineto/third_party/dynolog/third_party/prometheus-cpp/"
                      "3rdparty/civetweb/src/third_party/duktape-1.5.2/LICENSE.txt")
_TORCH_TAIL_FROM = (2, 13)
#: OneDrive's folders as Windows gives them to every process (personal; work or school).
CLOUD_VARS = ("OneDrive", "OneDriveConsumer", "OneDriveCommercial")
_ONEDRIVE_ACCOUNTS = r"Software\Microsoft\OneDrive\Accounts"
_SHELL_FOLDERS = r"Software\Microsoft\Windows\CurrentVersion\Explorer\User Shell Folders"
#: The known folders OneDrive's backup redirects ("Personal" is Documents).
_KNOWN_FOLDERS = {"Desktop": "Desktop", "Personal": "Documents"}
_ONEDRIVE_PART = re.compile(r"^OneDrive( - .+)?$", re.I)
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def _windows() -> bool:
    return os.name == "nt"


def _env(environ: Mapping[str, str], name: str) -> str:
    """``environ[name]`` as Windows looks it up (any case; "" when unset)."""
    if name in environ:
        return environ[name]
    upper = name.upper()
    return next((v for k, v in environ.items() if k.upper() == upper), "")


def _version_tuple(text: str) -> tuple[int, ...]:
    m = re.match(r"^(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else ()


def _dotted(v: Sequence[int]) -> str:
    return ".".join(str(x) for x in v)


# --------------------------------------------------------------------------- what the plan installs

def _torch_pin(packages: Iterable[str]) -> tuple[bool, str | None]:
    """(installs torch, its pinned version such as "2.13.0+cpu" or None) of requirement strings."""
    from packaging.requirements import InvalidRequirement, Requirement  # start-up

    for text in packages:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            name = Path(text).name.lower()
            if name.startswith("torch-") and name.endswith(".whl"):
                return True, name.split("-")[1]
            continue
        if req.name.lower() != "torch":
            continue
        for spec in req.specifier:
            if spec.operator in ("==", "==="):
                return True, spec.version.removesuffix(".*")
        return True, None
    return False, None


def _plan_wheels(p: InstallPlan) -> tuple[tuple[Path, ...], tuple[str, ...]]:
    """(the local wheel files the install takes, the requirements no local folder holds)."""
    from app.core.install.planning import python_version
    from app.core.sources import closure, scan

    wheels = scan(p.request.sources.folders)
    if p.request.sources.bundle is not None:  # a bundle holds exactly what it installs
        return tuple(w.path for w in wheels), ()
    if not wheels:
        return (), tuple(p.packages)
    found = closure(list(p.packages), wheels, python_version(p.python, p.python_request))
    return tuple(w.path for w in found.chosen), found.missing


def _torch_release(missing: Sequence[str], local: Sequence[Path]) -> tuple[bool, str | None]:
    """(the install has torch, its version) from the local wheels it takes, else the requirements
    no folder holds (all of them when there is no folder)."""
    for path in local:
        if path.name.lower().startswith("torch-"):
            return True, path.name.split("-")[1]
    return _torch_pin(missing)


# --------------------------------------------------------------------------- the Visual C++ runtime

@dataclass(frozen=True)
class VcRuntime:
    """What this machine has: the best version found and where it was read (``registry`` or the
    DLL file), None when neither says anything."""

    version: tuple[int, ...] | None
    where: str = ""


def runtime_from_key(key: RegKey | None) -> tuple[int, ...] | None:
    """The runtime version an ``...\\VC\\Runtimes\\x64`` key records (None: no key, or not installed)."""
    if key is None or key.values.get("Installed") not in (1, "1"):
        return None
    major, minor, bld = (key.values.get(n) for n in ("Major", "Minor", "Bld"))
    if isinstance(major, int) and isinstance(minor, int):
        return (major, minor, bld if isinstance(bld, int) else 0)
    m = _VERSION.match(key.text("Version") or "")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


def _file_version(path: str) -> tuple[int, ...] | None:
    """The file version resource of a DLL (``(14, 42, 34433, 0)``), None when it has none."""
    if sys.platform != "win32":
        return None
    import ctypes
    from ctypes import wintypes

    version = ctypes.WinDLL("version", use_last_error=True)
    size = version.GetFileVersionInfoSizeW(path, None)
    if not size:
        return None
    buf = ctypes.create_string_buffer(size)
    if not version.GetFileVersionInfoW(path, 0, size, buf):
        return None
    ptr, length = ctypes.c_void_p(), wintypes.UINT()
    if not version.VerQueryValueW(buf, "\\", ctypes.byref(ptr), ctypes.byref(length)) or not ptr.value:
        return None
    # VS_FIXEDFILEINFO: signature, struc version, then FileVersionMS, FileVersionLS
    _sig, _struc, ms, ls = struct.unpack_from("<IIII", ctypes.string_at(ptr.value, 16))
    return (ms >> 16, ms & 0xFFFF, ls >> 16, ls & 0xFFFF)


def read_vc_runtime(system_dir: str | None = None) -> VcRuntime:
    """The installed x64 Visual C++ runtime: the registry key's version, or ``msvcp140.dll``'s in
    ``system_dir`` (default ``%SystemRoot%\\System32``) when every DLL torch imports is there;
    the newer of the two counts (a runtime installed by another program's own copy)."""
    found: list[tuple[tuple[int, ...], str]] = []
    for path in VC_RUNTIME_KEYS:
        version = runtime_from_key(read_key("HKLM", path, 0, view=64))
        if version is not None:
            found.append((version, "registry"))
    folder = system_dir or ntpath.join(_env(os.environ, "SYSTEMROOT") or "C:\\Windows", "System32")
    if all(os.path.isfile(os.path.join(folder, d)) for d in RUNTIME_DLLS):
        dll = _file_version(os.path.join(folder, "msvcp140.dll"))
        if dll is not None:
            found.append((dll, os.path.join(folder, "msvcp140.dll")))
    if not found:
        return VcRuntime(None)
    version, where = max(found, key=lambda f: f[0])
    return VcRuntime(version, where)


def dll_linker_version(head: bytes) -> tuple[int, int] | None:
    """The linker version (MSVC toolset ``major.minor``) in a PE file's first bytes, None when it
    is no PE file."""
    try:
        pe = struct.unpack_from("<I", head, 0x3C)[0]
        if head[:2] != b"MZ" or head[pe:pe + 4] != b"PE\0\0":
            return None
        opt = pe + 24
        return head[opt + 2], head[opt + 3]
    except (struct.error, IndexError):
        return None


@lru_cache(maxsize=16)
def _wheel_msvc(path: str, size: int, mtime: int) -> tuple[int, int] | None:
    try:
        with zipfile.ZipFile(path) as zf, zf.open("torch/lib/c10.dll") as fh:
            return dll_linker_version(fh.read(4096))
    except (OSError, KeyError, zipfile.BadZipFile):
        return None


def wheel_msvc(path: Path) -> tuple[int, int] | None:
    """The MSVC toolset torch's ``c10.dll`` in a local torch wheel was linked with."""
    try:
        st = path.stat()
    except OSError:
        return None
    return _wheel_msvc(str(path), st.st_size, st.st_mtime_ns)


def msvc_floor(version: str | None) -> tuple[int, int]:
    """The runtime a torch release's Windows wheels need (:data:`MSVC_FLOORS`; the newest for an
    unpinned torch)."""
    release = _version_tuple(version) if version else (99, 0)
    return next(floor for since, floor in MSVC_FLOORS if release >= since)


def vc_runtime_verdict(have: VcRuntime, need: tuple[int, int], torch: str | None) -> Check:
    """The check for the runtime ``have`` against the toolset ``need`` of torch ``torch``."""
    label = f"torch {torch}" if torch else "torch"
    actions = (Action(ActionKind.INSTALL_VCREDIST, url=VCREDIST_URL), Action(ActionKind.RUN_VCREDIST,
                                                                               url=VCREDIST_URL))
    hint = msg("preflight.vcruntime_hint", "Get Microsoft's installer, vc_redist.x64.exe, from {url} and run it "
               "(or let the assistant run it: it asks first, then runs it with {args}), then check again.",
               url=VCREDIST_URL, args=" ".join(VCREDIST_ARGS))
    if have.version is None:
        return Check("vcruntime", False, msg(
            "preflight.vcruntime_missing", "The Microsoft Visual C++ 2015–2022 runtime (x64) is not installed; "
            "{torch} needs it ({dlls}). Without it, import torch fails with “DLL load failed” (c10.dll). Nothing "
            "was changed.", torch=label, dlls=", ".join(RUNTIME_DLLS)), hint=hint, actions=actions)
    if tuple(have.version[:2]) < need:
        return Check("vcruntime", False, msg(
            "preflight.vcruntime_old", "The Microsoft Visual C++ runtime here is {have} ({where}); {torch} is built "
            "with MSVC {need} and needs that runtime or a newer one. With this one, import torch fails with “DLL "
            "load failed” (c10.dll). Nothing was changed.", have=_dotted(have.version), where=have.where,
            torch=label, need=_dotted(need)), hint=hint, actions=actions)
    return Check("vcruntime", True, msg("preflight.vcruntime_ok", "Visual C++ runtime {have} ({torch} needs {need} "
                                        "or newer)", have=_dotted(have.version), torch=label, need=_dotted(need)))


def check_vc_runtime(p: InstallPlan) -> Check | None:
    """The runtime torch's DLLs need, on Windows, when the plan installs torch (else None)."""
    if not _windows():
        return None
    local, missing = _plan_wheels(p)
    has, version = _torch_release(missing, local)
    if not has:
        return None
    torch_wheel = next((w for w in local if w.name.lower().startswith("torch-")), None)
    need = (wheel_msvc(torch_wheel) if torch_wheel is not None else None) or msvc_floor(version)
    return vc_runtime_verdict(read_vc_runtime(), need, version)


@dataclass(frozen=True)
class VcredistResult:
    ok: bool
    message: Text
    exit_code: int | None = None


def run_vcredist(installer: str | os.PathLike[str], *, cancel: CancelToken | None = None,
                 timeout: float = 900) -> VcredistResult:
    """Run Microsoft's ``vc_redist.x64.exe`` (a file the user chose or downloaded) with
    :data:`VCREDIST_ARGS`. Only after the user confirmed (the wizard asks; the command line
    needs ``--yes`` or a yes at its prompt). Windows shows its administrator prompt."""
    path = os.fspath(installer)
    if not os.path.isfile(path):
        return VcredistResult(False, msg("preflight.vcredist_missing_file", "{path} is not a file: choose the "
                                         "vc_redist.x64.exe you downloaded from {url}.", path=path,
                                         url=VCREDIST_URL))
    res = runner.run([path, *VCREDIST_ARGS], timeout=timeout, cancel=cancel)
    code = res.returncode
    outcome = _VCREDIST_OK.get(code) if code is not None else None
    if outcome == "restart":
        return VcredistResult(True, msg("preflight.vcredist_restart", "The Visual C++ runtime was installed; "
                                        "Windows wants a restart, which can wait until the install is done."), code)
    if outcome is not None:
        return VcredistResult(True, msg("preflight.vcredist_done", "The Visual C++ runtime is installed."), code)
    if code == 1602:
        return VcredistResult(False, msg("preflight.vcredist_declined", "The Visual C++ runtime was not installed: "
                                         "the administrator prompt was declined."), code)
    return VcredistResult(False, msg("preflight.vcredist_failed", "{path} {args} failed (exit code {code}); the "
                                     "Visual C++ runtime was not installed.", path=path,
                                     args=" ".join(VCREDIST_ARGS), code=str(code)), code)


# --------------------------------------------------------------------------- the path budget

@dataclass(frozen=True)
class PathNeed:
    """The longest file and the longest folder the install puts in the env, relative to it
    (Windows separators), and which wheel (or estimate) they come from."""

    file: str
    folder: str
    what: str

    def max_env_chars(self) -> int:
        """The longest env path for which every file and folder fits without long paths."""
        return min(MAX_PATH_CHARS - 1 - len(self.file), MAX_DIR_CHARS - 1 - len(self.folder))

    def longest(self, env: str) -> int:
        return len(env) + 1 + len(self.file)


def _placed(entry: str, dist: str, python: str) -> str:
    """Where a wheel's entry lands, relative to the env (the wheel's ``.data`` schemes moved)."""
    parts = entry.split("/")
    if len(parts) > 2 and parts[0].endswith(".data"):
        scheme, rest = parts[1], "\\".join(parts[2:])
        if scheme == "scripts":
            return "Scripts\\" + rest
        if scheme == "data":
            return rest
        if scheme == "headers":
            return f"Include\\site\\python{python}\\{dist}\\{rest}"
    return SITE_PACKAGES + "\\" + "\\".join(parts[2:] if parts[0].endswith(".data") else parts)


@lru_cache(maxsize=32)
def _wheel_paths(path: str, size: int, mtime: int, python: str) -> PathNeed | None:
    try:
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if not n.endswith("/")]
    except (OSError, zipfile.BadZipFile):
        return None
    if not names:
        return None
    dist = Path(path).name.split("-")[0]
    placed = [_placed(n, dist, python) for n in names]
    longest = max(placed, key=len)
    folder = max((ntpath.dirname(x) for x in placed), key=len)
    return PathNeed(longest, folder, Path(path).name)


def wheel_paths(path: Path, python: str = "3.13") -> PathNeed | None:
    """The longest file and folder ``path`` (a wheel) puts in an env (None: unreadable)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return _wheel_paths(str(path), st.st_size, st.st_mtime_ns, python)


def _torch_estimate(version: str | None) -> PathNeed | None:
    """The torch wheel's longest file when the wheel is not at hand (:data:`TORCH_LONGEST_TAIL`)."""
    if version is not None and _version_tuple(version) < _TORCH_TAIL_FROM:
        return None
    shown = version or "2.99.0+cu130"
    file = f"{SITE_PACKAGES}\\torch-{shown}.dist-info\\" + TORCH_LONGEST_TAIL.replace("/", "\\")
    return PathNeed(file, ntpath.dirname(file), f"torch {version}" if version else "torch")


def path_need(p: InstallPlan) -> PathNeed | None:
    """The longest file and folder the plan's packages put in the env (None: not known)."""
    from app.core.install.planning import python_version

    local, missing = _plan_wheels(p)
    python = python_version(p.python, p.python_request) or "3.13"
    needs = [n for n in (wheel_paths(w, python) for w in local) if n is not None]
    has, version = _torch_pin(missing)
    if has:
        estimate = _torch_estimate(version)
        if estimate is not None:
            needs.append(estimate)
    if not needs:
        return None
    worst = max(needs, key=lambda n: MAX_PATH_CHARS - n.max_env_chars())
    return worst


def long_paths_enabled() -> bool:
    """``LongPathsEnabled`` (HKLM\\SYSTEM\\CurrentControlSet\\Control\\FileSystem) is 1."""
    key = read_key("HKLM", LONG_PATHS_KEY, 0, view=64)
    return key is not None and key.values.get("LongPathsEnabled") in (1, "1")


def short_folder(env: str, allowed: int, environ: Mapping[str, str] | None = None) -> str:
    """A folder for the env ``env`` (a Windows path) that is at most ``allowed`` characters and
    outside every cloud folder: ``<its drive>\\torch-envs\\<name>``, else ``<drive>\\t\\<name>``,
    else ``%LOCALAPPDATA%\\t\\<name>``, the name shortened when even that is too long."""
    environ = os.environ if environ is None else environ
    drive = ntpath.splitdrive(env)[0] or (_env(environ, "SystemDrive") or "C:")
    name = ntpath.basename(ntpath.normpath(env)) or "torch-env"
    roots = [drive + "\\torch-envs", drive + "\\t"]
    if _env(environ, "LOCALAPPDATA"):
        roots.append(ntpath.join(_env(environ, "LOCALAPPDATA"), "t"))
    clouds = cloud_roots(environ, registry=False)
    for root in roots:
        candidate = ntpath.join(root, name)
        if len(candidate) <= allowed and cloud_folder_of(candidate, clouds) is None:
            return candidate
    root = drive + "\\t"
    return ntpath.join(root, name[:max(1, allowed - len(root) - 1)])


def path_verdict(env: str, need: PathNeed, enabled: bool, environ: Mapping[str, str] | None = None) -> Check:
    """The check of ``env`` (a Windows path) against the longest path ``need`` puts in it."""
    length = need.longest(env)
    if enabled:
        return Check("path", True, msg("preflight.path_long_ok", "Long paths are allowed on this computer "
                                       "(LongPathsEnabled = 1): the longest path in the environment, {length} "
                                       "characters, is fine", length=length))
    allowed = need.max_env_chars()
    if len(env) <= allowed:
        return Check("path", True, msg("preflight.path_ok", "The longest path in the environment will have {length} "
                                       "of the {limit} characters Windows allows", length=length,
                                       limit=MAX_PATH_CHARS))
    short = short_folder(env, allowed, environ)
    return Check("path", False, msg(
        "preflight.path_too_long", "The environment folder {env} is too deep for Windows: the longest file of {what} "
        "would have a path of {length} characters, and without long paths Windows allows {limit}, so this folder "
        "may have at most {allowed} (it has {has}). The install would fail part-way. Nothing was changed.",
        env=env, what=need.what, length=length, limit=MAX_PATH_CHARS, allowed=allowed, has=len(env)),
        hint=msg("preflight.path_too_long_hint", "Use a shorter folder, such as {short}. Or allow long paths (an "
                 "administrator's change): set the registry value LongPathsEnabled (DWORD) to 1 under "
                 "HKEY_LOCAL_MACHINE\\{key}, or enable the Group Policy “Enable Win32 long paths” (Computer "
                 "Configuration > Administrative Templates > System > Filesystem), then start the assistant again.",
                 short=short, key=LONG_PATHS_KEY),
        actions=(Action(ActionKind.CHOOSE_OTHER_LOCATION, value=short, path=env),
                 Action(ActionKind.ENABLE_LONG_PATHS, url=LONG_PATHS_URL)))


def check_path_budget(p: InstallPlan) -> Check | None:
    """The env folder against Windows' path limit, on Windows (None elsewhere, or nothing known)."""
    if not _windows():
        return None
    need = path_need(p)
    if need is None:
        return None
    return path_verdict(str(p.env_path), need, long_paths_enabled())


# --------------------------------------------------------------------------- cloud folders

def _norm(path: str) -> str:
    return ntpath.normcase(ntpath.normpath(path)).rstrip("\\")


def _expand(value: str, environ: Mapping[str, str]) -> str:
    """``%NAME%`` in a registry value (REG_EXPAND_SZ) replaced from ``environ``."""
    return re.sub(r"%([^%]+)%", lambda m: _env(environ, m.group(1)) or m.group(0), value)


def cloud_roots(environ: Mapping[str, str] | None = None, *, registry: bool = True,
                known: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """``(what, folder)`` of every OneDrive folder: the environment variables, OneDrive's accounts
    (HKCU\\Software\\Microsoft\\OneDrive\\Accounts\\*\\UserFolder) and a Desktop or Documents that
    OneDrive's backup moved (``known``: name -> folder; read from the registry's User Shell Folders
    when None)."""
    environ = os.environ if environ is None else environ
    out: list[tuple[str, str]] = [("OneDrive", _env(environ, v)) for v in CLOUD_VARS if _env(environ, v)]
    if registry:
        accounts = read_key("HKCU", _ONEDRIVE_ACCOUNTS, 1)
        for account in (accounts.keys.values() if accounts is not None else ()):
            folder = account.text("UserFolder")
            if folder:
                out.append(("OneDrive", folder))
    if known is None and registry:
        shell = read_key("HKCU", _SHELL_FOLDERS, 0)
        known = {label: _expand(shell.text(name) or "", environ) for name, label in _KNOWN_FOLDERS.items()
                 if shell is not None and shell.text(name)}
    for label, folder in (known or {}).items():
        inside = next((root for _, root in out if _inside(folder, root)), None)
        if inside is not None or any(_ONEDRIVE_PART.match(part) for part in re.split(r"[\\/]", folder)):
            out.append((label, folder))
    return out


def _inside(path: str, root: str) -> bool:
    p, r = _norm(path), _norm(root)
    return bool(r) and (p == r or p.startswith(r + "\\"))


def cloud_folder_of(env: str, roots: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """The cloud folder ``(what, folder)`` that holds ``env`` (the deepest one), None when none does."""
    found = [(what, root) for what, root in roots if _inside(env, root)]
    return max(found, key=lambda f: len(f[1])) if found else None


def default_env_root(environ: Mapping[str, str] | None = None, home: str | None = None,
                     roots: Sequence[tuple[str, str]] | None = None, *, windows: bool | None = None) -> str:
    """Where new environments go by default: ``<home>/torch-envs``; on Windows never inside a cloud
    folder of ``roots`` (default :func:`cloud_roots`): then ``%LOCALAPPDATA%\\torch-envs``, else
    ``<system drive>\\torch-envs``."""
    home = home or str(Path.home())
    if not (_windows() if windows is None else windows):
        return os.path.join(home, "torch-envs")
    environ = os.environ if environ is None else environ
    roots = cloud_roots(environ) if roots is None else roots
    candidates = [ntpath.join(home, "torch-envs")]
    if _env(environ, "LOCALAPPDATA"):
        candidates.append(ntpath.join(_env(environ, "LOCALAPPDATA"), "torch-envs"))
    candidates.append((_env(environ, "SystemDrive") or "C:") + "\\torch-envs")
    return next((c for c in candidates if cloud_folder_of(c, roots) is None), candidates[-1])


def cloud_verdict(env: str, roots: Sequence[tuple[str, str]], name: str,
                  environ: Mapping[str, str] | None = None, home: str | None = None) -> Check | None:
    """A warning when ``env`` is inside a cloud folder of ``roots`` (None: it is not), offering
    ``name`` under :func:`default_env_root`."""
    found = cloud_folder_of(env, roots)
    if found is None:
        return None
    what, root = found
    outside = ntpath.join(default_env_root(environ, home, roots=roots, windows=True), name)
    folder = {"Desktop": msg("preflight.cloud_desktop", "Desktop"),
              "Documents": msg("preflight.cloud_documents", "Documents")}.get(what, what)
    where = (msg("preflight.cloud_known", "your {folder} folder, which OneDrive keeps in the cloud ({root})",
                 folder=folder, root=root) if what != "OneDrive"
             else msg("preflight.cloud_onedrive", "OneDrive ({root})", root=root))
    return Check("cloud", False, msg(
        "preflight.cloud_folder", "{env} is inside {where}. OneDrive syncs every file of an environment: it "
        "uploads gigabytes, locks files while it syncs them (the install or a later update then fails with "
        "“access denied”), and may turn files into online-only placeholders that Python cannot load.",
        env=env, where=where),
        hint=msg("preflight.cloud_folder_hint", "Choose a folder outside OneDrive, such as {outside}.",
                 outside=outside),
        severity="warning", actions=(Action(ActionKind.CHOOSE_OTHER_LOCATION, value=outside, path=env),))


def check_cloud_folder(p: InstallPlan) -> Check | None:
    """A warning for an env inside OneDrive, on Windows (None elsewhere, or outside it)."""
    if not _windows():
        return None
    env = str(p.env_path)
    return cloud_verdict(env, cloud_roots(), ntpath.basename(env) or "torch-env")
