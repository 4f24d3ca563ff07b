"""Reading and writing documents: bounded in size, depth and number size, typed field by field.

The one way every document of the assistant is read and validated, whoever wrote it: the
SystemReport (:mod:`app.core.detection.system`), answer files (:mod:`app.core.pipeline.answers`),
the list of environments (:mod:`app.core.env.registry`), locks (:mod:`app.core.pylock.lockfile`),
bundle manifests (:mod:`app.core.install.bundle`), the compatibility data
(:mod:`app.core.compat.data`), the mirror catalogue (:mod:`app.core.sources.mirrors`), the
probe cache and the upgrade journal. A bad field is refused with ONE error everywhere, a
:class:`~app.core.base.errors.BadInput` (exit 2) in English and Chinese that names the document
and its file, the field by its path and what was expected (:func:`bad_field`)::

    list of environments /home/a/.local/share/torch-setup/environments.json:
        'environments[3].sources.find_links[0]' must be a text, not the number 5

Every check costs time and memory linear in the input:

* :func:`read_text`: at most :data:`MAX_FILE_BYTES` are read (``/dev/zero`` stops there),
  UTF-8 (a BOM is fine) or UTF-16 / UTF-32 with a BOM (what Windows editors and PowerShell
  redirection write); anything else is refused with the offending byte's offset;
* :func:`parse_json`: at most :data:`MAX_DEPTH` levels of nesting; ``NaN`` / ``Infinity`` and
  numbers over :data:`MAX_NUMBER_CHARS` characters (Python refuses integers over 4,300 digits
  only after the work) are read as :class:`BadNumber`, which every typed reader refuses naming
  the field (``'files[0].size' must be a whole number, not Infinity``);
* :class:`Fields`: typed readers over one JSON object (``text``, ``integer``, ``flag``,
  ``items`` ...), each refusing the wrong type instead of coercing it (``"wsl": "false"`` is
  false, never truthy);
* :func:`read_state`: one of the assistant's OWN JSON files (a cache, a journal, a record it
  keeps): the same bounds, never raised: a damaged one (not UTF-8, not JSON, nested too deeply,
  too large, not an object) is kept, renamed beside it (:func:`set_aside`), and the caller is
  told why and where, so every command goes on as if the file were not there.
* :class:`Record`: a frozen dataclass whose JSON form is its fields: ``to_dict`` writes them in
  order (tuples as lists, paths as text, enums as their value, nested records as objects) and
  ``from_dict`` reads them back by their annotations (text, whole numbers, numbers, flags,
  ``X | None``, tuples and lists, mappings, enums, literals, paths, nested dataclasses), with
  bounds, JSON names and older names given per field (:func:`spec`).

Start-up: importing this module costs well under a millisecond (measured in docs/DECISIONS.md);
the annotations of a record are read on its first use, once.
"""
from __future__ import annotations

import codecs
import dataclasses
import enum
import json
import math
import os
import time
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any, TypeVar

from app.core.base.errors import BadInput, Hint
from app.core.base.text import Msg, Text, texts

__all__ = ["DOCUMENTS", "MAX_DEPTH", "MAX_FILE_BYTES", "MAX_NUMBER_CHARS", "MAX_STATE_BYTES", "NAME_MAX", "PATH_MAX",
           "BadNumber", "Fields", "Record", "Spec", "StateFile", "bad_field", "check_depth", "decode_text", "describe",
           "described", "document", "dump", "parse_json", "path_problem", "read_state", "read_text",
           "set_aside", "spec"]

MAX_FILE_BYTES = 16 * 1024 * 1024
#: The assistant's own files (the list of environments, caches, journals) are small; a larger one is damaged.
MAX_STATE_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 32
MAX_NUMBER_CHARS = 40

_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


