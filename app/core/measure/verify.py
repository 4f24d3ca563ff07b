"""``run_verify``: run the verify probe inside an environment and return a VerifyReport.

The probe (``app/probes/verify.py``) does the work in the target interpreter and reports each
check as a stable ``name``, a ``status`` and an outcome ``code`` with plain ``params`` (it also
writes English for people reading its raw output). This module turns that into frozen
dataclasses whose titles and details are texts by code (``verify.title.<name>``,
``verify.<code>``), rendered by the presenters in their language, and it decides the one
check that needs the assistant's rules: whether each GPU's architecture is compiled into the
wheel (``arch_list``, with :func:`app.core.compat.cuda.arch_covers` for NVIDIA and gfx-target
membership for ROCm).

Check names: torch_import, cpu_matmul, cpu_conv2d, cpu_training, cpu_autocast, gloo_all_reduce,
accelerator, arch_list, device_round_trip, device_matmul, device_conv2d, device_training,
dnn_library, device_autocast, device_memory, nccl_all_reduce. Outcome codes: see
:func:`detail_codes`.
"""
from __future__ import annotations

import functools
import os
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from app.core.base.errors import BadInput
from app.core.base.events import EventCallback, StepEvent
from app.core.base.serial import to_jsonable
from app.core.base.text import Msg, Text, TextTable, render, texts
from app.core.compat import cuda
from app.core.compat.data import load_compat
from app.core.detection.envvars import hide_uuids
from app.core.env.activate_vars import probe_env
from app.core.measure.probe import ProbeFailed, probe_tables, run_probe
from app.core.proc.runner import CancelToken

__all__ = [
    "PROBE_TEXTS",
    "STATUSES",
    "BackendState",
    "Check",
    "Device",
    "Interpreter",
    "ProbeFailed",
    "TorchBuild",
    "VerifyReport",
    "check_from_step",
    "check_title",
    "decide_arch",
    "detail_codes",
    "detail_text",
    "run_verify",
]

STATUSES = ("passed", "failed", "skipped")
Params = Mapping[str, object]

# ------------------------------------------------------------------------------- texts by code

# The checks' titles and the probe's outcome sentences have one home, the probe (it writes them
# into its raw output for people reading it): they are read from its source as data, never
# imported (:func:`app.core.measure.probe.probe_tables`), on first use. Each table's code prefix:
PROBE_TEXTS = {"TITLES": "verify.title.", "DETAILS": "verify."}

# the one check decided here, not by the probe: its title and outcomes
_ARCH_TITLE = texts("verify.title.", {"arch_list": "The GPU's architecture is compiled into this PyTorch"})
_ARCH_DETAILS = texts("verify.", {
    "arch_covered": "device {devices} is covered by {archs}",
    "arch_missing": "{devices} is not in this wheel's compiled architectures ({archs}): kernels will fail with 'no "
                    "kernel image is available'",
    "arch_list_unknown": "this build does not report its architecture list",
    "arch_not_applicable": "{backend} has no compiled architecture list",
})


@dataclass(frozen=True)
class _Texts:
    titles: TextTable
    title_defaults: Mapping[str, Params]  # the library a title names when the probe did not say
    details: TextTable


@functools.cache
def _texts() -> _Texts:
    probe = probe_tables("verify", ("TITLES", "TITLE_DEFAULTS", "DETAILS"))
    return _Texts(TextTable(PROBE_TEXTS["TITLES"], {**probe["TITLES"], **_ARCH_TITLE.templates}),
                  probe["TITLE_DEFAULTS"],
                  TextTable(PROBE_TEXTS["DETAILS"], {**probe["DETAILS"], **_ARCH_DETAILS.templates}))


def detail_codes() -> frozenset[str]:
    """Every outcome code a check can carry: the probe's and the arch check's."""
    return frozenset(_texts().details)


def _fits(m: Msg) -> bool:
    """Does every placeholder of ``m``'s template have a value (and format)?"""
    names = {f for _, f, _, _ in string.Formatter().parse(m.en) if f}
    have = {k for k, _ in m.args}
    if not names <= have:
        return False
    try:
        m.render("en")
    except (ValueError, TypeError, KeyError, IndexError):
        return False
    return True


def _nested(params: Params) -> dict[str, object]:
    """A ``{"code", "params"}`` value (the reason of a skip) becomes its text."""
    out: dict[str, object] = {}
    for k, v in params.items():
        if isinstance(v, Mapping) and isinstance(v.get("code"), str):
            inner = v.get("params")
            out[k] = detail_text(str(v["code"]), inner if isinstance(inner, Mapping) else {}, "")
        else:
            out[k] = v
    return out


