"""Reading untrusted files: bounded in size, depth and number size, typed field by field.

Used by every loader of a file a person (or another machine) hands us: the SystemReport
(:mod:`app.core.detection.system`), answer files (:mod:`app.core.pipeline.answers`) and bundle manifests
(:mod:`app.core.install.bundle`). Every refusal is a :class:`~app.core.base.errors.BadInput` (exit 2)
that names the file and the field by its path (``gpus[3].name``), and every check costs time
and memory linear in the input:

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
"""
from __future__ import annotations

import codecs
import json
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from app.core.base.errors import BadInput

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "MAX_NUMBER_CHARS", "MAX_STATE_BYTES", "NAME_MAX", "PATH_MAX", "BadNumber",
           "Fields", "StateFile", "check_depth", "decode_text", "describe", "parse_json", "path_problem", "read_state",
           "read_text", "set_aside"]

MAX_FILE_BYTES = 16 * 1024 * 1024
#: The assistant's own files (the list of environments, caches, journals) are small; a larger one is damaged.
MAX_STATE_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 32
MAX_NUMBER_CHARS = 40

_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


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


def describe(value: object) -> str:
    """A value as an error message shows it: its JSON type and (the start of) the value."""
    if value is None:
        return "null"
    if isinstance(value, BadNumber):
        return value.text
    if isinstance(value, bool):
        return f"the flag {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {_short(repr(value), 40)}"
    if isinstance(value, str):
        return f"the text {_short(repr(value))}"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)}"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


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


@dataclass(frozen=True)
class StateFile:
    """One of the assistant's own JSON files as :func:`read_state` found it: ``data`` (a JSON
    object; None when there is no file or it was damaged), and for a damaged one ``why`` and
    ``aside``, where it was kept (None when it could not even be renamed)."""

    data: dict[str, object] | None
    why: str = ""
    aside: Path | None = None
    unreadable: bool = False  # it could not be read at all (left where it is)

    @property
    def damaged(self) -> bool:
        return bool(self.why)


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


def read_state(path: str | os.PathLike[str], *, what: str, limit: int = MAX_STATE_BYTES,
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
        data = parse_json(decode_text(raw, what=what), what=what)
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


def parse_json(text: str, *, what: str, depth: int = MAX_DEPTH) -> object:
    """``text`` as JSON, bounded (see the module doc); errors name ``what``, the line or the field."""
    try:
        data = json.loads(text, parse_constant=_constant, parse_int=_int, parse_float=_float)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{what} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        key = _deep_key(text)
        place = f"'{key}'" if key is not None else "it"
        raise BadInput(f"{what}: {place} is nested more than {depth} levels deep") from None
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


def check_depth(data: object, *, what: str, limit: int = MAX_DEPTH) -> None:
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
            place = f"'{_short(path, 60)}'" if path else "it"
            raise BadInput(f"{what}: {place} is nested more than {limit} levels deep")
        for key, child in children:
            if isinstance(child, (Mapping, list, tuple)):
                stack.append((child, level + 1, _path_join(path, key)))


class Fields:
    """Typed reads of one JSON object; every error names ``what`` and the field's path.

    ``Fields(data, "gpus[2]", what="system report x.json")``: ``.text("name")`` is the string
    at ``gpus[2].name`` (or None when it is missing or null), else BadInput naming it.
    """

    def __init__(self, data: object, path: str = "", *, what: str) -> None:
        if not isinstance(data, Mapping):
            place = f"'{path}'" if path else "the top level"
            raise BadInput(f"{what}: {place} must be an object, not {describe(data)}")
        self.data: Mapping[str, object] = data
        self.path = path
        self.what = what

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, problem: str, hint: str = "") -> BadInput:
        return BadInput(f"{self.what}: '{self.at(key)}' {problem}", hint=hint)

    def _wrong(self, key: str, expected: str) -> BadInput:
        return self.fail(key, f"must be {expected}, not {describe(self.data[key])}")

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
                raise self._wrong(key, "a text")
            return None
        if numbers and isinstance(v, (int, float)) and not isinstance(v, bool):
            v = repr(v)
        if not isinstance(v, str):
            raise self._wrong(key, "a text" + (" or a number" if numbers else ""))
        if len(v) > max_len:
            raise self.fail(key, f"is {len(v)} characters long; at most {max_len}")
        return v

    def required_text(self, key: str, *, max_len: int = 4096) -> str:
        v = self.text(key, max_len=max_len)
        if v is None:
            raise self.fail(key, "is missing")
        return v

    def integer(self, key: str, *, lo: int = 0, hi: int = 1 << 62) -> int | None:
        """A whole number in ``lo..hi`` (``24576.0`` counts; ``true`` and ``"5"`` do not)."""
        v = self.data.get(key)
        if v is None:
            return None
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise self._wrong(key, "a whole number")
        if not lo <= v <= hi:
            raise self.fail(key, f"is {v}; it must be within {lo}..{hi}")
        return v

    def number(self, key: str, *, lo: float = 0.0, hi: float = 1e15) -> float | None:
        v = self.data.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self._wrong(key, "a number")
        if not lo <= v <= hi:
            raise self.fail(key, f"is {v}; it must be within {lo:g}..{hi:g}")
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
        raise self._wrong(key, "true or false")

    def optional_flag(self, key: str) -> bool | None:
        return None if self.data.get(key) is None else self.flag(key)

    def items(self, key: str, *, max_items: int) -> list[object]:
        """A list (missing or null: empty) of at most ``max_items`` entries."""
        v = self.data.get(key)
        if v is None:
            return []
        if not isinstance(v, list):
            raise self._wrong(key, "a list")
        if len(v) > max_items:
            raise self.fail(key, f"has {len(v)} entries; at most {max_items} are allowed")
        return v

    def each(self, key: str, *, max_items: int) -> Iterator[Fields]:
        """The objects of a list, each as a :class:`Fields` at ``key[i]``."""
        for i, item in enumerate(self.items(key, max_items=max_items)):
            yield Fields(item, f"{self.at(key)}[{i}]", what=self.what)

    def texts(self, key: str, *, max_items: int, max_len: int = 4096) -> list[str]:
        out: list[str] = []
        for i, item in enumerate(self.items(key, max_items=max_items)):
            if not isinstance(item, str):
                raise self.fail(f"{key}[{i}]", f"must be a text, not {describe(item)}")
            if len(item) > max_len:
                raise self.fail(f"{key}[{i}]", f"is {len(item)} characters long; at most {max_len}")
            out.append(item)
        return out

    def mapping(self, key: str, *, max_items: int) -> Fields | None:
        """The object at ``key`` (None when missing or null), of at most ``max_items`` keys."""
        v = self.data.get(key)
        if v is None:
            return None
        sub = Fields(v, self.at(key), what=self.what)
        if len(sub.data) > max_items:
            raise self.fail(key, f"has {len(sub.data)} entries; at most {max_items} are allowed")
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
                raise sub.fail(str(k), f"must be a text, not {describe(v)}")
            if len(v) > max_len:
                raise sub.fail(str(k), f"is {len(v)} characters long; at most {max_len}")
            out[str(k)] = v
        return out

    def choice(self, key: str, choices: tuple[str, ...], *,
               normalise: Callable[[str], str] = str.lower) -> str | None:
        v = self.text(key)
        if v is None:
            return None
        n = normalise(v.strip())
        if n not in choices:
            raise self.fail(key, f"is {_short(repr(v))}; it must be one of {', '.join(choices)}")
        return n
