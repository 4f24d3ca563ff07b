"""``diagnose``: why doesn't PyTorch use the accelerator in this environment?

Facts come from three places: the verify probe run inside the env (torch build, backends,
what torch said while initialising CUDA, where its libraries were loaded from), the
SystemReport (which GPUs and drivers the machine has; ``--from-report`` when it describes
another machine) and the environment variables. :func:`analyze` is a pure function of
those facts, so recorded probe results and ``collect_env`` outputs can be fed to it in
tests; :func:`diagnose` gathers them on this machine.

Each :class:`Finding` names the cause in words and the fix.
"""
from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from app.core import runner
from app.core.errors import BadInput
from app.core.i18n import tr
from app.core.serial import to_jsonable

# Fallback only: the floors normally come from the shared compat data
# (resources/compat/drivers.toml via app.core.compat), which carries the same values.
# Minimum NVIDIA driver per CUDA major version (minor-version compatibility: any 12.x runtime
# runs on a driver >= the 12.x floor). Source: NVIDIA CUDA Toolkit release notes, table
# "CUDA Toolkit and Minimum Required Driver Version for CUDA Minor Version Compatibility"
# (docs.nvidia.com/cuda/cuda-toolkit-release-notes); CUDA 13.x: driver 580 or newer.
DRIVER_FLOORS = {
    # cuda major: (linux, windows)
    13: ("580", "580"),
    12: ("525.60.13", "528.33"),
    11: ("450.80.02", "452.39"),
}
DRIVER_FLOORS_SOURCE = ("NVIDIA CUDA Toolkit release notes, 'Minimum Required Driver Version for CUDA "
                        "Minor Version Compatibility' table")


def _compat():
    try:
        from app.core.compat import load_compat

        return load_compat()
    except Exception:  # the doctor must work even when the compat data cannot be read
        return None


CUDA_LIBS = ("libcudart.so", "libcublas.so", "libcublasLt.so", "libcudnn", "libnccl.so", "libcusparse.so",
             "libcufft.so", "libcurand.so", "libnvrtc.so", "libnvJitLink.so", "libcusolver.so")
ROCM_LIBS = ("libamdhip64.so", "libMIOpen.so", "librccl.so", "librocblas.so", "libhipblas.so")

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    code: str  # cpu-wheel-with-gpu, driver-too-old, arch-missing, cuda-visible-devices, ...
    severity: str  # error | warning | info
    title: str  # one line: the cause, in words
    explanation: str  # why that stops the accelerator
    fix: str  # what to do
    evidence: list[str] = field(default_factory=list)  # the facts that show it


@dataclass(frozen=True)
class Diagnosis:
    python: str
    env_path: str
    findings: list[Finding]
    facts: dict = field(default_factory=dict)  # torch version/build, backends, GPUs seen, env vars
    accelerator_ok: bool | None = None  # torch could use an accelerator (None: unknown)

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def codes(self) -> list[str]:
        return [f.code for f in self.findings]

    def to_dict(self) -> dict:
        d = {k: to_jsonable(getattr(self, k)) for k in self.__dataclass_fields__}
        d["ok"] = self.ok
        return d


# ----------------------------------------------------------------------- helpers

def _ver_tuple(v: str | None) -> tuple[int, ...] | None:
    if not v:
        return None
    parts = re.findall(r"\d+", str(v))
    return tuple(int(p) for p in parts) if parts else None


def driver_floor(cuda: str, os_family: str | None, compat=None) -> tuple[str, str] | None:
    """(minimum driver, source) for a CUDA ``X.Y`` wheel on ``os_family``."""
    t = _ver_tuple(cuda)
    if not t:
        return None
    windows = os_family == "windows"
    if compat is not None:
        row = compat.driver_floors.get(t[0])
        if row is not None:
            return (row.windows if windows else row.linux), row.source
    row = DRIVER_FLOORS.get(t[0])
    if row is None:
        return None
    return (row[1] if windows else row[0]), DRIVER_FLOORS_SOURCE


def scan_library_path(value: str | None, exclude_under: list[str] = ()) -> dict[str, list[str]]:
    """Directories on a LD_LIBRARY_PATH value holding CUDA / ROCm runtime libraries."""
    out: dict[str, list[str]] = {}
    if not value:
        return out
    excl = [os.path.realpath(e) for e in exclude_under if e]
    for d in value.split(os.pathsep):
        if not d or not os.path.isdir(d):
            continue
        real = os.path.realpath(d)
        if any(real == e or real.startswith(e + os.sep) for e in excl):
            continue
        hits = []
        for name in CUDA_LIBS + ROCM_LIBS:
            hits += [os.path.basename(p) for p in glob.glob(os.path.join(d, name + "*"))]
        if hits:
            out[d] = sorted(set(hits))
    return out


