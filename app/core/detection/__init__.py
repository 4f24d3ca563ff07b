"""Detection sources, one module per source, and the helpers they share.

Two kinds of code live here:

* **Parsers**: pure functions of text (a tool's output, a /proc or /sys file). They never
  raise on any input; the :func:`parser` decorator registers them in :data:`PARSERS` (the
  property-based tests feed every registered parser random and truncated text) and turns
  an unexpected exception into the parser's "nothing found" value, so a parsing bug can
  never break detection. Tests call ``fn.__wrapped__`` to prove the bare parser holds too.
* **Probes**: functions that run a tool (always through :func:`app.core.proc.runner.run`) or
  read a file, and return what they found plus a :class:`~app.core.detection.system.ProbeRecord`
  saying what was tried and what happened. They never raise either.
"""
from __future__ import annotations

import functools
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

from app.core.base.secrets import mask
from app.core.detection.system import ProbeRecord

if TYPE_CHECKING:  # pragma: no cover
    from app.core.proc.runner import RunResult

P = ParamSpec("P")
R = TypeVar("R")
Row = dict[str, Any]  # one parsed item of a tool's output: raw values, checked where they are used

# name -> the registered (wrapped) parser; the tests walk this.
PARSERS: dict[str, Callable[..., object]] = {}

DEFAULT_TIMEOUT_S = 3.0
MAX_TIMEOUT_S = 3.0  # the ceiling for any single probe


