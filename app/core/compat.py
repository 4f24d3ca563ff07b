"""The compatibility data (``resources/compat/*.toml``): one loader that reads AND validates it.

Three files, each row carrying its ``source``:

* ``releases.toml``: ``[meta]`` (version, date, ...) and one ``[[release]]`` per torch release
  with its Python range, glibc floor, PyPI default build per platform, companion package
  versions, and the wheel variants (``[[release.variant]]``) it published per platform, each
  with its CUDA toolkit and compiled compute-capability list, or its ROCm line and gfx targets.
* ``drivers.toml``: NVIDIA driver floors per CUDA major and the driver of each toolkit.
* ``hardware.toml``: the compute-capability rule (Tegra exclusions), name -> CC / gfx fallbacks,
  HSA_OVERRIDE_GFX_VERSION families, Intel XPU-capable families.

A malformed file raises :class:`BadInput` naming the file and the row at fault, e.g.
``resources/compat/releases.toml: release 2.9, variant cu130 (windows-x86_64): 'arch' entry
'9.x' is not a compute capability``. Nothing is cached on disk; one parse per process.
"""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from app.core.errors import BadInput
from app.core.oserrors import os_error_text
from app.core.text import msg

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PLATFORMS = ("linux-x86_64", "linux-aarch64", "windows-x86_64", "macos-arm64", "macos-x86_64")
BACKENDS = ("cuda", "rocm", "xpu", "mps", "cpu")
FILES = ("releases.toml", "drivers.toml", "hardware.toml")

_CC_RE = re.compile(r"^(\d{1,2})\.(\d)$")
_VER_RE = re.compile(r"^\d+(\.\d+)*$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")
_MINOR_RE = re.compile(r"^3\.\d{1,2}$")
_GFX_RE = re.compile(r"^gfx[0-9a-f]{3,4}$")
_RELEASE_RE = re.compile(r"^2\.\d{1,2}$")


def version_tuple(text: str) -> tuple[int, ...]:
    """"525.60.13" -> (525, 60, 13); compare numerically. Raises ValueError on garbage."""
    return tuple(int(p) for p in str(text).strip().split("."))


def cc_tuple(text: str) -> tuple[int, int]:
    m = _CC_RE.match(str(text).strip())
    if not m:
        raise ValueError(text)
    return int(m.group(1)), int(m.group(2))


@dataclass(frozen=True)
class Variant:
    name: str  # cu126, rocm6.4, xpu, cpu, mps, rocm-therock
    backend: str
    platforms: tuple[str, ...]
    index_url: str
    source: str
    cuda: str | None = None  # "12.6"
    arch: tuple[str, ...] = ()  # compiled compute capabilities (SASS)
    ptx: bool = False
    rocm: str | None = None
    gfx: tuple[str, ...] = ()
    therock: bool = False  # TheRock-based ROCm runtime (HSA override must not be set)
    explicit: bool = False  # only when the user asks for it by name
    glibc_min: str | None = None  # overrides the release's
    macos_min: str | None = None  # oldest macOS the wheel installs on
    mps_macos_min: str | None = None  # oldest macOS on which MPS is usable

    @property
    def cuda_major(self) -> int | None:
        return int(self.cuda.split(".")[0]) if self.cuda else None

    @property
    def arch_tuples(self) -> tuple[tuple[int, int], ...]:
        return tuple(cc_tuple(a) for a in self.arch)

    def label(self) -> str:
        """The build's name in English ("CUDA 12.6"); sentences use recommend.words.build_label."""
        if self.backend == "cuda":
            return f"CUDA {self.cuda}"
        if self.backend == "rocm":
            return f"ROCm {self.rocm}" + (" (AMD TheRock)" if self.name == "rocm-therock" else "")
        if self.backend == "xpu":
            return "Intel XPU"
        if self.backend == "mps":
            return "macOS (MPS)"
        return "CPU-only"


