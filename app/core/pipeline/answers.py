"""Answer files: everything the wizard asks, written down once, for unattended installs.

An answer file is TOML (see ``resources/answers.example.toml``, which documents every key).
:func:`load_answers` reads and validates the WHOLE file before anything happens: an unknown
section or key, a value of the wrong type, a value outside its choices, a malformed URL,
version or requirement, or a path that must exist and does not, raises
:class:`~app.core.base.errors.BadInput` (exit code 2) naming the key, its line and the value.

Relative paths are taken relative to the answer file's folder (an admin ships the file and a
bundle side by side); ``~`` and ``$VARS`` are expanded, and a ``$VAR`` that is not set is an
error naming the key (never kept as literal text). The file is read bounded
(:data:`MAX_ANSWERS_BYTES`, :data:`~app.core.base.schema.MAX_DEPTH` levels of nesting); the URLs'
credentials are registered with the secret masker (:mod:`app.core.base.secrets`).
"""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from app.core.base.errors import BadInput, render_hint
from app.core.base.locations import local_path, url_scheme
from app.core.base.schema import (
    MAX_DEPTH,
    MESSAGES,
    bad_field,
    check_depth,
    document,
    must_be,
    not_one_of,
    path_problem,
    read_text,
)
from app.core.base.secrets import remember_url
from app.core.base.serial import to_jsonable
from app.core.base.text import Text, render
from app.core.base.wheels import backend_of_variant
from app.core.sources.settings import SourceSettings

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover - Python 3.10
    import tomli as _toml

ANSWERS_VERSION = 1
BACKENDS = ("auto", "cpu", "cuda", "rocm", "mps", "xpu")
ENV_KINDS = ("venv", "conda")
INSTALLERS = ("uv", "pip")
REPORT_FORMATS = ("json", "md", "html")
BENCH_DEVICES = ("auto", "cpu", "cuda", "mps", "xpu")
BENCH_DTYPES = ("fp32", "tf32", "fp16", "bf16")
# A wheel variant as the compat data names it: cpu, cu118, cu126, rocm6.4, rocm10.0-amd (AMD's index), xpu, mps.
_VARIANT_RE = re.compile(r"^(cpu|xpu|mps|cu\d{3}|rocm\d+\.\d+(\.\d+)?(-amd)?|rocm-[a-z]+)$")
_PY_MINOR_RE = re.compile(r"^3\.\d{1,2}$")
HELP_HINT = "see resources/answers.example.toml for every key and its allowed values"
MAX_ANSWERS_BYTES = 1024 * 1024  # an answer file is a page of settings
_VAR_RE = re.compile(r"\$(?:\{([^}\n]{0,256})\}|([A-Za-z_][A-Za-z0-9_]{0,255}))")


@dataclass(frozen=True)
class Answers:
    """A validated answer file. Paths are absolute; empty strings became ``None``."""

    source: Path | None = None
    # [environment]
    env_kind: str = "venv"
    env_path: Path | None = None
    python: str | None = None  # "3.11" or the path of an interpreter
    installer: str = "uv"
    existing: bool = False
    # [torch]
    backend: str = "auto"  # auto | cpu | cuda | rocm | mps | xpu
    variant: str | None = None  # cpu | cu126 | rocm6.4 | xpu ...
    torch: str | None = None  # a version pin: "2.13.0"
    packages: tuple[str, ...] = ()  # extra packages (torchvision, numpy, ...)
    lock: Path | None = None  # a pylock.toml (torch-setup export): exactly its files, by sha256
    # [sources]: torch_index, default_index (a PyPI mirror), extra_index_urls, find_links (absolute
    # folders), bundle (a folder; "auto" is bundle_auto), proxy, ca_bundle, mirrors
    sources: SourceSettings = field(default_factory=SourceSettings)
    bundle_auto: bool = False  # bundle = "auto": the bundle folder next to the app, if any
    # [verify]
    verify: bool = True
    # [bench]
    bench: bool = True
    bench_budget_s: float = 60.0
    bench_device: str = "auto"
    bench_sizes: tuple[int, ...] = ()
    bench_dtypes: tuple[str, ...] = ()
    # [report]
    report_dir: Path | None = None
    report_formats: tuple[str, ...] = ("json",)
    report_name: str | None = None  # file stem; default: the host name

    def to_dict(self) -> dict[str, Any]:
        return {f.name: to_jsonable(getattr(self, f.name)) for f in fields(self)}


