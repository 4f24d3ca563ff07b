"""The compatibility data (``resources/compat/*.toml``): one loader that reads AND validates it.

Three files, each row carrying its ``source``:

* ``releases.toml``: ``[meta]`` (version, date, ...) and one ``[[release]]`` per torch release
  with its Python range, glibc floor, PyPI default build per platform, companion package
  versions, and the wheel variants (``[[release.variant]]``) it published per platform, each
  with its CUDA toolkit and compiled compute-capability list, or its ROCm line and gfx targets.
* ``drivers.toml``: NVIDIA driver floors per CUDA major and the driver of each toolkit.
* ``hardware.toml``: the compute-capability rule (Tegra exclusions), what tells a GPU's CC / gfx
  target when its driver did not (PCI device ids, NVIDIA chip codes, marketing names; read by
  :mod:`app.core.detection.gpu_ids`), HSA_OVERRIDE_GFX_VERSION families, Intel XPU-capable families.

A malformed file raises :class:`BadInput` naming the file and the row at fault, e.g.
``resources/compat/releases.toml: release 2.9, variant cu130 (windows-x86_64): 'arch' entry
'9.x' is not a compute capability``. Nothing is cached on disk; one parse per process.
"""
from __future__ import annotations

import itertools
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from app.core.base.errors import BadInput
from app.core.base.oserrors import os_error_text
from app.core.base.schema import MESSAGES, bad_field, document, must_be
from app.core.base.text import Text, msg

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
    name: str  # cu126, rocm6.4, xpu, cpu, mps, rocm10.0-amd
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
    provider: str = "pytorch"  # who builds and hosts it: pytorch (download.pytorch.org / PyPI) | amd
    device_extra: str = ""  # "device-{gfx}": torch is installed as torch[device-gfx1100] (AMD's indexes)
    python_min: str | None = None  # overrides the release's Python range for this build
    python_max: str | None = None
    windows_min: str | None = None  # oldest Windows build ("10.0.22000" = Windows 11)
    install_mb: int | None = None  # installed size of torch + its runtime, when it differs from the backend's
    wsl: bool = False  # validated on WSL2 (Intel XPU from 2.14)
    assumed: str = ""  # why this row's facts are assumed, not confirmed ("" = confirmed)
    like: str = ""  # a build found on the index only: the known build its facts come from ("2.15 cu132")

    @property
    def cuda_major(self) -> int | None:
        return int(self.cuda.split(".")[0]) if self.cuda else None

    @property
    def arch_tuples(self) -> tuple[tuple[int, int], ...]:
        return tuple(cc_tuple(a) for a in self.arch)

    def python_range(self, rel: Release) -> tuple[str, str]:
        """The Python range of this build of ``rel`` (the build's own, else the release's)."""
        return self.python_min or rel.python_min, self.python_max or rel.python_max

    def python_ok(self, rel: Release, minor: str) -> bool:
        lo, hi = self.python_range(rel)
        try:
            v = version_tuple(minor)[:2]
        except ValueError:
            return False
        return version_tuple(lo) <= v <= version_tuple(hi)

    def label(self) -> str:
        """The build's name in English ("CUDA 12.6"); sentences use recommend.words.build_label."""
        if self.backend == "cuda":
            return f"CUDA {self.cuda}"
        if self.backend == "rocm":
            return f"ROCm {self.rocm}" + (" (AMD's index)" if self.provider == "amd" else "")
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
    assumed: str = ""  # a release found on the index, not in the data: why its facts are assumed
    found_at: str = ""  # where it was found (the index URL), for a release that is not in the data
    found_on: str = ""  # when (YYYY-MM-DD)

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
class DriverCeiling:
    """The newest NVIDIA driver branch that still supports an architecture (drivers.toml
    ``[[arch_ceiling]]``): a GPU of compute capability ``cc_min``..``cc_max`` runs no driver of a
    newer branch."""

    architecture: str  # Maxwell, Pascal, Volta
    cc_min: str
    cc_max: str
    branch: str  # "580": the last branch that supports it
    beyond: str  # "590": the first branch that no longer does
    source: str

    def covers(self, cc: tuple[int, int]) -> bool:
        return cc_tuple(self.cc_min) <= cc <= cc_tuple(self.cc_max)


