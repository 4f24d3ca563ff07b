"""Plan, pre-flight and a transactional install of PyTorch into a new (or existing) env.

``plan(request)`` decides everything that can be decided without writing anything (the
Python, the backend, the packages and indexes, the size estimate). ``preflight(plan)`` checks
it against the machine: the Python fits, the target is writable and not someone's folder,
the disk has room, the indexes (or bundle) are reachable. ``install(plan)`` then creates the
env and installs, streaming typed events; a new env that fails or is cancelled is removed
completely (only what we created), an existing env is restored from a ``pip freeze``
snapshot.

Index rules (never mix one index's torch with another's):

* uv: the torch index goes in as ``--extra-index-url`` (uv ranks extra indexes above the
  default one) with ``--index-strategy first-index``: every package comes from the first
  index that has it at all, so torch / torchvision / torchaudio all come from the torch
  index; packages it lacks come from the user's default index (PyPI, ``UV_DEFAULT_INDEX``,
  or ``default_index_url``/mirror).
* pip merges all indexes and picks the best version; the torch index's builds carry a local
  version label (``+cu126``) that outranks PyPI's plain build of the same version, and the
  recommendation pins torch packages to one variant. After every install we read the env's
  ``*.dist-info`` and refuse a mix of variants (``torch 2.13.0+cpu`` with
  ``torchvision 0.28.0+cu126``).

Disk estimates (installed size, not download size; documented in docs/install.md):
CPU torch ~0.9 GB (measured here: 895 MB venv, research/feasibility.md #4); CUDA builds
5-7 GB (torch + the nvidia-* runtime wheels; we use 7 GB); ROCm ~15 GB; XPU ~4 GB; macOS
~0.5 GB; a local wheel: its size x 4 (the CPU wheel: 191.8 MB -> 754 MB installed);
a bundle: the sum of its wheel sizes x 4; anything else 10 MB per package.
"""
from __future__ import annotations

import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from app.core import envs, runner
from app.core.envs import EnvBackend, IndexOptions, PythonInfo, env_python
from app.core.errors import BadInput, Cancelled, UserError
from app.core.i18n import tr
from app.core.events import LogEvent, PhaseEvent, ProgressEvent, StepEvent, WarningEvent

TORCH_FAMILY = ("torch", "torchvision", "torchaudio")
PYPI_SIMPLE = "https://pypi.org/simple"
CONDA_FORGE = "https://conda.anaconda.org/conda-forge"

# Installed sizes in MB (see the module docstring for where they come from).
INSTALLED_MB = {"cpu": 900, "cuda": 7000, "rocm": 15000, "xpu": 4000, "mps": 500}
WHEEL_TO_INSTALLED = 4
OTHER_PACKAGE_MB = 10
ENV_BASE_MB = {"uv": 1, "pip": 25, "conda": 200}
MARGIN = 1.1

NET_TIMEOUT_S = 3.0


# --------------------------------------------------------------------------- data

@dataclass
class InstallRequest:
    """What the user asked for. Everything optional has a sensible default."""

    env_path: str | os.PathLike
    kind: str = "venv"  # venv | conda
    installer: str = "uv"  # uv | pip
    python: str | None = None  # "3.11" or a path; default: the recommendation's / ours
    packages: Sequence[str] | None = None  # explicit requirements; else the recommendation's
    recommendation: Any = None  # app.core.recommend.Recommendation (or its dict)
    index_url: str | None = None  # the index for the torch packages (overrides the rec's)
    extra_index_urls: Sequence[str] = ()
    find_links: Sequence[str | os.PathLike] = ()
    bundle: str | os.PathLike | None = None  # an offline bundle folder
    existing: bool = False  # the user asked to add to an existing env
    proxy: str | None = None  # else HTTPS_PROXY/HTTP_PROXY from the environment pass through
    ca_bundle: str | None = None  # a CA file, or "system" for the OS trust store
    default_index_url: str | None = None  # a mirror replacing PyPI for everything else
    timeout_s: float | None = None  # per command; None: no limit (cancel still works)

    def to_dict(self) -> dict:
        from app.core.serial import to_jsonable

        d = {k: to_jsonable(v) for k, v in self.__dict__.items() if k != "recommendation"}
        d["recommendation"] = _rec_dict(self.recommendation)
        return d


@dataclass(frozen=True)
class Check:
    """One pre-flight check. ``ok`` False with severity "error" stops the install."""

    name: str
    ok: bool
    message: str
    hint: str = ""
    severity: str = "error"  # error | warning

    @property
    def blocking(self) -> bool:
        return not self.ok and self.severity == "error"

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class InstallPlan:
    request: InstallRequest
    env_path: Path
    backend: EnvBackend
    python: PythonInfo | None  # None: uv will look for / download ``python_request``
    python_request: str | None
    packages: list[str]
    index: IndexOptions
    new_env: bool
    estimate_mb: int
    estimate_why: str
    variant: str | None = None
    bundle_manifest: Any = None
    requirements_file: Path | None = None
    notes: list[str] = field(default_factory=list)
    python_notes: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.backend.kind

    @property
    def installer(self) -> str:
        return self.backend.installer

    def commands(self) -> list[list[str]]:
        """The commands install() will run (for showing the user), in order."""
        cmds = []
        if self.new_env:
            cmds += self.backend.create_argv(self.env_path, self.python, self.python_request)
        cmds.append(self.backend.install_argv(self.env_path, self.packages, self.index,
                                              requirements=self.requirements_file))
        return cmds

    def _commands_or_empty(self) -> list[list[str]]:
        try:
            return self.commands()
        except BadInput:  # no interpreter yet: the pre-flight says so
            return []

    def to_dict(self) -> dict:
        return {
            "env_path": str(self.env_path),
            "kind": self.kind,
            "installer": self.installer,
            "backend": self.backend.describe(),
            "python": self.python.to_dict() if self.python else None,
            "python_request": self.python_request,
            "packages": list(self.packages),
            "torch_index": self.index.torch_index,
            "default_index": self.index.default_index,
            "extra_index_urls": list(self.index.extra_index_urls),
            "find_links": [str(f) for f in self.index.find_links],
            "offline": self.index.offline,
            "new_env": self.new_env,
            "estimate_mb": self.estimate_mb,
            "estimate_why": self.estimate_why,
            "variant": self.variant,
            "bundle": str(self.request.bundle) if self.request.bundle else None,
            "commands": self._commands_or_empty(),
            "notes": list(self.notes),
        }


