"""What the doctor knows about an environment: one frozen :class:`Facts`, and how it is gathered.

Facts come from three places: the verify probe run inside the env (torch build, backends,
what torch said while initialising CUDA, where its libraries were loaded from), the
SystemReport (which GPUs and drivers the machine has; ``--from-report`` when it describes
another machine) and the environment variables. Gathering does I/O (:func:`where_torch`,
:func:`scan_library_path`, :func:`python_on_path`); the rules only read the result.
"""
from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from app.core.base.serial import to_jsonable
from app.core.detection.system import GPU, SystemReport
from app.core.env.guard import GuardFacts
from app.core.measure.probe import ProbeFailed, probe_path
from app.core.measure.verify import BackendState, TorchBuild, VerifyReport
from app.core.proc import runner

__all__ = [
    "CUDA_LIBS",
    "ROCM_LIBS",
    "VISIBLE_VARS",
    "Facts",
    "ProbeError",
    "WhereTorch",
    "env_for_checks",
    "inside",
    "python_on_path",
    "scan_library_path",
    "where_torch",
]

CUDA_LIBS = ("libcudart.so", "libcublas.so", "libcublasLt.so", "libcudnn", "libnccl.so", "libcusparse.so",
             "libcufft.so", "libcurand.so", "libnvrtc.so", "libnvJitLink.so", "libcusolver.so")
ROCM_LIBS = ("libamdhip64.so", "libMIOpen.so", "librccl.so", "librocblas.so", "libhipblas.so")
VISIBLE_VARS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
_SHOWN_ENV = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "PYTHONPATH")


@dataclass(frozen=True)
class ProbeError:
    """The verify probe gave no report: ``kind`` crash | error | no-result | timeout | start."""

    kind: str
    code: str | None
    message: str
    lines: tuple[str, ...] = ()

    @classmethod
    def of(cls, exc: ProbeFailed) -> ProbeError:
        return cls(exc.kind, exc.code, exc.text(), tuple(exc.lines))


@dataclass(frozen=True)
class WhereTorch:
    """Where ``import torch`` loads from when the env's Python starts the way a user starts it."""

    torch_origin: str | None = None
    via: str | None = None  # PYTHONPATH, the user site-packages, a sys.path entry
    prefix: str | None = None
    executable: str | None = None


@dataclass(frozen=True)
class Facts:
    """Everything the rules look at (pure data: recorded facts can be fed in tests)."""

    verify: VerifyReport | None = None
    report: SystemReport | None = None
    env: Mapping[str, str] = field(default_factory=dict)  # the variables the env's programs see
    probe_error: ProbeError | None = None
    python: str | None = None
    env_dir: str | None = None
    where: WhereTorch | None = None
    path_python: str | None = None  # what `python` on PATH is
    lib_dirs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # LD_LIBRARY_PATH dirs with GPU libs
    guard: GuardFacts | None = None  # the verified torch build (registry) against the env's files now
    expected: str | None = None  # the accelerator the env was installed for (cuda|rocm|mps|xpu), None: CPU/unknown

    # ---- the machine
    @property
    def gpus(self) -> tuple[GPU, ...]:
        return tuple(self.report.gpus) if self.report is not None else ()

    @property
    def nvidia(self) -> list[GPU]:
        return [g for g in self.gpus if g.vendor == "nvidia"]

    @property
    def amd(self) -> list[GPU]:
        """AMD GPUs, discrete ones when there are any."""
        amd = [g for g in self.gpus if g.vendor == "amd"]
        return [g for g in amd if not g.integrated] or amd

    @property
    def os_family(self) -> str | None:
        return self.report.os.family if self.report is not None else None

    # ---- the wheel
    @property
    def build(self) -> TorchBuild:
        return self.verify.build if self.verify is not None else TorchBuild()

    def backend(self, name: str) -> BackendState:
        return self.verify.backend(name) if self.verify is not None else BackendState()

    @property
    def cuda(self) -> str | None:
        return self.build.cuda

    @property
    def hip(self) -> str | None:
        return self.build.hip

    @property
    def torch_version(self) -> str | None:
        return self.verify.torch_version if self.verify is not None else None

    @property
    def cuda_available(self) -> bool:
        return self.backend("cuda").available

    def warnings(self, backend: str) -> str:
        """What torch said while initialising ``backend`` (cuda, cudnn), on one line."""
        return " ".join(self.verify.init_warnings.get(backend, ())) if self.verify is not None else ""

    @property
    def prefix(self) -> str | None:
        """The environment's own prefix (the probe's sys.prefix, else the folder given)."""
        return (self.verify.interpreter.prefix if self.verify is not None else None) or self.env_dir

    def to_dict(self) -> dict[str, object]:
        """The facts a person reads with the diagnosis (the ``facts`` of ``doctor --json``)."""
        v = self.verify
        return {
            "torch_version": self.torch_version,
            "build": v.build.to_dict() if v is not None else {},
            "backends": {k: s.to_dict() for k, s in v.backends.items()} if v is not None else {},
            "gpus": [to_jsonable(g) for g in self.gpus],
            "env": {k: self.env[k] for k in _SHOWN_ENV if k in self.env},
            "where": to_jsonable(self.where),
            "path_python": self.path_python,
            "probe_error": to_jsonable(self.probe_error),
            "guard": self.guard.to_dict() if self.guard is not None else None,
            "installed_for": self.expected,
        }


