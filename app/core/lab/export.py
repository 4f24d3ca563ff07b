"""``torch-setup export``: a verified environment as a lock, every file with its origin and sha256.

What the environment holds is read from its ``*.dist-info`` (the exact version, the wheel's tags
in ``WHEEL``, ``direct_url.json`` where the installer wrote one); where each file came from is
found the way the installer found it, in the same order: a direct URL or local file as
``direct_url.json`` names it, then the wheel folders the environment was installed from (the list
of environments records them; the file is hashed here), then the indexes (the torch index first,
then the extra ones, then the default one), whose pages list the exact file and its sha256. A
distribution no source lists, or a page without a hash, is written under ``not-locked`` with the
reason, and said; a source folder (an editable install) is written as a ``directory`` package.

The machine the environment was verified on is the one the list of environments lives on: its
detect report (GPUs, driver, OS) and the last verification the list recorded (refused when there
is none that passed for the torch the environment holds now, unless asked for anyway).
"""
from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from email.parser import HeaderParser
from pathlib import Path

from app import __version__
from app.core.base.errors import BadInput, ForFace
from app.core.base.locations import local_path
from app.core.base.text import Text, msg
from app.core.base.wheels import WheelFile, backend_of_variant, variant_of_version
from app.core.compat.data import CompatData, load_compat
from app.core.detection.system import SystemReport
from app.core.env import registry
from app.core.env.backends import env_python, probe_python
from app.core.env.distinfo import Dist, distributions
from app.core.net.client import Client, Failure, NetError
from app.core.pylock.lockfile import GpuFact, Lock, LockedFile, LockedPackage, Machine, NotLocked, Verified
from app.core.recommend.machine import wheel_platform
from app.core.sources.download import file_sha256
from app.core.sources.local import LocalWheel, scan
from app.core.sources.pages import Link, project_url, read_page
from app.core.sources.settings import SourceSettings

__all__ = ["Exported", "Origins", "arch_list_of", "build_env_vars", "export_env", "machine_of"]


@dataclass(frozen=True)
class Exported:
    """The lock, and what was said about it (packages left out, credentials removed)."""

    lock: Lock
    notes: tuple[Text, ...] = ()


@dataclass(frozen=True)
class Origins:
    """Where the environment's packages may have come from, in the installer's order."""

    folders: tuple[str, ...] = ()
    indexes: tuple[str, ...] = ()  # the torch index, the extra ones, the default one
    proxy: str | None = None
    ca_bundle: str | None = None
    bundled: str | None = None  # the interpreter's own ensurepip wheels (a new env's pip may come from there)


# ------------------------------------------------------------------ what the env holds

def wheel_tags(dist: Dist) -> frozenset[str]:
    """The tags of the wheel a distribution was installed from (its ``WHEEL`` file's ``Tag:`` lines)."""
    try:
        text = (dist.path / "WHEEL").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    return frozenset(t.strip() for t in HeaderParser().parsestr(text, headersonly=True).get_all("Tag") or ())


def _direct_url(dist: Dist) -> dict[str, object] | None:
    try:
        raw = (dist.path / "direct_url.json").read_text(encoding="utf-8", errors="replace")[:1 << 16]
        data = json.loads(raw)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _same_wheel(w: WheelFile | None, dist: Dist, tags: frozenset[str]) -> bool:
    return w is not None and w.name == dist.name and w.version == dist.version and (not tags or set(w.tags) == tags)


# ------------------------------------------------------------------ where each file came from

