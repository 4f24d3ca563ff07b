"""``explain(report)``: what was found, what it means and what looks wrong, as texts by code
(``detect.*``) that the CLI prints in English and the GUI renders in the wizard's language."""
from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.base.text import Text, join, msg, render
from app.core.detection.envvars import visible_devices_note
from app.core.detection.merge import BRAND
from app.core.detection.system import GPU, ProbeRecord, SystemReport
from app.core.detection.vendors import brand as brand_of

__all__ = ["Explanation", "explain"]


@dataclass(frozen=True)
class Explanation:
    """What was found, what it means, and what looks wrong, in plain sentences."""

    found: tuple[Text, ...] = ()
    meaning: tuple[Text, ...] = ()
    problems: tuple[Text, ...] = ()

    def render(self, lang: str = "en") -> dict[str, list[str]]:
        return {"found": [render(t, lang) for t in self.found], "meaning": [render(t, lang) for t in self.meaning],
                "problems": [render(t, lang) for t in self.problems]}

    def to_dict(self) -> dict[str, object]:
        """English sentences (and the codes of the problems)."""
        out: dict[str, object] = dict(self.render("en"))
        out["problem_codes"] = [t.code if not isinstance(t, str) else "text.plain" for t in self.problems]
        return out


def _gib(mb: int | None) -> str:
    return "?" if mb is None else f"{mb / 1024:.1f} GiB"


def explain(report: SystemReport) -> Explanation:
    """Plain-language summary of a report (the CLI prints it; the GUI shows it)."""
    return Explanation(found=tuple(_found(report)), meaning=(_meaning(report),), problems=tuple(_problems(report)))


# ------------------------------------------------------------------------------ what was found

def _os_line(report: SystemReport) -> Text:
    o = report.os
    name = {"linux": "Linux", "macos": "macOS", "windows": "Windows"}.get(o.family or "", o.family or "?")
    if o.version:
        name += f" ({o.version})" if o.family != "macos" else f" {o.version}"
    parts: list[Text] = [name]
    if o.wsl:
        wsl1 = any(p.name == "os" and "WSL1" in p.detail for p in report.probes)
        parts.append(msg("detect.inside_wsl1", " inside WSL1") if wsl1 else msg("detect.inside_wsl2", " inside WSL2"))
    parts.append(f", {report.arch or '?'}")
    if o.glibc:
        parts.append(f", glibc {o.glibc}")
    return join(parts)


def _python_line(report: SystemReport) -> Text:
    py = report.python
    others = [p for p in report.interpreters if p.source != "running"]
    line: list[Text] = [msg("detect.python", "Python: {version} running at {path}", version=py.version,
                            path=py.executable)]
    if others:
        line.append(msg("detect.python_others", "; {n} other interpreter(s) found", n=len(others)))
        versions = sorted({p.minor for p in others if p.minor}, key=lambda v: tuple(int(x) for x in v.split(".")))
        if versions:
            line.append(f" ({', '.join(versions)})")
        usable = [p for p in report.interpreters if p.can_venv]
        line.append(msg("detect.python_can_venv", "; {n} of all {total} can create a virtual environment",
                        n=len(usable), total=len(report.interpreters)))
    return join(line)


def _gpu_line(g: GPU) -> Text:
    extra: list[Text] = []
    if g.compute_capability:
        extra.append(msg("detect.compute_capability", "compute capability {cc}", cc=g.compute_capability))
    if g.gfx_target:
        extra.append(g.gfx_target)
    if g.memory_mb:
        extra.append(_gib(g.memory_mb))
    if g.driver_version:
        extra.append(msg("detect.driver", "driver {version}", version=g.driver_version))
    if g.integrated:
        extra.append(msg("detect.integrated", "integrated"))
    head = msg("detect.gpu", "{brand} GPU: {name}", brand=BRAND.get(g.vendor) or brand_of(g.vendor), name=g.name)
    return join([head, " (", join(extra, ", "), ")"]) if extra else head


