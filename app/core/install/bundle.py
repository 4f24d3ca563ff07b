"""Offline wheel bundles: build on a connected machine, install on an air-gapped one.

A bundle is a folder::

    manifest.json      what it is for (target Python / ABI / platform tags), every file with
                       its size and SHA-256, the packages asked for, the recommendation,
                       when and with which assistant version it was built
    requirements.txt   every wheel pinned with its hash (``name==version --hash=sha256:…``),
                       so the installer enforces the hashes (``--require-hashes``)
    wheels/            the wheels

:func:`check_bundle` proves, before anything is installed, that the bundle fits this machine
(its wheels' tags against this machine's tags) and that every file is intact (the error names
the wheel). The install then runs with no index at all (``--no-index --find-links``).

A bundle is closed: :func:`check_bundle` refuses (BadInput, exit 2) a manifest that is not
well-formed (:mod:`app.core.base.schema`: types, sizes, depth), any path that leaves the folder
(a file name with a folder in it, ``..``, an absolute path, a symbolic link pointing out,
``wheels_dir`` / ``requirements_file`` elsewhere), a manifest entry whose package, version or
tags contradict its wheel's FILE NAME (the tags that decide the fit are read from the name),
a file the manifest does not list, and a requirements file that holds anything but
``name==version --hash=sha256:...`` lines matching the manifest (so no ``pkg @ https://...``
line can reach the network, and a wheel swapped with its manifest entry edited to match is
still caught). ``bundle --check`` and ``install --from-bundle`` run this same function, so
they always agree.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app import __version__
from app.core import remedies
from app.core.base import paths
from app.core.base.deletion import delete_entry, delete_tree, is_link
from app.core.base.enums import Phase, PhaseState
from app.core.base.errors import BadInput, Cancelled, UserError
from app.core.base.events import Event, LogEvent, PhaseEvent, ProgressEvent, WarningEvent, ignore
from app.core.base.locations import local_path
from app.core.base.progress import ProgressParser
from app.core.base.schema import MESSAGES, Fields, document, must_be, not_one_of, parse_json, read_text
from app.core.base.secrets import mask
from app.core.base.serial import dumps
from app.core.base.text import Text, msg, render
from app.core.base.wheels import parse_wheel
from app.core.env.backends import env_python, find_python, uv_bin
from app.core.net.client import Client
from app.core.net.indexes import probe_index
from app.core.proc import runner
from app.core.sources import closure, scan, torch_origin, variant_of_index
from app.core.sources.routing import Route, verify
from app.core.sources.settings import SourceSettings
from app.core.sources.wheelhouse import fill, forget_downloads

if TYPE_CHECKING:  # start-up: the recommendation engine is imported only where a manifest carries one
    from app.core.recommend import Recommendation

__all__ = ["BUNDLE_DIR_NAME", "BundleFile", "Manifest", "build_bundle", "check_bundle", "expand_platform",
           "find_bundle", "load_manifest", "sha256_of", "supported_tags", "this_platform", "write_bundle"]

FORMAT = "torch-setup-bundle"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
REQUIREMENTS = "requirements.txt"
WHEELS = "wheels"
WHAT = document("manifest")
MAX_FILES = 10_000
MAX_WHEEL_BYTES = 1 << 40
_NO_SOURCES = SourceSettings()
_SHA256_RE = re.compile(r"[0-9a-f]{64}")
_PYTHON_RE = re.compile(r"3\.\d{1,2}")
_WORD_RE = re.compile(r"[A-Za-z0-9_.]{1,100}")  # an implementation, ABI or platform tag
_REQ_LINE_RE = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]{0,200})==([A-Za-z0-9.+!_-]{1,200})[ \t]{1,8}"
                          r"--hash=sha256:([0-9a-f]{64})")


@dataclass(frozen=True)
class BundleFile:
    name: str  # file name under wheels/
    size: int
    sha256: str
    package: str  # canonical project name
    version: str
    tags: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "size": self.size, "sha256": self.sha256, "package": self.package,
                "version": self.version, "tags": list(self.tags)}

    @classmethod
    def from_dict(cls, d: object, *, path: str = "files[]", what: Text = WHAT) -> BundleFile:
        f = Fields(d, path, what=what)
        name = _file_name(f, "name")
        if not name.endswith(".whl") or parse_wheel(name) is None:
            raise f.fail("name", f"{name!r} is not the file name of a wheel")
        size = f.integer("size", hi=MAX_WHEEL_BYTES)
        if size is None:
            raise f.fail("size", MESSAGES.msg("missing"))
        sha = f.required_text("sha256", max_len=64)
        if not _SHA256_RE.fullmatch(sha):
            raise f.fail("sha256", f"is {sha!r}; it must be 64 lower-case hexadecimal digits")
        return cls(name=name, size=size, sha256=sha, package=f.required_text("package", max_len=200),
                   version=f.required_text("version", max_len=200),
                   tags=tuple(f.texts("tags", max_items=1000, max_len=300)))


def _file_name(f: Fields, key: str, default: str | None = None) -> str:
    """A plain file name inside the bundle: no folder, no ``..``, no drive, at most 255 bytes."""
    value = f.text(key, null=False, max_len=1024)
    if value is None:
        if default is None:
            raise f.fail(key, MESSAGES.msg("missing"))
        return default
    if (not value or value in (".", "..") or "/" in value or "\\" in value or ":" in value or "\x00" in value
            or len(os.fsencode(value)) > 255):
        raise f.fail(key, f"is {value[:80]!r}; it must be a plain file name inside the bundle folder",
                     hint="Rebuild the bundle with torch-setup bundle; do not edit its files.")
    return value


def _folder_name(f: Fields, key: str, default: str) -> str:
    """A relative folder inside the bundle (``wheels``): plain names, no ``..``, not absolute."""
    value = f.text(key, null=False, max_len=1024)
    if value is None:
        return default
    parts = value.replace("\\", "/").split("/")
    if not value or any(p in ("", ".", "..") or ":" in p or "\x00" in p or len(os.fsencode(p)) > 255
                        for p in parts):
        raise f.fail(key, f"is {value[:80]!r}; it must be a folder inside the bundle (such as \"wheels\")",
                     hint="Rebuild the bundle with torch-setup bundle; do not edit its files.")
    return value


@dataclass(frozen=True)
class Manifest:
    python_version: str  # "3.11"
    implementation: str  # "cp"
    abi: str  # "cp311"
    platforms: tuple[str, ...]  # the platform tags the bundle was built for
    packages: tuple[str, ...]  # what was asked for
    files: tuple[BundleFile, ...]
    created: str  # ISO 8601 UTC
    assistant_version: str
    recommendation: Recommendation | None = None  # what the bundle was built for (None: --packages)
    torch_index: str | None = None  # where the torch wheels came from (older manifests: "index_url")
    find_links: tuple[str, ...] = ()
    from_folders: bool = False  # every wheel came from the find_links folders; no index was asked
    requirements_file: str = REQUIREMENTS
    wheels_dir: str = WHEELS
    format: str = FORMAT
    format_version: int = FORMAT_VERSION

    def __post_init__(self) -> None:
        for name in ("platforms", "packages", "files", "find_links"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            d[f.name] = list(v) if isinstance(v, tuple) else v
        d["files"] = [f.to_dict() for f in self.files]
        d["recommendation"] = self.recommendation.to_dict() if self.recommendation is not None else None
        return d

    @classmethod
    def from_dict(cls, d: object, *, what: Text = WHAT) -> Manifest:
        """A manifest from plain data; BadInput names the first bad field (see the module doc)."""
        f = Fields(d, "", what=what)
        fmt = f.text("format")
        if fmt != FORMAT:
            raise f.fail("format", not_one_of(f.get("format"), (FORMAT,)), hint="this is not a bundle manifest")
        version = f.integer("format_version", hi=1 << 31)
        if version is not None and version > FORMAT_VERSION:
            raise f.fail("format_version", f"is {version}, newer than this assistant understands ({FORMAT_VERSION})",
                         hint="Use a newer torch-setup, or rebuild the bundle with this one.")
        python = f.get("python_version")
        if not isinstance(python, str):
            raise f.fail("python_version", must_be("text", python), hint='a Python version such as "3.11"')
        if not _PYTHON_RE.fullmatch(python):
            raise f.fail("python_version", f"is {python[:40]!r}, not a Python version such as \"3.11\"")
        files = tuple(BundleFile.from_dict(g.data, path=g.path, what=what)
                      for g in f.each("files", max_items=MAX_FILES))
        if "files" not in f.data:
            raise f.fail("files", MESSAGES.msg("missing"))
        return cls(
            python_version=python, implementation=_word(f, "implementation"), abi=_word(f, "abi"),
            platforms=tuple(_words(f, "platforms")), packages=tuple(f.texts("packages", max_items=MAX_FILES)),
            files=files, created=f.text("created") or "", assistant_version=f.text("assistant_version") or "",
            recommendation=_recommendation(f), torch_index=f.text("torch_index") or f.text("index_url"),
            find_links=tuple(f.texts("find_links", max_items=256)), from_folders=f.get("from_folders") is True,
            requirements_file=_file_name(f, "requirements_file", REQUIREMENTS),
            wheels_dir=_folder_name(f, "wheels_dir", WHEELS), format=FORMAT, format_version=version or FORMAT_VERSION)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


def _word(f: Fields, key: str) -> str:
    value = f.required_text(key, max_len=100)
    if not _WORD_RE.fullmatch(value):
        raise f.fail(key, f"is {value[:40]!r}; it must be a tag such as cp311")
    return value


def _words(f: Fields, key: str) -> list[str]:
    out = f.texts(key, max_items=256, max_len=100)
    for i, value in enumerate(out):
        if not _WORD_RE.fullmatch(value):
            raise f.fail(f"{key}[{i}]", f"is {value[:40]!r}; it must be a platform tag such as manylinux_2_28_x86_64")
    return out


def _recommendation(f: Fields) -> Recommendation | None:
    """The recommendation the bundle was built for (the engine's own reader checks its fields)."""
    rec = f.mapping("recommendation", max_items=256)
    if rec is None or not rec.data:
        return None
    from app.core.recommend import Recommendation  # start-up: only a manifest that carries one needs it

    try:
        return Recommendation.from_dict(dict(rec.data))
    except UserError as err:
        problem = render(err.message)
    except Exception as exc:  # an untrusted embedded object in another area's reader: never a traceback
        problem = f"{type(exc).__name__}: {exc}"
    raise f.fail("recommendation", f"is not a recommendation this assistant can read ({problem[:200]})",
                 hint="Rebuild the bundle with torch-setup bundle.")


_HASHES: dict[tuple[str, int, int, int], str] = {}


def sha256_of(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    """SHA-256 of a file; remembered per (path, size, mtime, inode) within this process,
    so the wizard's repeated pre-flights do not re-read a 200 MB wheel."""
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns, st.st_ino)
    if key in _HASHES:
        return _HASHES[key]
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while True:
            b = fh.read(chunk)
            if not b:
                break
            h.update(b)
    _HASHES[key] = h.hexdigest()
    return _HASHES[key]


# --------------------------------------------------------------------------- tags

def this_platform() -> str:
    """The most specific platform tag of this machine (e.g. ``manylinux_2_36_x86_64``)."""
    from packaging.tags import platform_tags  # start-up: packaging.tags costs ~10 ms

    tags = list(platform_tags())
    for t in tags:  # packaging lists the generic linux_x86_64 first; wheels carry manylinux
        if t.startswith(("manylinux", "musllinux", "macosx", "win")):
            return t
    return tags[0]


def expand_platform(tag: str) -> list[str]:
    """A platform tag and the older tags a machine with it also runs.

    ``manylinux_2_28_x86_64`` -> 2_28 … 2_17 plus ``manylinux2014_x86_64`` (pip's
    ``--platform`` matches tags literally, so we list them all).
    """
    m = re.match(r"^manylinux_(\d+)_(\d+)_(\w+)$", tag)
    if m:
        major, minor, arch = int(m.group(1)), int(m.group(2)), m.group(3)
        out = [f"manylinux_{major}_{v}_{arch}" for v in range(minor, 16, -1)]
        legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
        for v, name in legacy.items():
            if v <= minor:
                out.append(f"{name}_{arch}")
        return out
    m = re.match(r"^macosx_(\d+)_(\d+)_(\w+)$", tag)
    if m:
        major, arch = int(m.group(1)), m.group(3)
        out = [tag]
        for mj in range(major - 1, 10, -1):
            out.append(f"macosx_{mj}_0_{arch}")
        return out
    return [tag]


def supported_tags(python_version: str | None = None) -> set[str]:
    """Tags an interpreter of ``python_version`` on THIS machine accepts."""
    from packaging import tags  # start-up: packaging.tags costs ~10 ms

    if python_version is None or python_version == f"{sys.version_info[0]}.{sys.version_info[1]}":
        return {str(t) for t in tags.sys_tags()}
    major, minor = (int(x) for x in python_version.split(".")[:2])
    plats = list(tags.platform_tags())
    out = {str(t) for t in tags.cpython_tags((major, minor), platforms=plats)}
    out |= {str(t) for t in tags.compatible_tags((major, minor), platforms=plats)}
    return out


# --------------------------------------------------------------------------- build

def _pip_python(cancel: runner.CancelToken | None = None,
                log_path: Path | None = None) -> tuple[str, Path | None]:
    """A Python with pip to run ``pip download``: ours, else a throw-away uv venv."""
    if not getattr(sys, "frozen", False):
        import importlib.util  # start-up: only the bundle builder asks

        if importlib.util.find_spec("pip") is not None:
            return sys.executable, None
    info, _ = find_python(None)
    if info is not None and info.executable:
        res = runner.run([info.executable, "-I", "-m", "pip", "--version"], timeout=60)
        if res.ok:
            return info.executable, None
    uv = uv_bin()
    if not uv:
        raise UserError("No pip is available to download wheels.",
                        hint="Install Python with pip, or the uv package.")
    tmp = Path(tempfile.mkdtemp(prefix="torch-setup-pip-"))
    res = runner.run([uv, "venv", str(tmp / "env"), "--seed", "--quiet"], cancel=cancel,
                     log_path=log_path, timeout=300)
    if not res.ok:
        shutil.rmtree(tmp, ignore_errors=True)
        res.raise_for_status("Could not prepare pip to download wheels")
    return str(env_python(tmp / "env")), tmp


@dataclass(frozen=True)
class _Target:
    """What a bundle is built for."""

    python_version: str
    implementation: str
    platform: str

    @property
    def abi(self) -> str:
        return f"{self.implementation}{self.python_version.replace('.', '')}"

    @property
    def platforms(self) -> list[str]:
        return expand_platform(self.platform)


def _refuse_bad_request(out: Path, packages: Sequence[str], python_version: str) -> None:
    if not packages:
        raise BadInput("No packages to put in the bundle.", hint="Pass --packages torch ...")
    parts = python_version.split(".") if python_version else []
    if len(parts) != 2 or not all(x.isdigit() for x in parts):
        raise BadInput(f"{python_version!r} is not a Python version like 3.11.",
                       hint="Pass --python 3.X (the Python of the target machine).")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BadInput(f"{out} already exists and is not an empty folder.",
                       hint="Choose a new folder for the bundle.")


@dataclass(frozen=True)
class _Sources:
    """Where a bundle's wheels come from: the folders alone, or the indexes (and a verified route)."""

    local_only: bool
    route: Route | None = None
    index_urls: tuple[str, ...] = ()
    refusal: BadInput | None = None  # why no index can serve, when the folders are tried alone instead


def _sources(packages: Sequence[str], index_url: str | None, extra_index_urls: Sequence[str], target: _Target,
             settings: SourceSettings) -> _Sources:
    """The folders alone when they hold everything; else the indexes (their route verified and each
    reached); and when no index can serve, the folders alone again if there are any (the download
    then says whether they hold everything, as the install's binding to the folders does)."""
    if _all_in_folders(packages, settings.find_links, target):
        return _Sources(True)
    try:
        route = _route(packages, index_url, target, settings) if index_url else None
        chosen = route.chosen if route is not None else None
        torch_index = torch_origin(index_url) if index_url else None
        if chosen is not None and route is not None:
            torch_index = chosen.source.url_for(variant_of_index(route.index_url))
        index_urls = tuple(u for u in (torch_index, *extra_index_urls) if u)
        _refuse_unreachable([u for u in index_urls if chosen is None or u != torch_index], settings.proxy,
                            settings.ca_bundle)
    except BadInput as refusal:
        if not scan(_folders_of(settings.find_links)):
            raise
        return _Sources(True, refusal=refusal)
    return _Sources(False, route, index_urls)


def _folders_lack(refusal: BadInput, err: UserError, find_links: Sequence[str | os.PathLike[str]]) -> BadInput:
    """The refusal for indexes that cannot serve and folders that do not hold everything."""
    return BadInput(msg("bundle.folders_lack", "{refusal} Your wheel folder(s) {folders} do not hold everything "
                        "either.", refusal=refusal.message, folders=", ".join(_folders_of(find_links))),
                    hint=refusal.hint, lines=err.lines, log_path=err.log_path)


def _refuse_unreachable(urls: Sequence[str], proxy: str | None = None, ca_bundle: str | None = None) -> None:
    for url in urls:
        err, _warn = probe_index(url, proxy=proxy, ca_bundle=ca_bundle)
        if err:
            raise BadInput(f"The index {mask(url)} cannot be reached: {err}. Nothing was downloaded.",
                           hint="Check the network or proxy (HTTPS_PROXY), or use a reachable "
                                "mirror with --index-url; a wheel folder (--find-links) that holds everything "
                                "needs no index at all.")


def _folders_of(find_links: Sequence[str | os.PathLike[str]]) -> list[str]:
    return [f for f in map(local_path, find_links) if f is not None]


def _all_in_folders(packages: Sequence[str], find_links: Sequence[str | os.PathLike[str]], target: _Target) -> bool:
    """The wheel folders hold ``packages`` and everything they need on the target (this machine's
    platform only: the tags of another platform are not this machine's)."""
    if target.platform != this_platform() or not find_links:
        return False
    wheels = scan(_folders_of(find_links))
    return bool(wheels) and closure(packages, wheels, target.python_version).complete


def _route(packages: Sequence[str], index_url: str, target: _Target, settings: SourceSettings) -> Route | None:
    """The verified sources of the pinned torch wheels (this machine's platform, a PyTorch index)."""
    from app.core.base.requirements import requirement_name  # start-up: only a routed bundle needs it

    pins = [p for p in packages if requirement_name(p) in ("torch", "torchvision", "torchaudio") and "==" in p]
    if not pins or target.platform != this_platform() or not (settings.torch_index or variant_of_index(index_url)):
        return None
    pins.sort(key=lambda x: requirement_name(x) != "torch")
    route = verify(settings, index_url, pins, target.python_version)
    if route.chosen is None:
        why = "; ".join(f"{render(v.source.label())}: {render(v.reason)}" for v in route.verdicts)
        fix = next((render(v.failure.fix) for v in route.verdicts if v.failure is not None and v.failure.fix), "")
        raise BadInput(f"No source has {', '.join(pins)} for Python {target.python_version} on {target.platform}: "
                       f"{why}. Nothing was downloaded.",
                       hint=fix or "Check the network or proxy (HTTPS_PROXY), name a mirror (--mirrors), or use a "
                                   "wheel folder (--find-links) that holds the wheels.")
    return route


def _download_argv(py: str, dest: Path, target: _Target, packages: Sequence[str], index_urls: Sequence[str],
                   find_links: Sequence[str | os.PathLike[str]], *, no_index: bool = False) -> list[str]:
    argv = [py, "-m", "pip", "download", "--disable-pip-version-check", "--no-input",
            "--only-binary=:all:", "--dest", str(dest), "--python-version", target.python_version,
            "--implementation", target.implementation, "--abi", target.abi, "--abi", "abi3", "--abi", "none"]
    for plat in target.platforms:
        argv += ["--platform", plat]
    if no_index:
        argv.append("--no-index")
    for u in index_urls:
        argv += ["--extra-index-url", u]
    for fl in find_links:
        argv += ["--find-links", str(fl)]
    return [*argv, *packages]


def _download(argv: list[str], target: _Target, emit: Callable[[Event], None], cancel: runner.CancelToken,
              log_path: Path, env: dict[str, str] | None = None) -> None:
    parser = ProgressParser("pip", emit)

    def on_line(stream: str, line: str) -> None:
        emit(LogEvent(line, stream))
        parser.feed(line)

    res = runner.run(argv, cancel=cancel, log_path=log_path, on_line=on_line,
                     env=env or runner.clean_env({"PIP_NO_INPUT": "1"}))
    parser.close()
    if res.cancelled:
        raise Cancelled("Cancelled; the partial bundle was removed.", log_path=log_path)
    if not res.ok:
        found = remedies.diagnose(res.tail)
        raise UserError(msg("bundle.download_failed", "Downloading wheels for Python {python} on {platform} failed "
                            "({outcome})", python=target.python_version, platform=target.platform,
                            outcome=remedies.run_outcome(res.returncode, timed_out=res.timed_out,
                                                         duration_s=res.duration_s, start_error=res.start_error)),
                        hint="" if found else msg("bundle.download_hint", "Every package needs a wheel for that "
                                                  "Python and platform (no source builds in a bundle). Check the "
                                                  "versions, the platform tag and the index."),
                        lines=remedies.failure_lines(res.tail), log_path=log_path, remedies=found)


def _hash_wheels(wheels: Path, emit: Callable[[Event], None], cancel: runner.CancelToken,
                 log_path: Path) -> tuple[BundleFile, ...]:
    from packaging.utils import parse_wheel_filename  # start-up: only the bundle builder needs it

    non_wheels = [p.name for p in wheels.iterdir() if not p.name.endswith(".whl")]
    if non_wheels:
        raise UserError(f"pip downloaded files that are not wheels: {', '.join(non_wheels)}", log_path=log_path)
    files: list[BundleFile] = []
    for whl in sorted(wheels.glob("*.whl")):
        cancel.raise_if_cancelled()
        name, version, _build, tagset = parse_wheel_filename(whl.name)
        size = whl.stat().st_size
        files.append(BundleFile(whl.name, size, sha256_of(whl), str(name), str(version),
                                tuple(sorted(str(t) for t in tagset))))
        emit(ProgressEvent(str(name), size, size))
    return tuple(files)


def write_bundle(out: Path, manifest: Manifest) -> None:
    """Write the manifest and the hashed requirements of the wheels already in ``out/wheels``
    (a bundle made another way: from a lock, :mod:`app.core.lab.lockbundle`)."""
    _write(out, manifest)


def _write(out: Path, manifest: Manifest) -> None:
    req_lines = [f"{f.package}=={f.version} --hash=sha256:{f.sha256}" for f in manifest.files]
    (out / REQUIREMENTS).write_text("# Generated by torch-setup bundle; every wheel pinned with its SHA-256.\n"
                                    + "\n".join(req_lines) + "\n", encoding="utf-8")
    tmp = out / (MANIFEST + ".tmp")
    tmp.write_text(dumps(manifest.to_dict()), encoding="utf-8")  # credentials in torch_index masked
    os.replace(tmp, out / MANIFEST)


def _clear(out: Path, created: bool) -> None:
    """Remove what a failed build left: the folder (if we made it) or what we put in it (a
    link as itself; read-only and, on Windows, briefly busy files too: :mod:`app.core.base.deletion`)."""
    if created:
        delete_tree(out)
        return
    problems: list[str] = []
    for child in list(out.iterdir()):
        if child.is_dir() and not is_link(child):
            delete_tree(child)
        else:
            delete_entry(child, is_dir=False, problems=problems, within=str(out))


def _pip_env(proxy: str | None, ca_bundle: str | None) -> dict[str, str]:
    extra = {"PIP_NO_INPUT": "1"}
    if proxy:
        extra.update({"HTTPS_PROXY": proxy, "HTTP_PROXY": proxy, "https_proxy": proxy, "http_proxy": proxy})
    if ca_bundle and ca_bundle != "system":
        extra["PIP_CERT"] = ca_bundle
    return runner.clean_env(extra)


# long: the build from request to manifest, with the three ways to the wheels (folders, route, index)
def build_bundle(out: str | os.PathLike[str], *, packages: Sequence[str], python_version: str,
                 platform: str | None = None, implementation: str = "cp",
                 sources: SourceSettings = _NO_SOURCES, index_url: str | None = None,
                 recommendation: Recommendation | None = None, on_event: Callable[[Event], None] | None = None,
                 cancel: runner.CancelToken | None = None) -> Manifest:
    """Download every wheel ``packages`` need on the target and write the manifest.

    ``platform``: the target's platform tag (default: this machine's). The folder ``out``
    must be new or empty; if anything fails, what was created is removed. The wheels come
    from the ``find_links`` folders alone when they hold everything (no index is asked, so an
    unreachable one does not matter); else the pinned torch wheels of a PyTorch index come
    through the verified routing of :mod:`app.core.sources` (the ``sources``' mirrors, proxy and
    CA). The torch wheels' index is the user's (``sources.torch_index``), else ``index_url`` (the
    recommendation's).
    """
    find_links = sources.find_links
    proxy, ca_bundle = sources.proxy, sources.ca_bundle
    index_url = sources.torch_index or index_url
    emit = on_event or ignore
    cancel = cancel or runner.CancelToken()
    out = Path(out).absolute()
    _refuse_bad_request(out, packages, python_version)
    target = _Target(python_version, implementation, platform or this_platform())
    src = _sources(packages, index_url, sources.extra_index_urls, target, sources)
    route, index_urls, local_only = src.route, src.index_urls, src.local_only
    if src.refusal is not None:  # no index can serve: the folders alone, as the install does
        emit(WarningEvent(msg("bundle.from_folders", "The indexes cannot be used ({why}); the bundle is built "
                              "from your wheel folder(s) alone: {folders}.", why=src.refusal.message,
                              folders=", ".join(_folders_of(find_links)))))
    log_path = paths.new_log_path("bundle")
    created = not out.exists()
    wheels = out / WHEELS
    tmp_pip: Path | None = None
    try:
        wheels.mkdir(parents=True, exist_ok=True)
        emit(PhaseEvent(Phase.DOWNLOAD, PhaseState.START,
                        f"{' '.join(packages)} for {target.abi} {target.platform}"))
        links: list[str | Path] = list(find_links)
        if route is not None:  # the torch wheels through our own verified downloads, straight into wheels/
            house = fill(wheels, route, Client(proxy, ca_bundle), emit, cancel, locked=None,
                         local_folders=[str(f) for f in links])
            forget_downloads(house.served)
            links.append(wheels)
        py, tmp_pip = _pip_python(cancel, log_path)
        try:
            _download(_download_argv(py, wheels, target, packages, index_urls, links, no_index=local_only), target,
                      emit, cancel, log_path, _pip_env(proxy, ca_bundle))
        except UserError as err:
            if src.refusal is None or isinstance(err, Cancelled):
                raise
            raise _folders_lack(src.refusal, err, find_links) from None
        emit(PhaseEvent(Phase.DOWNLOAD, PhaseState.END))
        emit(PhaseEvent(Phase.HASH, PhaseState.START))
        manifest = Manifest(
            python_version=python_version, implementation=implementation, abi=target.abi,
            platforms=tuple(target.platforms), packages=tuple(packages),
            files=_hash_wheels(wheels, emit, cancel, log_path),
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), assistant_version=__version__,
            recommendation=recommendation, torch_index=None if local_only else index_url,
            find_links=tuple(str(f) for f in find_links), from_folders=local_only,
        )
        _write(out, manifest)
        emit(PhaseEvent(Phase.HASH, PhaseState.END))
        return manifest
    except BaseException:
        _clear(out, created)
        raise
    finally:
        if tmp_pip is not None:
            shutil.rmtree(tmp_pip, ignore_errors=True)


