"""AMD GPUs: name and gfx target from rocminfo, amd-smi, rocm-smi, rocm_agent_enumerator, and
the kernel's KFD topology in sysfs (which needs no ROCm at all)."""
from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from app.core.detection import Row, hex_id, norm_bus, parser, read_text, record, run_tool, snippet, to_int
from app.core.detection.jobs import Jobs, result_of
from app.core.detection.system import GPU, ProbeRecord

if TYPE_CHECKING:  # pragma: no cover
    from app.core.proc.runner import RunResult

# AMD GPU targets that are APUs (integrated graphics sharing system memory).
# Source: LLVM "User Guide for AMDGPU Backend", table "AMDGPU Processors" (processors marked
# APU), llvm.org/docs/AMDGPUUsage.html. gfx940-942 (MI300A) are APUs too but are the main
# accelerator of their machine, so they are not marked integrated here.
AMD_APU_TARGETS_SOURCE = "llvm.org/docs/AMDGPUUsage.html (AMDGPU Processors, APU column)"
AMD_APU_TARGETS = frozenset({
    "gfx801", "gfx810", "gfx902", "gfx909", "gfx90c", "gfx1013", "gfx1033", "gfx1035", "gfx1036",
    "gfx1037", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
})
_APU_NAME_RE = re.compile(r"Radeon\s*(\(TM\)\s*)?(\d{3}M\s+)?Graphics$|Radeon Vega \d+ Graphics|"
                          r"Radeon \d{3}M\b|\bRadeon 8\d0S\b|Ryzen|Raphael|Rembrandt|Phoenix|Strix|"
                          r"Renoir|Cezanne|Picasso|Raven|Barcelo|Lucienne|Mendocino|Van Gogh|Hawk Point",
                          re.IGNORECASE)


def amd_is_integrated(gfx: str | None = None, name: str | None = None) -> bool:
    if gfx and gfx.lower().split(":")[0] in AMD_APU_TARGETS:
        return True
    return bool(name and _APU_NAME_RE.search(name.strip()))


def gfx_from_target_version(value: object) -> str | None:
    """KFD's ``gfx_target_version`` (110000, 90010, 90402) -> ``"gfx1100"``, ``"gfx90a"``, ``"gfx942"``."""
    v = to_int(value)
    if v is None or v <= 0:
        return None
    major, minor, step = v // 10000, (v // 100) % 100, v % 100
    if minor > 15 or step > 15 or major > 99:
        return None
    return f"gfx{major}{minor:x}{step:x}"


_GFX_RE = re.compile(r"\bgfx[0-9]{1,2}[0-9a-f]{2,3}\b", re.IGNORECASE)


def normalize_gfx(value: str | None) -> str | None:
    """rocm-smi prints the KFD target with decimal parts: gfx90a as ``gfx9010``
    (9, 0, 10) and gfx90c as ``gfx9012``; turn those into LLVM's names."""
    if not value:
        return None
    v = value.lower()
    d = v[3:] if v.startswith("gfx") else ""
    if d.isdigit():
        if d[0] == "9" and len(d) == 4 and int(d[2:]) >= 10:
            return f"gfx9{int(d[1]):x}{int(d[2:]):x}"
        if d[0] == "1" and len(d) == 5 and int(d[3:]) >= 10:
            return f"gfx{d[:2]}{int(d[2]):x}{int(d[3:]):x}"
    return v


# ------------------------------------------------------------------------- parsers