@dataclass(frozen=True)
class PciVendor:
    """A GPU maker by its PCI vendor id (hardware.toml ``[[pci_vendor]]``)."""

    id: str  # "10de" (lowercase hex)
    vendor: str  # the SystemReport's vendor key: nvidia, amd, intel, apple, qualcomm, ...
    name: str  # for people: "NVIDIA", "Moore Threads"
    backend: str  # the PyTorch build family that serves it here ("" = none from pytorch.org)
    source: str
    acpi: str = ""  # the ACPI vendor id Windows shows for SoC GPUs (QCOM for Adreno)
    accelerator: bool = False  # a compute card in PCI class 12h (processing accelerator), not 03h
    names: tuple[str, ...] = ()  # words in an adapter's name that give the maker away ("adreno")


@dataclass(frozen=True)
class Toolkit:
    cuda: str
    linux: str
    windows: str  # "" = NVIDIA lists none
    source: str


@dataclass(frozen=True)
class NameRule:
    """A GPU's marketing name gives away a value (compute capability, gfx target) the driver did not say."""

    pattern: re.Pattern[str]  # searched in the adapter's name; the first rule that matches wins
    value: str  # "8.6" (NVIDIA compute capability) or "gfx1030" (AMD target)
    source: str


@dataclass(frozen=True)
class ChipRule:
    """NVIDIA chip codes (``GP102``, the code pci.ids puts before a product's name) of one compute capability."""

    chips: tuple[str, ...]  # "GP102", "GP104", ...: the chip's base code (no GL/M/B suffix)
    value: str  # "6.1"
    source: str


@dataclass(frozen=True)
class PciIds:
    """PCI device ids of one GPU chip (hardware.toml ``[[nvidia_pci]]`` / ``[[amd_pci]]``)."""

    vendor: str  # "10de" | "1002"
    chip: str  # "GP102", "Navi 31", "Phoenix"
    ranges: tuple[tuple[int, int], ...]  # inclusive (first, last) device ids
    value: str  # the compute capability (NVIDIA, through the chip's row) or the gfx target (AMD)
    source: str

    def holds(self, device: int) -> bool:
        return any(lo <= device <= hi for lo, hi in self.ranges)


@dataclass(frozen=True)
class HsaOverride:
    """``HSA_OVERRIDE_GFX_VERSION`` for AMD GPUs ROCm does not list: run them as a listed sibling."""

    family: str  # "RDNA2 (Navi 2x)"
    gfx: tuple[str, ...]  # the targets it applies to
    value: str  # the variable's value, "10.3.0"
    as_gfx: str  # the listed target the GPU then claims to be, "gfx1030"
    reliable: bool  # False: a partial workaround, not known to work on every one of these GPUs
    source: str


@dataclass(frozen=True)
class IntelFamily:
    """An Intel GPU family by name, and whether PyTorch's XPU builds support it."""

    pattern: re.Pattern[str]  # searched in the adapter's name
    family: str
    xpu: bool
    source: str


@dataclass(frozen=True)
class CompatData:
    version: str  # the data's own version (releases.toml), shown in reports
    date: str  # when the facts were last checked
    releases: tuple[Release, ...]  # newest first
    driver_floors: dict[int, DriverFloor]  # by CUDA major
    toolkits: dict[str, Toolkit]  # by "12.8": the toolkit's own driver floors
    tegra: frozenset[str]  # Jetson / Tegra board names
    tegra_source: str
    nvidia_names: tuple[NameRule, ...]  # compute capability by name (the most specific match wins)
    amd_names: tuple[NameRule, ...]  # gfx target by name (the most specific match wins)
    hsa_overrides: tuple[HsaOverride, ...]
    intel_families: tuple[IntelFamily, ...]
    python_preference: tuple[str, ...]  # the Pythons to offer, best first
    jetson_note: str
    folder: str = ""
    index_pattern: str = "https://download.pytorch.org/whl/{variant}"
    extra: dict[str, Any] = field(default_factory=dict)
    driver_ceilings: tuple[DriverCeiling, ...] = ()
    pci_vendors: tuple[PciVendor, ...] = ()
    nvidia_chips: tuple[ChipRule, ...] = ()  # compute capability by chip code
    pci_ids: tuple[PciIds, ...] = ()  # compute capability / gfx target by PCI device id
    status_url: str = "https://download.pytorch.org/whl"  # where `compat status` looks for torch releases
    refresh_url: str = ""  # where this project publishes newer signed data ("" = not configured)
    origin: str = "bundled"  # bundled | downloaded (a verified per-user copy, app.core.compat.refresh)

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

    def vendor_row(self, vendor: str) -> PciVendor | None:
        """The PCI vendor row of a report's vendor key (``qualcomm``), or None."""
        return next((p for p in self.pci_vendors if p.vendor == vendor), None)

    def vendor_name(self, vendor: str) -> str:
        """A vendor key in words: ``moorethreads`` -> ``Moore Threads``; unknown keys as given."""
        row = self.vendor_row(vendor)
        return row.name if row else (vendor[:1].upper() + vendor[1:] if vendor else "?")