# --------------------------------------------------------------------------- check

def load_manifest(folder: str | os.PathLike[str]) -> Manifest:
    """The manifest of the bundle in ``folder``, read bounded and checked field by field."""
    folder = Path(folder)
    mpath = folder / MANIFEST
    try:
        is_dir, is_file = folder.is_dir(), mpath.is_file()
    except (OSError, ValueError) as exc:
        raise BadInput(f"The bundle folder {folder} cannot be used: {getattr(exc, 'strerror', None) or exc}.") from None
    if not is_dir:
        raise BadInput(msg("bundle.folder_missing", "The bundle folder {path} does not exist.", path=str(folder)),
                       hint=msg("bundle.folder_missing_hint", "Give the folder that holds manifest.json."))
    if not is_file:
        raise BadInput(msg("bundle.not_a_bundle", "{path} is not a bundle: it has no {manifest}.", path=str(folder),
                           manifest=MANIFEST),
                       hint=msg("bundle.not_a_bundle_hint", "Build one with: torch-setup bundle --out DIR ..."))
    _inside(_root(folder), mpath, MANIFEST)
    what = document("manifest", mpath)
    try:
        return Manifest.from_dict(parse_json(read_text(mpath, what="bundle manifest"), what=what), what=what)
    except BadInput as err:
        raise BadInput(err.message, hint=err.hint or msg("bundle.rebuild_hint", "Rebuild the bundle with torch-setup "
                                                         "bundle.")) from None