@parser(list)
def parse_rocminfo(text: str) -> list[Row]:
    """GPU agents of ``rocminfo``: ``{"gfx", "name", "memory_mb", "bus", "device_id", "node"}``."""
    agents: list[Row] = []
    cur: Row | None = None
    in_pool = False
    for raw in (text or "").splitlines():
        line = raw.rstrip()
        s = line.strip()
        if re.fullmatch(r"Agent \d+", s):
            cur = {"_pools": []}
            agents.append(cur)
            in_pool = False
            continue
        if cur is None or ":" not in s:
            continue
        key, _, value = s.partition(":")
        key, value = key.strip(), value.strip()
        indent = len(line) - len(line.lstrip())
        if indent <= 2:
            in_pool = False
            if key in ("Name", "Marketing Name", "Device Type", "Node", "BDFID", "Chip ID", "Vendor Name"):
                cur.setdefault(key, value)
            if key == "Pool Info":
                in_pool = True
        elif in_pool:
            if key == "Segment":
                cur["_pools"].append({"segment": value})
            elif key == "Size" and cur["_pools"]:
                cur["_pools"][-1].setdefault("size", value)
    out: list[Row] = []
    for a in agents:
        if a.get("Device Type", "").upper() != "GPU":
            continue
        gfx = a.get("Name", "")
        m = _GFX_RE.search(gfx)
        mem = None
        for p in a["_pools"]:
            if p.get("segment", "").startswith("GLOBAL") and "size" in p:
                kb = to_int(p["size"])
                if kb:
                    mem = kb // 1024
                    break
        bdf = to_int(a.get("BDFID"))
        chip = a.get("Chip ID", "")
        chip_hex = re.search(r"\(0x([0-9a-fA-F]+)\)", chip)
        out.append({
            "gfx": m.group(0).lower() if m else None,
            "name": a.get("Marketing Name") or None,
            "memory_mb": mem,
            "bus": norm_bus(bdf) if bdf else None,
            "device_id": hex_id(chip_hex.group(1)) if chip_hex else None,
            "node": to_int(a.get("Node")),
        })
    return out


@parser(lambda: None)
def parse_rock_version(text: str) -> str | None:
    m = re.search(r"ROCk module version\s+(\S+)\s+is loaded", text or "")
    return m.group(1) if m else None


def _indented_blocks(text: str, head_re: str) -> list[tuple[str, dict[str, str]]]:
    """``GPU: 0`` style blocks with ``KEY: value`` lines (any depth) flattened into a dict."""
    blocks: list[tuple[str, dict[str, str]]] = []
    cur: dict[str, str] | None = None
    for raw in (text or "").splitlines():
        if not raw.strip():
            continue
        if not raw[0].isspace():
            m = re.match(head_re, raw.strip())
            if m:
                cur = {}
                blocks.append((m.group(1), cur))
            else:
                cur = None
            continue
        if cur is None:
            continue
        key, sep, value = raw.strip().partition(":")
        if sep and value.strip():
            cur.setdefault(key.strip().upper(), value.strip())
    return blocks


@parser(list)
def parse_amd_smi_static(text: str) -> list[Row]:
    """``amd-smi static`` (text): ``{"index", "name", "device_id", "bus", "gfx"}`` per GPU."""
    out: list[Row] = []
    for idx, kv in _indented_blocks(text, r"^GPU:\s*(\d{1,9})$"):
        gfx = kv.get("TARGET_GRAPHICS_VERSION") or kv.get("GFX_VERSION")
        m = _GFX_RE.search(gfx or "")
        name = kv.get("MARKET_NAME")
        if name and name.upper() in ("N/A", "NA"):
            name = None
        out.append({"index": int(idx), "name": name, "device_id": hex_id(kv.get("DEVICE_ID")),
                    "bus": norm_bus(kv.get("BDF")), "gfx": m.group(0).lower() if m else None,
                    "vendor_id": hex_id(kv.get("VENDOR_ID"))})
    return out


@parser(list)
def parse_amd_smi_list(text: str) -> list[Row]:
    """``amd-smi list``: ``{"index", "bus"}`` per GPU (NIC entries are skipped; UUIDs dropped)."""
    return [{"index": int(idx), "bus": norm_bus(kv.get("BDF"))}
            for idx, kv in _indented_blocks(text, r"^GPU:\s*(\d{1,9})$")]


