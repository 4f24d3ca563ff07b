"""NVIDIA: NVML (nvidia-ml-py) first, then ``nvidia-smi``, then the kernel module's version file.

Order and why:

1. **NVML** through ``pynvml`` (the nvidia-ml-py package): no process to start, exact values
   (driver version, the newest CUDA version the driver supports, per-GPU name, compute
   capability, memory). ``NVMLError_LibraryNotFound`` means there is no NVIDIA driver.
   ``TORCH_SETUP_NO_NVML=1`` turns this source off (tests use it to exercise nvidia-smi on
   machines where NVML would answer).
2. **nvidia-smi** ``--query-gpu=... --format=csv,noheader,nounits`` plus the plain table's
   header for the CUDA version; drivers older than the ``compute_cap`` field get a second
   query without it and a compute capability looked up from the GPU's name (the source is
   recorded). On WSL2 ``/usr/lib/wsl/lib/nvidia-smi`` is tried too.
3. ``/proc/driver/nvidia/version`` or ``/sys/module/nvidia/version``: the driver alone.

UUIDs and serial numbers are never read into the report.
"""
from __future__ import annotations

import ntpath
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.detection import Row, clamp_timeout, norm_bus, parser, read_text, record, run_tool, snippet, to_int
from app.core.detection.gpu_ids import Told, compat_or_none, nvidia_cc
from app.core.detection.jobs import Jobs, result_of
from app.core.detection.system import GPU, ProbeRecord

if TYPE_CHECKING:  # pragma: no cover
    from app.core.proc.runner import RunResult

QUERY_FIELDS = ("index", "name", "driver_version", "compute_cap", "memory.total", "pci.bus_id",
                "pci.device_id")
QUERY_FIELDS_OLD = tuple(f for f in QUERY_FIELDS if f != "compute_cap")

WSL_SMI = "/usr/lib/wsl/lib/nvidia-smi"


def windows_smi_paths(environ: Mapping[str, str] | None = None) -> list[str]:
    """Where NVIDIA's Windows drivers put nvidia-smi.exe: ``%SystemRoot%\\System32`` (DCH drivers)
    and ``NVIDIA Corporation\\NVSMI`` under the 64-bit Program Files (``%ProgramW6432%``, the same
    from a 32-bit process; else ``%ProgramFiles%``). From the environment: Windows need not be on C:."""
    from app.core.detection.windows import windows_folder

    out: list[str] = []
    root = windows_folder("SystemRoot", environ)
    if root:
        out.append(ntpath.join(root, "System32", "nvidia-smi.exe"))
    for var in ("ProgramW6432", "ProgramFiles"):
        folder = windows_folder(var, environ)
        if folder:
            out.append(ntpath.join(folder, "NVIDIA Corporation", "NVSMI", "nvidia-smi.exe"))
    return list(dict.fromkeys(out))


_NA = {"", "n/a", "[n/a]", "[not supported]", "not supported", "[unknown error]", "unknown",
       "[insufficient permissions]", "[gpu is lost]", "[requested functionality has been deprecated]"}


def _clean(value: str | None) -> str | None:
    if value is None:
        return None
    v = value.strip()
    return None if v.lower() in _NA else v


# ------------------------------------------------------------------------- parsers

def _query_row(parts: list[str], cols: list[str]) -> Row | None:
    """One GPU row of a ``--query-gpu`` CSV, or None when the line does not look like one."""
    row: Row = {c: _clean(parts[i]) if i < len(parts) else None for i, c in enumerate(cols)}
    name = row.get("name")
    if "name" in cols and (not name or len(name) > 96 or (":" in name and "failed" in name.lower())):
        return None
    driver = row.get("driver_version")
    if driver is not None and not re.fullmatch(r"\d+(\.\d+){1,3}", driver):
        return None
    cc = row.get("compute_cap")
    if cc is not None and not re.fullmatch(r"\d{1,2}\.\d{1,2}", cc):
        return None
    if row.get("index") is not None and not re.fullmatch(r"\d{1,4}", row["index"]):
        return None
    mem = row.get("memory.total")
    row["memory.total"] = (to_int(mem.split()[0]) if mem.split() else None) if mem is not None else None
    if "name" not in cols and cc is None and driver is None:
        return None
    row["index"] = int(row["index"]) if row.get("index") is not None else None
    return row