def _visible_devices(var: str, value: str, gpu_count: int | None) -> tuple[str, str] | None:
    """(severity, what) when ``var=value`` hides devices; None when it is harmless."""
    v = value.strip()
    if v == "":
        return "error", tr("{var} is set to an empty string, which hides every GPU from PyTorch", var=var)
    tokens = [t.strip() for t in v.split(",")]
    if tokens[0] in ("-1", "none", "NoDevFiles"):
        return "error", tr("{var}={value} hides every GPU from PyTorch", var=var, value=repr(_hide_uuids(value)))
    visible = 0
    for t in tokens:
        if re.fullmatch(r"\d+", t):
            if gpu_count is not None and int(t) >= gpu_count:
                break
        elif not re.fullmatch(r"(GPU|MIG)-(<uuid>|[0-9a-fA-F-]+).*", t):  # reports hide UUIDs as GPU-<uuid>
            break
        visible += 1
    if visible == 0:
        n = ((tr(" (this machine has {n} GPU, numbered from 0)", n=gpu_count) if gpu_count == 1 else
              tr(" (this machine has {n} GPUs, numbered from 0)", n=gpu_count)) if gpu_count is not None else "")
        return "error", tr("{var}={value} names no GPU that exists{count}, so PyTorch sees none", var=var,
                           value=repr(_hide_uuids(value)), count=n)
    if visible < len(tokens):
        return "warning", (tr("{var}={value}: only the first {n} entry are used; '{bad}' is not a valid device and "
                              "hides the rest", var=var, value=repr(_hide_uuids(value)), n=visible, bad=tokens[visible])
                           if visible == 1 else
                           tr("{var}={value}: only the first {n} entries are used; '{bad}' is not a valid device and "
                              "hides the rest", var=var, value=repr(_hide_uuids(value)), n=visible, bad=tokens[visible]))
    return None


def _hide_uuids(text: str) -> str:
    try:
        from app.core.detection.envvars import hide_uuids
    except ImportError:  # pragma: no cover
        return text
    return hide_uuids(text)


def _inside(path: str | None, prefix: str | None) -> bool:
    if not path or not prefix:
        return False
    p, q = os.path.realpath(path), os.path.realpath(prefix)
    return p == q or p.startswith(q.rstrip(os.sep) + os.sep)


# ----------------------------------------------------------------------- analysis