def check_title(name: str, params: Params | None = None, fallback: str = "") -> Text:
    """The title of check ``name`` (``params``: the library of dnn_library / nccl_all_reduce)."""
    t = _texts()
    if name not in t.titles:
        return fallback or name
    m = t.titles.msg(name, **(params or t.title_defaults.get(name) or {}))
    return m if _fits(m) else (fallback or name)


def detail_text(code: str | None, params: Params | None, fallback: str) -> Text:
    """The sentence for outcome ``code`` with ``params``; ``fallback`` (the probe's English) otherwise."""
    details = _texts().details
    if code is None or code not in details:
        return fallback
    m = details.msg(code, **_nested(params or {}))
    return m if _fits(m) else fallback


# ------------------------------------------------------------------------------- the report


def _str(value: object) -> str | None:
    return None if value is None else str(value)


def _int(value: object) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return int(value)
    try:
        return int(str(value))
    except ValueError:
        return None


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _seq(value: object) -> tuple[object, ...]:
    return tuple(value) if isinstance(value, (list, tuple)) else ()


@dataclass(frozen=True)
class Check:
    """One check: ``name`` (stable id), ``status`` (passed | failed | skipped), its title and
    the outcome's ``code`` with ``params`` (the detail: what was done, or why it failed / was
    skipped), and measured ``data``."""

    name: str
    status: str
    title: Text
    detail: Text = ""
    code: str | None = None
    params: Mapping[str, object] = field(default_factory=dict)
    data: Mapping[str, object] | None = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_dict(self) -> dict[str, object]:
        """English title and detail, plus the codes and values they are made from."""
        out: dict[str, object] = {"name": self.name, "status": self.status, "title": render(self.title),
                                  "detail": render(self.detail), "code": self.code,
                                  "params": to_jsonable(dict(self.params)), "data": to_jsonable(self.data)}
        if isinstance(self.title, Msg) and self.title.args:
            out["title_params"] = {k: v for k, v in self.title.args}
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> Check:
        """From :meth:`to_dict` output or a check of the probe's result."""
        status = str(d.get("status", "failed"))
        name = str(d.get("name", ""))
        code = _str(d.get("code"))
        params = dict(_mapping(d.get("params")))
        title_params = _mapping(d.get("title_params")) or None
        data = d.get("data")
        return cls(name=name, status=status if status in STATUSES else "failed",
                   title=check_title(name, title_params, str(d.get("title") or name)),
                   detail=detail_text(code, params, str(d.get("detail") or "")), code=code, params=params,
                   data=dict(data) if isinstance(data, Mapping) else None)


def check_from_step(ev: StepEvent) -> Check:
    """A check as it streams from the probe (``status`` may also be running or info)."""
    data = dict(ev.data or {})
    text = _mapping(data.pop("text", None))
    fallback_title = str(data.pop("title", "") or ev.name)
    code = _str(text.get("code"))
    params = dict(_mapping(text.get("params")))
    title = check_title(ev.name, _mapping(text.get("title_params")) or None, fallback_title)
    return Check(name=ev.name, status=ev.status, title=title, detail=detail_text(code, params, ev.detail),
                 code=code, params=params, data=data or None)


@dataclass(frozen=True)
class Device:
    index: int
    backend: str  # cuda | rocm | xpu | mps
    name: str
    compute_capability: str | None = None
    gfx_target: str | None = None
    total_memory: int | None = None  # bytes
    free_memory: int | None = None
    arch_supported: bool | None = None  # the device's CC / gfx is in the wheel's arch list (decided here)
    multi_processors: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> Device:
        supported = d.get("arch_supported")
        return cls(index=_int(d.get("index")) or 0, backend=str(d.get("backend") or ""), name=str(d.get("name") or ""),
                   compute_capability=_str(d.get("compute_capability")), gfx_target=_str(d.get("gfx_target")),
                   total_memory=_int(d.get("total_memory")), free_memory=_int(d.get("free_memory")),
                   arch_supported=supported if isinstance(supported, bool) else None,
                   multi_processors=_int(d.get("multi_processors")))