def _root(folder: Path) -> Path:
    try:
        return folder.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise BadInput(f"The bundle folder {folder} cannot be used: {getattr(exc, 'strerror', None) or exc}.") from None


def _inside(root: Path, path: Path, field: str) -> Path:
    """``path`` resolved (symbolic links followed), refused unless it lies inside ``root``."""
    try:
        real = path.resolve(strict=True)
    except FileNotFoundError:
        raise BadInput(f"The bundle is incomplete: its {field} {path.name} is missing.",
                       hint="Copy the whole bundle folder again.") from None
    except (OSError, RuntimeError) as exc:
        raise BadInput(f"The bundle's {field} {path.name} cannot be used: {getattr(exc, 'strerror', None) or exc}.",
                       hint="Copy the whole bundle folder again.") from None
    if real != root and root not in real.parents:
        raise BadInput(f"The bundle is not closed: its {field} {path.name} points outside the bundle folder "
                       f"(to {real}). Nothing was installed.",
                       hint="A bundle holds its own files; rebuild it with torch-setup bundle.")
    return real


def _check_names(m: Manifest) -> None:
    """Each entry once, and its package, version and tags as its wheel's file name says."""
    from packaging.utils import canonicalize_name  # start-up: only a bundle check needs it
    from packaging.version import InvalidVersion, Version

    seen: set[str] = set()
    for f in m.files:
        if f.name in seen:
            raise BadInput(f"The bundle manifest lists {f.name} twice.", hint="Rebuild the bundle.")
        seen.add(f.name)
        wf = parse_wheel(f.name)
        assert wf is not None  # Manifest.from_dict refused other names
        try:
            same_version = Version(f.version) == Version(wf.version)
        except InvalidVersion:
            same_version = False
        if canonicalize_name(f.package) != wf.name or not same_version:
            raise BadInput(f"The bundle manifest says {f.name} is {f.package} {f.version}, but its file name "
                           f"says {wf.name} {wf.version}. Nothing was installed.",
                           hint="Rebuild the bundle; do not edit its files.")
        if set(f.tags) != set(wf.tags):
            raise BadInput(f"The bundle manifest gives {f.name} the tags {', '.join(sorted(f.tags)) or 'none'}, "
                           f"which contradict its file name ({', '.join(wf.tags)}). Nothing was installed.",
                           hint="Rebuild the bundle; do not edit its files.")


