"""The recommendation engine: which PyTorch build, for which GPU(s), and why.

``recommend(report, data=None, choices=None) -> Recommendation`` is a pure function of the
:class:`~app.core.system.SystemReport`, the compatibility data (``resources/compat``, see
:mod:`app.core.compat`) and the user's overrides (:class:`Choices`). It never picks a wheel that
cannot run: a CUDA build must pass BOTH the driver floor of its CUDA major AND carry kernels for
the GPU's compute capability (same major, device minor >= compiled minor, Tegra excluded; PTX
is not counted as support, see docs/compat-decisions.md). It picks the newest torch release that
works on the machine and the best build of it, says which driver would unlock a newer one, and
explains every decision in plain sentences.

``valid_choices(report, data=None)`` lists every backend / variant / torch release on this
platform, each valid or with the reason it is not (the GUI's "Change…" dialog).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, fields

from app.core.compat import (
    BACKENDS,
    CompatData,
    Release,
    Variant,
    cc_tuple,
    load_compat,
    version_tuple,
)
from app.core.errors import BadInput
from app.core.i18n import get_language, tr
from app.core.system import GPU, SystemReport

__all__ = ["Choices", "Alternative", "Recommendation", "Option", "recommend", "valid_choices"]

COMPANIONS = ("torchvision", "torchaudio")
BACKEND_WORDS = {
    "cuda": "CUDA (NVIDIA GPU)",
    "rocm": "ROCm (AMD GPU)",
    "xpu": "XPU (Intel GPU)",
    "mps": "MPS (Apple Silicon GPU)",
    "cpu": "CPU only",
}


def _bw(backend: str) -> str:
    """BACKEND_WORDS[backend] in the current language."""
    return {"cuda": tr("CUDA (NVIDIA GPU)"), "rocm": tr("ROCm (AMD GPU)"), "xpu": tr("XPU (Intel GPU)"),
            "mps": tr("MPS (Apple Silicon GPU)"), "cpu": tr("CPU only")}.get(backend, backend)


_REQ_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._ -]+\])?\s*([<>=!~]=?\s*[A-Za-z0-9.*+!_-]+"
                       r"(\s*,\s*[<>=!~]=?\s*[A-Za-z0-9.*+!_-]+)*)?$")


# ----------------------------------------------------------------------------- public types

@dataclass(frozen=True)
class Choices:
    """The user's overrides; ``None`` = let the engine decide."""

    backend: str | None = None  # cuda | rocm | xpu | mps | cpu
    variant: str | None = None  # cu126, rocm6.4, xpu, cpu, mps, rocm-therock
    torch: str | None = None  # "2.14" or "2.14.1": a pin, honoured or refused with the reason
    python: str | None = None  # "3.12": the new environment's Python
    packages: tuple[str, ...] | list[str] | None = None  # torch, torchvision, torchaudio, others

    def to_dict(self) -> dict:
        return {"backend": self.backend, "variant": self.variant, "torch": self.torch,
                "python": self.python, "packages": list(self.packages) if self.packages else None}


@dataclass(frozen=True)
class Alternative:
    backend: str
    variant: str
    torch_version: str | None
    valid: bool
    why: str

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Option:
    """One entry of :func:`valid_choices`."""

    kind: str  # backend | variant | torch | python | build
    name: str
    valid: bool
    why: str
    backend: str | None = None
    variant: str | None = None
    torch_version: str | None = None

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Recommendation:
    backend: str
    variant: str
    torch_version: str | None
    python_ok: bool | None  # the report's Python can install this build (None: unknown)
    env_python: str | None  # "3.12" when the new environment should use another Python
    index_url: str
    packages: list[str]
    command: list[str]  # pip form; commands["uv"] for uv
    reasons: list[str]
    warnings: list[str]
    alternatives: list[Alternative]
    compat_data_version: str
    compat_data_date: str = ""
    env_vars: dict[str, str] = field(default_factory=dict)
    served_gpus: list[dict] = field(default_factory=list)
    unserved_gpus: list[dict] = field(default_factory=list)
    driver_upgrade: dict | None = None  # {"driver": "580", "unlocks": "torch 2.15.0 (CUDA 13.2)", ...}
    commands: dict[str, list[str]] = field(default_factory=dict)
    platform: str | None = None
    torch_release: str | None = None
    unknowns: list[str] = field(default_factory=list)
    choices: dict = field(default_factory=dict)
    summary: str = ""

    def to_dict(self) -> dict:
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "alternatives":
                v = [a.to_dict() for a in v]
            elif isinstance(v, list):
                v = list(v)
            elif isinstance(v, dict):
                v = {k: (list(x) if isinstance(x, list) else x) for k, x in v.items()}
            out[f.name] = v
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "Recommendation":
        if not isinstance(d, dict):
            raise BadInput("a recommendation must be a JSON object")
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        missing = [k for k in ("backend", "variant", "index_url", "compat_data_version") if k not in kw]
        if missing:
            raise BadInput(f"recommendation is missing {', '.join(missing)}")
        kw.setdefault("torch_version", None)
        kw.setdefault("python_ok", None)
        kw.setdefault("env_python", None)
        for k in ("packages", "command", "reasons", "warnings"):
            kw.setdefault(k, [])
        kw["alternatives"] = [a if isinstance(a, Alternative) else
                              Alternative(**{k: a.get(k) for k in ("backend", "variant", "torch_version", "valid", "why")})
                              for a in kw.get("alternatives") or []]
        return cls(**kw)


# ----------------------------------------------------------------------------- machine facts

@dataclass
class _Gpu:
    gpu: GPU
    idx: int  # the vendor tool's index (or position)
    name: str  # short, for sentences: "GTX 1080 Ti"
    cc: tuple[int, int] | None = None
    cc_from_name: bool = False
    gfx: str | None = None
    gfx_from_name: bool = False
    driver: tuple[int, ...] | None = None
    driver_text: str | None = None
    tegra: bool = False
    xpu: bool = False
    intel_family: str | None = None

    @property
    def cc_text(self) -> str | None:
        return f"{self.cc[0]}.{self.cc[1]}" if self.cc else None

    def describe(self) -> str:
        if self.gpu.vendor == "nvidia" and self.cc:
            return tr("{name} (compute capability {cc})", name=self.name, cc=self.cc_text)
        if self.gpu.vendor == "amd" and self.gfx:
            return f"{self.name} ({self.gfx})"
        return self.name

    def to_dict(self) -> dict:
        return {"index": self.idx, "name": self.gpu.name, "vendor": self.gpu.vendor,
                "compute_capability": self.cc_text, "gfx_target": self.gfx,
                "driver_version": self.gpu.driver_version}


@dataclass
class _Machine:
    platform: str | None
    family: str
    arch: str | None
    wsl: bool
    glibc: tuple[int, ...] | None
    macos: tuple[int, ...] | None
    python: str | None  # "3.11" (the report's running Python)
    interpreters: list[tuple[str, str]]  # (minor, executable)
    nvidia: list[_Gpu]
    amd: list[_Gpu]
    intel: list[_Gpu]
    apple: list[_Gpu]
    jetson: list[_Gpu]
    driver: tuple[int, ...] | None
    driver_text: str | None
    warnings: list[str]
    unknowns: list[str]
    notes: list[str]
    emulated_x64: bool = False  # Windows on Arm: recommend an x64 Python under emulation

    @property
    def driver_os(self) -> str:
        return "windows" if (self.family == "windows" or self.wsl) else "linux"


def _short_name(name: str) -> str:
    n = re.sub(r"\((R|TM|tm|r)\)", "", name or "").strip()
    for prefix in ("NVIDIA ", "GeForce ", "AMD ", "Intel "):
        if n.startswith(prefix) and len(n) > len(prefix) + 2:
            n = n[len(prefix):]
    return re.sub(r"\s+", " ", n).strip() or (name or "GPU")


def _ver(text) -> tuple[int, ...] | None:
    if text is None:
        return None
    m = re.match(r"^\s*(\d+(?:\.\d+)*)", str(text))
    if not m:
        return None
    try:
        return version_tuple(m.group(1))
    except ValueError:
        return None


def _vtext(t: tuple[int, ...] | None) -> str:
    return ".".join(str(x) for x in t) if t else "?"


