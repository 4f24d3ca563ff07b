"""Environment backends behind one interface, and finding a Python to build them with.

* :class:`UvVenv` (the default): ``uv venv`` creates the env, ``uv pip`` fills it. The uv
  binary is the one shipped in the ``uv`` wheel (:func:`uv.find_uv_bin`), so nothing extra
  needs installing. uv can use any interpreter we found, and when none fits it can fetch a
  uv-managed Python, where the network allows.
* :class:`PipVenv`: ``python -m venv`` + the env's own ``pip``. Needs a Python whose
  ``venv``/``ensurepip`` work (Debian/Ubuntu ship them separately as ``python3-venv``).
* :class:`CondaEnv`: conda / mamba / micromamba create the env with the chosen Python (and
  pip) from conda-forge; the packages then go in with pip (or uv) inside it, because PyTorch
  has published no conda packages since 2.5.

Each backend only *builds argument lists*; :mod:`app.core.install` runs them through the
one runner, so a plan can be shown to the user before anything happens.
"""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.base.errors import BadInput
from app.core.base.pyarch import same_arch
from app.core.base.requirements import canonical
from app.core.base.text import Text, msg
from app.core.proc import runner

if TYPE_CHECKING:  # start-up: only the types are needed here
    from app.core.detection.system import PythonInfo, SystemReport
    from app.core.sources.settings import SourceSettings

KINDS = ("venv", "conda")
INSTALLERS = ("uv", "pip")
WINDOWS = os.name == "nt"


# --------------------------------------------------------------------------- env layout

def env_python(env_path: str | os.PathLike[str], kind: str | None = None) -> Path:
    """The interpreter of the env at ``env_path`` (venv or conda layout, this OS). ``kind``
    ("conda", "venv") says the layout of an env that does not exist yet (a plan's commands)."""
    env = Path(env_path)
    if WINDOWS:
        for cand in (env / "Scripts" / "python.exe", env / "python.exe"):
            if cand.exists():
                return cand
        conda = kind == "conda" if kind is not None else is_conda_env(env)
        return env / ("python.exe" if conda else "Scripts/python.exe")
    for name in ("python", "python3"):
        cand = env / "bin" / name
        if cand.exists() or cand.is_symlink():
            return cand
    return env / "bin" / "python"


def is_venv(path: str | os.PathLike[str]) -> bool:
    return (Path(path) / "pyvenv.cfg").is_file()


def is_conda_env(path: str | os.PathLike[str]) -> bool:
    return (Path(path) / "conda-meta").is_dir()


def is_env(path: str | os.PathLike[str]) -> bool:
    """True for a venv (``pyvenv.cfg``) or a conda env (``conda-meta/``)."""
    return is_venv(path) or is_conda_env(path)


def env_kind(path: str | os.PathLike[str]) -> str | None:
    if is_conda_env(path):
        return "conda"
    if is_venv(path):
        return "venv"
    return None


def site_packages(env_path: str | os.PathLike[str]) -> list[Path]:
    env = Path(env_path)
    if WINDOWS:
        cands = [env / "Lib" / "site-packages"]
    else:
        cands = sorted((env / "lib").glob("python3*/site-packages"))
    return [c for c in cands if c.is_dir()]


def installed_distributions(env_path: str | os.PathLike[str]) -> dict[str, str]:
    """``{normalized name: version}`` read from the env's ``*.dist-info`` folders.

    Reading folder names costs nothing (no subprocess), so it runs after every install.
    """
    out: dict[str, str] = {}
    for sp in site_packages(env_path):
        for d in sp.glob("*.dist-info"):
            stem = d.name[: -len(".dist-info")]
            name, sep, version = stem.partition("-")
            if sep:
                out[canonical(name)] = version
    return out


# --------------------------------------------------------------------------- Pythons

def probe_python(path: str | os.PathLike[str], *, timeout: float = 20.0,
                 use_cache: bool = True) -> tuple[PythonInfo | None, str]:
    """Run ``path`` and ask it about itself: ``(info, "")`` or ``(None, why it failed)``.

    The one probe and the one cache detection uses too
    (:func:`app.core.detection.pythons.probe_interpreter`, answers kept by the file's size and
    mtime), so an interpreter detection already asked costs no process here.
    """
    from app.core.detection.cache import StampCache, default_cache
    from app.core.detection.pythons import probe_interpreter

    cache = default_cache() if use_cache else StampCache(None)
    info, why = probe_interpreter(str(path), timeout_s=timeout, cache=cache)
    cache.save()
    return info, why


