"""Verify probe: does PyTorch work in THIS interpreter, on the CPU and on the accelerator?

Run as ``<env python> -I verify.py [--expect cuda|rocm|mps|xpu] [--facts-only] [--no-dist]
[--dist-mode fork|spawn]``.
Stdlib + torch only. Prints one JSON object per line on stdout:

* ``{"event": "step", "name", "status", "detail", "title", "data"}`` while working
  (status: running | passed | failed | skipped | info),
* exactly one ``{"event": "result", ...}`` last,
* ``{"event": "error", "type", "message", "hint"}`` when something breaks before a result.

Facts about the interpreter are printed *before* torch is imported, so a torch that
crashes the process still leaves them behind for the doctor.

Every check has a stable ``name``; its outcome is a stable ``code`` with plain ``params``
(measured numbers, names, the reason for a skip), from which the English ``detail`` is
written here (:data:`DETAILS`, for people reading the raw output) and the assistant writes
the sentence in the user's language from these same tables (``app/core/measure/verify.py`` reads
:data:`TITLES`, :data:`TITLE_DEFAULTS` and :data:`DETAILS` from this file as data, so they must
stay literal dicts at the top level). Step events carry them in ``data["text"]``. The probe
reports facts, not verdicts that need the assistant's rules: whether a device's architecture is compiled into
the wheel (the ``arch_list`` check) is decided by the assistant from ``devices`` and the
build's ``arch_list``.

The two ranks of the all_reduce check start at the beginning and run while the other checks
do (see :class:`DistRun`): forked right after ``import torch`` where that is safe (Linux, gloo),
fresh interpreters otherwise (``--dist-mode spawn`` forces these). ``verify.py --dist-worker
RANK WORLD PORT BACKEND`` is the internal entry point of one spawned rank.
"""
from __future__ import annotations

import errno
import json
import os
import platform
import socket
import subprocess
import sys
import time
import traceback
import warnings
from typing import Any

ENV_VARS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "LD_LIBRARY_PATH",
            "DYLD_LIBRARY_PATH", "PATH", "CUDA_HOME", "CUDA_PATH", "HSA_OVERRIDE_GFX_VERSION",
            "PYTORCH_ENABLE_MPS_FALLBACK", "ZE_AFFINITY_MASK", "ONEAPI_DEVICE_SELECTOR", "CONDA_PREFIX",
            "VIRTUAL_ENV", "PYTHONPATH")
# Libraries whose load location tells whether the wheel's own CUDA/ROCm stack was used.
LIB_MARKERS = ("libcudart", "libcublas", "libcublasLt", "libcudnn", "libnccl", "libcuda.so",
               "libnvrtc", "libnvJitLink", "libamdhip64", "libMIOpen", "librccl", "libtorch_cuda",
               "libtorch_hip", "libc10_cuda")

# Relative Frobenius error allowed against a float64 CPU reference, per dtype. fp32 allows
# TF32 (10-bit mantissa), which cuDNN uses for convolutions by default on Ampere and newer.
TOLERANCE = {"float32": 5e-3, "float16": 2e-2, "bfloat16": 5e-2}

_T0 = time.monotonic()


def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj, default=str) + "\n")
    sys.stdout.flush()


def step(name: str, status: str, detail: str = "", data: dict | None = None, title: str = "",
         text: dict | None = None) -> dict:
    ev: dict[str, Any] = {"event": "step", "name": name, "status": status, "detail": detail, "title": title or name}
    if data or text:
        ev["data"] = {**(data or {}), **({"text": text} if text else {})}
    emit(ev)
    return ev


# The checks' titles (English; params in ``{}``) and the outcome codes' English details.
TITLES = {
    "python": "The environment's Python",
    "backends": "Backends",
    "torch_import": "PyTorch imports",
    "cpu_matmul": "Matrix multiply on the CPU",
    "cpu_conv2d": "Convolution on the CPU",
    "cpu_training": "A training step on the CPU (loss goes down)",
    "cpu_autocast": "Mixed precision (bfloat16 autocast) on the CPU",
    "gloo_all_reduce": "Two-process all_reduce on the CPU (gloo)",
    "accelerator": "An accelerator (GPU) is usable",
    "device_round_trip": "A tensor goes to the accelerator and back",
    "device_matmul": "Matrix multiply on the accelerator matches the CPU",
    "device_conv2d": "Convolution on the accelerator matches the CPU",
    "device_training": "A training step on the accelerator (loss goes down)",
    "dnn_library": "{library} convolution",
    "device_autocast": "Mixed precision (autocast) on the accelerator",
    "device_memory": "Accelerator memory after the checks",
    "nccl_all_reduce": "Two-process all_reduce across GPUs ({library})",
}
TITLE_DEFAULTS = {"dnn_library": {"library": "cuDNN / MIOpen"}, "nccl_all_reduce": {"library": "NCCL"}}