#: The one shape of a refused field, and its parts (``schema.*`` in the catalogues).
MESSAGES = texts("schema.", {
    "bad_field": "{what}: '{field}' {problem}",
    "bad_field_line": "{what}, line {line}: '{field}' {problem}",
    "bad_top": "{what}: the top level {problem}",
    "must_be": "must be {expected}, not {got}",
    "missing": "is missing",
    "too_long": "is {count} characters long; at most {limit}",
    "out_of_range": "is {value}; it must be within {lo}..{hi}",
    "too_many": "has {count} entries; at most {limit} are allowed",
    "not_one_of": "is {value}; it must be one of {choices}",
    "too_deep": "is nested more than {limit} levels deep",
    "not_json": "{what} is not valid JSON (line {line}: {reason})",
})
#: What a field must be (the ``{expected}`` of ``schema.must_be``).
EXPECTED = texts("schema.expect_", {
    "text": "a text",
    "text_or_number": "a text or a number",
    "whole_number": "a whole number",
    "number": "a number",
    "flag": "true or false",
    "list": "a list",
    "object": "an object",
    "object_or_text": "an object or a text",
    "date": "a date (2026-12-01)",
})
#: What a field was instead (the ``{got}``: :func:`described`).
GOT = texts("schema.got_", {
    "null": "null",
    "flag": "the flag {value}",
    "number": "the number {value}",
    "text": "the text {value}",
    "list": "a list of {count}",
    "object": "an object",
    "date": "the date {value}",
    "other": "a {kind}",
})
#: The documents, as an error names them (:func:`document`).
DOCUMENTS = texts("schema.doc_", {
    "report": "system report",
    "answers": "answer file",
    "registry": "list of environments",
    "lock": "lock",
    "compat": "compatibility data",
    "mirrors": "mirror catalogue",
    "manifest": "bundle manifest",
    "probe_cache": "probe cache",
    "journal": "upgrade journal",
    "session": "session report",
    "fleet": "fleet plan",
    "data": "the data",
    "in_file": "{document} {file}",
})


def document(kind: str, file: str | os.PathLike[str] | None = None) -> Msg:
    """How an error names a document: ``document("registry", path)`` -> "list of environments <path>"."""
    name = DOCUMENTS.msg(kind)
    return name if file is None else DOCUMENTS.msg("in_file", document=name, file=os.fspath(file))


def bad_field(what: Text, field: str, problem: Text, *, line: int | None = None, hint: Hint = "") -> BadInput:
    """The one error of a bad field: ``<what>: '<field>' <problem>`` (``what``: :func:`document`;
    ``field``: its path, ``environments[3].sources.find_links[0]``; ``line``: where a text format
    has lines). Exit 2."""
    if not field:
        return BadInput(MESSAGES.msg("bad_top", what=what, problem=problem), hint=hint)
    if line is not None:
        return BadInput(MESSAGES.msg("bad_field_line", what=what, line=line, field=field, problem=problem), hint=hint)
    return BadInput(MESSAGES.msg("bad_field", what=what, field=field, problem=problem), hint=hint)


def must_be(expected: str, value: object) -> Msg:
    """``must be <expected>, not <value>`` (``expected``: a name of :data:`EXPECTED`)."""
    return MESSAGES.msg("must_be", expected=EXPECTED.msg(expected), got=described(value))


def not_one_of(value: object, choices: Sequence[str]) -> Msg:
    return MESSAGES.msg("not_one_of", value=_short(repr(value)), choices=", ".join(choices))


NAME_MAX = 255  # bytes in one file or folder name (Linux, macOS; Windows: 255 characters)
PATH_MAX = 4095


def path_problem(value: str) -> str | None:
    """Why ``value`` cannot be a path on any system we run on (NUL, a name over 255 bytes, over
    4,095 bytes in all), or None. Checked before the file system is asked (it answers with an
    OSError, ENAMETOOLONG, from deep inside a later step)."""
    if "\x00" in value:
        return "the path holds a NUL character"
    raw = value.encode("utf-8", "surrogatepass")
    if len(raw) > PATH_MAX:
        return f"the path is {len(raw)} bytes long; the limit is {PATH_MAX}"
    for part in raw.replace(b"\\", b"/").split(b"/"):
        if len(part) > NAME_MAX:
            return (f"the name {_short(part.decode('utf-8', 'replace'), 60)!r} in the path is {len(part)} bytes long; "
                    f"a file or folder name can have at most {NAME_MAX}")
    return None


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def described(value: object) -> Text:
    """A value as an error message shows it: its JSON type and (the start of) the value."""
    import datetime

    if value is None:
        return GOT.msg("null")
    if isinstance(value, BadNumber):
        return value.text
    if isinstance(value, bool):
        return GOT.msg("flag", value=str(value).lower())
    if isinstance(value, (int, float)):
        return GOT.msg("number", value=_short(repr(value), 40))
    if isinstance(value, str):
        return GOT.msg("text", value=_short(repr(value)))
    if isinstance(value, (list, tuple)):
        return GOT.msg("list", count=len(value))
    if isinstance(value, Mapping):
        return GOT.msg("object")
    if isinstance(value, (datetime.date, datetime.time)):  # TOML dates
        return GOT.msg("date", value=value.isoformat())
    return GOT.msg("other", kind=type(value).__name__)


