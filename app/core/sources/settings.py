"""Where packages may come from: the user's settings and the candidate sources they give.

:class:`SourceSettings` is the one shape of "where packages come from", from the user's word to
the record of what was installed: what the wizard's Environment page, the CLI (``--find-links``,
``--index-url``, ``--mirrors``, ``--proxy``, ``--ca-bundle``) and answer files (``[sources]``)
say; once planned, the resolved sources the install commands use (:attr:`InstallPlan.index
<app.core.install.request.InstallPlan.index>`: the torch index filled in from the recommendation,
a bundle's wheels, ``offline`` / ``require_hashes``); and, without credentials, what the registry
keeps of an environment (:mod:`app.core.env.registry`). :func:`candidates` turns it into the
ordered :class:`Source` list for one wheel variant:

1. the user's own index, when given (it then replaces the PyTorch server: "auto" never
   overrides an explicit choice), else the PyTorch server (the *origin*,
   ``download.pytorch.org/whl/<variant>/``);
2. the mirrors the user listed (catalogue ids or URLs), in their order (``"origin"`` in the
   list puts the first source at that place instead: a mirror the user chose comes first);
3. with ``mirrors = "auto"`` and no index of the user's: the catalogue's mirrors of
   ``download.pytorch.org`` that carry the variant (:mod:`app.core.sources.mirrors`), as fallbacks
   that are only asked when nothing before them is usable. A PyPI mirror is never a
   candidate for a torch build, and a catalogue mirror never for a variant it does not list.

``TORCH_SETUP_TORCH_INDEX`` replaces the origin (a URL with ``{variant}``, or a prefix to
which ``<variant>/`` is appended): for tests and labs with a full internal copy of the
PyTorch server. It never changes the pins (their local labels follow the real origin).
"""
from __future__ import annotations

import os
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from app.core.base.errors import BadInput
from app.core.base.locations import local_path
from app.core.base.text import Text, msg
from app.core.base.wheels import PYTORCH_INDEX
from app.core.net.indexes import display_url

if TYPE_CHECKING:  # start-up: the catalogue is read where mirrors are asked for, not where sources are named
    from app.core.sources.mirrors import MirrorCatalogue

__all__ = ["ORIGIN", "ORIGIN_ENV", "Mirrors", "Source", "SourceSettings", "candidates", "origin_url",
           "parse_mirrors", "python_mirror_env", "torch_origin", "variant_of_index"]

ORIGIN = PYTORCH_INDEX + "whl/{variant}/"
ORIGIN_ENV = "TORCH_SETUP_TORCH_INDEX"
Mirrors = str | tuple[str, ...]  # "auto" | "off" | catalogue ids and URLs
_WHL = re.compile(r"^https://download\.pytorch\.org/whl/([^/]+)/?$")


def origin_url(variant: str) -> str:
    """The PyTorch server's index of ``variant`` (or the ``TORCH_SETUP_TORCH_INDEX`` replacement)."""
    pattern = os.environ.get(ORIGIN_ENV, "").strip() or ORIGIN
    if "{variant}" not in pattern:
        pattern = pattern.rstrip("/") + "/{variant}/"
    return pattern.format(variant=variant)


def variant_of_index(index_url: str) -> str | None:
    """``https://download.pytorch.org/whl/cu130`` -> ``cu130``; another index -> None."""
    m = _WHL.match(index_url.strip())
    return m.group(1) if m else None


def torch_origin(index_url: str) -> str:
    """The index to use for a recommendation's ``index_url``: itself, or its replacement when
    ``TORCH_SETUP_TORCH_INDEX`` is set."""
    variant = variant_of_index(index_url)
    return origin_url(variant) if variant and os.environ.get(ORIGIN_ENV, "").strip() else index_url


def _catalogue() -> MirrorCatalogue:
    from app.core.sources.mirrors import default_catalogue

    return default_catalogue()