def _from_direct(dist: Dist, info: dict[str, object]) -> LockedPackage | NotLocked:
    url = str(info.get("url") or "")
    if isinstance(info.get("dir_info"), dict):
        where = local_path(url) or url
        dir_info = info.get("dir_info")
        editable = bool(dir_info.get("editable")) if isinstance(dir_info, dict) else False
        return LockedPackage(dist.name, dist.version, origin="directory", directory=where, editable=editable)
    if isinstance(info.get("vcs_info"), dict):
        return NotLocked(dist.name, dist.version, "installed from a version-control checkout, which cannot be "
                                                  "pinned by hash")
    archive = info.get("archive_info")
    recorded = archive.get("hashes") if isinstance(archive, dict) else None
    sha = str(recorded.get("sha256") or "") if isinstance(recorded, dict) else ""
    name = url.rstrip("/").rsplit("/", 1)[-1]
    local = local_path(url)
    if local is not None and Path(local).is_file():
        return LockedPackage(dist.name, dist.version, (LockedFile(name, file_sha256(Path(local)), path=local,
                                                                  size=Path(local).stat().st_size),), origin="folder")
    if sha:
        clean, _ = registry.clean_url(url)
        return LockedPackage(dist.name, dist.version, (LockedFile(name, sha, url=None if local else clean,
                                                                  path=local),), origin="url")
    return NotLocked(dist.name, dist.version, f"installed from {registry.clean_url(url)[0]}, which is gone and "
                                              "left no hash")


def _from_folder(dist: Dist, tags: frozenset[str], wheels: Sequence[LocalWheel]) -> LockedPackage | None:
    hit = next((lw for lw in wheels if _same_wheel(lw.wheel, dist, tags)), None)
    if hit is None:
        return None
    return LockedPackage(dist.name, dist.version, (LockedFile(hit.path.name, file_sha256(hit.path), path=str(hit.path),
                                                              size=hit.path.stat().st_size),),
                         folder=hit.folder, origin="folder")


class _Pages:
    """Index pages read once each (several packages may be looked up at once)."""

    def __init__(self, net: Client) -> None:
        self.net = net
        self._lock = threading.Lock()
        self._seen: dict[tuple[str, str], list[Link] | Failure] = {}

    def links(self, index: str, project: str) -> list[Link] | Failure:
        """The wheels ``index`` lists for ``project``, or why the page could not be read."""
        key = (index, project)
        with self._lock:
            if key in self._seen:
                return self._seen[key]
        try:
            found: list[Link] | Failure = read_page(self.net, project_url(index, project), project)
        except NetError as exc:
            found = exc.failure
        with self._lock:
            self._seen[key] = found
        return found


def _from_indexes(dist: Dist, tags: frozenset[str], indexes: Sequence[str], pages: _Pages) -> LockedPackage | str:
    """The first index (in the installer's order) that lists the exact file; else why none does."""
    unread: list[str] = []
    for index in indexes:
        links = pages.links(index, dist.name)
        if isinstance(links, Failure):
            if links.status != 404:  # a 404: the index does not have the project, the next one may
                unread.append(f"{registry.clean_url(index)[0]}: {links.text}")
            continue
        hit = next((lk for lk in links if _same_wheel(lk.wheel, dist, tags)), None)
        if hit is None:
            continue
        if not hit.sha256:
            return f"{registry.clean_url(index)[0]} lists {hit.filename} without a sha256"
        url, _ = registry.clean_url(hit.url)
        return LockedPackage(dist.name, dist.version, (LockedFile(hit.filename, hit.sha256, url=url),),
                             index=registry.clean_url(index)[0], origin="index")
    if unread:
        return "no source could be asked (" + "; ".join(unread[:2]) + ")"
    return "no source of the environment lists this file (" + ", ".join(
        registry.clean_url(i)[0] for i in indexes) + ")"


def _locate(dist: Dist, origins: Origins, wheels: Sequence[LocalWheel], pages: _Pages) -> LockedPackage | NotLocked:
    info = _direct_url(dist)
    if info is not None:
        return _from_direct(dist, info)
    tags = wheel_tags(dist)
    found = _from_folder(dist, tags, wheels)
    if found is not None:
        return found
    result = _from_indexes(dist, tags, origins.indexes, pages)
    if isinstance(result, LockedPackage):
        return result
    if origins.bundled and _from_folder(dist, tags, scan([origins.bundled])) is not None:
        result = "the Python's own copy (ensurepip's bundled wheel); every new environment gets its own"
    return NotLocked(dist.name, dist.version, result)


def locate_all(dists: Sequence[Dist], origins: Origins) -> list[LockedPackage | NotLocked]:
    """Each distribution's origin (index pages are read in parallel, each once)."""
    wheels = scan(origins.folders)
    pages = _Pages(Client(origins.proxy, origins.ca_bundle))
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(lambda d: _locate(d, origins, wheels, pages), dists))