_VERSION_RE = re.compile(r"^\d+\.\d+$")


def _report_pythons(report: SystemReport | None) -> list[str]:
    """Interpreter paths the report's ``tools`` list (``python3.11``, ``python3`` ...)."""
    if report is None:
        return []
    return [str(t.path) for t in report.tools.values() if t.path and t.name.lower().startswith("python")]


def _found_pythons(report: SystemReport | None, version: str | None) -> list[str]:
    """The interpreters detection found (Homebrew, python.org, uv-managed ... where PATH is
    minimal, as for an app started from Finder), of ``version`` when one is asked for."""
    if report is None:
        return []
    return [p.executable for p in report.interpreters
            if p.executable and p.source != "running" and (version is None or p.minor == version)]


def _without_clt_shims(cands: list[str], family: str | None, root: str) -> list[str]:
    """macOS: never /usr/bin/python3 when the Command Line Tools are missing (it opens Apple's
    install dialog instead of running; app.core.detection.xcode asks ``xcode-select -p`` first)."""
    if family != "macos":
        return cands
    from app.core.detection.xcode import developer_dir, is_clt_shim

    if not any(is_clt_shim(c, root) for c in cands):
        return cands
    if developer_dir(3.0, root=root).missing:
        return [c for c in cands if not is_clt_shim(c, root)]
    return cands


def python_candidates(version: str | None, report: SystemReport | None = None, *, family: str | None = None,
                      root: str = "") -> list[str]:
    """Places a Python ``version`` ("3.11") may live, most likely first (not yet probed).
    ``family``: this OS's (linux | macos | windows) unless given; ``root``: where a fake tree's
    file system starts (tests), for the macOS Command Line Tools check."""
    family = family or ("macos" if sys.platform == "darwin" else "windows" if WINDOWS else "linux")
    cands: list[str] = []
    if not getattr(sys, "frozen", False):
        base = getattr(sys, "_base_executable", None) or sys.executable
        if version is None or f"{sys.version_info[0]}.{sys.version_info[1]}" == version:
            cands.append(base)
    cands += _report_pythons(report)
    names = [f"python{version}"] if version else []
    names += ["python3", "python"] if version is None or version.startswith("3") else []
    for n in names:
        found = runner.which(n)
        if found:
            cands.append(found)
    cands += _found_pythons(report, version)
    home = Path.home()
    if version:
        roots = [home / ".pyenv" / "versions", Path("/usr/local/bin"), Path("/usr/bin"),
                 Path("/opt/homebrew/bin"), home / ".local" / "share" / "uv" / "python"]
        for d in sorted((home / ".pyenv" / "versions").glob(f"{version}.*"), reverse=True):
            cands.append(str(d / "bin" / f"python{version}"))
        for r in roots[1:4]:
            cands.append(str(r / f"python{version}"))
        if WINDOWS:
            local = Path(os.environ.get("LOCALAPPDATA", home))
            cands.append(str(local / "Programs" / "Python" / f"Python{version.replace('.', '')}"
                             / "python.exe"))
    seen: set[str] = set()
    out = []
    for c in cands:
        if c and c not in seen and Path(c).exists():
            seen.add(c)
            out.append(c)
    return _without_clt_shims(out, family, root)


def find_python(spec: str | None, report: SystemReport | None = None, *,
                arch: str | None = None) -> tuple[PythonInfo | None, list[str]]:
    """Resolve ``spec`` ("3.11", a path, or None for a sensible default).

    ``arch``: the architecture the build's wheels need (:func:`app.core.recommend.python_arch_for`);
    a found interpreter of another one (a 32-bit Python, an x86_64 one under Rosetta) is passed
    over, never used. A path the user gave is used as given. Returns ``(info or None, notes)``:
    notes say what was tried, for the error message.
    """
    notes: list[str] = []
    if spec and not _VERSION_RE.match(spec):
        p = Path(spec).expanduser()
        if not p.exists():
            raise BadInput(msg("install.python_missing", "The Python interpreter {path} does not exist.", path=spec),
                           hint=msg("install.python_missing_hint", "Give a version such as \"3.11\" or the full "
                                    "path of a python executable."))
        info, why = probe_python(p)
        if info is None:
            notes.append(why)
        return info, notes
    for cand in python_candidates(spec, report):
        info, why = probe_python(cand)
        if info is None:
            notes.append(why)
            continue
        if spec and info.minor != spec:
            notes.append(f"{cand} is Python {info.version}, not {spec}")
            continue
        if info.implementation.lower() != "cpython":
            notes.append(f"{cand} is {info.implementation}, not CPython")
            continue
        if arch and info.arch and not same_arch(info.arch, arch):
            notes.append(f"{cand} is a {info.arch} Python{' (translated)' if info.translated else ''}; "
                         f"the wheels need {arch}")
            continue
        return info, notes
    return None, notes


