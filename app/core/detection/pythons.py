"""Python interpreters: the running one, those on PATH, pyenv, conda, uv-managed, the Windows
registry's (PEP 514) or else the ``py`` launcher's list, and macOS framework installs; each with
its version and whether it can create a virtual environment (``venv`` and ``ensurepip`` both
present: Debian/Ubuntu ship them in a separate package, python3-venv).

On Windows the registry is read first (``winreg``: no process, and paths such as
``C:\\Users\\张伟\\…`` come back as they are). ``py -0p`` is the fallback; it prints in a code
page of its own, so a path it lists that does not exist as printed (``张伟`` as ``??``) is asked of
the launcher again, through the interpreter itself (``py -V:3.12 -c "print(sys.executable)"``,
which writes UTF-8).

Versions are read by running each interpreter once with a tiny script, concurrently, and
remembered (keyed by the file's size and mtime) so a second detection starts no process.
"""
from __future__ import annotations

import glob
import json
import ntpath
import os
import platform
import re
import sys
import time
from collections.abc import Mapping
from concurrent.futures import Future
from functools import partial

from app.core.base.paths import path_lines
from app.core.base.pyarch import FACTS_SNIPPET, ArchFacts, facts_of_this_process, interpreter_arch, parse_facts
from app.core.detection import Row, parser, record, run_tool, snippet
from app.core.detection.cache import StampCache
from app.core.detection.jobs import Jobs, result_of
from app.core.detection.system import ProbeRecord, PythonInfo
from app.core.detection.winregistry import RegKey, read_key
from app.core.detection.xcode import DeveloperDir, developer_dir, in_root, is_clt_shim

# Works on Python 2.7 and 3.x, with -E -s -S (no site, so it starts in ~10 ms).
PROBE_SCRIPT = (
    "import sys\n"
    "def has(n):\n"
    "    try:\n"
    "        import importlib.util as u\n"
    "        return u.find_spec(n) is not None\n"
    "    except Exception:\n"
    "        try:\n"
    "            import imp; imp.find_module(n); return True\n"
    "        except Exception:\n"
    "            return False\n"
    "v = sys.version_info\n"
    "impl = getattr(getattr(sys, 'implementation', None), 'name', 'cpython')\n"
    "import struct\n"
    + FACTS_SNIPPET +
    "try:\n"
    "    facts = _tsa_facts()\n"
    "except Exception:\n"
    "    facts = '- - - - -'\n"
    "sys.stdout.write('TSA-PY %d.%d.%d %s %d %d %s ; %s\\n' % (v[0], v[1], v[2], impl, "
    "int(has('venv') and has('ensurepip')), struct.calcsize('P') * 8, sys.platform, facts))\n"
    # the pip a new venv gets from ensurepip, and the folder of its bundled wheels (no import of
    # ensurepip, which loads subprocess and tempfile): a second line, JSON (ASCII) for any path
    "def bundled():\n"
    "    try:\n"
    "        import os, re, importlib.util as u\n"
    "        here = os.path.dirname(u.find_spec('ensurepip').origin)\n"
    "    except Exception:\n"
    "        return [None, None]\n"
    "    d = os.path.join(here, '_bundled')\n"
    "    if not os.path.isdir(d):\n"  # a Python built --with-wheel-pkg-dir (Debian: /usr/share/python-wheels)
    "        import sysconfig\n"
    "        d = sysconfig.get_config_var('WHEEL_PKG_DIR') or d\n"
    "    names = sorted(os.listdir(d)) if os.path.isdir(d) else []\n"
    "    pips = [n.split('-')[1] for n in names if n.startswith('pip-') and n.endswith('.whl')]\n"
    "    if not pips:\n"
    "        try:\n"
    "            with open(os.path.join(here, '__init__.py'), encoding='utf-8') as fh:\n"
    "                pips = re.findall(r'_PIP_VERSION = [\"\\']([^\"\\']+)', fh.read())\n"
    "        except Exception:\n"
    "            pass\n"
    "    return [pips[0] if pips else None, d if os.path.isdir(d) else None]\n"
    "try:\n"
    "    import json\n"
    "    sys.stdout.write('TSA-PIP %s\\n' % json.dumps(bundled()))\n"
    "except Exception:\n"
    "    pass\n"
)

