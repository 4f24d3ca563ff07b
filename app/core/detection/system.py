"""The SystemReport contract (``torch-setup detect --json``), schema_version 1.

A report saved on one machine can be fed to ``recommend --from-report`` on another, so
:meth:`SystemReport.from_dict` accepts partial reports: an admin may describe a machine
with only ``os``, ``arch``, ``python`` and ``gpus``; anything missing is *unknown*
(``None``), never guessed. What is there is checked field by field (:mod:`app.core.base.schema`):
a value of the wrong type (``"os": 5``, ``gpus[0].name: 5``, ``"wsl": "maybe"``) is bad input
naming the field, never coerced; lists are bounded (:data:`MAX_GPUS` ...). A GPU vendor the
assistant does not know is kept as it is written (the recommendation explains it).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from app.core.base.schema import Fields, bad_field, document, must_be, not_one_of, parse_json, read_text
from app.core.base.serial import to_jsonable
from app.core.base.text import Text

SCHEMA_VERSION = 1

OS_FAMILIES = ("linux", "windows", "macos")
VENDORS = ("nvidia", "amd", "intel", "apple")  # the vendors the assistant knows; others are kept as written

# No machine has more: a report listing more is not one machine's (and would make every
# later step slow).
MAX_GPUS = 128
MAX_INTERPRETERS = 256
MAX_TOOLS = 256
MAX_PROBES = 1024
MAX_ENV = 1024
MAX_FLAGS = 4096
WHAT = document("report")

JSONObject = Mapping[str, Any]  # a JSON object as read: values are checked field by field


def _fields(d: object, path: str, what: Text) -> Fields:
    return Fields(d, path, what=what)


@dataclass(frozen=True)
class OSInfo:
    family: str | None = None  # linux | windows | macos
    version: str | None = None  # "Debian GNU/Linux 12 (bookworm)", "10.0.22631", "14.4.1"
    wsl: bool = False
    glibc: str | None = None  # "2.36"; None when not glibc / unknown
    kernel: str | None = None
    distro: str | None = None  # distribution id: debian, ubuntu, fedora...

    @classmethod
    def from_dict(cls, d: object, *, what: Text = WHAT) -> OSInfo:
        if d is None:
            return cls()
        if isinstance(d, str):
            return cls(family=_norm_family(d, "os", what))
        if not isinstance(d, Mapping):
            raise bad_field(what, "os", must_be("object_or_text", d), hint='a text such as "linux", or an object')
        f = _fields(d, "os", what)
        family = f.text("family")
        return cls(family=_norm_family(family, "os.family", what) if family is not None else None,
                   version=f.text("version", numbers=True), wsl=f.flag("wsl"), glibc=f.text("glibc", numbers=True),
                   kernel=f.text("kernel", numbers=True), distro=f.text("distro"))


def _norm_family(value: str, path: str, what: Text) -> str:
    v = value.strip().lower()
    aliases = {"darwin": "macos", "mac": "macos", "osx": "macos", "win32": "windows", "win": "windows"}
    v = aliases.get(v, v)
    if v not in OS_FAMILIES:
        raise bad_field(what, path, not_one_of(value, OS_FAMILIES))
    return v


@dataclass(frozen=True)
class CPUInfo:
    model: str | None = None
    vendor: str | None = None
    cores: int | None = None  # physical
    threads: int | None = None  # logical
    flags: list[str] = field(default_factory=list)  # of interest: avx2 avx512f amx neon sve ...
    max_mhz: float | None = None

    @classmethod
    def from_dict(cls, d: object, *, what: Text = WHAT) -> CPUInfo:
        if d is None:
            return cls()
        f = _fields(d, "cpu", what)
        return cls(model=f.text("model"), vendor=f.text("vendor"), cores=f.integer("cores", hi=1 << 20),
                   threads=f.integer("threads", hi=1 << 20), flags=f.texts("flags", max_items=MAX_FLAGS, max_len=64),
                   max_mhz=f.number("max_mhz", hi=1e7))


@dataclass(frozen=True)
class PythonInfo:
    """A Python interpreter, as detection and the install both see it (the one type: the Environment
    page, ``install --python`` and the SystemReport agree on what a Python is and whether it fits).
    Filled by :func:`app.core.detection.pythons.probe_interpreter` (one probe, one cache)."""

    version: str | None = None  # "3.11.7"
    executable: str | None = None
    implementation: str = "CPython"
    can_venv: bool | None = None  # can this interpreter create a venv (python -m venv / ensurepip)
    source: str = "running"  # running | path | pyenv | conda | uv | py-launcher | manual
    # the interpreter's OWN architecture (x86_64 | x86 | arm64 | aarch64), as it reported it
    # (app.core.base.pyarch), not the machine's: a 32-bit Python on 64-bit Windows is x86
    arch: str | None = None
    bits: int | None = None  # its pointer width (32 | 64)
    platform_tag: str | None = None  # its sysconfig.get_platform(): win32, win-amd64, macosx-11.0-arm64, ...
    translated: bool | None = None  # it runs translated: Rosetta 2, or Windows on Arm's x64 emulation
    is_venv: bool = False  # it is itself a venv's interpreter (a pyvenv.cfg beside it)
    pip: str | None = None  # the pip its ensurepip installs (what a new venv gets), when known
    pip_wheels: str | None = None  # the folder of ensurepip's bundled wheels (a new env's pip, offline)

    def to_dict(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: object, *, path: str = "python", what: Text = WHAT) -> PythonInfo:
        if d is None:
            return cls()
        if isinstance(d, str):
            return cls(version=d)
        if not isinstance(d, Mapping):
            raise bad_field(what, path, must_be("object_or_text", d), hint='a version such as "3.11", or an object')
        f = _fields(d, path, what)
        if isinstance(f.get("version"), (int, float)) and not isinstance(f.get("version"), bool):
            raise f.fail("version", must_be("text", f.get("version")),
                         hint='write the version as a text such as "3.10" (a number loses the 0 of 3.10)')
        return cls(version=f.text("version"), executable=f.text("executable"),
                   implementation=f.text("implementation") or "CPython", can_venv=f.optional_flag("can_venv"),
                   source=f.text("source") or "running", arch=f.text("arch", max_len=64),
                   bits=f.integer("bits", hi=256), platform_tag=f.text("platform_tag", max_len=128),
                   translated=f.optional_flag("translated"), is_venv=f.flag("is_venv"), pip=f.text("pip", max_len=64),
                   pip_wheels=f.text("pip_wheels"))

    @property
    def minor(self) -> str | None:
        """"3.11" from "3.11.7"."""
        if not self.version:
            return None
        parts = str(self.version).split(".")
        return ".".join(parts[:2]) if len(parts) >= 2 else None


@dataclass(frozen=True)
class GPU:
    vendor: str  # nvidia | amd | intel | apple, or another maker (qualcomm, moorethreads, ...)
    name: str
    driver_version: str | None = None
    compute_capability: str | None = None  # NVIDIA: "8.6"
    gfx_target: str | None = None  # AMD: "gfx1100"
    memory_mb: int | None = None
    integrated: bool = False
    index: int | None = None  # the vendor tool's device index
    pci_id: str | None = None  # "10de:2204"
    source: str | None = None  # which probe found it: nvml | nvidia-smi | rocminfo | sysfs | ...

    @classmethod
    def from_dict(cls, d: object, *, path: str = "gpus[]", what: Text = WHAT) -> GPU:
        f = _fields(d, path, what)
        vendor = (f.text("vendor", max_len=64) or "").strip().lower()
        if not vendor:
            raise f.fail("vendor", "is missing", hint=f"the vendor of the GPU: one of {', '.join(VENDORS)}")
        return cls(vendor=vendor, name=f.text("name") or "", driver_version=f.text("driver_version", numbers=True),
                   compute_capability=f.text("compute_capability", numbers=True, max_len=16),
                   gfx_target=f.text("gfx_target", max_len=64), memory_mb=f.integer("memory_mb", hi=1 << 40),
                   integrated=f.flag("integrated"), index=f.integer("index", hi=1 << 20), pci_id=f.text("pci_id"),
                   source=f.text("source"))


@dataclass(frozen=True)
class ToolInfo:
    name: str
    path: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class ProbeRecord:
    """What one detection source was asked and what happened."""

    name: str  # "nvml", "nvidia-smi", "rocminfo", "lspci", "sysfs-drm", ...
    status: str  # ok | not-found | timeout | error | garbage | skipped | empty
    detail: str = ""
    duration_ms: int | None = None
    command: list[str] | None = None


@dataclass(frozen=True)
class SystemReport:
    schema_version: int = SCHEMA_VERSION
    os: OSInfo = field(default_factory=OSInfo)
    arch: str | None = None  # x86_64 | arm64 | aarch64
    python: PythonInfo = field(default_factory=PythonInfo)
    cpu: CPUInfo = field(default_factory=CPUInfo)
    memory_mb: int | None = None
    disk_free_mb: int | None = None
    target: str | None = None  # the path disk_free_mb was measured at
    gpus: list[GPU] = field(default_factory=list)
    nvidia_cuda_version: str | None = None  # newest CUDA the NVIDIA driver supports ("12.4")
    env: dict[str, str] = field(default_factory=dict)
    interpreters: list[PythonInfo] = field(default_factory=list)
    tools: dict[str, ToolInfo] = field(default_factory=dict)
    probes: list[ProbeRecord] = field(default_factory=list)
    created: str | None = None  # ISO 8601
    hostname: str | None = None
    assistant_version: str | None = None

    # ---- convenience used by recommend / doctor / the GUI ----
    def gpus_of(self, vendor: str) -> list[GPU]:
        return [g for g in self.gpus if g.vendor == vendor]

    # ---- JSON ----
    def to_dict(self) -> dict[str, object]:
        return {f.name: to_jsonable(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: object, *, what: Text = WHAT) -> SystemReport:
        """A report from plain data (JSON / TOML as read); BadInput names the first bad field."""
        f = _fields(data, "", what)
        version = f.get("schema_version")
        if version is not None and (isinstance(version, bool) or version != SCHEMA_VERSION):
            raise f.fail("schema_version", not_one_of(version, (str(SCHEMA_VERSION),)),
                         hint="this assistant reads system reports of schema_version 1")
        arch = f.text("arch", max_len=64)
        if arch is not None:
            arch = arch.lower()
            arch = {"amd64": "x86_64", "x64": "x86_64"}.get(arch, arch)
        return cls(
            schema_version=SCHEMA_VERSION,
            os=OSInfo.from_dict(f.get("os"), what=what),
            arch=arch,
            python=PythonInfo.from_dict(f.get("python"), what=what),
            cpu=CPUInfo.from_dict(f.get("cpu"), what=what),
            memory_mb=f.integer("memory_mb", hi=1 << 40),
            disk_free_mb=f.integer("disk_free_mb", hi=1 << 50),
            target=f.text("target"),
            gpus=[GPU.from_dict(g, path=f"gpus[{i}]", what=what)
                  for i, g in enumerate(f.items("gpus", max_items=MAX_GPUS))],
            nvidia_cuda_version=f.text("nvidia_cuda_version", numbers=True, max_len=16),
            env=f.text_map("env", max_items=MAX_ENV),
            interpreters=[PythonInfo.from_dict(p, path=f"interpreters[{i}]", what=what)
                          for i, p in enumerate(f.items("interpreters", max_items=MAX_INTERPRETERS))],
            tools=_tools(f),
            probes=_probes(f),
            created=f.text("created"),
            hostname=f.text("hostname"),
            assistant_version=f.text("assistant_version"),
        )


def _tools(f: Fields) -> dict[str, ToolInfo]:
    tools: dict[str, ToolInfo] = {}
    table = f.mapping("tools", max_items=MAX_TOOLS)
    if table is None:
        return tools
    for name, value in table.data.items():
        if value is None:
            continue
        t = Fields(value, table.at(str(name)), what=f.what)
        tools[str(name)] = ToolInfo(name=str(name), path=t.text("path"), version=t.text("version", numbers=True))
    return tools


def _probes(f: Fields) -> list[ProbeRecord]:
    out: list[ProbeRecord] = []
    for p in f.each("probes", max_items=MAX_PROBES):
        name, status = p.text("name"), p.text("status")
        if name is None or status is None:  # an incomplete record says nothing
            continue
        command = p.texts("command", max_items=256) if p.has("command") else None
        out.append(ProbeRecord(name=name, status=status, detail=p.text("detail", max_len=65536) or "",
                               duration_ms=p.integer("duration_ms", hi=1 << 40), command=command))
    return out


def load_report(path: str | Path) -> SystemReport:
    """Read a SystemReport JSON file: bounded (16 MB, 32 levels), every bad field named (BadInput)."""
    what = document("report", Path(path))
    text = read_text(path, what="report file")
    return SystemReport.from_dict(parse_json(text, what=what), what=what)