@dataclass
class InstallResult:
    env_path: Path
    python: Path
    torch_version: str | None
    log_path: Path | None
    duration_s: float
    packages: dict[str, str]  # what the env holds afterwards (name -> version)
    kind: str = "venv"
    installer: str = "uv"
    created: bool = True
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        from app.core.serial import to_jsonable

        return {k: to_jsonable(v) for k, v in self.__dict__.items()}


# --------------------------------------------------------------------------- helpers

def _rec_get(rec: Any, name: str, default=None):
    if rec is None:
        return default
    if isinstance(rec, dict):
        return rec.get(name, default)
    return getattr(rec, name, default)


def _rec_dict(rec: Any):
    if rec is None or isinstance(rec, dict):
        return rec
    if hasattr(rec, "to_dict"):
        return rec.to_dict()
    from app.core.serial import to_jsonable

    return to_jsonable(rec)


_SIMPLE_REQ = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*"
                         r"(?:(?:===|==|>=|<=|~=|!=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*)?$")


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _req_name(req: str) -> str | None:
    """The canonical project name of a requirement (validated), None for paths/options."""
    req = req.strip()
    m = _SIMPLE_REQ.match(req)
    if m:  # the common "torch==2.13.0" without importing packaging.requirements (~17 ms)
        return _canon(m.group(1))
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    if not req or req.startswith("-"):
        return None
    if req.endswith(".whl") or "/" in req or os.sep in req:
        base = req.rsplit("/", 1)[-1].rsplit(os.sep, 1)[-1]
        return canonicalize_name(base.split("-", 1)[0]) if base.endswith(".whl") else None
    try:
        return canonicalize_name(Requirement(req).name)
    except InvalidRequirement:
        raise BadInput(f"{req!r} is not a valid package requirement.",
                       hint='Write packages like "torch", "torch==2.13.0" or "torchvision>=0.20".')


def _local_label(version: str) -> str | None:
    return version.split("+", 1)[1] if "+" in version else None


def _variant_of(label: str | None) -> str | None:
    if not label:
        return None
    for key in ("cpu", "cu", "rocm", "xpu"):
        if label.startswith(key):
            return "cuda" if key == "cu" else key
    return None


def _existing_ancestor(path: Path) -> Path:
    p = path
    while not p.exists():
        if p.parent == p:
            break
        p = p.parent
    return p


def _free_mb(path: Path) -> int | None:
    import shutil

    try:
        return shutil.disk_usage(_existing_ancestor(path)).free // (1024 * 1024)
    except OSError:
        return None


def _pip_config_index() -> str | None:
    """The index-url of the user's pip configuration (env var, then config files)."""
    url = os.environ.get("PIP_INDEX_URL")
    if url:
        return url.split()[0]
    import configparser

    files = [Path("/etc/pip.conf"), Path("/etc/xdg/pip/pip.conf"),
             Path.home() / ".config" / "pip" / "pip.conf", Path.home() / ".pip" / "pip.conf"]
    if envs.WINDOWS:
        files = [Path(os.environ.get("APPDATA", "")) / "pip" / "pip.ini"]
    cfg_file = os.environ.get("PIP_CONFIG_FILE")
    if cfg_file:
        files.append(Path(cfg_file))
    found = None
    for f in files:
        try:
            if not f.is_file():
                continue
            cp = configparser.ConfigParser()
            cp.read(f, encoding="utf-8")
            for section in ("global", "install"):
                if cp.has_option(section, "index-url"):
                    found = cp.get(section, "index-url").split()[0]
        except (OSError, configparser.Error, UnicodeDecodeError):
            continue
    return found


def default_index_for(installer: str, mirror: str | None = None) -> str:
    """The index packages other than torch come from, for this installer and user."""
    if mirror:
        return mirror
    if installer == "uv":
        return (os.environ.get("UV_DEFAULT_INDEX") or os.environ.get("UV_INDEX_URL")
                or PYPI_SIMPLE)
    return _pip_config_index() or PYPI_SIMPLE


def _proxy_for(url: str, proxy: str | None) -> str | None:
    if proxy:
        return proxy
    if sys.platform.startswith("linux") and not any(k.lower().endswith("_proxy")
                                                    for k in os.environ):
        return None  # urllib would read the same variables (and costs ~15 ms to import)
    import urllib.parse
    import urllib.request

    proxies = urllib.request.getproxies()
    host = urllib.parse.urlsplit(url).hostname or ""
    if urllib.request.proxy_bypass(host):
        return None
    scheme = urllib.parse.urlsplit(url).scheme
    return proxies.get(scheme) or proxies.get("https") or proxies.get("http")