DETAILS = {
    "python_at": "Python {version} at {executable}",
    "exception": "{type}: {message}",
    "torch_imported": "torch {version} imported in {seconds:.1f} s from {folder}",
    "matmul_ok": "256x192 @ 192x128 matches the CPU reference ({errors})",
    "matmul_differs": "{dtype} result differs from the CPU reference by {err:.2e} (allowed {allowed:.0e})",
    "conv_ok": "3x3 convolution on 2x3x32x32 matches the CPU reference ({errors})",
    "conv_differs": "{dtype} convolution differs from the CPU reference by {err:.2e} (allowed {allowed:.0e})",
    "training_ok": "20 SGD steps on a tiny MLP: loss {first:.4f} -> {last:.4f}",
    "loss_not_finite": "the loss became NaN or infinite",
    "loss_not_down": "the loss did not go down ({first:.4f} -> {last:.4f})",
    "autocast_ok": "a matmul under autocast ran in {dtype} (error {err:.1e})",
    "autocast_missing": "this PyTorch has no autocast for {device}: {message}",
    "autocast_wrong_dtype": "autocast did not run the matmul in {dtype} (got {got})",
    "autocast_differs": "autocast {dtype} result differs from the reference by {err:.2e}",
    "round_trip_ok": "4 MiB copied to {device}, computed on and copied back intact ({ms:.1f} ms)",
    "round_trip_differs": "data copied to the device and back came back different",
    "dnn_ok": "{library} {version}: convolution forward and backward match the CPU reference",
    "dnn_missing": "{library} is not available in this PyTorch build",
    "dnn_disabled": "{library} {version} is present but disabled (torch.backends.cudnn.enabled = False)",
    "dnn_differs": "{library} convolution differs from the CPU reference by {err:.2e}",
    "dnn_not_used": "cuDNN/MIOpen are NVIDIA/AMD libraries; {backend} does not use them",
    "memory_ok": "{allocated:.1f} MiB allocated by tensors, {reserved:.1f} MiB kept reserved by PyTorch's "
                 "caching allocator (normal: it reuses it)",
    "memory_over": "allocated memory exceeds reserved memory: {allocated:.1f} MiB allocated by tensors, "
                   "{reserved:.1f} MiB kept reserved by PyTorch's caching allocator (normal: it reuses it)",
    "memory_no_stats": "no memory statistics for {device}",
    "all_reduce_ok": "{world} processes summed a 4 MiB tensor with {backend} over 127.0.0.1 "
                     "(correct result, {ms:.1f} ms)",
    "all_reduce_timeout": "the {backend} all_reduce did not finish within {seconds:.0f} s",
    "all_reduce_wrong": "{backend} all_reduce gave {value} instead of {expected}",
    "all_reduce_failed": "the {backend} all_reduce failed: {error}",
    "all_reduce_no_output": "the {backend} all_reduce failed: no output",
    "all_reduce_wine": "not checked: this is Wine, whose networking {backend} cannot use to move data between "
                       "processes (on Windows itself the check runs). What happened: {reason}",
    "dist_not_asked": "not asked for (--no-dist)",
    "dist_missing": "this PyTorch build has no torch.distributed",
    "nccl_needs_two_gpus": "needs two or more GPUs; this machine has {count}",
    "nccl_missing": "this PyTorch build has no NCCL",
    "nccl_not_for": "NCCL is for NVIDIA/AMD GPUs, not {backend}",
    "accelerator_ok": "{backend}: {devices}",
    "accelerator_ran_on": "{backend}: {devices}; the device checks ran on {device} ({name})",
    "accelerator_ran_on_visible": "{backend}: {devices}; the device checks ran on {device} ({name}), chosen by "
                                  "{visible}",
    "no_accelerator": "no accelerator is usable: {reason}",
    "cuda_unusable": "This PyTorch is built for CUDA {cuda}, but no NVIDIA GPU can be used. "
                     "Run `torch-setup doctor` to find out why.",
    "cuda_unusable_said": "This PyTorch is built for CUDA {cuda}, but no NVIDIA GPU can be used ({warning}). "
                          "Run `torch-setup doctor` to find out why.",
    "rocm_unusable": "This PyTorch is built for ROCm {hip}, but no AMD GPU can be used. "
                     "Run `torch-setup doctor` to find out why.",
    "rocm_unusable_said": "This PyTorch is built for ROCm {hip}, but no AMD GPU can be used ({warning}). "
                          "Run `torch-setup doctor` to find out why.",
    "mps_unusable": "This PyTorch supports Apple's MPS, but it is not available on this Mac (macOS {mac}; "
                    "MPS needs macOS 12.3 or newer on Apple silicon or an AMD GPU)",
    "xpu_unusable": "This PyTorch is built for Intel GPUs (XPU), but none can be used",
    "cpu_only_build": "This PyTorch is a CPU-only build, so it cannot use a GPU",
    "cpu_only_build_tagged": "This PyTorch (+{tag}) is a CPU-only build, so it cannot use a GPU",
}


def detail_text(code: str, params: dict | None = None) -> str:
    """The English detail of an outcome; a nested ``{"code", "params"}`` value is written the same way."""
    values = {k: (detail_text(v["code"], v.get("params")) if isinstance(v, dict) and "code" in v else v)
              for k, v in (params or {}).items()}
    return DETAILS[code].format(**values)


def title_text(name: str, params: dict | None = None) -> str:
    return TITLES.get(name, name).format(**(params or TITLE_DEFAULTS.get(name) or {}))


def interpreter_facts() -> dict:
    mac = platform.mac_ver()[0]
    return {
        "executable": sys.executable,
        "prefix": sys.prefix,
        "base_prefix": sys.base_prefix,
        "in_venv": sys.prefix != sys.base_prefix,
        "conda": os.path.isdir(os.path.join(sys.prefix, "conda-meta")),
        "python_version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "system": platform.system(),
        "platform": platform.platform(),
        "mac_ver": mac or None,
        "pid": os.getpid(),
        "env": {k: os.environ[k] for k in ENV_VARS if k in os.environ},
        "sys_path": list(sys.path),
    }


def loaded_libraries() -> dict:
    """Where the CUDA/ROCm libraries of interest were loaded from (Linux: /proc/self/maps)."""
    found: dict[str, str] = {}
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                parts = line.split(None, 5)
                if len(parts) < 6:
                    continue
                path = parts[5].strip()
                base = os.path.basename(path)
                for marker in LIB_MARKERS:
                    if base.startswith(marker) and base not in found:
                        found[base] = path
    except OSError:
        pass
    return found


# ---------------------------------------------------------------------------- checks

class Checks:
    def __init__(self) -> None:
        self.items: list[dict] = []

    def add(self, name: str, status: str, code: str, params: dict | None = None, data: dict | None = None,
            title_params: dict | None = None) -> None:
        title = title_text(name, title_params)
        detail = detail_text(code, params)
        item = {"name": name, "title": title, "status": status, "detail": detail, "code": code,
                "params": params or {}}
        if title_params:
            item["title_params"] = title_params
        if data:
            item["data"] = data
        self.items.append(item)
        text = {"code": code, "params": params or {}, **({"title_params": title_params} if title_params else {})}
        step(name, status, detail, data, title, text)

    def run(self, name: str, fn, *args, title_params: dict | None = None) -> None:
        """Run ``fn`` -> (status, code, params[, data]); an exception is a failure with its message."""
        step(name, "running", title=title_text(name, title_params),
             text={"title_params": title_params} if title_params else None)
        try:
            out = fn(*args)
        except Exception as exc:  # the check's failure, in one line
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            kind = type(exc).__name__
            self.add(name, "failed", "exception", {"type": kind, "message": first[:max(0, 398 - len(kind))]},
                     {"traceback": traceback.format_exc()[-2000:]}, title_params)
            return
        data = out[3] if len(out) > 3 else None
        self.add(name, out[0], out[1], out[2], data, title_params)

    def skip(self, name: str, code: str, params: dict | None = None, title_params: dict | None = None) -> None:
        self.add(name, "skipped", code, params, title_params=title_params)


def rel_err(torch, got, ref) -> float:
    got = got.detach().to("cpu", torch.float64)
    ref = ref.detach().to("cpu", torch.float64)
    denom = torch.linalg.vector_norm(ref).item() or 1.0
    return torch.linalg.vector_norm(got - ref).item() / denom


def sync(torch, device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()
    elif device == "xpu":
        torch.xpu.synchronize()


def against_reference(torch, device: str, dtypes: list, ref, compute, codes: tuple[str, str]) -> tuple:
    """``compute(dtype)`` on ``device`` in each dtype against the float64 CPU result ``ref``: passed
    (``codes[0]``, every dtype's error) or failed (``codes[1]``) at the first dtype past its tolerance."""
    errs = {}
    for dt in dtypes:
        name = str(dt).replace("torch.", "")
        out = compute(dt)
        sync(torch, device)
        err = rel_err(torch, out, ref)
        errs[name] = err
        if not err <= TOLERANCE[name]:
            return ("failed", codes[1], {"dtype": name, "err": err, "allowed": TOLERANCE[name]}, {"rel_err": errs})
    shown = ", ".join(f"{k} {v:.1e}" for k, v in errs.items())
    return ("passed", codes[0], {"errors": shown}, {"rel_err": errs})


def check_matmul(torch, device: str, dtypes: list) -> tuple:
    g = torch.Generator().manual_seed(0)
    a = torch.randn(256, 192, generator=g, dtype=torch.float64)
    b = torch.randn(192, 128, generator=g, dtype=torch.float64)
    return against_reference(torch, device, dtypes, a @ b, lambda dt: a.to(device, dt) @ b.to(device, dt),
                             ("matmul_ok", "matmul_differs"))


def check_conv2d(torch, device: str, dtypes: list) -> tuple:
    import torch.nn.functional as nnf

    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, 32, 32, generator=g, dtype=torch.float64)
    w = torch.randn(8, 3, 3, 3, generator=g, dtype=torch.float64)
    return against_reference(torch, device, dtypes, nnf.conv2d(x, w, padding=1),
                             lambda dt: nnf.conv2d(x.to(device, dt), w.to(device, dt), padding=1),
                             ("conv_ok", "conv_differs"))