# ------------------------------------------------------------------------------- loading

class _Row(str):
    """A row as an error names it (``release 2.12, variant xpu``), with its place in the file's
    tables (``release[3].variant[1]``): the field path of :func:`app.core.base.schema.bad_field`."""

    path: str

    def __new__(cls, label: str, path: str) -> _Row:
        row = super().__new__(cls, label)
        row.path = path
        return row


_META = _Row("[meta]", "meta")
_HINT = "Fix that row of the compatibility data (each row needs its fields and a source); see docs/compat-decisions.md."


class _Ctx:
    """Error context: file + row description."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, row: str, msg: str) -> NoReturn:
        where = f"{self.file}: {row}: " if row else f"{self.file}: "
        raise BadInput(where + msg, hint=_HINT)

    def field(self, row: str, key: str, problem: Text) -> NoReturn:
        """A bad field, as every document says it (:func:`app.core.base.schema.bad_field`): the
        file (and the row), the field's path in the file's tables, and what was expected."""
        path = f"{row.path}.{key}" if isinstance(row, _Row) and row.path else key
        what = document("compat", f"{self.file} ({row})" if row else self.file)
        raise bad_field(what, path, problem, hint=_HINT)


def _req(ctx: _Ctx, row: str, d: dict[str, Any], key: str, typ: type = str) -> Any:
    if key not in d:
        ctx.field(row, key, MESSAGES.msg("missing"))
    val = d[key]
    if typ is str and not isinstance(val, str):
        ctx.field(row, key, must_be("text", val))
    if typ is str and not val.strip() and key != "windows":
        ctx.fail(row, f"'{key}' must be a non-empty string, got {val!r}")
    if typ is list and not isinstance(val, list):
        ctx.field(row, key, must_be("list", val))
    if typ is bool and not isinstance(val, bool):
        ctx.field(row, key, must_be("flag", val))
    return val


def _ver(ctx: _Ctx, row: str, key: str, val: object, allow_empty: bool = False) -> str:
    if allow_empty and val == "":
        return ""
    if not isinstance(val, str) or not _VER_RE.match(val):
        ctx.fail(row, f"'{key}' {val!r} is not a version number like 525.60.13")
    return val


@dataclass(frozen=True)
class _RangeKind:
    """A kind of version that rows give as a (min, max) pair."""

    pattern: re.Pattern[str]
    what: str  # "a Python version like 3.12"
    order: Callable[[str], tuple[int, ...]]
    past: str  # how min can be wrong: "newer than"


_PYTHON_RANGE = _RangeKind(_MINOR_RE, "a Python version like 3.12", version_tuple, "newer than")
_CC_RANGE = _RangeKind(_CC_RE, "a compute capability", cc_tuple, "above")


def _range(ctx: _Ctx, row: str, values: dict[str, Any], kind: _RangeKind) -> None:
    """Each of a row's (min, max) values (either may be absent) is well formed, and min is not past max."""
    for key, val in values.items():
        if not isinstance(val, str) or not kind.pattern.match(val):
            ctx.fail(row, f"'{key}' {val!r} is not {kind.what}")
    if len(values) == 2:
        (lo_key, lo), (hi_key, hi) = values.items()
        if kind.order(lo) > kind.order(hi):
            ctx.fail(row, f"'{lo_key}' {lo} is {kind.past} '{hi_key}' {hi}")