_NAME_RE = re.compile(r"^python(?:3(?:\.\d+)?|2(?:\.\d+)?)?(?:\.exe)?$", re.IGNORECASE)
MAX_PROBED = 24  # interpreters asked for their version (the rest are listed from their path)
# the answers with the architecture facts and ensurepip's pip (older "python", "python-arch" answers lack them)
_CACHE_KIND = "python-pip"


_PROBE_RE = re.compile(r"TSA-PY (\d+\.\d+\.\d+) (\w+) ([01]) (\d+)(?: (\S+))?(?: ; ([^\r\n]*))?")
_PIP_RE = re.compile(r"^TSA-PIP (\[.*\])\s*$", re.MULTILINE)


@parser(lambda: None)
def parse_probe_output(text: str) -> Row | None:
    """``TSA-PY 3.11.7 cpython 1 64 linux ; 64 linux-x86_64 x86_64 - -`` -> ``{"version",
    "implementation", "can_venv", "bits"}`` and, when the interpreter said them (after ``;``), its
    architecture facts (:mod:`app.core.base.pyarch`): ``platform_tag``, ``machine``, ``translated``, ``native``;
    from a second line ``TSA-PIP ["24.0", "/usr/lib/python3.11/ensurepip/_bundled"]``: ``pip``, ``pip_wheels``."""
    m = _PROBE_RE.search(text or "")
    if not m:
        return None
    impl = {"cpython": "CPython", "pypy": "PyPy", "graalpy": "GraalPy"}.get(m.group(2), m.group(2))
    row: Row = {"version": m.group(1), "implementation": impl, "can_venv": m.group(3) == "1",
                "bits": int(m.group(4))}
    facts = parse_facts(m.group(6) or "", _FAMILIES.get(m.group(5) or ""))
    if facts.platform_tag or facts.machine:
        row.update(platform_tag=facts.platform_tag, machine=facts.machine, translated=facts.translated,
                   native=facts.native, sys_platform=m.group(5))
    pip = _PIP_RE.search(text)
    try:
        said = json.loads(pip.group(1)) if pip else None
    except ValueError:
        said = None
    if isinstance(said, list) and len(said) == 2:
        row.update(pip=said[0] if isinstance(said[0], str) else None,
                   pip_wheels=said[1] if isinstance(said[1], str) else None)
    return row


_FAMILIES = {"linux": "linux", "linux2": "linux", "darwin": "macos", "win32": "windows", "cygwin": "windows"}


# The path is taken greedily and stripped afterwards: a lazy ``(\S.*?)\s*$`` went quadratic on
# a line with a long run of spaces inside.
_LAUNCHER_RE = re.compile(r"^\s*-(?:V:)?([0-9][\w.\-]*?)(?:-(?:32|64|arm64))?\s+(?:\*\s+)?(\S.*)$")


@parser(list)
def parse_py_launcher(text: str) -> list[tuple[str, str]]:
    """``py -0p`` -> ``[(version, path)]``. Handles `` -V:3.12 *        C:\\...\\python.exe``
    (py >= 3.11) and `` -3.9-64        C:\\...`` (older)."""
    out: list[tuple[str, str]] = []
    for ln in (text or "").splitlines():
        m = _LAUNCHER_RE.match(ln)
        if not m:
            continue
        path = m.group(2).strip()
        if path.endswith("*") and path[:-1][-1:].isspace():  # older launchers mark the default last
            path = path[:-1].rstrip()
        if path.lower().endswith(".exe") or "/" in path or "\\" in path:
            out.append((m.group(1), path))
    return out