def _platform(family: str, arch: str | None) -> str | None:
    a = (arch or "").lower()
    if a in ("x86_64", "amd64", "x64"):
        a = "x86_64"
    elif a in ("arm64", "aarch64", "armv8"):
        a = "arm64"
    else:
        return None
    if family == "linux":
        return "linux-x86_64" if a == "x86_64" else "linux-aarch64"
    if family == "windows":
        return "windows-x86_64" if a == "x86_64" else "windows-arm64"
    if family == "macos":
        return "macos-x86_64" if a == "x86_64" else "macos-arm64"
    return None


def _machine(report: SystemReport, data: CompatData) -> _Machine:
    family = report.os.family
    if family is None:
        raise BadInput("The system report does not say which operating system it is for (os.family).",
                       hint='Add "os": {"family": "linux"} (or windows / macos) to the report.')
    warnings: list[str] = []
    unknowns: list[str] = []
    notes: list[str] = []
    arch = report.arch
    if arch is None:
        unknowns.append("arch")
        arch = "arm64" if (family == "macos" and any(g.vendor == "apple" for g in report.gpus)) else "x86_64"
        warnings.append(tr("The report does not give the processor architecture; assuming {arch}.", arch=arch))
    platform = _platform(family, arch)
    if platform is None:
        raise BadInput(f"The processor architecture {report.arch!r} is not one PyTorch publishes wheels for.",
                       hint="Use x86_64 (amd64) or arm64 (aarch64).")
    glibc = _ver(report.os.glibc) if family == "linux" else None
    if family == "linux" and glibc is None:
        unknowns.append("os.glibc")
    macos = _ver(report.os.version) if family == "macos" else None
    if family == "macos" and macos is None:
        unknowns.append("os.version")
    python = report.python.minor
    if python is None:
        unknowns.append("python.version")
    interps: list[tuple[str, str]] = []
    for p in report.interpreters:
        if p.minor and (p.minor, p.executable or "") not in interps:
            interps.append((p.minor, p.executable or ""))

    nvidia: list[_Gpu] = []
    amd: list[_Gpu] = []
    intel: list[_Gpu] = []
    apple: list[_Gpu] = []
    jetson: list[_Gpu] = []
    counters: dict[str, int] = {}
    for g in report.gpus:
        pos = counters.get(g.vendor, 0)
        counters[g.vendor] = pos + 1
        v = _Gpu(gpu=g, idx=g.index if g.index is not None else pos, name=_short_name(g.name))
        if g.vendor == "nvidia":
            cc = None
            if g.compute_capability:
                try:
                    cc = cc_tuple(g.compute_capability)
                except ValueError:
                    warnings.append(tr("The compute capability {cc} reported for {gpu} is not a number like 8.6; "
                                       "it is ignored.", cc=repr(g.compute_capability), gpu=g.name))
            if cc is None:
                for rule in data.nvidia_names:
                    if rule.pattern.search(g.name or ""):
                        cc = cc_tuple(rule.value)
                        v.cc_from_name = True
                        break
            v.cc = cc
            v.driver = _ver(g.driver_version)
            v.driver_text = g.driver_version
            wmi = re.fullmatch(r"\s*\d{2}\.\d+\.(\d+)\.(\d+)\s*", g.driver_version or "")
            if wmi and family == "windows":
                # Windows' own form (WMI DriverVersion 32.0.15.7680 = NVIDIA 576.80): last 5 digits
                digits = (wmi.group(1) + wmi.group(2).zfill(4))[-5:]
                v.driver = (int(digits[:3]), int(digits[3:]))
                v.driver_text = f"{digits[:3]}.{digits[3:]}"
                notes.append(tr("The driver version {wmi} is Windows' form of NVIDIA driver {driver}.",
                                wmi=g.driver_version, driver=f"{digits[:3]}.{digits[3:]}"))
            name_l = (g.name or "").lower()
            looks_jetson = any(w in name_l for w in ("jetson", "orin", "xavier", "tegra"))
            l4t = v.driver is not None and v.driver[0] < 100 and platform == "linux-aarch64"
            if (cc and f"{cc[0]}.{cc[1]}" in data.tegra) or (cc is None and looks_jetson) or l4t:
                v.tegra = True
                jetson.append(v)
            else:
                nvidia.append(v)
        elif g.vendor == "amd":
            gfx = (g.gfx_target or "").strip().lower() or None
            if gfx and not re.match(r"^gfx[0-9a-f]{3,4}$", gfx):
                warnings.append(tr("The gfx target {gfx} reported for {gpu} is not valid; it is ignored.",
                                   gfx=repr(g.gfx_target), gpu=g.name))
                gfx = None
            if gfx is None:
                for rule in data.amd_names:
                    if rule.pattern.search(g.name or ""):
                        gfx = rule.value
                        v.gfx_from_name = True
                        break
            v.gfx = gfx
            amd.append(v)
        elif g.vendor == "intel":
            for fam in data.intel_families:
                if fam.pattern.search(g.name or ""):
                    v.xpu = fam.xpu
                    v.intel_family = fam.family
                    break
            intel.append(v)
        elif g.vendor == "apple":
            apple.append(v)

    # NVIDIA driver: one per machine; take the oldest any GPU reports.
    drivers = [(g.driver, g.driver_text) for g in nvidia if g.driver]
    driver, driver_text = (min(drivers) if drivers else (None, None))
    if nvidia and driver is None:
        unknowns.append("gpus[].driver_version")

    # CUDA_VISIBLE_DEVICES: what torch will actually see.
    cvd = report.env.get("CUDA_VISIBLE_DEVICES") if report.env else None
    if cvd is not None and nvidia:
        nvidia = _apply_cvd(cvd, nvidia, warnings, notes)

    if amd and report.env:
        for var in ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
            val = report.env.get(var)
            if val is not None and (val.strip() == "" or val.strip() == "-1"):
                warnings.append(tr('{var} is set to {val}, so PyTorch will see no AMD GPU. Unset it (or list the '
                                   'GPUs to use, e.g. "0") before running PyTorch.', var=var, val=repr(val)))
    m = _Machine(platform=platform, family=family, arch=arch, wsl=bool(report.os.wsl), glibc=glibc, macos=macos,
                 python=python, interpreters=interps, nvidia=nvidia, amd=amd, intel=intel, apple=apple,
                 jetson=jetson, driver=driver, driver_text=driver_text, warnings=warnings, unknowns=unknowns,
                 notes=notes)
    if platform == "windows-arm64":
        m.emulated_x64 = True
    return m


def _apply_cvd(cvd: str, gpus: list[_Gpu], warnings: list[str], notes: list[str]) -> list[_Gpu]:
    text = cvd.strip()
    by_idx = {g.idx: g for g in gpus}
    if text == "":
        warnings.append(tr('CUDA_VISIBLE_DEVICES is set but empty, so PyTorch will see no GPU at all '
                           '(torch.cuda.is_available() is False). Unset it (or list the GPUs to use, e.g. "0") '
                           'before running PyTorch.'))
        return gpus
    visible: list[_Gpu] = []
    bad: list[str] = []
    for tok in (t.strip() for t in text.split(",")):
        if re.fullmatch(r"\d+", tok) and int(tok) in by_idx:
            g = by_idx[int(tok)]
            if g not in visible:
                visible.append(g)
            continue
        if tok.upper().startswith(("GPU-", "MIG-")):
            warnings.append(tr("CUDA_VISIBLE_DEVICES={cvd} names GPUs by UUID; the assistant cannot match UUIDs, "
                               "so it plans for every NVIDIA GPU.", cvd=repr(cvd)))
            return gpus
        bad.append(tok)
        break  # CUDA stops reading the list at the first invalid entry
    if bad:
        ids = ", ".join(str(g.idx) for g in gpus)
        if visible:
            warnings.append(tr("CUDA_VISIBLE_DEVICES={cvd} contains {bad}, which is not a GPU of this machine "
                               "(its GPUs are {ids}); CUDA ignores that entry and everything after it.",
                               cvd=repr(cvd), bad=repr(bad[0]), ids=ids))
        else:
            warnings.append(tr("CUDA_VISIBLE_DEVICES={cvd} names no GPU of this machine (its GPUs are {ids}), so "
                               "PyTorch will see no GPU. Unset it or use valid numbers.", cvd=repr(cvd), ids=ids))
            return gpus
    if len(visible) < len(gpus):
        hidden = [g for g in gpus if g not in visible]
        notes.append(tr("CUDA_VISIBLE_DEVICES={cvd} limits PyTorch to {visible}; {hidden} is not considered.",
                        cvd=repr(cvd), visible=", ".join(f"GPU {g.idx} ({g.name})" for g in visible),
                        hidden=", ".join(f"GPU {g.idx} ({g.name})" for g in hidden)))
    return visible