# --------------------------------------------------------------------- the schema
class _Ctx:
    def __init__(self, text: str, base: Path, source: Path | None) -> None:
        self.lines = text.splitlines()
        self.base = base
        self.source = source
        self.what = document("answers", source)

    def bad(self, section: str | None, key: str | None, problem: Text, hint: str = "", *,
            item: int | None = None) -> BadInput:
        """The error of a bad key (:func:`app.core.base.schema.bad_field`): the file, its line,
        ``section.key`` (``[item]``: an entry of its list) and the problem."""
        name = f"{section}.{key}" if section and key else (section or key or "")
        field = f"{name}[{item}]" if item is not None else name
        return bad_field(self.what, field, problem, line=_line_of(self.lines, section, key), hint=hint or HELP_HINT)


# A key's converter: (context, section, key, raw TOML value) -> the Answers field's value.
Converter = Callable[["_Ctx", str, str, Any], Any]


def _line_of(lines: list[str], section: str | None, key: str | None) -> int | None:
    """1-based line of ``key`` inside ``[section]`` (or of the section header)."""
    current = None
    header_line = None
    for i, raw in enumerate(lines, 1):
        s = raw.strip()
        m = re.match(r"^\[\s*([^\]]+?)\s*\]", s)
        if m and not s.startswith("[["):
            current = m.group(1).strip().strip('"\'')
            if current == section and header_line is None:
                header_line = i
                if key is None:
                    return i
            continue
        if key is None:
            continue
        if current == section:
            km = re.match(r'^["\']?([A-Za-z0-9_\-]+)["\']?\s*=', s)
            if km and km.group(1) == key:
                return i
        # dotted form at top level: section.key = ...
        if current is None and section:
            km = re.match(r'^["\']?' + re.escape(section) + r'["\']?\s*\.\s*["\']?([A-Za-z0-9_\-]+)["\']?\s*=', s)
            if km and km.group(1) == key:
                return i
    return header_line


def _str(ctx: _Ctx, sec: str, key: str, v: Any) -> str:
    if not isinstance(v, str):
        raise ctx.bad(sec, key, must_be("text", v))
    return v.strip()


def _bool(ctx: _Ctx, sec: str, key: str, v: Any) -> bool:
    if not isinstance(v, bool):
        raise ctx.bad(sec, key, must_be("flag", v))
    return v


def _choice(choices: tuple[str, ...]) -> Converter:
    def conv(ctx: _Ctx, sec: str, key: str, v: Any) -> Any:
        s = _str(ctx, sec, key, v).lower()
        if s not in choices:
            raise ctx.bad(sec, key, not_one_of(v, choices))
        return s
    return conv


def _str_list(ctx: _Ctx, sec: str, key: str, v: Any) -> list[str]:
    if isinstance(v, str):
        v = [v] if v.strip() else []
    if not isinstance(v, list):
        raise ctx.bad(sec, key, must_be("list", v))
    for i, x in enumerate(v):
        if not isinstance(x, str):
            raise ctx.bad(sec, key, must_be("text", x), item=i)
    return [x.strip() for x in v if x.strip()]


