"""The mirror catalogue: where else PyPI packages, PyTorch wheels and uv's Python builds can come from.

``resources/mirrors.toml`` is DATA: one ``[[mirror]]`` table per mirror, each with its sources
and the date it was checked (docs/mirrors.md says how to add one). :func:`load_mirrors` reads it
into frozen :class:`Mirror` rows and refuses a malformed file with :class:`BadInput` naming the
file, the row and the field. Lookups:

* :meth:`MirrorCatalogue.torch_mirrors_for` — mirrors of ``download.pytorch.org/whl/<variant>``
  that carry the variant (a mirror is never offered for a variant it does not list);
* :meth:`MirrorCatalogue.pypi_mirrors` — PyPI mirrors (they carry only PyPI's own torch builds);
* :meth:`MirrorCatalogue.python_mirrors` — mirrors of python-build-standalone, for
  ``UV_PYTHON_INSTALL_MIRROR``.

The catalogue only says what a mirror CLAIMS to carry and what its users have reported; whether
it really holds an exact file today is for the caller to verify before use. Notes and known
problems are codes here; their sentences are :class:`Msg` texts (``mirrors.*``) so presenters
render them in the user's language.
"""
from __future__ import annotations

import datetime as _dt
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal, NoReturn, cast

from app.core.base.errors import BadInput
from app.core.base.paths import resources_dir
from app.core.base.schema import MESSAGES, bad_field, document, must_be
from app.core.base.text import Joined, Msg, Named, Text, join, msg, texts
from app.core.base.wheels import variant_of_version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "KINDS",
    "LAYOUTS",
    "NOTE_CODES",
    "PROBLEM_KINDS",
    "KnownProblem",
    "Mirror",
    "MirrorCatalogue",
    "default_catalogue",
    "describe",
    "load_mirrors",
    "mirrors_file",
    "pypi_mirrors",
    "python_mirrors",
    "torch_mirrors_for",
]

Kind = Literal["pypi", "torch", "python"]
Layout = Literal["pep503", "flat", "github-release"]
KINDS: tuple[Kind, ...] = ("pypi", "torch", "python")
LAYOUTS: tuple[Layout, ...] = ("pep503", "flat", "github-release")
# which layouts each kind may have: package indexes are PEP 503 pages or flat find-links pages;
# Python builds are a release folder (<tag>/<file>, what UV_PYTHON_INSTALL_MIRROR replaces)
_KIND_LAYOUTS: dict[str, tuple[str, ...]] = {
    "pypi": ("pep503",), "torch": ("pep503", "flat"), "python": ("github-release",)}

MAX_BYTES = 1_000_000  # the real file is a few KB; anything this large is not ours
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,40}$")
_REGION = re.compile(r"^[A-Z]{2}$")
_URL = re.compile(r"^https://[A-Za-z0-9.-]+(:\d+)?(/[^\s{}]*(\{variant\}[^\s{}]*)?)?$")
# owner/repo#123, owner/repo@abc1234 path/inside, or a web address
_CITATION = re.compile(r"^([\w.-]+/[\w.-]+(#\d+|@[0-9a-f]{7,40}( \S.*)?)|https?://\S+)$")


# ------------------------------------------------------------------------------- sentences
# note code -> its sentence (rendered per language by the presenter)
_NOTES = texts("mirrors.note_", {
    "pypi_default_build_only": "{mirror} mirrors PyPI, which holds only one torch build per release (CUDA on Linux, "
                               "CPU on Windows and macOS): it cannot serve the other variants of download.pytorch.org.",
    "flat_layout": "{mirror} lists each variant's files on one page (a find-links page, not a package index): "
                   "installers use it with --find-links, and torch's dependencies come from a package index.",
    "python_install_mirror": "{mirror} mirrors the Python builds uv downloads: uv uses it through "
                             "UV_PYTHON_INSTALL_MIRROR.",
})

# problem kind -> its sentence
_PROBLEMS = texts("mirrors.problem_", {
    "stale_sync": "{mirror} has fallen behind its upstream before: the newest builds may be missing.",
    "redirects_to_origin": "{mirror} has sent downloads back to the original server before, so it was no faster than "
                           "the origin.",
    "missing_variants": "{mirror} has lacked whole variants before (for example a new CUDA version).",
    "forbidden_files": "{mirror} has refused single files with 403 Forbidden before, which stops a whole install.",
    "blocks_clients": "{mirror} has refused some installers by their User-Agent before (403), which installers report "
                      "as \"no matching version\".",
    "prunes_old_releases": "{mirror} keeps only recent releases: an older uv asks for files it has deleted (404).",
    "slow": "{mirror} has been very slow for some users.",
    "outage": "{mirror} has been unreachable for a while before.",
    "root_index_unusable": "{mirror}'s combined index (without a variant) has been reported unusable; use one "
                           "variant's index.",
})