def _rows(doc: dict[str, Any], ctx: _Ctx, kind: str, name_key: str = "", *,
          required: bool = False) -> Iterator[tuple[_Row, dict[str, Any]]]:
    """The ``[[kind]]`` tables of a data file, each with how an error names it: ``kind <its
    name_key value>`` where it has one, else ``kind #N``."""
    rows = doc.get(kind)
    if rows is None and not required:
        return
    if not isinstance(rows, list) or (required and not rows):
        ctx.fail("", f"no [[{kind}]] rows" if required else f"[[{kind}]] must be a list of tables")
    for i, r in enumerate(rows):
        if not isinstance(r, dict):
            ctx.field(_Row(f"{kind} #{i + 1}", ""), f"{kind}[{i}]", must_be("object", r))
        name = r.get(name_key) if name_key else None
        named = isinstance(name, (str, int)) and not isinstance(name, bool) and str(name) != ""
        yield _Row(f"{kind} {name}" if named else f"{kind} #{i + 1}", f"{kind}[{i}]"), r


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
        from app.core.base.paths import app_root

        return str(p.resolve().relative_to(app_root()))
    except Exception:
        return str(p)


def _variant(ctx: _Ctx, release: _Row, rel: str, v: object, index_pattern: str, n: int) -> Variant:
    path = f"{release.path}.variant[{n}]"
    if not isinstance(v, dict):
        ctx.field(_Row(f"release {rel}, variant #{n + 1}", ""), path, must_be("object", v))
    name = v.get("name")
    plats = v.get("platforms")
    label = f"release {rel}, variant {name if isinstance(name, str) and name else '#' + str(n + 1)}"
    if isinstance(plats, list) and plats:
        label += f" ({', '.join(map(str, plats))})"
    row = _Row(label, path)
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
    for key in ("glibc_min", "macos_min", "mps_macos_min", "windows_min"):
        if key in v:
            kw[key] = _ver(ctx, row, key, v[key])
    if backend == "mps" and (not set(plats) <= {"macos-arm64", "macos-x86_64"} or "mps_macos_min" not in v):
        ctx.fail(row, "an mps variant is for macOS only (macos-arm64, macos-x86_64) and needs 'mps_macos_min'")
    kw.update(_variant_extras(ctx, row, v, backend))
    known = {"name", "backend", "platforms", "index", "cuda", "arch", "ptx", "rocm", "gfx", "therock",
             "explicit", "glibc_min", "macos_min", "mps_macos_min", "source", "provider", "device_extra",
             "python_min", "python_max", "windows_min", "install_mb", "wsl", "assumed"}
    unknown = sorted(set(v) - known)
    if unknown:
        ctx.fail(row, f"unknown field(s) {', '.join(map(repr, unknown))}")
    return Variant(name=name, backend=backend, platforms=tuple(plats), index_url=index, source=source,
                   explicit=bool(v.get("explicit", False)), **kw)


PROVIDERS = ("pytorch", "amd")


def _variant_extras(ctx: _Ctx, row: str, v: dict[str, Any], backend: str) -> dict[str, Any]:
    """The optional fields of a build row: who hosts it, its extra, its own Python range, ..."""
    kw: dict[str, Any] = {}
    provider = v.get("provider", "pytorch")
    if provider not in PROVIDERS:
        ctx.fail(row, f"'provider' {provider!r} is not one of {', '.join(PROVIDERS)}")
    kw["provider"] = provider
    extra = v.get("device_extra", "")
    if extra:
        if backend != "rocm" or not isinstance(extra, str) or not re.fullmatch(r"[a-z0-9-]*\{gfx\}[a-z0-9-]*", extra):
            ctx.fail(row, f"'device_extra' {extra!r} must look like device-{{gfx}} (ROCm builds only)")
        kw["device_extra"] = extra
    pythons: dict[str, Any] = {key: v[key] for key in ("python_min", "python_max") if key in v}
    _range(ctx, row, pythons, _PYTHON_RANGE)
    kw.update(pythons)
    if "install_mb" in v:
        mb = v["install_mb"]
        if not isinstance(mb, int) or isinstance(mb, bool) or not 100 <= mb <= 100_000:
            ctx.fail(row, f"'install_mb' {mb!r} is not a size in MB (100..100000)")
        kw["install_mb"] = mb
    if "wsl" in v:
        kw["wsl"] = bool(_req(ctx, row, v, "wsl", bool))
    if "assumed" in v:
        kw["assumed"] = _req(ctx, row, v, "assumed")
    return kw


