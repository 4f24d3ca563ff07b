"""Reading a SystemReport into the engine's view of the machine (:class:`Machine`).

The platform wheels are published for, each GPU's compute capability (or gfx target, or Intel
family), the NVIDIA driver in NVIDIA's own numbering, and which GPUs PyTorch will actually see
(``CUDA_VISIBLE_DEVICES``, read by :mod:`app.core.base.visible`). What is missing is listed as
unknown, what is malformed is said and ignored; nothing is guessed silently.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from app.core.base.errors import BadInput
from app.core.base.pyarch import ArchFacts, interpreter_arch, same_arch, wheel_arch
from app.core.base.text import Text, msg
from app.core.base.visible import Visibility, parse_visible
from app.core.compat import cuda
from app.core.compat.data import CompatData
from app.core.detection import gpu_ids
from app.core.detection.system import GPU, PythonInfo, SystemReport
from app.core.recommend import problems
from app.core.recommend.facts import GpuView, Machine, UnfitPython, short_name, version_of

__all__ = ["own_arch", "python_arch_for", "read_machine", "wheel_platform"]

_GFX = re.compile(r"^gfx[0-9a-f]{3,4}$")
_JETSON_WORDS = ("jetson", "orin", "xavier", "tegra")


def wheel_platform(family: str, arch: str | None) -> str | None:
    """``("linux", "amd64")`` -> ``"linux-x86_64"``; an architecture no wheel exists for -> None."""
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


@dataclass
class _Said:
    """What reading the report has to say, gathered while reading it."""

    warnings: list[Text] = field(default_factory=list)
    unknowns: list[Text] = field(default_factory=list)
    notes: list[Text] = field(default_factory=list)


@dataclass
class _Gpus:
    nvidia: list[GpuView] = field(default_factory=list)
    amd: list[GpuView] = field(default_factory=list)
    intel: list[GpuView] = field(default_factory=list)
    apple: list[GpuView] = field(default_factory=list)
    jetson: list[GpuView] = field(default_factory=list)
    other: list[GpuView] = field(default_factory=list)  # makers PyTorch has no build for (qualcomm, ...)


def read_machine(report: SystemReport, data: CompatData) -> Machine:
    """The engine's view of ``report``; BadInput when it names no OS or an unknown architecture."""
    family = report.os.family
    if family is None:
        raise BadInput(msg("recommend.no_os", "The system report does not say which operating system it is for "
                           "(os.family)."),
                       hint=msg("recommend.no_os_hint", "Add \"os\": {{\"family\": \"linux\"}} (or windows / macos) to "
                                "the report."))
    said = _Said()
    arch = report.arch
    if arch is None:
        said.unknowns.append("arch")
        arch = "arm64" if (family == "macos" and any(g.vendor == "apple" for g in report.gpus)) else "x86_64"
        said.warnings.append(problems.arch_assumed(arch))
    platform = wheel_platform(family, arch)
    if platform is None:
        raise BadInput(msg("recommend.bad_arch", "The processor architecture {arch!r} is not one PyTorch publishes "
                           "wheels for.", arch=str(report.arch)),
                       hint=msg("recommend.bad_arch_hint", "Use x86_64 (amd64) or arm64 (aarch64)."))
    glibc = version_of(report.os.glibc) if family == "linux" else None
    if family == "linux" and glibc is None:
        said.unknowns.append("os.glibc")
    macos = version_of(report.os.version) if family == "macos" else None
    if family == "macos" and macos is None:
        said.unknowns.append("os.version")
    windows = version_of(report.os.version) if family == "windows" else None
    if report.python.minor is None:
        said.unknowns.append("python.version")
    pyarch = _Pythons(report, family, python_arch_for(platform))

    gpus = _read_gpus(report, data, family, platform, said)
    drivers = [(g.driver, g.driver_text) for g in gpus.nvidia if g.driver]
    driver, driver_text = (min(drivers) if drivers else (None, None))  # one per machine: the oldest reported
    if gpus.nvidia and driver is None:
        said.unknowns.append("gpus[].driver_version")
    nvidia = gpus.nvidia
    cvd = report.env.get("CUDA_VISIBLE_DEVICES") if report.env else None
    if cvd is not None and nvidia:
        count = max(g.idx for g in gpus.nvidia + gpus.jetson) + 1  # CUDA's ordinals run 0..count-1
        nvidia = _visible_nvidia(cvd, nvidia, count, said)
    if gpus.amd and report.env:
        for var in ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
            val = report.env.get(var)
            if val is not None and parse_visible(val, len(gpus.amd)).hides_all:
                said.warnings.append(problems.amd_hidden(var, val))
    return Machine(platform=platform, family=family, arch=arch, wsl=bool(report.os.wsl), glibc=glibc, macos=macos,
                   python=report.python.minor, interpreters=tuple(pyarch.fit), nvidia=tuple(nvidia),
                   amd=tuple(gpus.amd), intel=tuple(gpus.intel), apple=tuple(gpus.apple), jetson=tuple(gpus.jetson),
                   other=tuple(gpus.other), windows=windows, driver=driver, driver_text=driver_text,
                   warnings=tuple(said.warnings),
                   unknowns=tuple(said.unknowns), notes=tuple(said.notes), emulated_x64=platform == "windows-arm64",
                   unfit=tuple(pyarch.unfit), python_unfit=pyarch.running_unfit, python_fits=pyarch.running_fits)