NOTE_CODES = frozenset(_NOTES)
PROBLEM_KINDS = frozenset(_PROBLEMS)


# ------------------------------------------------------------------------------ the rows
@dataclass(frozen=True)
class KnownProblem:
    """Something users of a mirror reported, with its sources; ``fixed`` when it was resolved."""

    kind: str  # one of PROBLEM_KINDS
    source: tuple[str, ...]
    detail: str = ""  # maintainers' English: what exactly happened (docs and logs, not the UI)
    reported: _dt.date | None = None
    fixed: _dt.date | None = None

    def text(self, mirror: Mirror) -> Text:
        """The user-facing sentence, with when it was reported and fixed."""
        parts: list[Text] = [_PROBLEMS.msg(self.kind, mirror=mirror.label)]
        if self.reported is not None:
            parts.append(msg("mirrors.reported_on", "(reported {date})", date=self.reported.isoformat()))
        if self.fixed is not None:
            parts.append(msg("mirrors.fixed_on", "(fixed {date})", date=self.fixed.isoformat()))
        return join(parts, " ")


@dataclass(frozen=True)
class Mirror:
    """One mirror. ``url`` of a torch mirror holds ``{variant}`` (use :meth:`url_for`)."""

    id: str
    name: str  # in English (the name the mirror gives itself in English)
    kind: Kind
    url: str
    layout: Layout
    variants: tuple[str, ...]  # torch mirrors only: the wheel indexes it carries (cpu, cu128, ...)
    region: str  # ISO 3166 code of where it serves best ("CN")
    notes: tuple[str, ...]  # NOTE_CODES
    known_problems: tuple[KnownProblem, ...]
    source: tuple[str, ...]
    checked: _dt.date
    name_zh: str = ""  # its name in Chinese ("南京大学"), shown on Chinese screens

    @property
    def label(self) -> Named:
        """The name as people see it, in their language."""
        return Named(self.name, (("zh_CN", self.name_zh),) if self.name_zh else ())

    def carries(self, variant: str) -> bool:
        return self.kind == "torch" and variant in self.variants

    def url_for(self, variant: str | None = None) -> str:
        """The index (or find-links page, or release folder) URL; torch mirrors need the variant."""
        if self.kind != "torch":
            return self.url
        if variant is None or not self.carries(variant):
            raise ValueError(f"{self.id} does not carry the variant {variant!r}")
        return self.url.replace("{variant}", variant)

    @property
    def open_problems(self) -> tuple[KnownProblem, ...]:
        return tuple(p for p in self.known_problems if p.fixed is None)

    def note_texts(self) -> tuple[Msg, ...]:
        return tuple(_NOTES.msg(code, mirror=self.label) for code in self.notes)

    def problem_texts(self, *, include_fixed: bool = False) -> tuple[Text, ...]:
        chosen = self.known_problems if include_fixed else self.open_problems
        return tuple(p.text(self) for p in chosen)


@dataclass(frozen=True)
class MirrorCatalogue:
    mirrors: tuple[Mirror, ...]
    path: Path

    def by_id(self, mirror_id: str) -> Mirror:
        for m in self.mirrors:
            if m.id == mirror_id:
                return m
        raise KeyError(mirror_id)

    def torch_mirrors_for(self, variant: str) -> tuple[Mirror, ...]:
        """Mirrors of download.pytorch.org that list ``variant``, in the file's order."""
        return tuple(m for m in self.mirrors if m.carries(variant))

    def pypi_mirrors(self) -> tuple[Mirror, ...]:
        return tuple(m for m in self.mirrors if m.kind == "pypi")

    def python_mirrors(self) -> tuple[Mirror, ...]:
        return tuple(m for m in self.mirrors if m.kind == "python")


# ------------------------------------------------------------------------------- loading
def mirrors_file() -> Path:
    return resources_dir() / "mirrors.toml"


@lru_cache(maxsize=1)
def default_catalogue() -> MirrorCatalogue:
    """The shipped catalogue, read once."""
    return load_mirrors(mirrors_file())


def torch_mirrors_for(variant: str) -> tuple[Mirror, ...]:
    return default_catalogue().torch_mirrors_for(variant)


def pypi_mirrors() -> tuple[Mirror, ...]:
    return default_catalogue().pypi_mirrors()


def python_mirrors() -> tuple[Mirror, ...]:
    return default_catalogue().python_mirrors()


def _hint() -> Msg:
    return msg("mirrors.fix_hint", "Fix that row as docs/mirrors.md describes, or reinstall the assistant to restore "
               "the file.")


