"""A PEP 751 ``pylock.toml``: what an environment holds, every file with its sha256.

The file is the standard one (https://packaging.python.org/en/latest/specifications/pylock-toml/,
first defined by PEP 751): ``lock-version``, ``environments``, ``requires-python``,
``created-by`` and one ``[[packages]]`` entry per distribution, each with its exact ``version``,
the ``index`` it came from and its wheel (``url`` or ``path``, ``size``, ``hashes``); uv reads
it (``uv pip install -r pylock.toml``, uv 0.6.15 or newer). What the standard has no key for
lives under ``[tool.torch-setup]``: the torch build and the index it came from, the Python, the
machine the environment was verified on (GPUs, driver, OS), the compatibility data's version,
and the packages that could not be locked (installed from a folder that is gone, with no known
origin, or with no hash), each with the reason: said, never dropped.

:func:`lock_text` writes it (keys in the standard's order, URLs without credentials);
:func:`read_lock` reads one (ours or another tool's) bounded, every bad field named
(BadInput, exit 2); :func:`requirements_text` is what an install from it runs: every file's
hash pinned (``name==version --hash=sha256:…``), so the installer refuses any other file.
"""
from __future__ import annotations

import json
import os
import re
import sys
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from app.core.base.errors import BadInput
from app.core.base.locations import local_path
from app.core.base.requirements import canonical
from app.core.base.schema import Fields, check_depth, document, read_text
from app.core.base.secrets import mask
from app.core.base.serial import to_jsonable
from app.core.base.wheels import parse_wheel, variant_of_version
from app.core.sources.settings import SourceSettings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["CREATED_BY", "LOCK_VERSION", "GpuFact", "Lock", "LockedFile", "LockedPackage", "Machine", "NotLocked",
           "Verified", "environment_marker", "lock_name_problem", "lock_text", "parse_lock", "read_lock",
           "requirements_text"]

LOCK_VERSION = "1.0"
CREATED_BY = "torch-setup"
TOOL = "torch-setup"
FORMAT = 1  # the [tool.torch-setup] table's own format
MAX_LOCK_BYTES = 16 << 20
MAX_PACKAGES = 5000
_SHA256 = re.compile(r"[0-9a-f]{64}")
_MINOR = re.compile(r"3\.\d{1,2}")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class LockedFile:
    """One file of a package: its name, its sha256, and where it is (an index or direct URL, or a path)."""

    name: str
    sha256: str
    url: str | None = None
    path: str | None = None
    size: int | None = None

    def to_toml(self) -> dict[str, object]:
        out: dict[str, object] = {"name": self.name}
        if self.url:
            out["url"] = self.url
        if self.path:
            out["path"] = self.path
        if self.size is not None:
            out["size"] = self.size
        out["hashes"] = {"sha256": self.sha256}
        return out


@dataclass(frozen=True)
class LockedPackage:
    """One distribution of the environment, as the lock pins it.

    ``origin``: ``index`` (an index page listed the file), ``folder`` (a local wheel folder),
    ``url`` (installed from a direct URL), ``directory`` (a local source folder: it cannot be
    pinned by hash and is reproduced only where that folder is).
    """

    name: str
    version: str
    files: tuple[LockedFile, ...] = ()
    index: str | None = None
    origin: str = "index"
    directory: str | None = None
    editable: bool = False
    folder: str | None = None  # the local wheel folder it came from (origin ``folder``)

    @property
    def source(self) -> str | None:
        """Where it came from: its index's URL, or its folder."""
        return self.index or self.folder

    @property
    def hashed(self) -> bool:
        return bool(self.files)

    def requirement_line(self) -> str:
        """``name==version --hash=sha256:…`` (every file's hash: the installer takes the one that fits)."""
        hashes = " ".join(f"--hash=sha256:{f.sha256}" for f in self.files)
        return f"{self.name}=={self.version} {hashes}".rstrip()

    def to_toml(self) -> dict[str, object]:
        out: dict[str, object] = {"name": self.name}
        if self.origin != "directory":  # a source tree's version is not pinned by the standard
            out["version"] = self.version
        if self.index:
            out["index"] = self.index
        if self.directory is not None:
            out["directory"] = {"path": self.directory, "editable": self.editable}
        elif self.files:
            out["wheels"] = [f.to_toml() for f in self.files]
        ours: dict[str, object] = {"origin": self.origin}
        if self.folder:
            ours["folder"] = self.folder
        out["tool"] = {TOOL: ours}
        return out


