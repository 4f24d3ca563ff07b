"""``detect()``: know the machine as well as an expert would after ten minutes with a terminal.

Independent sources run concurrently, each in a daemon thread with its own deadline (a hung
driver call or tool can delay detection by at most ``timeout_s`` plus a small margin, and it
can never keep the process alive). Every source reports what it tried and what happened as a
:class:`~app.core.system.ProbeRecord`; nothing here raises for a missing, hung, broken or
lying tool.

Importing this module is cheap: psutil, pynvml and the per-source modules load inside
:func:`detect`.
"""
from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path
from typing import Any, Callable

from app.core.i18n import tr
from app.core.system import GPU, ProbeRecord, SystemReport, ToolInfo

__all__ = ["detect", "explain", "Explanation"]

_GRACE_S = 1.5  # beyond timeout_s, for a source to notice its timeout and clean up


def _target_dir(target) -> Path:
    """The folder to measure free space at: ``target`` or its nearest existing parent."""
    if target is None:
        try:
            p = Path.home()
        except (RuntimeError, KeyError, OSError):
            p = Path.cwd()
    else:
        p = Path(os.path.expanduser(os.fspath(target)))
    try:
        p = p.absolute()
    except OSError:
        pass
    for cand in (p, *p.parents):
        try:
            if cand.is_dir():
                return cand
        except OSError:
            continue
    return Path(os.path.abspath(os.sep))


def _disk_free_mb(folder: Path) -> tuple[int | None, ProbeRecord]:
    import shutil

    started = time.monotonic()
    try:
        usage = shutil.disk_usage(folder)
        free = usage.free // (1024 * 1024)
        return free, ProbeRecord("disk", "ok", f"{free} MiB free at {folder}",
                                 int((time.monotonic() - started) * 1000))
    except OSError as exc:
        return None, ProbeRecord("disk", "error", f"cannot measure free space at {folder}: {exc.strerror}",
                                 int((time.monotonic() - started) * 1000))


def _memory_mb() -> tuple[int | None, ProbeRecord]:
    started = time.monotonic()
    try:
        if hasattr(os, "sysconf"):
            pages = os.sysconf("SC_PHYS_PAGES")
            size = os.sysconf("SC_PAGE_SIZE")
            if pages > 0 and size > 0:
                mb = pages * size // (1024 * 1024)
                return mb, ProbeRecord("memory", "ok", f"{mb} MiB", int((time.monotonic() - started) * 1000))
    except (ValueError, OSError):
        pass
    try:
        import psutil

        mb = int(psutil.virtual_memory().total) // (1024 * 1024)
        return mb, ProbeRecord("memory", "ok", f"{mb} MiB (psutil)", int((time.monotonic() - started) * 1000))
    except Exception as exc:
        return None, ProbeRecord("memory", "error", f"{type(exc).__name__}: {exc}",
                                 int((time.monotonic() - started) * 1000))


class _Jobs:
    """Daemon threads with a shared deadline; a job that overruns yields a timeout record."""

    def __init__(self) -> None:
        self._threads: dict[str, threading.Thread] = {}
        self.results: dict[str, Any] = {}
        self.errors: dict[str, BaseException] = {}

    def start(self, name: str, fn: Callable[[], Any]) -> None:
        def body():
            try:
                self.results[name] = fn()
            except BaseException as exc:  # pragma: no cover - sources never raise
                self.errors[name] = exc

        t = threading.Thread(target=body, name=f"detect-{name}", daemon=True)
        self._threads[name] = t
        t.start()

    def wait(self, deadline: float) -> list[str]:
        late = []
        for name, t in self._threads.items():
            t.join(max(0.0, deadline - time.monotonic()))
            if t.is_alive():
                late.append(name)
        return late


