"""The installers' own reasoning, kept and put into words: uv's "Because …, we can conclude …"
derivation and pip's "The conflict is caused by:" list.

:func:`reasoning_lines` picks those lines out of the output (the generic error-line filter
drops them: they hold no error word), :func:`explain_reasoning` turns each clause into a
sentence (:class:`~app.core.base.text.Msg`, so the wizard shows it in its language), and
:func:`suggested_torch` reads the torch version the tool says would work ("only torch<=2.14.1
is available", "torchvision 0.29.1 depends on torch==2.14.1", "from versions: …").
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from packaging.version import InvalidVersion, Version

from app.core.base.text import Msg, msg

__all__ = ["clean_req", "explain_reasoning", "newest_version", "reasoning_lines", "suggested_torch"]

_PREFIX = re.compile(r"^\s*(?:[│|]\s*)*(?:(?:cause|Caused by|error|ERROR)\s*:\s*|[╰`]─*[▶>]?\s*|[×x]\s+)?")
_START = re.compile(r"\bBecause\b|The conflict is caused by|The user requested|\bdepends on\b|"
                    r"Ignored the following versions|from versions:|we can conclude")
_STOP = re.compile(r"^\s*(?:hint|help|To fix this|note)\s*:?", re.I)


def reasoning_lines(lines: Sequence[str]) -> list[str]:
    """The lines of the tool's reasoning (uv's derivation, pip's conflict list), as printed."""
    out: list[str] = []
    inside = False
    for raw in lines:
        line = raw.rstrip()
        if _STOP.match(line) or not line.strip():
            inside = False
            continue
        if _START.search(line):
            inside = True
        elif inside and not line.startswith((" ", "\t")):
            inside = False
        if inside:
            out.append(line)
    return out


def _joined(lines: Iterable[str]) -> str:
    """The reasoning as one text: prefixes and box drawing removed, wrapped lines joined."""
    return re.sub(r"\s+", " ", " ".join(_PREFIX.sub("", ln).strip() for ln in lines)).strip()


_REQ = r"[A-Za-z0-9][\w.\-]*(?:\[[^\]]*\])?(?:\{[^}]*\})?(?:[<>=!~]=?[^\s,]+(?:,\s?[<>=!~]=?[^\s,]+)*)?"
# uv's premises, in the order they are tried (each matched against one "A and B" part)
_PREMISES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"^there is no version of (?P<req>{_REQ})$"), "no_version"),
    (re.compile(rf"^only (?P<req>{_REQ}) (?:is|are) available$"), "only"),
    (re.compile(r"^only the following versions of (?P<name>\S+) (?:is|are) available: (?P<req>.+)$"), "only"),
    (re.compile(r"^(?P<name>\S+) was not found in the (?:package registry|provided package locations)$"),
     "not_found"),
    (re.compile(r"^the current Python version \((?P<have>[^)]+)\) does not satisfy Python(?P<spec>\S+)$"),
     "python"),
    (re.compile(rf"^(?P<req>{_REQ}) (?:is unusable because no wheels (?:are|were) available|has no wheels(?: are "
                rf"available)?) with a matching (?P<what>Python [\w ]+|platform)$"), "no_wheel"),
    (re.compile(rf"^(?:all versions of )?(?P<a>{_REQ}) depends? on (?P<b>{_REQ})$"), "depends"),
)


def clean_req(req: str) -> str:
    """A requirement without uv's environment markers: ``x{platform_machine == 'x86_64'}==1`` -> ``x==1``."""
    return re.sub(r"\{[^}]*\}", "", req).strip().strip("`'")


def _premise(text: str) -> Msg | None:
    text = text.strip().rstrip(".")
    for rx, kind in _PREMISES:
        m = rx.match(text)
        if m is None:
            continue
        g = {k: clean_req(v) if isinstance(v, str) and k != "spec" else v for k, v in m.groupdict().items()}
        if kind == "no_version":
            return msg("remedy.why_no_version", "There is no {req} on the package sources.", req=g["req"])
        if kind == "only":
            return msg("remedy.why_only", "Only {req} is available.", req=g["req"])
        if kind == "not_found":
            return msg("remedy.why_not_found", "The package sources do not have {name} at all.", name=g["name"])
        if kind == "python":
            return msg("remedy.why_python", "It needs Python {spec}, but this environment has Python {have}.",
                       spec=g["spec"], have=g["have"])
        if kind == "no_wheel":
            return msg("remedy.why_no_wheel", "{req} has no build for this Python or this computer.", req=g["req"])
        return msg("remedy.why_depends", "{a} needs {b}.", a=g["a"], b=g["b"])
    return None


