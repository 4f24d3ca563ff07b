"""The recommendation in words: reasons, warnings, the unserved GPUs, the summary, and why each
alternative was not chosen.

Every function here takes what the engine decided (:class:`~app.core.recommend.decide.Decision`,
:class:`~app.core.recommend.evaluate.Evaluation`) and returns texts; none decides anything, and
none picks a language (presenters render the texts in theirs).
"""
from __future__ import annotations

from app.core.base.text import Text, join, msg
from app.core.compat import cuda
from app.core.compat.data import Release, Variant, version_tuple
from app.core.recommend.archwords import arch_download, skipped_reasons, unfit_why
from app.core.recommend.decide import Decision, PythonChoice, ceilings
from app.core.recommend.evaluate import Evaluation
from app.core.recommend.facts import GpuView
from app.core.recommend.problems import cc_missing, from_release_on, gfx_missing, mps_apple_only
from app.core.recommend.types import DriverUpgrade
from app.core.recommend.words import (
    and_list,
    arch_span,
    backend_words,
    build_label,
    cuda_versions,
    gpu_words,
    platform_words,
    semicolons,
    sentence,
    sorted_texts,
)

__all__ = [
    "availability",
    "backend_unavailable",
    "reasons",
    "summary",
    "told_words",
    "unknowns",
    "unserved",
    "warnings",
    "why_invalid",
    "why_not_chosen",
]


# ------------------------------------------------------------------ reasons


def reasons(d: Decision) -> list[Text]:
    """Why this build, in the order a reader wants them; the data version last."""
    m, e, data = d.m, d.chosen, d.eng.data
    out: list[Text] = []
    if not m.all_gpus and e.variant.backend != "mps":
        out.append(msg("rec.no_gpu", "No graphics card was found, so this is the CPU build."))
    out.extend(_backend_reasons(d))
    out.extend(assumed_reasons(e.release, e.variant))
    out.extend(_release_reasons(d))
    out.extend(_last_release_reasons(d))
    out.extend(_ceiling_reasons(d))
    out.extend(_python_reasons(d.python, e))
    out.extend(_arch_reasons(d))
    out.extend(e.notes)
    out.extend(m.notes)
    out.extend(_pypi_reasons(d))
    not_served = unserved(d)
    if not_served and e.backend != "cpu":
        out.append(msg("rec.not_served", "Not served: {whys}.", whys=semicolons([why for _, why in not_served])))
    if d.upgrade is not None:
        out.append(_upgrade_reason(d.upgrade))
    out.append(msg("rec.decided_with", "Decided with compatibility data {version} ({date}).",
                   version=data.version, date=data.date))
    return out


def assumed_reasons(rel: Release, v: Variant) -> list[Text]:
    """What is assumed, not confirmed, about this build: said whenever the build is used."""
    if rel.found_on:
        return [msg("rec.assumed_discovered", "torch {torch} is not in the compatibility data: the index {url} listed "
                    "it on {found}. Its {build} build is assumed to be like {like} (the compute capabilities and the "
                    "driver floor are taken from there), not confirmed.", torch=rel.latest, url=rel.found_at,
                    found=rel.found_on, build=build_label(v), like=v.like or "?")]
    if v.assumed:
        return [msg("rec.assumed_build", "The facts of the {build} build of torch {torch} are assumed, not "
                    "confirmed: {why}.", build=build_label(v), torch=rel.torch, why=v.assumed)]
    return []


def _last_release_reasons(d: Decision) -> list[Text]:
    """"torch 2.14.1 is the last release built for your GTX 1080 Ti", for each served GPU that has one."""
    e, eng = d.chosen, d.eng
    out: list[Text] = []
    for g in e.served:
        last = eng.last_release(e.variant.backend, g)
        if last is not None:
            out.append(msg("rec.last_release", "torch {torch} is the last release built for your {gpu}: newer "
                           "releases carry no kernels for it.", torch=last.latest, gpu=gpu_words(g)))
    return out