def parser(default_factory: Callable[[], object]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Register a text parser; on an unexpected exception return ``default_factory()`` (the
    parser's "nothing found" value: ``list``, ``dict``, ``lambda: None``)."""

    def deco(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return fn(*args, **kwargs)
            except Exception:  # never let a parser bug break detection
                return cast(R, default_factory())  # the factory makes an empty value of the parser's type

        PARSERS[f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}"] = wrapper
        return wrapper

    return deco


def clamp_timeout(timeout_s: float | None, ceiling: float = MAX_TIMEOUT_S) -> float:
    """A probe's time limit: ``timeout_s`` between 0.1 s and ``ceiling`` (the issue's 3 s; a tool
    known to start slowly, PowerShell, is given a little more by its source)."""
    try:
        t = float(timeout_s if timeout_s is not None else DEFAULT_TIMEOUT_S)
    except (TypeError, ValueError):
        t = DEFAULT_TIMEOUT_S
    return max(0.1, min(ceiling, t))


# ---------------------------------------------------------------- small text helpers

_BUS_RE = re.compile(r"(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])")


def norm_bus(value: object) -> str | None:
    """A PCI address in one form, ``"0000:03:00.0"``, from nvidia-smi's ``00000000:03:00.0``,
    sysfs's ``0000:03:00.0``, lspci's ``03:00.0`` or rocminfo's BDFID integer."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            return None
        bus, dev, fn = (value >> 8) & 0xFF, (value >> 3) & 0x1F, value & 0x7
        return f"0000:{bus:02x}:{dev:02x}.{fn}"
    m = _BUS_RE.search(str(value))
    if not m:
        return None
    domain = int(m.group(1), 16) if m.group(1) else 0
    if domain > 0xFFFF:
        domain &= 0xFFFF
    return f"{domain:04x}:{m.group(2).lower()}:{m.group(3).lower()}.{m.group(4)}"


MAX_INT_DIGITS = 18  # a count, size or index in tool output; longer runs of digits are garbage


def small_int(digits: str) -> int | None:
    """``int(digits)`` for a plausible number; None for an empty or absurdly long run (converting
    100,000 digits is quadratic, and Python refuses over 4,300)."""
    d = digits.strip()
    if not d or len(d.lstrip("-+")) > MAX_INT_DIGITS:
        return None
    try:
        return int(d)
    except ValueError:
        return None


def to_int(value: object) -> int | None:
    """``"8192"``, ``"8192 MiB"``, ``"0x744c"``, ``"29772(0x744c)"`` -> int; else None."""
    if value is None:
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    s = str(value).strip()
    m = re.match(r"^(0[xX][0-9a-fA-F]+)", s)
    if m:
        return int(m.group(1), 16) if len(m.group(1)) <= MAX_INT_DIGITS else None
    m = re.match(r"^(\d+)", s)
    return small_int(m.group(1)) if m else None


def hex_id(value: object) -> str | None:
    """``"0x744c"`` / ``"744C"`` / ``29772`` -> ``"744c"`` (4 hex digits) or None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return f"{value:04x}" if 0 <= value <= 0xFFFF else None
    s = str(value).strip().lower()
    if s.startswith("0x"):
        s = s[2:]
    if re.fullmatch(r"[0-9a-f]{1,4}", s):
        return s.rjust(4, "0")
    return None


def first_version(text: str, pattern: str = r"(?<!\d)(\d+\.\d+(?:\.\d+)*)") -> str | None:
    m = re.search(pattern, text or "")
    return m.group(1) if m else None


def read_text(path: str, limit: int = 1 << 20) -> str | None:
    """A small file's text, or None when it is missing or unreadable (never raises)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", errors="replace")
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------- running tools


def tool_env() -> dict[str, str]:
    """The cleaned environment with a fixed locale, so tool output parses the same everywhere."""
    from app.core.proc.runner import clean_env

    return clean_env({"LC_ALL": "C", "LANG": "C"})


def run_tool(name: str, argv: Sequence[str], timeout_s: float, *,
             env: Mapping[str, str] | None = None,
             ceiling: float = MAX_TIMEOUT_S) -> tuple[RunResult, ProbeRecord | None]:
    """Run a tool once; return ``(RunResult, ProbeRecord | None)``.

    The record is filled in only when the tool could not give output at all (not found,
    permission denied, timed out, killed); otherwise the caller looks at the output and
    writes the record itself. ``ceiling``: the most ``timeout_s`` may be (:func:`clamp_timeout`).
    """
    from app.core.proc.runner import run

    started = time.monotonic()
    limit = clamp_timeout(timeout_s, ceiling)
    res = run(list(argv), timeout=limit, env=dict(env) if env is not None else tool_env())
    ms = int((time.monotonic() - started) * 1000)
    if res.start_error:
        low = res.start_error.lower()
        status = "not-found" if "not found" in low else "error"
        return res, ProbeRecord(name, status, res.start_error, ms, list(argv))
    if res.timed_out:
        return res, ProbeRecord(name, "timeout",
                                f"{os.path.basename(argv[0])} did not answer within "
                                f"{limit:.0f} s and was stopped", ms, list(argv))
    if res.returncode is not None and res.returncode < 0:
        return res, ProbeRecord(name, "error", f"{os.path.basename(argv[0])} was {res.describe()}",
                                ms, list(argv))
    return res, None


def record(name: str, status: str, detail: str, started: float, command: Sequence[str] | None = None) -> ProbeRecord:
    return ProbeRecord(name, status, detail, int((time.monotonic() - started) * 1000),
                       list(command) if command else None)


def listing(name: str, found: Sequence[str], stdout: str, started: float, command: Sequence[str] | None = None,
            *, shown: str | None = None) -> ProbeRecord:
    """The record of a tool that lists things: ok with what it listed; else empty (it printed
    nothing) or garbage (it printed something that is not a list), with the start of ``shown``."""
    status = "ok" if found else ("empty" if not stdout.strip() else "garbage")
    return record(name, status, ", ".join(found) or snippet(stdout if shown is None else shown), started, command)


def snippet(text: str, limit: int = 160) -> str:
    """The start of some output, on one line, for a probe record."""
    s = mask(" ".join((text or "").split()))  # credentials and device ids: a probe record goes into reports
    return s if len(s) <= limit else s[: limit - 1] + "…"
