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
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from app.core import runner
from app.core.errors import BadInput, Cancelled, UserError
from app.core.events import LogEvent, PhaseEvent, ProgressEvent

FORMAT = "torch-setup-bundle"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
REQUIREMENTS = "requirements.txt"
WHEELS = "wheels"


@dataclass(frozen=True)
class BundleFile:
    name: str  # file name under wheels/
    size: int
    sha256: str
    package: str  # canonical project name
    version: str
    tags: tuple[str, ...]

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["tags"] = list(self.tags)
        return d


@dataclass
class Manifest:
    python_version: str  # "3.11"
    implementation: str  # "cp"
    abi: str  # "cp311"
    platforms: list[str]  # the platform tags the bundle was built for
    packages: list[str]  # what was asked for
    files: list[BundleFile]
    created: str  # ISO 8601 UTC
    assistant_version: str
    recommendation: Any = None
    index_url: str | None = None
    find_links: list[str] = field(default_factory=list)
    requirements_file: str = REQUIREMENTS
    wheels_dir: str = WHEELS
    format: str = FORMAT
    format_version: int = FORMAT_VERSION

    def to_dict(self) -> dict:
        from app.core.serial import to_jsonable

        d = {k: to_jsonable(v) for k, v in self.__dict__.items()}
        d["files"] = [f.to_dict() for f in self.files]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Manifest":
        files = [BundleFile(name=f["name"], size=int(f["size"]), sha256=f["sha256"],
                            package=f["package"], version=f["version"],
                            tags=tuple(f.get("tags", ())))
                 for f in d["files"]]
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d and k != "files"}
        return cls(files=files, **known)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


_HASHES: dict[tuple, str] = {}


def sha256_of(path: Path, chunk: int = 1 << 20) -> str:
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
    from packaging.tags import platform_tags

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
    import re

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
    from packaging import tags

    if python_version is None or python_version == f"{sys.version_info[0]}.{sys.version_info[1]}":
        return {str(t) for t in tags.sys_tags()}
    major, minor = (int(x) for x in python_version.split(".")[:2])
    plats = list(tags.platform_tags())
    out = {str(t) for t in tags.cpython_tags((major, minor), platforms=plats)}
    out |= {str(t) for t in tags.compatible_tags((major, minor), platforms=plats)}
    return out


# --------------------------------------------------------------------------- build

def _pip_python(cancel=None, log_path=None) -> tuple[str, Path | None]:
    """A Python with pip to run ``pip download``: ours, else a throw-away uv venv."""
    if not getattr(sys, "frozen", False):
        import importlib.util

        if importlib.util.find_spec("pip") is not None:
            return sys.executable, None
    from app.core.envs import env_python, find_python, uv_bin

    info, _ = find_python(None)
    if info is not None:
        res = runner.run([info.path, "-I", "-m", "pip", "--version"], timeout=60)
        if res.ok:
            return info.path, None
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