# long: one validation per field of a release row, each naming the row at fault
def _releases(doc: dict[str, Any], ctx: _Ctx) -> tuple[dict[str, Any], tuple[Release, ...]]:
    meta = doc.get("meta")
    if not isinstance(meta, dict):
        ctx.fail("", "the [meta] table (version, date) is missing")
    version = _req(ctx, _META, meta, "version")
    date = _req(ctx, _META, meta, "date")
    if not _DATE_RE.match(date):
        ctx.fail("[meta]", f"'date' {date!r} is not a date like 2026-11-30")
    prefs = meta.get("python_preference", ["3.12"])
    if not isinstance(prefs, list) or not all(isinstance(p, str) and _MINOR_RE.match(p) for p in prefs):
        ctx.fail("[meta]", f"'python_preference' must be a list of versions like 3.12, got {prefs!r}")
    index_pattern = meta.get("index_pattern", "https://download.pytorch.org/whl/{variant}")
    out: list[Release] = []
    seen: set[str] = set()
    for row, r in _rows(doc, ctx, "release", "torch", required=True):
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
        _range(ctx, row, {"python_min": pmin, "python_max": pmax}, _PYTHON_RANGE)
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
        variants = tuple(_variant(ctx, row, torch, v, index_pattern, n) for n, v in enumerate(vrows))
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
                "index_pattern": index_pattern, **_meta_urls(ctx, meta)}
    return meta_out, tuple(out)


def _meta_urls(ctx: _Ctx, meta: dict[str, Any]) -> dict[str, Any]:
    """Where freshness looks (``status_url``) and where newer data is published (``refresh_url``)."""
    out: dict[str, Any] = {}
    for key in ("status_url", "refresh_url"):
        if key in meta:
            url = meta[key]
            if not isinstance(url, str) or (url and not url.startswith("https://")):
                ctx.fail("[meta]", f"'{key}' {url!r} is not an https:// URL")
            out[key] = url
    return out


def _drivers(doc: dict[str, Any], ctx: _Ctx) -> tuple[dict[int, DriverFloor], dict[str, Toolkit]]:
    floors: dict[int, DriverFloor] = {}
    for row, r in _rows(doc, ctx, "cuda_major", "major", required=True):
        major = r.get("major")
        if not isinstance(major, int) or isinstance(major, bool) or not 8 <= major <= 20:
            ctx.fail(row, f"'major' {major!r} is not a CUDA major version")
        lin = _ver(ctx, row, "linux", _req(ctx, row, r, "linux"))
        win = _ver(ctx, row, "windows", _req(ctx, row, r, "windows"))
        floors[major] = DriverFloor(major, lin, win, _req(ctx, row, r, "source"))
    toolkits: dict[str, Toolkit] = {}
    for row, r in _rows(doc, ctx, "toolkit", "cuda"):
        cuda = _req(ctx, row, r, "cuda")
        if not re.match(r"^\d{2}\.\d$", cuda):
            ctx.fail(row, f"'cuda' {cuda!r} is not a CUDA version like 12.6")
        lin = _ver(ctx, row, "linux", _req(ctx, row, r, "linux"))
        win = _ver(ctx, row, "windows", r.get("windows", ""), allow_empty=True)
        toolkits[cuda] = Toolkit(cuda, lin, win, _req(ctx, row, r, "source"))
    return floors, toolkits


def _ceilings(doc: dict[str, Any], ctx: _Ctx) -> tuple[DriverCeiling, ...]:
    out: list[DriverCeiling] = []
    for row, r in _rows(doc, ctx, "arch_ceiling", "architecture"):
        lo, hi = _req(ctx, row, r, "cc_min"), _req(ctx, row, r, "cc_max")
        _range(ctx, row, {"cc_min": lo, "cc_max": hi}, _CC_RANGE)
        branch = _ver(ctx, row, "branch", _req(ctx, row, r, "branch"))
        beyond = _ver(ctx, row, "beyond", _req(ctx, row, r, "beyond"))
        if version_tuple(beyond) <= version_tuple(branch):
            ctx.fail(row, f"'beyond' {beyond} must be a newer branch than 'branch' {branch}")
        ceiling = DriverCeiling(_req(ctx, row, r, "architecture"), lo, hi, branch, beyond,
                                _req(ctx, row, r, "source"))
        if any(c.covers(cc_tuple(lo)) or c.covers(cc_tuple(hi)) for c in out):
            ctx.fail(row, "overlaps another arch_ceiling row")
        out.append(ceiling)
    return tuple(out)


