"""The per-run wheelhouse: resolve, fetch every file ourselves, then install with no index.

1. :func:`resolve` asks uv for the whole set (``uv pip compile --format pylock.toml``) with the
   chosen torch source ranked first (``--index-strategy first-index``): every package pinned,
   with the URL and sha256 of its wheel for the target Python. When the chosen source cannot
   answer, the next verified one is asked.
2. :func:`fill` fetches every file with the :class:`~app.core.sources.download.Downloader`:
   the pinned torch wheels from the route's verified sources in order (resumed on the next one
   when a download fails mid-way), the others from where uv found them and, when that fails,
   from the verified sources that list the same file with the same sha256. Files from the
   user's wheel folders are linked, not downloaded.
3. The wheelhouse holds the files and ``requirements.txt`` (every file pinned with its hash):
   the installer then runs ``--no-index --find-links <wheelhouse> --require-hashes``.

When uv is missing, or a package has no wheel, the wheelhouse holds only the pinned torch
wheels (``Wheelhouse.complete`` False) and the installer takes the rest from the indexes.
"""
from __future__ import annotations

import os
import shutil
import sys
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.core.base.errors import Cancelled, UserError
from app.core.base.events import Event
from app.core.base.paths import cache_dir
from app.core.base.requirements import canonical
from app.core.base.text import msg
from app.core.base.wheels import parse_wheel
from app.core.net.client import Client, NetError
from app.core.proc import runner
from app.core.sources.download import Downloader, Served, Wanted, file_sha256, forget, link_or_copy
from app.core.sources.local import scan, tag_rank
from app.core.sources.pages import project_url, read_page
from app.core.sources.routing import Route
from app.core.sources.settings import Source, variant_of_index

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["Locked", "Wheelhouse", "alternatives", "cleanup", "download_folder", "fill", "forget_downloads",
           "new_wheelhouse", "prefetch", "requirement_lines", "resolve", "wanted_for"]

REQUIREMENTS = "requirements.txt"


@dataclass(frozen=True)
class Locked:
    """One package of the resolution and the wheel chosen for the target."""

    name: str
    version: str
    filename: str
    url: str | None  # None: a local file (``path``)
    path: str | None
    sha256: str | None


@dataclass(frozen=True)
class Wheelhouse:
    folder: Path
    requirements: Path | None  # every file pinned with its hash (complete wheelhouses only)
    served: tuple[Served, ...]
    complete: bool  # holds the whole resolution: install with no index


def download_folder() -> Path:
    """Where downloads wait (``<sha256>-<file>[.part]``) until an install has used them."""
    return cache_dir() / "downloads"


def _python_arg(python: str | None) -> list[str]:
    if not python:
        return []
    return ["--python-version", python] if python.replace(".", "").isdigit() else ["--python", python]


def _index_args(source: Source, variant: str | None, default_index: str | None, extra: Sequence[str],
                find_links: Sequence[str]) -> list[str]:
    argv = ["--index-url", default_index] if default_index else []
    url = source.url_for(variant)
    argv += ["--find-links", url] if source.layout == "flat" else ["--extra-index-url", url]
    for u in extra:
        argv += ["--extra-index-url", u]
    for f in find_links:
        argv += ["--find-links", f]
    return [*argv, "--index-strategy", "first-index"]


def _pick_wheel(pkg: Mapping[str, object], python: str | None) -> Locked | None:
    name, version = str(pkg.get("name", "")), str(pkg.get("version", ""))
    best: tuple[int, Locked] | None = None
    for whl in pkg.get("wheels") or []:  # type: ignore[attr-defined]
        if not isinstance(whl, dict):
            continue
        url, path = whl.get("url"), whl.get("path")
        where = str(url or path or "")
        filename = str(whl.get("name") or urllib.parse.unquote(where.rsplit("/", 1)[-1]))
        w = parse_wheel(filename)
        rank = tag_rank(w, python) if w is not None else None
        if rank is None:
            continue
        hashes = whl.get("hashes")
        sha = hashes.get("sha256") if isinstance(hashes, dict) else None
        found = Locked(canonical(name), version, filename, str(url) if url else None, str(path) if path else None,
                       str(sha) if sha else None)
        if best is None or rank < best[0]:
            best = (rank, found)
    return best[1] if best is not None else None