def python_arch_for(platform: str | None) -> str | None:
    """The architecture of the Python that installs the wheels on a machine of ``platform``: the
    wheels' own, except on Windows on Arm, where the x64 wheels run under emulation with an x64
    Python (decision 18: no stable win_arm64 wheels)."""
    return wheel_arch("windows-x86_64" if platform == "windows-arm64" else platform)


def own_arch(p: PythonInfo, family: str | None) -> str | None:
    """An interpreter's own architecture from what the report says of it (None: nothing)."""
    if not (p.arch or p.platform_tag or p.bits):
        return None
    return interpreter_arch(ArchFacts(bits=p.bits, platform_tag=p.platform_tag, machine=p.arch,
                                      translated=p.translated), family)


class _Pythons:
    """The report's interpreters sorted into those a wheel serves (or that did not say) and the others."""

    def __init__(self, report: SystemReport, family: str, needs: str | None) -> None:
        self.fit: list[tuple[str, str]] = []
        self.unfit: list[UnfitPython] = []
        self.running_unfit = self._unfit(report.python, family, needs)
        arch = own_arch(report.python, family)
        self.running_fits = None if arch is None or needs is None else self.running_unfit is None
        for p in report.interpreters:
            bad = self._unfit(p, family, needs)
            if bad is not None:
                if bad not in self.unfit and bad != self.running_unfit:
                    self.unfit.append(bad)
            elif p.minor and (p.minor, p.executable or "") not in self.fit:
                self.fit.append((p.minor, p.executable or ""))

    @staticmethod
    def _unfit(p: PythonInfo, family: str, needs: str | None) -> UnfitPython | None:
        arch = own_arch(p, family)
        if arch is None or needs is None or same_arch(arch, needs):
            return None
        translated = bool(p.translated) or (family == "macos" and arch == "x86_64" and needs == "arm64")
        return UnfitPython(p.minor, p.executable or "", arch, needs, translated)


def _read_gpus(report: SystemReport, data: CompatData, family: str, platform: str, said: _Said) -> _Gpus:
    out = _Gpus()
    counters: dict[str, int] = {}
    for g in report.gpus:
        pos = counters.get(g.vendor, 0)
        counters[g.vendor] = pos + 1
        view = GpuView(gpu=g, idx=g.index if g.index is not None else pos, name=short_name(g.name))
        if g.vendor == "nvidia":
            view = _read_nvidia(view, data, family, platform, said)
            (out.jetson if view.tegra else out.nvidia).append(view)
        elif g.vendor == "amd":
            out.amd.append(_read_amd(view, data, said))
        elif g.vendor == "intel":
            fam = next((f for f in data.intel_families if f.pattern.search(g.name or "")), None)
            out.intel.append(replace(view, xpu=fam.xpu, intel_family=fam.family) if fam else view)
        elif g.vendor == "apple":
            out.apple.append(view)
        else:  # any other maker: kept, shown and explained; the CPU build serves the machine
            out.other.append(view)
    return out