def _hardware(doc: dict[str, Any], ctx: _Ctx) -> dict[str, Any]:
    rule = doc.get("cc_rule")
    if not isinstance(rule, dict):
        ctx.fail("", "the [cc_rule] table is missing")
    tegra = _req(ctx, _Row("[cc_rule]", "cc_rule"), rule, "tegra", list)
    for t in tegra:
        if not isinstance(t, str) or not _CC_RE.match(t):
            ctx.fail("[cc_rule]", f"'tegra' entry {t!r} is not a compute capability")
    out: dict[str, Any] = {"tegra": frozenset(tegra),
                           "tegra_source": _req(ctx, _Row("[cc_rule]", "cc_rule"), rule, "source")}

    def names(key: str, value_key: str, check: Callable[[str], bool]) -> tuple[NameRule, ...]:
        rules = []
        for row, r in _rows(doc, ctx, key):
            if isinstance(r.get("pattern"), str):
                row = _Row(f"{row} ({r['pattern']!r})", row.path)
            pat = _regex(ctx, row, r.get("pattern"))
            val = _req(ctx, row, r, value_key)
            if not check(val):
                ctx.fail(row, f"'{value_key}' {val!r} is not valid")
            rules.append(NameRule(pat, val, _req(ctx, row, r, "source")))
        return tuple(rules)

    out["nvidia_names"] = names("nvidia_name", "cc", lambda v: bool(_CC_RE.match(v)))
    out["amd_names"] = names("amd_name", "gfx", lambda v: bool(_GFX_RE.match(v)))
    hsa = []
    for row, r in _rows(doc, ctx, "hsa_override", "family"):
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
    for row, r in _rows(doc, ctx, "intel_family"):
        fams.append(IntelFamily(_regex(ctx, row, r.get("pattern")), _req(ctx, row, r, "family"),
                                bool(_req(ctx, row, r, "xpu", bool)), _req(ctx, row, r, "source")))
    out["intel_families"] = tuple(fams)
    jet = doc.get("jetson") or {}
    out["jetson_note"] = str(jet.get("note", "")) if isinstance(jet, dict) else ""
    out["pci_vendors"] = _pci_vendors(doc, ctx)
    out["nvidia_chips"] = _nvidia_chips(doc, ctx)
    out["pci_ids"] = _pci_ids(doc, ctx, out["nvidia_chips"])
    return out


_CHIP_RE = re.compile(r"^[A-Z]{2}\d{2,3}[A-Z]?$")
_IDS_RE = re.compile(r"^([0-9a-f]{4})(?:-([0-9a-f]{4}))?$")


def _nvidia_chips(doc: dict[str, Any], ctx: _Ctx) -> tuple[ChipRule, ...]:
    out: list[ChipRule] = []
    for row, r in _rows(doc, ctx, "nvidia_chip", "cc"):
        chips = _req(ctx, row, r, "chips", list)
        if not chips or not all(isinstance(c, str) and _CHIP_RE.match(c) for c in chips):
            ctx.fail(row, f"'chips' must be NVIDIA chip codes like GP102, got {chips!r}")
        cc = _req(ctx, row, r, "cc")
        if not _CC_RE.match(cc):
            ctx.fail(row, f"'cc' {cc!r} is not a compute capability like 8.6")
        if any(c in rule.chips for rule in out for c in chips):
            ctx.fail(row, "names a chip another nvidia_chip row names")
        out.append(ChipRule(tuple(chips), cc, _req(ctx, row, r, "source")))
    return tuple(out)


def _id_ranges(ctx: _Ctx, row: str, ids: object) -> tuple[tuple[int, int], ...]:
    if not isinstance(ids, list) or not ids:
        ctx.fail(row, f"'ids' must be a list of PCI device ids (\"1b06\") or ranges (\"1b00-1b78\"), got {ids!r}")
    out = []
    for item in ids:
        m = _IDS_RE.match(item) if isinstance(item, str) else None
        if m is None:
            ctx.fail(row, f"'ids' entry {item!r} is not a device id like 1b06 or a range like 1b00-1b78")
        lo, hi = int(m.group(1), 16), int(m.group(2) or m.group(1), 16)
        if hi < lo:
            ctx.fail(row, f"'ids' range {item!r} ends before it starts")
        out.append((lo, hi))
    return tuple(out)


