"""Sentences about the machine and about why a build cannot run on it.

Two kinds: what reading the report found (a malformed field, a CUDA_VISIBLE_DEVICES that hides
GPUs), and one clause per failed check of a build (``"the CUDA 12.8 build of torch 2.15 has no
kernels for your GTX 1080 Ti …"``). The checks in :mod:`app.core.recommend.evaluate` decide;
these functions only say it.
"""
from __future__ import annotations

from collections.abc import Sequence

from app.core.base.text import Msg, Text, msg
from app.core.compat.data import HsaOverride, Release, Variant
from app.core.recommend.facts import GpuView, vtext
from app.core.recommend.words import arch_span, build_label, gpu_words, platform_words

# ------------------------------------------------------------------ reading the report


def arch_assumed(arch: str) -> Text:
    return msg("rec.arch_assumed", "The report does not give the processor architecture; assuming {arch}.",
               arch=arch)


def cc_not_a_number(cc: str, gpu: str) -> Text:
    return msg("rec.cc_not_a_number",
               "The compute capability {cc} reported for {gpu} is not a number like 8.6; it is ignored.",
               cc=repr(cc), gpu=gpu)


def gfx_invalid(gfx: str | None, gpu: str) -> Text:
    return msg("rec.gfx_invalid", "The gfx target {gfx} reported for {gpu} is not valid; it is ignored.",
               gfx=repr(gfx), gpu=gpu)


def windows_driver_form(wmi: str, driver: str) -> Text:
    return msg("rec.wmi_driver", "The driver version {wmi} is Windows' form of NVIDIA driver {driver}.",
               wmi=wmi, driver=driver)


def amd_hidden(var: str, value: str) -> Text:
    return msg("rec.amd_hidden", '{var} is set to {val}, so PyTorch will see no AMD GPU. Unset it (or list the '
               'GPUs to use, e.g. "0") before running PyTorch.', var=var, val=repr(value))


def cvd_empty() -> Text:
    return msg("rec.cvd_empty", 'CUDA_VISIBLE_DEVICES is set but empty, so PyTorch will see no GPU at all '
               '(torch.cuda.is_available() is False). Unset it (or list the GPUs to use, e.g. "0") '
               'before running PyTorch.')


def cvd_disabled(cvd: str) -> Text:
    return msg("rec.cvd_disabled", 'CUDA_VISIBLE_DEVICES={cvd} names no GPU on purpose (it hides them all), so '
               'PyTorch will see no GPU. Unset it (or list the GPUs to use, e.g. "0") before running PyTorch.',
               cvd=repr(cvd))


def cvd_uuids(cvd: str) -> Text:
    return msg("rec.cvd_uuid", "CUDA_VISIBLE_DEVICES={cvd} names GPUs by UUID; the assistant cannot match UUIDs, "
               "so it plans for every NVIDIA GPU.", cvd=repr(cvd))


def cvd_names_none(cvd: str, ids: Sequence[str]) -> Text:
    return msg("rec.cvd_none", "CUDA_VISIBLE_DEVICES={cvd} names no GPU of this machine (its GPUs are {ids}), so "
               "PyTorch will see no GPU. Unset it or use valid numbers.", cvd=repr(cvd), ids=tuple(ids))


def cvd_cut_short(cvd: str, bad: str, ids: Sequence[str], repeated: bool) -> Text:
    if repeated:
        return msg("rec.cvd_repeated", "CUDA_VISIBLE_DEVICES={cvd} lists {bad} twice; CUDA ignores the repeat and "
                   "everything after it.", cvd=repr(cvd), bad=repr(bad))
    return msg("rec.cvd_partial", "CUDA_VISIBLE_DEVICES={cvd} contains {bad}, which is not a GPU of this machine "
               "(its GPUs are {ids}); CUDA ignores that entry and everything after it.",
               cvd=repr(cvd), bad=repr(bad), ids=tuple(ids))


def cvd_limits(cvd: str, visible: Sequence[GpuView], hidden: Sequence[GpuView]) -> Text:
    return msg("rec.cvd_limits", "CUDA_VISIBLE_DEVICES={cvd} limits PyTorch to {visible}; {hidden} is not considered.",
               cvd=repr(cvd), visible=tuple(f"GPU {g.idx} ({g.name})" for g in visible),
               hidden=tuple(f"GPU {g.idx} ({g.name})" for g in hidden))


# ------------------------------------------------------------------ why a build cannot run


def no_build_for_platform(rel: Release, v: Variant, platform: str | None) -> Text:
    return msg("rec.no_build_for_platform", "torch {torch} has no {build} build for {platform}",
               torch=rel.torch, build=build_label(v), platform=platform_words(platform))


