"""Estimated peak matmul throughput, so a speed-test result reads as "x % of what this
hardware can do".

CPU: cores x clock x FLOP per cycle per core, where FLOP per cycle comes from the widest
fused multiply-add the CPU's flags show (an FMA counts as 2 FLOP). Assumptions, stated in
every :class:`Peak`:

* x86 AVX-512 (``avx512f``): 2 FMA units x 16 fp32 lanes x 2 = 64 fp32 FLOP/cycle/core.
  Typical of server parts (Xeon Gold/Platinum, Zen 4/5 issue 2x256-bit and reach the same);
  parts with one 512-bit FMA unit reach half. AVX-512 code often runs below the nominal
  clock, so fractions of 50-80 % are normal.
* x86 AVX2 + FMA: 2 FMA units x 8 lanes x 2 = 32. AVX without FMA: 16. SSE2: 8.
* bf16: ``amx_bf16`` (Intel AMX tiles): 1024 FLOP/cycle/core (Intel: AMX-TMUL does 1024
  BF16 FLOP per cycle per core). ``avx512_bf16``: 2x the fp32 rate (VDPBF16PS). Without
  either, bf16 has no native path and the fp32 peak is used as the bound.
* fp16: ``amx_fp16``: 1024; ``avx512_fp16``: 2x fp32; otherwise the fp32 peak is the bound.
* arm64: NEON 128-bit: 4 fp32 lanes x 2 x FMA pipes: Apple M-series performance cores have
  4 pipes (32 FLOP/cycle), Neoverse V1/V2 4 (32), others 2 (16). Apple's Accelerate uses the
  AMX/SME matrix unit, which can exceed this NEON bound: a fraction above 1 is then honest.

The clock is the maximum frequency the OS reports (psutil / ``cpu MHz``), measured in the
assistant's process or taken from a SystemReport. Cores are physical cores, limited to the
number of threads the benchmark used.

GPUs: ``resources/gpu_peaks.toml`` (vendor datasheet numbers, each with its source).
"""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.base.errors import BadInput
from app.core.base.paths import resources_dir
from app.core.base.text import Msg, Text, msg, render
from app.core.detection.system import SystemReport

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DTYPES = ("fp32", "tf32", "fp16", "bf16")


@dataclass(frozen=True)
class Peak:
    device: str  # cpu | cuda | rocm | mps | xpu
    name: str
    gflops: dict[str, float] = field(default_factory=dict)  # dtype -> GFLOP/s; absent = unknown
    assumptions: tuple[Text, ...] = ()  # how the estimate was made, one sentence each
    source: str = ""

    def fraction(self, dtype: str, gflops: float) -> float | None:
        p = self.gflops.get(dtype)
        return gflops / p if p else None

    def to_dict(self) -> dict[str, Any]:
        """English assumptions (the JSON contract: rendered text), plus the texts by code
        (``assumption_texts``) that bring them back in any language."""
        return {"device": self.device, "name": self.name, "gflops": dict(self.gflops),
                "assumptions": [render(a) for a in self.assumptions],
                "assumption_texts": [_text_data(a) for a in self.assumptions],
                "source": self.source}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Peak:
        english = [str(a) for a in d.get("assumptions") or ()]
        coded = d.get("assumption_texts")
        texts: tuple[Text, ...] = tuple(english)
        if isinstance(coded, list) and len(coded) == len(english):
            texts = tuple(_text_of(x, e) for x, e in zip(coded, english, strict=True))
        return cls(device=str(d.get("device", "")), name=str(d.get("name", "")),
                   gflops={str(k): float(v) for k, v in (d.get("gflops") or {}).items()},
                   assumptions=texts, source=str(d.get("source", "")))


def _text_data(t: Text) -> Any:
    """A text as plain data that :func:`_text_of` turns back into the same text."""
    if isinstance(t, Msg):
        return {"code": t.code, "en": t.en, "args": {k: _text_data(v) if isinstance(v, Msg) else v
                                                     for k, v in t.args}}
    return render(t)


