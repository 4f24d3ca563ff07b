"""The session report: what was detected, recommended, installed, verified and measured.

One :class:`SessionReport` is written at the end of every run: by the wizard's Done page
and by the unattended install (``torch-setup install --config``), which names it after the
host so a fleet's reports can be collected in one folder. It renders as

* JSON (versioned, for machines: the Ansible summary reads it),
* Markdown (for an issue or a chat message),
* HTML (one self-contained file, no external assets, readable when printed).

Every part may be ``None`` (the step was skipped or never reached); the parts are the core's
result dataclasses or plain dicts, turned into plain data with :func:`to_jsonable`.
"""
from __future__ import annotations

import html
import json
import platform
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from app import __version__
from app.core.errors import BadInput
from app.core.serial import to_jsonable

SCHEMA = "torch-setup-session/1"
FORMATS = ("json", "md", "html")

# Statuses a run ends with (the unattended run maps its exit code onto these).
STATUS_OK = "ok"
STATUS_FAILED = "failed"
STATUS_BAD_INPUT = "bad-input"
STATUS_CANCELLED = "cancelled"


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _get(d: Any, *names: str, default: Any = None) -> Any:
    """The first present, non-None key of ``names`` in the dict ``d``."""
    if not isinstance(d, dict):
        return default
    for n in names:
        if d.get(n) is not None:
            return d[n]
    return default


def _fmt_num(x: Any, digits: int = 1) -> str:
    if isinstance(x, bool) or x is None:
        return "" if x is None else str(x)
    if isinstance(x, (int, float)):
        return f"{x:,.{digits}f}" if isinstance(x, float) else f"{x:,}"
    return str(x)