def build_bundle(out: str | os.PathLike, *, packages: Sequence[str], python_version: str,
                 platform: str | None = None, implementation: str = "cp",
                 index_url: str | None = None, extra_index_urls: Sequence[str] = (),
                 find_links: Sequence[str | os.PathLike] = (), recommendation: Any = None,
                 on_event: Callable | None = None, cancel: runner.CancelToken | None = None
                 ) -> Manifest:
    """Download every wheel ``packages`` need on the target and write the manifest.

    ``platform``: the target's platform tag (default: this machine's). The folder ``out``
    must be new or empty; if anything fails, what was created is removed.
    """
    from packaging.utils import parse_wheel_filename

    from app import __version__
    from app.core.paths import new_log_path

    emit = on_event or (lambda e: None)
    cancel = cancel or runner.CancelToken()
    out = Path(out).absolute()
    if not packages:
        raise BadInput("No packages to put in the bundle.", hint="Pass --packages torch ...")
    if not python_version or len(python_version.split(".")) != 2 \
            or not all(x.isdigit() for x in python_version.split(".")):
        raise BadInput(f"{python_version!r} is not a Python version like 3.11.",
                       hint="Pass --python 3.X (the Python of the target machine).")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BadInput(f"{out} already exists and is not an empty folder.",
                       hint="Choose a new folder for the bundle.")
    platform = platform or this_platform()
    platforms = expand_platform(platform)
    abi = f"{implementation}{python_version.replace('.', '')}"
    log_path = new_log_path("bundle")
    created = not out.exists()
    wheels = out / WHEELS
    tmp_pip: Path | None = None
    from app.core.install import _hint_for, probe_index

    for url in [u for u in (index_url, *extra_index_urls) if u]:
        err, _warn = probe_index(url)
        if err:
            raise BadInput(f"The index {url} cannot be reached: {err}. Nothing was downloaded.",
                           hint="Check the network or proxy (HTTPS_PROXY), or use a reachable "
                                "mirror with --index-url.")
    try:
        wheels.mkdir(parents=True, exist_ok=True)
        emit(PhaseEvent("download", "start", f"{' '.join(packages)} for {abi} {platform}"))
        py, tmp_pip = _pip_python(cancel, log_path)
        argv = [py, "-m", "pip", "download", "--disable-pip-version-check", "--no-input",
                "--only-binary=:all:", "--dest", str(wheels), "--python-version", python_version,
                "--implementation", implementation, "--abi", abi, "--abi", "abi3",
                "--abi", "none"]
        for plat in platforms:
            argv += ["--platform", plat]
        if index_url:
            argv += ["--extra-index-url", index_url]
        for u in extra_index_urls:
            argv += ["--extra-index-url", u]
        for fl in find_links:
            argv += ["--find-links", str(fl)]
        argv += list(packages)
        from app.core.progress import ProgressParser

        parser = ProgressParser("pip", emit)

        def on_line(stream, line):
            emit(LogEvent(line, stream))
            parser.feed(line)

        res = runner.run(argv, cancel=cancel, log_path=log_path, on_line=on_line,
                         env=runner.clean_env({"PIP_NO_INPUT": "1"}))
        parser.close()
        if res.cancelled:
            raise Cancelled("Cancelled; the partial bundle was removed.", log_path=log_path)
        res.raise_for_status(
            f"Downloading wheels for Python {python_version} on {platform} failed",
            hint=_hint_for(res.tail,
                           "Every package needs a wheel for that Python and platform (no "
                           "source builds in a bundle). Check the versions, the --platform tag "
                           "and the index."))
        emit(PhaseEvent("download", "end"))
        emit(PhaseEvent("hash", "start"))
        files: list[BundleFile] = []
        non_wheels = [p.name for p in wheels.iterdir() if not p.name.endswith(".whl")]
        if non_wheels:
            raise UserError(f"pip downloaded files that are not wheels: {', '.join(non_wheels)}",
                            log_path=log_path)
        for i, whl in enumerate(sorted(wheels.glob("*.whl"))):
            cancel.raise_if_cancelled()
            name, version, _build, tagset = parse_wheel_filename(whl.name)
            size = whl.stat().st_size
            files.append(BundleFile(whl.name, size, sha256_of(whl), str(name), str(version),
                                    tuple(sorted(str(t) for t in tagset))))
            emit(ProgressEvent(str(name), size, size))
        req_lines = [f"{f.package}=={f.version} --hash=sha256:{f.sha256}" for f in files]
        (out / REQUIREMENTS).write_text(
            "# Generated by torch-setup bundle; every wheel pinned with its SHA-256.\n"
            + "\n".join(req_lines) + "\n", encoding="utf-8")
        from app.core.install import _rec_dict

        manifest = Manifest(
            python_version=python_version, implementation=implementation, abi=abi,
            platforms=platforms, packages=list(packages), files=files,
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            assistant_version=__version__, recommendation=_rec_dict(recommendation),
            index_url=index_url, find_links=[str(f) for f in find_links],
        )
        tmp = out / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(manifest.to_dict(), indent=2, ensure_ascii=False),
                       encoding="utf-8")
        os.replace(tmp, out / MANIFEST)
        emit(PhaseEvent("hash", "end"))
        return manifest
    except BaseException:
        if created:
            shutil.rmtree(out, ignore_errors=True)
        else:
            for child in list(out.iterdir()):
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink()
        raise
    finally:
        if tmp_pip is not None:
            shutil.rmtree(tmp_pip, ignore_errors=True)


# --------------------------------------------------------------------------- check

def load_manifest(folder: str | os.PathLike) -> Manifest:
    folder = Path(folder)
    mpath = folder / MANIFEST
    if not folder.is_dir():
        raise BadInput(f"The bundle folder {folder} does not exist.",
                       hint="Pass the folder that holds manifest.json.")
    if not mpath.is_file():
        raise BadInput(f"{folder} is not a bundle: it has no {MANIFEST}.",
                       hint="Build one with: torch-setup bundle --out DIR ...")
    try:
        data = json.loads(mpath.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"format is {data.get('format')!r}, not {FORMAT!r}")
        if int(data.get("format_version", 0)) > FORMAT_VERSION:
            raise ValueError(f"format_version {data.get('format_version')} is newer than this "
                             "assistant understands")
        return Manifest.from_dict(data)
    except (ValueError, KeyError, TypeError) as exc:
        raise BadInput(f"{mpath} is not a valid bundle manifest: {exc}",
                       hint="Rebuild the bundle with torch-setup bundle.")