def check_url(url: str, *, proxy: str | None = None, timeout: float = NET_TIMEOUT_S) -> str | None:
    """None when ``url`` (an index or find-links location) is reachable, else why not.

    For http(s) this resolves the host and opens a TCP connection (to the proxy, when one
    applies): that catches "offline", DNS failures, a wrong host or port and a firewall in
    a few milliseconds, where a full TLS + HTTP request costs ~90 ms. Used for the default
    index (PyPI) and find-links; indexes the user or the recommendation named get
    :func:`probe_index` (a real request, so a mistyped URL is caught too).
    """
    import socket
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    if parts.scheme in ("", "file"):
        path = Path(urllib.parse.unquote(parts.path) if parts.scheme == "file" else url)
        return None if path.exists() else tr("{path} does not exist", path=path)
    if parts.scheme not in ("http", "https"):
        return tr("{url}: unsupported URL scheme {scheme}", url=url, scheme=repr(parts.scheme))
    via = _proxy_for(url, proxy)
    target = urllib.parse.urlsplit(via) if via else parts
    host = target.hostname
    port = target.port or (443 if target.scheme == "https" else 80)
    if not host:
        return tr("{url}: no host name", url=url)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except socket.gaierror as exc:
        return tr("cannot resolve {host} ({error})", host=host, error=exc.strerror or exc)
    except OSError as exc:
        what = exc.strerror or str(exc) or type(exc).__name__
        return (tr("cannot connect to {host}:{port} (proxy): {error}", host=host, port=port, error=what) if via
                else tr("cannot connect to {host}:{port}: {error}", host=host, port=port, error=what))
    return None


def probe_index(url: str, *, proxy: str | None = None, ca_bundle: str | None = None,
                timeout: float = NET_TIMEOUT_S) -> tuple[str | None, str | None]:
    """A real HTTP(S) request to an index the user (or the recommendation) named.

    Returns ``(error, warning)``: ``error`` when it cannot be reached at all (DNS, refused,
    TLS: blocking); ``warning`` when it answered with an HTTP error (some mirrors answer 404
    at the index root yet serve every project page, so that does not block).
    Costs ~90 ms (TLS), so the default PyPI index only gets :func:`check_url`.
    """
    import ssl
    import urllib.error
    import urllib.parse
    import urllib.request

    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        return check_url(url, proxy=proxy, timeout=timeout), None
    handlers: list = []
    if proxy:
        handlers.append(urllib.request.ProxyHandler({"http": proxy, "https": proxy}))
    if ca_bundle and ca_bundle != "system":
        try:
            handlers.append(urllib.request.HTTPSHandler(
                context=ssl.create_default_context(cafile=ca_bundle)))
        except (OSError, ssl.SSLError) as exc:
            return tr("the CA bundle {path} cannot be used ({error})", path=ca_bundle, error=exc), None
    opener = urllib.request.build_opener(*handlers)
    req = urllib.request.Request(url.rstrip("/") + "/", method="HEAD",
                                 headers={"User-Agent": "torch-setup-assistant"})
    try:
        with opener.open(req, timeout=timeout):
            return None, None
    except urllib.error.HTTPError as exc:
        if exc.code in (405, 501):  # HEAD not allowed: the server is there
            return None, None
        return None, tr("{url} answered HTTP {code} {reason}", url=url, code=exc.code, reason=exc.reason)
    except urllib.error.URLError as exc:
        reason = exc.reason
        what = getattr(reason, "strerror", None) or str(reason)
        return f"{what}", None
    except (OSError, ValueError) as exc:
        return f"{exc}", None


# --------------------------------------------------------------------------- plan

def _estimate(packages: Sequence[str], backend: EnvBackend, variant: str | None,
              find_links: Sequence[str], manifest=None) -> tuple[int, str]:
    base = ENV_BASE_MB["conda" if backend.kind == "conda" else backend.installer]
    if manifest is not None:
        total = sum(f.size for f in manifest.files) / 1e6 * WHEEL_TO_INSTALLED
        mb = int((base + total) * MARGIN)
        return mb, f"bundle wheels {sum(f.size for f in manifest.files) / 1e6:.0f} MB x " \
                   f"{WHEEL_TO_INSTALLED}"
    names = [n for n in (_req_name(p) for p in packages) if n]
    total = base
    why = []
    for name in names:
        if name == "torch":
            local = None
            for fl in find_links:
                d = Path(str(fl).replace("file://", ""))
                if d.is_dir():
                    wheels = sorted(d.glob("torch-*.whl"))
                    if wheels:
                        local = max(w.stat().st_size for w in wheels)
                        break
            if local:
                mb = local / 1e6 * WHEEL_TO_INSTALLED
                why.append(f"torch: local wheel x {WHEEL_TO_INSTALLED}")
            else:
                v = variant or ("cuda" if sys.platform.startswith("linux") else "cpu")
                mb = INSTALLED_MB.get(v, INSTALLED_MB["cuda"])
                why.append(f"torch ({v}): ~{mb / 1000:.1f} GB")
            total += mb
        elif name in ("torchvision", "torchaudio"):
            total += 30 if variant in (None, "cpu", "mps") else 60
        else:
            total += OTHER_PACKAGE_MB
    return int(total * MARGIN), ", ".join(why) or f"{len(names)} package(s)"