def check_training(torch, device: str) -> tuple:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(2)
    x = torch.randn(64, 16, generator=g)
    y = (x[:, :1] * 2.0 - x[:, 1:2]).contiguous()
    x, y = x.to(device), y.to(device)
    losses = []
    for _ in range(20):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    first, last = losses[0], losses[-1]
    if not all(map(lambda v: v == v and abs(v) != float("inf"), losses)):
        return ("failed", "loss_not_finite", {}, {"losses": losses})
    if not last < first * 0.9:
        return ("failed", "loss_not_down", {"first": first, "last": last}, {"losses": losses})
    return ("passed", "training_ok", {"first": first, "last": last}, {"first_loss": first, "last_loss": last})


def check_autocast(torch, device: str, dtype) -> tuple:
    g = torch.Generator().manual_seed(3)
    a = torch.randn(128, 128, generator=g)
    b = torch.randn(128, 128, generator=g)
    ref = a.double() @ b.double()
    try:
        with torch.autocast(device_type=device, dtype=dtype):
            out = a.to(device) @ b.to(device)
    except RuntimeError as exc:
        if device not in ("cpu", "cuda") and "autocast" in str(exc).lower():
            return ("skipped", "autocast_missing", {"device": device, "message": str(exc).splitlines()[0][:200]})
        raise
    sync(torch, device)
    name = str(dtype).replace("torch.", "")
    if out.dtype != dtype:
        return ("failed", "autocast_wrong_dtype", {"dtype": name, "got": str(out.dtype)})
    err = rel_err(torch, out, ref)
    if not err <= TOLERANCE[name]:
        return ("failed", "autocast_differs", {"dtype": name, "err": err})
    return ("passed", "autocast_ok", {"dtype": name, "err": err}, {"rel_err": err})


def check_round_trip(torch, device: str) -> tuple:
    x = torch.arange(1 << 20, dtype=torch.float32)
    t0 = time.perf_counter()
    y = x.to(device)
    z = (y * 2 + 1).to("cpu")
    sync(torch, device)
    dt = time.perf_counter() - t0
    if not torch.equal(z, x * 2 + 1):
        return ("failed", "round_trip_differs", {})
    return ("passed", "round_trip_ok", {"device": device, "ms": dt * 1000})


def check_dnn(torch, device: str, hip: bool) -> tuple:
    lib = "MIOpen" if hip else "cuDNN"
    backend = torch.backends.cudnn
    if not backend.is_available():
        return ("failed", "dnn_missing", {"library": lib})
    version = backend.version()
    if not backend.enabled:
        return ("failed", "dnn_disabled", {"library": lib, "version": _dnn_version(version, hip)})
    import torch.nn.functional as nnf

    g = torch.Generator().manual_seed(4)
    x = torch.randn(4, 16, 28, 28, generator=g, dtype=torch.float64)
    w = torch.randn(32, 16, 3, 3, generator=g, dtype=torch.float64)
    ref = nnf.conv2d(x, w, padding=1)
    xd = x.to(device, torch.float32).requires_grad_(True)
    out = nnf.conv2d(xd, w.to(device, torch.float32), padding=1)
    out.sum().backward()
    sync(torch, device)
    err = rel_err(torch, out, ref)
    if not err <= TOLERANCE["float32"]:
        return ("failed", "dnn_differs", {"library": lib, "err": err})
    return ("passed", "dnn_ok", {"library": lib, "version": _dnn_version(version, hip)},
            {"version": version, "library": lib})


def _dnn_version(v, hip: bool) -> str:
    if not isinstance(v, int):
        return str(v)
    if hip and v >= 1000000:  # MIOpen encoded as major * 1_000_000 + minor * 1_000 + patch
        return f"{v // 1000000}.{v // 1000 % 1000}.{v % 1000}"
    if v >= 10000:  # cuDNN 9+: major * 10000 + minor * 100 + patch
        return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    return f"{v // 1000}.{v // 100 % 10}.{v % 100}"  # cuDNN 8: major * 1000 + minor * 100 + patch


def memory_stats(torch, device: str) -> dict | None:
    if device == "cuda":
        return {"allocated": torch.cuda.memory_allocated(), "reserved": torch.cuda.memory_reserved(),
                "max_allocated": torch.cuda.max_memory_allocated()}
    if device == "xpu":
        return {"allocated": torch.xpu.memory_allocated(), "reserved": torch.xpu.memory_reserved()}
    if device == "mps":
        return {"allocated": torch.mps.current_allocated_memory(),
                "reserved": torch.mps.driver_allocated_memory()}
    return None


def check_memory(torch, device: str) -> tuple:
    import gc

    gc.collect()
    stats = memory_stats(torch, device)
    if stats is None:
        return ("skipped", "memory_no_stats", {"device": device})
    mib = 1 << 20
    params = {"allocated": stats["allocated"] / mib, "reserved": stats["reserved"] / mib}
    if stats["allocated"] > stats["reserved"]:
        return ("failed", "memory_over", params, stats)
    return ("passed", "memory_ok", params, stats)


# ------------------------------------------------------------ two-process all_reduce
#
# The ranks start at the beginning, in parallel with the single-process checks, and the
# check collects them when its turn comes. Where it is safe they are forked from the probe
# right after `import torch` (no interpreter start, no second import; nothing has touched an
# accelerator or started a thread pool yet): Linux, for gloo on the CPU. Where it is not
# (macOS and Windows, or NCCL, whose ranks need a CUDA the parent has initialised by then),
# they are fresh interpreters running this file with --dist-worker, started as early as the
# check allows (gloo: before the probe itself imports torch, so the imports overlap).
#
# Everything stays on the loopback address, on every system: the store listens on 127.0.0.1
# only, and gloo's device is bound to 127.0.0.1. Nothing listens on the machine's network
# address, so Windows never asks the user to let Python through its firewall, and the host
# name does not have to resolve (under Wine, in containers it often does not).

DIST_TIMEOUT_S = 90.0
LOOPBACK = "127.0.0.1"
# How long one rank waits for the other inside the collective (the store waits as long for the
# other rank to start). Under Wine gloo connects but no data ever arrives: a short wait there.
GROUP_TIMEOUT_S = 60.0
WINE_GROUP_TIMEOUT_S = 20.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def fork_is_safe() -> bool:
    """Forking a process that imported torch is safe on Linux before any accelerator or
    thread pool is initialised; macOS frameworks and Windows (no fork) need fresh processes."""
    return hasattr(os, "fork") and sys.platform.startswith("linux")