def _ceiling_reasons(d: Decision) -> list[Text]:
    """The driver branch an old NVIDIA GPU stops at, and the newer builds that it therefore cannot have."""
    e = d.chosen
    if e.variant.backend != "cuda":
        return []
    out: list[Text] = []
    for g, c in ceilings(d.eng, e.served):
        out.append(msg("rec.driver_ceiling", "R{branch} is the last NVIDIA driver branch for {architecture} GPUs such "
                       "as your {gpu}: keep an R{branch} driver; branch {beyond} and newer do not run it.",
                       branch=c.branch, architecture=c.architecture, gpu=g.name, beyond=c.beyond))
        blocked = [x for x in d.all_evals if x.variant.backend == "cuda" and x.kinds == {"driver"}
                   and x.rank() > e.rank() and x.floor_text and not cuda.capped_driver(x.floor_text, [c])]
        if blocked:
            best = max(blocked, key=lambda x: x.rank())
            out.append(msg("rec.ceiling_blocks", "torch {torch} ({build}) needs NVIDIA driver {floor} or newer, past "
                           "the R{branch} branch: it cannot be had on your {gpu}.", torch=best.release.latest,
                           build=build_label(best.variant), floor=best.floor_text, branch=c.branch, gpu=g.name))
    return out


def _backend_reasons(d: Decision) -> list[Text]:
    e = d.chosen
    rel, v = e.release, e.variant
    if e.on_cpu:
        return [*_cpu_reasons(d), msg("rec.standard_on_cpu", "This is the standard build of torch {torch} (the one "
                                      "PyPI publishes, made for {build}); it runs on the processor here, and its "
                                      "{build} libraries stay unused.", torch=e.torch_version, build=build_label(v))]
    if v.backend == "cuda":
        return _cuda_reasons(d)
    if v.backend == "rocm":
        out: list[Text] = [msg("rec.rocm_served", "Your {gpus} is served by the {build} build of torch {torch} "
                               "(ROCm wheels use the torch.cuda API).", gpus=and_list(gpu_words(g) for g in e.served),
                               build=build_label(v), torch=rel.torch)]
        extras = sorted({v.device_extra.format(gfx=g.gfx) for g in e.served if g.gfx}) if v.device_extra else []
        if extras:  # a served GPU always has its gfx target; without one there is no extra to name
            out.append(msg("rec.device_extra", "On AMD's index a plain torch is host-only (no GPU code), so torch is "
                           "installed with the {extras} extra, which brings your GPU's kernels and the ROCm runtime.",
                           extras=and_list(extras)))
        return out
    if v.backend == "xpu":
        out = [msg("rec.xpu_served", "Your {gpus} ({family}) is served by the Intel XPU build of torch {torch}.",
                   gpus=and_list(g.name for g in e.served), family=e.served[0].intel_family, torch=rel.torch)]
        if d.m.wsl:
            out.append(msg("rec.xpu_wsl", "Intel validates the XPU build on WSL2 (Ubuntu 24.04 and 26.04) from torch "
                           "2.14 on; the GPU driver is the Windows one."))
        return out
    if v.backend == "mps" and d.m.platform == "macos-x86_64":
        return [msg("rec.mps_intel_mac", "On this Intel Mac, the macOS x86_64 wheel of torch {torch} includes MPS "
                    "(Metal), which runs on your {gpus} (MPS needs macOS 12.3 or newer there); no CUDA is involved. "
                    "torch 2.2.2 is the last release with macOS x86_64 wheels.", torch=rel.torch,
                    gpus=and_list(g.name for g in e.served))]
    if v.backend == "mps":
        return [msg("rec.mps_included", "On an Apple Silicon Mac, the standard macOS wheel of torch {torch} includes "
                    "MPS (Metal) GPU support; no CUDA is involved.", torch=rel.torch)]
    return _cpu_reasons(d)


def _cuda_reasons(d: Decision) -> list[Text]:
    m = d.m
    out: list[Text] = [_cuda_support(d)]
    if m.wsl:
        out.append(msg("rec.wsl_driver", "This is WSL2: the GPU driver is the Windows one, so the Windows driver "
                       "thresholds apply; do not install an NVIDIA driver inside WSL."))
    integrated = [g for g in m.intel + m.amd if g.integrated]
    if integrated:
        out.append(msg("rec.integrated_unused", "The integrated {gpus} is not used; PyTorch runs on the NVIDIA GPU.",
                       gpus=and_list(g.name for g in integrated)))
    return out


