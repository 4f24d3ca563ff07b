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
