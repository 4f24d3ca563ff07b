"""Verified routing: which source the pinned torch wheels come from, checked before installing.

For each candidate source (:func:`app.core.sources.settings.candidates`, all at once in
threads) :func:`verify` reads the project page of each pinned package and checks that

1. the exact file for this platform and Python is listed (a mirror that lacks the variant or
   has not synced the release fails here);
2. its sha256 is the origin's (when the origin's page could be read): a mirror serving other
   bytes under the same name fails;
3. a short timed ``Range`` request for the first bytes of the largest file answers (``403`` /
   ``404`` on single files, a redirect to a host that cannot be reached, a TLS or proxy
   failure fail here); its speed ranks the verified sources.

The catalogue's fallback mirrors are asked only when no other candidate passed. The
:class:`Route` keeps every verdict: the fastest verified source is chosen (a source listed
earlier wins unless a later one is clearly faster), the others stay as fallbacks for the
downloader, and each skipped source keeps its reason for the plan.
"""
from __future__ import annotations

import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.core.base.oserrors import os_error_text
from app.core.base.text import Text, msg
from app.core.net.client import PAGE_TIMEOUT_S, STALL_BYTES, STALL_S, Client, Failure, NetError, stalled
from app.core.net.indexes import display_url
from app.core.sources.local import tag_rank
from app.core.sources.pages import Link, project_url, read_page
from app.core.sources.settings import Source, SourceSettings, candidates, variant_of_index

__all__ = ["PROBE_BYTES", "RemoteFile", "Route", "Verdict", "best_link", "verify"]

PROBE_BYTES = 256 * 1024
#: Less than this in the probe's PAGE_TIMEOUT_S is the stall rule's floor (net.client): the source has stalled.
PROBE_MIN_BYTES = STALL_BYTES * int(PAGE_TIMEOUT_S) // int(STALL_S)
CLEARLY_FASTER = 1.5  # a later source must be this much faster to be chosen over an earlier one


@dataclass(frozen=True)
class RemoteFile:
    """A pinned wheel as one source lists it."""

    requirement: str
    filename: str
    url: str
    sha256: str | None


@dataclass(frozen=True)
class Verdict:
    """What verifying one source found: usable (``ok``) with its files and speed, or why not."""

    source: Source
    ok: bool
    reason: Text = ""
    files: tuple[RemoteFile, ...] = ()
    speed_bps: float | None = None
    hash_checked: bool = False  # its sha256 was compared with the origin's
    failure: Failure | None = None  # the network failure behind ``reason``, if any

    def file(self, filename: str) -> RemoteFile | None:
        return next((f for f in self.files if f.filename == filename), None)


@dataclass(frozen=True)
class Route:
    """Every verdict, in the candidates' order; :attr:`verified` puts the chosen one first."""

    index_url: str
    requirements: tuple[str, ...]
    python: str | None
    verdicts: tuple[Verdict, ...]

    @property
    def verified(self) -> tuple[Verdict, ...]:
        ok = [v for v in self.verdicts if v.ok]
        if not ok:
            return ()
        fastest = max((v.speed_bps or 0.0) for v in ok)
        first = next((v for v in ok if (v.speed_bps or 0.0) * CLEARLY_FASTER >= fastest), ok[0])
        rest = sorted((v for v in ok if v is not first), key=lambda v: -(v.speed_bps or 0.0))
        return (first, *rest)

    @property
    def chosen(self) -> Verdict | None:
        found = self.verified
        return found[0] if found else None

    @property
    def skipped(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if not v.ok)

    @property
    def files(self) -> tuple[RemoteFile, ...]:
        """The pinned files as the chosen source lists them (sha256 of the reference)."""
        chosen = self.chosen
        return chosen.files if chosen is not None else ()

    def sources_for(self, filename: str) -> list[tuple[Source, RemoteFile]]:
        """Where ``filename`` can be fetched, in the order to try."""
        out = []
        for v in self.verified:
            f = v.file(filename)
            if f is not None:
                out.append((v.source, f))
        return out


def best_link(links: Sequence[Link], requirement: str, python: str | None) -> Link | None:
    """The newest wheel of ``links`` that satisfies ``requirement`` and fits Python ``python``."""
    from packaging.requirements import Requirement  # start-up
    from packaging.version import InvalidVersion, Version

    req = Requirement(requirement)
    name = req.name.lower().replace("_", "-")
    best: tuple[Version, int, Link] | None = None
    for lk in links:
        w = lk.wheel
        if w is None or w.name != name:
            continue
        try:
            v = Version(w.version)
        except InvalidVersion:
            continue
        rank = tag_rank(w, python)
        if rank is None or not req.specifier.contains(v, prereleases=True):
            continue
        if best is None or (v, -rank) > (best[0], -best[1]):
            best = (v, rank, lk)
    return best[2] if best is not None else None


def _project(requirement: str) -> str:
    from packaging.requirements import Requirement  # start-up

    return Requirement(requirement).name


def _lacks(requirement: str, python: str | None) -> Text:
    return msg("sources.skip_lacks", "does not have {want} for this platform and Python {python} (a variant or "
               "release it has not synced)", want=requirement, python=python or "?")


def _listing(src: Source, net: Client, variant: str | None, requirements: Sequence[str],
             python: str | None) -> Verdict:
    """Step 1: the pages, and the file of each requirement."""
    files = []
    for req in requirements:
        project = _project(req)
        url = project_url(src.url_for(variant), project, src.layout)
        try:
            links = read_page(net, url, project)
        except NetError as err:
            if err.failure.status == 404:  # no page for the project in this variant: the variant is missing
                return Verdict(src, False, _lacks(req, python))
            return Verdict(src, False, msg("sources.skip_page", "its page for {project} cannot be read: {why}",
                                           project=project, why=err.failure.text), failure=err.failure)
        link = best_link(links, req, python)
        if link is None:
            return Verdict(src, False, _lacks(req, python))
        files.append(RemoteFile(req, link.filename, link.url, link.sha256))
    return Verdict(src, True, files=tuple(files))