def _cuda_support(d: Decision) -> Text:
    """"Your GPU is supported by …", or which newer CUDA builds leave it out; for a GPU of unknown
    compute capability, why this build (no claim that it serves it)."""
    m, e = d.m, d.chosen
    rel, v, served = e.release, e.variant, e.served
    unknown = [g for g in served if g.cc is None]
    if unknown:
        if d.eng.cc_unknown("cuda") and not d.eng.choices.variant:
            return msg("rec.cc_unknown_widest", "The compute capability of your {gpu} is unknown, so this is the "
                       "{build} build of torch {torch}: of the builds your driver runs, its kernels cover the most GPU "
                       "generations ({span}). It is chosen for that, not for being the newest.",
                       gpu=and_list(g.name for g in unknown),
                       build=build_label(v), torch=rel.torch, span=arch_span(v))
        return msg("rec.cc_unknown_asked", "The {build} build of torch {torch}, as you asked; the compute capability "
                   "of your {gpu} is unknown, so it cannot be checked for kernels for it (the build covers {span}).",
                   build=build_label(v), torch=rel.torch, gpu=and_list(g.name for g in unknown), span=arch_span(v))
    newer_cc = [x for x in d.all_evals if x.variant.backend == v.backend and ("cc" in x.kinds or x.unserved)
                and x.runtime() > e.runtime()]
    dev = and_list(gpu_words(g) for g in served)
    driver = m.driver_text if not any(g.driver_text and cuda.above_ceiling(g.driver_text, c)
                                      for g, c in ceilings(d.eng, served)) else None  # that driver cannot run it
    if not newer_cc:
        if driver:
            return msg("rec.cuda_supported", "Your {gpu} is supported by the {build} build of torch {torch}, and your "
                       "driver {driver} runs it.", gpu=dev, build=build_label(v), torch=rel.torch,
                       driver=driver)
        return msg("rec.cuda_supported_nodriver", "Your {gpu} is supported by the {build} build of torch {torch}.",
                   gpu=dev, build=build_label(v), torch=rel.torch)
    left_out: list[GpuView] = []
    for x in newer_cc:
        left_out.extend(g for g, _ in x.unserved if g in served and g not in left_out)
    who = and_list(gpu_words(g) for g in left_out) or dev
    if len(served) == 1:
        whom = msg("rec.whom_it", "it")
    elif len(left_out) == len(served):
        whom = msg("rec.whom_them", "them")
    else:
        whom = msg("rec.whom_all", "all your GPUs")
    cudas = cuda_versions([x.variant for x in newer_cc], v.cuda)
    one = len(left_out) <= 1
    if driver:
        if one:
            return msg("rec.cuda_left_out", "Your {who} is not supported by the {cudas} builds; the {build} build of "
                       "torch {torch} supports {whom}, and your driver {driver} runs it.", who=who, cudas=cudas,
                       build=build_label(v), torch=rel.torch, whom=whom, driver=driver)
        return msg("rec.cuda_left_out_many", "Your {who} are not supported by the {cudas} builds; the {build} build of "
                   "torch {torch} supports {whom}, and your driver {driver} runs it.", who=who, cudas=cudas,
                   build=build_label(v), torch=rel.torch, whom=whom, driver=driver)
    if one:
        return msg("rec.cuda_left_out_nodriver", "Your {who} is not supported by the {cudas} builds; the {build} build "
                   "of torch {torch} supports {whom}.", who=who, cudas=cudas, build=build_label(v), torch=rel.torch,
                   whom=whom)
    return msg("rec.cuda_left_out_many_nodriver", "Your {who} are not supported by the {cudas} builds; the {build} "
               "build of torch {torch} supports {whom}.", who=who, cudas=cudas, build=build_label(v),
               torch=rel.torch, whom=whom)


def _cpu_reasons(d: Decision) -> list[Text]:
    m = d.m
    out: list[Text] = []
    for b, evals in d.tried:
        if b == "cpu" or not evals:
            continue
        easiest = min(evals, key=lambda x: (len(x.whys), tuple(-k for k in x.release.key)))
        why = easiest.whys[0] if easiest.whys else msg("rec.no_build_serves", "no build serves it")
        out.append(msg("rec.backend_cannot_run", "No {backend} build can run here: {why}. The CPU build works "
                       "everywhere.", backend=backend_words(b), why=why))
    if m.jetson:
        out.append(msg("rec.jetson_cpu", "Your {gpu} is an NVIDIA Jetson (Tegra) board: the pytorch.org CUDA wheels "
                       "do not run on it. {note}. This CPU build runs meanwhile.", gpu=m.jetson[0].name,
                       note=d.eng.data.jetson_note))
    out.extend(gfx_missing(g) for g in m.amd if g.gfx is None)
    amd_win = [g for g in m.amd if not g.integrated and g.gfx] if m.family == "windows" else []
    if amd_win:
        out.append(msg("rec.amd_windows_cpu", "Your {gpus} is an AMD GPU on Windows: pytorch.org publishes no ROCm "
                       "wheels for Windows, and AMD's ROCm 10.0 packages for Windows do not serve it here, so the "
                       "default is the CPU build. AMD's ROCm 7.14 index is an explicit choice: --variant rocm7.14-amd.",
                       gpus=and_list(g.name for g in amd_win)))
    for g in m.other:
        out.append(msg("rec.unknown_vendor_cpu", "PyTorch has no build for your {gpu} ({vendor}) here; the CPU build "
                       "is used.", gpu=g.name, vendor=d.eng.data.vendor_name(g.vendor)))
    if m.platform == "macos-x86_64":
        out.append(msg("rec.intel_mac_cpu", "Intel Macs get no new PyTorch: torch 2.2.2 is the last release with macOS "
                       "x86_64 wheels, and it supports Python up to 3.12. Its MPS (Metal) support runs on an Intel "
                       "Mac's AMD GPU with macOS 12.3 or newer; without one, this is the CPU build."))
    if m.emulated_x64:
        out.append(msg("rec.woa_cpu", "PyTorch publishes no stable Windows-on-Arm (arm64) wheels; the x64 CPU build "
                       "runs under Windows' x64 emulation, with an x64 Python."))
    for g in m.intel:
        if not g.xpu:
            out.append(msg("rec.intel_not_xpu", "Your {gpu} ({family}) is not an XPU device PyTorch supports.",
                           gpu=g.name, family=g.intel_family or msg("rec.intel_igpu", "Intel integrated graphics")))
    for g in m.amd:
        if g.integrated and g.gfx and m.family == "linux":
            out.append(msg("rec.amd_igpu_not_rocm", "Your integrated {gpu} is not served by the ROCm builds.",
                           gpu=gpu_words(g)))
    return out