_DECIMAL_RE = re.compile(r"\d\.\d")  # "has a number like 8.6": the same answer as \d+\.\d+, in linear time


def _drop_unit(part: str) -> str:
    """``"memory.total [MiB]"`` -> ``"memory.total"``: from the first ``[`` on, when the part ends in ``]``."""
    if not part.endswith("]"):
        return part
    i = part.find("[")
    return part if i == -1 else part[:i].rstrip()


@parser(list)
def parse_query_csv(text: str, fields: tuple[str, ...] | list[str] = QUERY_FIELDS) -> list[Row]:
    """Rows of ``nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]``.

    A header line (``--format=csv`` without ``noheader``) overrides ``fields``; unit suffixes
    (``" [MiB]"``, ``" MiB"``) are dropped. Each row is a dict keyed by field name with
    ``None`` for N/A values. Lines that do not look like a GPU row are skipped, so garbage
    yields ``[]``.
    """
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    cols = [str(f).strip() for f in fields]
    rows: list[Row] = []
    for ln in lines:
        parts = [p.strip() for p in ln.split(",")]
        lowered = [_drop_unit(p).strip().lower() for p in parts]
        if ("name" in lowered or "compute_cap" in lowered or "driver_version" in lowered) \
                and not any(_DECIMAL_RE.search(p) for p in parts if p.lower() not in ("compute_cap",)):
            cols = lowered  # a header line
            continue
        if len(parts) < min(2, len(cols)) or len(parts) > len(cols):
            continue
        row = _query_row(parts, cols)
        if row is not None:
            rows.append(row)
    return rows


@parser(dict)
def parse_smi_header(text: str) -> dict[str, str]:
    """``{"smi_version", "driver_version", "cuda_version"}`` from plain ``nvidia-smi``'s banner.

    Handles the classic ``Driver Version: X  CUDA Version: Y`` and the R610+ form
    ``KMD Version: X  CUDA UMD Version: Y``. Missing values are left out.
    """
    out: dict[str, str] = {}
    for ln in (text or "").splitlines()[:12]:
        m = re.search(r"NVIDIA-SMI\s+(\d+(?:\.\d+)+)", ln)
        if m:
            out["smi_version"] = m.group(1)
        m = re.search(r"(?:Driver|KMD) Version:\s*(\d+(?:\.\d+)+)", ln)
        if m:
            out["driver_version"] = m.group(1)
        m = re.search(r"CUDA (?:UMD )?Version:\s*(\d+\.\d+)", ln)
        if m:
            out["cuda_version"] = m.group(1)
    return out


_MODES = ("On", "Off", "WDDM", "TCC", "MCDM")
_BUS_ID_RE = re.compile(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]")
# (?<!\d): a match starts only where a run of digits starts; without it a long run of digits
# costs quadratic time (each start re-reads the run).
_MEM_RE = re.compile(r"(?<!\d)(\d{1,12})MiB\s*/\s*(\d{1,12})MiB")


def _smi_row(line: str) -> tuple[int, str, str] | None:
    """``|   0  NVIDIA GeForce RTX 3090     On  |   00000000:01:00.0 Off |`` -> (0, name, bus).

    Read by splitting on ``|`` and white space: linear in the line (the regex this replaces,
    ``\\s+(.+?)\\s+(On|Off|...)``, took 17.8 s on one 1.5 KB line)."""
    if not line.startswith("|"):
        return None
    cells = line.split("|", 3)
    if len(cells) < 3:
        return None
    words = cells[1].split()
    index_ok = words and words[0].isascii() and words[0].isdigit() and len(words[0]) <= 9
    if len(words) < 3 or not index_ok or words[-1] not in _MODES:
        return None
    if not cells[1][:1].isspace() or not cells[2][:1].isspace():
        return None
    bus = _BUS_ID_RE.match(cells[2].lstrip())
    if bus is None:
        return None
    first = cells[1].index(words[0]) + len(words[0])
    last = cells[1].rindex(words[-1])
    return int(words[0]), cells[1][first:last].strip(), bus.group(0)