def under_wine() -> bool:
    """True when this "Windows" is Wine (its ntdll exports wine_get_version; Windows' does not)."""
    if os.name != "nt":
        return False
    try:
        import ctypes

        return hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")  # type: ignore[attr-defined,unused-ignore]
    except (OSError, AttributeError):
        return False


def _tcp_store(dist, port: int, world: int, master: bool, timeout, options: dict):
    """A TCPStore on 127.0.0.1 with ``options``; an older torch that lacks one is asked without it
    (first use_libuv, then master_listen_fd: its store then listens on every address)."""
    options = dict(options)
    while True:
        try:
            return dist.TCPStore(LOOPBACK, port, world, master, timeout=timeout, **options)
        except TypeError:
            if "use_libuv" in options:
                del options["use_libuv"]
            elif "master_listen_fd" in options:
                socket.socket(fileno=options.pop("master_listen_fd")).close()
            else:
                raise


def loopback_store(dist, rank: int, world: int, port: int, timeout) -> tuple:
    """``(store, port)``: the group's rendezvous store on 127.0.0.1 only. Rank 0 serves it on a
    socket it binds itself (``port`` 0: any free one) and hands to torch (``master_listen_fd``):
    a TCPStore that opens its own socket listens on every address (0.0.0.0 / ::), which on Windows
    brings up the firewall's "allow access" prompt. No libuv on Windows: its wheels are built
    without it, and torch 2.4+ asks for it by default."""
    options: dict = {"use_libuv": False} if os.name == "nt" else {}
    if rank != 0:
        return _tcp_store(dist, port, world, False, timeout, options), port
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((LOOPBACK, port))
        sock.listen(64)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE or getattr(exc, "winerror", None) == 10048:  # WSAEADDRINUSE
            raise RuntimeError(f"address already in use: {LOOPBACK}:{port}") from exc
        raise
    port = sock.getsockname()[1]
    fd = sock.detach()
    try:
        return _tcp_store(dist, port, world, True, timeout,
                          {**options, "master_listen_fd": fd, "wait_for_workers": False}), port
    except BaseException:
        try:
            socket.socket(fileno=fd).close()
        except OSError:  # torch closed it already
            pass
        raise


def gloo_group(dist, store, rank: int, world: int, timeout):
    """A gloo group whose device is bound to 127.0.0.1, or None where this torch cannot build one.

    ``init_process_group("gloo")`` takes the device from GLOO_SOCKET_IFNAME or the machine's host
    name: the network address (a firewall prompt on Windows), or, where the name does not resolve,
    the loopback address after a warning. This is the group it builds, on the loopback device."""
    group_type = getattr(dist, "ProcessGroupGloo", None)
    if group_type is None or not hasattr(group_type, "create_device"):
        return None
    opts = (getattr(group_type, "_Options", None) or group_type.Options)()
    settings = ((("_devices", "devices"), [group_type.create_device(hostname=LOOPBACK)]),
                (("_timeout", "timeout"), timeout), (("_threads", "threads"), 2))
    for names, value in settings:
        name = next((n for n in names if hasattr(opts, n)), None)
        if name is None:
            return None
        setattr(opts, name, value)
    return group_type(store, rank, world, opts)


def all_reduce_once(torch, dist, backend: str, rank: int, world: int, store,
                    timeout_s: float = GROUP_TIMEOUT_S) -> dict:
    """One rank: join the group through ``store``, sum a 4 MiB tensor, check the result."""
    import datetime

    timeout = datetime.timedelta(seconds=timeout_s)
    device = "cpu"
    if backend == "nccl":
        torch.cuda.set_device(rank)
        device = f"cuda:{rank}"
    group = gloo_group(dist, store, rank, world, timeout) if backend == "gloo" else None
    if group is None:
        dist.init_process_group(backend, rank=rank, world_size=world, timeout=timeout, store=store)
    try:
        t = torch.full((1 << 20,), float(rank + 1), device=device)
        t0 = time.perf_counter()
        if group is not None:
            group.allreduce([t]).wait()
        else:
            dist.all_reduce(t)
        if backend == "nccl":
            torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        expected = world * (world + 1) / 2
        ok = bool(torch.all(t == expected).item())
        return {"event": "dist", "rank": rank, "ok": ok, "value": float(t[0].item()), "expected": expected,
                "seconds": dt}
    finally:
        if group is None:
            dist.destroy_process_group()


def _rank_error(rank: int, exc: BaseException) -> dict:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return {"event": "dist", "rank": rank, "error": f"{type(exc).__name__}: {first}"[:300]}


def dist_worker(rank: int, world: int, port: int, backend: str) -> int:
    """A spawned rank (``--dist-worker``): rendezvous on 127.0.0.1:PORT (rank 0 serves it)."""
    try:
        import datetime

        import torch
        import torch.distributed as dist

        store, _ = loopback_store(dist, rank, world, port, datetime.timedelta(seconds=GROUP_TIMEOUT_S))
        res = all_reduce_once(torch, dist, backend, rank, world, store,
                              WINE_GROUP_TIMEOUT_S if under_wine() else GROUP_TIMEOUT_S)
    except Exception as exc:  # reported as this rank's outcome, as a forked rank's is
        res = _rank_error(rank, exc)
    emit(res)
    return 0 if res.get("ok") else 3


def _read_line(fd: int, deadline: float) -> str:
    """One line from a pipe, or what came before EOF / the deadline."""
    import select

    buf = b""
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buf += chunk
    return buf.decode("utf-8", "replace").strip()


def _forked_rank(torch, backend: str, rank: int, world: int, out_fd: int, port_in: int | None,
                 port_outs: list[int], deadline: float) -> None:
    """The body of a forked rank: never returns (os._exit), writes one JSON line to out_fd."""
    code = 0
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)  # the probe's stdout is the protocol: a rank prints nothing there
        import datetime

        import torch.distributed as dist

        timeout = datetime.timedelta(seconds=GROUP_TIMEOUT_S)
        if rank == 0:  # the store on an ephemeral port (no race for a "free" one), told to the others
            store, port = loopback_store(dist, 0, world, 0, timeout)
            for fd in port_outs:
                os.write(fd, f"{port}\n".encode())
                os.close(fd)
        else:
            told = _read_line(port_in, deadline) if port_in is not None else ""
            if not told.isdigit():
                raise RuntimeError("rank 0 did not start its store")
            store, _ = loopback_store(dist, rank, world, int(told), timeout)
        res = all_reduce_once(torch, dist, backend, rank, world, store)
    except BaseException as exc:  # reported to the parent, which writes the check's outcome
        res = _rank_error(rank, exc)
        code = 3
    try:
        os.write(out_fd, (json.dumps(res, default=str) + "\n").encode())
    finally:
        os._exit(code)