def _short_build(d: Decision) -> Text:
    v = d.chosen.variant
    return msg("rec.build_short_cpu", "CPU") if v.backend == "cpu" else v.label()


def availability(d: Decision) -> Text:
    """Why this version when the user's sources decided it ("" when they did not)."""
    bound = d.eng.available
    if d.eng.sources_bound and bound is not None and bound.why:  # the folders' files, and why only they
        return msg("rec.available_bound", "torch {torch}, from the wheels in your folders alone, because {why}.",
                   torch=d.torch_version, why=bound.why)
    a = d.availed
    if a is None or a.offer is None or a.skipped is None:
        return ""
    if a.reachable:
        return msg("rec.available_lacking", "torch {torch} ({build}), the newest build available {where}; "
                   "{newest} exists but none of your sources holds it.", torch=d.torch_version,
                   build=_short_build(d), where=a.offer.where, newest=a.skipped_version)
    return msg("rec.available_unreachable", "torch {torch} ({build}), the newest build available {where}; "
               "{newest} exists but is not reachable.", torch=d.torch_version, build=_short_build(d),
               where=a.offer.where, newest=a.skipped_version)


def _release_reasons(d: Decision) -> list[Text]:
    why = availability(d)
    if why:
        return [why]
    if d.availed is not None and d.availed.offer is not None:
        return [*_plain_release_reasons(d), msg("rec.offered_by", "It is available {where}.",
                                                   where=d.availed.offer.where)]
    return _plain_release_reasons(d)


def _plain_release_reasons(d: Decision) -> list[Text]:
    rel, data, pinned = d.chosen.release, d.eng.data, bool(d.eng.choices.torch)
    if pinned:
        return [msg("rec.torch_pinned", "torch {torch} as you asked (--torch).", torch=d.torch_version)]
    if rel.key == data.newest.key and rel.found_on:
        return [msg("rec.newest_discovered", "torch {torch} is the newest release the index lists.",
                    torch=d.torch_version)]
    if rel.key == data.newest.key:
        return [msg("rec.newest", "torch {torch} is the newest release in the compatibility data.",
                    torch=d.torch_version)]
    blockers = _not_newer(d)
    return [blockers] if blockers is not None else []


def _not_newer(d: Decision) -> Text | None:
    """Why the newer releases were not chosen."""
    e = d.chosen
    newer = [x for x in d.all_evals if x.release.key > e.release.key]
    if not newer:  # the newer releases may have no build of this backend on this platform at all
        plat = d.eng.platform_for_wheels()
        gone = [r for r in d.eng.data.releases if r.key > e.release.key
                and not any(v.backend == e.variant.backend for v in r.variants_for(plat))]
        if not gone:
            return None
        return msg("rec.newer_no_backend", "Newer releases (torch {torch} and later) publish no {backend} build "
                   "for {platform}.", torch=gone[-1].torch, backend=backend_words(e.variant.backend),
                   platform=platform_words(d.m.platform))
    newest_key = max(x.release.key for x in newer)
    top = [x for x in newer if x.release.key == newest_key]
    parts = _newest_blockers(d, top)
    done = {"cc", "driver"}
    for kind in ("glibc", "macos", "python", "companion"):
        if all(kind in x.kinds for x in newer):
            oldest = min(newer, key=lambda x: x.release.key)
            text = oldest.first_by_kind()[kind]
            if oldest.release.key != newest_key:
                text = from_release_on(text, oldest.release.torch)
            parts.insert(0, text)
            done.add(kind)
    for x in top:
        for kind, text in x.first_by_kind().items():
            if kind not in done:
                done.add(kind)
                parts.append(text)
    if not parts:
        return None
    return msg("rec.not_newest", "Not torch {torch}: {parts}.", torch=top[0].release.latest,
               parts=semicolons(parts[:4]))