@parser(list)
def parse_smi_table(text: str) -> list[Row]:
    """GPU rows of plain ``nvidia-smi``: ``{"index", "name", "bus", "memory_mb", "truncated"}``.

    Names longer than the column end in ``...`` there (``truncated`` True). The MIG and
    process sections are ignored.
    """
    rows: list[Row] = []
    lines = (text or "").splitlines()
    for i, ln in enumerate(lines):
        row = _smi_row(ln.strip())
        if row is None:
            continue
        index, name, bus = row
        mem = None
        if i + 1 < len(lines):
            mm = _MEM_RE.search(lines[i + 1])
            if mm:
                mem = int(mm.group(2))
        rows.append({"index": index, "name": name, "bus": norm_bus(bus),
                     "memory_mb": mem, "truncated": name.endswith("...")})
    return rows


# What nvidia-smi / NVML print when something is wrong, and what it means in plain words.
_SMI_ERRORS = (
    ("driver/library version mismatch", "error",
     "the NVIDIA driver and its library do not match (usually after a driver update without "
     "a reboot): reboot the computer"),
    ("couldn't communicate with the nvidia driver", "error",
     "nvidia-smi cannot talk to the NVIDIA driver: the driver is not loaded (not installed, "
     "not rebuilt after a kernel update, or blocked by Secure Boot)"),
    ("driver not loaded", "error",
     "the NVIDIA driver is not loaded"),
    ("no devices were found", "empty",
     "the NVIDIA driver is loaded but found no usable GPU (check that the card is seated, "
     "powered, and, for new cards, that Above-4G decoding / Resizable BAR is enabled)"),
    ("insufficient permissions", "error",
     "no permission to talk to the NVIDIA driver (is the user in the 'video' group?)"),
    ("unable to determine the device handle", "error",
     "a GPU is present but the driver cannot reach it (the GPU may have fallen off the bus: "
     "see dmesg, then reboot)"),
    ("gpu is lost", "error", "a GPU has fallen off the bus: reboot, and check power and cooling"),
    ("is not a valid field to query", "error", "this driver's nvidia-smi does not know a "
     "queried field"),
    ("nvml: not found", "not-found", "the NVIDIA management library is missing"),
    ("failed to initialize nvml", "error", "nvidia-smi could not start the NVIDIA management "
     "library"),
)


@parser(lambda: None)
def classify_smi_error(text: str) -> tuple[str, str] | None:
    """``(status, plain words)`` for a known nvidia-smi/NVML failure text, else None."""
    low = (text or "").lower()
    for needle, status, words in _SMI_ERRORS:
        if needle in low:
            m = re.search(r"NVML library version:\s*(\d+(?:\.\d+)+)", text or "")
            if m and "mismatch" in needle:
                words += f" (the library is {m.group(1)})"
            return status, words
    return None


@parser(lambda: None)
def parse_proc_driver_version(text: str) -> str | None:
    """The driver version from ``/proc/driver/nvidia/version`` or ``/sys/module/nvidia/version``."""
    t = text or ""
    m = re.search(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)", t)
    if m:
        return m.group(1)
    stripped = t.strip()
    if re.fullmatch(r"\d+\.\d+(\.\d+)?", stripped):
        return stripped
    return None


def cuda_version_from_int(value: object) -> str | None:
    """NVML's ``nvmlSystemGetCudaDriverVersion`` integer (12040) -> ``"12.4"``."""
    try:
        v = int(value)  # type: ignore[call-overload]  # NVML hands an int; garbage is caught
    except (TypeError, ValueError):
        return None
    if v <= 0:
        return None
    return f"{v // 1000}.{(v % 1000) // 10}"


def cc_from_name(name: str | None, pci_id: str | None = None) -> str | None:
    """The compute capability of a GPU its driver did not report it for (drivers older than the
    ``compute_cap`` field), told from its PCI id or name (:mod:`app.core.detection.gpu_ids`); None when unknown."""
    told = cc_told(name, pci_id)
    return told.value if told is not None else None


def cc_told(name: str | None, pci_id: str | None = None) -> Told | None:
    return nvidia_cc(compat_or_none(), pci_id=pci_id, name=name)


# ------------------------------------------------------------------------- probes

@dataclass
class NvidiaFindings:
    gpus: list[tuple[GPU, str | None]] = field(default_factory=list)  # (gpu, bus address)
    driver_version: str | None = None
    cuda_version: str | None = None
    smi_path: str | None = None
    smi_version: str | None = None
    records: list[ProbeRecord] = field(default_factory=list)