@dataclass(frozen=True)
class TorchBuild:
    """How the installed torch was built (``torch.version``, its compiled architectures)."""

    local_tag: str | None = None  # "cpu", "cu126" (the +suffix of the version)
    file: str | None = None
    cuda: str | None = None
    hip: str | None = None
    xpu: str | None = None
    git_version: str | None = None
    debug: bool = False
    num_threads: int | None = None
    cpu_capability: str | None = None
    arch_list: tuple[str, ...] = ()  # sm_86, compute_90, gfx1100 ...

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> TorchBuild:
        return cls(local_tag=_str(d.get("local_tag")), file=_str(d.get("file")), cuda=_str(d.get("cuda")),
                   hip=_str(d.get("hip")), xpu=_str(d.get("xpu")), git_version=_str(d.get("git_version")),
                   debug=bool(d.get("debug")), num_threads=_int(d.get("num_threads")),
                   cpu_capability=_str(d.get("cpu_capability")),
                   arch_list=tuple(str(a) for a in _seq(d.get("arch_list"))))

    def to_dict(self) -> dict[str, object]:
        return {f.name: (list(self.arch_list) if f.name == "arch_list" else getattr(self, f.name))
                for f in fields(self)}


@dataclass(frozen=True)
class BackendState:
    built: bool = False
    available: bool = False
    device_count: int | None = None
    version: int | None = None  # cudnn

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> BackendState:
        return cls(built=bool(d.get("built")), available=bool(d.get("available")),
                   device_count=_int(d.get("device_count")), version=_int(d.get("version")))

    def to_dict(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}


@dataclass(frozen=True)
class Interpreter:
    """The env's Python as the probe saw it (printed before torch is imported)."""

    executable: str | None = None
    prefix: str | None = None
    base_prefix: str | None = None
    in_venv: bool | None = None
    conda: bool | None = None
    python_version: str | None = None
    implementation: str | None = None
    machine: str | None = None
    system: str | None = None  # Linux | Darwin | Windows
    platform: str | None = None
    mac_ver: str | None = None
    pid: int | None = None
    env: Mapping[str, str] = field(default_factory=dict)  # device UUIDs hidden
    sys_path: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> Interpreter:
        def flag(key: str) -> bool | None:
            v = d.get(key)
            return v if isinstance(v, bool) else None

        return cls(executable=_str(d.get("executable")), prefix=_str(d.get("prefix")),
                   base_prefix=_str(d.get("base_prefix")), in_venv=flag("in_venv"), conda=flag("conda"),
                   python_version=_str(d.get("python_version")), implementation=_str(d.get("implementation")),
                   machine=_str(d.get("machine")), system=_str(d.get("system")), platform=_str(d.get("platform")),
                   mac_ver=_str(d.get("mac_ver")), pid=_int(d.get("pid")),
                   env={str(k): hide_uuids(str(v)) for k, v in _mapping(d.get("env")).items()},
                   sys_path=tuple(str(p) for p in _seq(d.get("sys_path"))))

    def to_dict(self) -> dict[str, object]:
        return {f.name: to_jsonable(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True)
class VerifyReport:
    python: str
    torch_version: str | None
    build: TorchBuild = field(default_factory=TorchBuild)
    backends: Mapping[str, BackendState] = field(default_factory=dict)  # cpu, cuda, rocm, mps, xpu; cudnn
    devices: tuple[Device, ...] = ()
    checks: tuple[Check, ...] = ()
    accelerator: str | None = None  # cuda | rocm | xpu | mps | None
    interpreter: Interpreter = field(default_factory=Interpreter)
    init_warnings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # what torch said per backend
    loaded_libraries: Mapping[str, str] = field(default_factory=dict)  # lib basename -> where it was loaded from
    duration_s: float = 0.0
    log_path: str | None = None

    @property
    def ok(self) -> bool:
        return all(c.status != "failed" for c in self.checks)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == "failed"]

    def check(self, name: str) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)

    def backend(self, name: str) -> BackendState:
        return self.backends.get(name) or BackendState()

    def to_dict(self) -> dict[str, object]:
        d = {f.name: to_jsonable(getattr(self, f.name)) for f in fields(self)}
        d["ok"] = self.ok
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, object], *, tegra: Iterable[str] | None = None) -> VerifyReport:
        """From :meth:`to_dict` output or from the probe's raw result object.

        A probe result has no ``arch_list`` check: it is decided here (:func:`decide_arch`);
        ``tegra`` (the compute capabilities served only by an exact match) defaults to the
        compat data's.
        """
        torch = _mapping(d.get("torch"))
        build = _mapping(d.get("build")) or torch
        report = cls(
            python=str(d.get("python") or _mapping(d.get("interpreter")).get("executable") or ""),
            torch_version=_str(d.get("torch_version") or torch.get("version")),
            build=TorchBuild.from_dict(build),
            backends={str(k): BackendState.from_dict(_mapping(v)) for k, v in _mapping(d.get("backends")).items()},
            devices=tuple(Device.from_dict(_mapping(x)) for x in _seq(d.get("devices"))),
            checks=tuple(Check.from_dict(_mapping(x)) for x in _seq(d.get("checks"))),
            accelerator=_str(d.get("accelerator")),
            interpreter=Interpreter.from_dict(_mapping(d.get("interpreter"))),
            init_warnings={str(k): tuple(str(x) for x in _seq(v)) for k, v in _mapping(d.get("init_warnings")).items()},
            loaded_libraries={str(k): str(v) for k, v in _mapping(d.get("loaded_libraries")).items()},
            duration_s=float(str(d.get("duration_s") or 0.0)),
            log_path=_str(d.get("log_path")),
        )
        return decide_arch(report, tegra)


