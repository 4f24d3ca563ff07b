"""The doctor's rules: each a small function ``(facts, data) -> Finding | None`` (or a list).

:data:`RULES` runs them in order; :data:`FALLBACKS` run after them and also see what was
found (they name a cause only when nothing more specific was). The domain rules are not
copied here: arch coverage and driver floors come from :mod:`app.core.compat.cuda` with the compat
data, ``*_VISIBLE_DEVICES`` from :mod:`app.core.base.visible`, HSA override values from the compat
data (``hardware.toml``).
"""
from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.core.base.actions import Action, ActionKind
from app.core.base.serial import to_jsonable
from app.core.base.text import Msg, Text, join, msg, render
from app.core.base.visible import Visibility, parse_visible
from app.core.compat import cuda
from app.core.compat.data import CompatData
from app.core.detection.envvars import hide_uuids
from app.core.doctor.facts import Facts, inside
from app.core.recommend.words import backend_words
from app.core.remedies import diagnose
from app.core.remedies.catalogue import DRIVER_URL

__all__ = ["FALLBACKS", "RULES", "SEVERITIES", "Finding", "run_rules"]

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    code: str  # cpu-wheel-with-gpu, driver-too-old, arch-missing, cuda-visible-devices, ...
    severity: str  # error | warning | info
    title: Text  # one line: the cause, in words
    explanation: Text  # why that stops the accelerator
    fix: Text  # what to do
    evidence: tuple[str, ...] = ()  # the facts that show it (values, not sentences)
    actions: tuple[Action, ...] = ()  # what fixes it, as values (see app.core.base.actions)

    def to_dict(self) -> dict[str, object]:
        """English texts (the JSON contract) with the finding's code and its actions."""
        return {"code": self.code, "severity": self.severity, "title": render(self.title),
                "explanation": render(self.explanation), "fix": render(self.fix),
                "evidence": to_jsonable(self.evidence), "actions": [a.to_dict() for a in self.actions]}


Data = CompatData | None
Rule = Callable[[Facts, Data], "Finding | list[Finding] | None"]
Fallback = Callable[[Facts, Data, Sequence[Finding]], "Finding | None"]


def _env_name(f: Facts) -> str:
    return f.env_dir or "PATH"


# ----------------------------------------------------------------------------- torch does not load

def probe_failed(f: Facts, data: Data) -> Finding | None:
    err = f.probe_error
    if err is None:
        return None
    evidence = (err.message,)
    if err.code == "torch-missing":
        return Finding("torch-missing", "error",
                       msg("doctor.torch_missing.title", "PyTorch is not installed in this environment"),
                       msg("doctor.torch_missing.why", "The environment's Python cannot find a `torch` package."),
                       msg("doctor.torch_missing.fix", "Install it: `torch-setup install --env {env} --existing`, or "
                           "pick the environment that has PyTorch.", env=_env_name(f)), evidence)
    if err.kind == "crash":
        return Finding("torch-crashes", "error",
                       msg("doctor.torch_crashes.title", "PyTorch crashes the Python process while loading"),
                       msg("doctor.torch_crashes.why", "A native library inside (or loaded by) PyTorch crashed. Usual "
                           "causes: a broken or half-installed wheel, a wheel for another CPU/OS, or a conflicting "
                           "library found first on LD_LIBRARY_PATH."),
                       msg("doctor.torch_crashes.fix", "Reinstall PyTorch into this environment; if it still crashes, "
                           "unset LD_LIBRARY_PATH and try again."), evidence)
    if err.kind == "timeout":
        return Finding("torch-hangs", "error",
                       msg("doctor.torch_hangs.title", "PyTorch hangs while loading or initialising the GPU"),
                       msg("doctor.torch_hangs.why", "The verification did not finish in time."),
                       msg("doctor.torch_hangs.fix", "Check `nvidia-smi` for a hung GPU or a driver problem; reboot if "
                           "the driver is stuck."), evidence)
    return Finding("torch-import-failed", "error",
                   msg("doctor.torch_import_failed.title", "PyTorch is installed but cannot be loaded"),
                   msg("doctor.torch_import_failed.why", "Importing torch raised an error (see the evidence)."),
                   msg("doctor.torch_import_failed.fix", "Reinstall PyTorch into this environment (a wheel for another "
                       "Python version or a partial install are the usual causes)."), evidence)


# ----------------------------------------------------------------------------- the wrong interpreter