def parse_mirrors(value: object, catalogue: MirrorCatalogue | None = None) -> Mirrors:
    """``"auto"``, ``"off"``, or a list (or a comma-separated string) of catalogue ids / http(s) URLs."""
    if value is None or value == "":
        return "auto"
    if isinstance(value, str):
        word = value.strip().lower()
        if word in ("auto", "off"):
            return word
        items = [x.strip() for x in value.split(",") if x.strip()]
    elif isinstance(value, (list, tuple)) and all(isinstance(x, str) for x in value):
        items = [str(x).strip() for x in value if str(x).strip()]
    else:
        raise BadInput(f"mirrors must be \"auto\", \"off\" or a list of mirror ids or URLs, not {value!r}")
    cat = catalogue or _catalogue()
    known = sorted(m.id for m in cat.mirrors if m.kind in ("torch", "python"))
    for item in items:
        if item == "origin":  # the PyTorch server's place in the order (default: first)
            continue
        if item.startswith(("http://", "https://")):
            if not urllib.parse.urlsplit(item).netloc:
                raise BadInput(f"mirror {display_url(item)!r} is not a URL of the form https://host/...")
            continue
        try:
            m = cat.by_id(item)
        except KeyError:
            raise BadInput(f"{item!r} is not a mirror of the catalogue ({', '.join(known)}) nor an http(s) URL",
                           hint="See docs/mirrors.md for the mirrors and their ids.") from None
        if m.kind == "pypi":
            raise BadInput(f"{item!r} is a PyPI mirror: it holds no PyTorch builds of its own",
                           hint="Give it as the package mirror (--default-index-url / [sources] mirror) instead.")
    return tuple(items)


def python_mirror_env(mirrors: Mirrors, catalogue: MirrorCatalogue | None = None) -> dict[str, str]:
    """``UV_PYTHON_INSTALL_MIRROR`` when the mirrors list names a Python-builds mirror (for uv's
    own download of a Python the machine lacks); else nothing."""
    if not isinstance(mirrors, tuple):
        return {}
    cat = catalogue or _catalogue()
    for item in mirrors:
        if item.startswith(("http://", "https://")) or item == "origin":
            continue
        m = cat.by_id(item)
        if m.kind == "python":
            return {"UV_PYTHON_INSTALL_MIRROR": m.url.rstrip("/")}
    return {}


@dataclass(frozen=True)
class Source:
    """A place torch wheels may come from."""

    id: str  # "index" (the user's), "origin", a catalogue id, or "mirror-N" (a URL the user gave)
    name: Text  # what people see
    kind: Literal["user", "origin", "mirror"]
    url: str  # with {variant} when it serves several variants
    layout: Literal["pep503", "flat"] = "pep503"
    variants: tuple[str, ...] | None = None  # what a catalogue mirror lists; None: not known
    fallback: bool = False  # asked only when nothing before it is usable ("auto")

    def url_for(self, variant: str | None) -> str:
        return self.url.replace("{variant}", variant or "")

    def carries(self, variant: str | None) -> bool:
        return self.variants is None or (variant is not None and variant in self.variants)

    def label(self, variant: str | None = None) -> Text:
        """``NJU (PyTorch wheels) (https://…/cu130/)`` with the URL masked (a URL the user gave: itself)."""
        url = display_url(self.url_for(variant) if variant else self.url)
        if self.kind == "mirror" and self.id.startswith("mirror-"):
            return url
        return msg("sources.source_label", "{name} ({url})", name=self.name, url=url)


def _url_source(n: int, url: str) -> Source:
    layout: Literal["pep503", "flat"] = "flat" if url.rstrip("/").endswith(".html") else "pep503"
    return Source(f"mirror-{n}", display_url(url), "mirror", url, layout)


def _catalogue_source(cat: MirrorCatalogue, mirror_id: str, fallback: bool = False) -> Source | None:
    m = cat.by_id(mirror_id)
    if m.kind != "torch":
        return None
    layout: Literal["pep503", "flat"] = "flat" if m.layout == "flat" else "pep503"
    return Source(m.id, m.label, "mirror", m.url, layout, m.variants, fallback)