# --------------------------------------------------------------------------- backends

def uv_extras() -> dict[str, str]:
    """What every uv the assistant starts is given: no progress bars, and a read that waits at most
    :data:`app.core.net.client.STALL_S` for the next bytes (uv's own 30 s, with its three retries,
    made a stalled only source take minutes to fail), unless the user set UV_HTTP_TIMEOUT."""
    from app.core.net.client import STALL_S  # start-up: only a uv run needs it

    extra = {"UV_NO_PROGRESS": "1"}
    if not os.environ.get("UV_HTTP_TIMEOUT") and not os.environ.get("HTTP_TIMEOUT"):
        extra["UV_HTTP_TIMEOUT"] = str(int(STALL_S))
    return extra


def uv_bin() -> str | None:
    """The uv binary from the ``uv`` wheel, else one on PATH."""
    if not getattr(sys, "frozen", False):
        # Where the wheel puts it in this interpreter's environment: found without
        # uv.find_uv_bin(), whose sysconfig lookup costs ~10 ms of start-up.
        scripts = Path(sys.prefix) / ("Scripts" if WINDOWS else "bin")
        quick = scripts / ("uv.exe" if WINDOWS else "uv")
        if quick.is_file():
            return str(quick)
    try:
        from uv import find_uv_bin  # start-up: its sysconfig lookup costs ~10 ms; the quick path above first

        path = find_uv_bin()
        if path and Path(path).exists():
            return str(path)
    except Exception:  # FileNotFoundError when the wheel's binary is missing
        pass
    return runner.which("uv")


def conda_bin() -> str | None:
    """micromamba, mamba or conda, whichever is found first (CONDA_EXE wins)."""
    exe = os.environ.get("CONDA_EXE") or os.environ.get("MAMBA_EXE")
    if exe and Path(exe).exists():
        return exe
    for name in ("micromamba", "mamba", "conda"):
        found = runner.which(name)
        if found:
            return found
    return None