def torch_outside_env(f: Facts, data: Data) -> Finding | None:
    if f.where is None:
        return None
    origin = f.where.torch_origin
    wprefix = f.where.prefix or f.prefix
    if not origin or not wprefix or inside(origin, wprefix):
        return None
    via = f.where.via or "sys.path"
    return Finding("torch-outside-env", "error",
                   msg("doctor.torch_outside_env.title",
                       "`import torch` in this environment loads a PyTorch from somewhere else"),
                   msg("doctor.torch_outside_env.why", "When this environment's Python starts normally, `torch` comes "
                       "from {origin}, outside the environment ({prefix}), found through {via}. Whatever is installed "
                       "inside the environment is shadowed.", origin=origin, prefix=wprefix, via=via),
                   msg("doctor.torch_outside_env.fix", "Unset PYTHONPATH (and avoid `pip install --user`), or remove "
                       "that other copy; then run `torch-setup verify` again."),
                   (f"torch from {origin}", f"environment prefix {wprefix}"))


def path_python_differs(f: Facts, data: Data) -> Finding | None:
    if not f.python or not f.path_python:
        return None
    env_bin = os.path.dirname(os.path.abspath(f.python))
    if os.path.realpath(os.path.dirname(os.path.abspath(f.path_python))) == os.path.realpath(env_bin):
        return None
    activate = f"`{env_bin}\\activate.bat`" if os.name == "nt" else f"`source {env_bin}/activate`"
    return Finding("path-python-differs", "warning",
                   msg("doctor.path_python_differs.title",
                       "Typing `python` runs a different interpreter than this environment's"),
                   msg("doctor.path_python_differs.why", "`python` on PATH is {path_python}, not {python}. Scripts "
                       "started with plain `python` will not see this environment's PyTorch.",
                       path_python=f.path_python, python=f.python),
                   msg("doctor.path_python_differs.fix", "Activate the environment first ({activate}) or run "
                       "`{python}` directly.", activate=activate, python=f.python),
                   (f"PATH python: {f.path_python}", f"env python: {f.python}"))


# ----------------------------------------------------------------------------- the wheel against the hardware

def cpu_wheel_with_gpu(f: Facts, data: Data) -> Finding | None:
    if f.verify is None or f.cuda or f.hip or f.backend("mps").built or f.backend("xpu").built:
        return None
    gpus = f.nvidia or f.amd
    if not gpus:
        return None
    names = ", ".join(g.name for g in gpus)
    tag = f.build.local_tag
    index = msg("doctor.index_cuda", "a CUDA (cu12x/cu13x)") if f.nvidia else msg("doctor.index_rocm", "a ROCm")
    return Finding("cpu-wheel-with-gpu", "error",
                   msg("doctor.cpu_wheel_with_gpu.title", "A CPU-only PyTorch{tag} is installed on a machine with an "
                       "{vendor} GPU", tag=f" (+{tag})" if tag else "", vendor="NVIDIA" if f.nvidia else "AMD"),
                   msg("doctor.cpu_wheel_with_gpu.why", "This build has no GPU code at all, so "
                       "torch.cuda.is_available() is False even though the machine has {names}. pip picks a CPU build "
                       "when it installs from PyPI on Windows/macOS, from the CPU index, or from a mirror without GPU "
                       "wheels.", names=names),
                   msg("doctor.cpu_wheel_with_gpu.fix", "Reinstall PyTorch from {index} wheel index that matches your "
                       "driver: run `torch-setup recommend`, then `torch-setup install --env {env} --existing`.",
                       index=index, env=_env_name(f)),
                   (f"torch {f.torch_version}", f"GPU: {names}"))


def _built_for(f: Facts) -> str | None:
    """The accelerator this torch build carries code for (None: a CPU-only build)."""
    if f.cuda:
        return "cuda"
    if f.hip:
        return "rocm"
    return next((b for b in ("mps", "xpu") if f.backend(b).built), None)


def build_not_as_installed(f: Facts, data: Data, found: Sequence[Finding]) -> Finding | None:
    """The env was installed for an accelerator, and the torch in it now has no code for that one
    (unless a rule about the GPU itself already named the wrong build)."""
    want = f.expected
    if not want or f.verify is None or f.probe_error is not None:
        return None
    if any(x.code in ("cpu-wheel-with-gpu", "wrong-vendor-wheel") for x in found):
        return None
    have = _built_for(f)
    if have == want:
        return None
    build = f"CUDA {f.cuda}" if have == "cuda" else f"ROCm {f.hip}" if have == "rocm" else (have or "cpu").upper()
    return Finding("build-not-as-installed", "error",
                   msg("doctor.build_not_as_installed.title", "This environment was installed for {want}, but the "
                       "PyTorch in it is a {have} build", want=backend_words(want),
                       have=build if have else msg("doctor.cpu_only_build", "CPU-only")),
                   msg("doctor.build_not_as_installed.why", "A build without {want} code cannot use that GPU, so the "
                       "accelerator checks fail. Usually something replaced PyTorch after the install (a `pip install "
                       "torch` from PyPI or from a mirror without GPU wheels, or another tool's requirements), or the "
                       "wheels came from a folder or mirror that only has the CPU build.", want=backend_words(want)),
                   msg("doctor.build_not_as_installed.fix", "Install the build for this machine again, from a source "
                       "that has the {want} wheels: `torch-setup install --env {env} --existing` (in the wizard: Back "
                       "to Environment, then Install).", env=_env_name(f), want=backend_words(want)),
                   (f"installed for: {want}", f"torch {f.torch_version} ({build})"))