def _uv_reasons(text: str) -> list[Msg]:
    out: list[Msg] = []
    for clause in re.split(r"(?<=\.)\s+(?=(?:And )?[Bb]ecause\b)", text):
        m = re.search(r"[Bb]ecause (?P<premises>.+?),? we can conclude that (?P<end>.+?)\.?$", clause)
        if m is None:
            continue
        for part in re.split(r" and (?=(?:there is|only|the current|all versions|you require|your project|"
                             r"[A-Za-z0-9][\w.\-]*(?:\[[^\]]*\])?(?:\{[^}]*\})?(?:[<>=!~]=?[^\s,]+)? "
                             r"(?:depends|was|is|has)\b))", m.group("premises")):
            found = _premise(part)
            if found is not None:
                out.append(found)
        end = m.group("end")
        cannot = re.match(rf"^(?P<req>{_REQ}) cannot be used$", end)
        if cannot:
            out.append(msg("remedy.why_cannot_use", "So {req} cannot be used.", req=clean_req(cannot.group("req"))))
    return out


def _pip_reasons(lines: Sequence[str]) -> list[Msg]:
    out: list[Msg] = []
    for line in lines:
        s = _PREFIX.sub("", line).strip()
        m = re.match(r"^The user requested (?P<req>\S+)", s)
        if m:
            out.append(msg("remedy.why_requested", "{req} was asked for.", req=m.group("req")))
            continue
        m = re.match(r"^(?P<name>[\w.\-]+) (?P<ver>\S+) depends on (?P<b>\S+)", s)
        if m:
            out.append(msg("remedy.why_depends", "{a} needs {b}.", a=f"{m.group('name')} {m.group('ver')}",
                           b=m.group("b")))
            continue
        m = re.search(r"Ignored the following versions that require a different python version: (?P<v>\S+) "
                      r"Requires-Python (?P<spec>\S+)", s)
        if m:
            out.append(msg("remedy.why_requires_python", "Version {version} needs Python {spec}.",
                           version=m.group("v"), spec=m.group("spec")))
            continue
        m = re.search(r"satisfies the requirement (?P<req>\S+).*\(from versions: (?P<vs>[^)]*)\)", s)
        if m:
            vs = [v.strip() for v in m.group("vs").split(",") if v.strip() and v.strip() != "none"]
            if vs:
                name = re.split(r"[<>=!~\[;]", m.group("req"), maxsplit=1)[0]
                out.append(msg("remedy.why_available", "The sources have only these versions of {name}: {versions}.",
                               name=name, versions=f"{vs[0]} … {vs[-1]}" if len(vs) > 3 else ", ".join(vs)))
            else:
                out.append(msg("remedy.why_none_available", "The sources have no build of {req} that this Python "
                               "and this computer can use.", req=m.group("req")))
    return out


def explain_reasoning(lines: Sequence[str]) -> tuple[Msg, ...]:
    """The tool's reasoning (of :func:`reasoning_lines`) as sentences, in order, without repeats."""
    picked = reasoning_lines(lines)
    found = _uv_reasons(_joined(picked)) + _pip_reasons(picked)
    out: list[Msg] = []
    for m in found:
        if m not in out:
            out.append(m)
    return tuple(out)


def newest_version(versions: Iterable[str]) -> str | None:
    """The highest of ``versions`` that parse (local labels kept: ``2.14.1+cpu``)."""
    best: tuple[Version, str] | None = None
    for v in versions:
        try:
            parsed = Version(v.strip())
        except InvalidVersion:
            continue
        if parsed.is_prerelease:
            continue
        if best is None or parsed > best[0]:
            best = (parsed, v.strip())
    return best[1] if best else None


def suggested_torch(lines: Sequence[str]) -> str | None:
    """The torch version the tool's reasoning points at, or None.

    Looked for in this order: a companion that pins it ("torchvision 0.29.1 depends on
    torch==2.14.1"), what uv says is available ("only torch<=2.14.1 is available"), the newest
    of pip's "from versions: …" list for torch."""
    text = "\n".join(lines)
    pins = re.findall(r"depends on torch==(?P<v>[\w.+]+)", text)
    if pins:
        return newest_version(pins)
    only = re.findall(r"only torch(?:<=|==)(?P<v>[\w.+]+) (?:is|are) available", text)
    if only:
        return newest_version(only)
    for m in re.finditer(r"requirement torch(?:[<>=!~]=?\S*)? \(from versions: (?P<vs>[^)]*)\)", text):
        found = newest_version(v for v in m.group("vs").split(","))
        if found:
            return found
    return None