def plan(request: InstallRequest, report=None) -> InstallPlan:
    """Decide everything without writing anything. Raises BadInput for impossible requests."""
    if not str(request.env_path).strip():
        raise BadInput("No environment path was given.", hint="Pass --env PATH.")
    env_path = Path(os.path.abspath(os.path.expanduser(os.fspath(request.env_path))))
    backend = envs.backend_for(request.kind, request.installer)
    rec = request.recommendation
    notes: list[str] = []

    exists_as_env = envs.is_env(env_path)
    if request.existing:
        if not exists_as_env:
            raise BadInput(f"{env_path} is not a Python environment, so nothing can be added "
                           "to it.", hint="Pick the folder of an existing venv or conda env "
                                          "(it holds pyvenv.cfg or conda-meta), or create a new "
                                          "one.")
        actual = envs.env_kind(env_path)
        if actual != request.kind:
            backend = envs.backend_for(actual, request.installer)
        if request.installer == "pip" and not envs.pip_version_in(env_path):
            raise BadInput(f"{env_path} has no pip, so pip cannot add packages to it.",
                           hint="Use --installer uv (it needs no pip inside the environment).")
    elif exists_as_env:
        raise BadInput(f"{env_path} already is a Python environment.",
                       hint="Choose a new folder, or add to this environment on purpose "
                            "(--existing; it is snapshotted and restored if anything fails).")

    manifest = None
    requirements_file = None
    packages: list[str]
    python_spec = request.python
    if request.bundle:
        from app.core.bundle import check_bundle

        manifest = check_bundle(request.bundle)
        requirements_file = Path(request.bundle) / manifest.requirements_file
        packages = []
        if python_spec is None:
            python_spec = manifest.python_version
        notes.append(f"offline bundle {request.bundle} ({len(manifest.files)} wheels, built "
                     f"{manifest.created})")
    elif request.packages:
        packages = [p for p in request.packages if str(p).strip()]
    else:
        packages = list(_rec_get(rec, "packages", None) or [])
        if not packages:
            raise BadInput("Nothing to install: no packages and no recommendation.",
                           hint="Pass --packages torch ... or let the assistant recommend.")
    for p in packages:
        _req_name(p)  # validates

    if python_spec is None:
        env_py = _rec_get(rec, "env_python", None)
        if isinstance(env_py, str) and re.match(r"^\d+\.\d+$", env_py):
            python_spec = env_py

    python: PythonInfo | None = None
    python_notes: list[str] = []
    if request.existing:
        python, why = envs.probe_python(env_python(env_path))
        if python is None:
            raise BadInput(f"The Python of {env_path} does not run: {why}",
                           hint="Repair or recreate that environment.")
    else:
        python, python_notes = envs.find_python(python_spec, report)
    if manifest is not None and python is not None \
            and python.major_minor != manifest.python_version:
        raise BadInput(f"The bundle is for Python {manifest.python_version}, but the "
                       f"environment would use Python {python.version}.",
                       hint=f"Pass --python {manifest.python_version} (that Python must be "
                            "installed here), or build the bundle for this Python.")

    variant = None if manifest else _rec_get(rec, "variant", None)
    backend_name = _rec_get(rec, "backend", None)
    variant_kind = _variant_of(variant) or (backend_name if backend_name in INSTALLED_MB
                                            else None)
    if variant_kind is None:
        for p in packages:
            if _req_name(p) == "torch" and "+" in p:
                variant_kind = _variant_of(p.split("+", 1)[1])

    torch_index = None
    if manifest is None:
        torch_index = request.index_url or _rec_get(rec, "index_url", None)
    find_links = tuple(str(f) for f in request.find_links)
    index = IndexOptions(
        torch_index=torch_index,
        default_index=request.default_index_url,
        extra_index_urls=tuple(request.extra_index_urls),
        find_links=((str(Path(request.bundle).absolute() / manifest.wheels_dir),) if manifest
                    else find_links),
        ca_bundle=request.ca_bundle,
        offline=manifest is not None,
        require_hashes=manifest is not None,
    )
    estimate_mb, why = _estimate(packages, backend, variant_kind, index.find_links, manifest)
    if request.existing:
        estimate_mb, why = estimate_mb, why + " (existing env: upper bound)"
    return InstallPlan(
        request=request, env_path=env_path, backend=backend, python=python,
        python_request=python_spec, packages=packages, index=index,
        new_env=not request.existing, estimate_mb=estimate_mb, estimate_why=why,
        variant=variant, bundle_manifest=manifest, requirements_file=requirements_file,
        notes=notes, python_notes=python_notes,
    )


# --------------------------------------------------------------------------- preflight

def _check_python(p: InstallPlan) -> Check:
    b = p.backend
    if p.python is None:
        tried = "; ".join(p.python_notes[-3:])
        want = p.python_request or "3"
        if b.installer == "uv" and p.kind == "venv" and p.python_request:
            return Check("python", True,
                         tr("No Python {want} was found on this machine; uv will try to "
                            "download a uv-managed Python {want} (this needs internet).", want=want),
                         hint=tr("If that fails, install Python {want} (python.org, your package "
                                 "manager or pyenv) or pass --python PATH.", want=want), severity="warning")
        if p.kind == "conda":
            return Check("python", True, tr("conda will install Python {want} into the env.", want=want),
                         severity="warning")
        return Check("python", False,
                     tr("No usable Python {want} was found. Tried: {tried}", want=want, tried=tried) if tried
                     else tr("No usable Python {want} was found.", want=want),
                     hint=tr("Install Python {want} or pass --python with the path of an "
                             "interpreter; with --installer uv a Python can also be downloaded.", want=want))
    if p.request.existing:
        return Check("python", True, tr("Python {version} of the existing environment",
                                        version=p.python.version))
    if b.kind == "venv" and b.installer == "pip" and not p.python.has_venv:
        return Check("python", False,
                     tr("{path} (Python {version}) cannot create virtual "
                        "environments: its venv/ensurepip modules are missing.",
                        path=p.python.path, version=p.python.version),
                     hint=tr("On Debian/Ubuntu: sudo apt install python3-venv (or python3.X-venv); "
                             "or use --installer uv, which does not need them."))
    return Check("python", True, tr("Python {version} at {path}", version=p.python.version, path=p.python.path))