@parser(dict)
def parse_amd_smi_version(text: str) -> dict[str, str]:
    """``amd-smi version``: ``{"tool", "library", "rocm"}``."""
    out: dict[str, str] = {}
    for key, pat in (("tool", r"AMDSMI Tool:\s*([0-9][\w.+-]*)"),
                     ("library", r"AMDSMI Library version:\s*([0-9][\w.+-]*)"),
                     ("rocm", r"ROCm version:\s*([0-9][\w.+-]*)")):
        m = re.search(pat, text or "")
        if m:
            out[key] = m.group(1)
    return out


@parser(list)
def parse_rocm_smi_productname(text: str) -> list[Row]:
    """``rocm-smi --showproductname`` in its text, ``--csv`` or ``--json`` form:
    ``{"index", "series", "model", "gfx"}`` per card."""
    t = (text or "").strip()
    cards: dict[int, Row] = {}
    if t.startswith("{"):
        try:
            data = json.loads(t)
        except ValueError:
            data = None
        if isinstance(data, dict):
            for key, val in data.items():
                m = re.fullmatch(r"card(\d{1,9})", str(key))
                if m and isinstance(val, dict):
                    norm = {str(k).lower(): str(v) for k, v in val.items()}
                    g = _GFX_RE.search(norm.get("gfx version", ""))
                    cards[int(m.group(1))] = {"series": norm.get("card series"),
                                              "model": norm.get("card model"),
                                              "gfx": normalize_gfx(g.group(0)) if g else None}
    elif t.lower().startswith("device,"):
        lines = t.splitlines()
        header = [h.strip().lower() for h in lines[0].split(",")]
        for ln in lines[1:]:
            parts = ln.split(",")
            if len(parts) != len(header):
                continue
            row = dict(zip(header, (p.strip() for p in parts), strict=True))
            m = re.fullmatch(r"card(\d{1,9})", row.get("device", ""))
            if m:
                g = _GFX_RE.search(row.get("gfx version", ""))
                cards[int(m.group(1))] = {"series": row.get("card series"), "model": row.get("card model"),
                                          "gfx": normalize_gfx(g.group(0)) if g else None}
    else:
        for ln in t.splitlines():
            # [^:\s] first: a key run that may also be the spaces before it went quadratic
            m = re.match(r"GPU\[(\d{1,9})\]\s*:\s*([^:\s][^:]*):\s*(.*)$", ln.strip())
            if not m:
                continue
            card = cards.setdefault(int(m.group(1)), {"series": None, "model": None, "gfx": None})
            key, value = m.group(2).strip().lower(), m.group(3).strip()
            if key == "card series":
                card["series"] = value
            elif key == "card model":
                card["model"] = value
            elif key == "gfx version":
                g = _GFX_RE.search(value)
                card["gfx"] = normalize_gfx(g.group(0)) if g else None
    out: list[Row] = []
    for idx in sorted(cards):
        c = cards[idx]
        series = c.get("series")
        name = series
        if series:
            inner = _bracketed_with(series, ("Instinct", "Radeon"))
            if inner is not None:
                name = inner
            elif re.fullmatch(r"0x[0-9a-fA-F]+", series):
                name = None  # old rocm-smi prints only an id here
        out.append({"index": idx, "name": name, "model": c.get("model"), "gfx": c.get("gfx")})
    return out


def _bracketed_with(text: str, words: tuple[str, ...]) -> str | None:
    """The first ``[...]`` text holding one of ``words`` (``"0x74a1 [Instinct MI300X]"`` ->
    ``"Instinct MI300X"``); one pass, where a regex with two unbounded runs went quadratic."""
    start = 0
    while True:
        i = text.find("[", start)
        if i == -1:
            return None
        j = text.find("]", i)
        if j == -1:
            return None
        inside = text[i + 1:j]
        if any(w in inside for w in words):
            return inside
        start = j + 1