def _show(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 80 else r[:77] + "..."


def _unset_var(s: str) -> str | None:
    """The first ``$VAR`` / ``${VAR}`` in ``s`` that is not set in the environment, or None."""
    for m in _VAR_RE.finditer(s):
        name = m.group(1) if m.group(1) is not None else m.group(2)
        if name not in os.environ:
            return name
    return None


def _expand(s: str, base: Path) -> Path:
    p = Path(os.path.expandvars(os.path.expanduser(s)))
    return p if p.is_absolute() else (base / p)


def _expanded(ctx: _Ctx, sec: str, key: str, s: str) -> Path:
    """``s`` with ``~`` and ``$VARS`` expanded, relative to the answer file; an unset variable is an error."""
    name = _unset_var(s)
    if name is not None:
        raise ctx.bad(sec, key, f"the variable ${name} in {_show(s)} is not set",
                      hint=f"set {name} in the environment, or write the path out")
    p = _expand(s, ctx.base)
    problem = path_problem(str(p))
    if problem is not None:
        raise ctx.bad(sec, key, problem)
    return p


def _probe(ctx: _Ctx, sec: str, key: str, p: Path, test: Callable[[Path], bool]) -> bool:
    """``test(p)`` (is_dir, is_file, exists), an OSError (a name too long, no permission) named."""
    try:
        return test(p)
    except (OSError, ValueError) as exc:
        what = getattr(exc, "strerror", None) or str(exc)
        raise ctx.bad(sec, key, f"the path {_show(str(p))} cannot be used: {what}") from None


def _path(must: str | None = None) -> Converter:
    """A path; ``must`` = "dir" / "file" / "exists" checks it now (before anything happens)."""
    def conv(ctx: _Ctx, sec: str, key: str, v: Any) -> Any:
        s = _str(ctx, sec, key, v)
        if not s:
            return None
        p = _expanded(ctx, sec, key, s)
        if must == "dir" and not _probe(ctx, sec, key, p, Path.is_dir):
            raise ctx.bad(sec, key, f"the folder {str(p)!r} does not exist",
                          hint="fix the path (relative paths are taken from the answer file's folder)")
        if must == "file" and not _probe(ctx, sec, key, p, Path.is_file):
            raise ctx.bad(sec, key, f"the file {str(p)!r} does not exist",
                          hint="fix the path (relative paths are taken from the answer file's folder)")
        return p
    return conv


def _url(schemes: tuple[str, ...] = ("http", "https", "file")) -> Converter:
    def conv(ctx: _Ctx, sec: str, key: str, v: Any) -> Any:
        s = _str(ctx, sec, key, v)
        if not s:
            return None
        return _index_location(ctx, sec, key, s, schemes)
    return conv


def _index_location(ctx: _Ctx, sec: str, key: str, s: str, schemes: tuple[str, ...]) -> str:
    """A URL; where ``file`` URLs are taken, an absolute local folder too (``C:\\simple``,
    ``\\\\server\\simple``, ``/srv/simple``; which is which: :func:`app.core.base.locations.local_path`).
    A relative one is taken for a URL without its ``https://`` and refused."""
    if "file" in schemes and not url_scheme(s) and os.path.isabs(os.path.expanduser(s)):
        return str(_expanded(ctx, sec, key, s))
    _check_url(ctx, sec, key, s, schemes)
    return s


def _check_url(ctx: _Ctx, sec: str, key: str, s: str, schemes: tuple[str, ...]) -> None:
    try:
        parts = urlsplit(s)
    except ValueError as exc:
        raise ctx.bad(sec, key, f"{_show(s)} is not a URL ({exc})") from None
    remember_url(s)  # before any message can show it
    if parts.scheme not in schemes or (parts.scheme != "file" and not parts.netloc) or " " in s:
        raise ctx.bad(sec, key, f"{_show(s)} is not a URL of the form {schemes[0]}://host/...",
                      hint=f"use a full URL starting with {' or '.join(x + '://' for x in schemes)}")


def _url_list(ctx: _Ctx, sec: str, key: str, v: Any) -> list[str]:
    return [_index_location(ctx, sec, key, s, ("http", "https", "file")) for s in _str_list(ctx, sec, key, v)]


def _python(ctx: _Ctx, sec: str, key: str, v: Any) -> str | None:
    s = _str(ctx, sec, key, v)
    if not s:
        return None
    if _PY_MINOR_RE.match(s):
        minor = int(s.split(".")[1])
        if minor < 8:
            raise ctx.bad(sec, key, f"Python {s} is too old for any current PyTorch")
        return s
    if re.match(r"^\d", s):
        raise ctx.bad(sec, key, f"{_show(s)} is neither a version like \"3.11\" nor the path of a Python",
                      hint='write the version as MAJOR.MINOR, e.g. python = "3.11"')
    p = _expanded(ctx, sec, key, s)
    if not _probe(ctx, sec, key, p, Path.exists):
        raise ctx.bad(sec, key, f"the interpreter {str(p)!r} does not exist")
    return str(p)


def _torch_version(ctx: _Ctx, sec: str, key: str, v: Any) -> str | None:
    from packaging.version import InvalidVersion, Version  # start-up: only answer files with a pin need it

    s = _str(ctx, sec, key, v)
    if not s:
        return None
    s = s.removeprefix("==")
    try:
        Version(s)
    except InvalidVersion:
        raise ctx.bad(sec, key, f"{_show(v)} is not a version such as \"2.13.0\"") from None
    return s


def _requirements(ctx: _Ctx, sec: str, key: str, v: Any) -> list[str]:
    # start-up: packaging.requirements (~17 ms) and the recommendation engine only when packages are listed
    from packaging.requirements import InvalidRequirement, Requirement

    from app.core.recommend import COMPANIONS

    items = _str_list(ctx, sec, key, v)
    for s in items:
        try:
            req = Requirement(s)
        except InvalidRequirement as exc:
            raise ctx.bad(sec, key, f"{_show(s)} is not a package requirement ({exc})") from None
        name = req.name.lower().replace("_", "-")
        if name == "torch":
            raise ctx.bad(sec, key, "torch is always installed; pin its version with [torch] version",
                          hint='e.g. version = "2.13.0", and list only the other packages here')
        if name in COMPANIONS and (req.specifier or req.extras or req.url):
            raise ctx.bad(sec, key, f"{_show(s)}: {name} is pinned to match torch automatically; "
                                    "list it by name only", hint=f'write "{name}"')
    return items


def _mirrors(ctx: _Ctx, sec: str, key: str, v: Any) -> str | tuple[str, ...]:
    """``"auto"``, ``"off"`` or a list of catalogue ids / http(s) URLs (app.core.sources)."""
    from app.core.sources import parse_mirrors  # start-up: only answer files that name mirrors

    if not (isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))):
        raise ctx.bad(sec, key, f'expected "auto", "off" or a list of mirror ids or URLs, got {_show(v)}')
    if isinstance(v, str) and v.strip().lower() not in ("auto", "off"):
        raise ctx.bad(sec, key, f'{_show(v)} is not "auto" or "off"',
                      hint='a list of mirrors is written mirrors = ["nju-torch", "https://…"]')
    try:
        return parse_mirrors(v)
    except BadInput as err:
        raise ctx.bad(sec, key, render(err.message), hint=render_hint(err.hint) if err.hint else HELP_HINT) from None