# ----------------------------------------------------------------------------- checks

def _cc_runs(device: tuple[int, int], code: tuple[int, int], tegra: frozenset[str]) -> bool:
    if f"{device[0]}.{device[1]}" in tegra:
        return device == code
    return device[0] == code[0] and device[1] >= code[1]


def _cc_served(device: tuple[int, int], v: Variant, tegra: frozenset[str]) -> bool:
    return any(_cc_runs(device, code, tegra) for code in v.arch_tuples)


def _arch_span(v: Variant) -> str:
    return f"{v.arch[0]}–{v.arch[-1]}" if len(v.arch) > 1 else v.arch[0]


@dataclass
class _Eval:
    release: Release
    variant: Variant
    problems: list[str] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)  # cc, driver, python, glibc, macos, companion, gfx, ...
    served: list[_Gpu] = field(default_factory=list)
    unserved: list[tuple[_Gpu, str]] = field(default_factory=list)
    env_vars: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    floor: tuple[int, ...] | None = None
    floor_text: str | None = None
    by_kind: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def fail(self, kind: str, why: str) -> None:
        self.kinds.add(kind)
        self.by_kind.setdefault(kind, why)
        if why not in self.problems:
            self.problems.append(why)

    @property
    def torch_version(self) -> str:
        return self.release.latest

    def rank(self) -> tuple:
        v = self.variant
        ver = _ver(v.cuda or v.rocm or "0") or (0,)
        return (self.release.key, len(self.served), ver)


class _Engine:
    def __init__(self, report: SystemReport, data: CompatData, choices: Choices) -> None:
        self.report = report
        self.data = data
        self.choices = choices
        self.m = _machine(report, data)
        self.fixed_python = _norm_python(choices.python) if choices.python else None
        self.companions, self.extras = _split_packages(choices.packages)

    # -- what hardware each backend would serve
    def targets(self, backend: str) -> list[_Gpu]:
        m = self.m
        if backend == "cuda":
            return m.nvidia
        if backend == "rocm":
            return [g for g in m.amd if not g.gpu.integrated] or [g for g in m.amd if g.gpu.integrated]
        if backend == "xpu":
            return [g for g in m.intel if g.xpu]
        if backend == "mps":
            return m.apple
        return []

    def platform_for_wheels(self) -> str | None:
        return "windows-x86_64" if self.m.emulated_x64 else self.m.platform

    def evaluate(self, rel: Release, v: Variant, *, explicit: bool = False) -> _Eval:
        m, data = self.m, self.data
        e = _Eval(rel, v)
        plat = self.platform_for_wheels()
        if plat not in v.platforms:
            e.fail("platform", tr("torch {torch} has no {build} build for {platform}", torch=rel.torch,
                                  build=v.label(), platform=_plat_words(m.platform)))
            return e
        if v.explicit and not explicit:
            e.fail("explicit", tr("the {build} build is offered only when you ask for it by name "
                                  "(--variant {variant})", build=v.label(), variant=v.name))
        # Python (only when fixed by the user; otherwise the engine picks the env's Python)
        if self.fixed_python and not rel.python_ok(self.fixed_python):
            e.fail("python", tr("torch {torch} has no wheels for Python {python} (it supports {lo}–{hi})",
                                torch=rel.torch, python=self.fixed_python, lo=rel.python_min, hi=rel.python_max))
        if m.emulated_x64 and v.backend != "cpu":
            e.fail("platform", tr("Windows on Arm runs only the CPU build (under x64 emulation); "
                                  "the {build} build needs a native x64 Windows", build=v.label()))
        # glibc
        gmin = _ver(v.glibc_min or rel.glibc_min)
        if m.family == "linux" and m.glibc and gmin and m.glibc < gmin:
            e.fail("glibc", tr("torch {torch}{build} needs glibc {need} or newer (manylinux_{tag} wheels) and this "
                               "system has glibc {have}", torch=rel.torch,
                               build=' (' + v.label() + ')' if v.glibc_min else '', need=_vtext(gmin),
                               tag=f"{gmin[0]}_{gmin[1]}", have=_vtext(m.glibc)))
        # macOS
        if m.family == "macos":
            mac_min = _ver(v.macos_min)
            if m.macos and mac_min and m.macos < mac_min:
                e.fail("macos", tr("torch {torch} needs macOS {need} or newer; this Mac runs macOS {have}",
                                   torch=rel.torch, need=_vtext(mac_min), have=_vtext(m.macos)))
            if v.backend == "mps":
                mps_min = _ver(v.mps_macos_min)
                if not m.apple and m.platform == "macos-arm64" and not self.report.gpus:
                    pass  # an arm64 Mac always has its Apple GPU; a minimal report may not list it
                if m.macos and mps_min and m.macos < mps_min:
                    e.fail("macos", tr("MPS in torch {torch} needs macOS {need} or newer; this Mac runs macOS {have}",
                                       torch=rel.torch, need=_vtext(mps_min), have=_vtext(m.macos)))
        # companions (torchvision / torchaudio)
        for pkg in self.companions:
            if not rel.companions.get(pkg):
                e.fail("companion", tr("no {pkg} release matches torch {torch}", pkg=pkg, torch=rel.torch))
        # backend-specific hardware checks
        if v.backend == "cuda":
            self._check_cuda(e)
        elif v.backend == "rocm":
            self._check_rocm(e, explicit)
        elif v.backend == "xpu":
            if not self.targets("xpu"):
                e.fail("hardware", tr("this machine has no Intel GPU that the XPU build supports "
                                      "(Arc A/B-series, Core Ultra graphics, Data Center GPU Max)"))
            else:
                e.served = list(self.targets("xpu"))
        elif v.backend == "mps":
            if m.platform != "macos-arm64":
                e.fail("hardware", tr("MPS exists only on Apple Silicon Macs"))
            else:
                e.served = list(m.apple)
        return e

    def _check_cuda(self, e: _Eval) -> None:
        m, data, v = self.m, self.data, e.variant
        gpus = self.targets("cuda")
        if not gpus:
            if m.jetson:
                e.fail("hardware", tr("your {gpu} is a Jetson (Tegra) board; the pytorch.org CUDA "
                                      "wheels do not run on it", gpu=m.jetson[0].name))
            else:
                e.fail("hardware", tr("this machine has no NVIDIA GPU"))
            return
        for g in gpus:
            if g.cc is None:
                e.served.append(g)
                continue
            if _cc_served(g.cc, v, data.tegra):
                e.served.append(g)
            else:
                e.unserved.append((g, tr("the {build} build of torch {torch} has no kernels for your {gpu}: it is "
                                         "compiled for compute capability {span}", build=v.label(),
                                         torch=e.release.torch, gpu=g.describe(), span=_arch_span(v))))
        if not e.served:
            e.fail("cc", e.unserved[0][1] if len(e.unserved) == 1 else
                   tr("the {build} build of torch {torch} has no kernels for any of your GPUs ({gpus}): it is "
                      "compiled for compute capability {span}", build=v.label(), torch=e.release.torch,
                      gpus=', '.join(g.describe() for g, _ in e.unserved), span=_arch_span(v)))
        floor = data.driver_floors[v.cuda_major]
        ftext = floor.windows if m.driver_os == "windows" else floor.linux
        e.floor, e.floor_text = _ver(ftext), ftext
        if m.driver is not None and e.floor and m.driver < e.floor:
            e.fail("driver", tr("the {build} build needs NVIDIA driver {need} or newer (the Windows driver, as this "
                                "is WSL2), and yours is {have}", build=v.label(), need=ftext, have=m.driver_text)
                   if m.wsl else tr("the {build} build needs NVIDIA driver {need} or newer, and yours is {have}",
                                    build=v.label(), need=ftext, have=m.driver_text))

    def _check_rocm(self, e: _Eval, explicit: bool) -> None:
        m, v = self.m, e.variant
        gpus = self.targets("rocm")
        if not gpus:
            e.fail("hardware", tr("this machine has no AMD GPU"))
            return
        overrides: dict[str, str] = {}
        for g in gpus:
            if g.gfx is None:
                e.served.append(g)
                continue
            if g.gfx in v.gfx:
                e.served.append(g)
                continue
            ov = next((o for o in self.data.hsa_overrides if g.gfx in o.gfx), None)
            if g.gpu.integrated:
                e.unserved.append((g, tr("the {build} build has no kernels for your integrated {gpu}",
                                         build=v.label(), gpu=g.describe())))
            elif ov is None:
                e.unserved.append((g, tr("the {build} build has no kernels for your {gpu}, and no "
                                         "HSA_OVERRIDE_GFX_VERSION value is known for it",
                                         build=v.label(), gpu=g.describe())))
            elif v.therock:
                e.unserved.append((g, tr("the {build} build (TheRock-based) has no kernels for your {gpu}, and "
                                         "HSA_OVERRIDE_GFX_VERSION must not be set with it",
                                         build=v.label(), gpu=g.describe())))
            elif ov.as_gfx not in v.gfx:
                e.unserved.append((g, tr("the {build} build lacks {gfx}, which the override would use",
                                         build=v.label(), gfx=ov.as_gfx)))
            elif not ov.reliable and not explicit:
                e.unserved.append((g, tr("your {gpu} is an {family} card, which the {build} build does not list; "
                                         "HSA_OVERRIDE_GFX_VERSION={value} works only partly on this family, so ROCm "
                                         "is offered only when you ask for it (--backend rocm)", gpu=g.describe(),
                                         family=ov.family, build=v.label(), value=ov.value)))
            else:
                e.served.append(g)
                overrides[g.gfx] = ov.value
                e.notes.append((tr("Your {gpu} is not in the {build} build's list, but it is a {family} card: with "
                                   "HSA_OVERRIDE_GFX_VERSION={value} the ROCm runtime treats it as {gfx}, which the "
                                   "build supports. This is unofficial and works only partly on this family.",
                                   gpu=g.describe(), build=v.label(), family=ov.family, value=ov.value,
                                   gfx=ov.as_gfx) if not ov.reliable else
                                tr("Your {gpu} is not in the {build} build's list, but it is a {family} card: with "
                                   "HSA_OVERRIDE_GFX_VERSION={value} the ROCm runtime treats it as {gfx}, which the "
                                   "build supports. This is unofficial; it works for most people with this card.",
                                   gpu=g.describe(), build=v.label(), family=ov.family, value=ov.value,
                                   gfx=ov.as_gfx)))
        if len(set(overrides.values())) > 1:
            e.fail("gfx", tr("your AMD GPUs would need different HSA_OVERRIDE_GFX_VERSION values, which cannot be "
                             "set at once"))
        elif overrides:
            e.env_vars["HSA_OVERRIDE_GFX_VERSION"] = next(iter(overrides.values()))
        if not e.served:
            e.fail("gfx", e.unserved[0][1] if e.unserved else tr("no AMD GPU is served"))

    # -- candidate enumeration
    def releases(self) -> list[Release]:
        if not self.choices.torch:
            return list(self.data.releases)
        rel = self.pinned_release()
        return [rel]

    def pinned_release(self) -> Release:
        want = str(self.choices.torch).strip().lstrip("v")
        m = re.match(r"^(\d+)\.(\d+)(?:\.(\d+))?$", want)
        if not m:
            raise BadInput(f"--torch {self.choices.torch!r} is not a version like 2.14 or 2.14.1")
        rel = self.data.release(f"{m.group(1)}.{m.group(2)}")
        known = ", ".join(r.torch for r in reversed(self.data.releases))
        if rel is None:
            raise BadInput(f"torch {want} is not in the compatibility data ({self.data.version}), which knows "
                           f"releases {known}.", hint="Pick one of those releases.")
        if m.group(3) is not None and version_tuple(want) > version_tuple(rel.latest):
            raise BadInput(f"torch {want} is newer than the newest {rel.torch} release the compatibility data "
                           f"knows ({rel.latest}).", hint=f"Use --torch {rel.latest}.")
        return rel

    def pinned_version(self, rel: Release) -> str:
        want = str(self.choices.torch or "").strip().lstrip("v")
        return want if want.count(".") == 2 and want.startswith(rel.torch + ".") else rel.latest

    def candidates(self, backend: str | None = None, variant: str | None = None, explicit=False) -> list[_Eval]:
        out = []
        plat = self.platform_for_wheels()
        for rel in self.releases():
            for v in rel.variants_for(plat):
                if backend and v.backend != backend:
                    continue
                if variant and v.name != variant:
                    continue
                out.append(self.evaluate(rel, v, explicit=explicit))
        return out


