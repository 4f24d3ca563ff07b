"""Is the compatibility data still current? ``torch-setup compat status``.

:func:`check` reads what the configured source lists (the PyTorch index's simple pages for
``torch``: ``{url}/torch/`` lists every build, else ``{url}/<variant>/torch/`` per variant; PEP
691 JSON where the server speaks it, HTML otherwise), reads each wheel file name with
:func:`app.core.base.wheels.parse_wheel`, and compares it with the data: new torch releases, new
patch releases, builds (variant x platform) the index has and the data does not, and builds the
data names that the index no longer lists. The result (:class:`Status`) is cached in the
per-user cache folder (``compat-status.json``).

What the engine does with it (:func:`with_discovered`): a release newer than the data becomes a
candidate whose builds INHERIT their facts from the newest known release: the same build when it
exists (cu132 of 2.16 is cu132 of 2.15), else the newest build of the same CUDA major or ROCm
line on that platform (cu134 of 2.16 takes the compute capabilities of cu132 of 2.15; its
driver floor is that of CUDA 13.x). Every such row is marked assumed, and every sentence that
uses it says so (:func:`app.core.recommend.explain.assumed_reasons`). A build whose CUDA major
has no driver floor in the data is not used at all. ``recommend --verified-only`` ignores them.
"""
from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from app.core.base.errors import BadInput
from app.core.base.schema import Record
from app.core.base.text import Text, msg
from app.core.base.wheels import parse_wheel
from app.core.compat.data import PLATFORMS, STATUS_CACHE, CompatData, Release, Variant, version_tuple

__all__ = ["CACHE_FILE", "Build", "NewRelease", "Status", "check", "compare", "load_status", "newer_note",
           "plan", "platform_of_tag", "save_status", "with_discovered", "wizard_notes"]

CACHE_FILE = STATUS_CACHE
JSON_TYPE = "application/vnd.pypi.simple.v1+json"
ACCEPT = f"{JSON_TYPE}, text/html;q=0.1"
_LABEL = re.compile(r"^(cpu|xpu|cu\d{3,4}|rocm\d+(?:\.\d+)*)$")
_RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")  # a final release: 2.16.0 (no rc, dev, post)
COMPARED_RELEASES = 3  # builds missing from the index are reported for the newest known releases only


def platform_of_tag(tag: str) -> str | None:
    """A wheel's platform tag in the data's words: ``manylinux_2_28_x86_64`` -> ``linux-x86_64``."""
    t = tag.lower()
    if t.startswith(("manylinux", "linux", "musllinux")):
        if t.endswith("x86_64"):
            return "linux-x86_64"
        if t.endswith("aarch64"):
            return "linux-aarch64"
        return None
    if t == "win_amd64":
        return "windows-x86_64"
    if t == "win_arm64":
        return "windows-arm64"
    if t.startswith("macosx"):
        return "macos-arm64" if t.endswith("arm64") else ("macos-x86_64" if t.endswith("x86_64") else None)
    return None


@dataclass(frozen=True)
class Build:
    """One build the index lists: a torch version, its variant, a platform, the Pythons it has."""

    version: str  # "2.16.0" (no local label)
    variant: str  # "cu134"
    platform: str  # "linux-x86_64"
    pythons: tuple[str, ...] = ()  # "3.12", ...

    @property
    def release(self) -> str:
        return ".".join(self.version.split(".")[:2])


@dataclass(frozen=True)
class NewRelease(Record):
    """A release the index lists and the data does not know."""

    torch: str  # "2.16"
    latest: str  # "2.16.0"
    builds: Mapping[str, tuple[str, ...]]  # platform -> variants
    pythons: tuple[str, ...] = ()


Triple = tuple[str, str, str]  # (release, variant, platform)