@dataclass(frozen=True)
class NotLocked:
    """A distribution the lock could not pin, and why (English, as the file stores it)."""

    name: str
    version: str
    why: str


@dataclass(frozen=True)
class GpuFact:
    vendor: str
    name: str
    driver: str | None = None
    compute_capability: str | None = None
    gfx_target: str | None = None


@dataclass(frozen=True)
class Machine:
    """The machine the environment was verified on (from its detect report)."""

    hostname: str | None = None
    os: str | None = None  # linux | windows | macos
    os_version: str | None = None
    arch: str | None = None
    glibc: str | None = None
    cuda_driver_max: str | None = None  # the newest CUDA the NVIDIA driver supports
    gpus: tuple[GpuFact, ...] = ()

    def describe(self) -> str:
        """``NVIDIA GeForce RTX 4090 (driver 580.95.05)`` or ``CPU only``: names and numbers."""
        shown = [g.name + (f" (driver {g.driver})" if g.driver else "") for g in self.gpus if g.name]
        return ", ".join(shown) or "CPU only"


@dataclass(frozen=True)
class Verified:
    """The environment's last verification, as the list of environments recorded it."""

    ok: bool
    when: str
    torch: str | None = None
    accelerator: str | None = None
    passed: int = 0
    skipped: int = 0
    devices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Lock:
    """A lock as written or read. ``python`` is the environment's full version (``3.11.7``)."""

    python: str
    packages: tuple[LockedPackage, ...]
    platform: str | None = None  # linux-x86_64, windows-x86_64, macos-arm64 ...
    torch: str | None = None  # "2.13.0+cpu"
    variant: str | None = None
    backend: str | None = None
    # where the packages came from: the torch wheels' index (or folder), the default index, extra indexes,
    # wheel folders (without credentials)
    sources: SourceSettings = field(default_factory=SourceSettings)
    installer: str = "uv"
    env_name: str = ""
    arch_list: tuple[str, ...] = ()  # the locked build's architectures (the compatibility data's)
    compat_version: str = ""
    created: str = ""
    assistant_version: str = ""
    machine: Machine | None = None
    verified: Verified | None = None
    not_locked: tuple[NotLocked, ...] = ()
    credentials_removed: bool = False
    env_vars: Mapping[str, str] = field(default_factory=dict)  # what the verified build needs set (HSA_OVERRIDE_…)
    created_by: str = CREATED_BY
    source: Path | None = field(default=None, compare=False)

    @property
    def python_minor(self) -> str:
        return ".".join(self.python.split(".")[:2])

    @property
    def torch_package(self) -> LockedPackage | None:
        return next((p for p in self.packages if p.name == "torch"), None)

    @property
    def torch_public(self) -> str | None:
        """The locked torch release without its build label (``2.13.0``)."""
        return self.torch.split("+", 1)[0] if self.torch else None

    @property
    def hashed(self) -> tuple[LockedPackage, ...]:
        """The packages an install from the lock pins by hash."""
        return tuple(p for p in self.packages if p.hashed)

    @property
    def unhashed(self) -> tuple[LockedPackage, ...]:
        """The packages it cannot pin (local source folders)."""
        return tuple(p for p in self.packages if not p.hashed)

    @property
    def total_bytes(self) -> int:
        return sum(max((f.size or 0 for f in p.files), default=0) for p in self.packages)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {f.name: to_jsonable(getattr(self, f.name)) for f in fields(self)}
        d["source"] = str(self.source) if self.source else None
        return d


# ------------------------------------------------------------------ writing