@parser(list)
def parse_rocm_agent_enumerator(text: str) -> list[str]:
    """GPU targets from ``rocm_agent_enumerator`` (the CPU placeholder ``gfx000`` is dropped)."""
    out: list[str] = []
    for ln in (text or "").splitlines():
        s = ln.strip().lower()
        if re.fullmatch(r"gfx[0-9]{1,2}[0-9a-f]{2,3}", s) and s != "gfx000":
            out.append(s)
    return out


@parser(dict)
def parse_kfd_properties(text: str) -> dict[str, int]:
    """``/sys/class/kfd/kfd/topology/nodes/N/properties``: ``key value`` lines -> ints."""
    out: dict[str, int] = {}
    for ln in (text or "").splitlines():
        parts = ln.split()
        if len(parts) == 2 and re.fullmatch(r"[a-z_0-9]+", parts[0]) and re.fullmatch(r"-?\d{1,18}", parts[1]):
            out[parts[0]] = int(parts[1])
    return out


# ------------------------------------------------------------------------- probes

@dataclass
class AmdFindings:
    gpus: list[tuple[GPU, str | None]] = field(default_factory=list)
    records: list[ProbeRecord] = field(default_factory=list)
    rocm_version: str | None = None
    kfd: dict[str, str] = field(default_factory=dict)  # bus -> gfx from sysfs
    tool_versions: dict[str, str] = field(default_factory=dict)


def read_kfd_topology(root: str = "/") -> dict[str, Row]:
    """bus -> {"gfx", "device_id"} for GPU nodes of the kernel's KFD topology (no ROCm needed)."""
    base = os.path.join(root, "sys/class/kfd/kfd/topology/nodes")
    try:
        nodes = sorted(os.listdir(base))
    except OSError:
        return {}
    out: dict[str, Row] = {}
    for n in nodes:
        props = parse_kfd_properties(read_text(os.path.join(base, n, "properties")) or "")
        if not props.get("simd_count"):
            continue  # a CPU node
        loc = props.get("location_id")
        domain = props.get("domain", 0)
        bus = None
        if loc is not None:
            b = norm_bus(loc)
            bus = f"{domain:04x}{b[4:]}" if b else None
        dev = props.get("device_id")
        out[bus if bus else f"node{n}"] = {"gfx": gfx_from_target_version(props.get("gfx_target_version")),
                                           "device_id": f"{dev:04x}" if dev else None}
    return out


def rocm_version_from_files(root: str = "/") -> str | None:
    rocm = os.environ.get("ROCM_PATH") or os.path.join(root, "opt/rocm")
    for rel in (".info/version", ".info/version-dev"):
        t = read_text(os.path.join(rocm, rel), 256)
        if t and re.match(r"\d+\.\d+", t.strip()):
            return t.strip().split("-")[0]
    return None


ROCM_TOOLS = ("rocminfo", "amd-smi", "rocm-smi", "rocm_agent_enumerator")
_ARGS = {"rocminfo": ("rocminfo",), "amd-smi": ("amd-smi", "static"), "amd-smi-version": ("amd-smi", "version"),
         "rocm-smi": ("rocm-smi", "--showproductname"), "rocm_agent_enumerator": ("rocm_agent_enumerator",)}
Answer = tuple[float, "RunResult", "ProbeRecord | None"]  # (when it started, result, record if it gave no output)


def _read_kfd(f: AmdFindings) -> None:
    started = time.monotonic()
    kfd = read_kfd_topology()
    if kfd:
        f.kfd = {k: v["gfx"] for k, v in kfd.items() if v.get("gfx")}
        f.records.append(record("kfd-sysfs", "ok", ", ".join(f"{v['gfx'] or '?'} at {k}" for k, v in kfd.items()),
                                started))
    else:
        f.records.append(record("kfd-sysfs", "not-found", "no AMD compute device in /sys/class/kfd (no amdgpu GPU, "
                                "or the driver is not loaded)", started))
    f.rocm_version = rocm_version_from_files()