def _newest_blockers(d: Decision, top: list[Evaluation]) -> list[Text]:
    """What keeps the newest release's builds out: no such build, the GPUs' capability, the driver."""
    e = d.chosen
    parts: list[Text] = []
    if not e.on_cpu and not any(x.variant.name == e.variant.name for x in top):
        parts.append(msg("rec.newer_no_build", "it has no {build} build", build=build_label(e.variant)))
    cc_bad = [x for x in top if "cc" in x.kinds or (x.unserved and x.variant.backend == "cuda")]
    if cc_bad:
        parts.append(msg("rec.newer_cc", "its {cudas} builds are compiled for compute capability {spans} only, which "
                         "leaves out your {gpus}", cudas=cuda_versions([x.variant for x in cc_bad]),
                         spans=and_list(sorted({arch_span(x.variant) for x in cc_bad})),
                         gpus=and_list(sorted_texts(gpu_words(g) for x in cc_bad for g, _ in x.unserved))))
    drv_bad = [x for x in top if "driver" in x.kinds and x not in cc_bad]
    if drv_bad:
        parts.append(msg("rec.newer_driver", "its {cudas} builds need NVIDIA driver {floors} or newer (yours is "
                         "{driver})", cudas=cuda_versions([x.variant for x in drv_bad]),
                         floors=and_list(sorted({x.floor_text or "?" for x in drv_bad})), driver=d.m.driver_text))
    return parts


def _python_reasons(pc: PythonChoice, e: Evaluation) -> list[Text]:
    rel, v = e.release, e.variant
    lo, hi = v.python_range(rel)
    torch: Text = rel.torch if (lo, hi) == (rel.python_min, rel.python_max) else \
        msg("rec.torch_build", "{torch} ({build})", torch=rel.torch, build=build_label(v))
    if pc.case == "asked":
        return [msg("rec.python_asked", "The new environment uses Python {python}, as you asked.", python=pc.python)]
    if pc.case == "emulated":
        return [msg("rec.python_woa", "On Windows on Arm, install the x64 (AMD64) build of Python {python} from "
                    "python.org; it runs under Windows' x64 emulation and can install this wheel. An arm64 Python "
                    "cannot.", python=pc.python)]
    if pc.case == "supported":
        return [msg("rec.python_supported", "Your Python {python} is supported by torch {torch} (Python {lo}–{hi}).",
                    python=pc.python, torch=torch, lo=lo, hi=hi)]
    if pc.case not in ("too_old", "too_new", "sources"):
        return []
    if pc.found_at:
        where: Text = msg("rec.python_found_at", " (found at {exe})", exe=pc.found_at)
    elif pc.found_at is not None:
        where = msg("rec.python_on_machine", " (already on this machine)")
    else:
        where = msg("rec.python_download", "; it is not on this machine yet: uv can download it, or install it from "
                    "python.org before using pip")
    running = pc.running
    if pc.case == "sources":
        return [msg("rec.python_not_held", "Your sources hold torch {torch} only for Python {held}, not for your "
                    "Python {python}, so the new environment will use Python {env_python}{where}.",
                    torch=e.torch_version, held=", ".join(sorted(e.pythons or (), key=version_tuple)),
                    python=running, env_python=pc.env_python, where=where)]
    if pc.case == "too_old":
        return [msg("rec.python_too_old", "Your Python {python} is too old for torch {torch} (it supports {lo}–{hi}), "
                    "so the new environment will use Python {env_python}{where}.", python=running, torch=torch,
                    lo=lo, hi=hi, env_python=pc.env_python, where=where)]
    return [msg("rec.python_too_new", "Your Python {python} is too new for torch {torch} (it supports {lo}–{hi}), "
                "so the new environment will use Python {env_python}{where}.", python=running, torch=torch,
                lo=lo, hi=hi, env_python=pc.env_python, where=where)]