def _read_nvidia(view: GpuView, data: CompatData, family: str, platform: str, said: _Said) -> GpuView:
    g: GPU = view.gpu
    cc = cuda.parse_cc(g.compute_capability) if g.compute_capability else None
    if g.compute_capability and cc is None:
        said.warnings.append(problems.cc_not_a_number(g.compute_capability, g.name))
    told = None
    if cc is None:  # the report does not say: its PCI id, chip code or name may
        told = gpu_ids.nvidia_cc(data, pci_id=g.pci_id, name=g.name)
        cc = cuda.parse_cc(told.value) if told is not None else None
    driver, driver_text = cuda.driver_tuple(g.driver_version), g.driver_version
    nvidia_form = cuda.windows_driver_to_nvidia(g.driver_version) if family == "windows" else None
    if nvidia_form is not None and g.driver_version is not None:
        driver, driver_text = cuda.driver_tuple(nvidia_form), nvidia_form
        said.notes.append(problems.windows_driver_form(g.driver_version, nvidia_form))
    looks_jetson = any(w in (g.name or "").lower() for w in _JETSON_WORDS)
    l4t = driver is not None and driver[0] < 100 and platform == "linux-aarch64"  # L4T's own numbering (35.x)
    tegra = (cc is not None and f"{cc[0]}.{cc[1]}" in data.tegra) or (cc is None and looks_jetson) or l4t
    return replace(view, cc=cc, told=told, driver=driver, driver_text=driver_text, tegra=tegra)


def _read_amd(view: GpuView, data: CompatData, said: _Said) -> GpuView:
    g = view.gpu
    gfx = (g.gfx_target or "").strip().lower() or None
    if gfx and not _GFX.match(gfx):
        said.warnings.append(problems.gfx_invalid(g.gfx_target, g.name))
        gfx = None
    if gfx is None:  # the report does not say: its PCI id or name may
        told = gpu_ids.amd_gfx(data, pci_id=g.pci_id, name=g.name)
        if told is not None:
            return replace(view, gfx=told.value, told=told)
    return replace(view, gfx=gfx)


def _visible_nvidia(cvd: str, gpus: list[GpuView], count: int, said: _Said) -> list[GpuView]:
    """The GPUs ``CUDA_VISIBLE_DEVICES`` leaves PyTorch (all of them, with a warning, when it hides all)."""
    vis = parse_visible(cvd, count)
    ids = [str(g.idx) for g in gpus]
    if vis.state is Visibility.EMPTY:
        said.warnings.append(problems.cvd_empty())
        return gpus
    if vis.state is Visibility.DISABLED:
        said.warnings.append(problems.cvd_disabled(cvd))
        return gpus
    if vis.uuids:
        said.warnings.append(problems.cvd_uuids(cvd))
        return gpus
    if vis.state is Visibility.NONE_VALID:
        said.warnings.append(problems.cvd_names_none(cvd, ids))
        return gpus
    by_idx = {g.idx: g for g in gpus}
    visible: list[GpuView] = []
    bad = vis.invalid
    for i in vis.indices:
        if i not in by_idx:  # an ordinal no GPU of the report has: CUDA stops there too
            bad = str(i)
            break
        visible.append(by_idx[i])
    if not visible:
        said.warnings.append(problems.cvd_names_none(cvd, ids))
        return gpus
    if bad is not None:
        repeated = bad.isdigit() and int(bad) in [g.idx for g in visible]
        said.warnings.append(problems.cvd_cut_short(cvd, bad, ids, repeated))
    if len(visible) < len(gpus):
        hidden = [g for g in gpus if g not in visible]
        said.notes.append(problems.cvd_limits(cvd, visible, hidden))
    return visible