def _text_of(data: Any, fallback: str) -> Text:
    if not (isinstance(data, dict) and isinstance(data.get("code"), str) and isinstance(data.get("en"), str)):
        return fallback
    raw = data.get("args")
    args: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return Msg(data["code"], data["en"], tuple((str(k), _text_of(v, "") if isinstance(v, dict) else v)
                                               for k, v in args.items()))


def _fp32_flop_per_cycle(flags: set[str], arch: str, model: str) -> tuple[int, Msg]:
    arch = (arch or "").lower()
    if arch in ("arm64", "aarch64"):
        m = (model or "").lower()
        if "apple" in m or re.search(r"\bm[1-9]\b", m):
            return 32, msg("peak.apple", "Apple M-series performance core: 4 NEON FMA pipes x 4 fp32 lanes x 2")
        if any(x in m for x in ("neoverse-v", "neoverse v", "grace", "graviton3", "graviton4")):
            return 32, msg("peak.neoverse_v", "Neoverse V-class core: 4 x 128-bit FMA pipes x 4 lanes x 2")
        return 16, msg("peak.arm64", "generic arm64 core: 2 NEON FMA pipes x 4 fp32 lanes x 2")
    if "avx512f" in flags:
        return 64, msg("peak.avx512", "AVX-512: 2 FMA units x 16 fp32 lanes x 2 FLOP (typical server core)")
    if "avx2" in flags and "fma" in flags:
        return 32, msg("peak.avx2", "AVX2: 2 FMA units x 8 fp32 lanes x 2 FLOP")
    if "avx" in flags:
        return 16, msg("peak.avx", "AVX without FMA: 8-lane add + 8-lane multiply per cycle")
    return 8, msg("peak.sse2", "SSE2: 4-lane add + 4-lane multiply per cycle")


#: dtype -> the ways a CPU computes it, best first: (the CPU flag, "" for the fallback; FLOP/cycle/core,
#: or 0 for a multiple of the fp32 rate; that multiple; the note)
_HALF_RATES: dict[str, tuple[tuple[str, int, float, Msg], ...]] = {
    "bf16": (("amx_bf16", 1024, 0, msg("peak.bf16_amx", "bf16 via Intel AMX tiles: 1024 FLOP/cycle/core")),
             ("avx512_bf16", 0, 2, msg("peak.bf16_avx512", "bf16 via AVX512_BF16 dot products: 2x the fp32 rate")),
             ("", 0, 1, msg("peak.bf16_none", "no native bf16: the fp32 peak is used as the bound"))),
    "fp16": (("amx_fp16", 1024, 0, msg("peak.fp16_amx", "fp16 via Intel AMX-FP16 tiles: 1024 FLOP/cycle/core")),
             ("avx512_fp16", 0, 2, msg("peak.fp16_avx512", "fp16 via AVX512-FP16: 2x the fp32 rate")),
             ("", 0, 1, msg("peak.fp16_none", "no native fp16: the fp32 peak is used as the bound"))),
}


def cpu_peak(*, cores: int, mhz: float, flags: Iterable[str] | None, arch: str = "x86_64", model: str = "",
             threads_used: int | None = None) -> Peak:
    """Peak GFLOP/s per dtype for ``cores`` cores at ``mhz`` with these CPU flags."""
    if not cores or cores < 1 or not mhz or mhz <= 0:
        raise BadInput("a CPU peak needs a core count and a clock frequency")
    flag_set = {f.lower() for f in flags or ()}
    n = min(cores, threads_used) if threads_used else cores
    fpc, why = _fp32_flop_per_cycle(flag_set, arch, model)
    ghz = mhz / 1000.0
    fp32 = n * ghz * fpc
    out = {"fp32": fp32}
    notes: list[Text] = [msg("peak.cpu_fp32", "{n} core(s) x {ghz:.2f} GHz x {fpc} fp32 FLOP/cycle ({why}) = "
                             "{fp32:.0f} GFLOP/s fp32", n=n, ghz=ghz, fpc=fpc, why=why, fp32=fp32)]
    for dtype, ways in _HALF_RATES.items():
        per_cycle, times, note = next((c, t, m) for flag, c, t, m in ways if not flag or flag in flag_set)
        out[dtype] = n * ghz * per_cycle if per_cycle else fp32 * times
        notes.append(note)
    notes.append(msg("peak.cpu_clock", "the clock is the OS-reported maximum; wide-vector code often runs slower, "
                     "so 50-80 % of this is a good result"))
    return Peak("cpu", model or "CPU", out, tuple(notes), "estimate from cores, clock and SIMD width")