# ------------------------------------------------------------------ the machine and the build

def machine_of(report: SystemReport) -> Machine:
    gpus = tuple(GpuFact(g.vendor, g.name, g.driver_version, g.compute_capability, g.gfx_target)
                 for g in report.gpus if not g.integrated or g.vendor == "apple")
    return Machine(hostname=report.hostname, os=report.os.family, os_version=report.os.version, arch=report.arch,
                   glibc=report.os.glibc, cuda_driver_max=report.nvidia_cuda_version, gpus=gpus)


def arch_list_of(data: CompatData, torch: str | None, variant: str | None, platform: str | None) -> tuple[str, ...]:
    """The compiled architectures of a build, as the compatibility data lists them (``()``: unknown)."""
    if not torch or not variant:
        return ()
    minor = ".".join(torch.split("+", 1)[0].split(".")[:2])
    for rel in data.releases:
        if rel.torch != minor:
            continue
        for v in rel.variants:
            if v.name == variant and (platform is None or platform in v.platforms):
                return tuple(f"sm_{a.replace('.', '')}" for a in v.arch) or v.gfx
    return ()


def _verified(env: Path, torch: str, allow_unverified: bool) -> Verified:
    rec = registry.find(env)
    v = rec.verification if rec is not None else None
    if v is not None and v.ok and (v.torch_version or torch) == torch:
        return Verified(True, v.when, v.torch_version, v.accelerator, v.passed, v.skipped, v.devices)
    if allow_unverified:
        if v is None:  # never checked: the lock says it was not verified
            return Verified(False, "")
        return Verified(False, v.when, v.torch_version, v.accelerator, v.passed, v.skipped, v.devices)
    raise BadInput(msg("lab.unverified", "{env} holds torch {torch}, which has not passed a verification here; a "
                       "lock hands on a verified environment.", env=str(env), torch=torch),
                   hint=ForFace(msg("lab.unverified_gui", "Check the environment first; export it once the check "
                                    "passes."),
                                msg("lab.unverified_cli", "Run `torch-setup envs check {env}`, then export again (or "
                                    "pass --unverified to export it as it is, marked unverified).", env=str(env))))


def _origins(env: Path, default_index: str, extra_folders: Sequence[str],
             given: Sequence[str]) -> tuple[Origins, SourceSettings, bool]:
    """The recorded sources, in the installer's order, and whether credentials were removed from them;
    an index given here (with its credentials: the list of environments keeps none) reads the page of
    the recorded one it names, or is added."""
    rec = registry.find(env)
    src = rec.sources if rec is not None else SourceSettings()
    folders = [*extra_folders, *src.find_links]
    if src.bundle:
        folders.append(str(Path(src.bundle) / "wheels"))
    recorded = [u for u in (src.torch_index, *src.extra_index_urls, src.default_index or default_index) if u]
    with_keys = {registry.clean_url(u)[0].rstrip("/"): u for u in given}
    indexes = [with_keys.pop(u.rstrip("/"), u) for u in recorded] + list(with_keys.values())
    return (Origins(tuple(dict.fromkeys(folders)), tuple(dict.fromkeys(indexes))), src,
            rec is not None and rec.credentials_removed)


