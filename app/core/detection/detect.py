"""``detect()``: know the machine as well as an expert would after ten minutes with a terminal.

Independent sources run side by side (:class:`app.core.detection.jobs.Jobs`: daemon threads,
one shared deadline), so a hung driver call or tool delays detection by at most ``timeout_s``
plus a small margin and can never keep the process alive. Every source reports what it tried
and what happened as a :class:`~app.core.detection.system.ProbeRecord`; nothing here raises for a
missing, hung, broken or lying tool. A source that overran leaves a "timeout" record.

Importing this module is cheap: psutil, pynvml and the per-source modules load inside
:func:`detect`. :func:`explain` (what the report means, in words) and :func:`merge_gpus` live
in :mod:`app.core.detection`.
"""
from __future__ import annotations

import datetime
import os
import socket
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.base.disk import existing_ancestor, free_mb
from app.core.detection import clamp_timeout, envvars
from app.core.detection.cache import StampCache, default_cache
from app.core.detection.explain import Explanation, explain
from app.core.detection.jobs import Jobs, error_of, result_of
from app.core.detection.merge import merge_gpus
from app.core.detection.system import GPU, CPUInfo, ProbeRecord, PythonInfo, SystemReport, ToolInfo
from app.core.proc.runner import which

if TYPE_CHECKING:  # pragma: no cover
    from app.core.detection.amd import AmdFindings
    from app.core.detection.apple import AppleFindings
    from app.core.detection.nvidia import NvidiaFindings
    from app.core.detection.pci import PCIDevice
    from app.core.detection.windows import WindowsFindings

__all__ = ["Explanation", "detect", "explain", "merge_gpus"]

_GRACE_S = 1.5  # beyond timeout_s, for a source to notice its timeout and clean up
_LATE_WHY = {"nvidia": " (the NVIDIA driver did not answer: it may be stuck; a reboot usually fixes it)",
             "amd": " (a ROCm tool or the amdgpu driver did not answer)",
             "pythons": " (some Python interpreters did not answer)"}

PythonsFound = tuple[PythonInfo, list[PythonInfo], list[ProbeRecord]]
ToolsFound = tuple[dict[str, str], dict[str, tuple[ToolInfo, ProbeRecord]]]
DiskFound = tuple["int | None", ProbeRecord]


def _target_dir(target: str | os.PathLike[str] | None) -> Path:
    """The folder to measure free space at: ``target`` or its nearest existing parent (home by default)."""
    if target is not None:
        return existing_ancestor(target)
    try:
        return existing_ancestor(Path.home())
    except (RuntimeError, KeyError, OSError):
        return existing_ancestor(Path.cwd())


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _disk_free_mb(folder: Path) -> DiskFound:
    started = time.monotonic()
    free = free_mb(folder)
    if free is None:
        return None, ProbeRecord("disk", "error", f"cannot measure free space at {folder}", _ms(started))
    return free, ProbeRecord("disk", "ok", f"{free} MiB free at {folder}", _ms(started))


def _memory_mb() -> tuple[int | None, ProbeRecord]:
    started = time.monotonic()
    try:
        if hasattr(os, "sysconf"):
            pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
            if pages > 0 and size > 0:
                mb = pages * size // (1024 * 1024)
                return mb, ProbeRecord("memory", "ok", f"{mb} MiB", _ms(started))
    except (ValueError, OSError):
        pass
    try:
        import psutil  # only when sysconf cannot tell (Windows): it costs start-up time

        mb = int(psutil.virtual_memory().total) // (1024 * 1024)
        return mb, ProbeRecord("memory", "ok", f"{mb} MiB (psutil)", _ms(started))
    except Exception as exc:
        return None, ProbeRecord("memory", "error", f"{type(exc).__name__}: {exc}", _ms(started))


# ------------------------------------------------------------------------------ the sources

@dataclass
class _Sources:
    """The running sources, each a future of what it found (None: not run on this OS)."""

    jobs: Jobs
    nvidia: Future[NvidiaFindings]
    pythons: Future[PythonsFound]
    tools: Future[ToolsFound]
    amd: Future[AmdFindings] | None = None
    pci: Future[tuple[list[PCIDevice], list[ProbeRecord]]] | None = None
    apple: Future[AppleFindings] | None = None
    windows: Future[WindowsFindings] | None = None
    late: list[str] = field(default_factory=list)

    def get(self, name: str) -> object | None:
        fut = getattr(self, name)
        return None if fut is None or name in self.late else result_of(fut)