@parser(lambda: None)
def version_from_path(path: str) -> str | None:
    """A version that the folder name states: pyenv ``versions/3.12.1``, uv
    ``cpython-3.12.1-linux-x86_64-gnu``, framework ``Versions/3.12``."""
    for part in reversed(re.split(r"[\\/]", path or "")):
        m = re.fullmatch(r"(?:cpython-|pypy-)?(\d+\.\d+(?:\.\d+)?)(?:[-+].*)?", part)
        if m:
            return m.group(1)
    return None


def _executables_in(folder: str) -> list[str]:
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    out = []
    for n in sorted(names):
        if _NAME_RE.match(n):
            p = os.path.join(folder, n)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                out.append(p)
    return out


def _is_shim(path: str) -> bool:
    parent = os.path.basename(os.path.dirname(path)).lower()
    if parent == "shims":  # pyenv / asdf wrappers: listed through their real versions instead
        return True
    return "windowsapps" in path.lower()  # the Microsoft Store alias that opens the store


def _is_venv_python(path: str) -> bool:
    return os.path.exists(os.path.join(os.path.dirname(os.path.dirname(path)), "pyvenv.cfg")) or \
        os.path.exists(os.path.join(os.path.dirname(path), "pyvenv.cfg"))


#: Where macOS keeps Pythons that a Finder-started app's PATH (/usr/bin:/bin:/usr/sbin:/sbin) misses:
#: Homebrew on Apple silicon, then Intel Homebrew and python.org's links.
MACOS_BIN_FOLDERS = ("/opt/homebrew/bin", "/usr/local/bin")
MACOS_FRAMEWORKS = "/Library/Frameworks/Python.framework/Versions"


def candidates(environ: Mapping[str, str] | None = None, *, family: str | None = None,
               registered: list[tuple[str, str]] | None = None, root: str = "") -> list[tuple[str, str]]:
    """``[(path, source)]`` in a stable order, without the running interpreter. ``registered``:
    Windows' registered interpreters as ``(path, source)`` (:func:`_windows_registered`).
    ``root``: where the machine's file system starts (tests give a fake tree; ``environ``'s paths
    and the fixed folders are taken inside it)."""
    env = os.environ if environ is None else environ
    home = in_root(root, env.get("HOME") or "/") if root else os.path.expanduser("~")
    found: list[tuple[str, str]] = []
    for folder in (env.get("PATH") or "").split(os.pathsep):
        if folder:
            found += [(p, "path") for p in _executables_in(in_root(root, folder)) if not _is_shim(p)]
    if family == "macos":
        for folder in MACOS_BIN_FOLDERS:
            found += [(p, "homebrew" if _homebrew(root, folder) else "path")
                      for p in _executables_in(in_root(root, folder))]
    pyenv_root = in_root(root, env["PYENV_ROOT"]) if env.get("PYENV_ROOT") else os.path.join(home, ".pyenv")
    for v in sorted(glob.glob(os.path.join(pyenv_root, "versions", "*")), key=_version_key):
        found += [(p, "pyenv") for p in _preferred(_executables_in(os.path.join(v, "bin")))]
    for v in sorted(glob.glob(os.path.join(pyenv_root, "pyenv-win", "versions", "*")), key=_version_key):
        found += [(p, "pyenv") for p in _preferred(_executables_in(v))]
    for prefix in _conda_prefixes(env, home, root):
        exes = _executables_in(os.path.join(prefix, "bin")) or _executables_in(prefix)
        found += [(p, "conda") for p in _preferred(exes)]
    for v in sorted(glob.glob(os.path.join(_uv_python_dir(env, home, family, root), "*")), key=_version_key):
        exes = _executables_in(os.path.join(v, "bin")) or _executables_in(v)
        found += [(p, "uv") for p in _preferred(exes)]
    if family == "macos":
        for v in sorted(glob.glob(os.path.join(glob.escape(in_root(root, MACOS_FRAMEWORKS)), "*", "bin")),
                        key=_version_key_of_parent):
            found += [(p, "python.org") for p in _preferred(_executables_in(v))]
    if family == "windows":
        local = env.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        for v in sorted(glob.glob(os.path.join(local, "Programs", "Python", "Python*"))):
            found += [(p, "path") for p in _preferred(_executables_in(v))]
        found += registered or []
    return found