def analyze(*, verify=None, report=None, env: dict | None = None, probe_error: dict | None = None,
            python: str | None = None, env_dir: str | None = None, where: dict | None = None,
            path_python: str | None = None, lib_dirs: dict | None = None) -> list[Finding]:
    """The findings for these facts (pure; no I/O).

    verify: a VerifyReport (facts-only is enough); report: SystemReport; env: environment
    variables the env's programs see; probe_error: {kind, code, message} when the probe gave
    no report; where: {torch_origin, prefix} from a non-isolated interpreter start;
    path_python: what ``python`` on PATH is; lib_dirs: scan_library_path() result.
    """
    env = env or {}
    out: list[Finding] = []
    gpus = list(report.gpus) if report is not None else []
    nvidia = [g for g in gpus if g.vendor == "nvidia"]
    amd = [g for g in gpus if g.vendor == "amd" and not g.integrated] or [g for g in gpus if g.vendor == "amd"]
    apple = [g for g in gpus if g.vendor == "apple"]
    os_family = report.os.family if report is not None else None
    build = verify.build if verify is not None else {}
    backends = verify.backends if verify is not None else {}
    cuda_v, hip_v = build.get("cuda"), build.get("hip")
    tag = build.get("local_tag")
    tv = verify.torch_version if verify is not None else None
    prefix = (verify.interpreter.get("prefix") if verify is not None else None) or env_dir

    # --- torch not there / not loading
    if probe_error:
        code = probe_error.get("code")
        msg = probe_error.get("message", "")
        if code == "torch-missing":
            out.append(Finding("torch-missing", "error", tr("PyTorch is not installed in this environment"),
                               tr("The environment's Python cannot find a `torch` package."),
                               tr("Install it: `torch-setup install --env {env} --existing`, or pick "
                                  "the environment that has PyTorch.", env=env_dir or 'PATH'), [msg]))
        elif probe_error.get("kind") == "crash":
            out.append(Finding("torch-crashes", "error", tr("PyTorch crashes the Python process while loading"),
                               tr("A native library inside (or loaded by) PyTorch crashed. Usual causes: a broken or "
                                  "half-installed wheel, a wheel for another CPU/OS, or a conflicting library found "
                                  "first on LD_LIBRARY_PATH."),
                               tr("Reinstall PyTorch into this environment; if it still crashes, unset LD_LIBRARY_PATH "
                                  "and try again."), [msg]))
        elif probe_error.get("kind") == "timeout":
            out.append(Finding("torch-hangs", "error", tr("PyTorch hangs while loading or initialising the GPU"),
                               tr("The verification did not finish in time."),
                               tr("Check `nvidia-smi` for a hung GPU or a driver problem; reboot if the driver is "
                                  "stuck."), [msg]))
        else:
            out.append(Finding("torch-import-failed", "error", tr("PyTorch is installed but cannot be loaded"),
                               tr("Importing torch raised an error (see the evidence)."),
                               tr("Reinstall PyTorch into this environment (a wheel for another Python version or a "
                                  "partial install are the usual causes)."), [msg]))

    # --- wrong interpreter
    if where:
        origin = where.get("torch_origin")
        wprefix = where.get("prefix") or prefix
        if origin and wprefix and not _inside(origin, wprefix):
            via = where.get("via") or "sys.path"
            out.append(Finding("torch-outside-env", "error",
                               tr("`import torch` in this environment loads a PyTorch from somewhere else"),
                               tr("When this environment's Python starts normally, `torch` comes from {origin}, "
                                  "outside the environment ({prefix}), found through {via}. Whatever is installed "
                                  "inside the environment is shadowed.", origin=origin, prefix=wprefix, via=via),
                               tr("Unset PYTHONPATH (and avoid `pip install --user`), or remove that other copy; then "
                                  "run `torch-setup verify` again."),
                               [f"torch from {origin}", f"environment prefix {wprefix}"]))
    if python and path_python:
        env_bin = os.path.dirname(os.path.abspath(python))
        if os.path.realpath(os.path.dirname(os.path.abspath(path_python))) != os.path.realpath(env_bin):
            out.append(Finding("path-python-differs", "warning",
                               tr("Typing `python` runs a different interpreter than this environment's"),
                               tr("`python` on PATH is {path_python}, not {python}. Scripts started with plain "
                                  "`python` will not see this environment's PyTorch.", path_python=path_python,
                                  python=python),
                               tr("Activate the environment first ({activate}) or run `{python}` directly.",
                                  activate=(f"`{env_bin}\\activate.bat`" if os.name == "nt"
                                            else f"`source {env_bin}/activate`"), python=python),
                               [f"PATH python: {path_python}", f"env python: {python}"]))

    # --- the wheel against the hardware
    cpu_only = verify is not None and not cuda_v and not hip_v and not backends.get("mps", {}).get("built") \
        and not backends.get("xpu", {}).get("built")
    if cpu_only and (nvidia or amd):
        names = ", ".join(g.name for g in (nvidia or amd))
        vendor = "NVIDIA" if nvidia else "AMD"
        index = tr("a CUDA (cu12x/cu13x)") if nvidia else tr("a ROCm")
        out.append(Finding("cpu-wheel-with-gpu", "error",
                           tr("A CPU-only PyTorch{tag} is installed on a machine with an {vendor} GPU",
                              tag=f' (+{tag})' if tag else '', vendor=vendor),
                           tr("This build has no GPU code at all, so torch.cuda.is_available() is False even though "
                              "the machine has {names}. pip picks a CPU build when it installs from PyPI on "
                              "Windows/macOS, from the CPU index, or from a mirror without GPU wheels.", names=names),
                           tr("Reinstall PyTorch from {index} wheel index that matches your driver: run "
                              "`torch-setup recommend`, then `torch-setup install --env {env} --existing`.",
                              index=index, env=env_dir or 'PATH'),
                           [f"torch {tv}", f"GPU: {names}"]))
    if cuda_v and not nvidia and amd:
        out.append(Finding("wrong-vendor-wheel", "error", tr("A CUDA (NVIDIA) PyTorch is installed, but the GPU is AMD"),
                           tr("CUDA builds only drive NVIDIA GPUs; AMD GPUs need a ROCm build."),
                           tr("Install a ROCm build (Linux): `torch-setup recommend` shows which."),
                           [f"torch {tv} (CUDA {cuda_v})", f"GPU: {amd[0].name}"]))
    if hip_v and nvidia and not amd:
        out.append(Finding("wrong-vendor-wheel", "error", tr("A ROCm (AMD) PyTorch is installed, but the GPU is NVIDIA"),
                           tr("ROCm builds only drive AMD GPUs; NVIDIA GPUs need a CUDA build."),
                           tr("Install a CUDA build: `torch-setup recommend` shows which."),
                           [f"torch {tv} (ROCm {hip_v})", f"GPU: {nvidia[0].name}"]))

    cuda_available = bool(backends.get("cuda", {}).get("available"))
    init_warn = " ".join((verify.init_warnings.get("cuda") or []) if verify is not None else [])

    # --- driver too old for the wheel's CUDA
    compat = _compat() if (cuda_v or hip_v) else None
    if cuda_v:
        fl = driver_floor(cuda_v, os_family, compat)
        floor, floor_src = fl if fl else (None, "")
        drivers = sorted({g.driver_version for g in nvidia if g.driver_version})
        m = re.search(r"too old \(found version (\d+)\)", init_warn)
        if floor and drivers and any(_ver_tuple(d) < _ver_tuple(floor) for d in drivers):
            d = drivers[0]
            out.append(Finding("driver-too-old", "error",
                               tr("The NVIDIA driver {driver} is too old for this PyTorch's CUDA {cuda}", driver=d,
                                  cuda=cuda_v),
                               tr("A CUDA {cuda} wheel needs driver {floor} or newer ({os}). "
                                  "The wheel brings its own CUDA runtime; only the driver must be new enough.",
                                  cuda=cuda_v, floor=floor, os='Windows' if os_family == 'windows' else 'Linux'),
                               tr("Update the NVIDIA driver to {floor} or newer, or install a PyTorch built for an "
                                  "older CUDA that this driver supports (`torch-setup recommend` picks one).",
                                  floor=floor),
                               [f"driver {d}", f"torch {tv} (CUDA {cuda_v})", f"floor source: {floor_src}"]))
        elif report is not None and report.nvidia_cuda_version and nvidia and \
                (_ver_tuple(report.nvidia_cuda_version) or (0,))[:1] < (_ver_tuple(cuda_v) or (0,))[:1]:
            top = report.nvidia_cuda_version
            out.append(Finding("driver-too-old", "error",
                               tr("The NVIDIA driver supports CUDA up to {top}, older than this PyTorch's CUDA {cuda}",
                                  top=top, cuda=cuda_v),
                               tr("nvidia-smi's 'CUDA Version' is the newest CUDA the driver can run. A wheel built "
                                  "for CUDA {cuda} needs a driver of the same CUDA major version or newer ({floor}+).",
                                  cuda=cuda_v, floor=floor) if floor else
                               tr("nvidia-smi's 'CUDA Version' is the newest CUDA the driver can run. A wheel built "
                                  "for CUDA {cuda} needs a driver of the same CUDA major version or newer.",
                                  cuda=cuda_v),
                               tr("Update the NVIDIA driver to {floor} or newer, or install a PyTorch built for CUDA "
                                  "{major}.x (`torch-setup recommend` picks one).", floor=floor,
                                  major=top.split('.')[0]) if floor else
                               tr("Update the NVIDIA driver, or install a PyTorch built for CUDA {major}.x "
                                  "(`torch-setup recommend` picks one).", major=top.split('.')[0]),
                               [f"driver supports CUDA {top}", f"torch {tv} (CUDA {cuda_v})"]))
        elif m:
            found = int(m.group(1))
            out.append(Finding("driver-too-old", "error",
                               tr("The NVIDIA driver is too old for this PyTorch's CUDA {cuda}", cuda=cuda_v),
                               tr("PyTorch reports the driver supports only CUDA {version}.",
                                  version=f"{found // 1000}.{found % 1000 // 10}"),
                               tr("Update the NVIDIA driver to {floor} or newer, or install a PyTorch "
                                  "built for an older CUDA (`torch-setup recommend`).",
                                  floor=floor or tr('a newer one')), [init_warn[:300]]))

    # --- compute capability not in the wheel's arch list
    arch_list = build.get("arch_list") or []
    if cuda_v and arch_list:
        ccs = []
        if verify is not None:
            ccs += [(d.name, d.compute_capability) for d in verify.devices if d.compute_capability]
        ccs += [(g.name, g.compute_capability) for g in nvidia if g.compute_capability]
        seen = set()
        for name, cc in ccs:
            if (name, cc) in seen:
                continue
            seen.add((name, cc))
            if not _arch_ok(cc, arch_list):
                out.append(Finding("arch-missing", "error",
                                   tr("{name} (compute capability {cc}) is not supported by this PyTorch build",
                                      name=name, cc=cc),
                                   tr("The wheel contains GPU code only for {archs}. Work on this GPU "
                                      "fails with 'no kernel image is available for execution on the device'. Newer "
                                      "CUDA variants drop old GPUs (e.g. cu128+ dropped Maxwell/Pascal) and old "
                                      "releases lack new ones (Blackwell needs cu128+).", archs=' '.join(arch_list)),
                                   tr("Install a PyTorch release/CUDA variant whose architecture list includes "
                                      "sm_{sm}: `torch-setup recommend` checks this.", sm=cc.replace('.', '')),
                                   [f"GPU CC {cc}", f"arch list: {' '.join(arch_list)}"]))
    # --- ROCm gfx target
    if hip_v:
        targets = []
        if verify is not None:
            targets += [(d.name, d.gfx_target) for d in verify.devices if d.gfx_target]
        targets += [(g.name, g.gfx_target) for g in amd if g.gfx_target]
        listed = {a.split(":")[0] for a in arch_list}
        for name, gfx in dict.fromkeys(targets):
            if listed and gfx not in listed:
                override = _hsa_override(gfx, compat)
                out.append(Finding("rocm-gfx-unsupported", "error",
                                   tr("{name} ({gfx}) is not a target of this ROCm PyTorch build", name=name, gfx=gfx),
                                   tr("The wheel has kernels for {targets} only.", targets=' '.join(sorted(listed))),
                                   (tr("Officially unsupported consumer cards may work by pretending to be a supported "
                                       "target: set HSA_OVERRIDE_GFX_VERSION={override} before starting Python. This "
                                       "is not supported by AMD; results can be wrong or crash.", override=override)
                                    if override else
                                    tr("Use a ROCm release that supports this GPU (AMD's compatibility matrix), or the "
                                       "CPU build.")),
                                   [f"gfx target {gfx}", f"arch list: {' '.join(sorted(listed))}"]))

    # --- environment variables hiding devices
    nv_count = len(nvidia) if nvidia else None
    for var, count in (("CUDA_VISIBLE_DEVICES", nv_count if nvidia else (len(amd) if hip_v and amd else None)),
                       ("HIP_VISIBLE_DEVICES", len(amd) if amd else None),
                       ("ROCR_VISIBLE_DEVICES", len(amd) if amd else None)):
        if var not in env:
            continue
        res = _visible_devices(var, env[var], count)
        if res is None:
            continue
        severity, what = res
        if severity == "error" and not (nvidia or amd or cuda_v or hip_v):
            severity = "warning"  # nothing to hide on this machine yet, but it will bite later
        out.append(Finding("visible-devices-hidden" if var != "CUDA_VISIBLE_DEVICES" else "cuda-visible-devices",
                           severity, what,
                           tr("CUDA and ROCm programs only see the GPUs that {var} lists. It is often left behind "
                              "by a job scheduler, a shell profile or a notebook cell.", var=var),
                           tr("Unset it (`unset {var}` / `set {var}=` on Windows / remove it from your profile) or "
                              "list valid device numbers (0..{last}).", var=var, last=(count or 1) - 1),
                           [_hide_uuids(f"{var}={env[var]!r}")]))

    # --- LD_LIBRARY_PATH shadowing the wheel's libraries
    cudnn_warn = " ".join(verify.init_warnings.get("cudnn") or []) if verify is not None else ""
    if not lib_dirs and "LD_LIBRARY_PATH" in cudnn_warn:
        lib_dirs = {"(reported by PyTorch)": [cudnn_warn[:300]]}
    if lib_dirs:
        loaded = verify.loaded_libraries if verify is not None else {}
        used = [f"{k} loaded from {v}" for k, v in loaded.items()
                if any(v.startswith(d.rstrip("/") + "/") for d in lib_dirs)]
        gpu_wheel = bool(cuda_v or hip_v)
        ev = [f"{d}: {', '.join(libs[:6])}" for d, libs in lib_dirs.items()] + used
        out.append(Finding("ld-library-path-shadowing", "error" if gpu_wheel or used else "warning",
                           tr("LD_LIBRARY_PATH puts other CUDA/ROCm libraries in front of PyTorch's own"),
                           tr("The dynamic loader searches LD_LIBRARY_PATH before the wheel's own library folders, so "
                              "PyTorch can load a different (older or newer) libcudart / cuBLAS / cuDNN / NCCL than it "
                              "was built with: CUDA reports no GPU, symbols are missing, or it crashes.")
                           + ("" if gpu_wheel else tr(" With this CPU-only build it is harmless, but it will bite "
                                                      "once a CUDA build is installed.")),
                           tr("Remove those folders from LD_LIBRARY_PATH (check ~/.bashrc, module loads, conda "
                              "activation scripts) when running PyTorch; pip wheels do not need a system CUDA "
                              "toolkit."),
                           ev))

    # --- MPS
    mps = backends.get("mps", {})
    machine = (verify.interpreter.get("machine") if verify is not None else "") or ""
    mac_ver = (verify.interpreter.get("mac_ver") if verify is not None else None) or (
        report.os.version if report is not None and os_family == "macos" else None)
    is_mac = (verify is not None and verify.interpreter.get("system") == "Darwin") or os_family == "macos"
    if is_mac and verify is not None:
        if machine == "x86_64" and (report is not None and report.arch in ("arm64", "aarch64")):
            out.append(Finding("rosetta-python", "error",
                               tr("This Python runs under Rosetta (x86_64) on an Apple silicon Mac"),
                               tr("An x86_64 Python gets x86_64 PyTorch wheels, which cannot use the Apple GPU (MPS) "
                                  "and stopped at torch 2.2.2."),
                               tr("Create the environment with an arm64 Python (e.g. from python.org or `uv python "
                                  "install`), then reinstall PyTorch."), [f"python machine {machine}", f"Mac arch {report.arch}"]))
        elif mps.get("built") and not mps.get("available"):
            old = _ver_tuple(mac_ver) is not None and _ver_tuple(mac_ver) < (12, 3)
            out.append(Finding("mps-unavailable", "error",
                               tr("This PyTorch supports MPS, but the Mac cannot use it: macOS {version} is older "
                                  "than 12.3", version=mac_ver) if old else
                               tr("This PyTorch supports MPS, but the Mac cannot use it"),
                               tr("MPS (the Apple GPU backend) needs macOS 12.3 or newer and an Apple silicon or AMD "
                                  "GPU.")
                               + ("" if old else tr(" The macOS version looks new enough, so the GPU itself is not "
                                                    "usable (a virtual machine, or a Mac without a Metal GPU).")),
                               tr("Update macOS to 12.3 or newer (14+ recommended).") if old else
                               tr("Run on a Mac with Apple silicon outside a virtual machine; otherwise use the CPU."),
                               [f"macOS {mac_ver}", f"machine {machine}"]))

    # --- a CUDA build on a machine where detection found no NVIDIA GPU at all
    if cuda_v and not cuda_available and report is not None and not nvidia and not amd and \
            not any(f.severity == "error" for f in out):
        out.append(Finding("cuda-wheel-without-gpu", "warning",
                           tr("This PyTorch is built for CUDA {cuda}, but no NVIDIA GPU was found on this machine",
                              cuda=cuda_v),
                           tr("Without an NVIDIA GPU (or with its driver not installed) a CUDA build can only use the "
                              "CPU, and it is several GB larger than the CPU build.")
                           + (tr(" PyTorch said: {message}", message=init_warn[:300]) if init_warn else ""),
                           tr("If the machine has an NVIDIA GPU, install its driver and check `nvidia-smi`; otherwise "
                              "install the CPU build (`torch-setup recommend` shows the command)."),
                           [f"torch {tv} (CUDA {cuda_v})", "no NVIDIA GPU in the system report"]))

    # --- nothing specific found, but CUDA is built and not available on a machine with an NVIDIA GPU
    if cuda_v and not cuda_available and verify is not None and not any(
            f.severity == "error" or f.code == "cuda-wheel-without-gpu" for f in out) and (nvidia or init_warn):
        no_driver = nvidia and not any(g.driver_version for g in nvidia)
        out.append(Finding("cuda-init-failed", "error",
                           tr("PyTorch is built for CUDA but cannot initialise the GPU (no NVIDIA driver was found)")
                           if no_driver else tr("PyTorch is built for CUDA but cannot initialise the GPU"),
                           tr("PyTorch said: {message}", message=init_warn[:400]) if init_warn else
                           tr("torch.cuda.is_available() is False without a reason from PyTorch."),
                           tr("Check that `nvidia-smi` works (install or reload the NVIDIA driver, reboot after a "
                              "driver update); in a container, start it with GPU access (--gpus all)."),
                           [init_warn[:300]] if init_warn else []))
    # errors first (the cause), then warnings; the order within a severity is the order above
    return sorted(out, key=lambda f: SEVERITIES.index(f.severity) if f.severity in SEVERITIES else 9)