class DistRun:
    """The ranks of one all_reduce check, started early; :meth:`collect` gives the outcome."""

    def __init__(self, backend: str, world: int, mode: str, timeout_s: float) -> None:
        self.backend, self.world, self.mode = backend, world, mode
        self.timeout_s = timeout_s
        self.deadline = time.monotonic() + timeout_s
        self.started_s = time.monotonic() - _T0  # when the ranks started, in the probe's time
        self.others_started_s: float | None = None  # when the checks that ran meanwhile began
        self.pids: list[int] = []
        self.fds: list[int] = []
        self.procs: list[subprocess.Popen] = []
        self.port: int | None = None

    @classmethod
    def fork(cls, torch, backend: str = "gloo", world: int = 2, timeout_s: float = DIST_TIMEOUT_S) -> DistRun:
        run = cls(backend, world, "fork", timeout_s)
        results = [os.pipe() for _ in range(world)]
        ports = [os.pipe() for _ in range(world - 1)]  # rank 0 -> rank r
        sys.stdout.flush()
        sys.stderr.flush()
        own = {fd for pair in results + ports for fd in pair}
        with warnings.catch_warnings():  # Python 3.12+ warns about forking with threads; none runs torch yet
            warnings.simplefilter("ignore", DeprecationWarning)
            for rank in range(world):
                pid = os.fork()
                if pid == 0:
                    keep = {results[rank][1]} | ({ports[rank - 1][0]} if rank else {w for _, w in ports})
                    for fd in own - keep:
                        os.close(fd)
                    _forked_rank(torch, backend, rank, world, results[rank][1],
                                 ports[rank - 1][0] if rank else None, [w for _, w in ports] if rank == 0 else [],
                                 run.deadline)
                run.pids.append(pid)
        for fd in own - {r for r, _ in results}:
            os.close(fd)
        run.fds = [r for r, _ in results]
        return run

    @classmethod
    def spawn(cls, backend: str = "gloo", world: int = 2, timeout_s: float = DIST_TIMEOUT_S) -> DistRun:
        run = cls(backend, world, "spawn", timeout_s)
        run.port = free_port()
        env = dict(os.environ)
        env["MASTER_ADDR"] = LOOPBACK  # (the ranks are given the store; for any code that reads these)
        env["MASTER_PORT"] = str(run.port)
        if os.name == "nt":
            env["GLOO_DEVICE_TRANSPORT"] = "UV"  # the one transport torch's Windows wheels carry
        run.procs = [subprocess.Popen([sys.executable, "-I", os.path.abspath(__file__), "--dist-worker", str(r),
                                       str(world), str(run.port), backend],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
                     for r in range(world)]
        return run

    def abandon(self) -> None:
        """Stop the ranks (the probe failed before their check)."""
        import signal

        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.communicate()
        self.pids, self.fds, self.procs = [], [], []

    def _collect_forked(self) -> tuple[list[dict], list[str], bool]:
        """Every rank's line, read as it comes. A rank that fails ends the wait: the others would
        otherwise wait for it (its store, its half of the all_reduce) until the deadline, and its
        error would be reported as a timeout."""
        import select

        results: list[Any] = []
        errors: list[str] = []
        timed_out = False
        pending = dict(enumerate(self.fds))  # rank -> the read end of its result pipe
        bufs = {rank: b"" for rank in pending}
        while pending and not errors:
            left = self.deadline - time.monotonic()
            ready = select.select(list(pending.values()), [], [], left)[0] if left > 0 else []
            if not ready:
                timed_out = True
                break
            for rank, fd in list(pending.items()):
                if fd not in ready:
                    continue
                chunk = os.read(fd, 65536)
                bufs[rank] += chunk
                if chunk and not bufs[rank].endswith(b"\n"):
                    continue
                del pending[rank]
                try:
                    obj = json.loads(bufs[rank].decode("utf-8", "replace").strip() or "null")
                except ValueError:
                    obj = None
                if not isinstance(obj, dict):
                    errors.append(f"rank {rank} ended without a result")
                elif "error" in obj:
                    errors.append(str(obj["error"]))
                else:
                    results.append(obj)
        if pending:  # timed out, or a rank failed while others still wait
            self.abandon()
            return results, errors, timed_out
        for pid in self.pids:
            _, status = os.waitpid(pid, 0)
            sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
            if sig:
                errors.append(f"a rank was killed by signal {sig}")
        for fd in self.fds:
            os.close(fd)
        self.pids, self.fds = [], []
        return results, errors, timed_out

    def _collect_spawned(self) -> tuple[list[dict], list[str], bool]:
        """Every rank's output; as with forked ranks, one that fails ends the wait for the others."""
        outs: dict[int, tuple[int, str, str]] = {}
        try:
            while len(outs) < len(self.procs):
                if time.monotonic() >= self.deadline:
                    self.abandon()
                    return [], [], True
                for i, p in enumerate(self.procs):
                    if i in outs:
                        continue
                    try:
                        out, err = p.communicate(timeout=0.05)
                    except subprocess.TimeoutExpired:
                        continue
                    outs[i] = (p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))
                if any(rc != 0 for rc, _, _ in outs.values()):
                    break  # a rank failed: the others would wait for it until the deadline
        finally:
            for p in self.procs:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
        self.procs = []
        results, errors, deaths = [], [], []
        for i in sorted(outs):
            rc, out, err = outs[i]
            said = False
            for line in out.splitlines():
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                if isinstance(obj, dict) and obj.get("event") == "dist":
                    said = True
                    if "error" in obj:
                        errors.append(str(obj["error"]))
                    else:
                        results.append(obj)
            if rc != 0 and not said:  # it died (a crash, a kill): its stderr's last error line says why
                lines = [ln.strip() for ln in err.splitlines() if ln.strip()]
                why = next((ln for ln in reversed(lines) if "Error" in ln), "")
                aborted = " (it aborted)" if os.name == "nt" and rc == 3 else ""  # abort()'s exit code there
                deaths.append(why or f"a rank exited with code {rc}{aborted}")
        # (warnings on stderr, such as torch's "Failed to initialize NumPy", are no failure)
        return results, (errors or deaths)[:1], False

    def collect(self) -> tuple:
        """(status, code, params[, data]) of the check, as the other checks return."""
        backend = self.backend
        waiting = time.monotonic()
        if self.mode == "fork":
            results, errors, timed_out = self._collect_forked()
        else:
            results, errors, timed_out = self._collect_spawned()
        timing = {"mode": self.mode, "started_s": self.started_s, "others_started_s": self.others_started_s,
                  "waited_s": time.monotonic() - waiting}
        if timed_out:
            return ("failed", "all_reduce_timeout", {"backend": backend, "seconds": self.timeout_s})
        if len(results) == self.world and all(r.get("ok") for r in results) and not errors:
            ms = max(r["seconds"] for r in results) * 1000
            return ("passed", "all_reduce_ok", {"world": self.world, "backend": backend, "ms": ms},
                    {"ms": ms, **timing, **({"port": self.port} if self.port else {})})
        bad = [r for r in results if not r.get("ok")]
        if bad:
            return ("failed", "all_reduce_wrong", {"backend": backend, "value": bad[0]["value"],
                                                   "expected": bad[0]["expected"]})
        last_err = errors[-1] if errors else ""
        if not last_err.strip():
            return ("failed", "all_reduce_no_output", {"backend": backend})
        return ("failed", "all_reduce_failed", {"backend": backend, "error": last_err.strip()[:300]})