def _arch_reasons(d: Decision) -> list[Text]:
    """The report's Python, when its own architecture has no wheel here, and the other interpreters left out."""
    m, pc = d.m, d.python
    out: list[Text] = []
    u = m.python_unfit
    if pc.case == "arch" and u is not None and pc.env_python:
        at: Text = msg("rec.python_at_paren", " ({exe})", exe=u.executable) if u.executable else ""
        where: Text = msg("rec.python_found_at", " (found at {exe})", exe=pc.found_at) if pc.found_at else \
            msg("rec.python_on_machine", " (already on this machine)") if pc.found_at is not None else \
            arch_download(u.needs, pc.env_python)
        out.append(msg("rec.python_arch", "Your Python {python}{at} is {why}, so the new environment will use "
                       "Python {env_python}{where}.", python=pc.running or u.minor or "?", at=at,
                       why=unfit_why(u, m, d.eng.data), env_python=pc.env_python, where=where))
    return out + skipped_reasons(m, d.eng.data)


def _pypi_reasons(d: Decision) -> list[Text]:
    """What a plain ``pip install torch`` would give here, when that is not the chosen build."""
    if d.pypi is None:
        return []
    v, pv, pe = d.chosen.variant, d.pypi.variant, d.pypi.evaluation
    if pe is None:
        return [msg("rec.pypi_other_backend", "A plain 'pip install torch' would give you the {pypi} build (the PyPI "
                    "default here), which cannot use your GPU; the {build} build comes from its own index.",
                    pypi=build_label(pv), build=build_label(v))]
    if not pe.ok or pe.unserved:
        why = pe.whys[0] if pe.whys else pe.unserved[0][1]
        return [msg("rec.pypi_would_fail", "A plain 'pip install torch' would give you the {pypi} build (the PyPI "
                    "default here), which would not work: {why}. So the install uses the {variant} index.",
                    pypi=build_label(pv), why=why, variant=v.name)]
    return [msg("rec.pypi_other_build", "A plain 'pip install torch' would give you the {pypi} build; the assistant "
                "installs the {build} build from its own index instead.", pypi=build_label(pv), build=build_label(v))]


def _upgrade_reason(up: DriverUpgrade) -> Text:
    if up.toolkit_driver and up.toolkit_driver != up.driver:
        return msg("rec.driver_upgrade_toolkit", "Updating the NVIDIA driver to {driver} or newer would unlock "
                   "{unlocks} ({toolkit}, the CUDA toolkit's own driver, is the safest choice).", driver=up.driver,
                   unlocks=up.unlocks, toolkit=up.toolkit_driver)
    return msg("rec.driver_upgrade", "Updating the NVIDIA driver to {driver} or newer would unlock {unlocks}.",
               driver=up.driver, unlocks=up.unlocks)


def unserved(d: Decision) -> list[tuple[GpuView, Text]]:
    """The GPUs the chosen build does not use, each with why."""
    m, e = d.m, d.chosen
    out = list(e.unserved)
    for g in m.jetson:
        note = d.eng.data.jetson_note or msg("rec.jetson_no_wheels_short", "the pytorch.org wheels do not run on it")
        out.append((g, msg("rec.jetson_unserved", "{gpu} is a Jetson (Tegra) board: {note}", gpu=g.name, note=note)))
    if e.backend == "cuda":
        for g in m.amd + m.intel:
            if not g.integrated:
                out.append((g, msg("rec.cuda_not_other_vendor", "your {gpu} (a CUDA build does not use non-NVIDIA "
                                   "GPUs)", gpu=g.name)))
    if e.variant.backend != "cpu":
        for g in m.other:
            out.append((g, msg("rec.unknown_vendor_unserved", "your {gpu} ({vendor}: PyTorch has no build for it "
                               "here)", gpu=g.name, vendor=d.eng.data.vendor_name(g.vendor))))
    return out


# ------------------------------------------------------------------ warnings, unknowns, summary