def _arch_ok(cc: str, arch_list: list[str]) -> bool:
    t = _ver_tuple(cc)
    if not t or len(t) < 2:
        return True
    major, minor = t[0], t[1]
    for arch in arch_list:
        kind, _, num = arch.partition("_")
        num = re.sub(r"[a-z]$", "", num)  # sm_90a, sm_100f
        if not num.isdigit() or len(num) < 2:
            continue
        a_major, a_minor = int(num[:-1]), int(num[-1])
        if kind == "sm" and a_major == major and a_minor <= minor:
            return True
        if kind == "compute" and (a_major, a_minor) <= (major, minor):
            return True
    return False


def _hsa_override(gfx: str, compat=None) -> str | None:
    """The HSA_OVERRIDE_GFX_VERSION value used for a card of this gfx family (compat data)."""
    if compat is not None:
        for row in compat.hsa_overrides:
            if gfx in row.gfx:
                return row.value
        return None
    m = re.fullmatch(r"gfx(\d+)([0-9a-f])([0-9a-f])", gfx or "")
    if m and m.group(1) == "10" and m.group(2) == "3":
        return "10.3.0"  # RDNA2 -> gfx1030
    if m and m.group(1) == "11" and m.group(2) == "0":
        return "11.0.0"  # RDNA3 -> gfx1100
    return None