def _plat_words(platform: str | None) -> str:
    return {"linux-x86_64": "Linux x86_64", "linux-aarch64": tr("Linux on ARM (aarch64)"),
            "windows-x86_64": "Windows x64", "windows-arm64": tr("Windows on Arm"),
            "macos-arm64": tr("Apple Silicon Macs"),
            "macos-x86_64": tr("Intel Macs")}.get(platform or "", platform or tr("this platform"))


def _norm_python(text: str) -> str:
    m = re.match(r"^\s*(?:python)?(\d)\.(\d{1,2})(?:\.\d+)?\s*$", str(text))
    if not m:
        raise BadInput(f"--python {text!r} is not a Python version like 3.12")
    return f"{m.group(1)}.{m.group(2)}"


def _split_packages(packages) -> tuple[list[str], list[str]]:
    if not packages:
        return [], []
    if isinstance(packages, str):
        packages = packages.replace(",", " ").split()
    companions: list[str] = []
    extras: list[str] = []
    for p in packages:
        p = str(p).strip()
        if not p:
            continue
        if not _REQ_NAME.match(p):
            raise BadInput(f"{p!r} is not a package name (or name==version)",
                           hint="List packages like: torch torchvision numpy")
        name = re.split(r"[\[<>=!~]", p, 1)[0].lower().replace("_", "-")
        if name == "torch":
            if p.lower() != "torch":
                raise BadInput(f"{p!r}: pin torch with --torch VERSION, not in the package list")
            continue
        if name in COMPANIONS:
            if p.lower() != name:
                raise BadInput(f"{p!r}: {name} is pinned to match torch automatically; list it by name only")
            if name not in companions:
                companions.append(name)
            continue
        if p not in extras:
            extras.append(p)
    return companions, extras


def _join(items: list[str]) -> str:
    items = list(dict.fromkeys(items))
    if len(items) <= 1:
        return "".join(items)
    return tr("{items} and {last}", items=tr(", ").join(items[:-1]), last=items[-1])


def _cuda_labels(variants: list[Variant], keep: str | None = None) -> str:
    """"CUDA 12.8, 12.9 and 13.x": a major collapses to N.x unless it is ``keep``'s major."""
    vers = sorted({v.cuda for v in variants if v.cuda}, key=lambda s: _ver(s) or (0,))
    by_major: dict[str, list[str]] = {}
    for ver in vers:
        by_major.setdefault(ver.split(".")[0], []).append(ver)
    keep_major = keep.split(".")[0] if keep else None
    parts: list[str] = []
    for maj, vs in by_major.items():
        parts.extend(vs if (len(vs) == 1 or maj == keep_major) else [f"{maj}.x"])
    return "CUDA " + _join(parts)


# ----------------------------------------------------------------------------- the engine