def _homebrew(root: str, folder: str) -> bool:
    """Whether a macOS bin folder is Homebrew's (its prefix holds Cellar or Homebrew)."""
    prefix = in_root(root, os.path.dirname(folder))
    return any(os.path.isdir(os.path.join(prefix, d)) for d in ("Cellar", "Homebrew"))


def _version_key_of_parent(path: str) -> tuple[tuple[int, ...], str]:
    return _version_key(os.path.dirname(path))


def _version_key(path: str) -> tuple[tuple[int, ...], str]:
    """Sort folders by the version in their name (3.6 before 3.10), then by name."""
    m = re.search(r"(?<!\d)(\d+)\.(\d+)(?:\.(\d+))?", os.path.basename(path))
    nums = tuple(int(x or 0) for x in m.groups()) if m else (9999,)
    return nums, path


def _preferred(exes: list[str]) -> list[str]:
    """One executable per installation folder: the most specific name (python3.12 > python3 > python)."""
    if not exes:
        return []
    return [max(exes, key=lambda p: (len(os.path.basename(p)), p))]


def _conda_prefixes(env: Mapping[str, str], home: str, root: str = "") -> list[str]:
    prefixes: list[str] = []
    for key in ("CONDA_PREFIX",):
        if env.get(key):
            prefixes.append(in_root(root, env[key]))
    exe = env.get("CONDA_EXE") or env.get("MAMBA_EXE")
    bases = [in_root(root, os.path.dirname(os.path.dirname(exe)))] if exe else []
    bases += [os.path.join(home, d) for d in ("miniconda3", "anaconda3", "miniforge3", "mambaforge",
                                              "micromamba", ".micromamba")]
    bases += [in_root(root, d) for d in ("/opt/conda", "/opt/miniconda3", "/opt/anaconda3", "/opt/miniforge3")]
    if env.get("MAMBA_ROOT_PREFIX"):
        bases.append(in_root(root, env["MAMBA_ROOT_PREFIX"]))
    for b in bases:
        if os.path.isdir(os.path.join(b, "conda-meta")):
            prefixes.append(b)
        prefixes += sorted(glob.glob(os.path.join(b, "envs", "*")))
    try:
        with open(os.path.join(home, ".conda", "environments.txt"), "rb") as fh:
            prefixes += [in_root(root, ln) for ln in path_lines(fh.read(1_000_000))]
    except OSError:
        pass
    seen: set[str] = set()
    out: list[str] = []
    for p in prefixes:
        if p not in seen and os.path.isdir(p):
            seen.add(p)
            out.append(p)
    return out