def environment_marker(platform: str | None) -> str | None:
    """The marker of the machines a lock is for (``sys_platform == 'linux' and platform_machine == 'x86_64'``)."""
    if not platform or "-" not in platform:
        return None
    family, arch = platform.split("-", 1)
    sys_platform = {"linux": "linux", "windows": "win32", "macos": "darwin"}.get(family)
    machine = {("windows", "x86_64"): "AMD64", ("windows", "arm64"): "ARM64"}.get((family, arch), arch)
    if sys_platform is None:
        return None
    return f"sys_platform == '{sys_platform}' and platform_machine == '{machine}'"


def _string(s: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's; DEL must be escaped too)."""
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def _key(k: str) -> str:
    return k if _BARE_KEY.fullmatch(k) else _string(k)


def _value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_key(str(k))} = {_value(x)}" for k, x in v.items()) + " }" if v else "{}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def _table(header: str, values: Mapping[str, object]) -> list[str]:
    return [header, *(f"{_key(k)} = {_value(v)}" for k, v in values.items() if v is not None)]


def _tool(lock: Lock) -> dict[str, object]:
    return {"format": FORMAT, "assistant-version": lock.assistant_version, "created": lock.created,
            "env-name": lock.env_name, "python": lock.python, "platform": lock.platform, "torch": lock.torch,
            "variant": lock.variant, "backend": lock.backend, "torch-index": lock.sources.torch_index,
            "default-index": lock.sources.default_index, "extra-index-urls": list(lock.sources.extra_index_urls),
            "find-links": list(lock.sources.find_links), "installer": lock.installer, "arch-list": list(lock.arch_list),
            "compat-data-version": lock.compat_version, "credentials-removed": lock.credentials_removed,
            "env-vars": dict(lock.env_vars),
            "not-locked": [{"name": n.name, "version": n.version, "why": n.why} for n in lock.not_locked]}


def _machine(m: Machine) -> dict[str, object]:
    gpus = [{k: v for k, v in (("vendor", g.vendor), ("name", g.name), ("driver", g.driver),
                               ("compute-capability", g.compute_capability), ("gfx-target", g.gfx_target)) if v}
            for g in m.gpus]
    return {"hostname": m.hostname, "os": m.os, "os-version": m.os_version, "arch": m.arch, "glibc": m.glibc,
            "cuda-driver-max": m.cuda_driver_max, "gpus": gpus}


def _verified(v: Verified) -> dict[str, object]:
    return {"ok": v.ok, "when": v.when, "torch": v.torch, "accelerator": v.accelerator, "passed": v.passed,
            "skipped": v.skipped, "devices": list(v.devices)}


def lock_text(lock: Lock) -> str:
    """The ``pylock.toml`` text (every URL was stripped of credentials before; masked again here)."""
    head: dict[str, object] = {"lock-version": LOCK_VERSION}
    marker = environment_marker(lock.platform)
    if marker:
        head["environments"] = [marker]
    head["requires-python"] = f"=={lock.python_minor}.*"
    head["created-by"] = lock.created_by
    lines = [f"{_key(k)} = {_value(v)}" for k, v in head.items()]
    for p in sorted(lock.packages, key=lambda x: x.name):
        lines += ["", *_table("[[packages]]", p.to_toml())]
    lines += ["", *_table(f"[tool.{TOOL}]", _tool(lock))]
    if lock.machine is not None:
        lines += ["", *_table(f"[tool.{TOOL}.machine]", _machine(lock.machine))]
    if lock.verified is not None:
        lines += ["", *_table(f"[tool.{TOOL}.verified]", _verified(lock.verified))]
    return mask("\n".join(lines) + "\n")


def requirements_text(packages: Iterable[LockedPackage]) -> str:
    """Every hashed package as one ``name==version --hash=sha256:…`` line."""
    lines = [p.requirement_line() for p in packages if p.hashed]
    return "# from a pylock.toml: every file pinned by its sha256\n" + "\n".join(lines) + "\n"


# ------------------------------------------------------------------ reading

_FILE_NAME = re.compile(r"pylock\.([^.]+\.)?toml")


def lock_name_problem(path: str | os.PathLike[str]) -> str | None:
    """Why a lock cannot be named so (the standard's ``pylock.toml`` / ``pylock.NAME.toml``), or None."""
    name = Path(path).name
    if _FILE_NAME.fullmatch(name):
        return None
    return f"{name!r} is not a lock file name: the standard takes pylock.toml or pylock.NAME.toml"