def recommend(report: SystemReport, data: CompatData | None = None, choices: Choices | None = None) -> Recommendation:
    """The PyTorch build for this machine, explained. Raises BadInput for impossible overrides."""
    if isinstance(report, dict):
        report = SystemReport.from_dict(report)
    data = data or load_compat()
    choices = choices or Choices()
    eng = _Engine(report, data, choices)
    m = eng.m

    req_backend = (choices.backend or "").strip().lower() or None
    req_variant = (choices.variant or "").strip().lower() or None
    if req_backend and req_backend not in BACKENDS:
        raise BadInput(f"--backend {choices.backend!r} is not one of {', '.join(BACKENDS)}")
    if req_variant:
        names = data.variant_names()
        if req_variant not in names:
            raise BadInput(f"--variant {choices.variant!r} is not a build the compatibility data knows "
                           f"({', '.join(names)})")
        vb = next(v.backend for r in data.releases for v in r.variants if v.name == req_variant)
        if req_backend and req_backend != vb:
            raise BadInput(f"--variant {req_variant} is a {vb} build, but --backend {req_backend} was asked for")
        req_backend = vb
    explicit = bool(req_backend or req_variant)
    plat = eng.platform_for_wheels()
    if not any(r.variants_for(plat) for r in data.releases):
        raise BadInput(f"No PyTorch release in the compatibility data has wheels for {_plat_words(m.platform)}.")

    # Which backends does the hardware call for, in order of preference?
    order = ["cuda", "rocm", "xpu", "mps", "cpu"]
    if choices.torch and not req_backend:
        # a pin keeps the backend this machine gets without it; it never silently falls to CPU
        try:
            unpinned = recommend(report, data, Choices(python=choices.python, packages=choices.packages))
            req_backend = unpinned.backend
        except BadInput:
            pass  # nothing works unpinned either; the pinned search below explains why
    chosen: _Eval | None = None
    tried: list[tuple[str, list[_Eval]]] = []
    backends = [req_backend] if req_backend else order
    for b in backends:
        if b != "cpu" and not req_backend and not eng.targets(b) and not (b == "mps" and m.platform == "macos-arm64"):
            continue
        if b == "rocm" and m.family == "windows" and not req_backend:
            continue  # AMD's own index only when asked for
        evals = eng.candidates(b, req_variant, explicit=explicit)
        tried.append((b, evals))
        best = _pick(evals, eng)
        if best is not None:
            chosen = best
            break
    if chosen is None:
        raise _refusal(eng, req_backend, req_variant, tried)

    return _build(eng, chosen, tried, req_backend, req_variant)


def _pick(evals: list[_Eval], eng: _Engine) -> _Eval | None:
    ok = [e for e in evals if e.ok]
    if not ok:
        return None
    gpus = eng.targets(ok[0].variant.backend)
    everyone = [e for e in ok if len(e.served) == len(gpus)]
    pool = everyone or ok
    return max(pool, key=lambda e: e.rank())


def _refusal(eng: _Engine, backend: str | None, variant: str | None, tried) -> BadInput:
    evals = [e for _, es in tried for e in es]
    what = []
    if variant:
        what.append(f"the {variant} build")
    elif backend:
        what.append(BACKEND_WORDS.get(backend, backend))
    if eng.choices.torch:
        what.append(f"torch {eng.choices.torch}")
    if eng.fixed_python:
        what.append(f"Python {eng.fixed_python}")
    if eng.companions:
        what.append(" and ".join(eng.companions))
    asked = " with ".join(what) or "any build"
    if not evals:
        why = f"no such build exists for {_plat_words(eng.m.platform)}"
    else:
        newest = max(evals, key=lambda e: (e.release.key, -len(e.problems)))
        why = "; ".join(newest.problems[:2])
    hint = "Run without that override to get the recommended build, or see the valid choices (GUI: Change…)."
    plain = Choices(python=eng.choices.python, packages=eng.choices.packages)
    try:
        if plain == eng.choices:
            raise BadInput("no fallback")
        fallback = recommend(eng.report, eng.data, plain)
        hint = (f"The build that works here is torch {fallback.torch_version} ({fallback.variant}). " + hint)
    except BadInput:
        pass
    return BadInput(f"Cannot recommend {asked} on this machine: {why}.", hint=hint)


def _pick_python(eng: _Engine, rel: Release) -> tuple[bool | None, str | None, list[str]]:
    m = eng.m
    if eng.fixed_python:
        ok = m.python == eng.fixed_python if m.python else None
        return ok, (eng.fixed_python if eng.fixed_python != m.python else None), \
            [tr("The new environment uses Python {python}, as you asked.", python=eng.fixed_python)]
    if m.emulated_x64:
        py = next((p for p in eng.data.python_preference if rel.python_ok(p)), rel.python_max)
        return False, py, [tr("On Windows on Arm, install the x64 (AMD64) build of Python {python} from python.org; "
                              "it runs under Windows' x64 emulation and can install this wheel. An arm64 Python "
                              "cannot.", python=py)]
    if m.python is None:
        return None, None, []
    if rel.python_ok(m.python):
        return True, None, [tr("Your Python {python} is supported by torch {torch} (Python {lo}–{hi}).",
                               python=m.python, torch=rel.torch, lo=rel.python_min, hi=rel.python_max)]
    found = [(p, exe) for p, exe in m.interpreters if rel.python_ok(p)]
    found.sort(key=lambda pe: version_tuple(pe[0]), reverse=True)
    pref = [p for p in eng.data.python_preference if rel.python_ok(p)]
    if found:
        in_pref = [pe for pe in found if pe[0] in pref]
        py, exe = (sorted(in_pref, key=lambda pe: pref.index(pe[0]))[0] if in_pref else found[0])
        where = tr(" (found at {exe})", exe=exe) if exe else tr(" (already on this machine)")
    else:
        py = pref[0] if pref else rel.python_max
        where = tr("; it is not on this machine yet: uv can download it, or install it from python.org "
                   "before using pip")
    too_old = version_tuple(m.python) < version_tuple(rel.python_min)
    return False, py, [tr("Your Python {python} is too old for torch {torch} (it supports {lo}–{hi}), so the new "
                          "environment will use Python {env_python}{where}." if too_old else
                          "Your Python {python} is too new for torch {torch} (it supports {lo}–{hi}), so the new "
                          "environment will use Python {env_python}{where}.",
                          python=m.python, torch=rel.torch, lo=rel.python_min, hi=rel.python_max, env_python=py,
                          where=where)]