def _check_tags(m: Manifest, py: str) -> None:
    ok_tags = supported_tags(py)
    for f in m.files:
        wf = parse_wheel(f.name)
        tags = set(wf.tags) if wf is not None else set()  # the file name decides, not the manifest
        if not tags & ok_tags:
            raise BadInput(
                msg("bundle.wrong_platform", "The bundle does not fit this machine: {wheel} is built for {built}, and "
                    "this machine (Python {python}) accepts {platform}.", wheel=f.name,
                    built=", ".join(sorted({t.split('-')[-1] for t in tags})), python=py, platform=this_platform()),
                hint=msg("bundle.wrong_platform_hint", "Build the bundle with --platform set to this machine's tag "
                         "({platform}) and --python {python}.", platform=this_platform(), python=py))


def _check_files(m: Manifest, wheels: Path, root: Path) -> None:
    for f in m.files:
        path = wheels / f.name
        try:
            exists = os.path.lexists(path)
        except (OSError, ValueError):
            exists = False
        if not exists:
            raise BadInput(msg("bundle.incomplete", "The bundle is incomplete: {wheel} is missing.", wheel=f.name),
                           hint=msg("bundle.copy_again", "Copy the whole bundle folder again."))
        real = _inside(root, path, "wheel")
        if not real.is_file():
            raise BadInput(f"The bundle is damaged: {f.name} is not a file.",
                           hint="Copy the whole bundle folder again.")
        size = real.stat().st_size
        if size != f.size:
            raise BadInput(msg("bundle.wrong_size", "The bundle is damaged: {wheel} has {size} bytes, the manifest "
                               "says {expected}. Nothing was installed.", wheel=f.name, size=size, expected=f.size),
                           hint=msg("bundle.copy_file_again", "Copy that file (or the whole bundle) again."))