def detect(target=None, *, timeout_s: float = 3.0) -> SystemReport:
    """Detect this machine. ``target``: where environments will go (free disk is measured
    there, or at its nearest existing parent; default: the home folder). ``timeout_s``: the
    limit for each probe (at most 3 s). Never raises for anything a probe meets."""
    from app import __version__
    from app.core.detection import clamp_timeout
    from app.core.detection.cache import default_cache
    from app.core.detection.osinfo import detect_os

    t = clamp_timeout(timeout_s)
    started = time.monotonic()
    os_info, arch, wsl, os_rec = detect_os()
    family = os_info.family
    cache = default_cache()
    probes: list[ProbeRecord] = [os_rec]

    jobs = _Jobs()

    def nvidia():
        from app.core.detection.nvidia import detect_nvidia

        return detect_nvidia(t, wsl=bool(wsl), family=family, deadline=started + t + 0.5)

    def amd():
        from app.core.detection.amd import detect_amd

        return detect_amd(t, family=family)

    def pci():
        from app.core.detection.pci import detect_pci

        return detect_pci(t, family=family)

    def apple():
        from app.core.detection.apple import detect_apple

        return detect_apple(t)

    def windows():
        from app.core.detection.windows import detect_windows

        return detect_windows(t)

    def pythons():
        from app.core.detection.pythons import detect_pythons

        return detect_pythons(t, cache, family=family, arch=arch)

    def tools():
        from app.core.detection.tools import find_tools, tool_version

        found = find_tools()
        out: dict[str, tuple] = {}
        ths = []
        for name, path in found.items():
            def go(name=name, path=path):
                out[name] = tool_version(name, path, t, cache)

            th = threading.Thread(target=go, daemon=True)
            th.start()
            ths.append(th)
        for th in ths:
            th.join(t + _GRACE_S)
        return found, out

    jobs.start("nvidia", nvidia)
    jobs.start("pythons", pythons)
    jobs.start("tools", tools)
    if family == "linux":
        jobs.start("amd", amd)
        jobs.start("pci", pci)
    elif family == "macos":
        jobs.start("apple", apple)
    elif family == "windows":
        jobs.start("windows", windows)

    # cheap, in this thread, while the others run
    from app.core.detection import envvars

    env = envvars.collect(os.environ)
    memory_mb, mem_rec = _memory_mb()
    folder = _target_dir(target)
    jobs.start("disk", lambda: _disk_free_mb(folder))  # a stale network mount can hang statvfs
    apple_sysctl = None
    late = jobs.wait(started + t + _GRACE_S)
    results = {k: v for k, v in dict(jobs.results).items() if k not in late}
    if "disk" in results:
        disk_mb, disk_rec = results["disk"]
    else:
        disk_mb, disk_rec = None, ProbeRecord("disk", "timeout", f"measuring free space at {folder} did not "
                                              "finish in time (a network drive that does not answer?)")
        late = [n for n in late if n != "disk"]
    if "apple" in results:
        apple_sysctl = results["apple"].sysctl
    from app.core.detection.cpu import detect_cpu

    cpu, cpu_rec = detect_cpu(family, apple_sysctl)
    if family == "macos" and apple_sysctl and apple_sysctl.get("sysctl.proc_translated") == "1":
        arch = "arm64"
        probes.append(ProbeRecord("rosetta", "ok", "this Python runs under Rosetta 2 (x86_64 emulation) "
                                  "on an Apple Silicon Mac", 0))
    probes += [cpu_rec, mem_rec, disk_rec]

    for name in late:
        why = {"nvidia": " (the NVIDIA driver did not answer: it may be stuck; a reboot usually fixes it)",
               "amd": " (a ROCm tool or the amdgpu driver did not answer)",
               "pythons": " (some Python interpreters did not answer)"}.get(name, "")
        probes.append(ProbeRecord(name, "timeout", f"the {name} detection did not finish within "
                                  f"{t + _GRACE_S:.1f} s and was abandoned{why}", None))
    for name, exc in jobs.errors.items():  # pragma: no cover
        probes.append(ProbeRecord(name, "error", f"{type(exc).__name__}: {exc}"))

    # ---- GPUs
    found: list[tuple[GPU, str | None]] = []
    nvidia_cuda = None
    tools_info: dict[str, ToolInfo] = {}
    nv = results.get("nvidia")
    if nv is not None:
        probes += nv.records
        found += nv.gpus
        nvidia_cuda = nv.cuda_version
        if nv.smi_path:
            tools_info["nvidia-smi"] = ToolInfo("nvidia-smi", nv.smi_path, nv.smi_version or nv.driver_version)
        else:
            from app.core.runner import which

            p = which("nvidia-smi")
            if p:
                tools_info["nvidia-smi"] = ToolInfo("nvidia-smi", p, nv.driver_version)
    am = results.get("amd")
    if am is not None:
        probes += am.records
        found += am.gpus
        from app.core.runner import which

        rocm_bin = os.path.join(os.environ.get("ROCM_PATH") or "/opt/rocm", "bin")
        for name in ("amd-smi", "rocm-smi", "rocminfo", "rocm_agent_enumerator"):
            p = which(name) or (os.path.join(rocm_bin, name) if family == "linux" and
                                os.access(os.path.join(rocm_bin, name), os.X_OK) else None)
            if p:
                tools_info[name] = ToolInfo(name, p, am.tool_versions.get(name) or
                                            (f"ROCm {am.rocm_version}" if am.rocm_version else None))
    for key in ("apple", "windows"):
        r = results.get(key)
        if r is not None:
            probes += r.records
            found += r.gpus
    pci_devices = []
    if "pci" in results:
        pci_devices, pci_recs = results["pci"]
        probes += pci_recs
    kfd = am.kfd if am is not None else {}
    nv_driver = nv.driver_version if nv is not None else None
    gpus = merge_gpus(found, pci_devices, kfd=kfd, nvidia_driver=nv_driver)

    # ---- Pythons and tools
    running = None
    interpreters = []
    if "pythons" in results:
        running, interpreters, precs = results["pythons"]
        probes += precs
    if running is None:
        from app.core.detection.pythons import running_interpreter

        running = running_interpreter()
        interpreters = [running]
    if "tools" in results:
        found_tools, versions = results["tools"]
        for name, path in found_tools.items():
            if name in versions:
                info, rec = versions[name]
                tools_info[name] = info
                probes.append(rec)
            else:
                tools_info[name] = ToolInfo(name, path, None)
                probes.append(ProbeRecord(name, "timeout", f"{name} --version did not answer in time"))
        for name in ("uv", "conda", "mamba", "micromamba"):
            if name not in found_tools:
                probes.append(ProbeRecord(name, "not-found", f"{name} is not installed (not on PATH)", 0))
    cache.save()

    import datetime
    import socket

    try:
        hostname = socket.gethostname() or None
    except OSError:
        hostname = None
    return SystemReport(
        os=os_info,
        arch=arch,
        python=running,
        cpu=cpu,
        memory_mb=memory_mb,
        disk_free_mb=disk_mb,
        target=str(folder),
        gpus=gpus,
        nvidia_cuda_version=nvidia_cuda,
        env=env,
        interpreters=interpreters,
        tools=tools_info,
        probes=probes,
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        hostname=hostname,
        assistant_version=__version__,
    )