def describe(value: object) -> str:
    """:func:`described` in English (for a sentence written around it)."""
    shown = described(value)
    return shown if isinstance(shown, str) else shown.render()


def read_text(path: str | os.PathLike[str], *, what: str, limit: int = MAX_FILE_BYTES,
              missing_hint: str = "") -> str:
    """The text of ``path`` (a ``what``: "report file", "bundle manifest"), read with a size cap."""
    p = Path(path)
    try:
        raw = _read_capped(p, limit + 1)
    except FileNotFoundError:
        raise BadInput(f"{what} {p} does not exist", hint=missing_hint) from None
    except IsADirectoryError:
        raise BadInput(f"{what} {p} is a folder, not a file") from None
    except OSError as exc:
        raise BadInput(f"{what} {p} cannot be read: {exc.strerror or exc}") from None
    except ValueError as exc:  # an embedded NUL in the path
        raise BadInput(f"{what} {_short(str(p))} cannot be read: {exc}") from None
    if len(raw) > limit:
        size = f"{limit // (1024 * 1024)} MB" if limit >= 1024 * 1024 else f"{limit // 1024} KB"
        raise BadInput(f"{what} {p} is larger than {size}; this is not such a file",
                       hint="check that this is the right file")
    return decode_text(raw, what=f"{what} {p}")


#: How long a pipe given as a file (``--config <(…)``, a FIFO) may take to deliver all of it.
PIPE_DEADLINE_S = 30.0


def _read_capped(p: Path, cap: int) -> bytes:
    """At most ``cap`` bytes of ``p``. A FIFO or character device never blocks: it is opened
    without waiting for a writer (none: it reads as empty) and read under a deadline for the whole
    read (:data:`PIPE_DEADLINE_S`); a folder raises IsADirectoryError."""
    if os.name == "nt":
        with open(p, "rb") as fh:
            return fh.read(cap)
    import select
    import stat
    import time

    fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(21, "Is a directory", str(p))
        if stat.S_ISREG(st.st_mode):
            os.set_blocking(fd, True)
            with os.fdopen(os.dup(fd), "rb") as fh:
                return fh.read(cap)
        deadline = time.monotonic() + PIPE_DEADLINE_S
        chunks: list[bytes] = []
        size = 0
        while size < cap:
            left = deadline - time.monotonic()
            if left <= 0:
                raise OSError(62, f"nothing more arrived within {PIPE_DEADLINE_S:.0f} s (a pipe or device, "
                                  "not a file)")
            try:
                chunk = os.read(fd, min(1 << 16, cap - size))
            except BlockingIOError:
                select.select([fd], [], [], min(left, 1.0))
                continue
            if not chunk:
                if not chunks:  # no writer, or one that wrote nothing: never taken for an empty file
                    raise OSError(61, "it is a pipe, and nothing was written to it")
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def decode_text(raw: bytes, *, what: str) -> str:
    """UTF-8 (BOM optional) or BOM-marked UTF-16 / UTF-32 bytes as text; else BadInput."""
    encoding = next((enc for bom, enc in _BOMS if raw.startswith(bom)), "utf-8")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise BadInput(f"{what} is not UTF-8 text (byte {exc.start} cannot be decoded as {encoding})",
                       hint="save it as UTF-8") from None


class StateFile:
    """One of the assistant's own JSON files as :func:`read_state` found it: ``data`` (a JSON
    object; None when there is no file or it was damaged), and for a damaged one ``why`` and
    ``aside``, where it was kept (None when it could not even be renamed). A plain class: a
    dataclass costs this module's import a millisecond (docs/DECISIONS.md)."""

    __slots__ = ("aside", "data", "unreadable", "why")

    def __init__(self, data: dict[str, object] | None, why: str = "", aside: Path | None = None,
                 unreadable: bool = False) -> None:
        self.data, self.why, self.aside, self.unreadable = data, why, aside, unreadable  # unreadable: left where it is

    @property
    def damaged(self) -> bool:
        return bool(self.why)

    def __repr__(self) -> str:
        return f"StateFile(data={self.data!r}, why={self.why!r}, aside={self.aside!r}, unreadable={self.unreadable})"