def explicit_only(v: Variant) -> Text:
    return msg("rec.explicit_only", "the {build} build is offered only when you ask for it by name "
               "(--variant {variant})", build=build_label(v), variant=v.name)


def python_unsupported(rel: Release, python: str, v: Variant | None = None) -> Msg:
    if v is not None and (v.python_min or v.python_max):
        lo, hi = v.python_range(rel)
        return msg("rec.python_unsupported_build", "the {build} build of torch {torch} has no wheels for Python "
                   "{python} (it supports {lo}–{hi})", build=build_label(v), torch=rel.torch, python=python, lo=lo,
                   hi=hi)
    return msg("rec.python_unsupported", "torch {torch} has no wheels for Python {python} (it supports {lo}–{hi})",
               torch=rel.torch, python=python, lo=rel.python_min, hi=rel.python_max)


def windows_too_old(v: Variant, need: tuple[int, ...], have: tuple[int, ...]) -> Text:
    return msg("rec.windows_too_old", "the {build} build needs Windows {need} or newer (Windows 11 is 10.0.22000), "
               "and this is Windows {have}", build=build_label(v), need=vtext(need), have=vtext(have))


def xpu_not_validated_on_wsl(rel: Release) -> Text:
    return msg("rec.xpu_wsl_not_validated", "Intel validates the XPU build on WSL2 only from torch 2.14 on; torch "
               "{torch} was not validated there", torch=rel.torch)


def windows_on_arm_cpu_only(v: Variant) -> Text:
    return msg("rec.woa_cpu_only", "Windows on Arm runs only the CPU build (under x64 emulation); the {build} "
               "build needs a native x64 Windows", build=build_label(v))


def glibc_too_old(rel: Release, v: Variant, need: tuple[int, ...], have: tuple[int, ...]) -> Msg:
    return msg("rec.glibc_too_old", "torch {torch}{build} needs glibc {need} or newer (manylinux_{tag} wheels) and "
               "this system has glibc {have}", torch=rel.torch, build=_glibc_build(v), need=vtext(need),
               tag=f"{need[0]}_{need[1]}", have=vtext(have))


def _glibc_build(v: Variant) -> Text:
    """" (CUDA 12.6)" when the build, not the release, sets the glibc floor."""
    return msg("rec.glibc_build", " ({build})", build=build_label(v)) if v.glibc_min else ""


def macos_too_old(rel: Release, need: tuple[int, ...], have: tuple[int, ...]) -> Msg:
    return msg("rec.macos_too_old", "torch {torch} needs macOS {need} or newer; this Mac runs macOS {have}",
               torch=rel.torch, need=vtext(need), have=vtext(have))


def mps_macos_too_old(rel: Release, need: tuple[int, ...], have: tuple[int, ...]) -> Msg:
    return msg("rec.mps_macos_too_old", "MPS in torch {torch} needs macOS {need} or newer; this Mac runs macOS {have}",
               torch=rel.torch, need=vtext(need), have=vtext(have))


def no_companion(rel: Release, pkg: str) -> Msg:
    return msg("rec.no_companion", "no {pkg} release matches torch {torch}", pkg=pkg, torch=rel.torch)


def no_xpu_gpu() -> Text:
    return msg("rec.no_xpu_gpu", "this machine has no Intel GPU that the XPU build supports (Arc A/B-series, "
               "Core Ultra graphics, Data Center GPU Max)")


def mps_apple_only() -> Text:
    return msg("rec.mps_needs_metal_gpu", "MPS runs only on Apple Silicon Macs, and on Intel Macs with an AMD GPU "
               "(macOS 12.3 or newer, up to torch 2.2.2)")


def jetson_no_cuda_wheels(g: GpuView) -> Text:
    return msg("rec.jetson_no_wheels", "your {gpu} is a Jetson (Tegra) board; the pytorch.org CUDA wheels do not "
               "run on it", gpu=g.name)


def no_nvidia_gpu() -> Text:
    return msg("rec.no_nvidia_gpu", "this machine has no NVIDIA GPU")


def no_kernels(rel: Release, v: Variant, g: GpuView) -> Text:
    return msg("rec.no_kernels", "the {build} build of torch {torch} has no kernels for your {gpu}: it is compiled "
               "for compute capability {span}", build=build_label(v), torch=rel.torch, gpu=gpu_words(g),
               span=arch_span(v))