def check_all_reduce(backend: str, world: int = 2, timeout_s: float = DIST_TIMEOUT_S,
                     started: DistRun | None = None) -> tuple:
    """The all_reduce check: collect the ranks started early (``started``), else spawn them now.
    A spawned group whose port was taken meanwhile is tried once more. Under Wine, gloo that
    cannot move data is a gap of Wine's networking, not of the PyTorch checked: skipped, saying so."""
    run = started or DistRun.spawn(backend, world, timeout_s)
    out = run.collect()
    if run.mode == "spawn" and out[1] == "all_reduce_failed" and "address already in use" in str(out[2]).lower():
        out = DistRun.spawn(backend, world, timeout_s).collect()
    # (a wrong sum is no transport gap: data did arrive)
    if out[0] == "failed" and out[1] != "all_reduce_wrong" and backend == "gloo" and under_wine():
        return ("skipped", "all_reduce_wine", {"backend": backend, "reason": {"code": out[1], "params": out[2]}})
    return out


# ------------------------------------------------------------- compile ahead (cold env)
#
# The training checks use torch.optim, which loads torch's compiler stack (torch._dynamo and the
# ~800 modules it imports, sympy among them: ~21 MB of Python source). Right after an install no
# .pyc file exists yet, and compiling them is most of a cold verification. While this process
# imports torch on one core, a helper compiles them on another: it imports sympy (pure Python,
# loaded whole, so exactly what is needed) and byte-compiles torch's compiler packages, writing
# the same .pyc files an import writes. It only starts when they are missing, and stops when the
# checks are done.

# What `import torch._dynamo` loads beyond `import torch` (measured with torch 2.13: 805 modules,
# 21 MB): most of torch/_dynamo, torch/_numpy and torch/utils/_sympy, half of torch/distributed
# and torch/onnx, and sympy with mpmath. The helper takes them roughly from the END of the
# import order while the probe's own import compiles from the front, so that the two meet in
# the middle instead of compiling the same files.
PRECOMPILE = ("dir:onnx", "dir:distributed", "dir:_numpy", "import:sympy", "dir:utils/_sympy", "dir:_dynamo")


def _stale(src: str) -> bool:
    import importlib.util

    try:
        return os.stat(importlib.util.cache_from_source(src)).st_mtime < os.stat(src).st_mtime
    except OSError:
        return True


def precompile(torch_dir: str) -> int:
    """The helper (``--precompile DIR``): byte-compile torch's compiler packages, import sympy."""
    import importlib
    import py_compile

    for item in PRECOMPILE:
        kind, _, name = item.partition(":")
        if kind == "import":
            try:
                importlib.import_module(name)  # pure Python, loaded whole: it writes its own .pyc files
            except Exception:  # not installed, or broken: the checks will say so
                pass
            continue
        for folder, subdirs, files in os.walk(os.path.join(torch_dir, name), topdown=True):
            subdirs[:] = sorted((d for d in subdirs if d not in ("__pycache__", "test", "tests")), reverse=True)
            for fname in sorted(files, reverse=True):
                src = os.path.join(folder, fname)
                if fname.endswith(".py") and _stale(src):
                    py_compile.compile(src, doraise=False, quiet=2)
    return 0


_HELPERS: list[subprocess.Popen] = []  # stopped at the latest when the probe leaves