def _uv_python_dir(env: Mapping[str, str], home: str, family: str | None, root: str = "") -> str:
    """uv's managed Pythons: ``UV_PYTHON_INSTALL_DIR``, else ``$XDG_DATA_HOME/uv/python`` or
    ``~/.local/share/uv/python`` (also on macOS), ``%APPDATA%\\uv\\python`` on Windows."""
    if env.get("UV_PYTHON_INSTALL_DIR"):
        return in_root(root, env["UV_PYTHON_INSTALL_DIR"])
    if family == "windows":
        base = in_root(root, env["APPDATA"]) if env.get("APPDATA") else os.path.join(home, "AppData", "Roaming")
        return os.path.join(base, "uv", "python")
    base = in_root(root, env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else os.path.join(home, ".local", "share")
    return os.path.join(base, "uv", "python")


def running_interpreter() -> PythonInfo:
    import importlib.util

    try:
        can = importlib.util.find_spec("venv") is not None and importlib.util.find_spec("ensurepip") is not None
    except Exception:
        can = None
    if getattr(sys, "frozen", False):
        can = False  # a PyInstaller bundle's executable is not a Python that can make a venv
    impl = platform.python_implementation()
    v = sys.version_info
    facts = facts_of_this_process()  # its own architecture: platform.machine() names the machine's
    return PythonInfo(version=f"{v[0]}.{v[1]}.{v[2]}", executable=sys.executable, implementation=impl,
                      can_venv=can, source="running", arch=interpreter_arch(facts, _FAMILIES.get(sys.platform)),
                      bits=facts.bits, platform_tag=facts.platform_tag, translated=facts.translated)


def _key(path: str) -> str:
    """Identity of an interpreter: a venv's python is its own; others dedupe by real path."""
    if _is_venv_python(path):
        return os.path.normcase(os.path.abspath(path))
    return os.path.normcase(os.path.realpath(path))


#: Where PEP 514 registers Python installs, under HKEY_CURRENT_USER and HKEY_LOCAL_MACHINE.
PEP514_KEY = r"Software\Python"
_PEP514_SKIP = {"pylauncher"}  # the py launcher's own settings, not an install


def pep514_pythons(tree: RegKey | None) -> list[tuple[str | None, str]]:
    """``[(version, python.exe)]`` of a PEP 514 key (``<Company>\\<Tag>\\InstallPath``, its
    ``ExecutablePath`` or its default value + ``python.exe``); the version is the tag's
    ``SysVersion`` (or ``Version``, or what the tag's name says)."""
    out: list[tuple[str | None, str]] = []
    for company, ck in (tree.keys.items() if tree is not None else ()):
        if company.lower() in _PEP514_SKIP:
            continue
        for tag, tk in ck.keys.items():
            install = tk.keys.get("InstallPath")
            if install is None:
                continue
            folder = install.text("")
            exe = install.text("ExecutablePath") or (ntpath.join(folder, "python.exe") if folder else None)
            if exe:
                out.append((tk.text("SysVersion") or tk.text("Version") or version_from_path(tag), exe))
    return out


def registry_pythons(key: str = PEP514_KEY) -> list[tuple[str | None, str]]:
    """The interpreters registered under ``key`` in HKEY_CURRENT_USER, then in HKEY_LOCAL_MACHINE's
    64-bit and 32-bit views (each once); [] off Windows."""
    found: list[tuple[str | None, str]] = []
    seen: set[str] = set()
    for hive, view in (("HKCU", None), ("HKLM", 64), ("HKLM", 32)):
        for version, exe in pep514_pythons(read_key(hive, key, depth=3, view=view)):
            if ntpath.normcase(exe) not in seen:
                seen.add(ntpath.normcase(exe))
                found.append((version, exe))
    return found


def _registry_list(started: float, records: list[ProbeRecord], key: str) -> list[tuple[str, str]]:
    """The PEP 514 registry's interpreters, with a record of what it held."""
    try:
        found = registry_pythons(key)
    except Exception as exc:  # pragma: no cover - a registry that cannot be read
        records.append(record("python-registry", "error", f"{type(exc).__name__}: {snippet(str(exc))}", started))
        return []
    records.append(record("python-registry", "ok" if found else "empty", f"{len(found)} interpreter(s) registered",
                          started))
    return [(v or "", p) for v, p in found]


def _garbled(path: str) -> bool:
    """A path the launcher printed in a code page that could not spell it (``?`` or U+FFFD in place
    of ``张伟``), or that is not there as printed."""
    return "\ufffd" in path or "?" in path or not os.path.isfile(path)


MAX_ASKED_AGAIN = 8  # launcher paths asked again, one process each


def _ask_launcher(py: str, version: str, timeout_s: float) -> str | None:
    """The interpreter ``py -<version>`` starts, as it names itself (in UTF-8: the runner's
    PYTHONIOENCODING, whatever the console's code page)."""
    res, rec = run_tool("py-launcher", [py, f"-{version}", "-c", "import sys; print(sys.executable)"], timeout_s)
    path = res.stdout.strip().splitlines()[-1].strip() if rec is None and res.ok and res.stdout.strip() else ""
    return path if path and not _garbled(path) else None


def _launcher_list(timeout_s: float, started: float, records: list[ProbeRecord]) -> list[tuple[str, str]]:
    """Windows' ``py -0p`` list; a path garbled by the launcher's code page is asked again."""
    from app.core.proc.runner import which

    py = which("py")
    if not py:
        return []
    res, rec = run_tool("py-launcher", [py, "-0p"], timeout_s)
    if rec is not None:
        records.append(rec)
        return []
    launcher = parse_py_launcher(res.stdout + "\n" + res.stderr)
    fixed = asked = 0
    for i, (version, path) in enumerate(launcher):
        if asked >= MAX_ASKED_AGAIN or not _garbled(path):
            continue
        asked += 1
        again = _ask_launcher(py, version, timeout_s)
        if again:
            launcher[i] = (version, again)
            fixed += 1
    detail = f"{len(launcher)} interpreter(s)" + (f"; {fixed} path(s) asked again (the list's code page garbled them)"
                                                  if fixed else "")
    records.append(record("py-launcher", "ok" if launcher else "empty", detail, started, res.argv))
    return launcher


def _windows_registered(timeout_s: float, started: float, records: list[ProbeRecord],
                        key: str) -> list[tuple[str, str]]:
    """``[(path, source)]``: the registry's interpreters (PEP 514), or the py launcher's list when
    the registry has none."""
    registry = _registry_list(started, records, key)
    if registry:
        return [(p, "registry") for _v, p in registry]
    return [(p, "py-launcher") for _v, p in _launcher_list(timeout_s, started, records)]


def _ask_version(path: str, source: str, timeout_s: float, cache: StampCache | None,
                 arch: str | None) -> tuple[PythonInfo, str | None]:
    """Run one interpreter with the probe script: (its info, why it failed or None)."""
    res, rec = run_tool("python", [path, "-E", "-s", "-S", "-c", PROBE_SCRIPT], timeout_s)
    parsed = parse_probe_output(res.stdout) if rec is None else None
    if parsed is None:
        why = rec.detail if rec is not None else f"{res.describe()}: {snippet(res.stdout + res.stderr, 80)}"
        return (PythonInfo(version=version_from_path(path), executable=path, source=source,
                           can_venv=False if rec is None else None), f"{path}: {why}")
    if cache is not None:
        cache.put(_CACHE_KIND, path, parsed)
    return _info(path, source, parsed, arch), None


def _versions(cands: list[tuple[str, str]], timeout_s: float, cache: StampCache | None,
              arch: str | None) -> tuple[list[PythonInfo], int, list[str]]:
    """(an info per candidate, how many were asked, the failures): cached, asked side by side, or from the path."""
    infos: list[PythonInfo | None] = [None] * len(cands)
    jobs = Jobs("python")
    futures: dict[int, Future[tuple[PythonInfo, str | None]]] = {}
    for i, (path, source) in enumerate(cands):
        cached = cache.get(_CACHE_KIND, path) if cache is not None else None
        if isinstance(cached, dict) and cached.get("version"):
            infos[i] = _info(path, source, cached, arch)
        elif len(futures) < MAX_PROBED:
            futures[i] = jobs.start(str(i), partial(_ask_version, path, source, timeout_s, cache, arch))
        else:
            infos[i] = PythonInfo(version=version_from_path(path), executable=path, source=source, can_venv=None)
    jobs.wait(time.monotonic() + timeout_s + 1.0)
    failures: list[str] = []
    for i, fut in futures.items():
        got = result_of(fut)
        if got is not None:
            infos[i], why = got
            if why:
                failures.append(why)
    out = []
    for (path, source), info in zip(cands, infos, strict=True):  # no answer in time: listed from its path
        out.append(info or PythonInfo(version=version_from_path(path), executable=path, source=source))
    return out, len(futures), failures


def _without_clt_shims(cands: list[tuple[str, str]], timeout_s: float, root: str, environ: Mapping[str, str] | None,
                       records: list[ProbeRecord]) -> list[tuple[str, str]]:
    """macOS: ``cands`` without /usr/bin's developer shims (``/usr/bin/python3``) when the Command
    Line Tools are missing (running one opens Apple's install dialog); ``xcode-select -p`` is asked
    first, only when there is such a shim to run."""
    if not any(is_clt_shim(p, root) for p, _s in cands):
        return cands
    dev: DeveloperDir = developer_dir(timeout_s, root=root, environ=environ)
    records.append(dev.record)
    return [c for c in cands if not is_clt_shim(c[0], root)] if dev.missing else cands


def detect_pythons(timeout_s: float, cache: StampCache | None, *, family: str | None, arch: str | None,
                   environ: Mapping[str, str] | None = None, registry_key: str = PEP514_KEY, root: str = ""
                   ) -> tuple[PythonInfo, list[PythonInfo], list[ProbeRecord]]:
    """``(running, interpreters incl. running, records)``; never raises. ``registry_key``: where
    the Windows registry's interpreters are read (PEP 514's key; tests give one of their own).
    ``root``: where the machine's file system starts (a fake tree in tests, :func:`candidates`)."""
    started = time.monotonic()
    records: list[ProbeRecord] = []
    running = running_interpreter()
    found: list[PythonInfo] = [running]
    try:
        registered = _windows_registered(timeout_s, started, records, registry_key) if family == "windows" else []
        seen = {_key(sys.executable)}
        cands: list[tuple[str, str]] = []
        for path, source in candidates(environ, family=family, registered=registered, root=root):
            k = _key(path)
            if k not in seen:
                seen.add(k)
                cands.append((path, source))
        if family == "macos":
            cands = _without_clt_shims(cands, timeout_s, root, environ, records)
        infos, asked, failures = _versions(cands, timeout_s, cache, arch)
        found += infos
        detail = f"{len(found)} interpreter(s): " + ", ".join(f"{p.version or '?'} ({p.source})" for p in found)
        if asked:
            detail += f"; asked {asked} for their version"
        if failures:
            detail += "; could not run " + "; ".join(failures[:5])
        records.append(record("pythons", "ok", detail, started))
    except Exception as exc:  # pragma: no cover
        records.append(record("pythons", "error", f"{type(exc).__name__}: {snippet(str(exc))}", started))
    return running, found, records


def _info(path: str, source: str, parsed: Row, arch: str | None) -> PythonInfo:
    """An interpreter's info from its probe's answer; its architecture is its own
    (:func:`app.core.base.pyarch.interpreter_arch`), the machine's ``arch`` only where it said nothing."""
    bits = parsed.get("bits")
    family = _FAMILIES.get(parsed.get("sys_platform") or "")
    facts = ArchFacts(bits=bits if isinstance(bits, int) else None, platform_tag=parsed.get("platform_tag"),
                      machine=parsed.get("machine") or arch, translated=parsed.get("translated"),
                      native=parsed.get("native"))
    return PythonInfo(version=parsed.get("version"), executable=path,
                      implementation=parsed.get("implementation") or "CPython",
                      can_venv=parsed.get("can_venv"), source=source, arch=interpreter_arch(facts, family),
                      bits=facts.bits, platform_tag=facts.platform_tag, translated=facts.translated,
                      is_venv=_is_venv_python(path), pip=parsed.get("pip"), pip_wheels=parsed.get("pip_wheels"))


def probe_interpreter(path: str, *, timeout_s: float = 20.0, cache: StampCache | None = None,
                      source: str = "path") -> tuple[PythonInfo | None, str]:
    """Run ``path`` with the probe (or take its cached answer): ``(info, "")``, or ``(None, why)``
    when it did not answer like a Python. The one probe and the one cache of an interpreter, for
    detection (:func:`detect_pythons`) and the install (:func:`app.core.env.backends.probe_python`) alike."""
    cached = cache.get(_CACHE_KIND, path) if cache is not None else None
    if isinstance(cached, dict) and cached.get("version"):
        return _info(path, source, cached, None), ""
    info, why = _ask_version(path, source, timeout_s, cache, None)
    return (None, why) if why else (info, "")