def set_aside(path: str | os.PathLike[str], why: str, *, tag: str = "damaged") -> StateFile:
    """Keep a damaged file of the assistant's own: renamed beside it as ``<name>.<tag>-<time>``
    (a name of its own, never one that exists), byte for byte; never deleted."""
    p = Path(path)
    base = f"{p.name}.{tag}-{time.strftime('%Y%m%d-%H%M%S')}"
    aside = p.with_name(base)
    n = 0
    while os.path.lexists(aside):
        n += 1
        aside = p.with_name(f"{base}-{n}")
    try:
        os.replace(p, aside)
    except OSError:
        return StateFile(None, why, None)
    return StateFile(None, why, aside)


def read_state(path: str | os.PathLike[str], *, what: Text, limit: int = MAX_STATE_BYTES,
               keep: bool = True, tag: str = "damaged") -> StateFile:
    """One of the assistant's own JSON files, read within the bounds of this module and never
    raised: missing, ``StateFile(None)``; damaged (larger than ``limit``, not UTF-8, not JSON,
    nested more than :data:`MAX_DEPTH` levels, not an object), kept aside (:func:`set_aside`,
    unless ``keep`` is False: a file another run is writing at this moment) with the reason. A
    file that cannot be read at all (permissions) is left where it is, ``unreadable``, with the OS's reason."""
    p = Path(path)
    try:
        raw = _read_capped(p, limit + 1)
    except FileNotFoundError:
        return StateFile(None)
    except IsADirectoryError:
        raw = None
    except (OSError, ValueError) as exc:
        return StateFile(None, str(getattr(exc, "strerror", None) or exc), unreadable=True)
    try:
        if raw is None:
            raise BadInput(f"{what} is a folder, not a file")
        if len(raw) > limit:
            raise BadInput(f"{what} is larger than {limit // (1024 * 1024)} MB")
        data = parse_json(decode_text(raw, what=str(what)), what=what)
        if not isinstance(data, dict):
            raise BadInput(f"{what} is not a JSON object ({describe(data)})")
    except BadInput as exc:
        why = str(exc.message)
        return set_aside(p, why, tag=tag) if keep else StateFile(None, why)
    return StateFile(data)