def export_env(env: Path, report: SystemReport, *, default_index: str, find_links: Sequence[str] = (),
               indexes: Sequence[str] = (), allow_unverified: bool = False, proxy: str | None = None,
               ca_bundle: str | None = None, data: CompatData | None = None) -> Exported:
    """The lock of ``env`` (an environment folder), verified on the machine ``report`` describes.

    ``default_index``: the installer's default index (PyPI unless configured); ``find_links``:
    more wheel folders to look in; ``indexes``: index URLs to read the pages from (their
    credentials are used, never written). Raises BadInput when the environment has no torch, or
    (unless ``allow_unverified``) no passed verification of the torch it holds."""
    dists = distributions(env)
    torch = dists.get("torch")
    if torch is None:
        raise BadInput(msg("lab.no_torch", "{env} holds no PyTorch: there is nothing to hand on.", env=str(env)),
                       hint=msg("lab.no_torch_hint", "Install PyTorch into it first (torch-setup install)."))
    verified = _verified(env, torch.version, allow_unverified)
    info, _ = probe_python(env_python(env))
    if info is None:
        raise BadInput(msg("lab.python_broken", "The Python of {env} does not run, so the environment cannot be "
                           "exported.", env=str(env)))
    origins, src, removed = _origins(env, default_index, find_links, indexes)
    origins = replace(origins, proxy=proxy, ca_bundle=ca_bundle, bundled=info.pip_wheels)
    found = locate_all(list(dists.values()), origins)
    packages = tuple(x for x in found if isinstance(x, LockedPackage))
    left = tuple(x for x in found if isinstance(x, NotLocked))
    data = data or load_compat()
    platform = wheel_platform(report.os.family or "", report.arch)
    variant = variant_of_version(torch.version) or _variant_of_record(env)
    backend = backend_of_variant(variant)
    torch_pkg = next(p for p in packages if p.name == "torch") if any(p.name == "torch" for p in packages) else None
    rec = registry.find(env)
    lock = Lock(python=info.version or "", packages=packages, platform=platform, torch=torch.version, variant=variant,
                backend=str(backend) if backend is not None else None,
                sources=SourceSettings(torch_index=torch_pkg.source if torch_pkg is not None else None,
                                       default_index=registry.clean_url(src.default_index or default_index)[0],
                                       extra_index_urls=src.extra_index_urls, find_links=origins.folders),
                installer=rec.installer if rec is not None else "uv", env_name=env.name,
                arch_list=arch_list_of(data, torch.version, variant, platform), compat_version=data.version,
                created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), assistant_version=__version__,
                machine=machine_of(report), verified=verified, not_locked=left,
                env_vars=build_env_vars(report, data, torch.version, variant),
                credentials_removed=removed or any(registry.clean_url(u)[1] for u in (default_index, *indexes)))
    return Exported(lock, _notes(lock))


def build_env_vars(report: SystemReport, data: CompatData, torch: str, variant: str | None) -> dict[str, str]:
    """The variables the build needs set on that machine (the engine's ``env_vars``: HSA_OVERRIDE_GFX_VERSION)."""
    from app.core.base.errors import UserError
    from app.core.recommend import Choices, recommend

    try:
        rec = recommend(report, data, Choices(variant=variant, torch=torch.split("+", 1)[0]))
    except UserError:
        return {}
    return dict(rec.env_vars)


def _variant_of_record(env: Path) -> str | None:
    rec = registry.find(env)
    return rec.variant if rec is not None else None


def _notes(lock: Lock) -> tuple[Text, ...]:
    notes: list[Text] = [msg("lab.not_locked", "{name} {version} is not in the lock: {why}.", name=n.name,
                             version=n.version, why=n.why) for n in lock.not_locked]
    local = [p for p in lock.packages if p.origin == "folder"]
    if local:
        folders = sorted({p.folder or str(Path(p.files[0].path or "").parent) for p in local})
        notes.append(msg("lab.from_folders", "{names} came from local wheel folders ({folders}): the lock names the "
                         "files there; another machine needs the same folders, or gives them with --find-links.",
                         names=", ".join(p.name for p in local), folders=", ".join(folders)))
    notes += [msg("lab.directory_package", "{name} was installed from the folder {path}: the lock names that folder, "
                  "and only a machine that has it can install it.", name=p.name, path=p.directory or "")
              for p in lock.unhashed]
    if lock.verified is not None and not lock.verified.ok:
        notes.append(msg("lab.exported_unverified", "The environment has not passed a verification; the lock says so."))
    if lock.credentials_removed:
        notes.append(msg("lab.credentials_removed", "Credentials were removed from the index URLs in the lock; each "
                         "machine supplies its own (netrc, keyring)."))
    return tuple(notes)


def env_path_of(target: str | os.PathLike[str]) -> Path:
    """The environment folder ``target`` names (refused when it is not an environment)."""
    from app.core.lifecycle.common import env_root  # start-up: only the command needs the check

    return env_root(target)