@dataclass
class SessionReport:
    system: Any = None  # app.core.system.SystemReport
    recommendation: Any = None  # app.core.recommend.Recommendation
    install: Any = None  # app.core.install.InstallResult
    verify: Any = None  # app.core.verify.VerifyReport
    bench: Any = None  # app.core.bench.BenchReport
    diagnosis: Any = None  # app.core.doctor.Diagnosis
    created: str = field(default_factory=_now_iso)
    hostname: str = field(default_factory=platform.node)
    assistant_version: str = __version__
    # How the run ended. ``None`` means "derive it from the parts" (see :attr:`outcome`).
    status: str | None = None
    exit_code: int | None = None
    error: Any = None  # a UserError (or its to_dict()) when the run failed
    duration_s: float | None = None
    source: str = "wizard"  # wizard | unattended | cli
    notes: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------ data
    @property
    def outcome(self) -> str:
        if self.status:
            return self.status
        if self.error is not None:
            return STATUS_FAILED
        v = to_jsonable(self.verify)
        if isinstance(v, dict) and v.get("ok") is False:
            return STATUS_FAILED
        return STATUS_OK

    def summary(self) -> dict:
        """The few facts a fleet table shows, one row per host."""
        rec = to_jsonable(self.recommendation) or {}
        inst = to_jsonable(self.install) or {}
        ver = to_jsonable(self.verify) or {}
        checks = _get(ver, "checks", default=[]) or []
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        for c in checks:
            st = str(_get(c, "status", default="")).lower()
            if st in counts:
                counts[st] += 1
        best = _best_bench(to_jsonable(self.bench))
        err = to_jsonable(self.error)
        torch = _get(inst, "torch_version") or _get(ver, "torch_version") or _get(rec, "torch_version")
        variant = _get(rec, "variant") or _variant_of(torch)
        return {
            "hostname": self.hostname,
            "status": self.outcome,
            "exit_code": self.exit_code,
            "backend": _get(rec, "backend") or _backend_of(variant),
            "variant": variant,
            "torch": torch,
            "env": _get(inst, "env_path"),
            "verify_passed": counts["passed"] if checks else None,
            "verify_failed": counts["failed"] if checks else None,
            "verify_skipped": counts["skipped"] if checks else None,
            "best_gflops": best.get("gflops") if best else None,
            "best_device": best.get("device") if best else None,
            "best_dtype": best.get("dtype") if best else None,
            "duration_s": self.duration_s,
            "error": (_get(err, "message") if isinstance(err, dict) else (str(err) if err else None)),
        }

    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA,
            "created": self.created,
            "hostname": self.hostname,
            "assistant_version": self.assistant_version,
            "source": self.source,
            "status": self.outcome,
            "exit_code": self.exit_code,
            "duration_s": self.duration_s,
            "error": to_jsonable(self.error) if not isinstance(self.error, BaseException)
            else _error_dict(self.error),
            "notes": list(self.notes),
            "summary": self.summary(),
            "system": to_jsonable(self.system),
            "recommendation": to_jsonable(self.recommendation),
            "install": to_jsonable(self.install),
            "verify": to_jsonable(self.verify),
            "bench": to_jsonable(self.bench),
            "diagnosis": to_jsonable(self.diagnosis),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, default=str)

    @classmethod
    def from_dict(cls, data: dict) -> "SessionReport":
        """A report read back from JSON (parts stay plain dicts)."""
        if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("torch-setup-session/"):
            raise BadInput("this is not a torch-setup session report (no 'schema' of torch-setup-session/N)")
        return cls(
            system=data.get("system"), recommendation=data.get("recommendation"),
            install=data.get("install"), verify=data.get("verify"), bench=data.get("bench"),
            diagnosis=data.get("diagnosis"), created=data.get("created") or "",
            hostname=data.get("hostname") or "", assistant_version=data.get("assistant_version") or "",
            status=data.get("status"), exit_code=data.get("exit_code"), error=data.get("error"),
            duration_s=data.get("duration_s"), source=data.get("source") or "wizard",
            notes=list(data.get("notes") or []),
        )

    # ------------------------------------------------------------- rendering
    def _sections(self) -> list[tuple[str, list[tuple[str, str]], list[list[str]] | None, list[str]]]:
        """(title, key/value rows, optional table [header, *rows], bullet lines) per section."""
        d = self.to_dict()
        out = []
        overview = [("Host", self.hostname), ("Result", self.outcome), ("Created", self.created),
                    ("Assistant", f"torch-setup {self.assistant_version} ({self.source})")]
        if self.duration_s is not None:
            overview.append(("Duration", f"{self.duration_s:.1f} s"))
        bullets = []
        err = d["error"]
        if err:
            overview.append(("Error", str(_get(err, "message", default=err))))
            if _get(err, "hint"):
                overview.append(("What to do", str(err["hint"])))
            if _get(err, "log_path"):
                overview.append(("Full log", str(err["log_path"])))
            bullets = [str(x) for x in (_get(err, "lines", default=[]) or [])]
        bullets += [str(n) for n in self.notes]
        out.append(("Summary", overview, None, bullets))

        sysd = d["system"]
        if sysd:
            rows = []
            os_ = _get(sysd, "os", default={}) or {}
            rows.append(("OS", " ".join(str(x) for x in (_get(os_, "family"), _get(os_, "version")) if x)
                         + (" (WSL)" if _get(os_, "wsl") else "")))
            rows.append(("Architecture", str(_get(sysd, "arch", default=""))))
            py = _get(sysd, "python", default={}) or {}
            rows.append(("Python", " ".join(str(x) for x in (_get(py, "version"), _get(py, "executable")) if x)))
            cpu = _get(sysd, "cpu", default={}) or {}
            rows.append(("CPU", f"{_get(cpu, 'model', default='?')} "
                                f"({_get(cpu, 'cores', default='?')} cores, {_get(cpu, 'threads', default='?')} threads)"))
            if _get(sysd, "memory_mb") is not None:
                rows.append(("Memory", f"{sysd['memory_mb'] / 1024:.1f} GiB"))
            if _get(sysd, "disk_free_mb") is not None:
                rows.append(("Free disk", f"{sysd['disk_free_mb'] / 1024:.1f} GiB"))
            if _get(sysd, "nvidia_cuda_version"):
                rows.append(("Newest CUDA the driver supports", str(sysd["nvidia_cuda_version"])))
            gpus = _get(sysd, "gpus", default=[]) or []
            table = None
            if gpus:
                table = [["Vendor", "Name", "Driver", "Compute cap. / gfx", "Memory (MB)"]]
                for g in gpus:
                    table.append([str(_get(g, "vendor", default="")), str(_get(g, "name", default="")),
                                  str(_get(g, "driver_version", default="")),
                                  str(_get(g, "compute_capability", "gfx_target", default="")),
                                  _fmt_num(_get(g, "memory_mb"))])
            else:
                rows.append(("GPUs", "none found"))
            out.append(("Your system", rows, table, []))

        rec = d["recommendation"]
        if rec:
            rows = [("Backend", str(_get(rec, "backend", default=""))),
                    ("Wheel variant", str(_get(rec, "variant", default=""))),
                    ("PyTorch", str(_get(rec, "torch_version", default=""))),
                    ("Index", str(_get(rec, "index_url", default="")))]
            if _get(rec, "packages"):
                rows.append(("Packages", " ".join(str(p) for p in rec["packages"])))
            if _get(rec, "command"):
                cmd = rec["command"]
                rows.append(("Command", " ".join(cmd) if isinstance(cmd, list) else str(cmd)))
            bullets = [str(r) for r in (_get(rec, "reasons", default=[]) or [])]
            bullets += [f"Warning: {w}" for w in (_get(rec, "warnings", default=[]) or [])]
            out.append(("Recommendation", rows, None, bullets))

        inst = d["install"]
        if inst:
            rows = [("Environment", str(_get(inst, "env_path", default=""))),
                    ("Python", str(_get(inst, "python", default=""))),
                    ("PyTorch", str(_get(inst, "torch_version", default="")))]
            if _get(inst, "duration_s") is not None:
                rows.append(("Install time", f"{float(inst['duration_s']):.1f} s"))
            if _get(inst, "log_path"):
                rows.append(("Log", str(inst["log_path"])))
            pk = _get(inst, "packages")
            if isinstance(pk, dict):
                rows.append(("Packages", ", ".join(f"{k} {v}" for k, v in pk.items())))
            elif isinstance(pk, list) and pk:
                rows.append(("Packages", ", ".join(str(p) for p in pk)))
            out.append(("Installation", rows, None, []))

        ver = d["verify"]
        if ver:
            rows = []
            if _get(ver, "torch_version") is not None:
                rows.append(("PyTorch", str(ver["torch_version"])))
            if _get(ver, "ok") is not None:
                rows.append(("All checks passed", "yes" if ver["ok"] else "no"))
            checks = _get(ver, "checks", default=[]) or []
            table = [["Check", "Result", "Detail"]] + [
                [str(_get(c, "title", default="") or _get(c, "name", default="")),
                 str(_get(c, "status", default="")),
                 str(_get(c, "detail", default=""))] for c in checks] if checks else None
            out.append(("Verification", rows, table, []))

        bench = d["bench"]
        if bench:
            rows = []
            if _get(bench, "device"):
                rows.append(("Device", " ".join(str(x) for x in (bench["device"], _get(bench, "device_name")) if x)))
            if _get(bench, "threads") is not None:
                rows.append(("CPU threads", str(bench["threads"])))
            for key, label in (("peak", "Estimated peak"), ("cpu_peak", "Estimated CPU peak")):
                peak = _get(bench, key)
                if key == "cpu_peak" and peak == _get(bench, "peak"):
                    continue  # the device is the CPU: one line is enough
                if isinstance(peak, dict) and _get(peak, "gflops"):
                    g = peak["gflops"]
                    text = ", ".join(f"{k} {_fmt_num(v)} GFLOP/s" for k, v in g.items()) if isinstance(g, dict) \
                        else f"{_fmt_num(g)} GFLOP/s"
                    if _get(peak, "source"):
                        text += f" (source: {peak['source']})"
                    rows.append((label, text))
            for c in _get(bench, "copy", default=[]) or []:
                if isinstance(c, dict) and _get(c, "gb_per_s") is not None:
                    rows.append((f"Copy {_get(c, 'direction', default='')} ({_get(c, 'memory', default='')})",
                                 f"{_fmt_num(float(c['gb_per_s']), 2)} GB/s"))
            for sp in _get(bench, "speedup", default=[]) or []:
                if isinstance(sp, dict) and _get(sp, "speedup") is not None:
                    rows.append((f"Speed-up over the CPU ({_get(sp, 'dtype', default='')}, "
                                 f"n={_get(sp, 'n', default='')})", f"{float(sp['speedup']):.1f}×"))
            if _get(bench, "elapsed_s") is not None:
                rows.append(("Time taken", f"{float(bench['elapsed_s']):.1f} s"
                             + (" (time budget reached)" if _get(bench, "budget_exhausted") else "")))
            results = _bench_rows(bench) + _bench_rows({"results": _get(bench, "cpu_results", default=[])})
            table = None
            if results:
                table = [["Device", "dtype", "Size", "GFLOP/s", "Time (ms)", "of peak"]]
                for r in results:
                    frac = r.get("fraction_of_peak")
                    table.append([str(r.get("device") or ""), str(r.get("dtype") or ""),
                                  str(r.get("size") or ""), _fmt_num(r.get("gflops")),
                                  _fmt_num(r.get("ms"), 2),
                                  f"{frac * 100:.0f} %" if isinstance(frac, (int, float)) else ""])
            notes = [str(x) for x in (_get(bench, "notes", "warnings", default=[]) or [])]
            for sk in _get(bench, "skipped", default=[]) or []:
                if isinstance(sk, dict):
                    what = " ".join(str(x) for x in (_get(sk, "device"), _get(sk, "dtype"),
                                                     f"n={sk['n']}" if _get(sk, "n") else None) if x)
                    notes.append(f"Skipped {what}: {_get(sk, 'reason', default='')}")
            out.append(("Speed test (matrix multiply)", rows, table, notes))

        diag = d["diagnosis"]
        if diag:
            findings = _get(diag, "findings", default=[]) or []
            bullets = []
            for f in findings:
                title = _get(f, "title", "code", default="finding")
                expl = _get(f, "explanation", default="")
                fix = _get(f, "fix", default="")
                bullets.append(f"{title}: {expl}" + (f" Fix: {fix}" if fix else ""))
            if not findings:
                bullets.append("No problems found.")
            out.append(("Diagnosis", [], None, bullets))
        return out

    def to_markdown(self) -> str:
        lines = [f"# Torch Setup report: {self.hostname}", ""]
        for title, rows, table, bullets in self._sections():
            lines += [f"## {title}", ""]
            for k, v in rows:
                lines.append(f"- **{k}:** {_md_escape(v)}")
            if rows:
                lines.append("")
            if table:
                lines.append("| " + " | ".join(_md_cell(c) for c in table[0]) + " |")
                lines.append("|" + "|".join("---" for _ in table[0]) + "|")
                for r in table[1:]:
                    lines.append("| " + " | ".join(_md_cell(c) for c in r) + " |")
                lines.append("")
            for b in bullets:
                lines.append(f"- {_md_escape(b)}")
            if bullets:
                lines.append("")
        return "\n".join(lines).rstrip() + "\n"

    def to_html(self) -> str:
        e = html.escape
        status = self.outcome
        parts = [
            "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>Torch Setup report: {e(self.hostname)}</title>",
            f"<style>{_CSS}</style></head><body>",
            f'<h1>Torch Setup report: {e(self.hostname)} <span class="badge {e(status)}">{e(status)}</span></h1>',
        ]
        for title, rows, table, bullets in self._sections():
            parts.append(f"<section><h2>{e(title)}</h2>")
            if rows:
                parts.append("<dl>" + "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in rows) + "</dl>")
            if table:
                parts.append("<table><thead><tr>" + "".join(f"<th>{e(c)}</th>" for c in table[0])
                             + "</tr></thead><tbody>")
                for r in table[1:]:
                    cells = []
                    for c in r:
                        cls = f' class="{e(c)}"' if c in ("passed", "failed", "skipped") else ""
                        cells.append(f"<td{cls}>{e(c)}</td>")
                    parts.append("<tr>" + "".join(cells) + "</tr>")
                parts.append("</tbody></table>")
            if bullets:
                parts.append("<ul>" + "".join(f"<li>{e(b)}</li>" for b in bullets) + "</ul>")
            parts.append("</section>")
        parts.append(f'<footer>Written by torch-setup {e(self.assistant_version)} on {e(self.created)}.</footer>')
        parts.append("</body></html>")
        return "\n".join(parts) + "\n"

    # ------------------------------------------------------------------ files
    def default_stem(self) -> str:
        return safe_stem(self.hostname or "report")

    def save(self, folder, formats: Iterable[str] = FORMATS, stem: str | None = None) -> list[Path]:
        """Write the report as ``<folder>/<stem>.<fmt>`` for each format; returns the paths.

        Each file is written to a temporary name and renamed, so a reader (a fleet summary
        running while hosts still report) never sees half a file.
        """
        formats = tuple(formats)
        bad = [f for f in formats if f not in FORMATS]
        if bad:
            raise BadInput(f"unknown report format {bad[0]!r}", hint=f"use one of {', '.join(FORMATS)}")
        folder = Path(folder)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(f"the report folder {folder} cannot be created: {exc.strerror or exc}",
                           hint="choose a folder you can write to") from None
        stem = safe_stem(stem) if stem else self.default_stem()
        render = {"json": self.to_json, "md": self.to_markdown, "html": self.to_html}
        written = []
        for fmt in formats:
            path = folder / f"{stem}.{fmt}"
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(render[fmt](), encoding="utf-8")
            tmp.replace(path)
            written.append(path)
        return written


def load_session_report(path) -> SessionReport:
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"report file {p} does not exist") from None
    except json.JSONDecodeError as exc:
        raise BadInput(f"report file {p} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    return SessionReport.from_dict(data)


def safe_stem(name: str) -> str:
    """A file-name-safe stem (host names may hold characters Windows refuses)."""
    s = re.sub(r"[^\w.-]+", "_", str(name), flags=re.UNICODE).strip("._")
    return s[:120] or "report"


def _variant_of(torch_version: Any) -> str | None:
    """The wheel variant from an installed version's local label: "2.13.0+cu126" -> "cu126"."""
    if not torch_version or "+" not in str(torch_version):
        return None
    label = str(torch_version).split("+", 1)[1]
    return label if re.match(r"^(cpu|xpu|cu\d+|rocm[\d.]+)$", label) else None


def _backend_of(variant: str | None) -> str | None:
    if not variant:
        return None
    if variant.startswith("cu"):
        return "cuda"
    if variant.startswith("rocm"):
        return "rocm"
    return variant


def _error_dict(exc: BaseException) -> dict:
    if hasattr(exc, "to_dict"):
        return exc.to_dict()
    return {"error": type(exc).__name__, "message": str(exc)}


def _bench_rows(bench: dict) -> list[dict]:
    """Normalise a BenchReport's measurements to dicts with device/dtype/size/gflops/ms."""
    raw = _get(bench, "results", "measurements", "rows", default=[]) or []
    out = []
    for r in raw:
        if not isinstance(r, dict):
            continue
        size = _get(r, "size", "n")
        if size is None and _get(r, "m") is not None:
            size = f"{r['m']}×{_get(r, 'n', default='?')}×{_get(r, 'k', default='?')}"
        ms = _get(r, "ms", "median_ms")
        if ms is None and _get(r, "median_s", "seconds", "time_s") is not None:
            ms = float(_get(r, "median_s", "seconds", "time_s")) * 1000.0
        out.append({
            "device": _get(r, "device", default=_get(bench, "device")),
            "dtype": _get(r, "dtype"),
            "size": size,
            "gflops": _get(r, "gflops", "gflop_s", "gflops_median"),
            "ms": ms,
            "fraction_of_peak": _get(r, "fraction_of_peak", "peak_fraction", "of_peak"),
            "status": _get(r, "status"),
        })
    return out


def _best_bench(bench: Any) -> dict | None:
    if not isinstance(bench, dict):
        return None
    rows = [r for r in _bench_rows(bench) if isinstance(r.get("gflops"), (int, float))]
    return max(rows, key=lambda r: r["gflops"]) if rows else None


def _md_escape(s: str) -> str:
    return str(s).replace("\n", " ")


def _md_cell(s: str) -> str:
    return _md_escape(s).replace("|", "\\|")


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans","PingFang SC","Microsoft YaHei",sans-serif;
max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;background:#fff;line-height:1.45}
h1{font-size:1.6rem;border-bottom:2px solid #e5e5e5;padding-bottom:.4rem}
h2{font-size:1.2rem;margin-top:1.6rem;color:#333}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:.5rem 0}
dt{font-weight:600;color:#555}dd{margin:0;word-break:break-word}
table{border-collapse:collapse;width:100%;margin:.6rem 0;font-size:.95rem}
th,td{border:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f5f5f7}tbody tr:nth-child(even){background:#fafafa}
td.passed{color:#137333;font-weight:600}td.failed{color:#b3261e;font-weight:600}td.skipped{color:#777}
.badge{font-size:.9rem;padding:.15rem .5rem;border-radius:.4rem;vertical-align:middle;color:#fff;background:#777}
.badge.ok{background:#137333}.badge.failed,.badge.bad-input{background:#b3261e}.badge.cancelled{background:#a15c00}
footer{margin-top:2rem;color:#777;font-size:.85rem}
@media print{body{margin:0}}
"""