def no_kernels_for_any(rel: Release, v: Variant, gpus: Sequence[GpuView]) -> Text:
    return msg("rec.no_kernels_any", "the {build} build of torch {torch} has no kernels for any of your GPUs "
               "({gpus}): it is compiled for compute capability {span}", build=build_label(v), torch=rel.torch,
               gpus=tuple(gpu_words(g) for g in gpus), span=arch_span(v))


def driver_too_old(v: Variant, need: str, have: str | None, wsl: bool) -> Text:
    if wsl:
        return msg("rec.driver_too_old_wsl", "the {build} build needs NVIDIA driver {need} or newer (the Windows "
                   "driver, as this is WSL2), and yours is {have}", build=build_label(v), need=need, have=have)
    return msg("rec.driver_too_old", "the {build} build needs NVIDIA driver {need} or newer, and yours is {have}",
               build=build_label(v), need=need, have=have)


def no_amd_gpu() -> Text:
    return msg("rec.no_amd_gpu", "this machine has no AMD GPU")


def no_amd_served() -> Text:
    return msg("rec.no_amd_served", "no AMD GPU is served")


def rocm_integrated(v: Variant, g: GpuView) -> Text:
    return msg("rec.rocm_igpu", "the {build} build has no kernels for your integrated {gpu}",
               build=build_label(v), gpu=gpu_words(g))


def rocm_gfx_unknown(v: Variant, g: GpuView) -> Text:
    return msg("rec.rocm_gfx_unknown", "the gfx target of your {gpu} is unknown, so no ROCm build (the {build} build "
               "included) can be said to have kernels for it", gpu=g.name, build=build_label(v))


def gfx_missing(g: GpuView) -> Text:
    """Which fact is missing for an AMD GPU, and how to give it."""
    return msg("rec.gfx_missing", "The GPU generation (gfx target) of your {gpu} is unknown: the report gives "
               "neither its gfx target nor a PCI device id the assistant knows, and its name does not tell it. So "
               "the default is the CPU build, not a ROCm install of 6–19 GB that may have no kernels for it. To use "
               "ROCm, give that fact: run torch-setup detect on that computer (it reads the PCI id from the system, "
               "and the gfx target from rocminfo or the amdgpu driver on Linux), or add \"gfx_target\" (e.g. "
               "gfx1103) or \"pci_id\" (1002:xxxx; on Windows: Device Manager, the display adapter, Details, "
               "Hardware Ids, VEN_1002&DEV_xxxx) to its entry in the report.", gpu=g.name)


def cc_missing(g: GpuView) -> Text:
    """Which fact is missing for an NVIDIA GPU, and how to give it."""
    return msg("rec.cc_missing", "The compute capability of your {gpu} is unknown: the report gives neither it nor a "
               "PCI device id the assistant knows, and its name does not tell it, so no build can be checked for "
               "kernels for it. Give that fact: run torch-setup detect on that computer, or add "
               "\"compute_capability\" (nvidia-smi --query-gpu=compute_cap --format=csv) or \"pci_id\" (10de:xxxx) "
               "to its entry in the report.", gpu=g.name)


def visible_set(env: dict[str, str], served: Sequence[GpuView], hidden: Sequence[GpuView]) -> Text:
    names = tuple(f"{g.name} (GPU {g.gpu.index})" for g in served)
    if "CUDA_VISIBLE_DEVICES" in env:
        return msg("rec.visible_cuda", "This build has no kernels for your {hidden}, so the new environment sets "
                   "CUDA_VISIBLE_DEVICES={value} (with CUDA_DEVICE_ORDER=PCI_BUS_ID, so the numbers are nvidia-smi's) "
                   "when it is activated: PyTorch then sees only {shown}, and cuda:0 is your {first}.",
                   hidden=tuple(g.name for g in hidden), value=env["CUDA_VISIBLE_DEVICES"], shown=names,
                   first=served[0].name)
    return msg("rec.visible_hip", "This build does not serve your {hidden}, so the new environment sets "
               "HIP_VISIBLE_DEVICES={value} (the numbers rocminfo gives) when it is activated: PyTorch then sees only "
               "{shown}, and cuda:0 is your {first}.", hidden=tuple(g.name for g in hidden),
               value=env.get("HIP_VISIBLE_DEVICES", ""), shown=names, first=served[0].name)


def visible_unknown(backend: str, served: Sequence[GpuView], hidden: Sequence[GpuView]) -> Text:
    var = "CUDA_VISIBLE_DEVICES" if backend == "cuda" else "HIP_VISIBLE_DEVICES"
    tool = "nvidia-smi" if backend == "cuda" else "rocminfo"
    return msg("rec.visible_unknown", "This build does not serve your {hidden}, and the report does not number the "
               "GPUs, so PyTorch's cuda:0 may be a GPU without kernels. Before running PyTorch, set {var} to the "
               "number {tool} shows for your {shown}.", hidden=tuple(g.name for g in hidden), var=var, tool=tool,
               shown=tuple(g.name for g in served))