def start_precompile() -> subprocess.Popen | None:
    """Start the helper when torch's compiler stack has no .pyc yet (a new environment)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")  # where, without importing it
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    torch_dir = os.path.dirname(spec.origin)
    marker = os.path.join(torch_dir, "_dynamo", "__init__.py")
    if not os.path.exists(marker) or not _stale(marker):
        return None
    try:
        helper = subprocess.Popen([sys.executable, "-I", os.path.abspath(__file__), "--precompile", torch_dir],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    _HELPERS.append(helper)
    return helper


def stop_precompile(helper: subprocess.Popen | None) -> None:
    if helper is not None:
        if helper.poll() is None:
            helper.kill()
        helper.wait()


# ------------------------------------------------------------------------- facts

def torch_facts(torch) -> dict:
    version = torch.__version__
    local = version.split("+", 1)[1] if "+" in str(version) else None
    f = {
        "version": str(version),
        "local_tag": local,
        "file": getattr(torch, "__file__", None),
        "cuda": getattr(torch.version, "cuda", None),
        "hip": getattr(torch.version, "hip", None),
        "xpu": getattr(torch.version, "xpu", None),
        "git_version": getattr(torch.version, "git_version", None),
        "debug": bool(getattr(torch.version, "debug", False)),
        "num_threads": torch.get_num_threads(),
    }
    try:
        f["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    except Exception:
        f["cpu_capability"] = None
    try:
        flags = torch._C._cuda_getArchFlags() if hasattr(torch._C, "_cuda_getArchFlags") else None
        f["arch_list"] = flags.split() if flags else []
    except Exception:
        f["arch_list"] = []
    return f


def backend_facts(torch) -> tuple[dict, dict]:
    """is_built / is_available per backend, and the warnings torch printed while checking."""
    b: dict[str, dict] = {"cpu": {"built": True, "available": True}}
    init_warnings: dict[str, list[str]] = {}
    hip = getattr(torch.version, "hip", None)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            cuda_avail = bool(torch.cuda.is_available())
        except Exception as exc:
            cuda_avail = False
            init_warnings.setdefault("cuda", []).append(f"{type(exc).__name__}: {exc}")
        try:
            count = torch.cuda.device_count() if cuda_avail else 0
        except Exception:
            count = 0
    for w in caught:
        init_warnings.setdefault("cuda", []).append(str(w.message).strip())
    built_cuda = bool(torch.backends.cuda.is_built()) and not hip
    b["cuda"] = {"built": built_cuda, "available": cuda_avail and not hip, "device_count": 0 if hip else count}
    b["rocm"] = {"built": bool(hip), "available": bool(hip) and cuda_avail, "device_count": count if hip else 0}

    mps = getattr(torch.backends, "mps", None)
    try:
        b["mps"] = {"built": bool(mps and mps.is_built()), "available": bool(mps and mps.is_available())}
    except Exception as exc:
        b["mps"] = {"built": False, "available": False}
        init_warnings.setdefault("mps", []).append(str(exc))
    xpu = getattr(torch, "xpu", None)
    try:
        built_xpu = bool(xpu and getattr(torch._C, "_has_xpu", False))
        avail_xpu = bool(xpu and xpu.is_available())
        b["xpu"] = {"built": built_xpu, "available": avail_xpu,
                    "device_count": xpu.device_count() if xpu is not None and avail_xpu else 0}
    except Exception as exc:
        b["xpu"] = {"built": False, "available": False, "device_count": 0}
        init_warnings.setdefault("xpu", []).append(str(exc))
    try:
        b["cudnn"] = {"built": bool(torch.backends.cudnn.is_available()),
                      "version": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None}
    except Exception as exc:  # e.g. "cuDNN version incompatibility ... LD_LIBRARY_PATH contains ..."
        b["cudnn"] = {"built": True, "version": None}
        init_warnings.setdefault("cudnn", []).append(f"{type(exc).__name__}: {exc}")
    return b, init_warnings


def device_facts(torch, backends: dict) -> list[dict]:
    devices = []
    if backends["cuda"]["available"] or backends["rocm"]["available"]:
        hip = backends["rocm"]["available"]
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            d = {"index": i, "backend": "rocm" if hip else "cuda", "name": p.name,
                 "total_memory": int(p.total_memory),
                 "multi_processors": getattr(p, "multi_processor_count", None)}
            if hip:
                arch = getattr(p, "gcnArchName", "") or ""
                d["gfx_target"] = arch.split(":")[0] or None
            else:
                d["compute_capability"] = f"{p.major}.{p.minor}"
            try:
                free, _total = torch.cuda.mem_get_info(i)
                d["free_memory"] = int(free)
            except Exception:
                d["free_memory"] = None
            devices.append(d)
    if backends["xpu"]["available"]:
        for i in range(torch.xpu.device_count()):
            p = torch.xpu.get_device_properties(i)
            devices.append({"index": i, "backend": "xpu", "name": p.name,
                            "total_memory": int(getattr(p, "total_memory", 0)) or None})
    if backends["mps"]["available"]:
        devices.append({"index": 0, "backend": "mps", "name": "Metal GPU (MPS)",
                        "total_memory": None})
    return devices


def where_torch() -> int:
    """Where `import torch` would load from when this Python starts normally (run WITHOUT -I,
    so PYTHONPATH, the user site and .pth files apply). Does not import torch."""
    import importlib.util

    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
    spec = importlib.util.find_spec("torch")
    origin = spec.origin if spec is not None else None
    via = None
    if origin:
        for p in sys.path:
            if p and os.path.abspath(origin).startswith(os.path.abspath(p) + os.sep):
                pp = os.environ.get("PYTHONPATH", "").split(os.pathsep)
                import site

                user = getattr(site, "USER_SITE", None)
                via = ("PYTHONPATH" if p in pp else "the user site-packages (pip install --user)"
                       if user and os.path.abspath(p) == os.path.abspath(user) else f"sys.path entry {p}")
                break
    emit({"event": "where", "torch_origin": origin, "via": via, "prefix": sys.prefix,
          "executable": sys.executable, "sys_path": sys.path})
    return 0


# ------------------------------------------------------------------------- main

# The accelerator checks, in order. ("arch_list" follows "accelerator" too: the assistant adds it.)
ACCEL_CHECKS = ("device_round_trip", "device_matmul", "device_conv2d", "device_training", "dnn_library",
                "device_autocast", "device_memory", "nccl_all_reduce")


def parse_args(argv: list[str]) -> Any:
    """The probe's options (the assistant's app.core.measure.verify passes them); the modes the probe runs
    itself in (a gloo rank, the torch lookup, the compiler warm-up) come first."""
    import argparse  # start-up: only here, once

    ap = argparse.ArgumentParser(prog="verify.py", description="The assistant's checks (JSON lines on stdout).")
    ap.add_argument("--dist-worker", nargs=4, metavar=("RANK", "WORLD", "PORT", "BACKEND"),
                    help="run as one rank of the distributed check")
    ap.add_argument("--where", action="store_true", help="say where torch is and stop")
    ap.add_argument("--precompile", metavar="TORCH_DIR", help="warm torch's compiler stack up and stop")
    ap.add_argument("--expect", default=None, help="the accelerator backend that must be usable")
    ap.add_argument("--facts-only", action="store_true")
    ap.add_argument("--no-dist", action="store_true")
    ap.add_argument("--no-precompile", action="store_true")
    ap.add_argument("--dist-mode", choices=("auto", "fork", "spawn"), default="auto")
    args, _unknown = ap.parse_known_args(argv)  # an option of a newer assistant is no failure
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.dist_worker:
        rank, world, port, backend = args.dist_worker
        return dist_worker(int(rank), int(world), int(port), backend)
    if args.where:
        return where_torch()
    if args.precompile is not None:
        return precompile(args.precompile)
    expect = args.expect
    facts_only = args.facts_only
    no_dist = args.no_dist
    fork = args.dist_mode != "spawn" and fork_is_safe()

    interp = interpreter_facts()
    params = {"version": interp["python_version"], "executable": interp["executable"]}
    step("python", "info", detail_text("python_at", params), interp, title_text("python"),
         {"code": "python_at", "params": params})

    # The gloo ranks start now: spawned ones import torch while this process does; so does the
    # helper that compiles torch's compiler stack in a new environment.
    gloo = DistRun.spawn("gloo") if not (facts_only or no_dist or fork) else None
    helper = start_precompile() if not (facts_only or args.no_precompile) else None
    step("torch_import", "running", title=title_text("torch_import"))
    t0 = time.monotonic()
    try:
        with warnings.catch_warnings(record=True) as import_warnings:
            warnings.simplefilter("always")
            import torch  # the whole point
    except ImportError as exc:
        if gloo is not None:
            gloo.abandon()
        stop_precompile(helper)
        missing = getattr(exc, "name", None) == "torch"
        emit({"event": "error", "type": type(exc).__name__, "message": str(exc),
              "code": "torch-missing" if missing else "torch-import-failed",
              "hint": ("PyTorch is not installed in this environment." if missing else
                       "PyTorch is installed but cannot be loaded; reinstalling it usually fixes this."),
              "interpreter": interp, "traceback": traceback.format_exc()[-3000:]})
        return 3
    except BaseException as exc:
        if gloo is not None:
            gloo.abandon()
        stop_precompile(helper)
        emit({"event": "error", "type": type(exc).__name__, "message": str(exc) or repr(exc),
              "code": "torch-import-failed",
              "hint": "PyTorch is installed but cannot be loaded; reinstalling it usually fixes this.",
              "interpreter": interp, "traceback": traceback.format_exc()[-3000:]})
        return 3
    import_s = time.monotonic() - t0
    if fork and not (facts_only or no_dist) and torch.distributed.is_available():
        # Forked now: after the import, before anything initialises an accelerator or a thread pool.
        try:
            gloo = DistRun.fork(torch, "gloo")
        except OSError:
            gloo = None  # spawned when the check's turn comes
    tf = torch_facts(torch)
    import_msgs = [str(w.message).strip() for w in import_warnings]
    checks = Checks()
    checks.add("torch_import", "passed", "torch_imported",
               {"version": tf["version"], "seconds": import_s, "folder": os.path.dirname(tf["file"] or "")},
               {"seconds": import_s, "warnings": import_msgs} if import_msgs else {"seconds": import_s})

    backends, init_warnings = backend_facts(torch)
    devices = device_facts(torch, backends)
    step("backends", "info", ", ".join(f"{k}: built={v['built']} available={v.get('available')}"
                                       for k, v in backends.items() if k != "cudnn"), backends, title_text("backends"))
    result = {"event": "result", "interpreter": interp, "torch": tf, "backends": backends,
              "devices": devices, "init_warnings": init_warnings, "import_warnings": import_msgs,
              "checks": checks.items, "compile_helper": helper is not None}
    if facts_only:
        result["loaded_libraries"] = loaded_libraries()
        result["duration_s"] = time.monotonic() - _T0
        emit(result)
        return 0

    _cpu_checks(torch, checks, no_dist, gloo)
    stop_precompile(helper)  # the compiler stack is loaded by now (the training check)
    result["accelerator"] = _accelerator(torch, checks, tf, backends, devices, init_warnings, interp, expect)
    result["checks"] = checks.items
    result["devices"] = devices
    result["loaded_libraries"] = loaded_libraries()
    result["duration_s"] = time.monotonic() - _T0
    emit(result)
    return 0


def _cpu_checks(torch, checks: Checks, no_dist: bool, gloo: DistRun | None = None) -> None:
    """The CPU checks; the gloo ranks (``gloo``, started early) run meanwhile and are collected last."""
    cpu_dtypes = [torch.float32]
    if gloo is not None:
        gloo.others_started_s = time.monotonic() - _T0
    checks.run("cpu_matmul", check_matmul, torch, "cpu", cpu_dtypes)
    checks.run("cpu_conv2d", check_conv2d, torch, "cpu", cpu_dtypes)
    checks.run("cpu_training", check_training, torch, "cpu")
    checks.run("cpu_autocast", check_autocast, torch, "cpu", torch.bfloat16)
    if no_dist:
        checks.skip("gloo_all_reduce", "dist_not_asked")
    elif not torch.distributed.is_available():
        if gloo is not None:
            gloo.abandon()
        checks.add("gloo_all_reduce", "failed", "dist_missing")
    else:
        checks.run("gloo_all_reduce", check_all_reduce, "gloo", 2, DIST_TIMEOUT_S, gloo)


def _accelerator(torch, checks: Checks, tf: dict, backends: dict, devices: list, init_warnings: dict,
                 interp: dict, expect: str | None) -> str | None:
    """The accelerator checks (or why they are skipped); the accelerator used."""
    accel = next((name for name in ("cuda", "rocm", "xpu", "mps") if backends[name]["available"]), None)
    if accel is None:
        code, params = _no_accel_reason(tf, backends, init_warnings, interp)
        status = "failed" if expect and expect != "cpu" else "skipped"
        checks.add("accelerator", status, code, params)
        for name in ACCEL_CHECKS:
            checks.skip(name, "no_accelerator", {"reason": {"code": code, "params": params}})
        return None
    dev = {"rocm": "cuda"}.get(accel, accel)
    names = ", ".join(d["name"] for d in devices if d["backend"] == accel)
    checks.add("accelerator", "passed", *_ran_on(accel, dev, names, devices))
    _accel_checks(torch, checks, accel, dev, backends)
    return accel


VISIBLE = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


def _ran_on(accel: str, dev: str, names: str, devices: list) -> tuple:
    """(code, params) of the accelerator check: the devices seen, the one the device checks run on
    (``cuda:0``: the first device PyTorch sees), and the variable that chose what it sees, if set."""
    first = next((d for d in devices if d["backend"] == accel), None)
    where = dev if dev == "mps" or first is None else f"{dev}:{first['index']}"
    params = {"backend": accel, "devices": names, "device": where, "name": first["name"] if first else names}
    chosen = [f"{k}={os.environ[k]}" for k in VISIBLE if k in os.environ]
    if chosen:
        return "accelerator_ran_on_visible", {**params, "visible": " ".join(chosen)}
    return "accelerator_ran_on", params


def bf16_native(torch) -> bool:
    """bf16 in hardware (Ampere+ / CDNA), not the emulation older GPUs report as "supported"."""
    try:
        return bool(torch.cuda.is_bf16_supported(including_emulation=False))
    except TypeError:  # older torch: no emulation parameter
        return bool(torch.cuda.is_bf16_supported())


def _no_accel_reason(tf: dict, b: dict, init_warnings: dict, interp: dict) -> tuple[str, dict]:
    """Why no accelerator is usable: (code, params)."""
    warn = "; ".join(init_warnings.get("cuda", []))[:300]
    if b["cuda"]["built"]:
        return ("cuda_unusable_said", {"cuda": tf["cuda"], "warning": warn}) if warn else \
            ("cuda_unusable", {"cuda": tf["cuda"]})
    if b["rocm"]["built"]:
        return ("rocm_unusable_said", {"hip": tf["hip"], "warning": warn}) if warn else \
            ("rocm_unusable", {"hip": tf["hip"]})
    if b["mps"]["built"]:
        return "mps_unusable", {"mac": interp.get("mac_ver") or "?"}
    if b["xpu"]["built"]:
        return "xpu_unusable", {}
    if tf.get("local_tag"):
        return "cpu_only_build_tagged", {"tag": tf["local_tag"]}
    return "cpu_only_build", {}


def _accel_checks(torch, checks: Checks, accel: str, dev: str, backends: dict) -> None:
    hip = accel == "rocm"
    gpu = accel in ("cuda", "rocm")
    n_gpu = backends["cuda"]["device_count"] if accel == "cuda" else backends["rocm"]["device_count"]
    nccl = gpu and n_gpu >= 2 and torch.distributed.is_available() and torch.distributed.is_nccl_available()
    # NCCL ranks need CUDA, which this process has initialised by now: fresh processes, started
    # before the device checks so that they run meanwhile.
    nccl_run = DistRun.spawn("nccl") if nccl else None
    if nccl_run is not None:
        nccl_run.others_started_s = time.monotonic() - _T0
    checks.run("device_round_trip", check_round_trip, torch, dev)
    dtypes = [torch.float32, torch.float16]
    if gpu and bf16_native(torch):
        dtypes.append(torch.bfloat16)
    checks.run("device_matmul", check_matmul, torch, dev, dtypes)
    checks.run("device_conv2d", check_conv2d, torch, dev, [torch.float32, torch.float16])
    checks.run("device_training", check_training, torch, dev)
    if gpu:
        checks.run("dnn_library", check_dnn, torch, dev, hip, title_params={"library": "MIOpen" if hip else "cuDNN"})
    else:
        checks.skip("dnn_library", "dnn_not_used", {"backend": accel})
    amp = torch.float16
    if gpu and bf16_native(torch):
        amp = torch.bfloat16
    checks.run("device_autocast", check_autocast, torch, dev, amp)
    checks.run("device_memory", check_memory, torch, dev)
    if nccl:
        checks.run("nccl_all_reduce", check_all_reduce, "nccl", 2, DIST_TIMEOUT_S, nccl_run,
                   title_params={"library": "RCCL" if hip else "NCCL"})
    elif gpu and n_gpu < 2:
        checks.skip("nccl_all_reduce", "nccl_needs_two_gpus", {"count": n_gpu})
    elif gpu:
        checks.skip("nccl_all_reduce", "nccl_missing")
    else:
        checks.skip("nccl_all_reduce", "nccl_not_for", {"backend": accel})


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except BaseException as exc:  # the probe protocol: an exception becomes an error event
        if isinstance(exc, SystemExit):
            raise
        emit({"event": "error", "type": type(exc).__name__, "message": str(exc) or repr(exc),
              "hint": "The verification probe itself failed; the traceback is in the log.",
              "traceback": traceback.format_exc()[-3000:]})
        code = 4
    for h in _HELPERS:  # a check that broke the probe left its compile helper running
        stop_precompile(h)
    sys.stdout.flush()
    sys.stderr.flush()
    # Leave at once: tearing down the thousands of modules torch (and, after a training step,
    # its compiler stack) loaded takes most of a second and tells the assistant nothing.
    os._exit(code)