def wrong_vendor_wheel(f: Facts, data: Data) -> list[Finding]:
    out = []
    if f.cuda and not f.nvidia and f.amd:
        out.append(Finding("wrong-vendor-wheel", "error",
                           msg("doctor.cuda_wheel_amd_gpu.title", "A CUDA (NVIDIA) PyTorch is installed, but the GPU "
                               "is AMD"),
                           msg("doctor.cuda_wheel_amd_gpu.why", "CUDA builds only drive NVIDIA GPUs; AMD GPUs need a "
                               "ROCm build."),
                           msg("doctor.cuda_wheel_amd_gpu.fix", "Install a ROCm build (Linux): `torch-setup recommend` "
                               "shows which."),
                           (f"torch {f.torch_version} (CUDA {f.cuda})", f"GPU: {f.amd[0].name}")))
    if f.hip and f.nvidia and not f.amd:
        out.append(Finding("wrong-vendor-wheel", "error",
                           msg("doctor.rocm_wheel_nvidia_gpu.title", "A ROCm (AMD) PyTorch is installed, but the GPU "
                               "is NVIDIA"),
                           msg("doctor.rocm_wheel_nvidia_gpu.why", "ROCm builds only drive AMD GPUs; NVIDIA GPUs need "
                               "a CUDA build."),
                           msg("doctor.rocm_wheel_nvidia_gpu.fix",
                               "Install a CUDA build: `torch-setup recommend` shows which."),
                           (f"torch {f.torch_version} (ROCm {f.hip})", f"GPU: {f.nvidia[0].name}")))
    return out


def _major(text: str | None) -> int:
    t = cuda.driver_tuple(text)
    return t[0] if t else 0


def driver_too_old(f: Facts, data: Data) -> Finding | None:
    cuda_v = f.cuda
    if not cuda_v:
        return None
    found = cuda.driver_floor(cuda_v, f.os_family, data) if data is not None else None
    floor, source = (found[0], found[1].source) if found else (None, "")
    drivers = sorted({g.driver_version for g in f.nvidia if g.driver_version})
    evidence_torch = f"torch {f.torch_version} (CUDA {cuda_v})"
    if floor and any(cuda.driver_meets(d, floor) is False for d in drivers):
        d = drivers[0]
        os_name = "Windows" if f.os_family == "windows" else "Linux"
        return Finding("driver-too-old", "error",
                       msg("doctor.driver_too_old.title", "The NVIDIA driver {driver} is too old for this PyTorch's "
                           "CUDA {cuda}", driver=d, cuda=cuda_v),
                       msg("doctor.driver_too_old.why", "A CUDA {cuda} wheel needs driver {floor} or newer ({os}). The "
                           "wheel brings its own CUDA runtime; only the driver must be new enough.", cuda=cuda_v,
                           floor=floor, os=os_name),
                       msg("doctor.driver_too_old.fix", "Update the NVIDIA driver to {floor} or newer, or install a "
                           "PyTorch built for an older CUDA that this driver supports (`torch-setup recommend` picks "
                           "one).", floor=floor),
                       (f"driver {d}", evidence_torch, f"floor source: {source}"))
    top = f.report.nvidia_cuda_version if f.report is not None else None
    if top and f.nvidia and _major(top) < _major(cuda_v):
        return _driver_cuda_too_old(cuda_v, top, floor, evidence_torch)
    m = re.search(r"too old \(found version (\d+)\)", f.warnings("cuda"))
    if m:
        said = int(m.group(1))
        return Finding("driver-too-old", "error",
                       msg("doctor.driver_too_old_said.title", "The NVIDIA driver is too old for this PyTorch's CUDA "
                           "{cuda}", cuda=cuda_v),
                       msg("doctor.driver_too_old_said.why", "PyTorch reports the driver supports only CUDA {version}.",
                           version=f"{said // 1000}.{said % 1000 // 10}"),
                       msg("doctor.driver_too_old_said.fix", "Update the NVIDIA driver to {floor} or newer, or install "
                           "a PyTorch built for an older CUDA (`torch-setup recommend`).",
                           floor=floor or msg("doctor.a_newer_one", "a newer one")),
                       (f.warnings("cuda")[:300],))
    return None