# ------------------------------------------------------------------------------- the arch rule

def _tegra() -> frozenset[str]:
    try:
        return load_compat().tegra
    except BadInput:  # the verdict still stands for desktop GPUs
        return frozenset()


def _device_supported(d: Device, arch_list: tuple[str, ...], tegra: Iterable[str]) -> bool | None:
    if d.backend == "rocm":
        listed = {a.split(":")[0] for a in arch_list}
        return (d.gfx_target in listed) if d.gfx_target and listed else None
    if d.backend == "cuda":
        return cuda.arch_covers(d.compute_capability, arch_list, tegra=tegra)
    return None


def _arch_check(report: VerifyReport, accel: Check) -> Check:
    def make(status: str, code: str, params: Params) -> Check:
        return Check("arch_list", status, check_title("arch_list"), detail_text(code, params, ""), code, dict(params))

    backend = report.accelerator
    arch_list = report.build.arch_list
    if accel.status != "passed" or backend is None:
        reason = {"code": accel.code, "params": dict(accel.params)} if accel.code else None
        if reason is None:
            return Check("arch_list", "skipped", check_title("arch_list"), f"no accelerator is usable: {accel.detail}")
        return make("skipped", "no_accelerator", {"reason": reason})
    if backend not in ("cuda", "rocm"):
        return make("skipped", "arch_not_applicable", {"backend": backend})
    if not arch_list:
        return make("skipped", "arch_list_unknown", {})
    listed = " ".join(arch_list)
    bad = [d for d in report.devices if d.arch_supported is False]
    if bad:
        what = ", ".join(f"{d.name} ({d.compute_capability or d.gfx_target})" for d in bad)
        return make("failed", "arch_missing", {"devices": what, "archs": listed})
    what = ", ".join(f"{d.compute_capability or d.gfx_target}" for d in report.devices)
    return make("passed", "arch_covered", {"devices": what, "archs": listed})


def decide_arch(report: VerifyReport, tegra: Iterable[str] | None = None) -> VerifyReport:
    """Mark each device served or not by the wheel's arch list, and add the ``arch_list``
    check after ``accelerator`` when the probe's checks ran and it is not there yet."""
    arch_list = report.build.arch_list
    devices = report.devices
    if arch_list and any(d.arch_supported is None and d.backend in ("cuda", "rocm") for d in devices):
        served = _tegra() if tegra is None else frozenset(tegra)
        devices = tuple(d if d.arch_supported is not None else
                        replace(d, arch_supported=_device_supported(d, arch_list, served)) for d in devices)
        report = replace(report, devices=devices)
    names = [c.name for c in report.checks]
    if "accelerator" not in names or "arch_list" in names:
        return report
    at = names.index("accelerator")
    checks = list(report.checks)
    checks.insert(at + 1, _arch_check(report, checks[at]))
    return replace(report, checks=tuple(checks))


def run_verify(python: str | os.PathLike[str], *, on_event: EventCallback | None = None,
               cancel: CancelToken | None = None, timeout_s: float = 300.0, expect: str | None = None,
               facts_only: bool = False, distributed: bool = True) -> VerifyReport:
    """Verify PyTorch inside the environment whose interpreter is ``python``.

    ``expect`` (cuda|rocm|mps|xpu) turns "no accelerator" from skipped into failed: use it
    when the install was meant for that backend. Raises ProbeFailed when the probe cannot
    produce a report (torch missing, crashing, hanging) and Cancelled on cancel.
    """
    args: list[str] = []
    if expect:
        args += ["--expect", expect]
    if facts_only:
        args.append("--facts-only")
    if not distributed:
        args.append("--no-dist")
    out = run_probe("verify", python, args, on_event=on_event, cancel=cancel, timeout_s=timeout_s,
                    env=probe_env(python), what="the verification")  # with the variables its activation sets
    raw = dict(out.result)
    raw["log_path"] = str(out.log_path) if out.log_path else None
    raw["python"] = str(Path(python))
    return VerifyReport.from_dict(raw)