# ------------------------------------------------------------------------- merging

_SOURCE_RANK = {"nvml": 0, "nvidia-smi": 1, "rocminfo": 1, "amd-smi": 1, "system_profiler": 1,
                "sysctl": 2, "rocm-smi": 2, "rocm_agent_enumerator": 3, "win32-videocontroller": 2,
                "pci": 5}
_BRAND = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel", "apple": "Apple"}


def merge_gpus(found: list[tuple[GPU, str | None]], pci_devices=(), *, kfd: dict | None = None,
               nvidia_driver: str | None = None) -> list[GPU]:
    """One entry per physical GPU from several sources.

    Sources that know a PCI address are matched on it; a PCI-bus-only device is added only
    when no richer source accounts for it (e.g. an Intel iGPU, or an NVIDIA card whose driver
    does not answer). Richer sources win per field; PCI fills gaps (device id, names).
    """
    from dataclasses import replace

    from app.core.detection.amd import amd_is_integrated
    from app.core.detection.intel import intel_family, intel_is_integrated

    kfd = kfd or {}
    merged: list[tuple[GPU, str | None]] = []
    ordinals: dict[tuple, int] = {}
    for gpu, bus in sorted(found, key=lambda gb: _SOURCE_RANK.get(gb[0].source or "", 4)):
        # the n-th GPU of this vendor in this source (bus-less sources are matched by it)
        ordinal = ordinals.get((gpu.source, gpu.vendor), 0)
        ordinals[(gpu.source, gpu.vendor)] = ordinal + 1
        match = next((i for i, (g, b) in enumerate(merged)
                      if g.vendor == gpu.vendor and bus and b and bus == b), None)
        if match is None and not bus:
            others = [i for i, (g, b) in enumerate(merged) if g.vendor == gpu.vendor and g.source != gpu.source]
            if ordinal < len(others):
                match = others[ordinal]
        elif match is None:
            others = [i for i, (g, b) in enumerate(merged)
                      if g.vendor == gpu.vendor and not b and g.source != gpu.source]
            if ordinal < len(others):
                match = others[ordinal]
        if match is None:
            merged.append((gpu, bus))
        else:
            g, b = merged[match]
            merged[match] = (_fill(g, gpu), b or bus)
    # PCI view
    for dev in pci_devices:
        vendor = dev.vendor
        if vendor is None:
            continue
        hit = next((i for i, (g, b) in enumerate(merged) if b and b == dev.bus), None)
        if hit is None:
            same = [i for i, (g, b) in enumerate(merged) if g.vendor == vendor and not b]
            n_pci_same = sum(1 for d in pci_devices if d.vendor == vendor)
            n_rich_same = sum(1 for g, _ in merged if g.vendor == vendor)
            if same and n_rich_same >= n_pci_same:
                hit = same[0]
        if hit is not None:
            g, b = merged[hit]
            merged[hit] = (replace(g, pci_id=g.pci_id or dev.pci_id), b or dev.bus)
            continue
        name = dev.name or (f"{_BRAND[vendor]} GPU {dev.pci_id}" if dev.pci_id else f"{_BRAND[vendor]} GPU")
        if name.lower() in ("device", "intel corporation device") or name.endswith(" Device"):
            name = f"{_BRAND[vendor]} GPU {dev.pci_id}"
        if not name.lower().startswith(vendor) and not name.startswith(_BRAND[vendor]):
            name = f"{_BRAND[vendor]} {name}"
        integrated = False
        gfx = None
        memory = None
        if vendor == "intel":
            integrated = intel_is_integrated(dev.device_id, name)
            fam = intel_family(dev.device_id)
            if fam and "GPU " in name:
                name = f"Intel {fam}"
        elif vendor == "amd":
            gfx = kfd.get(dev.bus)
            integrated = amd_is_integrated(gfx, name)
            memory = _amd_vram_mb(dev.bus)
        merged.append((GPU(vendor=vendor, name=name, gfx_target=gfx, memory_mb=memory, integrated=integrated,
                           driver_version=nvidia_driver if vendor == "nvidia" else None,
                           pci_id=dev.pci_id, source="pci"), dev.bus))
    # AMD rows without a gfx target get it from KFD when the bus matches
    out = []
    for g, b in merged:
        if g.vendor == "amd" and not g.gfx_target and b and kfd.get(b):
            g = replace(g, gfx_target=kfd[b], integrated=g.integrated or amd_is_integrated(kfd[b], g.name))
        out.append(g)
    # discrete first, then by vendor order, keeping each source's index order
    vendor_order = {"nvidia": 0, "amd": 1, "intel": 2, "apple": 3}
    out.sort(key=lambda g: (g.integrated, vendor_order.get(g.vendor, 9)))
    return out