def _driver_cuda_too_old(cuda_v: str, top: str, floor: str | None, evidence_torch: str) -> Finding:
    major = top.split(".")[0]
    if floor:
        why = msg("doctor.driver_cuda_too_old.why_floor", "nvidia-smi's 'CUDA Version' is the newest CUDA the driver "
                  "can run. A wheel built for CUDA {cuda} needs a driver of the same CUDA major version or newer "
                  "({floor}+).", cuda=cuda_v, floor=floor)
        fix = msg("doctor.driver_cuda_too_old.fix_floor", "Update the NVIDIA driver to {floor} or newer, or install a "
                  "PyTorch built for CUDA {major}.x (`torch-setup recommend` picks one).", floor=floor, major=major)
    else:
        why = msg("doctor.driver_cuda_too_old.why", "nvidia-smi's 'CUDA Version' is the newest CUDA the driver can "
                  "run. A wheel built for CUDA {cuda} needs a driver of the same CUDA major version or newer.",
                  cuda=cuda_v)
        fix = msg("doctor.driver_cuda_too_old.fix", "Update the NVIDIA driver, or install a PyTorch built for CUDA "
                  "{major}.x (`torch-setup recommend` picks one).", major=major)
    return Finding("driver-too-old", "error",
                   msg("doctor.driver_cuda_too_old.title", "The NVIDIA driver supports CUDA up to {top}, older than "
                       "this PyTorch's CUDA {cuda}", top=top, cuda=cuda_v),
                   why, fix, (f"driver supports CUDA {top}", evidence_torch))


def arch_missing(f: Facts, data: Data) -> list[Finding]:
    """A GPU whose compute capability the wheel has no kernels for (cuda.arch_covers)."""
    arch_list = f.build.arch_list
    if not f.cuda or not arch_list:
        return []
    ccs: list[tuple[str, str]] = []
    if f.verify is not None:
        ccs += [(d.name, d.compute_capability) for d in f.verify.devices if d.compute_capability]
    ccs += [(g.name, g.compute_capability) for g in f.nvidia if g.compute_capability]
    tegra = data.tegra if data is not None else frozenset()
    archs = " ".join(arch_list)
    out = []
    for name, cc in dict.fromkeys(ccs):
        if cuda.arch_covers(cc, arch_list, tegra=tegra) is not False:
            continue
        out.append(Finding("arch-missing", "error",
                           msg("doctor.arch_missing.title", "{name} (compute capability {cc}) is not supported by this "
                               "PyTorch build", name=name, cc=cc),
                           msg("doctor.arch_missing.why", "The wheel contains GPU code only for {archs}. Work on this "
                               "GPU fails with 'no kernel image is available for execution on the device'. Newer CUDA "
                               "variants drop old GPUs (e.g. cu128+ dropped Maxwell/Pascal) and old releases lack new "
                               "ones (Blackwell needs cu128+).", archs=archs),
                           _arch_fix(name, cc, f, data), (f"GPU CC {cc}", f"arch list: {archs}")))
    return out


def _arch_fix(name: str, cc: str, f: Facts, data: Data) -> Text:
    fix = msg("doctor.arch_missing.fix", "Install a PyTorch release/CUDA variant whose architecture list includes "
              "sm_{sm}: `torch-setup recommend` checks this.", sm=cc.replace(".", ""))
    last = _last_release_fix(name, cc, f, data)
    return join([fix, " ", last]) if last is not None else fix


def _wheel_platform(f: Facts) -> str:
    fam = f.os_family or "linux"
    arch = (f.report.arch if f.report is not None else None) or "x86_64"
    if fam == "windows":
        return "windows-x86_64"
    return "linux-aarch64" if arch in ("aarch64", "arm64") else "linux-x86_64"


def _last_release_fix(name: str, cc: str, f: Facts, data: Data) -> Text | None:
    """"torch 2.14.1 (cu126) is the last release built for your GTX 1080 Ti", when newer releases drop it."""
    if data is None:
        return None
    found = cuda.last_release(cc, _wheel_platform(f), data)
    if found is None or found[0].key == data.newest.key:
        return None
    rel, v = found
    return msg("doctor.last_release", "torch {torch} ({variant}) is the last PyTorch release built for your {name}: "
               "install it with `torch-setup install --torch {torch} --variant {variant}`.", torch=rel.latest,
               variant=v.name, name=name)