def _check_target(p: InstallPlan) -> Check:
    env = p.env_path
    if p.request.existing:
        if not os.access(env, os.W_OK | os.X_OK):
            return Check("target", False, tr("The environment {env} is not writable.", env=env),
                         hint=tr("Run as a user who owns it, or choose another environment."))
        return Check("target", True, tr("Adding to the existing {kind} at {env} (a snapshot "
                                        "is taken first and restored if anything fails)", kind=p.kind, env=env))
    if env.exists() or env.is_symlink():
        if not env.is_dir():
            return Check("target", False, tr("{env} exists and is not a folder.", env=env),
                         hint=tr("Choose a new folder name for the environment."))
        try:
            non_empty = any(env.iterdir())
        except OSError as exc:
            return Check("target", False, tr("{env} cannot be read: {error}", env=env, error=exc.strerror or exc),
                         hint=tr("Choose another folder."))
        if non_empty:
            return Check("target", False,
                         tr("{env} is a folder with files in it, and not a Python environment. "
                            "Nothing was changed.", env=env),
                         hint=tr("Choose a new or empty folder; the assistant never writes into "
                                 "a folder that holds other files."))
    anc = _existing_ancestor(env)
    if not anc.is_dir():
        return Check("target", False, tr("{folder} is not a folder, so {env} cannot be created.",
                                         folder=anc, env=env),
                     hint=tr("Choose another location."))
    if not os.access(anc, os.W_OK | os.X_OK):
        ro = _is_read_only_fs(anc)
        return Check("target", False,
                     tr("{folder} is on a read-only file system, so the environment cannot be created there. "
                        "Nothing was changed.", folder=anc) if ro else
                     tr("{folder} is not writable, so the environment cannot be created there. "
                        "Nothing was changed.", folder=anc),
                     hint=tr("Choose a folder you can write to (for example in your home folder)."))
    return Check("target", True, tr("{env} will be created", env=env))


def _is_read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _check_disk(p: InstallPlan) -> Check:
    free = _free_mb(p.env_path)
    need = p.estimate_mb
    where = _existing_ancestor(p.env_path)
    if free is None:
        return Check("disk", True, tr("Free space at {where} is unknown", where=where), severity="warning")
    kw = dict(free=_fmt_mb(free), where=where, need=_fmt_mb(need), why=p.estimate_why)
    if free < need:
        return Check("disk", False,
                     tr("Not enough disk space: {free} free at {where}; the installed packages need about {need} "
                        "({why}). Nothing was changed.", **kw),
                     hint=tr("Free at least {more} there, or choose a location on "
                             "a disk with more room.", more=_fmt_mb(need - free)))
    return Check("disk", True, tr("{free} free at {where}; the installed packages need about {need} ({why})",
                                  **kw))


def _fmt_mb(mb: float) -> str:
    return f"{mb / 1000:.1f} GB" if mb >= 1000 else f"{mb:.0f} MB"


def _index_targets(p: InstallPlan) -> list[tuple[str, str]]:
    if p.index.offline:
        return [("bundle", str(p.request.bundle))]
    out = []
    if p.new_env and p.kind == "conda":  # conda create fetches Python from conda-forge
        out.append(("conda channel", CONDA_FORGE))
    if p.index.torch_index:
        out.append(("torch index", p.index.torch_index))
    out.append(("package index", p.index.default_index
                or default_index_for(p.installer)))
    out += [("extra index", u) for u in p.index.extra_index_urls]
    out += [("find-links", str(f)) for f in p.index.find_links]
    return out