@dataclass(frozen=True)
class EnvBackend:
    """How to create an env and how to put packages into it."""

    kind: str = "venv"
    installer: str = "uv"
    tool: str | None = None  # the uv / conda binary
    uv: str | None = None

    name = "base"

    def describe(self) -> str:
        return self.name

    def unavailable(self) -> Text | None:
        """Why this backend cannot work here, or None."""
        if self.installer == "uv" and not self.uv:
            return msg("install.uv_missing", "uv was not found (the uv package is missing from the assistant)")
        return None

    # -- create
    def create_argv(self, env_path: Path, python: PythonInfo | None, python_request: str | None, *,
                    idx: SourceSettings | None = None, relocatable: bool = False) -> list[list[str]]:
        """The commands that make the env; ``relocatable``: its folder will be renamed afterwards
        (the staged upgrade), which only ``uv venv --relocatable`` makes safe."""
        raise NotImplementedError

    def seed_argv(self, env_path: Path, python: PythonInfo | None, idx: SourceSettings) -> list[str] | None:
        """The command that puts pip into a new env that was made without it (None: it has pip)."""
        return None

    # -- install
    def install_argv(self, env_path: Path, packages: Sequence[str], idx: SourceSettings, *,
                     requirements: Path | None = None, pip_version: tuple[int, ...] = (),
                     reinstall: Sequence[str] = ()) -> list[str]:
        """``reinstall``: packages installed again even when the installed version fits (a repair
        of broken files). The installer replaces them only once it has the new files: nothing is
        taken out before the replacement is in hand (uv: ``--reinstall-package``; pip:
        ``--force-reinstall``, which downloads everything before it uninstalls anything)."""
        py = str(env_python(env_path, self.kind))
        if self.installer == "uv":
            argv = [self.uv or "uv", "pip", "install", "--python", py]
            if idx.offline:
                argv += ["--offline", "--no-index", "--no-config"]
            else:
                # uv gives --extra-index-url priority over --index-url and, with the
                # first-index strategy, takes every package from the FIRST index that has it:
                # torch, torchvision, torchaudio all come from the torch index, never mixed.
                argv += [*_index_args(idx), "--index-strategy", "first-index", *_uv_tls_args(idx, self.uv)]
        else:
            argv = [py, "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
            if pip_version >= (24, 1):
                argv += ["--progress-bar", "raw"]
            if idx.offline:
                # --isolated: no pip.conf / PIP_* variables can add an index or a constraint
                argv += ["--isolated", "--no-index"]
            else:
                argv += _index_args(idx)
                if idx.ca_bundle and idx.ca_bundle != "system":
                    argv += ["--cert", idx.ca_bundle]
        argv += _local_args(idx)
        if reinstall:
            argv += [x for n in reinstall for x in ("--reinstall-package", n)] if self.installer == "uv" \
                else ["--force-reinstall"]
        if requirements is not None:
            argv += ["-r", str(requirements)]
        return [*argv, *packages]

    def child_env(self, idx: SourceSettings, proxy: str | None = None) -> dict[str, str]:
        extra: dict[str, str] = {}
        if self.installer == "uv":
            if idx.ca_bundle and idx.ca_bundle != "system":
                extra["SSL_CERT_FILE"] = idx.ca_bundle
            if idx.offline:
                extra["UV_OFFLINE"] = "1"
            extra.update(uv_extras())
        else:
            extra["PIP_NO_INPUT"] = "1"
        if proxy:
            for var in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
                extra[var] = proxy
        return runner.clean_env(extra)

    def freeze_argv(self, env_path: Path) -> list[str]:
        py = str(env_python(env_path, self.kind))
        if self.installer == "uv":
            return [self.uv or "uv", "pip", "freeze", "--python", py]
        return [py, "-m", "pip", "freeze", "--all", "--disable-pip-version-check"]

    def uninstall_argv(self, env_path: Path, names: Sequence[str]) -> list[str]:
        py = str(env_python(env_path, self.kind))
        if self.installer == "uv":
            return [self.uv or "uv", "pip", "uninstall", "--python", py, *names]
        return [py, "-m", "pip", "uninstall", "-y", "--disable-pip-version-check", *names]


def _index_args(idx: SourceSettings) -> list[str]:
    """The indexes, for uv and pip alike: the default (mirror), then the torch index, then the extras."""
    argv = ["--index-url", idx.default_index] if idx.default_index else []
    for u in (idx.torch_index, *idx.extra_index_urls):
        if u:
            argv += ["--extra-index-url", u]
    return argv


def _seed_index_args(idx: SourceSettings, uv: str | None) -> list[str]:
    """Where ``uv venv --seed`` gets pip: the user's package index (mirror) and wheel folders;
    never the torch index, which need not hold pip."""
    argv = ["--index-url", idx.default_index] if idx.default_index else []
    for fl in idx.find_links:
        argv += ["--find-links", str(fl)]
    return [*argv, *_uv_tls_args(idx, uv)]


def _uv_tls_args(idx: SourceSettings, uv: str | None) -> list[str]:
    """uv trusts the certificates the pre-flight checked against: this computer's trust store,
    unless a CA file is given (then ``SSL_CERT_FILE`` names it, for both). uv's own default is a
    built-in list of public roots: an index whose certificate this computer trusts (a company's or
    a university's own CA) passed the pre-flight and was then refused by uv."""
    return [] if idx.ca_bundle and idx.ca_bundle != "system" else [uv_system_certs_flag(uv)]


_TLS_FLAG: dict[str, str] = {}


def uv_system_certs_flag(uv: str | None) -> str:
    """The option that makes this uv use the system's certificates: ``--system-certs`` where uv has
    it (``--native-tls`` is deprecated there and says so on every run), else ``--native-tls``.
    Asked once per uv binary (its ``pip install --help``)."""
    exe = uv or "uv"
    if exe not in _TLS_FLAG:
        res = runner.run([exe, "pip", "install", "--help"], timeout=30)
        _TLS_FLAG[exe] = "--system-certs" if res.ok and "--system-certs" in res.stdout else "--native-tls"
    return _TLS_FLAG[exe]


def _local_args(idx: SourceSettings) -> list[str]:
    """Wheel folders, and hash checking (a bundle)."""
    argv: list[str] = []
    for fl in idx.find_links:
        argv += ["--find-links", str(fl)]
    return [*argv, "--require-hashes"] if idx.require_hashes else argv


class UvVenv(EnvBackend):
    """``uv venv --seed`` + ``uv pip install`` (the default: fast, cached, parallel).

    The env gets pip (``--seed``, from the same sources as the packages), so ``pip`` in the
    activated env is the env's own; offline (a bundle, a wheel folder alone) the env's Python
    installs it from its own ``ensurepip`` instead, which needs no network.
    """

    name = "uv venv"

    def create_argv(self, env_path: Path, python: PythonInfo | None, python_request: str | None, *,
                    idx: SourceSettings | None = None, relocatable: bool = False) -> list[list[str]]:
        target = python.executable if python is not None and python.executable else (python_request or "3")
        # --no-project / --no-config: a pyproject or uv.toml in the current folder must not
        # change which Python or which settings the new env gets.
        argv = [self.uv or "uv", "venv", str(env_path), "--python", target, "--no-project", "--no-config", "--quiet"]
        if relocatable:
            argv.append("--relocatable")
        if idx is not None and not idx.offline:
            argv += ["--seed", *_seed_index_args(idx, self.uv)]
        return [argv]

    def seed_argv(self, env_path: Path, python: PythonInfo | None, idx: SourceSettings) -> list[str] | None:
        if not idx.offline or (python is not None and not python.can_venv):
            return None  # seeded by uv venv --seed; or no ensurepip to seed from
        if python is not None and python.pip_wheels:  # the pip ensurepip bundles, installed by uv (~0.1 s, not ~4)
            return [self.uv or "uv", "pip", "install", "--python", str(env_python(env_path)), "--offline",
                    "--no-index", "--no-config", "--quiet", "--find-links", python.pip_wheels, "pip"]
        return [str(env_python(env_path)), "-m", "ensurepip", "--default-pip"]


class PipVenv(EnvBackend):
    """``python -m venv`` + the env's pip (works wherever Python's venv does)."""

    name = "venv + pip"

    def unavailable(self) -> Text | None:
        return None

    def create_argv(self, env_path: Path, python: PythonInfo | None, python_request: str | None, *,
                    idx: SourceSettings | None = None, relocatable: bool = False) -> list[list[str]]:
        if python is None:
            raise BadInput(msg("install.no_interpreter", "No Python interpreter to create the environment with."))
        return [[str(python.executable), "-m", "venv", str(env_path)]]


class CondaEnv(EnvBackend):
    """conda / mamba / micromamba env with the chosen Python; packages via pip (or uv)."""

    name = "conda env"

    def unavailable(self) -> Text | None:
        if not self.tool:
            return msg("install.conda_missing", "no conda, mamba or micromamba was found (install Miniforge, or "
                       "choose a venv)")
        return super().unavailable()

    def create_argv(self, env_path: Path, python: PythonInfo | None, python_request: str | None, *,
                    idx: SourceSettings | None = None, relocatable: bool = False) -> list[list[str]]:
        version = python.minor if python is not None and python.minor else (python_request or "3")
        return [[self.tool or "conda", "create", "--yes", "--prefix", str(env_path),
                 "--channel", "conda-forge", "--override-channels", f"python={version}", "pip"]]


def backend_for(kind: str = "venv", installer: str = "uv") -> EnvBackend:
    """The backend for ``kind`` (venv|conda) and ``installer`` (uv|pip)."""
    if kind not in KINDS:
        raise BadInput(msg("install.unknown_kind", "Unknown environment kind {kind!r}.", kind=kind),
                       hint=msg("install.unknown_kind_hint", "Use venv or conda."))
    if installer not in INSTALLERS:
        raise BadInput(msg("install.unknown_installer", "Unknown installer {installer!r}.", installer=installer),
                       hint=msg("install.unknown_installer_hint", "Use uv or pip."))
    uv = uv_bin()
    if kind == "conda":
        return CondaEnv(kind=kind, installer=installer, tool=conda_bin(), uv=uv)
    if installer == "uv":
        return UvVenv(kind=kind, installer=installer, tool=uv, uv=uv)
    return PipVenv(kind=kind, installer=installer, uv=uv)


def pip_version_in(env_path: str | os.PathLike[str]) -> tuple[int, ...]:
    """The pip version installed in an env, from its dist-info folder name (no subprocess)."""
    v = installed_distributions(env_path).get("pip")
    return leading_numbers(v) if v else ()


def leading_numbers(version: str) -> tuple[int, ...]:
    """The numeric release of a version, up to its first part that does not start with a digit:
    "24.1.2" -> (24, 1, 2), "24.1rc1" -> (24, 1), "dev" -> ()."""
    parts = []
    for piece in version.split("."):
        m = re.match(r"\d+", piece)
        if not m:
            break
        parts.append(int(m.group()))
    return tuple(parts)