def driver_above_ceiling(f: Facts, data: Data) -> list[Finding]:
    """An old NVIDIA GPU under a driver of a branch that no longer supports it (R590+ on Pascal)."""
    if data is None:
        return []
    out = []
    for g in f.nvidia:
        c = cuda.driver_ceiling(g.compute_capability, data) if g.compute_capability else None
        if c is None or not g.driver_version or not cuda.above_ceiling(g.driver_version, c):
            continue
        fixes: list[Text] = [msg("doctor.driver_above_ceiling.fix", "Install an R{branch} driver (580.xx, NVIDIA's "
                                 "legacy branch for this GPU) and do not update past it.", branch=c.branch)]
        last = _last_release_fix(g.name, g.compute_capability or "", f, data)
        if last is not None:
            fixes.append(last)
        out.append(Finding("driver-above-ceiling", "error",
                           msg("doctor.driver_above_ceiling.title", "The NVIDIA driver {driver} does not support your "
                               "{name} ({architecture})", driver=g.driver_version, name=g.name,
                               architecture=c.architecture),
                           msg("doctor.driver_above_ceiling.why", "R{branch} is the last driver branch for "
                               "{architecture} GPUs; drivers of branch {beyond} and newer ignore them, so PyTorch sees "
                               "no GPU.", branch=c.branch, architecture=c.architecture, beyond=c.beyond),
                           join(fixes, " "), (f"driver {g.driver_version}", f"GPU CC {g.compute_capability}",
                                              f"ceiling source: {c.source}")))
    return out


def hsa_override(gfx: str, data: Data) -> str | None:
    """The HSA_OVERRIDE_GFX_VERSION value used for a card of this gfx family (compat data)."""
    if data is None:
        return None
    return next((row.value for row in data.hsa_overrides if gfx in row.gfx), None)


def rocm_gfx_unsupported(f: Facts, data: Data) -> list[Finding]:
    if not f.hip:
        return []
    targets: list[tuple[str, str]] = []
    if f.verify is not None:
        targets += [(d.name, d.gfx_target) for d in f.verify.devices if d.gfx_target]
    targets += [(g.name, g.gfx_target) for g in f.amd if g.gfx_target]
    listed = {a.split(":")[0] for a in f.build.arch_list}
    shown = " ".join(sorted(listed))
    out = []
    for name, gfx in dict.fromkeys(targets):
        if not listed or gfx in listed:
            continue
        override = hsa_override(gfx, data)
        fix = (msg("doctor.rocm_gfx_unsupported.fix_override", "Officially unsupported consumer cards may work by "
                   "pretending to be a supported target: set HSA_OVERRIDE_GFX_VERSION={override} before starting "
                   "Python. This is not supported by AMD; results can be wrong or crash.", override=override)
               if override else
               msg("doctor.rocm_gfx_unsupported.fix", "Use a ROCm release that supports this GPU (AMD's compatibility "
                   "matrix), or the CPU build."))
        out.append(Finding("rocm-gfx-unsupported", "error",
                           msg("doctor.rocm_gfx_unsupported.title", "{name} ({gfx}) is not a target of this ROCm "
                               "PyTorch build", name=name, gfx=gfx),
                           msg("doctor.rocm_gfx_unsupported.why", "The wheel has kernels for {targets} only.",
                               targets=shown),
                           fix, (f"gfx target {gfx}", f"arch list: {shown}")))
    return out


# ----------------------------------------------------------------------------- environment variables

def _hidden_what(var: str, value: str, count: int | None) -> tuple[str, Msg] | None:
    """(severity, what) when ``var=value`` hides devices (app.core.base.visible's reading); None when harmless."""
    vis = parse_visible(value, count)
    shown = repr(hide_uuids(value))
    if vis.state is Visibility.EMPTY:
        return "error", msg("doctor.visible_empty", "{var} is set to an empty string, which hides every GPU from "
                            "PyTorch", var=var)
    if vis.state is Visibility.DISABLED:
        return "error", msg("doctor.visible_disabled", "{var}={value} hides every GPU from PyTorch", var=var,
                            value=shown)
    if vis.state is Visibility.NONE_VALID:
        n: Text = ""
        if count == 1:
            n = msg("doctor.visible_count_one", " (this machine has {n} GPU, numbered from 0)", n=count)
        elif count is not None:
            n = msg("doctor.visible_count", " (this machine has {n} GPUs, numbered from 0)", n=count)
        return "error", msg("doctor.visible_none_valid", "{var}={value} names no GPU that exists{count}, so PyTorch "
                            "sees none", var=var, value=shown, count=n)
    if vis.state is Visibility.PARTIAL:
        used = vis.count or 0
        bad = hide_uuids(vis.invalid or "")
        if used == 1:
            return "warning", msg("doctor.visible_partial_one", "{var}={value}: only the first {n} entry are used; "
                                  "'{bad}' is not a valid device and hides the rest", var=var, value=shown, n=used,
                                  bad=bad)
        return "warning", msg("doctor.visible_partial", "{var}={value}: only the first {n} entries are used; '{bad}' "
                              "is not a valid device and hides the rest", var=var, value=shown, n=used, bad=bad)
    return None