def check_bundle(folder: str | os.PathLike, *, python_version: str | None = None,
                 verify_hashes: bool = True, on_event: Callable | None = None) -> Manifest:
    """Prove the bundle fits this machine and is intact; raise BadInput naming the wheel."""
    emit = on_event or (lambda e: None)
    folder = Path(folder)
    m = load_manifest(folder)
    py = python_version or m.python_version
    if python_version and python_version != m.python_version:
        raise BadInput(f"The bundle is for Python {m.python_version}, not {python_version}.",
                       hint=f"Use Python {m.python_version} or rebuild the bundle.")
    ok_tags = supported_tags(py)
    for f in m.files:
        if not set(f.tags) & ok_tags:
            raise BadInput(
                f"The bundle does not fit this machine: {f.name} is built for "
                f"{', '.join(sorted(set(t.split('-')[-1] for t in f.tags)))}, and this machine "
                f"(Python {py}) accepts {this_platform()}.",
                hint="Build the bundle with --platform set to this machine's tag "
                     f"({this_platform()}) and --python {py}.")
    wheels = folder / m.wheels_dir
    for f in m.files:
        path = wheels / f.name
        if not path.is_file():
            raise BadInput(f"The bundle is incomplete: {f.name} is missing.",
                           hint="Copy the whole bundle folder again.")
        if path.stat().st_size != f.size:
            raise BadInput(f"The bundle is damaged: {f.name} has {path.stat().st_size} bytes, "
                           f"the manifest says {f.size}. Nothing was installed.",
                           hint="Copy that file (or the whole bundle) again.")
    if verify_hashes:
        for f in m.files:
            got = sha256_of(wheels / f.name)
            if got != f.sha256:
                raise BadInput(f"The bundle is damaged: {f.name} does not match its SHA-256 "
                               f"(expected {f.sha256[:16]}…, found {got[:16]}…). Nothing was "
                               "installed.", hint="Copy that file (or the whole bundle) again.")
            emit(ProgressEvent(f.package, f.size, f.size))
    req = folder / m.requirements_file
    if not req.is_file():
        raise BadInput(f"The bundle has no {m.requirements_file}.",
                       hint="Rebuild the bundle.")
    listed = {part.split(":", 1)[1] for part in req.read_text(encoding="utf-8").split()
              if part.startswith("--hash=sha256:")}
    if listed != {f.sha256 for f in m.files}:
        raise BadInput(f"{req.name} does not list exactly the bundle's wheels and hashes.",
                       hint="Rebuild the bundle; do not edit its files.")
    return m


BUNDLE_DIR_NAME = "torch-bundle"


def _bundle_at(cand: Path) -> bool:
    try:
        if cand.is_dir() and (cand / MANIFEST).is_file():
            data = json.loads((cand / MANIFEST).read_text(encoding="utf-8"))
            return data.get("format") == FORMAT
    except (OSError, ValueError):
        pass
    return False


def find_bundle(near: str | os.PathLike | None = None) -> Path | None:
    """A bundle folder: ``near`` itself or one directly inside it (a folder the user
    pointed to); by default the ``torch-bundle/`` folder next to the assistant: beside the
    frozen app's executable (the offline edition puts it there), in a macOS app's
    ``Contents/Resources``, or in / beside the source checkout. Only that name is looked
    for by default, so an unrelated bundle lying in a neighbouring folder is never taken."""
    from app.core.paths import app_root, is_frozen

    if near is not None:
        root = Path(near)
        try:
            kids = sorted(root.iterdir()) if root.is_dir() else []
        except OSError:
            kids = []
        return next((c for c in [root, *kids] if _bundle_at(c)), None)
    roots: list[Path] = []
    if is_frozen():
        exe_dir = Path(sys.executable).resolve().parent
        roots.append(exe_dir)
        if sys.platform == "darwin":  # Foo.app/Contents/MacOS/exe -> Foo.app/Contents/Resources
            roots.append(exe_dir.parent / "Resources")
    roots += [app_root(), app_root().parent]
    return next((r / BUNDLE_DIR_NAME for r in roots if _bundle_at(r / BUNDLE_DIR_NAME)), None)