def nvml_disabled(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get("TORCH_SETUP_NO_NVML", "").strip().lower() not in ("", "0", "false", "no")


def _text(v: object) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _nvml_start_error(exc: Exception) -> tuple[str, str]:
    """(status, plain words) for NVML failing to start."""
    cls = type(exc).__name__
    if "LibraryNotFound" in cls:
        return "not-found", "no NVIDIA driver (the NVML library libnvidia-ml was not found)"
    if "DriverNotLoaded" in cls:
        return "error", "the NVIDIA driver is installed but not loaded"
    if "LibRmVersionMismatch" in cls:
        return "error", ("the NVIDIA driver and its library do not match (usually after a driver update without a "
                         "reboot): reboot the computer")
    if "NoPermission" in cls:
        return "error", "no permission to talk to the NVIDIA driver"
    return "error", f"NVML could not start: {cls}: {snippet(str(exc))}"


def _nvml_cuda(nvml: Any) -> str | None:
    for fn_name in ("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"):
        fn = getattr(nvml, fn_name, None)
        if fn is None:
            continue
        try:
            return cuda_version_from_int(fn())
        except Exception:
            continue
    return None


def _nvml_gpu(nvml: Any, h: object, i: int, driver: str | None) -> tuple[GPU, str | None]:
    """One GPU from its NVML handle; each field it cannot read stays unknown."""
    name = "NVIDIA GPU"
    try:
        name = _text(nvml.nvmlDeviceGetName(h))
    except Exception:
        pass
    cc: str | None
    try:
        major, minor = nvml.nvmlDeviceGetCudaComputeCapability(h)
        cc = f"{int(major)}.{int(minor)}"
    except Exception:
        cc = None
    mem = None
    try:
        mem = int(nvml.nvmlDeviceGetMemoryInfo(h).total) // (1024 * 1024)
    except Exception:
        pass
    bus = pci = None
    try:
        info = nvml.nvmlDeviceGetPciInfo(h)
        bus = norm_bus(_text(getattr(info, "busId", "") or getattr(info, "busIdLegacy", "")))
        dev = int(getattr(info, "pciDeviceId", 0))
        if dev:
            pci = f"{dev & 0xFFFF:04x}:{(dev >> 16) & 0xFFFF:04x}"
    except Exception:
        pass
    cc = cc or cc_from_name(name, pci)
    return (GPU(vendor="nvidia", name=name, driver_version=driver, compute_capability=cc, memory_mb=mem,
                integrated=_nv_integrated(name), index=i, pci_id=pci, source="nvml"), bus)


def _nvml_read(nvml: Any, findings: NvidiaFindings, started: float) -> None:
    driver = None
    try:
        driver = _text(nvml.nvmlSystemGetDriverVersion())
    except Exception:
        pass
    cuda = _nvml_cuda(nvml)
    count = int(nvml.nvmlDeviceGetCount())
    problems = []
    for i in range(count):
        try:
            h = nvml.nvmlDeviceGetHandleByIndex(i)
        except Exception as exc:
            problems.append(f"GPU {i}: {type(exc).__name__}")
            continue
        findings.gpus.append(_nvml_gpu(nvml, h, i, driver))
    findings.driver_version = driver
    findings.cuda_version = cuda
    detail = f"driver {driver or '?'}, CUDA {cuda or '?'}, {count} GPU(s)"
    if problems:
        detail += "; could not read " + ", ".join(problems)
    findings.records.append(record("nvml", "ok" if count else "empty", detail, started))


def probe_nvml(findings: NvidiaFindings) -> bool:
    """Fill ``findings`` from NVML; True when NVML answered with at least the driver."""
    started = time.monotonic()
    if nvml_disabled():
        findings.records.append(record("nvml", "skipped", "turned off by TORCH_SETUP_NO_NVML", started))
        return False
    try:
        import pynvml  # nvidia-ml-py; only when detecting (start-up speed)
    except Exception as exc:  # ImportError, or a broken install
        findings.records.append(record("nvml", "not-found", f"nvidia-ml-py is not installed ({type(exc).__name__})",
                                       started))
        return False
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        status, words = _nvml_start_error(exc)
        findings.records.append(record("nvml", status, words, started))
        return False
    try:
        _nvml_read(pynvml, findings, started)
        return True
    except Exception as exc:
        findings.records.append(record("nvml", "error", f"{type(exc).__name__}: {snippet(str(exc))}", started))
        return False
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def _nv_integrated(name: str) -> bool:
    # Tegra / Jetson and GB10-style unified-memory parts share memory with the CPU.
    return bool(re.search(r"Orin|Xavier|Tegra|Jetson|Thor", name or "", re.IGNORECASE))


def smi_candidates(*, wsl: bool, family: str | None,
                   which: Callable[[str], str | None] | None = None) -> list[str]:
    from app.core.proc.runner import which as _which

    which = which or _which
    found: list[str] = []
    p = which("nvidia-smi")
    if p:
        found.append(p)
    if wsl and os.path.exists(WSL_SMI):
        found.append(WSL_SMI)
    if family == "windows":
        found.extend(c for c in windows_smi_paths() if os.path.exists(c))
    seen: set[str] = set()
    out: list[str] = []
    for c in found:
        key = os.path.realpath(c)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _smi_query(smi: str, t: float) -> tuple[RunResult, ProbeRecord | None, tuple[str, ...], list[str]]:
    """``nvidia-smi --query-gpu``: (result, record when it gave no output, the fields asked, argv)."""
    argv = [smi, "--query-gpu=" + ",".join(QUERY_FIELDS), "--format=csv,noheader,nounits"]
    res, rec = run_tool("nvidia-smi", argv, t)
    if rec is None and "is not a valid field" in (res.stdout + res.stderr):
        # Drivers before compute_cap existed (R510 era): ask again without it.
        argv = [smi, "--query-gpu=" + ",".join(QUERY_FIELDS_OLD), "--format=csv,noheader,nounits"]
        res, rec = run_tool("nvidia-smi", argv, t)
        return res, rec, QUERY_FIELDS_OLD, argv
    return res, rec, QUERY_FIELDS, argv


def _no_gpu_list(known: tuple[str, str] | None, out: str, res: RunResult) -> tuple[str, str]:
    """(status, detail) when nvidia-smi listed no GPU."""
    if known:
        return known[0], f"{known[1]} [nvidia-smi said: {snippet(out, 120)}]"
    if not out.strip():
        return "empty", f"nvidia-smi printed nothing ({res.describe()})"
    return "garbage", f"nvidia-smi printed output that is not a GPU list ({res.describe()}): {snippet(out)}"


def _smi_gpus(findings: NvidiaFindings, rows: list[Row], table_rows: list[Row], driver: str | None) -> list[str]:
    """Add a GPU per row (the plain table fills bus and memory); the compute capabilities guessed by name."""
    table = {r["index"]: r for r in table_rows}
    guessed = []
    for n, r in enumerate(rows):
        name = r.get("name") or "NVIDIA GPU"
        idx = r.get("index") if r.get("index") is not None else n
        bus = norm_bus(r.get("pci.bus_id")) or (table.get(idx) or {}).get("bus")
        mem = r.get("memory.total") or (table.get(idx) or {}).get("memory_mb")
        pci = None
        dev = to_int(r.get("pci.device_id"))
        if dev:
            pci = f"{dev & 0xFFFF:04x}:{(dev >> 16) & 0xFFFF:04x}"
        cc = r.get("compute_cap")
        if cc is None:
            told = cc_told(name, pci)
            if told is not None:
                cc = told.value
                guessed.append(f"{name}: {told} (source: {told.source})")
        findings.gpus.append((GPU(vendor="nvidia", name=name, driver_version=r.get("driver_version") or driver,
                                  compute_capability=cc, memory_mb=mem, integrated=_nv_integrated(name),
                                  index=idx, pci_id=pci, source="nvidia-smi"), bus))
    return guessed


def probe_smi(findings: NvidiaFindings, smi: str, timeout_s: float) -> bool:
    """Ask one nvidia-smi (the plain table and the query side by side); True when it listed GPUs."""
    t = clamp_timeout(timeout_s)
    started = time.monotonic()
    jobs = Jobs("nvidia-smi")
    plain = jobs.start("plain", lambda: run_tool("nvidia-smi", [smi], t))
    res, rec, fields, argv = _smi_query(smi, t)
    jobs.wait(time.monotonic() + t + 5)
    got = result_of(plain)
    plain_out = got[0].stdout if got is not None and got[1] is None else None
    findings.smi_path = smi
    header = parse_smi_header(plain_out) if plain_out is not None else {}
    findings.smi_version = header.get("smi_version") or findings.smi_version
    findings.cuda_version = header.get("cuda_version") or findings.cuda_version
    if rec is not None:  # not found / timed out / killed
        if rec.status == "timeout":
            rec = ProbeRecord(rec.name, "timeout", f"nvidia-smi timed out: {smi} did not answer within {t:.0f} s "
                              "and was stopped (the NVIDIA driver may be hung)", rec.duration_ms, rec.command)
        findings.records.append(rec)
        return False
    out = res.stdout + ("\n" + res.stderr if res.stderr else "")
    known = classify_smi_error(out)
    rows = parse_query_csv(res.stdout, fields)  # even on a non-zero exit: one lost GPU fails the call
    table_rows = parse_smi_table(plain_out) if plain_out is not None else []
    if not rows and table_rows and not known:
        # The query form failed but the plain table is fine: names (maybe cut short), bus, memory.
        rows = [{"index": r["index"], "name": r["name"], "memory.total": r["memory_mb"], "pci.bus_id": r["bus"]}
                for r in table_rows]
        findings.records.append(record("nvidia-smi-query", "garbage" if out.strip() else "empty",
                                       f"--query-gpu gave no GPU list ({res.describe()}): {snippet(out, 120)}; "
                                       "using the plain nvidia-smi table instead", started, argv))
    if not rows:
        findings.records.append(record("nvidia-smi", *_no_gpu_list(known, out, res), started, argv))
        return False
    driver = next((r.get("driver_version") for r in rows if r.get("driver_version")), None) \
        or header.get("driver_version")
    guessed = _smi_gpus(findings, rows, table_rows, driver)
    findings.driver_version = findings.driver_version or driver
    detail = f"{len(rows)} GPU(s), driver {driver or '?'}"
    if findings.cuda_version:
        detail += f", CUDA {findings.cuda_version}"
    if guessed:
        detail += "; this driver does not report the compute capability: " + "; ".join(guessed)
    elif any(g.compute_capability is None for g, _ in findings.gpus):
        detail += "; compute capability unknown for some GPUs"
    if known:
        detail += f"; nvidia-smi also said: {known[1]}"
    elif res.returncode:
        detail += f"; nvidia-smi ended with {res.describe()}: {snippet(res.stderr or res.stdout, 120)}"
    findings.records.append(record("nvidia-smi", "ok", detail, started, argv))
    return True


def probe_driver_files(findings: NvidiaFindings, root: str = "/") -> bool:
    started = time.monotonic()
    for rel in ("proc/driver/nvidia/version", "sys/module/nvidia/version"):
        path = os.path.join(root, rel)
        text = read_text(path)
        if text is None:
            continue
        version = parse_proc_driver_version(text)
        if version:
            findings.driver_version = findings.driver_version or version
            findings.records.append(record("nvidia-driver-file", "ok",
                                           f"NVIDIA kernel module {version} is loaded ({path})", started))
            return True
        findings.records.append(record("nvidia-driver-file", "garbage",
                                       f"{path} does not hold a driver version: {snippet(text)}", started))
        return False
    findings.records.append(record("nvidia-driver-file", "not-found",
                                   "no NVIDIA kernel module is loaded (/proc/driver/nvidia/version "
                                   "and /sys/module/nvidia/version are absent)", started))
    return False


def detect_nvidia(timeout_s: float, *, wsl: bool = False, family: str | None = None,
                  deadline: float | None = None) -> NvidiaFindings:
    """Run the NVIDIA sources in order; never raises. ``deadline`` (time.monotonic) caps the
    nvidia-smi time limit so that a slow NVML plus a hung nvidia-smi still end in time."""
    f = NvidiaFindings()
    try:
        if probe_nvml(f) and f.gpus:
            return f
        if deadline is not None:
            timeout_s = max(0.5, min(clamp_timeout(timeout_s), deadline - time.monotonic()))
        smis = smi_candidates(wsl=wsl, family=family)
        if not smis:
            f.records.append(ProbeRecord("nvidia-smi", "not-found", "nvidia-smi is not installed "
                                         "(not on PATH" + (", not in /usr/lib/wsl/lib" if wsl else "")
                                         + ")", 0))
        for smi in smis:
            if probe_smi(f, smi, timeout_s):
                break
            if f.records and f.records[-1].status == "timeout":
                break  # a hung driver: another nvidia-smi would hang too
        if family == "linux" and not f.gpus:
            probe_driver_files(f)
    except Exception as exc:  # pragma: no cover - belt and braces
        f.records.append(ProbeRecord("nvidia", "error", f"{type(exc).__name__}: {snippet(str(exc))}"))
    return f