def local_cpu() -> dict[str, Any]:
    """cores, mhz, flags, arch, model of THIS machine (stdlib + psutil; no subprocess)."""
    import platform

    info: dict[str, Any] = {"arch": platform.machine().lower(), "model": platform.processor() or "", "flags": set(),
                  "cores": None, "mhz": None}
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    m = re.search(r"^(?:flags|Features)\s*:\s*(.*)$", text, re.M)
    if m:
        info["flags"] = set(m.group(1).split())
    m = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    if m:
        info["model"] = m.group(1).strip()
    m = re.search(r"^cpu MHz\s*:\s*([0-9.]+)", text, re.M)
    if m:
        info["mhz"] = float(m.group(1))
    try:
        import psutil

        info["cores"] = psutil.cpu_count(logical=False) or psutil.cpu_count()
        f = psutil.cpu_freq()
        if f is not None:
            best = f.max or f.current
            if best:
                info["mhz"] = max(float(best), float(info["mhz"] or 0))
    except Exception:
        info["cores"] = info["cores"] or os.cpu_count()
    return info


def cpu_peak_for(report: SystemReport | None = None, threads_used: int | None = None,
                 flags_extra: Iterable[str] = ()) -> Peak | None:
    """The CPU peak of the machine a SystemReport describes (or of this one)."""
    info = local_cpu()
    cores, mhz, flags, arch, model = info["cores"], info["mhz"], set(info["flags"]), info["arch"], info["model"]
    if report is not None:
        c = report.cpu
        cores = c.cores or cores
        mhz = c.max_mhz or mhz
        flags = set(c.flags) | flags if c.flags else flags
        arch = report.arch or arch
        model = c.model or model
    flags |= set(flags_extra)
    if not cores or not mhz:
        return None
    return cpu_peak(cores=int(cores), mhz=float(mhz), flags=flags, arch=arch, model=model,
                    threads_used=threads_used)


@dataclass(frozen=True)
class GPUPeakRow:
    name: str
    match: tuple[str, ...]
    tflops: dict[str, float]
    source: str


def load_gpu_peaks(path: str | os.PathLike[str] | None = None) -> list[GPUPeakRow]:
    p = Path(path) if path else resources_dir() / "gpu_peaks.toml"
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"GPU peak table {p} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"GPU peak table {p} is not valid TOML: {exc}") from None
    rows = []
    for i, row in enumerate(data.get("gpu", [])):
        name = row.get("name")
        if not name or not row.get("match") or not row.get("source"):
            raise BadInput(f"GPU peak table {p}: entry {i + 1} ({name or '?'}) needs name, match and source")
        vals = {}
        for k in ("fp64", *DTYPES):
            if k in row:
                v = row[k]
                if not isinstance(v, (int, float)) or v <= 0:
                    raise BadInput(f"GPU peak table {p}: {name}.{k} must be a positive number")
                vals[k] = float(v)
        for pat in row["match"]:
            try:
                re.compile(pat)
            except re.error as exc:
                raise BadInput(f"GPU peak table {p}: {name} has a bad match pattern {pat!r}: {exc}") from None
        rows.append(GPUPeakRow(name, tuple(row["match"]), vals, row["source"]))
    return rows


def gpu_peak(device_name: str, device: str = "cuda", rows: list[GPUPeakRow] | None = None) -> Peak | None:
    """The table row whose pattern matches ``device_name`` best (the longest match)."""
    rows = load_gpu_peaks() if rows is None else rows
    best, best_len = None, 0
    for row in rows:
        for pat in row.match:
            m = re.search(pat, device_name.strip(), re.I)
            if m and len(pat) > best_len:
                best, best_len = row, len(pat)
    if best is None:
        return None
    return Peak(device, best.name, {k: v * 1000.0 for k, v in best.tflops.items() if k in DTYPES},
                (msg("peak.vendor", "vendor peak (dense; FP32 accumulation for fp16/bf16)"),), best.source)
