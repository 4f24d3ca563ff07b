"""Sources: where PyTorch and its packages come from, verified before they are used.

One part of the core that install, bundle, the wizard and answer files share:

* :mod:`.settings` — the user's sources (:class:`SourceSettings`: wheel folders, a bundle,
  their own index, mirrors, proxy, CA) and the ordered candidate :class:`Source` list of a
  wheel variant (the user's index, else the PyTorch server; listed mirrors; the catalogue's
  mirrors as fallbacks);
* :mod:`.local` — what wheel folders hold (file names, tags, ``Requires-Dist``), and whether
  they hold everything an install needs (then no index is used at all);
* :mod:`.available` — :class:`Availability`, the input of
  :func:`app.core.recommend.recommend` that makes "newest" mean newest *available*;
* :mod:`.pages` — PEP 691 / PEP 503 / flat index pages, read through the one HTTP client
  (:mod:`app.core.net.client`: the user's proxy and CA, every failure named);
* :mod:`.routing` — verified routing: each candidate is checked for the exact pinned file
  (present, same sha256 as the origin's, no redirect to a failing host), the fastest verified
  one is chosen, and the plan says why each other one was skipped;
* :mod:`.download` / :mod:`.wheelhouse` — our own downloader (hash-checked, resumed or moved
  to the next verified source when a download fails mid-way) filling a per-run wheelhouse
  that the installer then installs from with no index.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.core.sources.available import Availability, Offer, availability
    from app.core.sources.local import Closure, LocalWheel, closure, compatible_tags, scan
    from app.core.sources.settings import (
        ORIGIN_ENV,
        Mirrors,
        Source,
        SourceSettings,
        candidates,
        origin_url,
        parse_mirrors,
        torch_origin,
        variant_of_index,
    )

# start-up: the package's names are loaded from their modules on first use, so that naming the
# sources (``app.core.sources.settings``, which the environment backends and the registry use)
# does not load the page readers, the HTTP client and the mirror catalogue
_HOMES = {
    "Availability": "available", "Offer": "available", "availability": "available",
    "Closure": "local", "LocalWheel": "local", "closure": "local", "compatible_tags": "local", "scan": "local",
    "ORIGIN_ENV": "settings", "Mirrors": "settings", "Source": "settings", "SourceSettings": "settings",
    "candidates": "settings", "origin_url": "settings", "parse_mirrors": "settings", "torch_origin": "settings",
    "variant_of_index": "settings",
}

__all__ = [
    "ORIGIN_ENV",
    "Availability",
    "Closure",
    "LocalWheel",
    "Mirrors",
    "Offer",
    "Source",
    "SourceSettings",
    "availability",
    "candidates",
    "closure",
    "compatible_tags",
    "origin_url",
    "parse_mirrors",
    "scan",
    "torch_origin",
    "variant_of_index",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