class BadNumber:
    """A number JSON allowed through but no field takes: ``Infinity``, ``NaN``, 5,000 digits."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text if len(text) <= 24 else f"a number of {len(text)} digits"

    def __repr__(self) -> str:
        return self.text


def _constant(name: str) -> BadNumber:
    return BadNumber(name)


def _int(text: str) -> int | BadNumber:
    return int(text) if len(text) <= MAX_NUMBER_CHARS else BadNumber(text)


def _float(text: str) -> float | BadNumber:
    if len(text) > MAX_NUMBER_CHARS:
        return BadNumber(text)
    value = float(text)
    return value if math.isfinite(value) else BadNumber(text)


def parse_json(text: str, *, what: Text, depth: int = MAX_DEPTH) -> object:
    """``text`` as JSON, bounded (see the module doc); errors name ``what``, the line or the field."""
    try:
        data = json.loads(text, parse_constant=_constant, parse_int=_int, parse_float=_float)
    except json.JSONDecodeError as exc:
        raise BadInput(MESSAGES.msg("not_json", what=what, line=exc.lineno, reason=exc.msg)) from None
    except RecursionError:
        raise bad_field(what, _deep_key(text) or "", MESSAGES.msg("too_deep", limit=depth)) from None
    except ValueError as exc:
        raise BadInput(f"{what} is not valid JSON: {exc}") from None
    check_depth(data, what=what, limit=depth)
    return data


def _deep_key(text: str) -> str | None:
    """The top-level key whose value is too deep for the JSON reader (only asked after it failed)."""
    dec = json.JSONDecoder(parse_constant=_constant, parse_int=_int, parse_float=_float)
    i = len(text) - len(text.lstrip())
    if text[i:i + 1] != "{":
        return None
    i += 1
    try:
        while True:
            i += len(text[i:i + 64]) - len(text[i:i + 64].lstrip())
            key, i = dec.raw_decode(text, i)
            i = text.index(":", i) + 1
            i += len(text[i:i + 64]) - len(text[i:i + 64].lstrip())
            try:
                _, i = dec.raw_decode(text, i)
            except RecursionError:
                return str(key)[:80]
            i = text.index(",", i) + 1
    except (ValueError, TypeError):
        return None


def _path_join(path: str, key: object) -> str:
    part = f"[{key}]" if isinstance(key, int) else (f"{path}." if path else "") + str(key)[:40]
    return f"{path}{part}" if isinstance(key, int) else part


def check_depth(data: object, *, what: Text, limit: int = MAX_DEPTH) -> None:
    """Refuse ``data`` (parsed JSON / TOML) nested more than ``limit`` levels, naming where
    (an iterative walk: no recursion however deep)."""
    stack: list[tuple[object, int, str]] = [(data, 1, "")]
    while stack:
        value, level, path = stack.pop()
        if isinstance(value, Mapping):
            children: list[tuple[object, object]] = list(value.items())
        elif isinstance(value, (list, tuple)):
            children = list(enumerate(value))
        else:
            continue
        if level > limit:
            raise bad_field(what, _short(path, 60), MESSAGES.msg("too_deep", limit=limit))
        for key, child in children:
            if isinstance(child, (Mapping, list, tuple)):
                stack.append((child, level + 1, _path_join(path, key)))


# ------------------------------------------------------------------ records: annotations -> readers

_T = TypeVar("_T")


class Spec:
    """How one field of a :class:`Record` is written and read (see :func:`spec`). A plain class:
    a dataclass here would cost the module's import a millisecond and more."""

    __slots__ = ("choices", "hi", "key", "lo", "max_items", "max_len", "old", "only", "required", "skip", "write")

    def __init__(self, key: str | None = None, old: tuple[str, ...] = (), required: bool = False,
                 max_len: int = 4096, lo: float | None = None, hi: float | None = None, max_items: int = 4096,
                 choices: tuple[str, ...] = (), only: tuple[str, ...] = (), skip: bool = False,
                 write: Callable[[Any], object] | None = None) -> None:
        self.key, self.old, self.required, self.max_len, self.lo, self.hi = key, old, required, max_len, lo, hi
        self.max_items, self.choices, self.only, self.skip, self.write = max_items, choices, only, skip, write


_NO_SPEC = Spec()
_SPEC_KEY = "app.core.base.schema"


def spec(*, key: str | None = None, old: Sequence[str] = (), required: bool = False, max_len: int = 4096,
         lo: float | None = None, hi: float | None = None, max_items: int = 4096, choices: Sequence[str] = (),
         only: Sequence[str] = (), skip: bool = False,
         write: Callable[[Any], object] | None = None) -> dict[str, Spec]:
    """A field's metadata (``field(default=0, metadata=spec(lo=0, hi=100))``):

    ``key``: its JSON name (dotted: inside another field's object, ``sources.credentials_removed``);
    ``old``: names older files use, still read; ``required``: refused when missing although it has
    a default; ``max_len`` / ``lo`` / ``hi`` / ``max_items``: bounds of texts, numbers, lists and
    mappings; ``choices``: the texts it may be; ``only``: of a nested dataclass, the fields written
    and read (the others keep their defaults); ``skip``: not in the document; ``write``: how its
    value is written (``render`` for a sentence), when not as it is."""
    return {_SPEC_KEY: Spec(key, tuple(old), required, max_len, lo, hi, max_items, tuple(choices), tuple(only), skip,
                            write)}