@dataclass(frozen=True)
class Status:
    """What the source listed against what the data knows (``compat status --json``)."""

    checked: str  # when (ISO 8601, UTC)
    url: str  # the source, as it may be shown
    data_version: str
    data_date: str
    new_releases: tuple[NewRelease, ...] = ()
    new_patches: tuple[Triple, ...] = ()  # (release, data's latest, index's latest)
    new_builds: tuple[Triple, ...] = ()  # (release, variant, platform) the index has, the data does not
    missing_builds: tuple[Triple, ...] = ()  # the data has, the index does not list
    missing_releases: tuple[str, ...] = ()  # known releases of which the index lists no file at all
    pages: tuple[str, ...] = ()  # the pages read
    errors: tuple[str, ...] = ()  # pages that could not be read (the check may still be partial)
    files: int = 0  # torch wheel files read

    @property
    def news(self) -> bool:
        return bool(self.new_releases or self.new_patches or self.new_builds or self.missing_builds
                    or self.missing_releases)

    @property
    def checked_day(self) -> str:
        return self.checked[:10]

    def to_dict(self) -> dict[str, Any]:
        return {"checked": self.checked, "url": self.url, "data_version": self.data_version,
                "data_date": self.data_date, "new_releases": [r.to_dict() for r in self.new_releases],
                "new_patches": [list(t) for t in self.new_patches], "new_builds": [list(t) for t in self.new_builds],
                "missing_builds": [list(t) for t in self.missing_builds],
                "missing_releases": list(self.missing_releases), "pages": list(self.pages),
                "errors": list(self.errors), "files": self.files, "up_to_date": not self.news}

    @classmethod
    def from_dict(cls, d: object) -> Status:
        if not isinstance(d, dict):
            raise ValueError("not a status object")

        def triples(key: str) -> tuple[Triple, ...]:
            return tuple((str(t[0]), str(t[1]), str(t[2])) for t in d.get(key) or [] if isinstance(t, list)
                         and len(t) == 3)

        return cls(checked=str(d["checked"]), url=str(d["url"]), data_version=str(d["data_version"]),
                   data_date=str(d.get("data_date", "")),
                   new_releases=tuple(NewRelease.from_dict(r) for r in d.get("new_releases") or []
                                      if isinstance(r, dict)),
                   new_patches=triples("new_patches"), new_builds=triples("new_builds"),
                   missing_builds=triples("missing_builds"),
                   missing_releases=tuple(str(x) for x in d.get("missing_releases") or []),
                   pages=tuple(str(x) for x in d.get("pages") or []),
                   errors=tuple(str(x) for x in d.get("errors") or []),
                   files=int(d.get("files") or 0))


# ------------------------------------------------------------------------------ reading the index