def visible_devices(f: Facts, data: Data) -> list[Finding]:
    nvidia, amd = f.nvidia, f.amd
    cuda_count = len(nvidia) if nvidia else (len(amd) if f.hip and amd else None)
    amd_count = len(amd) if amd else None
    out = []
    for var, count in (("CUDA_VISIBLE_DEVICES", cuda_count), ("HIP_VISIBLE_DEVICES", amd_count),
                       ("ROCR_VISIBLE_DEVICES", amd_count)):
        if var not in f.env:
            continue
        hidden = _hidden_what(var, f.env[var], count)
        if hidden is None:
            continue
        severity, what = hidden
        if severity == "error" and not (nvidia or amd or f.cuda or f.hip):
            severity = "warning"  # nothing to hide on this machine yet, but it will bite later
        out.append(Finding("cuda-visible-devices" if var == "CUDA_VISIBLE_DEVICES" else "visible-devices-hidden",
                           severity, what,
                           msg("doctor.visible.why", "CUDA and ROCm programs only see the GPUs that {var} lists. It is "
                               "often left behind by a job scheduler, a shell profile or a notebook cell.", var=var),
                           msg("doctor.visible.fix", "Unset it (`unset {var}` / `set {var}=` on Windows / remove it "
                               "from your profile) or list valid device numbers (0..{last}).", var=var,
                               last=(count or 1) - 1),
                           (hide_uuids(f"{var}={f.env[var]!r}"),)))
    return out


def ld_library_path_shadowing(f: Facts, data: Data) -> Finding | None:
    cudnn_warn = f.warnings("cudnn")
    lib_dirs = dict(f.lib_dirs)
    if not lib_dirs and "LD_LIBRARY_PATH" in cudnn_warn:
        lib_dirs = {"(reported by PyTorch)": (cudnn_warn[:300],)}
    if not lib_dirs:
        return None
    loaded = f.verify.loaded_libraries if f.verify is not None else {}
    used = [f"{k} loaded from {v}" for k, v in loaded.items()
            if any(v.startswith(d.rstrip("/") + "/") for d in lib_dirs)]
    gpu_wheel = bool(f.cuda or f.hip)
    why: Text = msg("doctor.ld_library_path.why", "The dynamic loader searches LD_LIBRARY_PATH before the wheel's own "
                    "library folders, so PyTorch can load a different (older or newer) libcudart / cuBLAS / cuDNN / "
                    "NCCL than it was built with: CUDA reports no GPU, symbols are missing, or it crashes.")
    if not gpu_wheel:
        why = join([why, msg("doctor.ld_library_path.why_cpu", " With this CPU-only build it is harmless, but it will "
                             "bite once a CUDA build is installed.")])
    return Finding("ld-library-path-shadowing", "error" if gpu_wheel or used else "warning",
                   msg("doctor.ld_library_path.title", "LD_LIBRARY_PATH puts other CUDA/ROCm libraries in front of "
                       "PyTorch's own"),
                   why,
                   msg("doctor.ld_library_path.fix", "Remove those folders from LD_LIBRARY_PATH (check ~/.bashrc, "
                       "module loads, conda activation scripts) when running PyTorch; pip wheels do not need a system "
                       "CUDA toolkit."),
                   tuple(f"{d}: {', '.join(libs[:6])}" for d, libs in lib_dirs.items()) + tuple(used))


# ----------------------------------------------------------------------------- macOS

def _version(text: str | None) -> tuple[int, ...] | None:
    parts = re.findall(r"\d+", text or "")
    return tuple(int(p) for p in parts) if parts else None