class Fields:
    """Typed reads of one JSON object; every error names ``what`` and the field's path.

    ``Fields(data, "gpus[2]", what=document("report", path))``: ``.text("name")`` is the string at
    ``gpus[2].name`` (or None when it is missing or null), else BadInput naming it
    (:func:`bad_field`). ``.record(cls)`` reads a whole dataclass by its annotations.
    """

    def __init__(self, data: object, path: str = "", *, what: Text) -> None:
        if not isinstance(data, Mapping):
            raise bad_field(what, path, must_be("object", data))
        self.data: Mapping[str, object] = data
        self.path = path
        self.what = what

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, problem: Text, hint: Hint = "") -> BadInput:
        return bad_field(self.what, self.at(key), problem, hint=hint)

    def _wrong(self, key: str, expected: str) -> BadInput:
        return self.fail(key, must_be(expected, self.data[key]))

    def get(self, key: str) -> object:
        return self.data.get(key)

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def text(self, key: str, *, numbers: bool = False, max_len: int = 4096, null: bool = True) -> str | None:
        """A string (``numbers=True``: a number is taken as its text, ``8.6`` -> ``"8.6"``);
        None when missing, or null (``null=False``: an explicit null is refused)."""
        v = self.data.get(key)
        if v is None:
            if not null and key in self.data:
                raise self._wrong(key, "text")
            return None
        if numbers and isinstance(v, (int, float)) and not isinstance(v, bool):
            v = repr(v)
        if not isinstance(v, str):
            raise self._wrong(key, "text_or_number" if numbers else "text")
        if len(v) > max_len:
            raise self.fail(key, MESSAGES.msg("too_long", count=len(v), limit=max_len))
        return v

    def required_text(self, key: str, *, max_len: int = 4096) -> str:
        v = self.text(key, max_len=max_len)
        if v is None:
            raise self.fail(key, MESSAGES.msg("missing"))
        return v

    def integer(self, key: str, *, lo: int = 0, hi: int = 1 << 62) -> int | None:
        """A whole number in ``lo..hi`` (``24576.0`` counts; ``true`` and ``"5"`` do not)."""
        v = self.data.get(key)
        if v is None:
            return None
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise self._wrong(key, "whole_number")
        if not lo <= v <= hi:
            raise self.fail(key, MESSAGES.msg("out_of_range", value=v, lo=lo, hi=hi))
        return v

    def number(self, key: str, *, lo: float = 0.0, hi: float = 1e15) -> float | None:
        v = self.data.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self._wrong(key, "number")
        if not lo <= v <= hi:
            raise self.fail(key, MESSAGES.msg("out_of_range", value=v, lo=f"{lo:g}", hi=f"{hi:g}"))
        return float(v)

    def flag(self, key: str, default: bool = False) -> bool:
        """``true`` / ``false`` (the texts "true" / "false" too); anything else is refused."""
        v = self.data.get(key)
        if v is None:
            return default
        if isinstance(v, bool):
            return v
        if isinstance(v, str) and v.strip().lower() in ("true", "false"):
            return v.strip().lower() == "true"
        raise self._wrong(key, "flag")

    def optional_flag(self, key: str) -> bool | None:
        return None if self.data.get(key) is None else self.flag(key)

    def items(self, key: str, *, max_items: int) -> list[object]:
        """A list (missing or null: empty) of at most ``max_items`` entries."""
        v = self.data.get(key)
        if v is None:
            return []
        if not isinstance(v, list):
            raise self._wrong(key, "list")
        if len(v) > max_items:
            raise self.fail(key, MESSAGES.msg("too_many", count=len(v), limit=max_items))
        return v

    def each(self, key: str, *, max_items: int) -> Iterator[Fields]:
        """The objects of a list, each as a :class:`Fields` at ``key[i]``."""
        for i, item in enumerate(self.items(key, max_items=max_items)):
            yield Fields(item, f"{self.at(key)}[{i}]", what=self.what)

    def texts(self, key: str, *, max_items: int, max_len: int = 4096) -> list[str]:
        out: list[str] = []
        for i, item in enumerate(self.items(key, max_items=max_items)):
            if not isinstance(item, str):
                raise self.fail(f"{key}[{i}]", must_be("text", item))
            if len(item) > max_len:
                raise self.fail(f"{key}[{i}]", MESSAGES.msg("too_long", count=len(item), limit=max_len))
            out.append(item)
        return out

    def mapping(self, key: str, *, max_items: int) -> Fields | None:
        """The object at ``key`` (None when missing or null), of at most ``max_items`` keys."""
        v = self.data.get(key)
        if v is None:
            return None
        sub = Fields(v, self.at(key), what=self.what)
        if len(sub.data) > max_items:
            raise self.fail(key, MESSAGES.msg("too_many", count=len(sub.data), limit=max_items))
        return sub

    def text_map(self, key: str, *, max_items: int, max_len: int = 65536) -> dict[str, str]:
        """An object of texts (a number is taken as its text, as environment values are)."""
        sub = self.mapping(key, max_items=max_items)
        if sub is None:
            return {}
        out: dict[str, str] = {}
        for k, v in sub.data.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                v = repr(v)
            if not isinstance(v, str):
                raise sub.fail(str(k), must_be("text", v))
            if len(v) > max_len:
                raise sub.fail(str(k), MESSAGES.msg("too_long", count=len(v), limit=max_len))
            out[str(k)] = v
        return out

    def choice(self, key: str, choices: tuple[str, ...], *,
               normalise: Callable[[str], str] = str.lower) -> str | None:
        v = self.text(key)
        if v is None:
            return None
        n = normalise(v.strip())
        if n not in choices:
            raise self.fail(key, not_one_of(v, choices))
        return n

    # -- whole records, by their annotations
    def record(self, cls: type[_T]) -> _T:
        """A ``cls`` (a dataclass) from this object, each field read by its annotation and its
        :func:`spec` (a missing field takes its default; a field without one is required)."""
        kw: dict[str, Any] = {}
        for f, tp, sp in _plan(cls):
            if sp.skip:
                continue
            where, key = self._home(sp.key or f.name)
            found = next((k for k in (key, *sp.old) if where is not None and where.data.get(k) is not None), None)
            if where is None or found is None:
                required = sp.required or (f.default is dataclasses.MISSING
                                           and f.default_factory is dataclasses.MISSING)
                if required and not _optional(tp):
                    raise (where or self).fail(key, MESSAGES.msg("missing"))
                if required:
                    kw[f.name] = None
                continue
            kw[f.name] = where.value(found, tp, sp)
        return cls(**kw)

    def _home(self, key: str) -> tuple[Fields | None, str]:
        """The object a (dotted) JSON name lives in, and its last part: ``sources.offline`` is
        ``offline`` of the object at ``sources`` (None when that object is not there)."""
        here: Fields | None = self
        *parents, last = key.split(".")
        for part in parents:
            here = here.mapping(part, max_items=1 << 16) if here is not None else None
        return here, last

    def value(self, key: str, tp: object, sp: Spec = _NO_SPEC) -> object:
        """The value at ``key`` read as the type ``tp`` (an annotation); see :meth:`record`."""
        return _read(self, key, self.data[key], tp, sp)