def warnings(d: Decision) -> list[Text]:
    """What to check or fix; repeats dropped."""
    m, e = d.m, d.chosen
    out: list[Text] = list(m.warnings)
    if e.backend == "cuda":
        out.extend(_cuda_warnings(d))
    elif e.backend == "rocm":
        rocm = [
            (e.variant.provider == "amd", msg("rec.therock", "This build comes from AMD's own index, not from "
             "pytorch.org: it is not built or validated by the PyTorch team. Install it with pip: that index answers "
             "403 for the packages it does not host, which pip takes from your default index instead, and uv "
             "stops there.")),
            (e.variant.provider == "amd" and m.family == "windows", msg("rec.amd_windows_driver", "Install AMD's "
             "current Adrenalin driver first; AMD's ROCm packages bring the rest (no HIP SDK is needed).")),
            (m.family == "linux", msg("rec.rocm_linux_access", "ROCm needs the amdgpu kernel driver and access to "
             "/dev/kfd and /dev/dri (add your user to the 'render' and 'video' groups).")),
            (m.wsl, msg("rec.rocm_wsl", "On WSL2, ROCm also needs AMD's WSL driver stack; the official wheels are "
             "built for native Linux.")),
        ]
        out.extend(text for applies, text in rocm if applies)
    elif e.backend == "xpu":
        out.append(msg("rec.xpu_driver", "XPU needs Intel's GPU driver (Linux: the intel-level-zero-gpu / "
                       "compute-runtime packages; Windows: the current Arc driver)."))
    elif e.backend == "mps" and m.macos is None:
        out.append(msg("rec.mps_macos_unknown", "The macOS version is unknown; MPS in torch {torch} needs macOS "
                       "{need} or newer.", torch=e.release.torch, need=e.variant.mps_macos_min))
    if e.variant.windows_min and m.family == "windows" and m.windows is None:
        out.append(msg("rec.windows_unknown", "The Windows version is unknown; the {build} build needs Windows "
                       "{need} or newer (Windows 11).", build=build_label(e.variant), need=e.variant.windows_min))
    if e.release.found_on or e.variant.assumed:
        out.append(msg("rec.assumed_warning", "This build's facts are assumed, not confirmed by the compatibility "
                       "data; the verification after the install checks that it runs. To install only confirmed "
                       "builds, run recommend with --verified-only, or update the data: torch-setup compat refresh."))
    a = d.availed
    if a is not None and a.offer is None:
        out.append(msg("rec.not_on_offer", "None of your sources offers torch {torch} ({build}) or an older build "
                       "that runs here; the installation will fail unless the index can be reached.",
                       torch=d.torch_version, build=_short_build(d)))
    found = unknowns(d)
    if found:
        out.append(msg("rec.unknown_fields", "Unknown (not in the report): {items}.", items=tuple(found)))
    return list(dict.fromkeys(out))


def _cuda_warnings(d: Decision) -> list[Text]:
    m, e = d.m, d.chosen
    out: list[Text] = []
    for g, c in ceilings(d.eng, e.served):
        if g.driver_text and cuda.above_ceiling(g.driver_text, c):
            out.append(msg("rec.driver_above_ceiling", "Your driver {driver} is of a branch newer than R{branch}, the "
                           "last that supports {architecture} GPUs: it does not drive your {gpu}. Install an "
                           "R{branch} driver (580.xx) instead; do not update past it.", driver=g.driver_text,
                           branch=c.branch, architecture=c.architecture, gpu=g.name))
    if m.driver is None:
        out.append(msg("rec.driver_unknown", "The NVIDIA driver version is unknown; this build needs driver {need} or "
                       "newer ({os}). Check with nvidia-smi.", need=e.floor_text,
                       os="Windows" if m.driver_os == "windows" else "Linux"))
    out.extend(cc_missing(g) for g in e.served if g.cc is None)
    other = [g for g in m.amd + m.intel if not g.integrated]
    if other:
        out.append(msg("rec.other_vendor", "{gpus} also present: one PyTorch build serves one vendor; this one serves "
                       "the NVIDIA GPU(s).", gpus=and_list(g.name for g in other)))
    return out


def unknowns(d: Decision) -> list[Text]:
    """What the report does not say (field names), and what was taken from a GPU's name."""
    out: list[Text] = list(d.m.unknowns)
    if d.chosen.backend in ("cuda", "rocm"):
        out.extend(told_words(g) for g in d.chosen.served if g.told is not None)
    return list(dict.fromkeys(out))


def told_words(g: GpuView) -> Text:
    """"compute capability of GTX 1080 Ti (taken from its PCI id 10de:1b06 (GP102): 6.1)"."""
    assert g.told is not None
    t = g.told
    what = (msg("rec.what_cc", "compute capability") if g.vendor == "nvidia" else msg("rec.what_gfx", "gfx target"))
    if t.by == "pci":
        return msg("rec.told_by_pci", "{what} of {gpu} (taken from its PCI id {fact}: {value})", what=what,
                   gpu=g.gpu.name, fact=t.fact, value=t.value)
    if t.by == "chip":
        return msg("rec.told_by_chip", "{what} of {gpu} (taken from its chip code {fact}: {value})", what=what,
                   gpu=g.gpu.name, fact=t.fact, value=t.value)
    return msg("rec.told_by_name", "{what} of {gpu} (taken from its name: {value})", what=what, gpu=g.gpu.name,
               value=t.value)


