"""``run_verify``: run the verify probe inside an environment and return a VerifyReport.

The probe (``app/probes/verify.py``) does the work in the target interpreter; this module
turns its JSON into dataclasses that the CLI, the wizard and the session report share.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from app.core.events import EventCallback
from app.core.i18n import get_language, tr
from app.core.probe import ProbeFailed, run_probe  # noqa: F401  (ProbeFailed is part of the API)
from app.core.runner import CancelToken
from app.core.serial import to_jsonable

STATUSES = ("passed", "failed", "skipped")


@dataclass(frozen=True)
class Check:
    name: str  # stable id: cpu_matmul, gloo_all_reduce, device_matmul, ...
    status: str  # passed | failed | skipped
    detail: str = ""  # one line a beginner can read: what was done, or why it failed / was skipped
    title: str = ""  # "Matrix multiply on the CPU"
    data: dict | None = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @classmethod
    def from_dict(cls, d: dict) -> "Check":
        status = str(d.get("status", "failed"))
        return cls(name=str(d.get("name", "")), status=status if status in STATUSES else "failed",
                   detail=str(d.get("detail", "")), title=str(d.get("title") or d.get("name", "")),
                   data=d.get("data"))


@dataclass(frozen=True)
class Device:
    index: int
    backend: str  # cuda | rocm | xpu | mps
    name: str
    compute_capability: str | None = None
    gfx_target: str | None = None
    total_memory: int | None = None  # bytes
    free_memory: int | None = None
    arch_supported: bool | None = None  # the device's CC / gfx is in the wheel's arch list
    multi_processors: int | None = None

    @classmethod
    def from_dict(cls, d: dict) -> "Device":
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass(frozen=True)
class VerifyReport:
    python: str
    torch_version: str | None
    build: dict  # cuda, hip, xpu, local_tag, git_version, debug, arch_list, cpu_capability, file
    backends: dict  # name -> {built, available[, device_count]}; plus cudnn {built, version}
    devices: list[Device]
    checks: list[Check]
    accelerator: str | None  # cuda | rocm | xpu | mps | None
    interpreter: dict = field(default_factory=dict)  # executable, prefix, env, machine, mac_ver...
    init_warnings: dict = field(default_factory=dict)  # what torch said while initialising a backend
    loaded_libraries: dict = field(default_factory=dict)  # lib basename -> path it was loaded from
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

    def to_dict(self) -> dict:
        d = {k: to_jsonable(getattr(self, k)) for k in self.__dataclass_fields__}
        d["ok"] = self.ok
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "VerifyReport":
        """From ``to_dict()`` output or from the probe's raw result object."""
        torch = d.get("torch") or {}
        build = d.get("build") or torch
        interp = dict(d.get("interpreter") or {})
        if isinstance(interp.get("env"), dict):  # device UUIDs never go into a report
            from app.core.detection.envvars import hide_uuids

            interp["env"] = {k: hide_uuids(str(v)) for k, v in interp["env"].items()}
        return cls(
            python=str(d.get("python") or interp.get("executable") or ""),
            torch_version=d.get("torch_version") or torch.get("version"),
            build={k: v for k, v in build.items() if k != "version"},
            backends=dict(d.get("backends") or {}),
            devices=[Device.from_dict(x) for x in d.get("devices") or []],
            checks=[Check.from_dict(x) for x in d.get("checks") or []],
            accelerator=d.get("accelerator"),
            interpreter=dict(interp),
            init_warnings=dict(d.get("init_warnings") or {}),
            loaded_libraries=dict(d.get("loaded_libraries") or {}),
            duration_s=float(d.get("duration_s") or 0.0),
            log_path=d.get("log_path"),
        )


def run_verify(python: str | os.PathLike, *, on_event: EventCallback | None = None,
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
                    what="the verification")
    raw = dict(out.result)
    raw["log_path"] = str(out.log_path) if out.log_path else None
    raw["python"] = str(Path(python))
    return VerifyReport.from_dict(raw)


# ----------------------------------------------------------------------- the checks in the user's language

def _titles() -> dict[str, str]:
    """The verify probe's check titles (English, as the probe writes them) -> the current language."""
    return {
        "PyTorch imports": tr("PyTorch imports"),
        "Matrix multiply on the CPU": tr("Matrix multiply on the CPU"),
        "Convolution on the CPU": tr("Convolution on the CPU"),
        "A training step on the CPU (loss goes down)": tr("A training step on the CPU (loss goes down)"),
        "Mixed precision (bfloat16 autocast) on the CPU": tr("Mixed precision (bfloat16 autocast) on the CPU"),
        "Two-process all_reduce on the CPU (gloo)": tr("Two-process all_reduce on the CPU (gloo)"),
        "An accelerator (GPU) is usable": tr("An accelerator (GPU) is usable"),
        "The GPU's architecture is compiled into this PyTorch": tr("The GPU's architecture is compiled into this "
                                                                   "PyTorch"),
        "A tensor goes to the accelerator and back": tr("A tensor goes to the accelerator and back"),
        "Matrix multiply on the accelerator matches the CPU": tr("Matrix multiply on the accelerator matches the CPU"),
        "Convolution on the accelerator matches the CPU": tr("Convolution on the accelerator matches the CPU"),
        "A training step on the accelerator (loss goes down)": tr("A training step on the accelerator (loss goes "
                                                                  "down)"),
        "cuDNN / MIOpen convolution": tr("cuDNN / MIOpen convolution"),
        "cuDNN convolution": tr("cuDNN convolution"),
        "MIOpen convolution": tr("MIOpen convolution"),
        "Mixed precision (autocast) on the accelerator": tr("Mixed precision (autocast) on the accelerator"),
        "Accelerator memory after the checks": tr("Accelerator memory after the checks"),
        "Two-process all_reduce across GPUs (NCCL)": tr("Two-process all_reduce across GPUs (NCCL)"),
        "Two-process all_reduce across GPUs (RCCL)": tr("Two-process all_reduce across GPUs (RCCL)"),
    }


_CPU_ONLY = re.compile(r"^[Tt]his PyTorch(?P<tag>(?: \(\+[^)]*\))?) is a CPU-only build, so it cannot use a GPU$")
_NO_ACCEL = "no accelerator is usable: "


def _detail(detail: str) -> str:
    m = _CPU_ONLY.match(detail)
    if m:
        return tr("This PyTorch{tag} is a CPU-only build, so it cannot use a GPU", tag=m.group("tag"))
    if detail.startswith(_NO_ACCEL):
        return tr("no accelerator is usable: {reason}", reason=_detail(detail[len(_NO_ACCEL):]))
    return {"not asked for (--no-dist)": tr("not asked for (--no-dist)"),
            "this PyTorch build has no torch.distributed": tr("this PyTorch build has no torch.distributed"),
            }.get(detail, detail)


def localize_check(title: str, detail: str) -> tuple[str, str]:
    """A check's title and detail (as the probe wrote them, in English) in the current language.

    Known titles and the usual skip reasons are translated; measured details (numbers, device
    names, error messages from PyTorch) stay as they are. English returns them unchanged.
    """
    if get_language() == "en":
        return title, detail
    return _titles().get(title, title), _detail(detail or "")