def _find_tools(family: str | None) -> dict[str, str]:
    """The ROCm tools on PATH, else (Linux) in $ROCM_PATH/bin."""
    from app.core.proc.runner import which

    tools = {name: which(name) for name in ROCM_TOOLS}
    if family == "linux" and not any(tools.values()):
        rocm_bin = os.path.join(os.environ.get("ROCM_PATH") or "/opt/rocm", "bin")
        for name in tools:
            p = os.path.join(rocm_bin, name)
            if os.access(p, os.X_OK):
                tools[name] = p
    return {k: v for k, v in tools.items() if v}


def _ask(argv: list[str], key: str, timeout_s: float) -> Answer:
    started = time.monotonic()
    res, rec = run_tool(key, argv, timeout_s)
    return started, res, rec


def detect_amd(timeout_s: float, *, family: str | None) -> AmdFindings:
    """rocminfo, amd-smi, rocm-smi, rocm_agent_enumerator (those installed, side by side) and KFD."""
    f = AmdFindings()
    try:
        if family == "linux":
            _read_kfd(f)
        present = _find_tools(family)
        if not present:
            f.records.append(ProbeRecord("rocm-tools", "not-found", "no ROCm tools installed "
                                         "(rocminfo, amd-smi, rocm-smi, rocm_agent_enumerator)", 0))
            return f  # GPUs come later from PCI, with the gfx target from KFD
        jobs = Jobs("rocm")
        futures: dict[str, Future[Answer]] = {}
        for key, (tool, *args) in _ARGS.items():
            if tool in present:
                futures[key] = jobs.start(key, partial(_ask, [present[tool], *args], key, timeout_s))
        jobs.wait(time.monotonic() + timeout_s + 5)
        answers = {k: a for k, fut in futures.items() if (a := result_of(fut)) is not None}
        _Merge(f, answers).run()
    except Exception as exc:  # pragma: no cover - belt and braces
        f.records.append(ProbeRecord("amd", "error", f"{type(exc).__name__}: {snippet(str(exc))}"))
    return f