def _tool_versions(t: float, cache: StampCache) -> ToolsFound:
    """The environment tools present and their versions, asked side by side."""
    from app.core.detection.tools import find_tools, tool_version  # per-source modules load when used

    found = find_tools()
    jobs = Jobs("tool")
    futs = {name: jobs.start(name, partial(tool_version, name, path, t, cache)) for name, path in found.items()}
    jobs.wait(time.monotonic() + t + _GRACE_S)
    versions = {name: r for name, fut in futs.items() if (r := result_of(fut)) is not None}
    return found, versions


def _start(t: float, started: float, family: str | None, wsl: bool, arch: str | None,
           cache: StampCache) -> _Sources:
    # The per-source modules are imported inside the jobs: importing app.core.detection.detect stays cheap.
    def nvidia() -> NvidiaFindings:
        from app.core.detection.nvidia import detect_nvidia
        return detect_nvidia(t, wsl=wsl, family=family, deadline=started + t + 0.5)

    def pythons() -> PythonsFound:
        from app.core.detection.pythons import detect_pythons
        return detect_pythons(t, cache, family=family, arch=arch)

    def amd() -> AmdFindings:
        from app.core.detection.amd import detect_amd
        return detect_amd(t, family=family)

    def pci() -> tuple[list[PCIDevice], list[ProbeRecord]]:
        from app.core.detection.pci import detect_pci
        return detect_pci(t, family=family)

    def apple() -> AppleFindings:
        from app.core.detection.apple import detect_apple
        return detect_apple(t)

    def windows() -> WindowsFindings:
        from app.core.detection.windows import detect_windows
        return detect_windows(t)

    jobs = Jobs()
    s = _Sources(jobs, jobs.start("nvidia", nvidia), jobs.start("pythons", pythons),
                 jobs.start("tools", lambda: _tool_versions(t, cache)))
    if family == "linux":
        s.amd, s.pci = jobs.start("amd", amd), jobs.start("pci", pci)
    elif family == "macos":
        s.apple = jobs.start("apple", apple)
    elif family == "windows":
        s.windows = jobs.start("windows", windows)
    return s


def _late_records(s: _Sources, limit: float) -> list[ProbeRecord]:
    out = [ProbeRecord(name, "timeout", f"the {name} detection did not finish within {limit:.1f} s and was "
                       f"abandoned{_LATE_WHY.get(name, '')}", None) for name in s.late if name != "disk"]
    for name, fut in s.jobs.futures.items():  # pragma: no cover - sources never raise
        exc = error_of(fut)
        if exc is not None:
            out.append(ProbeRecord(name, "error", f"{type(exc).__name__}: {exc}"))
    return out


# ------------------------------------------------------------------------------ putting it together

def _rocm_tools(am: AmdFindings, family: str | None) -> dict[str, ToolInfo]:
    out = {}
    rocm_bin = os.path.join(os.environ.get("ROCM_PATH") or "/opt/rocm", "bin")
    for name in ("amd-smi", "rocm-smi", "rocminfo", "rocm_agent_enumerator"):
        local = os.path.join(rocm_bin, name)
        p = which(name) or (local if family == "linux" and os.access(local, os.X_OK) else None)
        if p:
            out[name] = ToolInfo(name, p, am.tool_versions.get(name) or
                                 (f"ROCm {am.rocm_version}" if am.rocm_version else None))
    return out


def _gpus(s: _Sources, family: str | None, probes: list[ProbeRecord],
          tools: dict[str, ToolInfo]) -> tuple[list[GPU], str | None]:
    """(merged GPUs, the newest CUDA the NVIDIA driver supports); fills ``probes`` and ``tools``."""
    from app.core.detection.amd import AmdFindings
    from app.core.detection.apple import AppleFindings
    from app.core.detection.nvidia import NvidiaFindings
    from app.core.detection.windows import WindowsFindings

    found: list[tuple[GPU, str | None]] = []
    nv = s.get("nvidia")
    if isinstance(nv, NvidiaFindings):
        probes += nv.records
        found += nv.gpus
        smi = nv.smi_path or which("nvidia-smi")
        if smi:
            tools["nvidia-smi"] = ToolInfo("nvidia-smi", smi, (nv.smi_version if nv.smi_path else None)
                                           or nv.driver_version)
    am = s.get("amd")
    if isinstance(am, AmdFindings):
        probes += am.records
        found += am.gpus
        tools.update(_rocm_tools(am, family))
    for r in (s.get("apple"), s.get("windows")):
        if isinstance(r, (AppleFindings, WindowsFindings)):
            probes += r.records
            found += r.gpus
    pci = s.get("pci")
    pci_devices: list[PCIDevice] = []
    if isinstance(pci, tuple):
        pci_devices, pci_records = pci
        probes += pci_records
    told: list[str] = []
    gpus = merge_gpus(found, pci_devices, kfd=am.kfd if isinstance(am, AmdFindings) else {},
                      nvidia_driver=nv.driver_version if isinstance(nv, NvidiaFindings) else None, told=told)
    if told:  # which GPU's generation came from its PCI id, chip code or name, or stayed unknown
        probes.append(ProbeRecord("gpu-ids", "ok", "; ".join(told), 0))
    return gpus, nv.cuda_version if isinstance(nv, NvidiaFindings) else None