def _host(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"


def _probe(v: Verdict, net: Client, failed_hosts: set[str]) -> Verdict:
    """Step 3: a short timed Range request for the first bytes of the largest pinned file."""
    f = v.files[0]
    began = time.monotonic()
    got = 0
    try:  # the whole probe within PAGE_TIMEOUT_S: its speed is what arrived by then
        with net.get(f.url, byte_range=(0, PROBE_BYTES - 1), timeout=PAGE_TIMEOUT_S, deadline=PAGE_TIMEOUT_S) as r:
            for url in r.redirects:
                if _host(url) in failed_hosts:
                    return Verdict(v.source, False, msg("sources.skip_redirect_failed", "redirects {file} to {target}, "
                                                        "a host that failed", file=f.filename,
                                                        target=display_url(url)), v.files)
            while got < PROBE_BYTES:
                try:
                    chunk = r.read(min(65536, PROBE_BYTES - got))
                except NetError as err:
                    if err.failure.kind != "timeout":
                        raise
                    if got >= PROBE_MIN_BYTES:
                        break  # slow, not stalled: ranked by the speed it showed
                    raise NetError(stalled(_host(f.url), got, time.monotonic() - began)) from None
                if not chunk:
                    break
                got += len(chunk)
    except NetError as err:
        return Verdict(v.source, False, err.failure.text, v.files, failure=err.failure)
    if got == 0:
        return Verdict(v.source, False, msg("sources.skip_empty", "{file}: the answer holds no bytes",
                                            file=f.filename), v.files)
    speed = got / max(time.monotonic() - began, 1e-6)
    return Verdict(v.source, True, files=v.files, speed_bps=speed, hash_checked=v.hash_checked)


def _compare(verdicts: list[Verdict], reference: Verdict | None) -> list[Verdict]:
    """Step 2: every source's sha256 against the reference's (the origin's)."""
    if reference is None or not reference.files:
        return verdicts
    ref = {f.filename: f.sha256 for f in reference.files if f.sha256}
    out = []
    for v in verdicts:
        if not v.ok or v is reference:
            out.append(Verdict(v.source, v.ok, v.reason, v.files, v.speed_bps, v is reference and bool(ref),
                               v.failure))
            continue
        bad = next((f for f in v.files if f.filename in ref and f.sha256 and f.sha256 != ref[f.filename]), None)
        if bad is not None:
            out.append(Verdict(v.source, False, msg("sources.skip_wrong_hash", "lists another SHA-256 for {file} than "
                                                    "{reference} ({theirs}… instead of {ours}…)", file=bad.filename,
                                                    reference=reference.source.name, theirs=(bad.sha256 or "")[:12],
                                                    ours=ref[bad.filename][:12])))
            continue
        files = tuple(RemoteFile(f.requirement, f.filename, f.url, f.sha256 or ref.get(f.filename)) for f in v.files)
        out.append(Verdict(v.source, True, files=files, hash_checked=any(f.filename in ref for f in v.files)))
    return out


def _parallel(sources: Sequence[Source], work: Callable[[Source], Verdict]) -> list[Verdict]:
    results: list[Verdict | None] = [None] * len(sources)

    def run(i: int, s: Source) -> None:
        try:
            results[i] = work(s)
        except Exception as exc:  # a verdict for every source, even on a surprise
            results[i] = Verdict(s, False, msg("sources.skip_error", "could not be checked ({error})",
                                               error=os_error_text(exc) if isinstance(exc, OSError)
                                               else str(exc) or type(exc).__name__))

    threads = [threading.Thread(target=run, args=(i, s), daemon=True) for i, s in enumerate(sources)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [r for r in results if r is not None]


def _round(sources: Sequence[Source], net: Client, variant: str | None, requirements: Sequence[str],
           python: str | None, reference: Verdict | None) -> list[Verdict]:
    listed = _parallel(sources, lambda s: _listing(s, net, variant, requirements, python))
    ref = reference or next((v for v in listed if v.source.kind == "origin"), None)
    compared = _compare(listed, ref)
    failed_hosts = {_host(v.source.url_for(variant)) for v in compared if v.failure is not None
                    and v.failure.kind in ("dns", "refused", "timeout", "tls", "tls_verify")}
    by_source = {id(v.source): v for v in compared}
    probed = _parallel([v.source for v in compared],
                       lambda s: _probe(by_source[id(s)], net, failed_hosts) if by_source[id(s)].ok
                       else by_source[id(s)])
    return probed


def verify(settings: SourceSettings, index_url: str, requirements: Sequence[str], python: str | None, *,
           net: Client | None = None, prefer_mirrors: bool = False) -> Route:
    """Verify every candidate source of ``index_url`` for the pinned ``requirements`` (the largest
    first: its file is the one probed)."""
    net = net or Client(settings.proxy, settings.ca_bundle)
    variant = variant_of_index(index_url)
    cands = candidates(settings, index_url, prefer_mirrors=prefer_mirrors)
    primary = [s for s in cands if not s.fallback]
    verdicts = _round(primary, net, variant, requirements, python, None)
    fallbacks = [s for s in cands if s.fallback]
    if fallbacks and not any(v.ok for v in verdicts):
        origin = next((v for v in verdicts if v.source.kind == "origin" and v.files), None)
        verdicts += _round(fallbacks, net, variant, requirements, python, origin)
    return Route(index_url, tuple(requirements), python, tuple(verdicts))