def _check_indexes(p: InstallPlan) -> list[Check]:
    targets = _index_targets(p)
    results: list[str | None] = [None] * len(targets)
    warnings: list[str | None] = [None] * len(targets)
    named = {p.index.torch_index, p.index.default_index, *p.index.extra_index_urls} - {None}

    def work(i: int, url: str) -> None:
        if url in named and not p.index.offline:
            results[i], warnings[i] = probe_index(url, proxy=p.request.proxy,
                                                  ca_bundle=p.request.ca_bundle)
        else:
            results[i] = check_url(url, proxy=p.request.proxy)

    threads = [threading.Thread(target=work, args=(i, u), daemon=True)
               for i, (_, u) in enumerate(targets)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(NET_TIMEOUT_S + 2)
    checks = []
    for (label, url), why, warn in zip(targets, results, warnings):
        if why is None and warn:
            checks.append(Check(f"reach:{label}", False, tr("The {label} {warning}.", label=_label_words(label),
                                                            warning=warn),
                                hint=tr("Check the index URL; if it is right, this can be ignored."),
                                severity="warning"))
            continue
        if why is None:
            checks.append(Check(f"reach:{label}", True, tr("{label} {url} is reachable",
                                                           label=_label_words(label), url=url)))
            continue
        if label == "torch index":
            hint = tr("Check the network or proxy (HTTPS_PROXY), use a mirror of the PyTorch "
                      "index with --index-url, or install from an offline bundle "
                      "(torch-setup bundle on a connected machine, then --from-bundle).")
        elif label in ("find-links", "bundle"):
            hint = tr("Check the folder path.")
        else:
            hint = tr("Check the network or proxy (HTTPS_PROXY / HTTP_PROXY), the index URL, or "
                      "use a reachable mirror; an offline bundle needs no network at all.")
        checks.append(Check(f"reach:{label}", False,
                            tr("The {label} {url} cannot be reached: {why}. Nothing was changed.",
                               label=_label_words(label), url=url, why=why),
                            hint=hint))
    return checks


def _label_words(label: str) -> str:
    """An index label ("torch index", "bundle", ...) in the current language."""
    return {"bundle": tr("bundle"), "conda channel": tr("conda channel"), "torch index": tr("torch index"),
            "package index": tr("package index"), "extra index": tr("extra index"),
            "find-links": tr("find-links")}.get(label, label)


def preflight(p: InstallPlan) -> list[Check]:
    """Every check, cheap and read-only; the install may go ahead if none is blocking."""
    checks: list[Check] = []
    why = p.backend.unavailable()
    checks.append(Check("backend", why is None,
                        why or tr("{backend} with {installer}", backend=p.backend.describe(),
                                  installer=p.installer),
                        hint=tr("Choose --kind venv / --installer pip, which need nothing extra.")
                        if why else ""))
    net: list[Check] = []
    t = threading.Thread(target=lambda: net.extend(_check_indexes(p)), daemon=True)
    t.start()  # network checks overlap the local ones
    checks.append(_check_python(p))
    checks.append(_check_target(p))
    checks.append(_check_disk(p))
    t.join()
    checks.extend(net)
    return checks


def raise_for_checks(checks: Sequence[Check], log_path: Path | None = None,
                     plan: InstallPlan | None = None) -> None:
    """Raise BadInput (exit 2, nothing was done) for the first blocking check; with ``plan``
    and no ``log_path``, the plan and every check are written to a new log first."""
    bad = [c for c in checks if c.blocking]
    if not bad:
        return
    if log_path is None and plan is not None:
        from app.core.paths import new_log_path

        try:
            log_path = new_log_path("install")
            with open(log_path, "a", encoding="utf-8") as fh:
                fh.write(f"# plan: {plan.to_dict()!r}\n")
                for c in checks:
                    fh.write(f"# check {c.name}: {'ok' if c.ok else 'FAILED'}: {c.message}\n")
                fh.write("# refused by the pre-flight; nothing was changed\n")
        except OSError:
            log_path = None
    first = bad[0]
    raise BadInput(first.message, hint=first.hint,
                   lines=[c.message for c in bad[1:]], log_path=log_path)


# --------------------------------------------------------------------------- install

_HINTS = [
    (("no space left", "space left on device", "errno 28", "os error 28", "disk quota"),
     "The disk is full. Free some space or choose a location on another disk."),
    (("read-only file system", "permission denied", "os error 13", "errno 13"),
     "The assistant could not write there. Choose a folder you own."),
    (("do not match the hashes", "hash mismatch", "hashes are required"),
     "A downloaded file does not match its expected hash: the bundle or download is damaged; "
     "build or download it again."),
    (("no matching distribution", "no solution found", "not found in the package registry",
      "could not find a version", "we can conclude", "unsatisfiable"),
     "No build of these packages exists for this Python and platform on the chosen index. "
     "Check the versions, the Python version, or the index URL."),
    (("failed to fetch", "connection refused", "could not connect", "name or service not known",
      "temporary failure in name resolution", "dns error", "network is unreachable",
      "newconnectionerror", "connecterror", "timed out", "certificate verify",
      "ssl error", "sslerror", "invalid peer certificate", "proxy"),
     "The network or the index failed. Check the connection, a proxy (HTTPS_PROXY), a CA "
     "bundle (--ca-bundle), or use an offline bundle."),
    (("ensurepip", "python3-venv", "no module named venv"),
     "This Python cannot create virtual environments. On Debian/Ubuntu install python3-venv, "
     "or use --installer uv."),
    (("no interpreter found", "no python", "download python", "managed python",
      "python downloads"),
     "uv found no matching Python and could not download one (downloads need internet). "
     "Install that Python version here or pass --python PATH."),
]


def _hint_for(lines: Sequence[str], default: str) -> str:
    text = "\n".join(lines).lower()
    for needles, hint in _HINTS:
        if any(n in text for n in needles):
            return hint
    return default


class _Rollback:
    """Knows what install() created and takes exactly that away again."""

    def __init__(self, env_path: Path) -> None:
        self.env_path = env_path
        self.env_existed = env_path.exists()
        self.created_parents: list[Path] = []
        p = env_path.parent
        while not p.exists():
            self.created_parents.append(p)
            if p.parent == p:
                break
            p = p.parent

    def run(self) -> list[str]:
        problems: list[str] = []
        env = self.env_path
        if env.is_symlink() and not self.env_existed:
            env.unlink(missing_ok=True)
        elif env.exists():
            if self.env_existed:  # it was an empty folder: empty it again, keep it
                for child in list(env.iterdir()):
                    _remove(child, problems)
            else:
                _remove(env, problems)
        for parent in self.created_parents:  # deepest first
            try:
                parent.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                break  # not empty (someone else wrote there): leave it
        return problems


def _remove(path: Path, problems: list[str]) -> None:
    import shutil

    def onerror(func, p, exc_info):
        try:
            os.chmod(p, 0o700)
            func(p)
        except OSError as exc:
            problems.append(f"{p}: {exc.strerror or exc}")

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, onerror=onerror)
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror or exc}")


def rollback(p: InstallPlan, *, snapshot: Path | None = None, guard: "_Rollback | None" = None,
             on_event: Callable | None = None, log_path: Path | None = None) -> list[str]:
    """Undo an install: remove a new env completely, or restore an existing one.

    ``guard``: what install() recorded before it created anything (which folders existed);
    without it, a folder that exists now is treated as pre-existing and only emptied.
    Returns the problems met (empty when everything was undone).
    """
    emit = on_event or (lambda e: None)
    if p.new_env:
        emit(PhaseEvent("rollback", "start", str(p.env_path)))
        problems = (guard or _Rollback(p.env_path)).run()
        emit(PhaseEvent("rollback", "end" if not problems else "failed"))
        return problems
    if snapshot is not None:
        return restore(p, snapshot, on_event=on_event, log_path=log_path)
    return []