def _found(report: SystemReport) -> list[Text]:
    out: list[Text] = [msg("detect.system", "System: {os}", os=_os_line(report))]
    c = report.cpu
    simd = [f for f in c.flags if f in ("avx2", "avx512f", "amx", "neon", "sve")]
    model: Text = c.model or msg("detect.unknown", "unknown")
    if simd:
        out.append(msg("detect.cpu_simd", "CPU: {model} ({cores} cores, {threads} threads; {simd})", model=model,
                       cores=c.cores or "?", threads=c.threads or "?", simd=", ".join(x.upper() for x in simd)))
    else:
        out.append(msg("detect.cpu", "CPU: {model} ({cores} cores, {threads} threads)", model=model,
                       cores=c.cores or "?", threads=c.threads or "?"))
    out.append(msg("detect.memory", "Memory: {memory}; free disk at {target}: {free}", memory=_gib(report.memory_mb),
                   target=report.target, free=_gib(report.disk_free_mb)))
    out.append(_python_line(report))
    tools = [f"{n} {t.version or ''}".strip() for n, t in sorted(report.tools.items())]
    out.append(msg("detect.tools", "Tools: {tools}", tools=", ".join(tools) if tools else
                   msg("detect.no_tools", "none of uv, conda, mamba, micromamba, nvidia-smi, ROCm")))
    out += [_gpu_line(g) for g in report.gpus] or [msg("detect.no_gpus", "GPUs: none found")]
    return out


# ------------------------------------------------------------------------------ what it means

def _nvidia_meaning(report: SystemReport, working: list[GPU]) -> Text:
    cuda = report.nvidia_cuda_version
    many = len(working) > 1
    if cuda and many:
        return msg("detect.nvidia_cuda_many", "PyTorch can use your NVIDIA GPUs through a CUDA build; the driver "
                   "supports CUDA up to {cuda} (the PyTorch wheel brings its own CUDA runtime, so no CUDA toolkit is "
                   "needed).", cuda=cuda)
    if cuda:
        return msg("detect.nvidia_cuda", "PyTorch can use your NVIDIA GPU through a CUDA build; the driver supports "
                   "CUDA up to {cuda} (the PyTorch wheel brings its own CUDA runtime, so no CUDA toolkit is needed).",
                   cuda=cuda)
    if many:
        return msg("detect.nvidia_many", "PyTorch can use your NVIDIA GPUs through a CUDA build.")
    return msg("detect.nvidia_one", "PyTorch can use your NVIDIA GPU through a CUDA build.")


def _meaning(report: SystemReport) -> Text:
    nvidia = report.gpus_of("nvidia")
    amd = [g for g in report.gpus_of("amd") if not g.integrated]
    intel_d = [g for g in report.gpus_of("intel") if not g.integrated]
    working_nv = [g for g in nvidia if g.source != "pci"]
    if working_nv:
        return _nvidia_meaning(report, working_nv)
    if nvidia:
        return msg("detect.nvidia_no_driver", "An NVIDIA GPU is in this computer, but until its driver works PyTorch "
                   "can only use the CPU.")
    if amd and report.os.family == "linux":
        if amd[0].gfx_target:
            return msg("detect.amd_rocm_target", "PyTorch can use your AMD GPU through a ROCm build (Linux only); its "
                       "target is {gfx}.", gfx=amd[0].gfx_target)
        return msg("detect.amd_rocm", "PyTorch can use your AMD GPU through a ROCm build (Linux only).")
    if amd:
        return msg("detect.amd_not_linux", "The official PyTorch builds support AMD GPUs only on Linux (ROCm); here "
                   "the CPU build is the safe choice.")
    if intel_d:
        return msg("detect.intel_xpu", "PyTorch can use your Intel discrete GPU through an XPU build.")
    if report.gpus_of("apple") and report.arch in ("arm64", "aarch64"):
        return msg("detect.apple_mps", "PyTorch can use your Apple GPU through MPS (part of the normal macOS build).")
    other = [g for g in report.gpus if g.vendor not in BRAND]
    if other:
        return msg("detect.other_vendor", "PyTorch has no build for your {gpu} ({vendor}) here; the CPU build is "
                   "used.", gpu=other[0].name, vendor=brand_of(other[0].vendor))
    if report.gpus:
        return msg("detect.integrated_only", "Only integrated graphics were found ({names}): the CPU build of "
                   "PyTorch is the right one here.", names=", ".join(g.name for g in report.gpus))
    return msg("detect.no_gpu", "No GPU PyTorch can use was found: the CPU build of PyTorch is the right one here.")


