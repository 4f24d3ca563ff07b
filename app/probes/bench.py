"""Bench probe: a matmul speed test inside the target environment.

``<env python> -I bench.py --device auto|cpu|cuda|mps|xpu --sizes 256,512 --dtypes fp32,bf16
--budget-s 60 [--repeats 5] [--warmup 2] [--cpu-flags "avx512f ..."] [--no-copy] [--no-cpu-baseline]
[--load-file PATH] [--spread-high 0.1]``

Stdlib + torch only; prints JSON lines (see verify.py): a ``step`` per measurement, then
one ``result``. Sizes are swept smallest first and interleaved across dtypes, so the time
budget cuts the largest sizes rather than whole dtypes. Each point: warm-up runs, then the
median of N timed runs, with device synchronisation (CUDA events on NVIDIA/AMD); every run's
time is kept (``times_s``). GFLOP/s = 2 n^3 / t.

After the sweep, while time is left in the budget, points are measured again when the machine
is busy (the assistant measures the other programs' CPU load and writes it to ``--load-file``:
"<share> <busy share>") or when a point's runs scatter by more than ``--spread-high`` (half the
inter-quartile range over the median); a point's result is then the median of all its runs.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import traceback
from typing import Any

DTYPES = ("fp32", "tf32", "fp16", "bf16")
DEFAULT_SIZES = (256, 512, 1024, 2048, 4096, 8192)
CPU_FP16_MAX = 256  # measured here: fp16 matmul on a CPU without native fp16 takes ~69 s at n=2048
CPU_BF16_SLOW_MAX = 1024  # without avx512_bf16 / AMX, bf16 is several times slower than fp32

MIN_POINT_S = 0.25  # timed runs of one point last at least this long when they are short...
MAX_RUNS = 50  # ...but never more runs than this
SPREAD_HIGH = 0.10  # re-measure a point whose runs scatter more (the assistant passes its own value)
MAX_REMEASURE_ROUNDS = 5
END_MARGIN_S = 0.5  # kept at the end of the budget for the result and the process's exit

_T0 = time.monotonic()
_STOP = {"requested": False}  # set by SIGTERM (the assistant's cancel): finish with a partial result


def _on_term(_signum, _frame) -> None:
    _STOP["requested"] = True


def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj, default=str) + "\n")
    sys.stdout.flush()


def step(name: str, status: str, detail: str = "", data: dict | None = None) -> None:
    ev: dict[str, Any] = {"event": "step", "name": name, "status": status, "detail": detail}
    if data:
        ev["data"] = data
    emit(ev)


def _numbers(text: str) -> list[int]:
    return [int(x) for x in text.replace(",", " ").split()]


def _names(text: str) -> list[str]:
    return [x.strip().lower() for x in text.replace(",", " ").split()]


def parse_args(argv: list[str]) -> dict[str, Any]:
    """The options the assistant passes (app.core.measure.bench), as a dict of their values."""
    import argparse  # start-up: only here, once

    ap = argparse.ArgumentParser(prog="bench.py", description="The assistant's speed test (JSON lines on stdout).")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--sizes", type=_numbers, default=list(DEFAULT_SIZES), help="matrix sizes, e.g. 1024,2048")
    ap.add_argument("--dtypes", type=_names, default=None, help="e.g. fp32,bf16")
    ap.add_argument("--budget-s", dest="budget_s", type=float, default=60.0)
    ap.add_argument("--repeats", type=lambda v: max(1, int(v)), default=5)
    ap.add_argument("--warmup", type=lambda v: max(0, int(v)), default=2)
    ap.add_argument("--cpu-flags", dest="cpu_flags", type=lambda v: set(v.split()), default=None)
    ap.add_argument("--load-file", dest="load_file", default=None)
    ap.add_argument("--spread-high", dest="spread_high", type=float, default=SPREAD_HIGH)
    ap.add_argument("--no-copy", dest="copy", action="store_false")
    ap.add_argument("--no-cpu-baseline", dest="cpu_baseline", action="store_false")
    return vars(ap.parse_args(argv))


def cpu_flags() -> set:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def pick_device(torch, want: str) -> str:
    if want != "auto":
        return want
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch, "xpu", None) is not None and torch.xpu.is_available():
        return "xpu"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def device_name(torch, device: str) -> str:
    if device == "cuda":
        return torch.cuda.get_device_name(0)
    if device == "xpu":
        return torch.xpu.get_device_name(0)
    if device == "mps":
        try:  # "Apple M2 Pro": the GPU is part of the chip (an Intel Mac's brand is its CPU's: not said)
            out = subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True,
                                 text=True, timeout=5).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            out = ""
        return out if out.startswith("Apple") else "Metal GPU (MPS)"
    import platform

    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return model or platform.processor() or platform.machine()


def sync(torch, device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()
    elif device == "xpu":
        torch.xpu.synchronize()


def free_memory(torch, device: str) -> int | None:
    if device == "cuda":
        return int(torch.cuda.mem_get_info()[0])
    if device == "xpu":
        try:
            return int(torch.xpu.mem_get_info()[0])
        except Exception:
            return None
    if device in ("cpu", "mps"):  # MPS shares system memory
        try:  # Linux: what can be had without swapping, the page cache that can be dropped included
            with open("/proc/meminfo", encoding="utf-8") as fh:
                for line in fh:
                    if line.startswith("MemAvailable:"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
        try:
            return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            return None
    return None


def dtype_support(torch, device: str, flags: set) -> dict:
    """dtype -> (supported, reason, max size or None)."""
    out: dict[str, tuple[bool, str, int | None]] = {"fp32": (True, "", None)}
    hip = bool(getattr(torch.version, "hip", None))
    if device == "cuda":
        major, _minor = torch.cuda.get_device_capability(0)
        if hip:
            out["tf32"] = (False, "TF32 matmul is an NVIDIA tensor-core mode; this is an AMD GPU", None)
        elif major >= 8:
            out["tf32"] = (True, "", None)
        else:
            out["tf32"] = (False, f"TF32 needs an NVIDIA GPU of compute capability 8.0+ (this one is {major}.x)", None)
        out["fp16"] = (True, "", None)
        try:
            bf16 = torch.cuda.is_bf16_supported(including_emulation=False)
        except TypeError:  # older torch
            bf16 = torch.cuda.is_bf16_supported()
        out["bf16"] = ((True, "", None) if bf16
                       else (False, "this GPU has no native bfloat16 (it needs compute capability 8.0+)", None))
    elif device == "cpu":
        out["tf32"] = (False, "TF32 is an NVIDIA GPU tensor-core format; CPUs do not have it", None)
        if flags & {"avx512_fp16", "amx_fp16", "asimdhp", "fphp"}:
            out["fp16"] = (True, "", None)
        else:
            out["fp16"] = (True, f"no native fp16 matmul on this CPU: it is emulated and extremely slow "
                                 f"(~69 s for one 2048 matmul measured on a Xeon), so only n <= {CPU_FP16_MAX}",
                           CPU_FP16_MAX)
        if flags & {"avx512_bf16", "amx_bf16", "bf16"}:
            out["bf16"] = (True, "", None)
        else:
            out["bf16"] = (True, f"no avx512_bf16 / AMX on this CPU: bf16 is slower than fp32 here, "
                                 f"so only n <= {CPU_BF16_SLOW_MAX}", CPU_BF16_SLOW_MAX)
    else:  # mps, xpu
        out["tf32"] = (False, f"TF32 is an NVIDIA tensor-core format, not available on {device}", None)
        out["fp16"] = (True, "", None)
        out["bf16"] = (True, "", None)
    return out


def torch_dtype(torch, name: str):
    return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]


def time_matmul(torch, device: str, n: int, dtype_name: str, warmup: int, repeats: int,
                max_seconds: float, deadline: float | None = None) -> dict:
    dt = torch_dtype(torch, dtype_name)
    tf32_before = None
    if device == "cuda" and not getattr(torch.version, "hip", None):
        tf32_before = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
    try:
        g = torch.Generator(device="cpu").manual_seed(n)
        a = torch.randn(n, n, generator=g).to(device=device, dtype=dt)
        b = torch.randn(n, n, generator=g).to(device=device, dtype=dt)
        sync(torch, device)
        # warm-up (first calls pick kernels, allocate workspaces, spin up threads). The timed
        # call is a plain torch.mm(a, b), allocation included, as users write `a @ b`.
        t_first = None
        for i in range(max(1, warmup)):
            if i and deadline is not None and time.monotonic() + 2 * (t_first or 0.0) > deadline:
                break  # one warm-up is enough when the budget is short: the time goes to the timed runs
            t0 = time.perf_counter()
            torch.mm(a, b)
            sync(torch, device)
            t_first = time.perf_counter() - t0
        # fewer timed runs when one run is long, so a point never blows the budget
        runs = repeats
        if t_first and t_first * repeats > max_seconds:
            runs = max(1, int(max_seconds / t_first))
        elif t_first and t_first * repeats < MIN_POINT_S:
            # short runs: take more of them (up to MAX_RUNS) so that the median is not at the
            # mercy of one scheduler hiccup on a busy machine
            runs = min(MAX_RUNS, max(repeats, int(MIN_POINT_S / max(t_first, 1e-6))))
        times: list[float] = []
        use_events = device == "cuda"
        for _ in range(runs):
            if _STOP["requested"] and times:
                break
            if deadline is not None and times and time.monotonic() + (t_first or 0.0) > deadline:
                break  # the next run would end after the time budget: keep the runs made
            if use_events:
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                torch.mm(a, b)
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) / 1000.0)
            else:
                t0 = time.perf_counter()
                torch.mm(a, b)
                sync(torch, device)
                times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        del a, b
        return {"n": n, "dtype": dtype_name, "device": device, "median_s": med, "runs": len(times),
                "min_s": min(times), "max_s": max(times), "times_s": times,
                "gflops": 2.0 * n ** 3 / med / 1e9, "spread": spread_of(times)}
    finally:
        if tf32_before is not None:
            torch.backends.cuda.matmul.allow_tf32 = tf32_before


def copy_bandwidth(torch, device: str, nbytes: int = 256 << 20) -> list[dict]:
    """Host -> device and device -> host copy bandwidth (pinned host memory when CUDA)."""
    out = []
    free = free_memory(torch, device)
    if free is not None:
        nbytes = int(min(nbytes, free // 4))
    n = max(1 << 20, nbytes // 4)
    variants = [("pageable", False)]
    if device == "cuda":
        variants.append(("pinned", True))
    for label, pinned in variants:
        host = torch.empty(n, dtype=torch.float32)
        if pinned:
            host = host.pin_memory()
        host.fill_(1.0)
        dev = torch.empty(n, dtype=torch.float32, device=device)
        for direction in ("host_to_device", "device_to_host"):
            times = []
            for i in range(4):
                sync(torch, device)
                t0 = time.perf_counter()
                if direction == "host_to_device":
                    dev.copy_(host, non_blocking=pinned)
                else:
                    host.copy_(dev, non_blocking=pinned)
                sync(torch, device)
                if i:  # the first copy is a warm-up
                    times.append(time.perf_counter() - t0)
            med = statistics.median(times)
            rec = {"direction": direction, "memory": label, "bytes": n * 4, "median_s": med,
                   "gb_per_s": n * 4 / med / 1e9}
            out.append(rec)
            step(f"copy {direction} {label}", "passed",
                 f"{direction.replace('_', ' ')} ({label} memory): {rec['gb_per_s']:.1f} GB/s", rec)
        del host, dev
    return out


def spread_of(times: list) -> float | None:
    """Half the inter-quartile range of the run times over their median (0.05 = ±5 %)."""
    ts = sorted(t for t in times if t > 0)
    if len(ts) < 3:
        return None
    q1, _, q3 = statistics.quantiles(ts, n=4, method="inclusive")
    med = statistics.median(ts)
    return (q3 - q1) / 2 / med if med > 0 else None


def machine_busy(load_file: str | None) -> bool:
    """What the assistant last measured: other programs use a large share of the CPU."""
    if not load_file:
        return False
    try:
        with open(load_file, encoding="utf-8") as fh:
            share, limit = (float(x) for x in fh.read().split()[:2])
    except (OSError, ValueError):
        return False
    return share >= limit


def merge_runs(rec: dict, more: dict) -> dict:
    """One point measured twice: the median (and min, max) of all its runs."""
    times = list(rec["times_s"]) + list(more["times_s"])
    med = statistics.median(times)
    n = rec["n"]
    return {**rec, "median_s": med, "runs": len(times), "min_s": min(times), "max_s": max(times), "times_s": times,
            "gflops": 2.0 * n ** 3 / med / 1e9, "spread": spread_of(times), "remeasured": rec.get("remeasured", 0) + 1}


def remeasure(torch, records: list, repeats: int, deadline: float, spread_high: float, load_file: str | None,
              label: str = "") -> int:
    """Measure points again while the budget lasts: all of them while the machine is busy,
    else those whose runs scatter. Returns the number of rounds."""
    rounds = 0
    while rounds < MAX_REMEASURE_ROUNDS and not _STOP["requested"]:
        busy = machine_busy(load_file)
        todo = [i for i, r in enumerate(records) if busy or (spread_of(r["times_s"]) or 0.0) > spread_high]
        done_any = False
        for i in sorted(todo, key=lambda i: records[i]["n"]):
            if _STOP["requested"]:
                break
            r = records[i]
            remaining = deadline - time.monotonic()
            if r["median_s"] * (repeats + 1) > remaining:
                continue
            try:
                more = time_matmul(torch, r["device"], r["n"], r["dtype"], 1, repeats, max(0.5, remaining * 0.5),
                                   deadline)
            except Exception:  # it worked before: keep what was measured
                continue
            records[i] = merge_runs(r, more)
            done_any = True
            step(f"{label}matmul {r['dtype']} n={r['n']}", "passed",
                 f"{records[i]['gflops']:.1f} GFLOP/s (measured again{' on a busy machine' if busy else ''}: median "
                 f"of {records[i]['runs']})", records[i])
        if not done_any:
            break
        rounds += 1
    return rounds


def sweep(torch, device: str, sizes: list[int], dtypes: list[str], support: dict, budget_s: float,
          warmup: int, repeats: int, deadline: float, label: str = "") -> tuple[list, list]:
    results: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    last: dict[str, dict] = {}  # dtype -> last measurement, to predict the next size's time
    elem = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}
    free = free_memory(torch, device)
    for n in sorted(set(sizes)):
        for d in dtypes:
            if _STOP["requested"]:
                return results, skipped
            ok, reason, max_n = support.get(d, (False, f"unknown dtype {d}", None))
            name = f"{label}matmul {d} n={n}"
            if not ok:
                if n == min(sizes):
                    skipped.append({"dtype": d, "n": None, "device": device, "reason": reason})
                    step(f"{label}matmul {d}", "skipped", reason)
                continue
            if max_n is not None and n > max_n:
                skipped.append({"dtype": d, "n": n, "device": device, "reason": reason})
                step(name, "skipped", reason)
                continue
            need = 3 * n * n * elem[d]
            if free is not None and need > free * 0.8:
                why = f"needs {need / 2**30:.1f} GiB, more than the free memory allows"
                skipped.append({"dtype": d, "n": n, "device": device, "reason": why})
                step(name, "skipped", why)
                continue
            remaining = deadline - time.monotonic()
            prev = last.get(d)
            predicted = None
            if prev is not None:
                per_run = prev["median_s"] * (n / prev["n"]) ** 3
                predicted = per_run * (max(1, warmup) + 1)  # at least one warm-up and one timed run
            if remaining <= 0 or (predicted is not None and predicted > remaining):
                why = (f"skipped to stay within the {budget_s:.0f} s time budget"
                       + (f" (about {predicted:.1f} s needed, {max(0.0, remaining):.1f} s left)" if predicted else ""))
                skipped.append({"dtype": d, "n": n, "device": device, "reason": why})
                step(name, "skipped", why)
                continue
            step(name, "running")
            try:
                rec = time_matmul(torch, device, n, d, warmup, repeats, max_seconds=max(0.5, remaining * 0.5),
                                  deadline=deadline)
            except Exception as exc:
                msg = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
                skipped.append({"dtype": d, "n": n, "device": device, "reason": f"failed: {msg[:300]}"})
                step(name, "failed", msg[:300])
                if "out of memory" in str(exc).lower() and device == "cuda":
                    torch.cuda.empty_cache()
                continue
            last[d] = rec
            results.append(rec)
            spread = f", ±{rec['spread'] * 100:.0f} %" if rec.get("spread") is not None else ""
            step(name, "passed", f"{rec['gflops']:.1f} GFLOP/s (median of {rec['runs']}: "
                                 f"{rec['median_s'] * 1000:.2f} ms{spread})", rec)
    return results, skipped


def main(argv: list[str]) -> int:
    opts = parse_args(argv)
    try:
        import signal

        signal.signal(signal.SIGTERM, _on_term)
    except (ImportError, ValueError, OSError, AttributeError):  # pragma: no cover - not the main thread
        pass
    import torch

    device = pick_device(torch, opts["device"])
    if device == "cuda" and not torch.cuda.is_available():
        emit({"event": "error", "type": "DeviceUnavailable", "message": "CUDA is not available in this PyTorch",
              "hint": "Run `torch-setup verify` / `torch-setup doctor` to see why; or bench --device cpu."})
        return 3
    if device == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        emit({"event": "error", "type": "DeviceUnavailable", "message": "MPS is not available in this PyTorch",
              "hint": "MPS needs Apple silicon and macOS 12.3+; run `torch-setup doctor`."})
        return 3
    if device == "xpu" and not (getattr(torch, "xpu", None) and torch.xpu.is_available()):
        emit({"event": "error", "type": "DeviceUnavailable", "message": "XPU is not available in this PyTorch",
              "hint": "Run `torch-setup doctor` to see why; or bench --device cpu."})
        return 3
    flags = opts["cpu_flags"] if opts["cpu_flags"] is not None else cpu_flags()
    support = dtype_support(torch, device, flags)
    dtypes = opts["dtypes"] or (["fp32", "tf32", "fp16", "bf16"] if device != "cpu" else ["fp32", "bf16", "fp16"])
    for d in dtypes:
        if d not in DTYPES:
            emit({"event": "error", "type": "BadInput", "message": f"unknown dtype {d!r}",
                  "hint": f"choose from {', '.join(DTYPES)}"})
            return 2
    name = device_name(torch, device)
    info = {"device": device, "device_name": name, "cpu_name": name if device == "cpu" else device_name(torch, "cpu"),
            "torch": torch.__version__,
            "threads": torch.get_num_threads(), "cuda": torch.version.cuda,
            "hip": getattr(torch.version, "hip", None)}
    if device == "cuda":
        major, minor = torch.cuda.get_device_capability(0)
        info["compute_capability"] = f"{major}.{minor}"
        info["device_count"] = torch.cuda.device_count()
        info["total_memory"] = torch.cuda.get_device_properties(0).total_memory
    step("device", "info", f"{device}: {name}", info)

    budget = opts["budget_s"]
    # The budget is the whole speed test as the user waits for it: it counts from this process's
    # start (importing torch and naming the devices included), and a moment is kept for the result.
    start = _T0
    deadline = start + budget - END_MARGIN_S
    copies: list[dict] = []
    cpu_results: list[dict] = []
    cpu_skipped: list[dict] = []
    if device != "cpu" and opts["copy"]:
        try:
            copies = copy_bandwidth(torch, device)
        except Exception as exc:
            step("copy", "failed", f"{type(exc).__name__}: {exc}"[:300])
    # the accelerator sweep gets most of the budget; a short CPU fp32 baseline gives the speedup
    accel_deadline = deadline - (min(15.0, budget * 0.2) if device != "cpu" and opts["cpu_baseline"] else 0.0)
    results, skipped = sweep(torch, device, opts["sizes"], dtypes, support, budget, opts["warmup"],
                             opts["repeats"], accel_deadline)
    if device != "cpu" and opts["cpu_baseline"] and not _STOP["requested"]:
        fp32_sizes = sorted({r["n"] for r in results if r["dtype"] in ("fp32", "tf32")})
        base_sizes = [n for n in fp32_sizes if n <= 2048][-2:] or sorted(opts["sizes"])[:1]
        cpu_support = dtype_support(torch, "cpu", flags)
        cpu_results, cpu_skipped = sweep(torch, "cpu", base_sizes, ["fp32"], cpu_support, budget,
                                         1, 3, deadline, label="cpu ")
    remeasured = remeasure(torch, results, opts["repeats"], deadline, opts["spread_high"], opts["load_file"])
    if cpu_results:
        remeasure(torch, cpu_results, 3, deadline, opts["spread_high"], opts["load_file"], label="cpu ")
    speedup = []
    for c in cpu_results:
        for r in results:
            if r["n"] == c["n"] and r["dtype"] in ("fp32", "tf32", "fp16", "bf16"):
                speedup.append({"n": c["n"], "dtype": r["dtype"], "cpu_gflops": c["gflops"],
                                "device_gflops": r["gflops"], "speedup": r["gflops"] / c["gflops"]})
    emit({"event": "result", **info, "results": results, "skipped": skipped, "cpu_results": cpu_results,
          "cpu_skipped": cpu_skipped, "speedup": speedup, "copy": copies, "budget_s": budget,
          "elapsed_s": time.monotonic() - start, "duration_s": time.monotonic() - _T0,
          "cancelled": _STOP["requested"], "remeasured": remeasured,
          "native_dtypes": {d: bool(ok and not why) for d, (ok, why, _cap) in support.items()},
          "budget_exhausted": any("time budget" in s["reason"] for s in skipped + cpu_skipped),
          "cpu_flags_used": sorted(f for f in flags if f.startswith(("avx", "amx", "fma", "neon", "asimd", "sve")))})
    return 0


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except BaseException as exc:
        if isinstance(exc, SystemExit) and not isinstance(exc.code, str):
            raise
        emit({"event": "error", "type": type(exc).__name__, "message": str(exc) or repr(exc),
              "hint": "The speed test itself failed; the traceback is in the log.",
              "traceback": traceback.format_exc()[-3000:]})
        code = 4
    sys.stdout.flush()
    sys.stderr.flush()
    # Leave at once: tearing down the thousands of modules torch (and, after a training step,
    # its compiler stack) loaded takes most of a second and tells the assistant nothing.
    os._exit(code)