def _link_names(text: str) -> list[str]:
    """The file names a PEP 503 page links to (the link text, else the href's last part)."""
    import html.parser  # start-up: only `compat status` reads HTML pages

    class Links(html.parser.HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.names: list[str] = []
            self._href: str | None = None
            self._text: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "a":
                self._href = dict(attrs).get("href") or ""
                self._text = []

        def handle_data(self, data: str) -> None:
            if self._href is not None:
                self._text.append(data)

        def handle_endtag(self, tag: str) -> None:
            if tag == "a" and self._href is not None:
                shown = "".join(self._text).strip()
                href = self._href.split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
                self.names.append(shown if shown.endswith(".whl") else unquote(href))
                self._href = None

    parser = Links()
    parser.feed(text)
    parser.close()
    return parser.names


def file_names(body: bytes, content_type: str) -> list[str]:
    """The file names of a simple page, PEP 691 JSON or PEP 503 HTML."""
    if JSON_TYPE in content_type or content_type.startswith("application/json"):
        try:
            doc = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return []
        files = doc.get("files") if isinstance(doc, dict) else None
        return [str(f.get("filename")) for f in files or [] if isinstance(f, dict) and f.get("filename")]
    return _link_names(body.decode("utf-8", "replace"))


def builds_of(names: Iterable[str], page_variant: str | None = None) -> list[Build]:
    """The torch builds among ``names`` (final releases only; a file without a local label gets
    ``page_variant``, or is skipped)."""
    out: dict[tuple[str, str, str], set[str]] = {}
    for name in names:
        w = parse_wheel(name)
        if w is None or w.name != "torch":
            continue
        public, _, label = w.version.partition("+")
        variant = label or page_variant or ""
        if not _RELEASE.match(public) or not _LABEL.match(variant):
            continue
        for tag in w.tags:
            py, _abi, plat_tag = tag.split("-")
            plat = platform_of_tag(plat_tag)
            if plat is None:
                continue
            pys = out.setdefault((public, variant, plat), set())
            m = re.fullmatch(r"cp3(\d{1,2})", py)
            if m:
                pys.add(f"3.{m.group(1)}")
    return [Build(v, var, plat, tuple(sorted(pys, key=version_tuple))) for (v, var, plat), pys in sorted(out.items())]


def _variants_of_interest(data: CompatData) -> list[str]:
    names: list[str] = []
    for rel in data.releases[:COMPARED_RELEASES]:
        for v in rel.variants:
            if v.provider == "pytorch" and v.index_url.startswith(data.index_pattern.split("{", 1)[0]) \
                    and v.name not in names:
                names.append(v.name)
    return names


def _read(url: str, timeout: float, ca_bundle: str | None) -> tuple[list[str], str]:
    from app.core.net.client import Client  # start-up: urllib and ssl load only for `compat status`

    page = Client(ca_bundle=ca_bundle).fetch(url, accept=ACCEPT, deadline=timeout)
    return file_names(page.body, page.content_type), page.content_type


def read_index(base: str, data: CompatData, *, timeout: float = 15.0,
               ca_bundle: str | None = None) -> tuple[list[Build], list[str], list[str]]:
    """(builds, pages read, errors): ``{base}/torch/`` when it answers, else one page per variant
    (the data's, and any the root page lists)."""
    from app.core.net.client import NetError
    from app.core.net.indexes import display_url

    base = base.rstrip("/")
    pages: list[str] = []
    errors: list[str] = []
    try:
        names, _ = _read(f"{base}/torch/", timeout, ca_bundle)
        pages.append(display_url(f"{base}/torch/"))
        found = builds_of(names)
        if found:
            return found, pages, errors
    except NetError as exc:
        if exc.failure.status is None:  # the server cannot be reached at all: no point asking per variant
            raise
        errors.append(str(exc))
    variants = _variants_of_interest(data)
    try:
        root, _ = _read(f"{base}/", timeout, ca_bundle)
        variants += [n for n in root if _LABEL.match(n) and n not in variants]
    except NetError:
        pass  # the root is optional: the data's variants are asked for anyway
    builds: list[Build] = []
    for variant in variants:
        url = f"{base}/{variant}/torch/"
        try:
            names, _ = _read(url, timeout, ca_bundle)
        except NetError as exc:
            if exc.failure.status != 404:
                errors.append(str(exc))
            continue
        pages.append(display_url(url))
        builds += builds_of(names, variant)
    return builds, pages, errors


# ------------------------------------------------------------------------------ comparing

def compare(builds: list[Build], data: CompatData, *, url: str, pages: Iterable[str] = (),
            errors: Iterable[str] = (), now: datetime.datetime | None = None) -> Status:
    """What ``builds`` (read from ``url``) say about ``data``."""
    from app.core.net.indexes import display_url  # start-up: only when an index was read

    now = now or datetime.datetime.now(datetime.timezone.utc)
    known = {r.torch: r for r in data.releases}
    by_release: dict[str, list[Build]] = {}
    for b in builds:
        by_release.setdefault(b.release, []).append(b)
    new: list[NewRelease] = []
    patches: list[Triple] = []
    new_builds: list[Triple] = []
    missing: list[Triple] = []
    missing_rel: list[str] = []
    for torch, bs in sorted(by_release.items(), key=lambda kv: version_tuple(kv[0])):
        latest = max((b.version for b in bs), key=version_tuple)
        rel = known.get(torch)
        if rel is None:
            if version_tuple(torch) > version_tuple(data.newest.torch):
                plats: dict[str, list[str]] = {}
                for b in bs:
                    if b.version == latest and b.platform in PLATFORMS and b.variant not in plats.get(b.platform, []):
                        plats.setdefault(b.platform, []).append(b.variant)
                pys = sorted({p for b in bs if b.version == latest for p in b.pythons}, key=version_tuple)
                new.append(NewRelease(torch, latest, {k: tuple(sorted(v)) for k, v in sorted(plats.items())},
                                      tuple(pys)))
            continue
        if version_tuple(latest) > version_tuple(rel.latest):
            patches.append((torch, rel.latest, latest))
        have = {(b.variant, b.platform) for b in bs if b.platform in PLATFORMS}
        listed = {(v.name, p) for v in rel.variants if v.provider == "pytorch" for p in v.platforms}
        new_builds += [(torch, var, plat) for var, plat in sorted(have - listed)]
        if rel in data.releases[:COMPARED_RELEASES]:
            labelled = {(v.name, p) for v in rel.variants if v.provider == "pytorch" and _LABEL.match(v.name)
                        for p in v.platforms if p.startswith(("linux-", "windows-"))}
            missing += [(torch, var, plat) for var, plat in sorted(labelled - have)]
    for rel in data.releases[:COMPARED_RELEASES]:
        if rel.torch not in by_release:
            missing_rel.append(rel.torch)
            missing = [t for t in missing if t[0] != rel.torch]
    return Status(checked=now.replace(microsecond=0).isoformat(), url=display_url(url), data_version=data.version,
                  data_date=data.date, new_releases=tuple(new), new_patches=tuple(patches),
                  new_builds=tuple(new_builds), missing_builds=tuple(missing), missing_releases=tuple(missing_rel),
                  pages=tuple(pages), errors=tuple(errors), files=len(builds))


def check(data: CompatData, url: str | None = None, *, timeout: float = 15.0, ca_bundle: str | None = None,
          save: bool = True) -> Status:
    """Read the source (``url``, default ``[meta] status_url``), compare, and cache the result.

    Raises NetError when the source cannot be read at all, BadInput for a URL that is not one."""
    from app.core.net.client import Failure, NetError
    from app.core.net.indexes import display_url

    base = (url or data.status_url).strip()
    if not re.match(r"^https?://", base):
        raise BadInput(f"--index-url {display_url(base)!r} is not an http(s) URL",
                       hint="Give the index's base, e.g. https://download.pytorch.org/whl")
    builds, pages, errors = read_index(base, data, timeout=timeout, ca_bundle=ca_bundle)
    if not builds and errors:
        raise NetError(Failure("http", "; ".join(errors)))
    result = compare(builds, data, url=base, pages=pages, errors=errors)
    if save:
        save_status(result)
    return result


# ------------------------------------------------------------------------------ the cache

def _cache_path() -> Path:
    from app.core.base.paths import cache_dir

    return cache_dir() / CACHE_FILE


def save_status(result: Status) -> Path:
    path = _cache_path()
    from app.core.base.secrets import write_private

    write_private(path, json.dumps(result.to_dict(), indent=2))  # masked, mode 0600: it names the index
    return path


def load_status() -> Status | None:
    """The cached result of the last ``compat status`` (None when there is none or it is unreadable)."""
    from app.core.base.schema import read_state

    data = read_state(_cache_path(), what="the cached compat status").data  # a damaged one kept aside
    try:
        return Status.from_dict(data) if data is not None else None
    except (ValueError, KeyError, TypeError, AttributeError, BadInput):  # BadInput: a release of it, checked
        return None


# ------------------------------------------------------------------------------ what the engine does

@dataclass(frozen=True)
class Inherited:
    """How one new build would be used: like ``source`` of release ``like``, or not at all (``why``)."""

    torch: str
    variant: str
    platform: str
    like: tuple[Release, Variant] | None
    why: str = ""  # when not usable


def _source(data: CompatData, name: str, platform: str) -> tuple[Release, Variant] | None:
    """The known build a new ``name`` on ``platform`` takes its facts from (see the module docstring)."""
    for rel in data.releases:  # newest first
        same = [v for v in rel.variants_for(platform) if v.name == name and v.provider == "pytorch"]
        if same:
            return rel, same[0]
    m = re.fullmatch(r"cu(\d\d)(\d)", name)
    for rel in data.releases:
        here = [v for v in rel.variants_for(platform) if v.provider == "pytorch"]
        if m:
            major = int(m.group(1))
            cands = [v for v in here if v.backend == "cuda" and v.cuda_major == major]
            if cands:
                return rel, max(cands, key=lambda v: version_tuple(v.cuda or "0"))
        elif name.startswith("rocm"):
            cands = [v for v in here if v.backend == "rocm"]
            if cands:
                return rel, max(cands, key=lambda v: version_tuple(v.rocm or "0"))
    return None


def inherit(data: CompatData, new: NewRelease) -> list[Inherited]:
    out: list[Inherited] = []
    for plat, names in new.builds.items():
        for name in names:
            m = re.fullmatch(r"cu(\d\d)(\d)", name)
            if m and int(m.group(1)) not in data.driver_floors:
                out.append(Inherited(new.torch, name, plat, None, f"no driver floor is known for CUDA {m.group(1)}.x"))
                continue
            src = _source(data, name, plat)
            out.append(Inherited(new.torch, name, plat, src, "" if src else "no known build of this kind"))
    return out


def _variant(data: CompatData, inh: Inherited, found_at: str, found_on: str) -> Variant:
    assert inh.like is not None
    rel, src = inh.like
    kw: dict[str, Any] = {}
    m = re.fullmatch(r"cu(\d\d)(\d)", inh.variant)
    if m:
        kw["cuda"] = f"{int(m.group(1))}.{m.group(2)}"
    rm = re.fullmatch(r"rocm(\d+(?:\.\d+)*)", inh.variant)
    if rm:
        kw["rocm"] = rm.group(1)
    like = f"the {src.name} build of torch {rel.torch}"
    return replace(src, name=inh.variant, platforms=(inh.platform,),
                   index_url=data.index_pattern.format(variant=inh.variant),
                   source=f"found on {found_at} on {found_on}; facts inherited from torch {rel.torch} {src.name}",
                   assumed=f"found on the index, facts of {like}", like=like, **kw)


def with_discovered(data: CompatData, status: Status | None) -> CompatData:
    """``data`` plus the releases ``status`` found that are newer than it, with inherited, assumed
    facts. Unchanged when there are none (or the data has caught up with them)."""
    if status is None:
        return data
    newest = version_tuple(data.newest.torch)
    base = data.newest
    added: list[Release] = []
    for new in status.new_releases:
        if version_tuple(new.torch) <= newest or data.release(new.torch) is not None:
            continue
        variants = tuple(_variant(data, inh, status.url, status.checked_day) for inh in inherit(data, new)
                         if inh.like is not None)
        if not variants:
            continue
        pys = new.pythons
        lo, hi = (pys[0], pys[-1]) if pys else (base.python_min, base.python_max)
        added.append(Release(torch=new.torch, latest=new.latest, date=status.checked_day, python_min=lo,
                             python_max=hi, glibc_min=base.glibc_min,
                             source=f"found on {status.url} on {status.checked_day} (compat status); not in the data",
                             pypi_default={}, companions={k: "" for k in base.companions},
                             companions_source="not known for a release found on the index", variants=variants,
                             assumed=f"found on the index on {status.checked_day}", found_at=status.url,
                             found_on=status.checked_day))
    if not added:
        return data
    releases = tuple(sorted(added + list(data.releases), key=lambda r: r.key, reverse=True))
    return replace(data, releases=releases)


def plan(status: Status, data: CompatData) -> list[Text]:
    """What the engine will do with what ``status`` found, one sentence each."""
    out: list[Text] = []
    for new in status.new_releases:
        for inh in inherit(data, new):
            if inh.like is None:
                out.append(msg("compat.plan_unused", "torch {torch} {variant} ({platform}) will not be used: {why}.",
                               torch=new.latest, variant=inh.variant, platform=inh.platform, why=inh.why))
                continue
            rel, src = inh.like
            facts = (f"compute capability {src.arch[0]}–{src.arch[-1]}" if src.arch else
                     (f"{', '.join(src.gfx)}" if src.gfx else ""))
            floor = data.driver_floors.get(int(inh.variant[2:-1])) if inh.variant.startswith("cu") else None
            if floor is not None:
                out.append(msg("compat.plan_cuda", "torch {torch} {variant} ({platform}) is used with facts assumed "
                               "from the {source} build of torch {from_torch}: {facts}, NVIDIA driver {floor} or "
                               "newer ({floor_windows} on Windows).", torch=new.latest, variant=inh.variant,
                               platform=inh.platform, source=src.name, from_torch=rel.torch, facts=facts,
                               floor=floor.linux, floor_windows=floor.windows))
            else:
                out.append(msg("compat.plan_other", "torch {torch} {variant} ({platform}) is used with facts assumed "
                               "from the {source} build of torch {from_torch}.", torch=new.latest,
                               variant=inh.variant, platform=inh.platform, source=src.name, from_torch=rel.torch))
    for torch, _old, new_patch in status.new_patches:
        out.append(msg("compat.plan_patch", "torch {patch} is newer than the data's {torch} patch: the engine keeps "
                       "installing the patch the data names until the data is refreshed.", patch=new_patch,
                       torch=torch))
    if status.new_builds or status.missing_builds:
        out.append(msg("compat.plan_known", "Builds of known releases that the index adds or no longer lists are not "
                       "used differently: the data decides for them until it is refreshed (torch-setup compat "
                       "refresh)."))
    return out


def wizard_notes() -> list[Text]:
    """The wizard's line on newer releases (empty when the cached status knows of none)."""
    from app.core.compat.data import load_compat

    try:
        note = newer_note(load_compat())
    except BadInput:
        return []
    return [note] if note is not None else []


def newer_note(data: CompatData, status: Status | None = None) -> Text | None:
    """One line for the wizard when the cached status knows of releases newer than ``data``."""
    status = status if status is not None else load_status()
    if status is None:
        return None
    newer = [r.latest for r in status.new_releases if version_tuple(r.torch) > version_tuple(data.newest.torch)]
    if not newer:
        return None
    return msg("compat.newer_known", "The PyTorch index listed newer releases than this data on {day}: torch "
               "{versions}. Their facts are assumed until the data is refreshed.", day=status.checked_day,
               versions=", ".join(newer))