def resolve(uv: str, requirements: Sequence[str], python: str | None, route: Route, *,
            default_index: str | None, extra_index_urls: Sequence[str] = (), find_links: Sequence[str] = (),
            env: Mapping[str, str] | None = None, cancel: runner.CancelToken | None = None,
            log_path: Path | None = None) -> list[Locked] | None:
    """The whole set for ``requirements`` (None: some package has no wheel for the target).
    Raises UserError when no verified source lets uv resolve it."""
    variant = variant_of_index(route.index_url)
    errors: list[str] = []
    for verdict in route.verified:
        argv = [uv, "pip", "compile", "-", "--format", "pylock.toml", "--no-header", "--quiet",
                *_python_arg(python),
                *_index_args(verdict.source, variant, default_index, extra_index_urls, find_links)]
        res = runner.run(argv, env=env, input=("\n".join(requirements) + "\n").encode(), cancel=cancel,
                         log_path=log_path, timeout=600)
        if res.cancelled:
            raise Cancelled("Cancelled while resolving the packages.")
        if not res.ok:
            errors.append(" / ".join(runner.relevant_lines(res.tail, 3)) or res.describe())
            continue
        try:
            data = tomllib.loads(res.stdout)
        except tomllib.TOMLDecodeError as exc:
            errors.append(f"uv wrote no pylock.toml ({exc})")
            continue
        out = []
        for pkg in data.get("packages") or []:
            if not isinstance(pkg, dict):
                continue
            found = _pick_wheel(pkg, python)
            if found is None:
                return None
            out.append(found)
        return out
    raise UserError("The packages could not be resolved from any verified source: " + "; ".join(errors[:3]),
                    hint="See the log; check the default package index (or its mirror) and the network.",
                    log_path=log_path)


def alternatives(route: Route, net: Client) -> Callable[[Wanted, Sequence[str]], list[tuple[Source, str]]]:
    """More sources for a file: the verified sources whose page lists it with the same sha256."""
    variant = variant_of_index(route.index_url)

    def more(w: Wanted, tried: Sequence[str]) -> list[tuple[Source, str]]:
        out = []
        for v in route.verified:
            if v.source.id in tried or v.source.layout != "pep503":
                continue
            try:
                links = read_page(net, project_url(v.source.url_for(variant), w.package), w.package)
            except NetError:
                continue
            hit = next((lk for lk in links if lk.filename == w.filename
                        and (w.sha256 is None or lk.sha256 == w.sha256)), None)
            if hit is not None:
                out.append((v.source, hit.url))
        return out

    return more


def _source_of(url: str, route: Route) -> Source:
    """The verified source a resolved file's URL belongs to (same scheme, host and port), else its index."""
    variant = variant_of_index(route.index_url)
    parts = urllib.parse.urlsplit(url)
    for v in route.verified:
        base = urllib.parse.urlsplit(v.source.url_for(variant))
        if (base.scheme, base.netloc) == (parts.scheme, parts.netloc):
            return v.source
    return Source("package-index", msg("sources.name_resolved", "the package index {host}",
                                       host=parts.hostname or url), "mirror", url)


def prefetch(route: Route, net: Client, emit: Callable[[Event], None], cancel: runner.CancelToken, *,
             local_folders: Sequence[str] = ()) -> dict[str, tuple[Path, Served]]:
    """The route's pinned wheels (those not in the folders), fetched while uv resolves the rest;
    a file that fails here is fetched again (and its failure reported) by :func:`fill`."""
    local = {lw.path.name for lw in scan(local_folders)}
    wanted = [Wanted(f.filename, f.sha256, tuple((s, g.url) for s, g in route.sources_for(f.filename)),
                     canonical(f.requirement.split("==")[0].split("[")[0]))
              for f in route.files if f.filename not in local]
    dl = Downloader(net, download_folder(), emit, cancel, more=alternatives(route, net))
    # a file that failed here is fetched again by fill(), which reports why it failed
    return {w.filename: got for w, got in zip(wanted, dl.fetch_each(wanted), strict=True) if isinstance(got, tuple)}


def requirement_lines(locked: Sequence[Locked], route: Route, folder: Path | None) -> dict[str, str]:
    """``name==version --hash=sha256:…`` of each file of the resolution, by file name (the route's
    sha256 for its pinned files; a file without one is hashed in ``folder``, or left out when
    ``folder`` is None)."""
    routed = {f.filename: f for f in route.files}
    out = {}
    for e in locked:
        sha = routed[e.filename].sha256 if e.filename in routed and routed[e.filename].sha256 else e.sha256
        if not sha and folder is None:
            continue
        out[e.filename] = f"{e.name}=={e.version} --hash=sha256:{sha or file_sha256(Path(folder or '') / e.filename)}"
    return out