def rocm_no_override(v: Variant, g: GpuView) -> Text:
    return msg("rec.rocm_no_override", "the {build} build has no kernels for your {gpu}, and no "
               "HSA_OVERRIDE_GFX_VERSION value is known for it", build=build_label(v), gpu=gpu_words(g))


def rocm_therock_no_override(v: Variant, g: GpuView) -> Text:
    return msg("rec.rocm_therock_no_override", "the {build} build (TheRock-based) has no kernels for your {gpu}, and "
               "HSA_OVERRIDE_GFX_VERSION must not be set with it", build=build_label(v), gpu=gpu_words(g))


def rocm_override_target_missing(v: Variant, ov: HsaOverride) -> Text:
    return msg("rec.rocm_override_gfx_missing", "the {build} build lacks {gfx}, which the override would use",
               build=build_label(v), gfx=ov.as_gfx)


def rocm_override_only_when_asked(v: Variant, g: GpuView, ov: HsaOverride) -> Text:
    return msg("rec.rocm_override_when_asked", "your {gpu} is an {family} card, which the {build} build does not "
               "list; HSA_OVERRIDE_GFX_VERSION={value} works only partly on this family, so ROCm is offered only "
               "when you ask for it (--backend rocm)", gpu=gpu_words(g), family=ov.family, build=build_label(v),
               value=ov.value)


def rocm_override_note(v: Variant, g: GpuView, ov: HsaOverride) -> Text:
    if not ov.reliable:
        return msg("rec.rocm_override_partly", "Your {gpu} is not in the {build} build's list, but it is a {family} "
                   "card: with HSA_OVERRIDE_GFX_VERSION={value} the ROCm runtime treats it as {gfx}, which the build "
                   "supports. This is unofficial and works only partly on this family.", gpu=gpu_words(g),
                   build=build_label(v), family=ov.family, value=ov.value, gfx=ov.as_gfx)
    return msg("rec.rocm_override_mostly", "Your {gpu} is not in the {build} build's list, but it is a {family} card: "
               "with HSA_OVERRIDE_GFX_VERSION={value} the ROCm runtime treats it as {gfx}, which the build supports. "
               "This is unofficial; it works for most people with this card.", gpu=gpu_words(g),
               build=build_label(v), family=ov.family, value=ov.value, gfx=ov.as_gfx)


def rocm_override_conflict() -> Text:
    return msg("rec.rocm_override_conflict", "your AMD GPUs would need different HSA_OVERRIDE_GFX_VERSION values, "
               "which cannot be set at once")


# ------------------------------------------------------------------ a problem over a range of releases


def from_release_on(problem: Text, oldest: str) -> Text:
    """``problem`` (found in torch ``oldest``) said of every release from ``oldest`` on.

    "torch 2.9 needs glibc 2.28 …" becomes "torch 2.9 and newer need glibc 2.28 …"; a problem
    that does not name its release first stays as it is.
    """
    if not isinstance(problem, Msg):
        return problem
    a = dict(problem.args)
    if problem.code == "rec.glibc_too_old":
        return msg("rec.glibc_too_old_on", "torch {torch} and newer{build} need glibc {need} or newer "
                   "(manylinux_{tag} wheels) and this system has glibc {have}", torch=oldest, build=a["build"],
                   need=a["need"], tag=a["tag"], have=a["have"])
    if problem.code == "rec.macos_too_old":
        return msg("rec.macos_too_old_on", "torch {torch} and newer need macOS {need} or newer; this Mac runs "
                   "macOS {have}", torch=oldest, need=a["need"], have=a["have"])
    if problem.code == "rec.mps_macos_too_old":
        return msg("rec.mps_macos_too_old_on", "MPS in torch {torch} needs macOS {need} or newer; this Mac runs "
                   "macOS {have}", torch=oldest, need=a["need"], have=a["have"])
    if problem.code == "rec.python_unsupported":
        return msg("rec.python_unsupported_on", "torch {torch} and newer has no wheels for Python {python} "
                   "(it supports {lo}–{hi})", torch=oldest, python=a["python"], lo=a["lo"], hi=a["hi"])
    if problem.code == "rec.no_companion":
        return msg("rec.no_companion_on", "no {pkg} release matches torch {torch} or newer", pkg=a["pkg"],
                   torch=oldest)
    return problem