def _backend(ctx: _Ctx, sec: str, key: str, v: Any) -> str:
    s = _str(ctx, sec, key, v).lower() or "auto"
    if s in BACKENDS or _VARIANT_RE.match(s):
        return s
    raise ctx.bad(sec, key, f"{_show(v)} is not one of {', '.join(BACKENDS)} "
                            f"nor a wheel variant such as cu126 or rocm6.4")


def _variant(ctx: _Ctx, sec: str, key: str, v: Any) -> str | None:
    s = _str(ctx, sec, key, v).lower()
    if not s:
        return None
    if not _VARIANT_RE.match(s):
        raise ctx.bad(sec, key, f"{_show(v)} is not a wheel variant such as cpu, cu126, rocm6.4 or xpu")
    return s


def _number(lo: float, hi: float) -> Converter:
    def conv(ctx: _Ctx, sec: str, key: str, v: Any) -> Any:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ctx.bad(sec, key, must_be("number", v))
        if not lo <= v <= hi:
            raise ctx.bad(sec, key, MESSAGES.msg("out_of_range", value=v, lo=f"{lo:g}", hi=f"{hi:g}"))
        return float(v)
    return conv


def _sizes(ctx: _Ctx, sec: str, key: str, v: Any) -> list[int]:
    if not isinstance(v, list):
        raise ctx.bad(sec, key, must_be("list", v))
    for i, x in enumerate(v):
        if not isinstance(x, int) or isinstance(x, bool):
            raise ctx.bad(sec, key, must_be("whole_number", x), item=i)
        if not 16 <= x <= 65536:
            raise ctx.bad(sec, key, MESSAGES.msg("out_of_range", value=x, lo=16, hi=65536), item=i)
    return list(v)