# ------------------------------------------------------------------------------ what looks wrong

def _nv_problem(p: ProbeRecord) -> Text:
    if p.status == "timeout":
        if p.detail.startswith("nvidia-smi timed out"):
            return p.detail
        return msg("detect.smi_timed_out", "nvidia-smi timed out: {detail}", detail=p.detail)
    if p.status == "garbage":
        return msg("detect.smi_garbage", "nvidia-smi printed something unexpected: {detail}", detail=p.detail)
    return f"{p.name}: {p.detail}"


_ROCM_TOOLS = ("rocminfo", "amd-smi", "rocm-smi", "rocm_agent_enumerator")


def _probe_problems(report: SystemReport) -> list[Text]:
    out: list[Text] = []
    for p in report.probes:
        if p.name == "nvml" and p.status == "not-found":
            continue  # normal on machines without NVIDIA
        if p.name in ("nvidia-smi", "nvml") and p.status in ("timeout", "error", "garbage", "empty"):
            out.append(_nv_problem(p))
        elif p.name == "nvidia-smi" and p.status == "ok" and "nvidia-smi also said: " in p.detail:
            out.append("nvidia-smi: " + p.detail.split("nvidia-smi also said: ", 1)[1])
        elif (p.name in _ROCM_TOOLS and p.status in ("timeout", "error", "garbage")) or \
                (p.status == "timeout" and p.name not in ("nvidia-smi", "nvml")):
            out.append(f"{p.name}: {p.detail}")
    return out


def _problems(report: SystemReport) -> list[Text]:
    out = _probe_problems(report)
    unanswered = [g for g in report.gpus_of("nvidia") if g.source == "pci"]
    if unanswered:
        out.append(msg("detect.nvidia_unanswered", "An NVIDIA GPU ({gpu}) is in this computer but its driver did not "
                       "answer: install or repair the NVIDIA driver, then reboot.", gpu=unanswered[0].name))
    out += visible_devices_note(report.env)
    if re.search(r"cuda|cudnn|rocm", report.env.get("LD_LIBRARY_PATH", ""), re.IGNORECASE):
        out.append(msg("detect.ld_library_path", "LD_LIBRARY_PATH points at CUDA/ROCm libraries: a PyTorch wheel may "
                       "load those instead of its own and fail; unset it if PyTorch misbehaves."))
    if report.os.family == "macos" and any(p.name == "xcode-select" and p.status == "not-found" for p in report.probes):
        out.append(msg("detect.no_clt", "The Xcode Command Line Tools are not installed, so /usr/bin/python3 (Apple's "
                       "stub, which would open their install dialog) was not used; Homebrew, python.org and uv-managed "
                       "Pythons are. To have Apple's Python too: xcode-select --install."))
    if report.python.can_venv is False and not any(p.can_venv for p in report.interpreters):
        out.append(msg("detect.no_venv", "No Python here can create a virtual environment (venv/ensurepip missing; on "
                       "Debian/Ubuntu: sudo apt install python3-venv)."))
    if report.disk_free_mb is not None and report.disk_free_mb < 8 * 1024:
        out.append(msg("detect.low_disk", "Only {free} free at {target}: a PyTorch environment needs about 1 GiB "
                       "(CPU) to 8 GiB (CUDA/ROCm).", free=_gib(report.disk_free_mb), target=report.target))
    return out
