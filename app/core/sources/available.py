"""What the user's sources actually offer: the input that bounds the recommendation.

:class:`Availability` holds the wheels of the local folders (read at once: file names only,
no network) and reads an index's page for a project only when first asked (once per page,
short timeout), so a folder that holds the build the engine wants costs no request at all.
``offers(project, index_url, label, python)`` lists the versions on offer for one wheel
variant (its local version label, ``cpu`` / ``cu130`` / None) on one target Python, each with
where it is (:class:`Offer`); ``failures`` says which sources could not be read and why.

:func:`availability` makes one from :class:`~app.core.sources.settings.SourceSettings`, or
returns None when the user named no source (then every release of the compatibility data is
taken as available, as before sources existed).
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.base.text import Text, msg
from app.core.base.wheels import WheelFile, local_label
from app.core.net.client import Client, Failure, NetError
from app.core.sources.local import LocalWheel, scan, tag_rank
from app.core.sources.pages import Link, project_url, read_page
from app.core.sources.settings import Source, SourceSettings, candidates, variant_of_index

__all__ = ["Availability", "Offer", "availability"]


@dataclass(frozen=True)
class Offer:
    """A version on offer (public, without its local label) and where it is."""

    version: str
    local: bool
    where: Text


def _fits(w: WheelFile | None, project: str, label: str | None, python: str | None) -> bool:
    return (w is not None and w.name == project and local_label(w.version) == label
            and tag_rank(w, python) is not None)


def public(version: str) -> str:
    return version.split("+", 1)[0]


class Availability:
    """The local wheels, and index pages read on demand (thread-safe)."""

    def __init__(self, settings: SourceSettings, *, net: Client | None = None,
                 local: Sequence[LocalWheel] | None = None) -> None:
        self.settings = settings
        self.net = net or Client(settings.proxy, settings.ca_bundle)
        self.local = tuple(local) if local is not None else scan(settings.folders)
        self._pages: dict[str, list[Link] | Failure] = {}
        self._lock = threading.Lock()

    def folder_words(self) -> Text:
        folders = sorted({lw.folder for lw in self.local})
        if len(folders) == 1:
            return msg("sources.where_folder", "in your folder {folder}", folder=folders[0])
        return msg("sources.where_folders", "in your folders")

    def _page(self, url: str, project: str) -> list[Link] | Failure:
        with self._lock:
            known = self._pages.get(url)
        if known is not None:
            return known
        try:
            found: list[Link] | Failure = read_page(self.net, url, project)
        except NetError as err:
            found = err.failure
        with self._lock:
            self._pages[url] = found
        return found

    def sources(self, index_url: str) -> tuple[Source, ...]:
        """The sources asked about builds of ``index_url`` (the auto fallbacks are not)."""
        return tuple(s for s in candidates(self.settings, index_url) if not s.fallback)

    def offers(self, project: str, index_url: str, label: str | None, python: str | None, *,
               remote: bool = True) -> list[Offer]:
        """Versions of ``project`` with local label ``label`` whose wheel fits Python ``python``:
        the folders' first, then (``remote``) each source's, newest first within each."""
        out = [Offer(public(lw.wheel.version), True, self.folder_words())
               for lw in self.local if _fits(lw.wheel, project, label, python)]
        if remote:
            variant = variant_of_index(index_url)
            for src in self.sources(index_url):
                page = self._page(project_url(src.url_for(variant), project, src.layout), project)
                if isinstance(page, Failure):
                    continue
                for lk in page:
                    w = lk.wheel
                    if w is not None and _fits(w, project, label, python):
                        out.append(Offer(public(w.version), False, msg("sources.where_source", "from {source}",
                                                                       source=src.name)))
        return out

    def has(self, project: str, version: str, index_url: str, label: str | None,
            python: str | None) -> Offer | None:
        """Where ``project`` ``version`` (public) is on offer: the folders first, then the sources."""
        for remote in (False, True):
            hit = next((o for o in self.offers(project, index_url, label, python, remote=remote)
                        if o.version == version), None)
            if hit is not None:
                return hit
        return None

    def unreachable(self, index_url: str, project: str = "torch") -> tuple[Source, Failure] | None:
        """The first source of ``index_url`` and why it failed, when every one was asked for
        ``project`` and none could be read (None: one could, or none was asked)."""
        asked = self.sources(index_url)
        failed = self.failures(index_url, project)
        return failed[0] if asked and len(failed) == len(asked) else None

    def failures(self, index_url: str, project: str = "torch") -> list[tuple[Source, Failure]]:
        """The sources of ``index_url`` whose page for ``project`` could not be read (once asked)."""
        variant = variant_of_index(index_url)
        out = []
        for src in self.sources(index_url):
            with self._lock:
                page = self._pages.get(project_url(src.url_for(variant), project, src.layout))
            if isinstance(page, Failure):
                out.append((src, page))
        return out


def availability(settings: SourceSettings | None, *, net: Client | None = None) -> Availability | None:
    """What ``settings``' sources offer, or None when they name no source (nothing bounds the choice)."""
    if settings is None or not settings.constrains:
        return None
    return Availability(settings, net=net)