def _subset(choices: tuple[str, ...]) -> Converter:
    def conv(ctx: _Ctx, sec: str, key: str, v: Any) -> Any:
        items = [x.lower() for x in _str_list(ctx, sec, key, v)]
        for i, x in enumerate(items):
            if x not in choices:
                raise ctx.bad(sec, key, not_one_of(x, choices), item=i)
        return items
    return conv


def _stem(ctx: _Ctx, sec: str, key: str, v: Any) -> str | None:
    s = _str(ctx, sec, key, v)
    if s and (("/" in s) or ("\\" in s) or s in (".", "..")):
        raise ctx.bad(sec, key, f"{_show(s)} must be a file name without folders")
    return s or None


# section -> key -> (Answers field, converter)
SCHEMA: dict[str, dict[str, tuple[str, Converter | None]]] = {
    "environment": {
        "kind": ("env_kind", _choice(ENV_KINDS)),
        "path": ("env_path", _path()),
        "python": ("python", _python),
        "installer": ("installer", _choice(INSTALLERS)),
        "existing": ("existing", _bool),
    },
    "torch": {
        "backend": ("backend", _backend),
        "variant": ("variant", _variant),
        "version": ("torch", _torch_version),
        "packages": ("packages", _requirements),
        "lock": ("lock", _path("file")),
    },
    "sources": {  # SourceSettings' fields (OLD_NAMES: what older answer files call two of them)
        "torch_index": ("sources.torch_index", _url()),
        "default_index": ("sources.default_index", _url()),
        "extra_index_urls": ("sources.extra_index_urls", _url_list),
        "find_links": ("sources.find_links", None),  # special-cased: a list of existing folders or URLs
        "bundle": ("sources.bundle", None),  # special-cased: a folder or "auto"
        "proxy": ("sources.proxy", _url(("http", "https", "socks5", "socks5h"))),
        "ca_bundle": ("sources.ca_bundle", _path("file")),
        "mirrors": ("sources.mirrors", _mirrors),
    },
    "verify": {
        "enabled": ("verify", _bool),
    },
    "bench": {
        "enabled": ("bench", _bool),
        "budget_s": ("bench_budget_s", _number(1, 3600)),
        "device": ("bench_device", _choice(BENCH_DEVICES)),
        "sizes": ("bench_sizes", _sizes),
        "dtypes": ("bench_dtypes", _subset(BENCH_DTYPES)),
    },
    "report": {
        "folder": ("report_dir", _path()),
        "formats": ("report_formats", _subset(REPORT_FORMATS)),
        "name": ("report_name", _stem),
    },
}
TOP_LEVEL = ("version",)
#: keys renamed since: (section, old name) -> the name now; the old name is still read (not both at once)
OLD_NAMES = {("sources", "index_url"): "torch_index", ("sources", "mirror"): "default_index"}