_PLANS: dict[type, tuple[tuple[dataclasses.Field[Any], object, Spec], ...]] = {}


def _plan(cls: type) -> tuple[tuple[dataclasses.Field[Any], object, Spec], ...]:
    """The fields of a dataclass with their resolved annotations and specs (read once per class)."""
    plan = _PLANS.get(cls)
    if plan is None:
        hints = typing.get_type_hints(cls)
        plan = tuple((f, hints[f.name], f.metadata.get(_SPEC_KEY, _NO_SPEC)) for f in dataclasses.fields(cls)
                     if f.init)
        _PLANS[cls] = plan
    return plan


def _optional(tp: object) -> bool:
    return _is_union(tp) and type(None) in typing.get_args(tp)


def _is_union(tp: object) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def _read(where: Fields, key: str, v: object, tp: object, sp: Spec) -> object:
    """``v`` (the value at ``where``'s ``key``; a list's item: ``key`` is ``name[i]``) as the
    annotation ``tp``; BadInput naming its path."""
    if _is_union(tp):
        kinds = [a for a in typing.get_args(tp) if a is not type(None)]
        if v is None:
            return None
        if len(kinds) != 1:
            raise TypeError(f"{where.at(key)}: only X | None is read by its annotation, not {tp}")
        tp = kinds[0]
    if tp is Any or tp is object:
        return v
    if isinstance(tp, type) and (tp in (str, Path, bool, int, float) or issubclass(tp, enum.Enum)):
        return _scalar(where, key, v, tp, sp)
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return _one_of(where, key, v, [str(a) for a in typing.get_args(tp)])
    if origin in (tuple, list, Sequence):
        items = _bounded(where, key, v, list, "list", sp)
        item = (typing.get_args(tp) or (Any,))[0]
        out = [_read(where, f"{key}[{i}]", x, item, _NO_SPEC) for i, x in enumerate(items)]
        return out if origin is list else tuple(out)
    if origin in (dict, Mapping) or tp is dict:
        table = _bounded(where, key, v, Mapping, "object", sp)
        sub = Fields(table, where.at(key), what=where.what)
        item = (typing.get_args(tp) or (Any, Any))[-1]
        return {str(k): _read(sub, str(k), x, item, _NO_SPEC) for k, x in table.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        sub = Fields(v, where.at(key), what=where.what)
        if sp.only:
            sub = Fields({k: sub.data[k] for k in sp.only if k in sub.data}, sub.path, what=sub.what)
        return sub.record(tp)
    raise TypeError(f"{where.at(key)}: no reader for the annotation {tp!r}")


def _scalar(where: Fields, key: str, v: object, tp: type, sp: Spec) -> object:
    """A text, path, flag, whole number, number or enum member, checked against ``sp``'s bounds."""
    if tp is bool:
        if isinstance(v, str) and v.strip().lower() in ("true", "false"):
            return v.strip().lower() == "true"
        if not isinstance(v, bool):
            raise where.fail(key, must_be("flag", v))
        return v
    if tp in (int, float):
        if tp is int and isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (tp is int and not isinstance(v, int)):
            raise where.fail(key, must_be("whole_number" if tp is int else "number", v))
        lo = sp.lo if sp.lo is not None else -1e15 if tp is float else -(1 << 62)
        hi = sp.hi if sp.hi is not None else 1e15 if tp is float else 1 << 62
        if not lo <= v <= hi:
            raise where.fail(key, MESSAGES.msg("out_of_range", value=v, lo=f"{lo:g}", hi=f"{hi:g}"))
        return tp(v)
    if issubclass(tp, enum.Enum):
        return tp(_one_of(where, key, v, [str(m.value) for m in tp]))
    if not isinstance(v, str):
        raise where.fail(key, must_be("text", v))
    if len(v) > sp.max_len:
        raise where.fail(key, MESSAGES.msg("too_long", count=len(v), limit=sp.max_len))
    if sp.choices:
        _one_of(where, key, v, sp.choices)
    return Path(v) if tp is Path else v


def _one_of(where: Fields, key: str, v: object, choices: Sequence[str]) -> str:
    if not isinstance(v, str):
        raise where.fail(key, must_be("text", v))
    if v not in choices:
        raise where.fail(key, not_one_of(v, choices))
    return v


def _bounded(where: Fields, key: str, v: object, kind: type, expected: str, sp: Spec) -> Any:
    if not isinstance(v, kind):
        raise where.fail(key, must_be(expected, v))
    if len(v) > sp.max_items:  # type: ignore[arg-type]
        raise where.fail(key, MESSAGES.msg("too_many", count=len(v), limit=sp.max_items))  # type: ignore[arg-type]
    return v


def dump(value: object) -> object:
    """``value`` as plain JSON data: a dataclass as an object of its fields in order (their
    :func:`spec`'s names; a nested one as it writes itself), tuples as lists, paths as text,
    enums as their value."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return value.to_dict() if hasattr(value, "to_dict") else _fields_of(value)  # a record as it writes itself
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): dump(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [dump(v) for v in value]
    if hasattr(value, "to_dict") and not isinstance(value, type):
        return value.to_dict()
    return value


def _fields_of(record: object, only: Sequence[str] = ()) -> dict[str, object]:
    out: dict[str, object] = {}
    for f in dataclasses.fields(record):  # type: ignore[arg-type]  # a dataclass instance (dump, Record)
        sp = f.metadata.get(_SPEC_KEY, _NO_SPEC)
        if sp.skip or (only and f.name not in only):
            continue
        value = getattr(record, f.name)
        if sp.write is not None:
            shown = sp.write(value)
        elif sp.only and dataclasses.is_dataclass(value):
            shown = _fields_of(value, sp.only)
        else:
            shown = dump(value)
        *parents, last = (sp.key or f.name).split(".")
        home = out
        for part in parents:
            home = home[part]  # type: ignore[assignment]  # a field written before it
        home[last] = shown
    return out


_R = TypeVar("_R", bound="Record")


class Record:
    """A dataclass whose document form is its fields: :meth:`to_dict` writes them (:func:`dump`),
    :meth:`from_dict` reads and checks them by their annotations (:meth:`Fields.record`)."""

    def to_dict(self) -> dict[str, Any]:
        return _fields_of(self)

    @classmethod
    def from_dict(cls: type[_R], data: object, *, what: Text | None = None, path: str = "") -> _R:
        return Fields(data, path, what=what if what is not None else document("data")).record(cls)