def mac_gpu(f: Facts, data: Data) -> Finding | None:
    """Rosetta Python on Apple silicon, or an MPS build the Mac cannot use."""
    v = f.verify
    if v is None or not (v.interpreter.system == "Darwin" or f.os_family == "macos"):
        return None
    machine = v.interpreter.machine or ""
    if machine == "x86_64" and f.report is not None and f.report.arch in ("arm64", "aarch64"):
        return Finding("rosetta-python", "error",
                       msg("doctor.rosetta_python.title", "This Python runs under Rosetta (x86_64) on an Apple silicon "
                           "Mac"),
                       msg("doctor.rosetta_python.why", "An x86_64 Python gets x86_64 PyTorch wheels, which cannot use "
                           "the Apple GPU (MPS) and stopped at torch 2.2.2."),
                       msg("doctor.rosetta_python.fix", "Create the environment with an arm64 Python (e.g. from "
                           "python.org or `uv python install`), then reinstall PyTorch."),
                       (f"python machine {machine}", f"Mac arch {f.report.arch}"))
    mps = f.backend("mps")
    if not mps.built or mps.available:
        return None
    mac_ver = v.interpreter.mac_ver or (f.report.os.version if f.report is not None and f.os_family == "macos"
                                        else None)
    have = _version(mac_ver)
    evidence = (f"macOS {mac_ver}", f"machine {machine}")
    if have is not None and have < (12, 3):
        return Finding("mps-unavailable", "error",
                       msg("doctor.mps_old_macos.title", "This PyTorch supports MPS, but the Mac cannot use it: macOS "
                           "{version} is older than 12.3", version=mac_ver),
                       msg("doctor.mps.why", "MPS (the Apple GPU backend) needs macOS 12.3 or newer and an Apple "
                           "silicon or AMD GPU."),
                       msg("doctor.mps_old_macos.fix", "Update macOS to 12.3 or newer (14+ recommended)."), evidence)
    return Finding("mps-unavailable", "error",
                   msg("doctor.mps_unusable.title", "This PyTorch supports MPS, but the Mac cannot use it"),
                   join([msg("doctor.mps.why", "MPS (the Apple GPU backend) needs macOS 12.3 or newer and an Apple "
                             "silicon or AMD GPU."),
                         msg("doctor.mps_unusable.why", " The macOS version looks new enough, so the GPU itself is not "
                             "usable (a virtual machine, or a Mac without a Metal GPU).")]),
                   msg("doctor.mps_unusable.fix", "Run on a Mac with Apple silicon outside a virtual machine; "
                       "otherwise use the CPU."), evidence)


# ----------------------------------------------------------------------------- fallbacks

def cuda_wheel_without_gpu(f: Facts, data: Data, found: Sequence[Finding]) -> Finding | None:
    """A CUDA build on a machine where detection found no GPU at all."""
    if not f.cuda or f.cuda_available or f.report is None or f.nvidia or f.amd:
        return None
    if any(x.severity == "error" for x in found):
        return None
    said = f.warnings("cuda")
    why: Text = msg("doctor.cuda_wheel_without_gpu.why", "Without an NVIDIA GPU (or with its driver not installed) a "
                    "CUDA build can only use the CPU, and it is several GB larger than the CPU build.")
    if said:
        why = join([why, msg("doctor.torch_said_more", " PyTorch said: {message}", message=said[:300])])
    return Finding("cuda-wheel-without-gpu", "warning",
                   msg("doctor.cuda_wheel_without_gpu.title", "This PyTorch is built for CUDA {cuda}, but no NVIDIA "
                       "GPU was found on this machine", cuda=f.cuda),
                   why,
                   msg("doctor.cuda_wheel_without_gpu.fix", "If the machine has an NVIDIA GPU, install its driver and "
                       "check `nvidia-smi`; otherwise install the CPU build (`torch-setup recommend` shows the "
                       "command)."),
                   (f"torch {f.torch_version} (CUDA {f.cuda})", "no NVIDIA GPU in the system report"))


def cuda_init_failed(f: Facts, data: Data, found: Sequence[Finding]) -> Finding | None:
    """CUDA is built and not available, and nothing more specific was found."""
    said = f.warnings("cuda")
    if not f.cuda or f.cuda_available or f.verify is None or not (f.nvidia or said):
        return None
    if any(x.severity == "error" or x.code == "cuda-wheel-without-gpu" for x in found):
        return None
    no_driver = bool(f.nvidia) and not any(g.driver_version for g in f.nvidia)
    title = (msg("doctor.cuda_init_failed.title_no_driver", "PyTorch is built for CUDA but cannot initialise the GPU "
                 "(no NVIDIA driver was found)") if no_driver else
             msg("doctor.cuda_init_failed.title", "PyTorch is built for CUDA but cannot initialise the GPU"))
    why = (msg("doctor.torch_said", "PyTorch said: {message}", message=said[:400]) if said else
           msg("doctor.cuda_init_failed.why", "torch.cuda.is_available() is False without a reason from PyTorch."))
    return Finding("cuda-init-failed", "error", title, why,
                   msg("doctor.cuda_init_failed.fix", "Check that `nvidia-smi` works (install or reload the NVIDIA "
                       "driver, reboot after a driver update); in a container, start it with GPU access (--gpus "
                       "all)."),
                   (said[:300],) if said else ())


# ----------------------------------------------------------------------------- the torch guard

def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if stamp else "?"