def _pythons(s: _Sources, probes: list[ProbeRecord]) -> tuple[PythonInfo, list[PythonInfo]]:
    got = s.get("pythons")
    if isinstance(got, tuple):
        running, interpreters, records = got
        probes += records
        return running, interpreters
    from app.core.detection.pythons import running_interpreter

    running = running_interpreter()
    return running, [running]


def _tools(s: _Sources, probes: list[ProbeRecord], tools: dict[str, ToolInfo]) -> None:
    got = s.get("tools")
    if not isinstance(got, tuple):
        return
    found, versions = got
    for name, path in found.items():
        if name in versions:
            info, rec = versions[name]
            tools[name] = info
            probes.append(rec)
        else:
            tools[name] = ToolInfo(name, path, None)
            probes.append(ProbeRecord(name, "timeout", f"{name} --version did not answer in time"))
    for name in ("uv", "conda", "mamba", "micromamba"):
        if name not in found:
            probes.append(ProbeRecord(name, "not-found", f"{name} is not installed (not on PATH)", 0))


def _cpu(s: _Sources, family: str | None, arch: str | None,
         probes: list[ProbeRecord]) -> tuple[CPUInfo, str | None]:
    from app.core.detection.apple import AppleFindings
    from app.core.detection.cpu import detect_cpu

    apple = s.get("apple")
    sysctl = apple.sysctl if isinstance(apple, AppleFindings) else None
    cpu, cpu_rec = detect_cpu(family, sysctl)
    if family == "macos" and sysctl:
        from app.core.detection.apple import native_arch

        arch, translated = native_arch(sysctl, arch)  # the Mac's own, also from inside Rosetta
        if translated:
            probes.append(ProbeRecord("rosetta", "ok", "this Python runs under Rosetta 2 (x86_64 emulation) on an "
                                      "Apple Silicon Mac", 0))
    probes.append(cpu_rec)
    return cpu, arch


def _hostname() -> str | None:
    try:
        return socket.gethostname() or None
    except OSError:
        return None


def _disk(fut: Future[DiskFound], late: list[str], folder: Path) -> DiskFound:
    got = None if "disk" in late else result_of(fut)
    if got is not None:
        return got
    return None, ProbeRecord("disk", "timeout", f"measuring free space at {folder} did not finish in time "
                             "(a network drive that does not answer?)")


def detect(target: str | os.PathLike[str] | None = None, *, timeout_s: float = 3.0) -> SystemReport:
    """Detect this machine. ``target``: where environments will go (free disk is measured
    there, or at its nearest existing parent; default: the home folder). ``timeout_s``: the
    limit for each probe (at most 3 s). Never raises for anything a probe meets."""
    from app import __version__
    from app.core.detection.osinfo import detect_os

    t = clamp_timeout(timeout_s)
    started = time.monotonic()
    os_info, arch, wsl, os_rec = detect_os()
    family = os_info.family
    cache = default_cache()
    sources = _start(t, started, family, bool(wsl), arch, cache)
    # cheap, in this thread, while the others run
    env = envvars.collect(os.environ)
    memory_mb, mem_rec = _memory_mb()
    folder = _target_dir(target)
    disk_fut = sources.jobs.start("disk", partial(_disk_free_mb, folder))  # a stale network mount can hang
    sources.late = sources.jobs.wait(started + t + _GRACE_S)
    disk_mb, disk_rec = _disk(disk_fut, sources.late, folder)
    probes = [os_rec]
    cpu, arch = _cpu(sources, family, arch, probes)
    probes += [mem_rec, disk_rec, *_late_records(sources, t + _GRACE_S)]
    tools: dict[str, ToolInfo] = {}
    gpus, nvidia_cuda = _gpus(sources, family, probes, tools)
    running, interpreters = _pythons(sources, probes)
    _tools(sources, probes, tools)
    cache.save()
    return SystemReport(
        os=os_info, arch=arch, python=running, cpu=cpu, memory_mb=memory_mb, disk_free_mb=disk_mb,
        target=str(folder), gpus=gpus, nvidia_cuda_version=nvidia_cuda, env=env, interpreters=interpreters,
        tools=tools, probes=probes,
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        hostname=_hostname(), assistant_version=__version__,
    )