def load_mirrors(path: Path) -> MirrorCatalogue:
    """Read and validate a mirror catalogue; a bad file raises BadInput naming file, row and field."""
    shown = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BadInput(msg("mirrors.file_unreadable", "Cannot read the mirror catalogue {path}: {reason}.",
                           path=shown, reason=exc.strerror or str(exc)), hint=_hint()) from None
    if len(raw) > MAX_BYTES:
        raise BadInput(msg("mirrors.file_too_large",
                           "The mirror catalogue {path} is larger than {limit} bytes.",
                           path=shown, limit=MAX_BYTES), hint=_hint())
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
        raise BadInput(msg("mirrors.file_invalid", "The mirror catalogue {path} is not valid TOML: {reason}.",
                           path=shown, reason=str(exc) or type(exc).__name__), hint=_hint()) from None
    rows = data.get("mirror")
    if not isinstance(rows, list) or not rows:
        raise BadInput(msg("mirrors.no_rows", "The mirror catalogue {path} lists no [[mirror]] tables.",
                           path=shown), hint=_hint())
    unknown_top = sorted(k for k in data if k not in ("mirror", "schema_version"))
    if unknown_top:
        raise BadInput(msg("mirrors.unknown_top", "The mirror catalogue {path} has unknown keys: {keys}.",
                           path=shown, keys=unknown_top), hint=_hint())
    mirrors: list[Mirror] = []
    seen: set[str] = set()
    for number, row in enumerate(rows, start=1):
        mirror = _Row(shown, number, row).mirror()
        if mirror.id in seen:
            _Row(shown, number, row).fail("id", msg("mirrors.field_duplicate", "is used by an earlier row"))
        seen.add(mirror.id)
        mirrors.append(mirror)
    return MirrorCatalogue(tuple(mirrors), path)


_FIELDS = frozenset({"id", "name", "name_zh", "kind", "url", "layout", "variants", "region", "notes", "known_problems",
                     "source", "checked"})
_PROBLEM_FIELDS = frozenset({"kind", "source", "detail", "reported", "fixed"})