def torch_guard_bypassed(f: Facts, data: Data) -> Finding | None:
    """The torch build verified in this env (the guard's pins, else the last passed check) was replaced."""
    g = f.guard
    if g is None or not g.changed:
        return None
    what = ", ".join(f"{n} {v} -> {now or 'removed'}" for n, v, now in g.changed)
    who, when, env = g.torch_installer or "an installer", _when(g.torch_installed_at), g.env
    evidence = (*(f"verified: {n} {v}" for n, v in g.verified.items()),
                *(f"now: {n} {v}" for n, v in g.installed.items()), f"torch written by {who} at {when}")
    if not g.guard_recorded:
        return Finding("torch-changed-since-verified", "warning",
                       msg("doctor.torch_changed.title", "PyTorch changed after it was verified: {what}", what=what),
                       msg("doctor.torch_changed.why", "It was replaced by {installer} on {when}; the build now "
                           "installed has not been verified in this environment.", installer=who, when=when),
                       msg("doctor.torch_changed.fix", "Check it: `torch-setup envs check {env}`; to go back to the "
                           "right build for this machine: `torch-setup envs repair {env}`.", env=env), evidence)
    why = (msg("doctor.torch_guard_bypassed.why", "The guard pins the verified build for pip (this environment's "
               "pip.conf) and for `uv pip` while the environment is active. This change was written by {installer} "
               "on {when}, through a way the guard does not cover: for example `uv pip install --python ...` "
               "without activating the environment, pip with --isolated, or PIP_CONSTRAINT set.",
               installer=who, when=when) if g.guarded else
           msg("doctor.torch_guard_removed.why", "The guard's files are gone from this environment (pip.conf or the "
               "constraints file), and {installer} replaced the build on {when}.", installer=who, when=when))
    return Finding("torch-guard-bypassed", "warning",
                   msg("doctor.torch_guard_bypassed.title", "The verified PyTorch was replaced despite the guard: "
                       "{what}", what=what), why,
                   msg("doctor.torch_guard_bypassed.fix", "To go back to the verified build: `torch-setup envs repair "
                       "{env}`. To keep the new one: `torch-setup envs check {env}`, then `torch-setup envs guard "
                       "{env}`.", env=env), evidence)


# ----------------------------------------------------------------------------- the table

RULES: tuple[Rule, ...] = (
    probe_failed,
    torch_outside_env,
    path_python_differs,
    cpu_wheel_with_gpu,
    wrong_vendor_wheel,
    driver_too_old,
    driver_above_ceiling,
    arch_missing,
    rocm_gfx_unsupported,
    visible_devices,
    ld_library_path_shadowing,
    mac_gpu,
    torch_guard_bypassed,
)
FALLBACKS: tuple[Fallback, ...] = (build_not_as_installed, cuda_wheel_without_gpu, cuda_init_failed)


def run_rules(facts: Facts, data: Data) -> list[Finding]:
    """Every rule in order, then the fallbacks; errors first (the cause), then warnings."""
    out: list[Finding] = []
    for rule in RULES:
        got = rule(facts, data)
        if isinstance(got, Finding):
            out.append(got)
        elif got:
            out.extend(got)
    for fallback in FALLBACKS:
        one = fallback(facts, data, out)
        if one is not None:
            out.append(one)
    out = [dataclasses.replace(x, actions=finding_actions(x, facts, data)) if not x.actions else x for x in out]
    return sorted(out, key=lambda x: SEVERITIES.index(x.severity) if x.severity in SEVERITIES else 9)


_GPU_BUILD = ("cpu-wheel-with-gpu", "build-not-as-installed", "wrong-vendor-wheel", "cuda-wheel-without-gpu",
              "arch-missing")
_VARIABLE = {"cuda-visible-devices": "CUDA_VISIBLE_DEVICES", "ld-library-path-shadowing": "LD_LIBRARY_PATH"}


def finding_actions(x: Finding, f: Facts, data: Data) -> tuple[Action, ...]:
    """The actions that fix a finding, where one is natural: the build for this machine's GPU
    (the engine checks the driver and the compute capability), a newer driver, clearing the
    variable that hides the GPU, the Visual C++ runtime for a DLL that does not load."""
    if x.code in _GPU_BUILD:
        return (Action(ActionKind.SET_VARIANT),)
    if x.code == "driver-too-old":
        found = cuda.driver_floor(f.cuda, f.os_family, data) if (f.cuda and data is not None) else None
        return (Action(ActionKind.UPDATE_DRIVER, found[0] if found else "", url=DRIVER_URL),
                Action(ActionKind.SET_VARIANT))
    var = _VARIABLE.get(x.code)
    if var is None and x.code == "visible-devices-hidden":
        var = next((v for v in ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES") if v in f.env), None)
    if var is not None and var in f.env:
        return (Action(ActionKind.UNSET_ENV, var, path=f.env[var]), Action(ActionKind.RETRY))
    if x.code in ("torch-import-failed", "torch-crashes"):
        found_remedies = diagnose(list(x.evidence))
        return found_remedies[0].actions if found_remedies else ()
    return ()