def inside(path: str | None, prefix: str | None) -> bool:
    if not path or not prefix:
        return False
    p, q = os.path.realpath(path), os.path.realpath(prefix)
    return p == q or p.startswith(q.rstrip(os.sep) + os.sep)


# ----------------------------------------------------------------------------- gathering

def scan_library_path(value: str | None, exclude_under: Iterable[str] = ()) -> dict[str, tuple[str, ...]]:
    """Directories on a LD_LIBRARY_PATH value holding CUDA / ROCm runtime libraries."""
    out: dict[str, tuple[str, ...]] = {}
    if not value:
        return out
    excl = [os.path.realpath(e) for e in exclude_under if e]
    for d in value.split(os.pathsep):
        if not d or not os.path.isdir(d):
            continue
        real = os.path.realpath(d)
        if any(real == e or real.startswith(e + os.sep) for e in excl):
            continue
        hits: list[str] = []
        for name in CUDA_LIBS + ROCM_LIBS:
            hits += [os.path.basename(p) for p in glob.glob(os.path.join(d, name + "*"))]
        if hits:
            out[d] = tuple(sorted(set(hits)))
    return out


def where_torch(python: Path, env: Mapping[str, str]) -> WhereTorch | None:
    """Start the env's Python the way a user would (no -I, their PYTHONPATH and user site)
    and ask where `torch` would be imported from, without importing it."""
    res = runner.run([str(python), str(probe_path("verify")), "--where"], timeout=60,
                     env={**env, "PYTHONIOENCODING": "utf-8"}, log_path=None)
    for line in res.stdout.splitlines():
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("event") == "where":
            origin, via, prefix, exe = (None if obj.get(k) is None else str(obj[k])
                                        for k in ("torch_origin", "via", "prefix", "executable"))
            return WhereTorch(origin, via, prefix, exe)
    return None


def python_on_path(env: Mapping[str, str]) -> str | None:
    return runner.which("python", path=env.get("PATH"))


def env_for_checks(report: SystemReport | None, env: Mapping[str, str]) -> dict[str, str]:
    """The report's variables, overridden by the ones this environment really has."""
    out = dict(report.env) if report is not None and report.env else {}
    out.update({k: v for k, v in env.items() if k in VISIBLE_VARS})
    for k in ("LD_LIBRARY_PATH", "PYTHONPATH"):  # shown with the diagnosis: this environment's own
        if k in env:
            out[k] = env[k]
        else:
            out.pop(k, None)
    return out