def _build(eng: _Engine, e: _Eval, tried, req_backend, req_variant) -> Recommendation:
    m, data, choices = eng.m, eng.data, eng.choices
    rel, v = e.release, e.variant
    torch_version = eng.pinned_version(rel) if choices.torch else rel.latest
    reasons: list[str] = []
    warnings: list[str] = list(m.warnings)

    # --- what was found
    gpus_all = m.nvidia + m.amd + m.intel + m.apple + m.jetson
    if not gpus_all and v.backend not in ("mps",):
        reasons.append(tr("No graphics card was found, so this is the CPU build."))

    # --- why this backend / variant
    python_ok, env_python, py_lines = _pick_python(eng, rel)
    all_evals = [x for _, es in tried for x in es]
    same_backend = [x for x in all_evals if x.variant.backend == v.backend]
    better = [x for x in same_backend if x.rank()[:1] > e.rank()[:1] or
              (x.release.key == rel.key and (_ver(x.variant.cuda or x.variant.rocm or "0") or (0,)) >
               (_ver(v.cuda or v.rocm or "0") or (0,)))]

    if v.backend == "cuda":
        served = e.served
        dev = _join([g.describe() for g in served])
        mine = _ver(v.cuda or "0") or (0,)
        cc_blocked = [x for x in same_backend if ("cc" in x.kinds or x.unserved)
                      and (_ver(x.variant.cuda or "0") or (0,)) > mine]
        drv_blocked = [x for x in better if x.kinds == {"driver"}]
        if cc_blocked:
            variants = [x.variant for x in cc_blocked]
            left_out: list[_Gpu] = []
            for x in cc_blocked:
                for g, _ in x.unserved:
                    if g in served and g not in left_out:
                        left_out.append(g)
            who = _join([g.describe() for g in left_out]) or dev
            whom = tr("it") if len(served) == 1 else (tr("them") if len(left_out) == len(served)
                                                       else tr("all your GPUs"))
            kw = dict(who=who, cudas=_cuda_labels(variants, v.cuda), build=v.label(), torch=rel.torch, whom=whom,
                      driver=_short_driver(m.driver_text))
            if len(left_out) <= 1:
                reasons.append(tr("Your {who} is not supported by the {cudas} builds; the {build} build of torch "
                                  "{torch} supports {whom}, and your driver {driver} runs it.", **kw) if m.driver_text
                               else tr("Your {who} is not supported by the {cudas} builds; the {build} build of "
                                       "torch {torch} supports {whom}.", **kw))
            else:
                reasons.append(tr("Your {who} are not supported by the {cudas} builds; the {build} build of torch "
                                  "{torch} supports {whom}, and your driver {driver} runs it.", **kw) if m.driver_text
                               else tr("Your {who} are not supported by the {cudas} builds; the {build} build of "
                                       "torch {torch} supports {whom}.", **kw))
        else:
            kw = dict(gpu=dev, build=v.label(), torch=rel.torch, driver=_short_driver(m.driver_text))
            reasons.append(tr("Your {gpu} is supported by the {build} build of torch {torch}, and your driver "
                              "{driver} runs it.", **kw) if m.driver_text
                           else tr("Your {gpu} is supported by the {build} build of torch {torch}.", **kw))
        if m.wsl:
            reasons.append(tr("This is WSL2: the GPU driver is the Windows one, so the Windows driver thresholds "
                              "apply; do not install an NVIDIA driver inside WSL."))
        if m.driver is None:
            warnings.append(tr("The NVIDIA driver version is unknown; this build needs driver {need} or newer "
                               "({os}). Check with nvidia-smi.", need=e.floor_text,
                               os='Windows' if m.driver_os == 'windows' else 'Linux'))
        for g in e.served:
            if g.cc is None:
                warnings.append(tr("The compute capability of your {gpu} is unknown, so the assistant cannot "
                                   "check that this build has kernels for it (it covers {span}). If it is "
                                   "older than Turing (GTX 10xx and older), pick --variant cu126 --torch 2.14.",
                                   gpu=g.name, span=_arch_span(v)))
            elif g.cc_from_name:
                m.unknowns.append(tr("compute capability of {gpu} (taken from its name: {cc})",
                                     gpu=g.gpu.name, cc=g.cc_text))
        # hybrid laptop / other vendors present
        others = [g for g in m.intel + m.amd if g.gpu.integrated]
        if others:
            reasons.append(tr("The integrated {gpus} is not used; PyTorch runs on the NVIDIA GPU.",
                              gpus=_join([g.name for g in others])))
        dgpu_other = [g for g in m.amd + m.intel if not g.gpu.integrated]
        if dgpu_other:
            warnings.append(tr("{gpus} also present: one PyTorch build serves one vendor; this one serves the "
                               "NVIDIA GPU(s).", gpus=_join([g.name for g in dgpu_other])))
    elif v.backend == "rocm":
        reasons.append(tr("Your {gpus} is served by the {build} build of torch {torch} (ROCm wheels use the "
                          "torch.cuda API).", gpus=_join([g.describe() for g in e.served]), build=v.label(),
                          torch=rel.torch))
        if v.name == "rocm-therock":
            warnings.append(tr("This build comes from AMD's own index (TheRock), not from pytorch.org: it is not "
                               "built or validated by the PyTorch team. AMD's install guide may name extra packages."))
        if m.family == "linux":
            warnings.append(tr("ROCm needs the amdgpu kernel driver and access to /dev/kfd and /dev/dri (add your "
                               "user to the 'render' and 'video' groups)."))
        if m.wsl:
            warnings.append(tr("On WSL2, ROCm also needs AMD's WSL driver stack; the official wheels are built for "
                               "native Linux."))
    elif v.backend == "xpu":
        reasons.append(tr("Your {gpus} ({family}) is served by the Intel XPU build of torch {torch}.",
                          gpus=_join([g.name for g in e.served]), family=e.served[0].intel_family, torch=rel.torch))
        warnings.append(tr("XPU needs Intel's GPU driver (Linux: the intel-level-zero-gpu / compute-runtime "
                           "packages; Windows: the current Arc driver)."))
    elif v.backend == "mps":
        reasons.append(tr("On an Apple Silicon Mac, the standard macOS wheel of torch {torch} includes MPS "
                          "(Metal) GPU support; no CUDA is involved.", torch=rel.torch))
        if m.macos is None:
            warnings.append(tr("The macOS version is unknown; MPS in torch {torch} needs macOS {need} or newer.",
                               torch=rel.torch, need=v.mps_macos_min))
    else:  # cpu
        _cpu_reasons(eng, e, tried, reasons, warnings)

    # newest release?
    newest = data.newest
    if rel.key < newest.key and not choices.torch:
        blockers = _blockers_of_newer(eng, e, all_evals)
        if blockers:
            reasons.append(blockers)
    elif rel.key == newest.key and not choices.torch:
        reasons.append(tr("torch {torch} is the newest release in the compatibility data.", torch=torch_version))
    if choices.torch:
        reasons.append(tr("torch {torch} as you asked (--torch).", torch=torch_version))

    reasons.extend(py_lines)
    reasons.extend(e.notes)
    reasons.extend(m.notes)

    # glibc/macOS deciding older release?
    # PyPI default hint
    pypi = rel.pypi_default.get(m.platform or "")
    if pypi and pypi != v.name and v.backend in ("cuda", "rocm", "xpu"):
        pv = next((x for x in rel.variants_for(m.platform) if x.name == pypi), None)
        if pv is not None and pv.backend != v.backend:
            reasons.append(tr("A plain 'pip install torch' would give you the {pypi} build (the PyPI default "
                              "here), which cannot use your GPU; the {build} build comes from its own index.",
                              pypi=pv.label(), build=v.label()))
        elif pv is not None:
            pe = eng.evaluate(rel, pv)
            if not pe.ok or pe.unserved:
                why = pe.problems[0] if pe.problems else pe.unserved[0][1]
                reasons.append(tr("A plain 'pip install torch' would give you the {pypi} build (the PyPI default "
                                  "here), which would not work: {why}. So the install uses the {variant} index.",
                                  pypi=pv.label(), why=why, variant=v.name))
            else:
                reasons.append(tr("A plain 'pip install torch' would give you the {pypi} build; the assistant "
                                  "installs the {build} build from its own index instead.",
                                  pypi=pv.label(), build=v.label()))
    elif pypi == "cpu" and v.backend in ("cuda", "xpu") and m.family == "windows":
        reasons.append(tr("A plain 'pip install torch' on Windows gives the CPU-only build; the assistant installs "
                          "the {build} build from its own index instead.", build=v.label()))

    # unserved GPUs
    unserved = list(e.unserved)
    if m.jetson:
        for g in m.jetson:
            unserved.append((g, tr("{gpu} is a Jetson (Tegra) board: {note}", gpu=g.name,
                                   note=data.jetson_note or tr("the pytorch.org wheels do not run on it"))))
    if v.backend == "cuda":
        for g in m.amd + m.intel:
            if not g.gpu.integrated:
                unserved.append((g, tr("your {gpu} (a CUDA build does not use non-NVIDIA GPUs)", gpu=g.name)))
    if unserved and v.backend != "cpu":
        reasons.append(tr("Not served: {whys}.", whys=tr("; ").join(why for _, why in unserved)))

    # driver upgrade hint
    upgrade = _driver_upgrade(eng, e, all_evals) if v.backend == "cuda" else None
    if upgrade:
        kw = dict(driver=upgrade['driver'], unlocks=upgrade['unlocks'], toolkit=upgrade.get("toolkit_driver"))
        reasons.append(tr("Updating the NVIDIA driver to {driver} or newer would unlock {unlocks} ({toolkit}, the "
                          "CUDA toolkit's own driver, is the safest choice).", **kw)
                       if upgrade.get("toolkit_driver") and upgrade["toolkit_driver"] != upgrade["driver"] else
                       tr("Updating the NVIDIA driver to {driver} or newer would unlock {unlocks}.", **kw))

    if m.unknowns:
        warnings.append(tr("Unknown (not in the report): {items}.", items=", ".join(dict.fromkeys(m.unknowns))))
    reasons.append(tr("Decided with compatibility data {version} ({date}).", version=data.version, date=data.date))

    packages, commands = _commands(eng, rel, v, torch_version)
    alternatives = _alternatives(eng, e, all_evals)
    served_dicts = [g.to_dict() for g in e.served]
    kw = dict(torch=torch_version, backend=_bw(v.backend), build=v.label(), variant=v.name, python=env_python)
    summary = (tr("torch {torch} — {backend}, {build} build ({variant}), Python {python}", **kw) if env_python
               else tr("torch {torch} — {backend}, {build} build ({variant})", **kw))
    return Recommendation(
        backend=v.backend, variant=v.name, torch_version=torch_version, python_ok=python_ok, env_python=env_python,
        index_url=v.index_url, packages=packages, command=commands["pip"], reasons=reasons,
        warnings=list(dict.fromkeys(warnings)), alternatives=alternatives, compat_data_version=data.version,
        compat_data_date=data.date, env_vars=dict(e.env_vars), served_gpus=served_dicts,
        unserved_gpus=[{**g.to_dict(), "why": why} for g, why in unserved], driver_upgrade=upgrade,
        commands=commands, platform=m.platform, torch_release=rel.torch, unknowns=list(dict.fromkeys(m.unknowns)),
        choices=choices.to_dict(), summary=summary)