@dataclass(frozen=True)
class Release:
    torch: str  # "2.14"
    latest: str  # "2.14.1"
    date: str
    python_min: str
    python_max: str
    glibc_min: str
    source: str
    pypi_default: dict[str, str]
    companions: dict[str, str]  # torchvision -> "0.29.1" ("" = none published)
    companions_source: str
    variants: tuple[Variant, ...]

    @property
    def key(self) -> tuple[int, int]:
        a, b = self.torch.split(".")
        return int(a), int(b)

    def python_ok(self, minor: str) -> bool:
        try:
            v = version_tuple(minor)[:2]
        except ValueError:
            return False
        return version_tuple(self.python_min) <= v <= version_tuple(self.python_max)

    def pythons(self) -> list[str]:
        lo, hi = version_tuple(self.python_min)[1], version_tuple(self.python_max)[1]
        return [f"3.{m}" for m in range(lo, hi + 1)]

    def variants_for(self, platform: str | None) -> list[Variant]:
        return [v for v in self.variants if platform in v.platforms]


@dataclass(frozen=True)
class DriverFloor:
    major: int
    linux: str
    windows: str
    source: str


@dataclass(frozen=True)
class Toolkit:
    cuda: str
    linux: str
    windows: str  # "" = NVIDIA lists none
    source: str


@dataclass(frozen=True)
class NameRule:
    pattern: re.Pattern[str]
    value: str
    source: str


@dataclass(frozen=True)
class HsaOverride:
    family: str
    gfx: tuple[str, ...]
    value: str
    as_gfx: str
    reliable: bool
    source: str


@dataclass(frozen=True)
class IntelFamily:
    pattern: re.Pattern[str]
    family: str
    xpu: bool
    source: str


@dataclass(frozen=True)
class CompatData:
    version: str
    date: str
    releases: tuple[Release, ...]  # newest first
    driver_floors: dict[int, DriverFloor]
    toolkits: dict[str, Toolkit]
    tegra: frozenset[str]
    tegra_source: str
    nvidia_names: tuple[NameRule, ...]
    amd_names: tuple[NameRule, ...]
    hsa_overrides: tuple[HsaOverride, ...]
    intel_families: tuple[IntelFamily, ...]
    python_preference: tuple[str, ...]
    jetson_note: str
    folder: str = ""
    index_pattern: str = "https://download.pytorch.org/whl/{variant}"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def newest(self) -> Release:
        return self.releases[0]

    def release(self, torch: str) -> Release | None:
        for r in self.releases:
            if r.torch == torch:
                return r
        return None

    def variant_names(self) -> list[str]:
        seen: list[str] = []
        for r in self.releases:
            for v in r.variants:
                if v.name not in seen:
                    seen.append(v.name)
        return seen

    def describe(self) -> str:
        return f"compat data {self.version} ({self.date})"


# ------------------------------------------------------------------------------- loading