class _Row:
    """Validation of one [[mirror]] table; every failure names the file, the row and the field."""

    def __init__(self, path: str, number: int, row: object) -> None:
        self.path = path
        self.number = number
        self.row: Mapping[str, object] = row if isinstance(row, dict) else {}
        ident = self.row.get("id")
        self.label = ident if isinstance(ident, str) and ident else "?"
        if not isinstance(row, dict):
            self.fail("mirror", msg("mirrors.field_not_table", "must be a table"))

    def fail(self, field: str, problem: Text) -> NoReturn:
        """The error of a bad field (:func:`app.core.base.schema.bad_field`): the file, the row
        (its number and id), the field's path (``mirror[1].known_problems[0].kind``), the problem."""
        what = msg("mirrors.row", "{document} (mirror {row}, {id})", document=document("mirrors", self.path),
                   row=self.number, id=self.label)
        raise bad_field(what, f"mirror[{self.number - 1}].{field}", problem, hint=_hint())

    def wrong_type(self, field: str, expected: str, value: object) -> NoReturn:
        self.fail(field, must_be(expected, value))

    # -- readers: (field label, table) -> a checked value
    def text(self, field: str, table: Mapping[str, object], label: str = "", *, required: bool = True,
             pattern: re.Pattern[str] | None = None) -> str:
        label = label or field
        if field not in table:
            if required:
                self.fail(label, MESSAGES.msg("missing"))
            return ""
        value = table[field]
        if not isinstance(value, str):
            self.wrong_type(label, "text", value)
        if required and not value.strip():
            self.fail(label, msg("mirrors.field_empty", "is empty"))
        if pattern is not None and not pattern.match(value):
            self.fail(label, msg("mirrors.field_format", "has a wrong form: {value}", value=value))
        return value

    def choice(self, field: str, allowed: tuple[str, ...] | frozenset[str], table: Mapping[str, object],
               label: str = "") -> str:
        value = self.text(field, table, label)
        if value not in allowed:
            self.fail(label or field, msg("mirrors.field_choice", "must be one of {allowed}, not {value}",
                                          allowed=sorted(allowed), value=value))
        return value

    def texts(self, field: str, table: Mapping[str, object], label: str = "", *,
              required: bool = True) -> tuple[str, ...]:
        label = label or field
        if field not in table:
            if required:
                self.fail(label, MESSAGES.msg("missing"))
            return ()
        value = table[field]
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            self.wrong_type(label, "list", value)
        out = tuple(cast(list[str], value))
        if len(set(out)) != len(out):
            self.fail(label, msg("mirrors.field_repeats", "lists a value twice"))
        return out

    def citations(self, table: Mapping[str, object], label: str = "source") -> tuple[str, ...]:
        cites = self.texts("source", table, label)
        if not cites:
            self.fail(label, msg("mirrors.field_no_source", "needs at least one source"))
        for c in cites:
            if not _CITATION.match(c):
                self.fail(label, msg("mirrors.field_citation",
                                     "has a citation that is neither owner/repo#N, owner/repo@commit path nor a "
                                     "web address: {value}", value=c))
        return cites

    def date(self, field: str, table: Mapping[str, object], label: str = "", *,
             required: bool = True) -> _dt.date | None:
        label = label or field
        if field not in table:
            if required:
                self.fail(label, MESSAGES.msg("missing"))
            return None
        value = table[field]
        if not isinstance(value, _dt.date) or isinstance(value, _dt.datetime):
            self.wrong_type(label, "date", value)
        return value

    # -- the row
    # long: every field of a row in the order docs/mirrors.md lists them, each with its rule
    def mirror(self) -> Mirror:
        row = self.row
        unknown = sorted(k for k in row if k not in _FIELDS)
        if unknown:
            self.fail(unknown[0], msg("mirrors.field_unknown", "is not a field of a mirror row"))
        mirror_id = self.text("id", row, pattern=_ID)
        name = self.text("name", row)
        name_zh = self.text("name_zh", row, required=False)
        kind = cast(Kind, self.choice("kind", KINDS, row))
        url = self.text("url", row, pattern=_URL)
        layout = cast(Layout, self.choice("layout", LAYOUTS, row))
        if layout not in _KIND_LAYOUTS[kind]:
            self.fail("layout", msg("mirrors.field_layout_kind", "cannot be {layout} for a {kind} mirror",
                                    layout=layout, kind=kind))
        variants = self.texts("variants", row, required=kind == "torch")
        if kind == "torch":
            if not variants:
                self.fail("variants", msg("mirrors.field_no_variants",
                                          "must list the variants a torch mirror carries"))
            for v in variants:
                # the one reading of variant names: app.core.base.wheels (a "+<variant>" local label)
                if variant_of_version(f"0+{v}") != v:
                    self.fail("variants", msg("mirrors.field_variant",
                                              "names {value}, which is not a PyTorch wheel variant", value=v))
            if url.count("{variant}") != 1:
                self.fail("url", msg("mirrors.field_url_variant", "of a torch mirror must hold {{variant}} once"))
        else:
            if variants:
                self.fail("variants", msg("mirrors.field_variants_not_torch",
                                          "is only for torch mirrors (a {kind} mirror carries no wheel variant)",
                                          kind=kind))
            if "{variant}" in url:
                self.fail("url", msg("mirrors.field_url_no_variant", "of a {kind} mirror cannot hold {{variant}}",
                                     kind=kind))
        region = self.text("region", row, pattern=_REGION)
        notes = self.texts("notes", row, required=False)
        for code in notes:
            if code not in NOTE_CODES:
                self.fail("notes", msg("mirrors.field_choice", "must be one of {allowed}, not {value}",
                                       allowed=sorted(NOTE_CODES), value=code))
        problems = self.problems()
        source = self.citations(row)
        checked = self.date("checked", row)
        assert checked is not None
        return Mirror(id=mirror_id, name=name, kind=kind, url=url, layout=layout, variants=variants, region=region,
                      notes=notes, known_problems=problems, source=source, checked=checked, name_zh=name_zh)

    def problems(self) -> tuple[KnownProblem, ...]:
        value = self.row.get("known_problems", [])
        if not isinstance(value, list):
            self.wrong_type("known_problems", "list", value)
        out = []
        for i, item in enumerate(value):
            label = f"known_problems[{i}]"
            if not isinstance(item, dict):
                self.fail(label, msg("mirrors.field_not_table", "must be a table"))
            unknown = sorted(k for k in item if k not in _PROBLEM_FIELDS)
            if unknown:
                self.fail(f"{label}.{unknown[0]}", msg("mirrors.field_unknown_problem",
                                                       "is not a field of a known problem"))
            kind = self.choice("kind", PROBLEM_KINDS, item, f"{label}.kind")
            detail = self.text("detail", item, f"{label}.detail", required=False)
            source = self.citations(item, f"{label}.source")
            reported = self.date("reported", item, f"{label}.reported", required=False)
            fixed = self.date("fixed", item, f"{label}.fixed", required=False)
            if reported is not None and fixed is not None and fixed < reported:
                self.fail(f"{label}.fixed", msg("mirrors.field_fixed_before", "is before the date it was reported"))
            out.append(KnownProblem(kind=kind, source=source, detail=detail, reported=reported, fixed=fixed))
        return tuple(out)


def describe(mirror: Mirror) -> Joined:
    """Notes and open problems of a mirror, one sentence after another (for plans and the wizard)."""
    return join([*mirror.note_texts(), *mirror.problem_texts()], " ")