def _short_driver(text: str | None) -> str:
    return text or "?"


def _cpu_reasons(eng: _Engine, e: _Eval, tried, reasons: list[str], warnings: list[str]) -> None:
    m = eng.m
    for b, evals in tried:
        if b == "cpu" or not evals:
            continue
        easiest = min(evals, key=lambda x: (len(x.problems), tuple(-k for k in x.release.key)))
        why = easiest.problems[0] if easiest.problems else tr("no build serves it")
        reasons.append(tr("No {backend} build can run here: {why}. The CPU build works everywhere.",
                          backend=_bw(b), why=why))
    if m.jetson:
        g = m.jetson[0]
        reasons.append(tr("Your {gpu} is an NVIDIA Jetson (Tegra) board: the pytorch.org CUDA wheels do not run on "
                          "it. {note}. This CPU build runs meanwhile.", gpu=g.name, note=eng.data.jetson_note))
    amd_win = [g for g in m.amd if not g.gpu.integrated] if m.family == "windows" else []
    if amd_win:
        reasons.append(tr("Your {gpus} is an AMD GPU on Windows: pytorch.org publishes no ROCm wheels for Windows, "
                          "so the default is the CPU build. AMD's own (TheRock) wheels are available as an explicit "
                          "choice: --variant rocm-therock.", gpus=_join([g.name for g in amd_win])))
    if m.platform == "macos-x86_64":
        reasons.append(tr("Intel Macs get no new PyTorch: torch 2.2.2 is the last release with macOS x86_64 wheels, "
                          "and it supports Python up to 3.12. MPS is for Apple Silicon only."))
    if m.emulated_x64:
        reasons.append(tr("PyTorch publishes no stable Windows-on-Arm (arm64) wheels; the x64 CPU build runs under "
                          "Windows' x64 emulation, with an x64 Python."))
    for g in m.intel:
        if not g.xpu:
            reasons.append(tr("Your {gpu} ({family}) is not an XPU device PyTorch supports.", gpu=g.name,
                              family=g.intel_family or tr('Intel integrated graphics')))
    for g in m.amd:
        if g.gpu.integrated and m.family == "linux":
            reasons.append(tr("Your integrated {gpu} is not served by the ROCm builds.", gpu=g.describe()))


def _blockers_of_newer(eng: _Engine, e: _Eval, evals: list[_Eval]) -> str:
    """A sentence on why newer releases were not chosen."""
    newer = [x for x in evals if x.release.key > e.release.key]
    if not newer:
        # newer releases may have no variant of this backend on this platform at all
        plat = eng.platform_for_wheels()
        gone = [r for r in eng.data.releases if r.key > e.release.key
                and not any(v.backend == e.variant.backend for v in r.variants_for(plat))]
        if gone:
            return tr("Newer releases (torch {torch} and later) publish no {backend} build for {platform}.",
                      torch=gone[-1].torch, backend=_bw(e.variant.backend), platform=_plat_words(eng.m.platform))
        return ""
    newest_key = max(x.release.key for x in newer)
    top = [x for x in newer if x.release.key == newest_key]
    rel = top[0].release
    parts: list[str] = []
    if not any(x.variant.name == e.variant.name for x in top):
        parts.append(tr("it has no {build} build", build=e.variant.label()))
    cc_bad = [x for x in top if "cc" in x.kinds or (x.unserved and x.variant.backend == "cuda")]
    if cc_bad:
        spans = _join(sorted({_arch_span(x.variant) for x in cc_bad}))
        gpus = _join(sorted({g.describe() for x in cc_bad for g, _ in x.unserved}))
        parts.append(tr("its {cudas} builds are compiled for compute capability {spans} only, which leaves out "
                        "your {gpus}", cudas=_cuda_labels([x.variant for x in cc_bad]), spans=spans, gpus=gpus))
    drv_bad = [x for x in top if "driver" in x.kinds and x not in cc_bad]
    if drv_bad:
        floors = _join(sorted({x.floor_text or "?" for x in drv_bad}))
        parts.append(tr("its {cudas} builds need NVIDIA driver {floors} or newer (yours is {driver})",
                        cudas=_cuda_labels([x.variant for x in drv_bad]), floors=floors, driver=eng.m.driver_text))
    done = {"cc", "driver"}
    for kind in ("glibc", "macos", "python", "companion"):
        if all(kind in x.kinds for x in newer):
            oldest = min((x for x in newer), key=lambda x: x.release.key)
            text = oldest.by_kind[kind]
            lead = f"torch {oldest.release.torch}"
            if oldest.release.key != newest_key and get_language() != "en":
                text = tr("{problem} (also in older releases down to torch {torch})", problem=text,
                          torch=oldest.release.torch)
            elif oldest.release.key != newest_key:
                if text.startswith(lead):
                    text = f"torch {oldest.release.torch} and newer" + text[len(lead):].replace(" needs ", " need ", 1)
                elif text.endswith(lead):
                    text += " or newer"
            parts.insert(0, text)
            done.add(kind)
    for x in top:
        for kind, text in x.by_kind.items():
            if kind in done:
                continue
            done.add(kind)
            parts.append(text)
    if not parts:
        return ""
    return tr("Not torch {torch}: {parts}.", torch=rel.latest, parts=tr("; ").join(parts[:4]))


def _driver_upgrade(eng: _Engine, e: _Eval, evals: list[_Eval]) -> dict | None:
    if eng.m.driver is None:
        return None
    cands = [x for x in evals if x.variant.backend == "cuda" and x.kinds == {"driver"}
             and (x.rank() > e.rank())]
    if not cands:
        return None
    best = max(cands, key=lambda x: x.rank())
    same = [x for x in cands if x.release.key == best.release.key]
    floor = min((x.floor for x in same if x.floor), default=best.floor)
    pick = max([x for x in same if x.floor == floor], key=lambda x: x.rank())
    text = pick.floor_text or _vtext(floor)
    tk = eng.data.toolkits.get(pick.variant.cuda or "")
    tk_text = (tk.windows if eng.m.driver_os == "windows" else tk.linux) if tk else ""
    return {"driver": text, "unlocks": f"torch {pick.release.latest} ({pick.variant.label()}, {pick.variant.name})",
            "torch_version": pick.release.latest, "variant": pick.variant.name,
            "current": eng.m.driver_text, "toolkit_driver": tk_text or None}


def _local_tag(eng: _Engine, v: Variant) -> str:
    """The local version label the PyTorch index gives this build's wheels ("+cpu", "+cu126").

    Pinning it makes the exact build explicit: pointed at another index or a wheel folder,
    ``torch==2.14.1+cu126`` installs that build or fails clearly, where ``torch==2.14.1``
    would silently take PyPI's default build (a CUDA build on Linux). The PyTorch index
    tags its Linux and Windows wheels this way; its macOS wheels carry no label.
    """
    if not v.index_url.startswith("https://download.pytorch.org/"):
        return ""
    if not eng.platform_for_wheels().startswith(("linux-", "windows-")):
        return ""
    return "+" + v.index_url.rstrip("/").rsplit("/", 1)[-1]