@dataclass(frozen=True)
class SourceSettings:
    """Where packages come from: wheel folders, a bundle, the indexes, mirrors, proxy and CA.

    The user's settings (the wizard, the CLI, answer files), the resolved sources of a plan
    (:attr:`~app.core.install.request.InstallPlan.index`) and the sources the registry keeps are
    this one type. Sequences are stored as tuples, wheel folders as strings, the bundle as a
    :class:`~pathlib.Path`.
    """

    torch_index: str | None = None  # the torch packages' index: the user's, replacing the origin (--index-url)
    default_index: str | None = None  # replaces PyPI for everything else: a PyPI mirror (--default-index-url)
    extra_index_urls: tuple[str, ...] = ()  # more indexes for the other packages
    find_links: tuple[str, ...] = ()  # wheel folders (or flat pages)
    bundle: Path | None = None  # an offline bundle folder
    mirrors: Mirrors = "auto"  # mirrors of the torch index: "auto", "off", or ids / URLs
    proxy: str | None = None  # else HTTPS_PROXY/HTTP_PROXY from the environment pass through
    ca_bundle: str | None = None  # a CA file, or "system" for the OS trust store
    offline: bool = False  # resolved: no index at all, the wheel folders only (a bundle, a wheelhouse)
    require_hashes: bool = False  # resolved: every file pinned by sha256 (a bundle, a lock, a wheelhouse)

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra_index_urls", tuple(str(u) for u in self.extra_index_urls))
        object.__setattr__(self, "find_links", tuple(os.fspath(f) for f in self.find_links))
        if self.bundle is not None and not isinstance(self.bundle, Path):
            object.__setattr__(self, "bundle", Path(self.bundle))
        if isinstance(self.mirrors, list):
            object.__setattr__(self, "mirrors", tuple(self.mirrors))

    @property
    def folders(self) -> tuple[str, ...]:
        """The local wheel folders: find-links folders (not URLs) and the bundle's wheels."""
        out = [f for f in map(local_path, self.find_links) if f is not None]
        if self.bundle is not None:
            out.append(str(Path(self.bundle) / "wheels"))
        return tuple(out)

    @property
    def constrains(self) -> bool:
        """The user named sources: what they hold bounds the recommendation."""
        return bool(self.folders or self.torch_index or isinstance(self.mirrors, tuple))


def candidates(settings: SourceSettings, index_url: str, *, catalogue: MirrorCatalogue | None = None,
               prefer_mirrors: bool = False) -> tuple[Source, ...]:
    """The ordered sources of the torch wheels the recommendation finds at ``index_url`` (see the
    module docstring). The origin is ``index_url`` itself unless it is one of the PyTorch
    server's variant indexes (then :func:`origin_url`); only those have mirrors.

    ``prefer_mirrors`` (the wizard under a Chinese locale, offering mirrors as a choice):
    the catalogue mirrors are candidates like the origin, not fallbacks."""
    cat = catalogue or _catalogue()
    variant = variant_of_index(index_url)
    out: list[Source] = []
    if settings.torch_index:
        first = Source("index", msg("sources.name_user", "your index"), "user", settings.torch_index)
    else:
        first = Source("origin", msg("sources.name_origin", "the PyTorch server"), "origin", torch_origin(index_url))
    listed = settings.mirrors if isinstance(settings.mirrors, tuple) else ()
    if "origin" not in listed:
        out.append(first)
    for n, item in enumerate(listed, start=1):
        if item == "origin":
            out.append(first)
            continue
        src = _url_source(n, item) if item.startswith(("http://", "https://")) else _catalogue_source(cat, item)
        if src is not None and src.carries(variant):
            out.append(src)
    if settings.mirrors == "auto" and not settings.torch_index and variant is not None:
        for m in cat.torch_mirrors_for(variant):
            src = _catalogue_source(cat, m.id, fallback=not prefer_mirrors)
            if src is not None and all(s.id != src.id for s in out):
                out.append(src)
    return tuple(out)
