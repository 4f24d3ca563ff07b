"""How a netlab index misbehaves, per server or per file.

A server takes ``behaviours={pattern: behaviour or [behaviours]}``. A pattern without a leading
``/`` is matched (fnmatch) against the requested FILE name (``"torch-*"``, ``"*"``; a wheel's
PEP 658 ``.metadata`` only by a pattern ending in ``.metadata``); one with a leading ``/``
against the request PATH (``"/whl/cu132/*"``), pages included.

* :class:`Status` (``FORBIDDEN``, ``NOT_FOUND``): answer that status instead.
* :class:`Redirect`: 302 to the same path on another origin (by default a 127.0.0.1 port
  where nothing listens: "redirects to an unreachable origin").
* :class:`WrongHash`: the bytes do not match the page's sha256 (``where="file"``: one byte of
  the served file flipped; ``where="page"``: the page lists another digest).
* :class:`Drop`: headers with the full Content-Length, then the connection closes when the
  answer reaches byte ``after`` of the file (an offset in the FILE: a client that resumes with
  a Range request at or past it gets headers and no byte); ``times`` requests (None: always).
* :class:`Slow`: ``delay_s`` before the first byte and/or at most ``bytes_per_s``; with
  ``stall_after``, that many bytes of the answer and then nothing more (a stalled source).
* :class:`Stall`: the connection is accepted and then nothing comes (``after`` None: not even
  the headers; ``after`` N: the headers and the file up to byte N, then nothing), held open
  until the client gives up, the server stops or ``hold_s`` is over; ``times`` requests (None:
  always). What a mirror does when it hangs: no error, no close, no more bytes.

A server's :class:`~tests.netlab.link.Link` (a paced link: total and per-connection rate caps,
latency per request) shapes every answer on top of these.
"""
from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal


@dataclass(frozen=True)
class Status:
    code: int
    reason: str = ""


FORBIDDEN = Status(403)
NOT_FOUND = Status(404)


@dataclass(frozen=True)
class Redirect:
    """302 (or ``code``) to ``to`` + the request path; ``to`` None: an origin that refuses."""

    to: str | None = None
    code: int = 302


@dataclass(frozen=True)
class WrongHash:
    """``where="file"``: serve one byte flipped in the middle (or the bytes of ``replacement``,
    a valid file of another build); ``where="page"``: list another digest on the pages."""

    where: Literal["file", "page"] = "file"
    replacement: Path | None = None


@dataclass(frozen=True)
class Drop:
    after: int
    times: int | None = 1


@dataclass(frozen=True)
class Slow:
    bytes_per_s: int | None = None
    delay_s: float = 0.0
    chunk: int = 16 * 1024
    stall_after: int | None = None


@dataclass(frozen=True)
class Stall:
    after: int | None = None
    times: int | None = None
    hold_s: float = 120.0


Behaviour = Status | Redirect | WrongHash | Drop | Slow | Stall
_KINDS = (Status, Redirect, WrongHash, Drop, Slow, Stall)
BehaviourMap = Mapping[str, Behaviour | Sequence[Behaviour]]


@dataclass(frozen=True)
class Rule:
    pattern: str
    behaviour: Behaviour
    ordinal: int  # position in the server's rule list (Drop counters key on it)

    def matches(self, path: str, filename: str | None) -> bool:
        """``filename``: the requested file's name (``x.whl`` or ``x.whl.metadata``), None for a page.

        A file-name pattern reaches a PEP 658 ``.metadata`` file only when it ends in ``.metadata``
        itself: ``"torch-*"`` shapes the wheel, not the metadata a resolver reads first.
        """
        if self.pattern.startswith("/"):
            return fnmatch.fnmatchcase(path, self.pattern)
        if filename is None or (filename.endswith(".metadata") and not self.pattern.endswith(".metadata")):
            return False
        return fnmatch.fnmatchcase(filename, self.pattern)


def compile_rules(behaviours: BehaviourMap | None) -> tuple[Rule, ...]:
    rules: list[Rule] = []
    for pattern, value in (behaviours or {}).items():
        items: Iterable[Behaviour] = (value,) if isinstance(value, _KINDS) else value
        for b in items:
            if not isinstance(b, _KINDS):
                raise TypeError(f"not a netlab behaviour: {b!r}")
            rules.append(Rule(pattern, b, len(rules)))
    return tuple(rules)


def parse_behaviour(text: str) -> tuple[str, Behaviour]:
    """CLI form ``PATTERN=SPEC``: ``403``, ``404``, ``redirect[:URL]``, ``wronghash[:page|:FILE]``,
    ``drop:BYTES[:TIMES|always]``, ``slow:BYTES_PER_S[:DELAY_S]``, ``stall[:BYTES[:TIMES|always]]``."""
    pattern, sep, spec = text.partition("=")
    if not sep or not pattern or not spec:
        raise ValueError(f"expected PATTERN=SPEC, got {text!r}")
    kind, _, rest = spec.partition(":")
    if kind.isdigit():
        return pattern, Status(int(kind))
    if kind == "redirect":
        return pattern, Redirect(rest or None)
    if kind == "wronghash":
        if rest in ("", "file", "page"):
            return pattern, WrongHash("page" if rest == "page" else "file")
        return pattern, WrongHash("file", Path(rest))
    if kind == "drop":
        after, _, times = rest.partition(":")
        return pattern, Drop(int(after), None if times == "always" else int(times or 1))
    if kind == "slow":
        rate, _, delay = rest.partition(":")
        return pattern, Slow(int(rate) if rate else None, float(delay or 0))
    if kind == "stall":
        after, _, times = rest.partition(":")
        return pattern, Stall(int(after) if after else None, None if times in ("", "always") else int(times))
    raise ValueError(f"unknown behaviour {spec!r}")