def _find_links(ctx: _Ctx, sec: str, key: str, v: Any) -> list[Path]:
    out = []
    for s in _str_list(ctx, sec, key, v):
        local = local_path(s)  # C:\wh, \\server\share\wh, ./wh, file:///C:/wh
        if local is None or url_scheme(s) == "file":
            _check_url(ctx, sec, key, s, ("http", "https", "file"))
        if local is None:
            raise ctx.bad(sec, key, f"{_show(s)}: find_links takes local folders",
                          hint="for a web index use torch_index or extra_index_urls")
        p = _expanded(ctx, sec, key, local)
        if not _probe(ctx, sec, key, p, Path.is_dir):
            raise ctx.bad(sec, key, f"the folder {str(p)!r} does not exist")
        out.append(p)
    return out


def _bundle(ctx: _Ctx, sec: str, key: str, v: Any) -> Path | str | None:
    s = _str(ctx, sec, key, v)
    if s.lower() == "auto":
        return "auto"
    local = local_path(s)  # D:\bundle, file:///D:/bundle
    if local is None:
        _check_url(ctx, sec, key, s, ("http", "https", "file"))
        raise ctx.bad(sec, key, f"{_show(s)}: the bundle is a local folder", hint="copy the bundle to this machine")
    found: Path | None = _path("dir")(ctx, sec, key, local)
    return found


def _value(ctx: _Ctx, sec: str, key: str, v: Any, kw: dict[str, Any]) -> None:
    """Convert one key's value into ``kw`` (the Answers fields; ``sources.<name>``: a field of its
    sources); ``key`` as written (errors name it), an old name too (:data:`OLD_NAMES`)."""
    fname, conv = SCHEMA[sec][OLD_NAMES.get((sec, key), key)]
    if fname == "sources.find_links":
        out: Any = tuple(str(p) for p in _find_links(ctx, sec, key, v))
    elif fname == "sources.bundle":
        out = _bundle(ctx, sec, key, v)
        if out == "auto":
            kw["bundle_auto"] = True
            return
    elif conv is not None:
        out = conv(ctx, sec, key, v)
        out = tuple(out) if isinstance(out, list) else out
    else:
        return
    if fname.startswith("sources."):
        if fname in kw:  # the key under its old name and its new one
            new = fname.split(".", 1)[1]
            old = next(o for (s_, o), n in OLD_NAMES.items() if s_ == sec and n == new)
            raise ctx.bad(sec, key, f"{new} and {old} (its old name) are the same key: give only {new}")
        out = str(out) if fname == "sources.ca_bundle" and out is not None else out
    kw[fname] = out


def _section(ctx: _Ctx, top: str, value: Any, kw: dict[str, Any]) -> None:
    """One top-level entry: a known section whose keys are all known, or the answer file's version."""
    if top in TOP_LEVEL:
        if top == "version" and (type(value) is not int or value != ANSWERS_VERSION):  # true == 1, 1.0 == 1
            raise ctx.bad(None, "version",
                          f"version {_show(value)} is not supported (this assistant reads {ANSWERS_VERSION})")
        return
    if top not in SCHEMA:
        close = _close(top, list(SCHEMA) + list(TOP_LEVEL))
        problem = f"unknown section or key {top!r}" + (f"; did you mean {close!r}?" if close else "")
        if isinstance(value, dict):
            raise ctx.bad(top, None, problem)
        raise ctx.bad(None, top, problem)
    if not isinstance(value, dict):
        raise ctx.bad(None, top, f"{top!r} must be a section ([{top}]), got {_show(value)}")
    keys = SCHEMA[top]
    for key, v in value.items():
        if OLD_NAMES.get((top, key), key) not in keys:
            close = _close(key, list(keys))
            raise ctx.bad(top, key, f"unknown key {key!r} in [{top}]"
                          + (f"; did you mean {close!r}?" if close else f"; allowed: {', '.join(keys)}"))
        _value(ctx, top, key, v, kw)