def _fill(primary: GPU, other: GPU) -> GPU:
    from dataclasses import fields, replace

    changes = {}
    for f in fields(primary):
        if f.name in ("source", "integrated", "vendor"):
            continue
        if getattr(primary, f.name) in (None, "") and getattr(other, f.name) not in (None, ""):
            changes[f.name] = getattr(other, f.name)
    if primary.name.endswith("...") and other.name and not other.name.endswith("..."):
        changes["name"] = other.name
    return replace(primary, **changes) if changes else primary


def _amd_vram_mb(bus: str | None) -> int | None:
    if not bus:
        return None
    from app.core.detection import read_text, to_int

    v = to_int((read_text(f"/sys/bus/pci/devices/{bus}/mem_info_vram_total", 64) or "").strip())
    return v // (1024 * 1024) if v else None


# ------------------------------------------------------------------------- explaining

class Explanation:
    """What was found, what it means, and what looks wrong, in plain sentences."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self.meaning: list[str] = []
        self.problems: list[str] = []

    def to_dict(self) -> dict:
        return {"found": self.found, "meaning": self.meaning, "problems": self.problems}


def _gib(mb: int | None) -> str:
    return "?" if mb is None else f"{mb / 1024:.1f} GiB"


def explain(report: SystemReport) -> Explanation:
    """Plain-language summary of a report (the CLI prints it; the GUI shows it)."""
    from app.core.detection.envvars import visible_devices_note

    ex = Explanation()
    o = report.os
    os_line = {"linux": "Linux", "macos": "macOS", "windows": "Windows"}.get(o.family or "", o.family or "?")
    if o.version:
        os_line += f" ({o.version})" if o.family != "macos" else f" {o.version}"
    if o.wsl:
        os_line += (tr(" inside WSL2") if not any(p.name == "os" and "WSL1" in p.detail for p in report.probes)
                    else tr(" inside WSL1"))
    os_line += f", {report.arch or '?'}"
    if o.glibc:
        os_line += f", glibc {o.glibc}"
    ex.found.append(tr("System: {os}", os=os_line))
    c = report.cpu
    simd = [f for f in c.flags if f in ("avx2", "avx512f", "amx", "neon", "sve")]
    kw = dict(model=c.model or tr('unknown'), cores=c.cores or '?', threads=c.threads or '?',
              simd=', '.join(x.upper() for x in simd))
    ex.found.append(tr("CPU: {model} ({cores} cores, {threads} threads; {simd})", **kw) if simd
                    else tr("CPU: {model} ({cores} cores, {threads} threads)", **kw))
    ex.found.append(tr("Memory: {memory}; free disk at {target}: {free}", memory=_gib(report.memory_mb),
                       target=report.target, free=_gib(report.disk_free_mb)))
    py = report.python
    others = [p for p in report.interpreters if p.source != "running"]
    versions = sorted({p.minor for p in others if p.minor}, key=lambda v: tuple(int(x) for x in v.split(".")))
    line = tr("Python: {version} running at {path}", version=py.version, path=py.executable)
    if others:
        line += tr("; {n} other interpreter(s) found", n=len(others))
        if versions:
            line += f" ({', '.join(versions)})"
        usable = [p for p in report.interpreters if p.can_venv]
        line += tr("; {n} of all {total} can create a virtual environment", n=len(usable),
                   total=len(report.interpreters))
    ex.found.append(line)
    tl = [f"{n} {t.version or ''}".strip() for n, t in sorted(report.tools.items())]
    ex.found.append(tr("Tools: {tools}", tools=", ".join(tl) if tl else
                       tr("none of uv, conda, mamba, micromamba, nvidia-smi, ROCm")))
    if report.gpus:
        for g in report.gpus:
            bits = [tr("{brand} GPU: {name}", brand=_BRAND.get(g.vendor, g.vendor), name=g.name)]
            extra = []
            if g.compute_capability:
                extra.append(tr("compute capability {cc}", cc=g.compute_capability))
            if g.gfx_target:
                extra.append(g.gfx_target)
            if g.memory_mb:
                extra.append(_gib(g.memory_mb))
            if g.driver_version:
                extra.append(tr("driver {version}", version=g.driver_version))
            if g.integrated:
                extra.append(tr("integrated"))
            ex.found.append(bits[0] + (f" ({', '.join(extra)})" if extra else ""))
    else:
        ex.found.append(tr("GPUs: none found"))

    # meaning
    nvidia = [g for g in report.gpus if g.vendor == "nvidia"]
    amd = [g for g in report.gpus if g.vendor == "amd" and not g.integrated]
    intel_d = [g for g in report.gpus if g.vendor == "intel" and not g.integrated]
    apple = [g for g in report.gpus if g.vendor == "apple"]
    working_nv = [g for g in nvidia if g.source != "pci"]
    if working_nv:
        cuda = report.nvidia_cuda_version
        many = len(working_nv) > 1
        if cuda:
            ex.meaning.append(tr("PyTorch can use your NVIDIA GPUs through a CUDA build; the driver supports CUDA up "
                                 "to {cuda} (the PyTorch wheel brings its own CUDA runtime, so no CUDA toolkit is "
                                 "needed).", cuda=cuda) if many else
                              tr("PyTorch can use your NVIDIA GPU through a CUDA build; the driver supports CUDA up "
                                 "to {cuda} (the PyTorch wheel brings its own CUDA runtime, so no CUDA toolkit is "
                                 "needed).", cuda=cuda))
        else:
            ex.meaning.append(tr("PyTorch can use your NVIDIA GPUs through a CUDA build.") if many else
                              tr("PyTorch can use your NVIDIA GPU through a CUDA build."))
    elif nvidia:
        ex.meaning.append(tr("An NVIDIA GPU is in this computer, but until its driver works PyTorch can only "
                             "use the CPU."))
    elif amd and report.os.family == "linux":
        ex.meaning.append(tr("PyTorch can use your AMD GPU through a ROCm build (Linux only); its target is {gfx}.",
                             gfx=amd[0].gfx_target) if amd[0].gfx_target else
                          tr("PyTorch can use your AMD GPU through a ROCm build (Linux only)."))
    elif amd:
        ex.meaning.append(tr("The official PyTorch builds support AMD GPUs only on Linux (ROCm); here the CPU "
                             "build is the safe choice."))
    elif intel_d:
        ex.meaning.append(tr("PyTorch can use your Intel discrete GPU through an XPU build."))
    elif apple and report.arch in ("arm64", "aarch64"):
        ex.meaning.append(tr("PyTorch can use your Apple GPU through MPS (part of the normal macOS build)."))
    elif report.gpus:
        names = ", ".join(g.name for g in report.gpus)
        ex.meaning.append(tr("Only integrated graphics were found ({names}): the CPU build of PyTorch is the "
                             "right one here.", names=names))
    else:
        ex.meaning.append(tr("No GPU PyTorch can use was found: the CPU build of PyTorch is the right one here."))

    # problems
    by_name: dict[str, list[ProbeRecord]] = {}
    for p in report.probes:
        by_name.setdefault(p.name, []).append(p)
    for p in report.probes:
        if p.name in ("nvml",) and p.status == "not-found":
            continue  # normal on machines without NVIDIA
        if p.name in ("nvidia-smi", "nvml") and p.status in ("timeout", "error", "garbage", "empty"):
            ex.problems.append(_nv_problem(p))
        elif p.name == "nvidia-smi" and p.status == "ok" and "nvidia-smi also said: " in p.detail:
            ex.problems.append("nvidia-smi: " + p.detail.split("nvidia-smi also said: ", 1)[1])
        elif p.name in ("rocminfo", "amd-smi", "rocm-smi", "rocm_agent_enumerator") and \
                p.status in ("timeout", "error", "garbage"):
            ex.problems.append(f"{p.name}: {p.detail}")
        elif p.status == "timeout" and p.name not in ("nvidia-smi", "nvml"):
            ex.problems.append(f"{p.name}: {p.detail}")
    unanswered = [g for g in nvidia if g.source == "pci"]
    if unanswered:
        ex.problems.append(tr("An NVIDIA GPU ({gpu}) is in this computer but its driver did not "
                              "answer: install or repair the NVIDIA driver, then reboot.", gpu=unanswered[0].name))
    ex.problems += visible_devices_note(report.env)
    ld = report.env.get("LD_LIBRARY_PATH", "")
    if re.search(r"cuda|cudnn|rocm", ld, re.IGNORECASE):
        ex.problems.append(tr("LD_LIBRARY_PATH points at CUDA/ROCm libraries: a PyTorch wheel may load those "
                              "instead of its own and fail; unset it if PyTorch misbehaves."))
    if report.python.can_venv is False and not any(p.can_venv for p in report.interpreters):
        ex.problems.append(tr("No Python here can create a virtual environment (venv/ensurepip missing; on "
                              "Debian/Ubuntu: sudo apt install python3-venv)."))
    if report.disk_free_mb is not None and report.disk_free_mb < 8 * 1024:
        ex.problems.append(tr("Only {free} free at {target}: a PyTorch environment "
                              "needs about 1 GiB (CPU) to 8 GiB (CUDA/ROCm).", free=_gib(report.disk_free_mb),
                              target=report.target))
    return ex


def _nv_problem(p: ProbeRecord) -> str:
    if p.status == "timeout":
        return p.detail if p.detail.startswith("nvidia-smi timed out") else tr("nvidia-smi timed out: {detail}",
                                                                                detail=p.detail)
    if p.status == "garbage":
        return tr("nvidia-smi printed something unexpected: {detail}", detail=p.detail)
    return f"{p.name}: {p.detail}"
