"""The SystemReport contract (``torch-setup detect --json``), schema_version 1.

A report saved on one machine can be fed to ``recommend --from-report`` on another, so
:meth:`SystemReport.from_dict` accepts partial reports: an admin may describe a machine
with only ``os``, ``arch``, ``python`` and ``gpus``; anything missing is *unknown*
(``None``), never guessed.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from app.core.errors import BadInput
from app.core.oserrors import os_error_text
from app.core.serial import to_jsonable
from app.core.text import msg

SCHEMA_VERSION = 1

OS_FAMILIES = ("linux", "windows", "macos")
VENDORS = ("nvidia", "amd", "intel", "apple")


JSONObject = Mapping[str, Any]  # a JSON object as read: values are checked field by field


def _pick(cls: type[object], data: JSONObject) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]  # cls is one of the dataclasses here
    return {k: v for k, v in data.items() if k in names}


@dataclass(frozen=True)
class OSInfo:
    family: str | None = None  # linux | windows | macos
    version: str | None = None  # "Debian GNU/Linux 12 (bookworm)", "10.0.22631", "14.4.1"
    wsl: bool = False
    glibc: str | None = None  # "2.36"; None when not glibc / unknown
    kernel: str | None = None
    distro: str | None = None  # distribution id: debian, ubuntu, fedora...

    @classmethod
    def from_dict(cls, d: JSONObject | str | None) -> OSInfo:
        if d is None:
            return cls()
        if isinstance(d, str):
            return cls(family=_norm_family(d))
        kw = _pick(cls, d)
        if "family" in kw:
            kw["family"] = _norm_family(kw["family"])
        kw["wsl"] = bool(kw.get("wsl", False))
        return cls(**kw)


def _norm_family(value: object) -> str | None:
    if value is None:
        return None
    v = str(value).strip().lower()
    aliases = {"darwin": "macos", "mac": "macos", "osx": "macos", "win32": "windows", "win": "windows"}
    v = aliases.get(v, v)
    if v not in OS_FAMILIES:
        raise BadInput(f"os.family {value!r} is not one of {', '.join(OS_FAMILIES)}")
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
    def from_dict(cls, d: JSONObject | None) -> CPUInfo:
        return cls(**_pick(cls, d or {}))


@dataclass(frozen=True)
class PythonInfo:
    version: str | None = None  # "3.11.7"
    executable: str | None = None
    implementation: str = "CPython"
    can_venv: bool | None = None  # can this interpreter create a venv (python -m venv / ensurepip)
    source: str = "running"  # running | path | pyenv | conda | uv | py-launcher | manual
    arch: str | None = None

    @classmethod
    def from_dict(cls, d: JSONObject | str | None) -> PythonInfo:
        if d is None:
            return cls()
        if isinstance(d, str):
            return cls(version=d)
        return cls(**_pick(cls, d))

    @property
    def minor(self) -> str | None:
        """"3.11" from "3.11.7"."""
        if not self.version:
            return None
        parts = str(self.version).split(".")
        return ".".join(parts[:2]) if len(parts) >= 2 else None


@dataclass(frozen=True)
class GPU:
    vendor: str  # nvidia | amd | intel | apple
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
    def from_dict(cls, d: object) -> GPU:
        if not isinstance(d, dict):
            raise BadInput(f"a GPU entry must be an object, got {d!r}")
        vendor = str(d.get("vendor", "")).lower()
        if vendor not in VENDORS:
            raise BadInput(f"gpus[].vendor {d.get('vendor')!r} is not one of {', '.join(VENDORS)}")
        kw = _pick(cls, d)
        kw["vendor"] = vendor
        kw.setdefault("name", "")
        if kw.get("compute_capability") is not None:
            kw["compute_capability"] = str(kw["compute_capability"])
        if kw.get("driver_version") is not None:
            kw["driver_version"] = str(kw["driver_version"])
        kw["integrated"] = bool(kw.get("integrated", False))
        return cls(**kw)


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

    def discrete_gpus(self) -> list[GPU]:
        return [g for g in self.gpus if not g.integrated]

    # ---- JSON ----
    def to_dict(self) -> dict[str, object]:
        return {f.name: to_jsonable(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: object) -> SystemReport:
        if not isinstance(data, dict):
            raise BadInput("a system report must be a JSON object")
        version = data.get("schema_version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise BadInput(f"system report schema_version {version!r} is not supported (expected {SCHEMA_VERSION})")
        gpus_raw = data.get("gpus") or []
        if not isinstance(gpus_raw, list):
            raise BadInput("'gpus' must be a list")
        arch = data.get("arch")
        if arch is not None:
            arch = str(arch).lower()
            arch = {"amd64": "x86_64", "x64": "x86_64"}.get(arch, arch)
        tools = {}
        for k, v in (data.get("tools") or {}).items():
            if isinstance(v, dict):
                tools[k] = ToolInfo(**{"name": k, **_pick(ToolInfo, v)})
        probes = [ProbeRecord(**_pick(ProbeRecord, p)) for p in (data.get("probes") or [])
                  if isinstance(p, dict) and "name" in p and "status" in p]
        return cls(
            schema_version=SCHEMA_VERSION,
            os=OSInfo.from_dict(data.get("os")),
            arch=arch,
            python=PythonInfo.from_dict(data.get("python")),
            cpu=CPUInfo.from_dict(data.get("cpu")),
            memory_mb=data.get("memory_mb"),
            disk_free_mb=data.get("disk_free_mb"),
            target=data.get("target"),
            gpus=[GPU.from_dict(g) for g in gpus_raw],
            nvidia_cuda_version=data.get("nvidia_cuda_version"),
            env={str(k): str(v) for k, v in (data.get("env") or {}).items()},
            interpreters=[PythonInfo.from_dict(p) for p in (data.get("interpreters") or [])],
            tools=tools,
            probes=probes,
            created=data.get("created"),
            hostname=data.get("hostname"),
            assistant_version=data.get("assistant_version"),
        )


def load_report(path: str | Path) -> SystemReport:
    """Read a SystemReport JSON file, with a clear error for a missing or malformed one."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(msg("report.missing", "report file {path} does not exist", path=str(p))) from None
    except OSError as exc:
        raise BadInput(msg("report.unreadable", "report file {path} cannot be read: {reason}", path=str(p),
                           reason=os_error_text(exc))) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(msg("report.bad_json", "report file {path} is not valid JSON (line {line}: {reason})",
                           path=str(p), line=exc.lineno, reason=exc.msg)) from None
    return SystemReport.from_dict(data)