def _backend_name(variant: str) -> str:
    """The backend a wheel variant builds for (``cu126`` -> ``cuda``; cpu, xpu, mps themselves)."""
    found = backend_of_variant(variant)
    return found.value if found is not None else variant


def _cross_checks(ctx: _Ctx, data: dict[str, Any], kw: dict[str, Any]) -> None:
    """Rules between keys; fills in ``variant`` / ``backend`` when ``backend`` names a variant."""
    if kw.get("env_path") is None:
        raise ctx.bad("environment", "path" if "environment" in data else None,
                      "the environment path is required ([environment] path = \"...\")",
                      hint="say where the new environment goes, e.g. path = \"~/torch-env\"")
    if kw.get("existing") and kw.get("env_kind", "venv") == "venv":
        p = kw["env_path"]
        if not _probe(ctx, "environment", "path", p / "pyvenv.cfg", Path.is_file):
            raise ctx.bad("environment", "existing",
                          f"existing = true but {str(p)!r} is not a Python virtual environment")
    backend = kw.get("backend", "auto")
    if _VARIANT_RE.match(backend) and backend not in BACKENDS:  # backend = "cu126" means that variant
        if kw.get("variant") and kw["variant"] != backend:
            raise ctx.bad("torch", "variant", f"variant {kw['variant']!r} contradicts backend {backend!r}")
        kw["variant"] = backend
        kw["backend"] = _backend_name(backend)
    elif kw.get("variant") and backend not in ("auto", _backend_name(kw["variant"])):
        raise ctx.bad("torch", "variant", f"variant {kw['variant']!r} is not a {backend} build")
    _lock_checks(ctx, kw)
    if kw.get("sources.bundle") is not None and (kw.get("sources.torch_index") or kw.get("sources.extra_index_urls")):
        raise ctx.bad("sources", "bundle", "an offline bundle cannot be combined with torch_index or "
                                           "extra_index_urls (a bundle installs with no network)")


def _lock_checks(ctx: _Ctx, kw: dict[str, Any]) -> None:
    """A lock decides the build and the packages: the keys that name them cannot stand beside it."""
    if kw.get("lock") is None:
        return
    for key, field_name in (("version", "torch"), ("variant", "variant"), ("packages", "packages")):
        if kw.get(field_name):
            raise ctx.bad("torch", key, f"{key} cannot be set with lock: the lock decides it",
                          hint="remove the key, or the lock")
    if kw.get("backend", "auto") != "auto":
        raise ctx.bad("torch", "backend", "backend cannot be set with lock: the lock decides it",
                      hint="remove the key, or the lock")
    if kw.get("sources.bundle") is not None or kw.get("bundle_auto"):
        raise ctx.bad("sources", "bundle", "an offline bundle and a lock cannot be combined",
                      hint="make the bundle from the lock (torch-setup bundle --lock) and give only the bundle")


def parse_answers(text: str, *, source: Path | None = None, base: Path | None = None) -> Answers:
    """Validate answer-file ``text``; ``base`` is the folder relative paths start from."""
    base = base or (source.parent if source else Path.cwd())
    ctx = _Ctx(text, base.resolve(), source)
    src = f"{source.name}: " if source else ""
    if len(text) > MAX_ANSWERS_BYTES:
        raise BadInput(f"Answer file {src}is {len(text)} characters long; an answer file is at most "
                       f"{MAX_ANSWERS_BYTES // 1024} KB", hint=HELP_HINT)
    _refuse_long_dotted_keys(text, src)
    try:
        data = _toml.loads(text)
    except _toml.TOMLDecodeError as exc:
        raise BadInput(f"Answer file {src}is not valid TOML: {exc}",
                       hint="fix the syntax at that line; " + HELP_HINT) from None
    except RecursionError:
        raise _too_deep(ctx, text) from None
    except ValueError as exc:  # tomllib's int() of a number over 4,300 digits
        raise _too_long_number(ctx, text, exc) from None
    check_depth(data, what=f"Answer file {src}".rstrip(": "))
    kw: dict[str, Any] = {"source": source}
    for top, value in data.items():
        _section(ctx, top, value, kw)
    _cross_checks(ctx, data, kw)
    sources = {k.split(".", 1)[1]: kw.pop(k) for k in list(kw) if k.startswith("sources.")}
    return Answers(**kw, sources=SourceSettings(**sources))