def take_snapshot(p: InstallPlan, log_path: Path | None = None, cancel=None) -> tuple[Path, str]:
    """``pip freeze`` of an existing env, saved next to the log. Returns (file, text)."""
    from app.core.paths import new_log_path

    res = runner.run(p.backend.freeze_argv(p.env_path), env=p.backend.child_env(p.index),
                     log_path=log_path, cancel=cancel, timeout=120)
    res.raise_for_status(f"Could not record the packages of {p.env_path} before changing it",
                         hint="Nothing was changed. Check that the environment works "
                              f"({env_python(p.env_path)} -m pip list).")
    snap = new_log_path("snapshot").with_suffix(".txt")
    snap.write_text(res.stdout.strip() + "\n", encoding="utf-8")
    return snap, res.stdout


def _freeze_names(text: str) -> dict[str, str]:
    from packaging.utils import canonicalize_name

    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^([A-Za-z0-9_.\-]+)\s*(?:==|@| @ )\s*(.*)$", line)
        if m:
            out[canonicalize_name(m.group(1))] = line
    return out


def restore(p: InstallPlan, snapshot: Path, *, on_event: Callable | None = None,
            log_path: Path | None = None) -> list[str]:
    """Bring an existing env back to ``snapshot``. Returns problems (empty: identical)."""
    emit = on_event or (lambda e: None)
    emit(PhaseEvent("restore", "start", f"restoring {p.env_path} from {snapshot}"))
    env = p.backend.child_env(p.index, p.request.proxy)
    problems: list[str] = []
    want = _freeze_names(snapshot.read_text(encoding="utf-8"))
    if p.installer == "pip":
        now = runner.run(p.backend.freeze_argv(p.env_path), env=env, log_path=log_path,
                         timeout=120)
        extra = sorted(set(_freeze_names(now.stdout)) - set(want))
        if extra:
            r = runner.run(p.backend.uninstall_argv(p.env_path, extra), env=env,
                           log_path=log_path, timeout=600)
            if not r.ok:
                problems.append(f"could not remove {', '.join(extra)} ({r.describe()})")
    for argv in p.backend.restore_argv(p.env_path, snapshot, p.index):
        r = runner.run(argv, env=env, log_path=log_path, timeout=1800)
        if not r.ok:
            problems.append(f"{' '.join(argv[:3])} failed ({r.describe()}): "
                            + " / ".join(runner.relevant_lines(r.tail, 3)))
    after = runner.run(p.backend.freeze_argv(p.env_path), env=env, log_path=log_path,
                       timeout=120)
    if after.ok and _freeze_names(after.stdout) != want:
        diff = set(_freeze_names(after.stdout).items()) ^ set(want.items())
        problems.append("the environment differs from the snapshot: "
                        + ", ".join(sorted(v for _, v in diff))[:400])
    emit(PhaseEvent("restore", "end" if not problems else "failed"))
    return problems