class _Merge:
    """One slot per GPU (by bus address, else by index) filled from each tool's answer in turn."""

    def __init__(self, f: AmdFindings, answers: dict[str, Answer]) -> None:
        self.f = f
        self.answers = answers
        self.by_bus: dict[str, Row] = {}
        self.order: list[str] = []

    def slot(self, bus: str | None, idx: int) -> Row:
        key = bus or f"#{idx}"
        if key not in self.by_bus:
            self.by_bus[key] = {"bus": bus}
            self.order.append(key)
        return self.by_bus[key]

    def done(self, key: str, parse: Callable[[str], Sequence[object] | dict[str, str]],
             what: str) -> tuple[Sequence[object] | dict[str, str], float, RunResult] | None:
        """The parsed answer of ``key``; None (with a record) when it gave nothing usable."""
        if key not in self.answers:
            return None
        t0, res, rec = self.answers[key]
        if rec is not None:
            self.f.records.append(rec)
            return None
        items = parse(res.stdout)
        if not items and key != "amd-smi-version":
            out = (res.stdout + res.stderr).strip()
            status = "empty" if not out else ("error" if res.returncode else "garbage")
            self.f.records.append(ProbeRecord(key, status, f"{what}: nothing usable ({res.describe()}): "
                                              f"{snippet(out)}", int((time.monotonic() - t0) * 1000), res.argv))
            return None
        return items, t0, res

    def ok(self, key: str, detail: str, t0: float, res: RunResult) -> None:
        self.f.records.append(ProbeRecord(key, "ok", detail, int((time.monotonic() - t0) * 1000), res.argv))

    def fill(self, rows: list[Row], keys: tuple[str, ...], source: str, index_key: str | None) -> None:
        for i, a in enumerate(rows):
            s = self.slot(a["bus"], a[index_key] if index_key else i)
            for k in keys:
                if a.get(k) and not s.get(k):
                    s[k] = a[k]
            s.setdefault("source", source)

    def run(self) -> None:
        self._rocminfo()
        self._amd_smi()
        self._rocm_smi()
        self._agent_enumerator()
        self._gpus()

    def _rocminfo(self) -> None:
        r = self.done("rocminfo", parse_rocminfo, "rocminfo")
        if r:
            items, t0, res = r
            rock = parse_rock_version(res.stdout)
            if rock:
                self.f.tool_versions["rocminfo"] = f"ROCk {rock}"
            rows = [a for a in items if isinstance(a, dict)]
            self.fill(rows, ("gfx", "name", "memory_mb", "device_id"), "rocminfo", None)
            self.ok("rocminfo", ", ".join(f"{a['name'] or '?'} ({a['gfx'] or '?'})" for a in rows), t0, res)

    def _amd_smi(self) -> None:
        r = self.done("amd-smi", parse_amd_smi_static, "amd-smi static")
        if r:
            items, t0, res = r
            rows = [a for a in items if isinstance(a, dict)]
            self.fill(rows, ("gfx", "name", "device_id"), "amd-smi", "index")
            self.ok("amd-smi", ", ".join(f"{a['name'] or '?'} at {a['bus']}" for a in rows), t0, res)
        v = self.done("amd-smi-version", parse_amd_smi_version, "amd-smi version")
        if v and isinstance(v[0], dict):
            if v[0].get("tool"):
                self.f.tool_versions["amd-smi"] = v[0]["tool"]
            if v[0].get("rocm"):
                self.f.rocm_version = self.f.rocm_version or v[0]["rocm"]

    def _rocm_smi(self) -> None:
        r = self.done("rocm-smi", parse_rocm_smi_productname, "rocm-smi --showproductname")
        if r:
            items, t0, res = r
            rows = [a for a in items if isinstance(a, dict)]
            if not self.by_bus:  # only when rocminfo/amd-smi gave nothing: it has no bus addresses
                for a in rows:
                    s = self.slot(None, a["index"])
                    s.update({k: a[k] for k in ("name", "gfx") if a.get(k)})
                    s.setdefault("source", "rocm-smi")
            self.ok("rocm-smi", ", ".join(str(a["name"]) for a in rows), t0, res)

    def _agent_enumerator(self) -> None:
        r = self.done("rocm_agent_enumerator", parse_rocm_agent_enumerator, "rocm_agent_enumerator")
        if r:
            items, t0, res = r
            targets = [str(x) for x in items]
            if not self.by_bus:
                for i, gfx in enumerate(targets):
                    self.slot(None, i).update({"gfx": gfx, "source": "rocm_agent_enumerator"})
            else:  # fill targets the others lacked, in order
                missing = [self.by_bus[k] for k in self.order if not self.by_bus[k].get("gfx")]
                for s, gfx in zip(missing, targets, strict=False):
                    s["gfx"] = gfx
            self.ok("rocm_agent_enumerator", ", ".join(targets), t0, res)

    def _gpus(self) -> None:
        for n, key in enumerate(self.order):
            s = self.by_bus[key]
            gfx = s.get("gfx") or (self.f.kfd.get(s["bus"]) if s.get("bus") else None)
            name = s.get("name") or (f"AMD GPU {gfx}" if gfx else "AMD GPU")
            if not name.upper().startswith("AMD") and not name.lower().startswith("radeon"):
                name = f"AMD {name}"
            self.f.gpus.append((GPU(vendor="amd", name=name, gfx_target=gfx, memory_mb=s.get("memory_mb"),
                                    integrated=amd_is_integrated(gfx, name), index=n,
                                    pci_id=f"1002:{s['device_id']}" if s.get("device_id") else None,
                                    source=s.get("source")), s.get("bus")))
