"""``torch-setup bundle --lock pylock.toml --out DIR``: an offline bundle of exactly a lock's files.

For each package the lock pins, its file is taken from the local folder the lock names (or a
folder given with ``--find-links``), else downloaded from the lock's URL by the assistant's own
downloader (:mod:`app.core.sources.download`: the user's proxy and CA, resumed downloads, every
byte checked against the lock's sha256). The bundle is the ordinary kind (:mod:`app.core.install.bundle`:
``manifest.json``, the hashed ``requirements.txt``, ``wheels/``), so ``install --from-bundle DIR``
installs it on a machine with no network, checked as any bundle. A lock with several files for a
package (another tool's, for several platforms) contributes the files for the lock's platform.

What this run created is removed again when it fails.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from app import __version__
from app.core.base.deletion import delete_tree
from app.core.base.errors import BadInput
from app.core.base.events import Event, ignore
from app.core.base.text import msg
from app.core.base.wheels import parse_wheel
from app.core.install.bundle import WHEELS, BundleFile, Manifest, expand_platform, write_bundle
from app.core.net.client import Client
from app.core.proc import runner
from app.core.pylock.lockfile import Lock, LockedFile, LockedPackage
from app.core.recommend.wheelfiles import platform_tag_fits
from app.core.sources.download import Downloader, Wanted, file_sha256, link_or_copy
from app.core.sources.local import scan
from app.core.sources.settings import Source
from app.core.sources.wheelhouse import download_folder

__all__ = ["bundle_from_lock"]


def _files_for(p: LockedPackage, platform: str | None) -> list[LockedFile]:
    wheels = [f for f in p.files if parse_wheel(f.name) is not None]
    if len(wheels) <= 1 or not platform:
        return wheels or list(p.files[:1])
    fits = [f for f in wheels if (w := parse_wheel(f.name)) is not None
            and any(platform_tag_fits(t.rsplit("-", 1)[-1], platform) for t in w.tags)]
    return fits[:1] or wheels[:1]


def _local(f: LockedFile, here: dict[str, Path]) -> Path | None:
    if f.path and Path(f.path).is_file():
        return Path(f.path)
    return here.get(f.name)


def _refuse(out: Path, lock: Lock) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BadInput(msg("lab.bundle_out_exists", "{out} already exists and is not an empty folder.", out=str(out)),
                       hint=msg("lab.bundle_out_hint", "Choose a new folder for the bundle."))
    if lock.unhashed or lock.not_locked:
        names = [p.name for p in lock.unhashed] + [n.name for n in lock.not_locked]
        raise BadInput(msg("lab.bundle_incomplete_lock", "The lock does not pin every package by hash ({names}); an "
                           "offline bundle would miss them.", names=", ".join(names)),
                       hint=msg("lab.bundle_incomplete_hint", "Install those packages from wheels (not from source "
                                "folders) and export the lock again."))


def _fetch(lock: Lock, wheels: Path, folders: Sequence[str], net: Client, emit: Callable[[Event], None],
           cancel: runner.CancelToken) -> list[tuple[LockedPackage, LockedFile]]:
    here = {lw.path.name: lw.path for lw in scan(folders)}
    chosen = [(p, f) for p in lock.hashed for f in _files_for(p, lock.platform)]
    for _, f in chosen:
        if parse_wheel(f.name) is None:
            raise BadInput(msg("lab.bundle_not_wheel", "{file} is not a wheel; an offline bundle holds wheels only.",
                               file=f.name))
    wanted: list[Wanted] = []
    for p, f in chosen:
        src = _local(f, here)
        if src is not None:
            if file_sha256(src) != f.sha256:
                raise BadInput(msg("lab.bundle_wrong_hash", "{file} in {folder} is not the file the lock pins (its "
                                   "sha256 differs).", file=f.name, folder=str(src.parent)))
            link_or_copy(src, wheels / f.name)
        elif f.url:
            origin = Source("lock", msg("lab.source_lock", "the lock's source"), "origin", f.url)
            wanted.append(Wanted(f.name, f.sha256, ((origin, f.url),), p.name))
        else:
            raise BadInput(msg("lab.local_file_missing", "The lock's {file} came from a local folder, and it is not "
                               "here. Nothing was changed.", file=f.path or f.name),
                           hint=msg("lab.bundle_find_links_hint", "Pass the folder that holds it with --find-links "
                                    "DIR."))
    for path, served in Downloader(net, download_folder(), emit, cancel).fetch_all(wanted):
        link_or_copy(path, wheels / served.filename)
    return chosen


def bundle_from_lock(lock: Lock, out: Path, *, find_links: Sequence[str] = (), proxy: str | None = None,
                     ca_bundle: str | None = None, on_event: Callable[[Event], None] | None = None,
                     cancel: runner.CancelToken | None = None) -> Manifest:
    """The bundle of ``lock``'s files in the new (or empty) folder ``out``; BadInput / UserError as it fails."""
    out = out.absolute()
    _refuse(out, lock)
    created = not out.exists()
    wheels = out / WHEELS
    try:
        wheels.mkdir(parents=True, exist_ok=True)
        chosen = _fetch(lock, wheels, find_links, Client(proxy, ca_bundle), on_event or ignore,
                        cancel or runner.CancelToken())
        files = tuple(BundleFile(f.name, (wheels / f.name).stat().st_size, f.sha256, p.name, p.version,
                                 _tags(f.name)) for p, f in chosen)
        torch = lock.torch_package
        plat = [t.rsplit("-", 1)[-1] for f in (torch.files if torch else ())
                if (w := parse_wheel(f.name)) for t in w.tags]
        manifest = Manifest(python_version=lock.python_minor, implementation="cp",
                            abi="cp" + lock.python_minor.replace(".", ""),
                            platforms=tuple(dict.fromkeys(x for t in plat[:1] for x in expand_platform(t))),
                            packages=tuple(f"{p.name}=={p.version}" for p in lock.hashed), files=files,
                            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                            assistant_version=__version__, torch_index=lock.sources.torch_index)
        write_bundle(out, manifest)
        return manifest
    except BaseException:
        if created:
            delete_tree(out)
        else:
            delete_tree(wheels)
        raise


def _tags(name: str) -> tuple[str, ...]:
    w = parse_wheel(name)
    return tuple(sorted(w.tags)) if w is not None else ()