# ----------------------------------------------------------------------- gathering

def _where_torch(python: Path, env: dict) -> dict | None:
    """Start the env's Python the way a user would (no -I, their PYTHONPATH and user site)
    and ask where `torch` would be imported from, without importing it."""
    from app.core.probe import probe_path

    res = runner.run([str(python), str(probe_path("verify")), "--where"], timeout=60,
                     env={**env, "PYTHONIOENCODING": "utf-8"}, log_path=None)
    for line in res.stdout.splitlines():
        if line.startswith("{"):
            import json

            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if obj.get("event") == "where":
                return obj
    return None


def diagnose(python, report=None, verify=None, *, env: dict | None = None, on_event=None, cancel=None,
             check_path: bool = True) -> Diagnosis:
    """Diagnose the environment at ``python`` (an env folder or interpreter path)."""
    from app.core.probe import ProbeFailed, resolve_python
    from app.core.verify import run_verify

    env_vars = dict(os.environ if env is None else env)
    target = Path(python)
    findings: list[Finding] = []
    try:
        py = resolve_python(target)
    except BadInput as exc:
        if target.exists():
            f = Finding("not-an-env", "error", tr("{target} is not a Python environment", target=target),
                        tr("It holds no bin/python (or Scripts/python.exe), so nothing can run PyTorch from it."),
                        tr("Pass the folder that `torch-setup install` created, a venv/conda env folder, or the "
                           "path of a Python interpreter."), [exc.message])
            return Diagnosis(str(target), str(target), [f], {}, None)
        raise
    env_dir = str(py.parent.parent) if py.parent.name in ("bin", "Scripts") else str(py.parent)
    if report is None:
        try:
            from app.core.detect import detect  # written by the detection helper

            report = detect()
        except Exception:
            report = None
    probe_error = None
    if verify is None:
        try:
            verify = run_verify(py, facts_only=True, on_event=on_event, cancel=cancel, timeout_s=180)
        except ProbeFailed as exc:
            probe_error = {"kind": exc.kind, "code": exc.code, "message": exc.message,
                           "lines": list(exc.lines)}
    where = None
    try:
        where = _where_torch(py, env_vars)
    except Exception:
        where = None
    path_python = runner.which("python", path=env_vars.get("PATH")) if check_path else None
    prefix = (verify.interpreter.get("prefix") if verify is not None else None) or env_dir
    lib_dirs = scan_library_path(env_vars.get("LD_LIBRARY_PATH"), exclude_under=[prefix])
    env_for_checks = dict(report.env) if report is not None and report.env else {}
    env_for_checks.update({k: v for k, v in env_vars.items()
                           if k in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")})
    findings = analyze(verify=verify, report=report, env=env_for_checks, probe_error=probe_error, python=str(py),
                       env_dir=env_dir, where=where, path_python=path_python, lib_dirs=lib_dirs)
    facts = {
        "torch_version": verify.torch_version if verify else None,
        "build": verify.build if verify else {},
        "backends": verify.backends if verify else {},
        "gpus": [to_jsonable(g) for g in (report.gpus if report is not None else [])],
        "env": {k: env_vars[k] for k in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "LD_LIBRARY_PATH",
                                         "PYTHONPATH") if k in env_vars},
        "where": where, "path_python": path_python, "probe_error": probe_error,
    }
    accel = None
    if verify is not None:
        accel = any(verify.backends.get(b, {}).get("available") for b in ("cuda", "rocm", "mps", "xpu"))
    return Diagnosis(str(py), env_dir, findings, facts, accel)


# ----------------------------------------------------------------------- collect_env

def from_collect_env(text: str):
    """(VerifyReport, SystemReport) from ``python -m torch.utils.collect_env`` output.

    Lets the doctor reason about a machine someone pasted into an issue.
    """
    from app.core.system import GPU, OSInfo, SystemReport
    from app.core.verify import VerifyReport

    def field_(name: str) -> str | None:
        m = re.search(rf"^{re.escape(name)}:\s*(.*)$", text, re.M)
        v = m.group(1).strip() if m else None
        return None if v in (None, "", "N/A", "None", "Could not collect", "No CUDA") else v

    torch_v = field_("PyTorch version")
    cuda_v = field_("CUDA used to build PyTorch")
    rocm_v = field_("ROCM used to build PyTorch")
    os_line = field_("OS") or ""
    available = (field_("Is CUDA available") or "").lower() == "true"
    driver = field_("Nvidia driver version")
    names = []
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        if ln.startswith("GPU models and configuration:"):
            rest = ln.split(":", 1)[1].strip()
            block = [rest] if rest else []
            for nxt in lines[i + 1:]:
                if not re.match(r"GPU \d+:", nxt.strip()):
                    break
                block.append(nxt.strip())
            names = [re.sub(r"^GPU \d+:\s*", "", b) for b in block]
            names = [n for n in names if n and n not in ("No CUDA", "Could not collect", "N/A")]
            break
    vendor = "amd" if rocm_v else ("nvidia" if names and not re.search(r"AMD|Radeon|Instinct", names[0]) else "amd")
    family = "macos" if os_line.startswith("macOS") else ("windows" if "Windows" in os_line else "linux")
    arch = "arm64" if "arm64" in os_line else ("x86_64" if "x86_64" in os_line else None)
    gpus = [GPU(vendor=vendor, name=n, driver_version=driver if vendor == "nvidia" else None, index=i,
                source="collect_env") for i, n in enumerate(names)]
    mac = re.search(r"macOS ([\d.]+)", os_line)
    report = SystemReport(os=OSInfo(family=family, version=mac.group(1) if mac else os_line), arch=arch, gpus=gpus)
    local = torch_v.split("+", 1)[1] if torch_v and "+" in torch_v else None
    hip = field_("HIP runtime version") if rocm_v else None
    backends = {"cpu": {"built": True, "available": True},
                "cuda": {"built": bool(cuda_v), "available": bool(cuda_v) and available},
                "rocm": {"built": bool(rocm_v), "available": bool(rocm_v) and available},
                "mps": {"built": family == "macos" and arch == "arm64", "available": False},
                "xpu": {"built": False, "available": False}}
    verify = VerifyReport(python="", torch_version=torch_v,
                          build={"cuda": cuda_v, "hip": hip or rocm_v, "local_tag": local, "arch_list": []},
                          backends=backends, devices=[], checks=[], accelerator=None,
                          interpreter={"system": "Darwin" if family == "macos" else family.capitalize(),
                                       "machine": arch or "", "mac_ver": mac.group(1) if mac else None})
    return verify, report