_LONG_DIGITS_RE = re.compile(r"(?<![0-9_])[0-9_]{40}")  # (?<!...): starts only where a run starts: linear


def _refuse_long_dotted_keys(text: str, src: str) -> None:
    """A key of thousands of dotted parts (``a.a.a...= 1``) costs the TOML reader quadratic time
    and memory: refuse it first, naming its line (keys here have at most two parts)."""
    for n, line in enumerate(text.splitlines(), 1):
        s = line.lstrip()
        if s.startswith("["):
            key = s.lstrip("[").split("]", 1)[0]
        elif "=" in s and not s.startswith("#"):
            key = s.split("=", 1)[0]
        else:
            continue
        if key.count(".") >= MAX_DEPTH:
            raise BadInput(f"Answer file {src}line {n}: the key {key.strip()[:40]!r}... is nested more than "
                           f"{MAX_DEPTH} levels deep", hint=HELP_HINT)


def _key_on_line(ctx: _Ctx, line_no: int) -> str:
    line = ctx.lines[line_no - 1] if 0 < line_no <= len(ctx.lines) else ""
    return line.split("=", 1)[0].strip().strip("\"'")[:60] if "=" in line else ""


def _too_deep(ctx: _Ctx, text: str) -> BadInput:
    """The key (and line) where brackets nest too deep for the TOML reader; asked only after it failed."""
    depth, line_no, in_string = 0, 1, ""
    for ch in text:
        if ch == "\n":
            line_no += 1
        elif in_string:
            in_string = "" if ch == in_string else in_string
        elif ch in "\"'":
            in_string = ch
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                break
        elif ch in "]}":
            depth -= 1
    key = _key_on_line(ctx, line_no)
    src = f"{ctx.source.name}: " if ctx.source else ""
    where = f"'{key}' (line {line_no})" if key else f"line {line_no}"
    return BadInput(f"Answer file {src}{where} is nested more than {MAX_DEPTH} levels deep", hint=HELP_HINT)


def _too_long_number(ctx: _Ctx, text: str, exc: ValueError) -> BadInput:
    """The key whose value is a number too long to read (TOML itself says nothing of it)."""
    m = _LONG_DIGITS_RE.search(text)
    if m is not None:
        line_no = text.count("\n", 0, m.start()) + 1
        key = _key_on_line(ctx, line_no)
        src = f"{ctx.source.name}: " if ctx.source else ""
        # an empty key ("" = 1000...) or a number inside an array still has its line
        where = f"'{key}' (line {line_no})" if key else f"line {line_no}"
        return BadInput(f"Answer file {src}{where}: the number is too long", hint=HELP_HINT)
    return BadInput(f"Answer file is not valid TOML: {exc}", hint=HELP_HINT)


def _close(word: str, options: list[str]) -> str | None:
    import difflib  # start-up: only for a misspelt key

    m = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return m[0] if m else None


def load_answers(path: str | os.PathLike[str]) -> Answers:
    """Read and validate an answer file; every problem is a BadInput naming the key."""
    p = Path(path).expanduser()
    text = read_text(p, what="answer file", limit=MAX_ANSWERS_BYTES,
                     missing_hint="give the path of a .toml answer file")
    return parse_answers(text, source=p.resolve())