def _pci_ids(doc: dict[str, Any], ctx: _Ctx, chips: tuple[ChipRule, ...]) -> tuple[PciIds, ...]:
    """``[[nvidia_pci]]`` (a chip's device ids; its compute capability comes from its nvidia_chip row)
    and ``[[amd_pci]]`` (a chip's device ids and gfx target). No id may belong to two rows."""
    out: list[PciIds] = []
    rows: list[str] = []
    for kind, vendor in (("nvidia_pci", "10de"), ("amd_pci", "1002")):
        for row, r in _rows(doc, ctx, kind, "chip"):
            chip = _req(ctx, row, r, "chip")
            if vendor == "10de":
                value = next((c.value for c in chips if chip in c.chips), "")
                if not value:
                    ctx.fail(row, f"chip {chip!r} has no nvidia_chip row (its compute capability)")
            else:
                value = _req(ctx, row, r, "gfx")
                if not _GFX_RE.match(value):
                    ctx.fail(row, f"'gfx' {value!r} is not a gfx target like gfx1100")
            out.append(PciIds(vendor, chip, _id_ranges(ctx, row, r.get("ids")), value, _req(ctx, row, r, "source")))
            rows.append(row)
    spans = sorted((g.vendor, lo, hi, i) for i, g in enumerate(out) for lo, hi in g.ranges)
    for (v1, _lo1, hi1, i1), (v2, lo2, _hi2, i2) in itertools.pairwise(spans):  # sorted: neighbours
        if v1 == v2 and lo2 <= hi1:
            ctx.fail(rows[i2], f"its ids overlap those of {out[i1].chip!r}")
    return tuple(out)


def _pci_vendors(doc: dict[str, Any], ctx: _Ctx) -> tuple[PciVendor, ...]:
    out: list[PciVendor] = []
    for row, r in _rows(doc, ctx, "pci_vendor", "id"):
        vid = _req(ctx, row, r, "id").lower()
        if not re.fullmatch(r"[0-9a-f]{4}", vid):
            ctx.fail(row, f"'id' {vid!r} is not a 4-digit hexadecimal PCI vendor id")
        vendor = _req(ctx, row, r, "vendor")
        if not re.fullmatch(r"[a-z][a-z0-9]*", vendor):
            ctx.fail(row, f"'vendor' {vendor!r} must be a lowercase word (the report's vendor key)")
        backend = r.get("backend", "")
        if backend not in ("", *BACKENDS):
            ctx.fail(row, f"'backend' {backend!r} is not one of {', '.join(BACKENDS)} (or \"\")")
        acpi = r.get("acpi", "")
        if not isinstance(acpi, str) or (acpi and not re.fullmatch(r"[A-Z0-9]{3,4}", acpi)):
            ctx.fail(row, f"'acpi' {acpi!r} is not an ACPI vendor id like QCOM")
        if any(p.id == vid for p in out):
            ctx.fail(row, "appears twice")
        accel = bool(_req(ctx, row, r, "accelerator", bool)) if "accelerator" in r else False
        names = r.get("names", [])
        if not isinstance(names, list) or not all(isinstance(n, str) and n and n == n.lower() for n in names):
            ctx.fail(row, f"'names' must be a list of lowercase words, got {names!r}")
        out.append(PciVendor(vid, vendor, _req(ctx, row, r, "name"), backend, _req(ctx, row, r, "source"), acpi,
                             accel, tuple(names)))
    return tuple(out)


_CACHE: dict[str, CompatData] = {}


def default_folder() -> Path:
    from app.core.base.paths import resources_dir

    return resources_dir() / "compat"


def load_compat(path: str | os.PathLike[str] | None = None, *, bundled: bool = False) -> CompatData:
    """Read and validate the compatibility data from ``path`` (a folder). Raises BadInput naming
    the file and row at fault.

    Without ``path``: a verified newer per-user copy (installed by ``torch-setup compat refresh``,
    :mod:`app.core.compat.refresh`) when there is one, else the bundled ``resources/compat``. The
    per-user copy is skipped with ``bundled=True`` or ``TORCH_SETUP_COMPAT=bundled``, and whenever
    it is not newer than the bundled data, its digest does not match what was verified, or it
    fails validation: the bundled data is always the fallback.
    """
    if path is None and not bundled and os.environ.get("TORCH_SETUP_COMPAT", "").strip().lower() != "bundled":
        user = downloaded_copy()
        if user is not None:
            return user
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
    data = build_data(docs, lambda name: _shown(folder, name), str(folder), "bundled")
    _CACHE[key] = data
    return data