class _Ctx:
    """Error context: file + row description."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, row: str, msg: str) -> NoReturn:
        where = f"{self.file}: {row}: " if row else f"{self.file}: "
        raise BadInput(where + msg, hint="Fix that row of the compatibility data (each row needs its "
                                         "fields and a source); see docs/compat-decisions.md.")


def _req(ctx: _Ctx, row: str, d: dict[str, Any], key: str, typ: type = str) -> Any:
    if key not in d:
        ctx.fail(row, f"'{key}' is missing")
    val = d[key]
    if typ is str and (not isinstance(val, str) or not val.strip()) and key != "windows":
        ctx.fail(row, f"'{key}' must be a non-empty string, got {val!r}")
    if typ is list and not isinstance(val, list):
        ctx.fail(row, f"'{key}' must be a list, got {val!r}")
    if typ is bool and not isinstance(val, bool):
        ctx.fail(row, f"'{key}' must be true or false, got {val!r}")
    return val


def _ver(ctx: _Ctx, row: str, key: str, val: object, allow_empty: bool = False) -> str:
    if allow_empty and val == "":
        return ""
    if not isinstance(val, str) or not _VER_RE.match(val):
        ctx.fail(row, f"'{key}' {val!r} is not a version number like 525.60.13")
    return val


def _regex(ctx: _Ctx, row: str, pattern: object) -> re.Pattern[str]:
    if not isinstance(pattern, str) or not pattern:
        ctx.fail(row, f"'pattern' must be a non-empty string, got {pattern!r}")
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        ctx.fail(row, f"'pattern' {pattern!r} is not a valid regular expression ({exc})")


def _read(folder: Path, name: str, shown: str) -> dict[str, Any]:
    path = folder / name
    try:
        with open(path, "rb") as fh:
            doc: dict[str, Any] = tomllib.load(fh)
            return doc
    except FileNotFoundError:
        raise BadInput(f"{shown}: the compatibility data file is missing",
                       hint="Reinstall the assistant, or point --compat at a complete folder.") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{shown}: not valid TOML ({exc})", hint="Fix the syntax of that file.") from None
    except OSError as exc:
        raise BadInput(msg("compat.unreadable", "{file}: cannot be read ({reason})", file=shown,
                           reason=os_error_text(exc))) from None


def _shown(folder: Path, name: str) -> str:
    p = folder / name
    try:
        from app.core.paths import app_root

        return str(p.resolve().relative_to(app_root()))
    except Exception:
        return str(p)


def _variant(ctx: _Ctx, rel: str, v: object, index_pattern: str, n: int) -> Variant:
    if not isinstance(v, dict):
        ctx.fail(f"release {rel}, variant #{n + 1}", "must be a table")
    name = v.get("name")
    plats = v.get("platforms")
    row = f"release {rel}, variant {name if isinstance(name, str) and name else '#' + str(n + 1)}"
    if isinstance(plats, list) and plats:
        row += f" ({', '.join(map(str, plats))})"
    name = _req(ctx, row, v, "name")
    backend = _req(ctx, row, v, "backend")
    if backend not in BACKENDS:
        ctx.fail(row, f"'backend' {backend!r} is not one of {', '.join(BACKENDS)}")
    plats = _req(ctx, row, v, "platforms", list)
    if not plats:
        ctx.fail(row, "'platforms' is empty")
    for p in plats:
        if p not in PLATFORMS:
            ctx.fail(row, f"'platforms' entry {p!r} is not one of {', '.join(PLATFORMS)}")
    source = _req(ctx, row, v, "source")
    index = v.get("index", index_pattern.format(variant=name))
    if not isinstance(index, str) or not index.startswith("https://"):
        ctx.fail(row, f"'index' {index!r} is not an https:// URL")
    kw: dict[str, Any] = {}
    if backend == "cuda":
        if not re.match(r"^cu\d{3}$", name):
            ctx.fail(row, f"a CUDA variant's name must look like cu126, got {name!r}")
        cuda = _req(ctx, row, v, "cuda")
        if not re.match(r"^\d{2}\.\d$", cuda):
            ctx.fail(row, f"'cuda' {cuda!r} is not a CUDA version like 12.6")
        if name != "cu" + cuda.replace(".", ""):
            ctx.fail(row, f"'cuda' {cuda!r} does not match the variant name {name!r}")
        arch = _req(ctx, row, v, "arch", list)
        if not arch:
            ctx.fail(row, "'arch' is empty")
        prev = None
        for a in arch:
            if not isinstance(a, str) or not _CC_RE.match(a):
                ctx.fail(row, f"'arch' entry {a!r} is not a compute capability")
            t = cc_tuple(a)
            if prev is not None and t <= prev:
                ctx.fail(row, f"'arch' entries must be in ascending order without repeats ({a!r} after "
                              f"{'.'.join(map(str, prev))!r})")
            prev = t
        kw.update(cuda=cuda, arch=tuple(arch), ptx=bool(_req(ctx, row, v, "ptx", bool)))
    elif backend == "rocm":
        rocm = _req(ctx, row, v, "rocm")
        _ver(ctx, row, "rocm", rocm)
        gfx = _req(ctx, row, v, "gfx", list)
        if not gfx:
            ctx.fail(row, "'gfx' is empty")
        for g in gfx:
            if not isinstance(g, str) or not _GFX_RE.match(g):
                ctx.fail(row, f"'gfx' entry {g!r} is not a gfx target like gfx1100")
        kw.update(rocm=rocm, gfx=tuple(gfx), therock=bool(v.get("therock", False)))
    for key in ("arch", "gfx", "cuda", "rocm"):
        if key in v and key not in kw:
            ctx.fail(row, f"'{key}' does not belong to a {backend} variant")
    for key in ("glibc_min", "macos_min", "mps_macos_min"):
        if key in v:
            kw[key] = _ver(ctx, row, key, v[key])
    if backend == "mps" and (set(plats) != {"macos-arm64"} or "mps_macos_min" not in v):
        ctx.fail(row, "an mps variant is for macos-arm64 only and needs 'mps_macos_min'")
    known = {"name", "backend", "platforms", "index", "cuda", "arch", "ptx", "rocm", "gfx", "therock",
             "explicit", "glibc_min", "macos_min", "mps_macos_min", "source"}
    unknown = sorted(set(v) - known)
    if unknown:
        ctx.fail(row, f"unknown field(s) {', '.join(map(repr, unknown))}")
    return Variant(name=name, backend=backend, platforms=tuple(plats), index_url=index, source=source,
                   explicit=bool(v.get("explicit", False)), **kw)


# long: one validation per field of a release row, each naming the row at fault
def _releases(doc: dict[str, Any], ctx: _Ctx) -> tuple[dict[str, Any], tuple[Release, ...]]:
    meta = doc.get("meta")
    if not isinstance(meta, dict):
        ctx.fail("", "the [meta] table (version, date) is missing")
    version = _req(ctx, "[meta]", meta, "version")
    date = _req(ctx, "[meta]", meta, "date")
    if not _DATE_RE.match(date):
        ctx.fail("[meta]", f"'date' {date!r} is not a date like 2026-11-30")
    prefs = meta.get("python_preference", ["3.12"])
    if not isinstance(prefs, list) or not all(isinstance(p, str) and _MINOR_RE.match(p) for p in prefs):
        ctx.fail("[meta]", f"'python_preference' must be a list of versions like 3.12, got {prefs!r}")
    index_pattern = meta.get("index_pattern", "https://download.pytorch.org/whl/{variant}")
    rows = doc.get("release")
    if not isinstance(rows, list) or not rows:
        ctx.fail("", "no [[release]] rows")
    out: list[Release] = []
    seen: set[str] = set()
    for i, r in enumerate(rows):
        if not isinstance(r, dict):
            ctx.fail(f"release #{i + 1}", "must be a table")
        tag = r.get("torch")
        row = f"release {tag}" if isinstance(tag, str) and tag else f"release #{i + 1}"
        torch = _req(ctx, row, r, "torch")
        if not _RELEASE_RE.match(torch):
            ctx.fail(row, f"'torch' {torch!r} is not a release like 2.14")
        if torch in seen:
            ctx.fail(row, "appears twice")
        seen.add(torch)
        latest = _req(ctx, row, r, "latest")
        if not latest.startswith(torch + ".") or not _VER_RE.match(latest):
            ctx.fail(row, f"'latest' {latest!r} is not a {torch}.N version")
        rdate = _req(ctx, row, r, "date")
        if not _DATE_RE.match(rdate):
            ctx.fail(row, f"'date' {rdate!r} is not a date like 2026-09-02 or 2026-09")
        pmin = _req(ctx, row, r, "python_min")
        pmax = _req(ctx, row, r, "python_max")
        for key, val in (("python_min", pmin), ("python_max", pmax)):
            if not _MINOR_RE.match(val):
                ctx.fail(row, f"'{key}' {val!r} is not a Python version like 3.12")
        if version_tuple(pmin) > version_tuple(pmax):
            ctx.fail(row, f"'python_min' {pmin} is newer than 'python_max' {pmax}")
        glibc = _ver(ctx, row, "glibc_min", _req(ctx, row, r, "glibc_min"))
        source = _req(ctx, row, r, "source")
        pypi = r.get("pypi_default", {})
        if not isinstance(pypi, dict):
            ctx.fail(row, "'pypi_default' must be a table")
        comps = r.get("companions", {})
        if not isinstance(comps, dict):
            ctx.fail(row, "'companions' must be a table")
        for k, val in comps.items():
            if not isinstance(val, str) or (val and not _VER_RE.match(val)):
                ctx.fail(row, f"companion {k} version {val!r} is not a version number (or \"\")")
        if comps and not isinstance(r.get("companions_source"), str):
            ctx.fail(row, "'companions' needs a 'companions_source'")
        vrows = r.get("variant")
        if not isinstance(vrows, list) or not vrows:
            ctx.fail(row, "has no [[release.variant]] rows")
        variants = tuple(_variant(ctx, torch, v, index_pattern, n) for n, v in enumerate(vrows))
        pairs: set[tuple[str, str]] = set()
        for v in variants:
            for p in v.platforms:
                if (v.name, p) in pairs:
                    ctx.fail(f"release {torch}, variant {v.name} ({p})", "listed twice for this platform")
                pairs.add((v.name, p))
        for plat, vname in pypi.items():
            if plat not in PLATFORMS:
                ctx.fail(row, f"'pypi_default' key {plat!r} is not one of {', '.join(PLATFORMS)}")
            if (vname, plat) not in pairs:
                ctx.fail(row, f"'pypi_default' {plat} = {vname!r} is not a variant of this release on {plat}")
        out.append(Release(torch=torch, latest=latest, date=rdate, python_min=pmin, python_max=pmax,
                           glibc_min=glibc, source=source, pypi_default=dict(pypi), companions=dict(comps),
                           companions_source=str(r.get("companions_source", "")), variants=variants))
    out.sort(key=lambda rel: rel.key, reverse=True)
    meta_out = {"version": version, "date": date, "python_preference": tuple(prefs),
                "index_pattern": index_pattern}
    return meta_out, tuple(out)


def _drivers(doc: dict[str, Any], ctx: _Ctx) -> tuple[dict[int, DriverFloor], dict[str, Toolkit]]:
    floors: dict[int, DriverFloor] = {}
    rows = doc.get("cuda_major")
    if not isinstance(rows, list) or not rows:
        ctx.fail("", "no [[cuda_major]] rows")
    for i, r in enumerate(rows):
        row = f"cuda_major {r.get('major', '#' + str(i + 1)) if isinstance(r, dict) else '#' + str(i + 1)}"
        if not isinstance(r, dict):
            ctx.fail(row, "must be a table")
        major = r.get("major")
        if not isinstance(major, int) or isinstance(major, bool) or not 8 <= major <= 20:
            ctx.fail(row, f"'major' {major!r} is not a CUDA major version")
        lin = _ver(ctx, row, "linux", _req(ctx, row, r, "linux"))
        win = _ver(ctx, row, "windows", _req(ctx, row, r, "windows"))
        floors[major] = DriverFloor(major, lin, win, _req(ctx, row, r, "source"))
    toolkits: dict[str, Toolkit] = {}
    for i, r in enumerate(doc.get("toolkit") or []):
        row = f"toolkit {r.get('cuda', '#' + str(i + 1)) if isinstance(r, dict) else '#' + str(i + 1)}"
        if not isinstance(r, dict):
            ctx.fail(row, "must be a table")
        cuda = _req(ctx, row, r, "cuda")
        if not re.match(r"^\d{2}\.\d$", cuda):
            ctx.fail(row, f"'cuda' {cuda!r} is not a CUDA version like 12.6")
        lin = _ver(ctx, row, "linux", _req(ctx, row, r, "linux"))
        win = _ver(ctx, row, "windows", r.get("windows", ""), allow_empty=True)
        toolkits[cuda] = Toolkit(cuda, lin, win, _req(ctx, row, r, "source"))
    return floors, toolkits


def _hardware(doc: dict[str, Any], ctx: _Ctx) -> dict[str, Any]:
    rule = doc.get("cc_rule")
    if not isinstance(rule, dict):
        ctx.fail("", "the [cc_rule] table is missing")
    tegra = _req(ctx, "[cc_rule]", rule, "tegra", list)
    for t in tegra:
        if not isinstance(t, str) or not _CC_RE.match(t):
            ctx.fail("[cc_rule]", f"'tegra' entry {t!r} is not a compute capability")
    out: dict[str, Any] = {"tegra": frozenset(tegra), "tegra_source": _req(ctx, "[cc_rule]", rule, "source")}

    def names(key: str, value_key: str, check: Callable[[str], bool]) -> tuple[NameRule, ...]:
        rules = []
        for i, r in enumerate(doc.get(key) or []):
            row = f"{key} #{i + 1}"
            if not isinstance(r, dict):
                ctx.fail(row, "must be a table")
            if isinstance(r.get("pattern"), str):
                row += f" ({r['pattern']!r})"
            pat = _regex(ctx, row, r.get("pattern"))
            val = _req(ctx, row, r, value_key)
            if not check(val):
                ctx.fail(row, f"'{value_key}' {val!r} is not valid")
            rules.append(NameRule(pat, val, _req(ctx, row, r, "source")))
        return tuple(rules)

    out["nvidia_names"] = names("nvidia_name", "cc", lambda v: bool(_CC_RE.match(v)))
    out["amd_names"] = names("amd_name", "gfx", lambda v: bool(_GFX_RE.match(v)))
    hsa = []
    for i, r in enumerate(doc.get("hsa_override") or []):
        row = f"hsa_override #{i + 1}"
        if not isinstance(r, dict):
            ctx.fail(row, "must be a table")
        if isinstance(r.get("family"), str):
            row = f"hsa_override {r['family']}"
        gfx = _req(ctx, row, r, "gfx", list)
        for g in gfx:
            if not isinstance(g, str) or not _GFX_RE.match(g):
                ctx.fail(row, f"'gfx' entry {g!r} is not a gfx target like gfx1100")
        value = _req(ctx, row, r, "value")
        if not re.match(r"^\d{1,2}\.\d\.\d$", value):
            ctx.fail(row, f"'value' {value!r} is not an HSA_OVERRIDE_GFX_VERSION like 10.3.0")
        as_gfx = _req(ctx, row, r, "as_gfx")
        if not _GFX_RE.match(as_gfx):
            ctx.fail(row, f"'as_gfx' {as_gfx!r} is not a gfx target")
        hsa.append(HsaOverride(_req(ctx, row, r, "family"), tuple(gfx), value, as_gfx,
                               bool(_req(ctx, row, r, "reliable", bool)), _req(ctx, row, r, "source")))
    out["hsa_overrides"] = tuple(hsa)
    fams = []
    for i, r in enumerate(doc.get("intel_family") or []):
        row = f"intel_family #{i + 1}"
        if not isinstance(r, dict):
            ctx.fail(row, "must be a table")
        fams.append(IntelFamily(_regex(ctx, row, r.get("pattern")), _req(ctx, row, r, "family"),
                                bool(_req(ctx, row, r, "xpu", bool)), _req(ctx, row, r, "source")))
    out["intel_families"] = tuple(fams)
    jet = doc.get("jetson") or {}
    out["jetson_note"] = str(jet.get("note", "")) if isinstance(jet, dict) else ""
    return out


_CACHE: dict[str, CompatData] = {}


def default_folder() -> Path:
    from app.core.paths import resources_dir

    return resources_dir() / "compat"


def load_compat(path: str | os.PathLike[str] | None = None) -> CompatData:
    """Read and validate the compatibility data from ``path`` (a folder; default
    ``resources/compat``). Raises BadInput naming the file and row at fault."""
    folder = Path(path) if path is not None else default_folder()
    if folder.is_file():
        folder = folder.parent
    key = str(folder.resolve())
    if key in _CACHE:
        return _CACHE[key]
    if not folder.is_dir():
        raise BadInput(f"{folder}: the compatibility data folder does not exist",
                       hint="Reinstall the assistant, or point it at a folder holding "
                            + ", ".join(FILES) + ".")
    docs = {name: _read(folder, name, _shown(folder, name)) for name in FILES}
    meta, releases = _releases(docs["releases.toml"], _Ctx(_shown(folder, "releases.toml")))
    dctx = _Ctx(_shown(folder, "drivers.toml"))
    floors, toolkits = _drivers(docs["drivers.toml"], dctx)
    for rel in releases:
        for v in rel.variants:
            if v.backend == "cuda" and v.cuda_major not in floors:
                _Ctx(_shown(folder, "releases.toml")).fail(
                    f"release {rel.torch}, variant {v.name}",
                    f"CUDA {v.cuda} has no driver floor for CUDA {v.cuda_major}.x in drivers.toml")
    hw = _hardware(docs["hardware.toml"], _Ctx(_shown(folder, "hardware.toml")))
    data = CompatData(version=meta["version"], date=meta["date"], releases=releases, driver_floors=floors,
                      toolkits=toolkits, python_preference=meta["python_preference"],
                      index_pattern=meta["index_pattern"], folder=str(folder), **hw)
    _CACHE[key] = data
    return data


def clear_cache() -> None:
    _CACHE.clear()