def read_lock(path: str | os.PathLike[str]) -> Lock:
    """A lock file, read bounded and checked field by field (BadInput names the field)."""
    p = Path(path)
    text = read_text(p, what="lock file", limit=MAX_LOCK_BYTES,
                     missing_hint="give the path of a pylock.toml (torch-setup export writes one)")
    return parse_lock(text, source=p)


def parse_lock(text: str, *, source: Path | None = None) -> Lock:
    what = document("lock", source)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{what} is not valid TOML: {exc}", hint="Export the lock again with torch-setup export.") \
            from None
    except RecursionError:
        raise BadInput(f"{what} is nested too deeply to be a lock file") from None
    check_depth(data, what=what)
    f = Fields(data, "", what=what)
    version = f.required_text("lock-version", max_len=16)
    if not re.fullmatch(r"1(\.\d{1,4})?", version):
        raise f.fail("lock-version", f"is {version!r}; this assistant reads lock-version 1.x")
    base = source.parent if source is not None else Path.cwd()
    packages = tuple(_package(g, base) for g in f.each("packages", max_items=MAX_PACKAGES))
    if not packages:
        raise f.fail("packages", "is missing or empty: the lock pins nothing")
    _no_duplicates(f, packages)
    tool = _tool_fields(f)
    return _lock_of(f, tool, packages, source)


def _no_duplicates(f: Fields, packages: Sequence[LockedPackage]) -> None:
    seen: set[str] = set()
    for i, p in enumerate(packages):
        if p.name in seen:
            raise f.fail(f"packages[{i}].name", f"is {p.name!r} a second time; a lock for one environment "
                                                "pins each package once")
        seen.add(p.name)


def _tool_fields(f: Fields) -> Fields | None:
    tool = f.mapping("tool", max_items=1000)
    return tool.mapping(TOOL, max_items=1000) if tool is not None else None


def _lock_of(f: Fields, t: Fields | None, packages: tuple[LockedPackage, ...], source: Path | None) -> Lock:
    torch = next((p for p in packages if p.name == "torch"), None)
    python = (t.text("python", max_len=32) if t is not None else None) or _python_of(f, packages)
    if t is None:
        return Lock(python=python, packages=packages, torch=torch.version if torch else None,
                    variant=variant_of_version(torch.version) if torch else None,
                    sources=SourceSettings(torch_index=torch.source if torch else None),
                    created_by=f.text("created-by") or "",
                    source=source)
    return Lock(
        python=python, packages=packages, platform=t.text("platform", max_len=64),
        torch=t.text("torch", max_len=200) or (torch.version if torch else None),
        variant=t.text("variant", max_len=64), backend=t.text("backend", max_len=16),
        sources=SourceSettings(torch_index=t.text("torch-index"), default_index=t.text("default-index"),
                               extra_index_urls=tuple(t.texts("extra-index-urls", max_items=64)),
                               find_links=tuple(t.texts("find-links", max_items=64))),
        installer=t.text("installer", max_len=16) or "uv",
        env_name=t.text("env-name", max_len=255) or "", arch_list=tuple(t.texts("arch-list", max_items=256)),
        compat_version=t.text("compat-data-version", max_len=64) or "", created=t.text("created", max_len=64) or "",
        assistant_version=t.text("assistant-version", max_len=64) or "", machine=_read_machine(t),
        verified=_read_verified(t), not_locked=_read_not_locked(t),
        credentials_removed=t.flag("credentials-removed"), env_vars=t.text_map("env-vars", max_items=64),
        created_by=f.text("created-by") or "", source=source)