def summary(d: Decision) -> Text:
    base = _summary(d)
    if d.chosen.release.found_on or d.chosen.variant.assumed:
        return join((base, msg("rec.summary_assumed", " (facts assumed)")))
    return base


def _summary(d: Decision) -> Text:
    v = d.chosen.variant
    if d.chosen.on_cpu:
        return msg("rec.summary_standard", "torch {torch} — {backend}, the standard build ({variant}) run on the "
                   "processor", torch=d.torch_version, backend=backend_words("cpu"), variant=v.name)
    if v.backend == "cpu":  # one word for it ("CPU only, CPU-only build (cpu)" said it three times)
        build: Text = msg("rec.summary_cpu_build", "the CPU-only build ({variant})", variant=v.name)
    else:
        build = msg("rec.summary_build", "{backend}, {build} build ({variant})", backend=backend_words(v.backend),
                    build=build_label(v), variant=v.name)
    if d.python.env_python:
        return msg("rec.summary_python", "torch {torch} — {build}, Python {python}", torch=d.torch_version,
                   build=build, python=d.python.env_python)
    return msg("rec.summary", "torch {torch} — {build}", torch=d.torch_version, build=build)


# ------------------------------------------------------------------ alternatives and options


def why_invalid(x: Evaluation) -> Text:
    """A failed build's first two problems, as a sentence."""
    return sentence(semicolons(x.whys[:2]))


def why_not_chosen(chosen: Evaluation, alt: Evaluation) -> Text:
    """Why a build that works was not the one chosen."""
    v, cv = alt.variant, chosen.variant
    same_backend = v.backend == cv.backend
    if alt.release.key < chosen.release.key:
        base: Text = msg("rec.works_older_torch", "Works, but torch {torch} is older than torch {chosen}",
                         torch=alt.release.latest, chosen=chosen.release.latest)
    elif same_backend and alt.release.key == chosen.release.key and v.backend == "cuda":
        base = msg("rec.works_older_build", "Works, but {build} is older than {chosen}", build=build_label(v),
                   chosen=build_label(cv))
    else:
        base = msg("rec.works", "Works")
    parts: list[Text] = [base]
    if alt.unserved and same_backend:
        parts.append(msg("rec.works_leaves_unused", "; it would leave your {gpus} unused",
                         gpus=and_list(g.name for g, _ in alt.unserved)))
    extra = [g for g in alt.served if g not in chosen.served]
    if extra and same_backend:
        parts.append(msg("rec.works_serves_more", "; it would serve your {gpus}, which the chosen build does not",
                         gpus=and_list(g.name for g in extra)))
    if v.backend == "cpu" and cv.backend != "cpu":
        parts = [msg("rec.works_cpu", "Works everywhere, but runs on the processor only (much slower than your GPU)")]
    if alt.env_vars:
        parts.append(msg("rec.works_needs_vars", "; needs {vars}",
                         vars=", ".join(f"{k}={val}" for k, val in alt.env_vars.items())))
    if v.explicit or v.provider == "amd":
        parts.append(msg("rec.works_not_pytorch_team", "; not built or validated by the PyTorch team"))
    if alt.release.found_on or v.assumed:
        parts.append(msg("rec.works_assumed", "; its facts are assumed, not confirmed"))
    return sentence(join(parts))


def backend_unavailable(backend: str, platform: str | None) -> Text:
    """Why a backend has no build at all on this platform, as a sentence."""
    words = platform_words(platform)
    if backend == "mps":
        why = mps_apple_only()
    elif backend == "rocm":
        why = msg("rec.no_rocm_wheels", "pytorch.org publishes no ROCm wheels for {platform}", platform=words)
    elif backend == "xpu":
        why = msg("rec.no_xpu_wheels", "no XPU wheels for {platform}", platform=words)
    elif backend == "cuda":
        why = msg("rec.no_cuda_wheels", "no CUDA wheels for {platform}", platform=words)
    else:
        why = msg("rec.not_available", "not available here")
    return sentence(why)


def newest_working(x: Evaluation) -> Text:
    return msg("rec.newest_working", "newest working: torch {torch} ({variant})", torch=x.release.latest,
               variant=x.variant.name)


def no_wheels_for(backend: str, platform: str | None) -> Text:
    return msg("rec.no_backend_wheels", "No {backend} wheels for {platform}.", backend=backend_words(backend),
               platform=platform_words(platform))


def no_release_for_python() -> Text:
    return msg("rec.no_torch_for_python", "no torch release supports it")