def _commands(eng: _Engine, rel: Release, v: Variant, torch_version: str) -> tuple[list[str], dict[str, list[str]]]:
    tag = _local_tag(eng, v)
    pins = [f"torch=={torch_version}{tag}"]
    for pkg in eng.companions:
        ver = rel.companions.get(pkg, "")
        if torch_version != rel.latest:
            ver = ".".join(ver.split(".")[:2]) + ".*"
        else:
            ver += tag
        pins.append(f"{pkg}=={ver}")
    packages = pins + list(eng.extras)
    pypi = v.index_url.startswith("https://pypi.org/")
    idx = [] if pypi else ["--index-url", v.index_url]
    commands = {"pip": ["pip", "install", *pins, *idx], "uv": ["uv", "pip", "install", *pins, *idx]}
    if eng.extras:
        # never mix indexes: the other packages come from the default index, in a second step
        commands["pip_extra"] = ["pip", "install", *eng.extras]
        commands["uv_extra"] = ["uv", "pip", "install", *eng.extras]
    return packages, commands


def _alternatives(eng: _Engine, e: _Eval, evals: list[_Eval]) -> list[Alternative]:
    """For each build name on this platform: its newest valid release, or why it fails."""
    out: list[Alternative] = []
    chosen_key = (e.variant.backend, e.variant.name, e.release.latest)
    plat = eng.platform_for_wheels()
    by_name: dict[tuple[str, str], list[_Eval]] = {}
    seen_ids = {(x.release.torch, x.variant.name) for x in evals}
    extra = [eng.evaluate(r, v, explicit=True) for r in eng.releases() for v in r.variants_for(plat)
             if (r.torch, v.name) not in seen_ids]
    for x in evals + extra:
        by_name.setdefault((x.variant.backend, x.variant.name), []).append(x)
    for (backend, name), xs in by_name.items():
        xs.sort(key=lambda x: x.release.key, reverse=True)
        valid = [x for x in xs if x.ok]
        if valid:
            best = valid[0]
            if (backend, name, best.release.latest) == chosen_key:
                # newer releases of the chosen build that fail
                newer_bad = [x for x in xs if x.release.key > best.release.key]
                if newer_bad:
                    x = newer_bad[0]
                    out.append(Alternative(backend, name, x.release.latest, False, _why(x)))
                continue
            why = _why_not_chosen(eng, e, best)
            out.append(Alternative(backend, name, best.release.latest, True, why))
            newer_bad = [x for x in xs if x.release.key > best.release.key]
            if newer_bad and backend == e.variant.backend:
                x = newer_bad[0]
                out.append(Alternative(backend, name, x.release.latest, False, _why(x)))
        else:
            x = xs[0]
            if x.kinds <= {"hardware", "platform", "explicit"} and backend != e.variant.backend:
                if any(a.backend == backend and not a.valid and a.torch_version is None for a in out):
                    continue
                out.append(Alternative(backend, "", None, False, _sentence(_cap(x.problems[0]))))
                continue
            out.append(Alternative(backend, name, x.release.latest, False, _why(x)))
    # backends without any build on this platform
    have = {b for b, _ in by_name}
    for b in BACKENDS:
        if b not in have:
            pw = _plat_words(eng.m.platform)
            why = {"mps": tr("MPS exists only on Apple Silicon Macs"),
                   "rocm": tr("pytorch.org publishes no ROCm wheels for {platform}", platform=pw),
                   "xpu": tr("no XPU wheels for {platform}", platform=pw),
                   "cuda": tr("no CUDA wheels for {platform}", platform=pw)}.get(b, tr("not available here"))
            out.append(Alternative(b, b if b in ("mps", "xpu", "cpu") else "", None, False, _sentence(_cap(why))))
    order = {b: i for i, b in enumerate(BACKENDS)}
    out.sort(key=lambda a: (not a.valid, order.get(a.backend, 9), a.variant))
    return out


def _why(x: _Eval) -> str:
    return _sentence(_cap(tr("; ").join(x.problems[:2])))


def _cap(s: str) -> str:
    s = s.strip()
    if get_language() != "en":
        return s  # capitals are an English matter ("pytorch.org" stays as written)
    return (s[:1].upper() + s[1:]) if s else s


def _sentence(s: str) -> str:
    """``s`` with the sentence's closing full stop ("." in English)."""
    return tr("{text}.", text=s)


def _why_not_chosen(eng: _Engine, chosen: _Eval, alt: _Eval) -> str:
    v, cv = alt.variant, chosen.variant
    if alt.release.key < chosen.release.key:
        base = tr("Works, but torch {torch} is older than torch {chosen}", torch=alt.release.latest,
                  chosen=chosen.release.latest)
    elif v.backend != cv.backend:
        base = tr("Works")
    elif alt.release.key == chosen.release.key and v.backend == "cuda":
        base = tr("Works, but {build} is older than {chosen}", build=v.label(), chosen=cv.label())
    else:
        base = tr("Works")
    if alt.unserved and v.backend == cv.backend:
        base += tr("; it would leave your {gpus} unused", gpus=_join([g.name for g, _ in alt.unserved]))
    extra = [g for g in alt.served if g not in chosen.served]
    if extra and v.backend == cv.backend:
        base += tr("; it would serve your {gpus}, which the chosen build does not",
                   gpus=_join([g.name for g in extra]))
    if v.backend == "cpu" and cv.backend != "cpu":
        base = tr("Works everywhere, but runs on the processor only (much slower than your GPU)")
    if alt.env_vars:
        base += tr("; needs {vars}", vars=', '.join(f'{k}={val}' for k, val in alt.env_vars.items()))
    if v.explicit:
        base += tr("; not built or validated by the PyTorch team")
    return _sentence(base)


# ----------------------------------------------------------------------------- valid_choices

def valid_choices(report: SystemReport, data: CompatData | None = None, choices: Choices | None = None) -> dict:
    """Every backend / build / torch release on this platform, each valid or with why not.

    Returns ``{"options": [ {backend, variant, torch_version, valid, why} ... one per (release, build)],
    "backends": [Option...], "variants": [Option...], "torch_versions": [Option...],
    "pythons": [Option...], "compat_data_version": str}`` (all plain dicts).
    """
    if isinstance(report, dict):
        report = SystemReport.from_dict(report)
    data = data or load_compat()
    base = choices or Choices()
    eng = _Engine(report, data, Choices(python=base.python, packages=base.packages))
    plat = eng.platform_for_wheels()
    evals = [eng.evaluate(r, v, explicit=True) for r in data.releases for v in r.variants_for(plat)]
    options = [{"backend": x.variant.backend, "variant": x.variant.name, "torch_version": x.release.latest,
                "valid": x.ok, "why": "" if x.ok else _why(x)} for x in evals]

    def summarize(kind: str, key, label) -> list[dict]:
        groups: dict[str, list[_Eval]] = {}
        for x in evals:
            groups.setdefault(key(x), []).append(x)
        out = []
        for name, xs in groups.items():
            ok = [x for x in xs if x.ok]
            if ok:
                best = max(ok, key=lambda x: x.release.key)
                why = tr("newest working: torch {torch} ({variant})", torch=best.release.latest,
                         variant=best.variant.name)
            else:
                newest = max(xs, key=lambda x: x.release.key)
                why = _why(newest)
            out.append(Option(kind, name, bool(ok), why, **label(xs[0])).to_dict())
        return out

    backends = summarize("backend", lambda x: x.variant.backend, lambda x: {"backend": x.variant.backend})
    have = {o["name"] for o in backends}
    for b in BACKENDS:
        if b not in have:
            backends.append(Option("backend", b, False, tr("No {backend} wheels for {platform}.", backend=_bw(b),
                                   platform=_plat_words(eng.m.platform)), backend=b).to_dict())
    variants = summarize("variant", lambda x: x.variant.name,
                         lambda x: {"backend": x.variant.backend, "variant": x.variant.name})
    torches = summarize("torch", lambda x: x.release.latest, lambda x: {"torch_version": x.release.latest})
    pythons = []
    for p in sorted({p for r in data.releases for p in r.pythons()}, key=version_tuple, reverse=True):
        rels = [r for r in data.releases if r.python_ok(p)]
        pythons.append(Option("python", p, bool(rels),
                              f"torch {rels[-1].torch}–{rels[0].torch}" if rels else tr("no torch release supports it")
                              ).to_dict())
    return {"options": options, "backends": backends, "variants": variants, "torch_versions": torches,
            "pythons": pythons, "compat_data_version": data.version, "platform": eng.m.platform}