def _check_unlisted(m: Manifest, wheels: Path) -> None:
    listed = {f.name for f in m.files}
    try:
        present = sorted(e.name for e in os.scandir(wheels))
    except OSError as exc:
        raise BadInput(f"The bundle's wheel folder cannot be read: {exc.strerror or exc}.") from None
    extra = [name for name in present if name not in listed]
    if extra:
        shown = ", ".join(extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
        raise BadInput(f"The bundle holds files its manifest does not list: {shown}. Nothing was installed.",
                       hint="Remove them, or rebuild the bundle; an installer could pick up an unlisted wheel.")


def _check_hashes(m: Manifest, wheels: Path, emit: Callable[[Event], None]) -> None:
    for f in m.files:
        got = sha256_of(wheels / f.name)
        if got != f.sha256:
            raise BadInput(msg("bundle.wrong_hash", "The bundle is damaged: {wheel} does not match its SHA-256 "
                               "(expected {expected}…, found {found}…). Nothing was installed.", wheel=f.name,
                               expected=f.sha256[:16], found=got[:16]),
                           hint=msg("bundle.copy_file_again", "Copy that file (or the whole bundle) again."))
        emit(ProgressEvent(f.package, f.size, f.size))


def _check_requirements(m: Manifest, req: Path) -> None:
    """Every line ``name==version --hash=sha256:HEX``, together exactly the manifest's wheels."""
    from packaging.utils import canonicalize_name  # start-up: only a bundle check needs it
    from packaging.version import InvalidVersion, Version

    def key(name: str, version: str, sha: str) -> tuple[str, str, str]:
        try:
            return canonicalize_name(name), str(Version(version)), sha
        except InvalidVersion:
            return canonicalize_name(name), version, sha

    text = read_text(req, what=f"the bundle's {m.requirements_file}", limit=4 * 1024 * 1024)
    listed: list[tuple[str, str, str]] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        found = _REQ_LINE_RE.fullmatch(line)
        if found is None:
            raise BadInput(f"{m.requirements_file} does not list exactly the bundle's wheels and hashes: line {n} "
                           f"is not a pinned wheel with its hash (name==version --hash=sha256:...): "
                           f"{mask(line[:100])!r}. Nothing was installed.",
                           hint="A bundle installs only its own hashed wheels, with no network; "
                                "rebuild it, do not edit its files.")
        listed.append(key(*found.groups()))
    if sorted(listed) != sorted(key(f.package, f.version, f.sha256) for f in m.files):
        raise BadInput(msg("bundle.requirements_differ", "{file} does not list exactly the bundle's wheels and "
                           "hashes.", file=m.requirements_file),
                       hint=msg("bundle.rebuild_untouched", "Rebuild the bundle; do not edit its files."))


def check_bundle(folder: str | os.PathLike[str], *, python_version: str | None = None,
                 verify_hashes: bool = True, on_event: Callable[[Event], None] | None = None) -> Manifest:
    """Prove the bundle is closed, fits this machine and is intact; raise BadInput naming the file."""
    folder = Path(folder)
    m = load_manifest(folder)
    root = _root(folder)
    if python_version and python_version != m.python_version:
        raise BadInput(msg("bundle.python", "The bundle is for Python {bundle}, not {python}.",
                           bundle=m.python_version, python=python_version),
                       hint=msg("bundle.python_hint", "Use Python {version} or rebuild the bundle.",
                                version=m.python_version))
    wheels = _inside(root, folder / m.wheels_dir, "wheels_dir")
    if not wheels.is_dir():
        raise BadInput(f"The bundle's wheels_dir {m.wheels_dir} is not a folder.",
                       hint=msg("bundle.rebuild", "Rebuild the bundle."))
    req = _inside(root, folder / m.requirements_file, "requirements_file")
    _check_names(m)
    _check_tags(m, python_version or m.python_version)
    _check_files(m, wheels, root)
    _check_unlisted(m, wheels)
    if verify_hashes:
        _check_hashes(m, wheels, on_event or ignore)
    _check_requirements(m, req)
    return m


BUNDLE_DIR_NAME = "torch-bundle"


def _bundle_at(cand: Path) -> bool:
    try:
        if cand.is_dir() and (cand / MANIFEST).is_file():
            data = parse_json(read_text(cand / MANIFEST, what="bundle manifest"), what=WHAT)
            return isinstance(data, dict) and data.get("format") == FORMAT
    except (OSError, ValueError, BadInput):
        pass
    return False


def find_bundle(near: str | os.PathLike[str] | None = None) -> Path | None:
    """A bundle folder: ``near`` itself or one directly inside it (a folder the user
    pointed to); by default the ``torch-bundle/`` folder next to the assistant: beside the
    frozen app's executable (the offline edition puts it there), in a macOS app's
    ``Contents/Resources``, or in / beside the source checkout. Only that name is looked
    for by default, so an unrelated bundle lying in a neighbouring folder is never taken."""
    if near is not None:
        root = Path(near)
        try:
            kids = sorted(root.iterdir()) if root.is_dir() else []
        except OSError:
            kids = []
        return next((c for c in [root, *kids] if _bundle_at(c)), None)
    roots: list[Path] = []
    if paths.is_frozen():
        exe_dir = Path(sys.executable).resolve().parent
        roots.append(exe_dir)
        if sys.platform == "darwin":  # Foo.app/Contents/MacOS/exe -> Foo.app/Contents/Resources
            roots.append(exe_dir.parent / "Resources")
    roots += [paths.app_root(), paths.app_root().parent]
    return next((r / BUNDLE_DIR_NAME for r in roots if _bundle_at(r / BUNDLE_DIR_NAME)), None)