def build_data(docs: dict[str, dict[str, Any]], shown: Callable[[str], str], folder: str,
               origin: str) -> CompatData:
    """Validate the three parsed files (``docs``: file name -> TOML document) into CompatData.
    ``shown(name)`` names a file in error messages."""
    meta, releases = _releases(docs["releases.toml"], _Ctx(shown("releases.toml")))
    dctx = _Ctx(shown("drivers.toml"))
    floors, toolkits = _drivers(docs["drivers.toml"], dctx)
    ceilings = _ceilings(docs["drivers.toml"], dctx)
    for rel in releases:
        for v in rel.variants:
            if v.backend == "cuda" and v.cuda_major not in floors:
                _Ctx(shown("releases.toml")).fail(
                    f"release {rel.torch}, variant {v.name}",
                    f"CUDA {v.cuda} has no driver floor for CUDA {v.cuda_major}.x in drivers.toml")
    hw = _hardware(docs["hardware.toml"], _Ctx(shown("hardware.toml")))
    return CompatData(version=meta["version"], date=meta["date"], releases=releases, driver_floors=floors,
                      toolkits=toolkits, python_preference=meta["python_preference"],
                      index_pattern=meta["index_pattern"], folder=folder, driver_ceilings=ceilings,
                      status_url=meta.get("status_url", "https://download.pytorch.org/whl"),
                      refresh_url=meta.get("refresh_url", ""), origin=origin,
                      **hw)


# ------------------------------------------------------------------------------- the per-user copy

STATUS_CACHE = "compat-status.json"  # the last `compat status` result, in the per-user cache folder
DOCUMENT = "compat-data.json"  # the signed document: {"format", "version", "date", "files": {name: text}}
MARKER = "installed.json"  # written after verification: version, date, sha256 of the document, key id


def user_folder() -> Path:
    """Where ``compat refresh`` installs verified data: ``<data dir>/compat``."""
    from app.core.base.paths import data_dir

    return data_dir() / "compat"


def data_version_key(version: str) -> tuple[int, ...]:
    """``"2026.11.30"`` -> (2026, 11, 30); anything else sorts first."""
    try:
        return version_tuple(version.replace("-", "."))
    except ValueError:
        return (0,)


def bundled_version() -> str:
    """The bundled data's ``[meta] version``, read from the head of releases.toml (no full parse)."""
    try:
        with open(default_folder() / "releases.toml", encoding="utf-8") as fh:
            head = fh.read(4096)
    except OSError:
        return ""
    m = re.search(r'(?m)^version\s*=\s*"([^"]+)"', head)
    return m.group(1) if m else ""


def parse_document(raw: bytes, shown: str) -> dict[str, dict[str, Any]]:
    """The three TOML documents inside a data document (JSON); BadInput when it is not one."""
    import json

    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInput(f"{shown}: not a compatibility data document ({exc})") from None
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or doc.get("format") != 1 or not isinstance(files, dict):
        raise BadInput(f"{shown}: not a compatibility data document (format 1 with 'files')")
    out: dict[str, dict[str, Any]] = {}
    for name in FILES:
        text = files.get(name)
        if not isinstance(text, str):
            raise BadInput(f"{shown}: {name} is missing from the document")
        try:
            out[name] = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise BadInput(f"{shown}: {name}: not valid TOML ({exc})") from None
    return out


def downloaded_copy() -> CompatData | None:
    """The verified per-user copy when it is usable and newer than the bundled data, else None."""
    import hashlib

    from app.core.base.schema import read_state

    try:  # an unreachable per-user folder (permissions, a broken home) means: no downloaded copy
        folder = user_folder()
        marker = read_state(folder / MARKER, what="the record of the downloaded data").data  # damaged: kept aside
        raw = (folder / DOCUMENT).read_bytes() if marker is not None else b""
    except OSError:
        return None
    if marker is None or hashlib.sha256(raw).hexdigest() != marker.get("sha256"):
        return None
    if data_version_key(str(marker.get("version", ""))) <= data_version_key(bundled_version()):
        return None  # the bundled data is as new (an app update brought it): use it
    key = f"downloaded:{marker['sha256']}"
    if key in _CACHE:
        return _CACHE[key]
    try:
        docs = parse_document(raw, str(folder / DOCUMENT))
        data = build_data(docs, lambda name: f"{folder / DOCUMENT} ({name})", str(folder), "downloaded")
    except BadInput:
        return None
    _CACHE[key] = data
    return data


def clear_cache() -> None:
    _CACHE.clear()