def wanted_for(route: Route, locked: Sequence[Locked] | None, local_folders: Sequence[str] = ()
               ) -> tuple[list[Wanted], list[tuple[Locked, Path]]]:
    """What to download for ``locked`` (None: only the route's pinned torch wheels): the pinned
    wheels from the route's verified sources, the others from where uv found them; and the
    files the user's folders (or a path of the resolution) already hold."""
    local = {lw.path.name: lw for lw in scan(local_folders)}
    routed = {f.filename: f for f in route.files}
    entries = list(locked) if locked is not None else [
        Locked(canonical(f.requirement.split("==")[0].split("[")[0]), "", f.filename, f.url, None, f.sha256)
        for f in route.files]
    wanted: list[Wanted] = []
    here: list[tuple[Locked, Path]] = []
    for e in entries:
        src = local[e.filename].path if e.filename in local else (Path(e.path) if e.path else None)
        if src is not None and (e.sha256 is None or e.url is None or file_sha256(src) == e.sha256):
            here.append((e, src))
        elif e.filename in routed:
            sha = routed[e.filename].sha256 or e.sha256
            wanted.append(Wanted(e.filename, sha, tuple((src_, f.url) for src_, f in route.sources_for(e.filename)),
                                 e.name))
        elif e.url:
            wanted.append(Wanted(e.filename, e.sha256, ((_source_of(e.url, route), e.url),), e.name))
    wanted.sort(key=lambda w: 0 if w.filename in routed else 1)  # the big ones first
    return wanted, here


def fill(folder: Path, route: Route, net: Client, emit: Callable[[Event], None], cancel: runner.CancelToken, *,
         locked: Sequence[Locked] | None, local_folders: Sequence[str] = (),
         fetched: Mapping[str, tuple[Path, Served]] | None = None,
         on_file: Callable[[str], None] | None = None) -> Wheelhouse:
    """Fetch the files into ``folder`` (the per-run wheelhouse). ``locked`` None: only the
    route's pinned torch wheels (the installer resolves the rest). ``fetched``: files
    :func:`prefetch` already has. ``on_file`` is told the name of each file as soon as it is in
    ``folder`` (the others may still be arriving)."""
    folder.mkdir(parents=True, exist_ok=True)
    done = dict(fetched or {})
    tell = on_file or (lambda _name: None)
    wanted, here = wanted_for(route, locked, local_folders)
    served: list[Served] = []
    for e, src in here:
        link_or_copy(src, folder / e.filename)
        served.append(Served(e.filename, "folder", msg("sources.name_folder", "your folder"), str(src.parent),
                             src.stat().st_size, 0.0, e.sha256, cached=True))
        tell(e.filename)

    def arrived(path: Path, s: Served) -> None:
        link_or_copy(path, folder / s.filename)
        tell(s.filename)

    for path, s in done.values():
        arrived(path, s)
    dl = Downloader(net, download_folder(), emit, cancel, more=alternatives(route, net), on_file=arrived)
    served += [*(s for _, s in done.values()),
               *(s for _, s in dl.fetch_all([w for w in wanted if w.filename not in done]))]
    req_file = None
    if locked is not None:
        req_file = folder / REQUIREMENTS
        req_file.write_text("\n".join(requirement_lines(locked, route, folder).values()) + "\n", encoding="utf-8")
    names = [x.filename for x in locked] if locked is not None else [f.filename for f in route.files]
    order = {name: i for i, name in enumerate(names)}
    served.sort(key=lambda s: order.get(s.filename, 0))
    return Wheelhouse(folder, req_file, tuple(served), locked is not None)


def new_wheelhouse() -> Path:
    """A fresh per-run folder for the wheelhouse."""
    return cache_dir() / f"wheelhouse-{os.getpid()}-{time.monotonic_ns() % 10**9}"


def forget_downloads(served: Sequence[Served]) -> None:
    """Remove the downloads of ``served`` from the download folder (they have been used); one that
    another download of the process is using now (the next install, early downloads) stays."""
    for s in served:
        if s.source_id != "folder" and s.sha256:
            forget(download_folder() / f"{s.sha256[:16]}-{s.filename}")


def cleanup(house: Wheelhouse, *, keep_downloads: bool) -> None:
    """Remove the per-run folder; after a successful install also the downloads it used."""
    if not keep_downloads:
        forget_downloads(house.served)
    shutil.rmtree(house.folder, ignore_errors=True)