def _python_of(f: Fields, packages: Sequence[LockedPackage]) -> str:
    """The Python a lock without our table is for: ``requires-python == 3.X.*``, else the torch wheel's tag."""
    rp = f.text("requires-python", max_len=200) or ""
    m = re.fullmatch(r"\s*==\s*(3\.\d{1,2})(\.\*)?\s*", rp)
    if m:
        return m.group(1)
    for p in packages:
        for lf in p.files:
            w = parse_wheel(lf.name)
            tag = w.tags[0].split("-")[0] if w is not None and w.tags else ""
            if tag.startswith("cp3") and tag[3:].isdigit():
                return f"3.{tag[3:]}"
    raise f.fail("requires-python", f"is {rp!r}; a lock for one environment names one Python (==3.X.*)")


def _name_of(where: str) -> str:
    return urllib.parse.unquote(where.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1])


def _file(g: Fields, base: Path) -> LockedFile:
    url, path = g.text("url"), g.text("path")
    if not url and not path:
        raise g.fail("url", "is missing (a file needs a url or a path)")
    hashes = g.mapping("hashes", max_items=16)
    if hashes is None:
        raise g.fail("hashes", "is missing: every file of a lock carries its sha256")
    sha = (hashes.text("sha256", max_len=64) or "").lower()
    if not _SHA256.fullmatch(sha):
        raise hashes.fail("sha256", "is missing or not 64 hexadecimal digits")
    name = g.text("name", max_len=255) or _name_of(url or path or "")
    if path and not os.path.isabs(path) and local_path(path) is not None:  # relative to the lock file's folder
        path = os.path.normpath(os.path.join(base, path))
    return LockedFile(name=name, sha256=sha, url=url, path=path, size=g.integer("size", hi=1 << 42))


def _package(g: Fields, base: Path) -> LockedPackage:
    name = canonical(g.required_text("name", max_len=200))
    tool = g.mapping("tool", max_items=64)
    ours = tool.mapping(TOOL, max_items=64) if tool is not None else None
    origin = (ours.text("origin", max_len=32) if ours is not None else None) or "index"
    directory = g.mapping("directory", max_items=16)
    if directory is not None:
        return LockedPackage(name, g.text("version", max_len=200) or "", origin="directory",
                             directory=directory.required_text("path"), editable=directory.flag("editable"))
    version = g.required_text("version", max_len=200)
    files = [_file(w, base) for w in g.each("wheels", max_items=1000)]
    for key in ("sdist", "archive"):
        one = g.mapping(key, max_items=16)
        if one is not None:
            files.append(_file(one, base))
    if not files:
        raise g.fail("wheels", "is missing: the package names no file (a vcs checkout cannot be pinned by hash)")
    folder = ours.text("folder") if ours is not None else None
    return LockedPackage(name, version, tuple(files), index=g.text("index"), origin=origin, folder=folder)


def _read_machine(t: Fields) -> Machine | None:
    m = t.mapping("machine", max_items=64)
    if m is None:
        return None
    gpus = tuple(GpuFact(vendor=g.text("vendor", max_len=64) or "", name=g.text("name") or "",
                         driver=g.text("driver", numbers=True, max_len=64),
                         compute_capability=g.text("compute-capability", numbers=True, max_len=16),
                         gfx_target=g.text("gfx-target", max_len=64)) for g in m.each("gpus", max_items=64))
    return Machine(hostname=m.text("hostname"), os=m.text("os", max_len=32), os_version=m.text("os-version"),
                   arch=m.text("arch", max_len=32), glibc=m.text("glibc", numbers=True, max_len=32),
                   cuda_driver_max=m.text("cuda-driver-max", numbers=True, max_len=16), gpus=gpus)


def _read_verified(t: Fields) -> Verified | None:
    v = t.mapping("verified", max_items=64)
    if v is None:
        return None
    return Verified(ok=v.flag("ok"), when=v.text("when", max_len=64) or "", torch=v.text("torch", max_len=200),
                    accelerator=v.text("accelerator", max_len=16), passed=v.integer("passed", hi=100000) or 0,
                    skipped=v.integer("skipped", hi=100000) or 0, devices=tuple(v.texts("devices", max_items=64)))


def _read_not_locked(t: Fields) -> tuple[NotLocked, ...]:
    return tuple(NotLocked(n.required_text("name", max_len=200), n.text("version", max_len=200) or "",
                           n.text("why", max_len=1000) or "") for n in t.each("not-locked", max_items=MAX_PACKAGES))