def install(p: InstallPlan, *, on_event: Callable | None = None, cancel: runner.CancelToken | None = None,
            checks: Sequence[Check] | None = None) -> InstallResult:
    """Create the env (if new) and install; roll back on failure or cancel.

    Raises BadInput (pre-flight refused; nothing written), UserError (failed, rolled back)
    or Cancelled (rolled back). ``checks``: the pre-flight already run (else it runs here).
    """
    from app.core.paths import new_log_path

    emit = on_event or (lambda e: None)
    cancel = cancel or runner.CancelToken()
    log_path = new_log_path("install")
    started = time.monotonic()

    def info(text: str) -> None:
        emit(LogEvent(text, "info"))
        try:
            with open(log_path, "a", encoding="utf-8") as fh:
                fh.write(f"# {text}\n")
        except OSError:
            pass

    emit(PhaseEvent("preflight", "start"))
    if checks is None:
        checks = preflight(p)
    for c in checks:
        emit(StepEvent(f"check:{c.name}", "passed" if c.ok else
                       ("failed" if c.severity == "error" else "warning"), c.message))
    info("plan: " + repr(p.to_dict()))
    for c in checks:
        info(f"check {c.name}: {'ok' if c.ok else 'FAILED'}: {c.message}")
    if any(c.blocking for c in checks):
        emit(PhaseEvent("preflight", "failed"))
        raise_for_checks(checks, log_path)
    warnings: list[str] = []
    for c in checks:
        if c.severity == "warning" and (not c.ok or p.python is None):
            emit(WarningEvent(c.message))
            warnings.append(c.message)
    emit(PhaseEvent("preflight", "end"))
    cancel.raise_if_cancelled()

    backend = p.backend
    child_env = backend.child_env(p.index, p.request.proxy)
    guard = _Rollback(p.env_path) if p.new_env else None
    snapshot: Path | None = None
    phase = "snapshot"

    def fail(message: str, res: runner.RunResult, default_hint: str) -> UserError:
        lines = runner.relevant_lines(res.tail, 12)
        return UserError(f"{message} ({res.describe()})",
                         hint=_hint_for(list(res.tail) + [res.start_error or ""], default_hint),
                         lines=lines, log_path=log_path)

    try:
        if not p.new_env:
            emit(PhaseEvent("snapshot", "start"))
            snapshot, _ = take_snapshot(p, log_path, cancel)
            info(f"snapshot of {p.env_path}: {snapshot}")
            emit(PhaseEvent("snapshot", "end", str(snapshot)))
        else:
            phase = "create-env"
            emit(PhaseEvent("create-env", "start", str(p.env_path)))
            for argv in backend.create_argv(p.env_path, p.python, p.python_request):
                res = runner.run(argv, env=child_env, cancel=cancel, log_path=log_path,
                                 timeout=p.request.timeout_s,
                                 on_line=lambda s, ln: emit(LogEvent(ln, s)))
                if res.cancelled:
                    raise Cancelled(log_path=log_path)
                if not res.ok:
                    if p.python is None and backend.installer == "uv" and p.kind == "venv":
                        want = p.python_request or "3"
                        err = fail(f"No Python {want} was found on this machine, and uv could "
                                   f"not download one", res, "")
                        err.hint = (f"Downloading a Python needs internet access. Install Python "
                                    f"{want} (python.org, your package manager or pyenv), or "
                                    "choose a Python you have with --python (a version such as "
                                    f"{sys.version_info[0]}.{sys.version_info[1]} or a path).")
                        raise err
                    who = p.python.path if p.python else (p.python_request or "python")
                    raise fail(f"Could not create the environment at {p.env_path} with {who}",
                               res, "Check the Python interpreter, or try --installer uv.")
            if not env_python(p.env_path).exists():
                raise UserError(f"The environment at {p.env_path} has no Python after "
                                "creation.", log_path=log_path)
            emit(PhaseEvent("create-env", "end"))
        cancel.raise_if_cancelled()

        phase = "install"
        emit(PhaseEvent("install", "start", ", ".join(p.packages) or "bundle"))
        from app.core.progress import ProgressParser

        parser = ProgressParser(p.installer, emit)

        def on_line(stream: str, line: str) -> None:
            emit(LogEvent(line, stream))
            parser.feed(line)

        argv = backend.install_argv(p.env_path, p.packages, p.index,
                                    requirements=p.requirements_file,
                                    pip_version=envs.pip_version_in(p.env_path))
        res = runner.run(argv, env=child_env, cancel=cancel, log_path=log_path,
                         timeout=p.request.timeout_s, on_line=on_line)
        parser.close()
        if res.cancelled:
            raise Cancelled(log_path=log_path)
        if not res.ok:
            raise fail("Installing " + (", ".join(p.packages) or "the bundle") + " failed",
                       res, "See the lines above and the full log.")

        installed = envs.installed_distributions(p.env_path)
        mixed = _mixed_variants(installed)
        if mixed:
            raise UserError("The environment ended up with torch packages from different "
                            f"builds: {mixed}.",
                            hint="Pin torch, torchvision and torchaudio to one variant (e.g. "
                                 "all +cpu or all +cu126) and use one torch index.",
                            log_path=log_path)
        missing = [n for n in (_req_name(x) for x in p.packages) if n and n not in installed]
        if missing:
            raise UserError(f"The installer finished but {', '.join(missing)} is not in the "
                            "environment.", log_path=log_path)
        emit(PhaseEvent("install", "end"))
    except BaseException as exc:
        cancelled = isinstance(exc, (Cancelled, KeyboardInterrupt)) or cancel.cancelled
        emit(PhaseEvent(phase, "failed", "cancelled" if cancelled else str(exc)[:200]))
        try:
            problems = rollback(p, snapshot=snapshot, guard=guard, on_event=emit,
                                log_path=log_path) \
                if (guard is not None or snapshot is not None) else []
        except Exception as rb_exc:  # never let a cleanup problem hide the real error
            problems = [f"rollback failed: {rb_exc!r}"]
        info("rolled back" + (f" with problems: {problems}" if problems else ""))
        if problems:
            extra = ("The environment could not be fully restored: " if not p.new_env
                     else "Some files could not be removed: ") + "; ".join(problems[:5])
        else:
            extra = ""
        if cancelled:
            msg = ("Cancelled. " + ("The new environment was removed." if p.new_env else
                                    "The environment was restored to its earlier state."))
            raise Cancelled(msg + (" " + extra if extra else ""), log_path=log_path) from None
        if isinstance(exc, UserError):
            if extra:
                exc.lines = list(exc.lines) + [extra]
            if p.new_env:
                exc.message += " Nothing was left behind: the new environment was removed."
            elif snapshot is not None and not problems:
                exc.message += " The environment was restored to its earlier state."
            raise
        raise UserError(f"Unexpected error during {phase}: {exc!r}",
                        hint="This is a bug; please report it with the log.",
                        lines=[extra] if extra else [], log_path=log_path) from exc

    torch_version = installed.get("torch")
    return InstallResult(
        env_path=p.env_path, python=env_python(p.env_path), torch_version=torch_version,
        log_path=log_path, duration_s=round(time.monotonic() - started, 3),
        packages=dict(sorted(installed.items())), kind=p.kind, installer=p.installer,
        created=p.new_env, warnings=warnings,
    )


def _mixed_variants(installed: dict[str, str]) -> str:
    labels = {n: _local_label(installed[n]) for n in TORCH_FAMILY if n in installed}
    kinds = {n: _variant_of(lbl) for n, lbl in labels.items() if lbl}
    if len(set(labels[n] for n in kinds)) > 1:
        return ", ".join(f"{n} {installed[n]}" for n in kinds)
    return ""


__all__ = [
    "InstallRequest", "InstallPlan", "InstallResult", "Check", "plan", "preflight", "install",
    "rollback", "take_snapshot", "restore", "check_url", "raise_for_checks", "default_index_for",
    "ProgressEvent",
]
