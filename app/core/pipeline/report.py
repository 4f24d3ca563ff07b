"""The session report: what was detected, recommended, installed, verified and measured.

One :class:`SessionReport` is written at the end of every run: by the wizard's Done page
and by the unattended install (``torch-setup install --config``), which names it after the
host so a fleet's reports can be collected in one folder. It renders as

* JSON (versioned, for machines: the Ansible summary reads it),
* Markdown (for an issue or a chat message),
* HTML (one self-contained file, no external assets, readable when printed).

Every part is the core's own result type, or ``None`` (the step was skipped or never
reached); :meth:`SessionReport.from_dict` rebuilds the same types from the JSON.
The report is written in its :attr:`SessionReport.language` (the wizard's language; English for
the command line unless ``TORCH_SETUP_LANG`` says otherwise): its labels are the texts of
``_W`` (codes ``report.*``) and the core's sentences are rendered with :func:`app.core.base.text.render`.
"""
from __future__ import annotations

import html
import json
import platform
import re
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app import __version__
from app.core.base import shells
from app.core.base.errors import BadInput, Cancelled, UserError, render_hint
from app.core.base.secrets import mask, mask_data, write_private
from app.core.base.text import Text, msg, normalise_lang, render, texts
from app.core.base.wheels import backend_of_variant, variant_of_version
from app.core.detection.system import SystemReport
from app.core.doctor import Diagnosis
from app.core.install import InstallResult
from app.core.measure.bench import BenchReport, BenchResult, BenchStatus
from app.core.measure.bench import dtype_lines as bench_dtype_lines
from app.core.measure.bench import headline_text as bench_headline_text
from app.core.measure.bench import notes as bench_notes
from app.core.measure.bench import peak_text as bench_peak_text
from app.core.measure.bench import speedup_lines as bench_speedup_lines
from app.core.measure.verify import VerifyReport
from app.core.recommend import Recommendation
from app.core.remedies import Remedy, os_error_text
from app.core.remedies.commands import answer_line

SCHEMA = "torch-setup-session/1"
FORMATS = ("json", "md", "html")
LANG = "en"  # the default language of a report
_LANG: ContextVar[str] = ContextVar("report_language", default=LANG)  # the report being rendered

#: the report's own words (labels, titles, table headers), by code report.<name>
_W = texts("report.", {
    "title": "Torch Setup report: {host}", "summary": "Summary", "host": "Host", "result": "Result",
    "created": "Created", "assistant": "Assistant", "duration": "Duration", "compat": "Compatibility data",
    "error": "Error", "why": "Why", "what_to_do": "What to do", "fix": "Fix", "full_log": "Full log",
    "system": "Your system", "os": "OS", "arch": "Architecture", "cpu": "CPU", "memory": "Memory",
    "free_disk": "Free disk", "driver_cuda": "Newest CUDA the driver supports", "gpus": "GPUs",
    "no_gpus": "none found", "vendor": "Vendor", "name": "Name", "driver": "Driver",
    "cc": "Compute cap. / gfx", "gpu_memory": "Memory (MiB)", "cpu_line": "{model} ({cores} cores, {threads} threads)",
    "recommendation": "Recommendation", "backend": "Backend", "variant": "Build variant", "index": "Index",
    "packages": "Packages", "command": "Command", "warning": "Warning: {text}",
    "downloaded": ", downloaded and verified", "assumed": "; the chosen build's facts are assumed",
    "installation": "Installation", "environment": "Environment", "install_time": "Install time", "log": "Log",
    "source_of": "Source of {file}", "commands": "Commands that ran", "step": "Step", "exit_code": "Exit code",
    "time": "Time", "verification": "Verification", "all_passed": "All checks passed", "yes": "yes", "no": "no",
    "check": "Check", "detail": "Detail", "passed": "passed", "failed": "failed", "skipped": "skipped",
    "bench": "Speed test (matrix multiply)", "bench_partial": "Speed test (matrix multiply), partial",
    "device": "Device", "status": "Status", "partial": "partial: the speed test was stopped before it finished",
    "per_dtype": "Per dtype", "peak_share": "Share of the peak", "load": "Machine load",
    "load_busy": "busy: other programs used {share:.0f} % of the CPU ({cpus:.1f} of {total} CPUs) during the test",
    "load_quiet": "quiet: other programs used {share:.0f} % of the CPU ({cpus:.1f} of {total} CPUs) during the test",
    "spread": "Spread of the runs", "spread_value": "±{pct:.0f} % (typical)", "remeasured": "Measured again",
    "rounds_one": "one more round", "rounds": "{n} more rounds", "threads": "CPU threads",
    "peak": "Estimated peak", "cpu_peak": "Estimated CPU peak", "peak_source": " (source: {source})",
    "copy": "Copy {direction} ({memory})", "speedup": "Speed-up over the CPU", "time_taken": "Time taken",
    "budget_reached": " (time budget reached)", "stopped_partial": " (stopped: partial results)",
    "size": "Size", "spread_col": "Spread", "time_ms": "Time (ms)", "of_peak": "of peak", "runs": "Runs",
    "stopped_note": "The speed test was stopped before it finished; these are the measurements made until then.",
    "peak_how": "How the peak is estimated: {how}", "skipped_what": "Skipped {what}: {reason}",
    "diagnosis": "Diagnosis", "fix_inline": " Fix: {fix}", "no_problems": "No problems found.",
    "footer": "Written by torch-setup {version} on {created}.",
    "status_ok": "ok", "status_failed": "failed", "status_bad_input": "bad input", "status_cancelled": "cancelled",
})


def _w(name: str, /, **args: object) -> str:
    """One of the report's own words in the language of the report being rendered."""
    return render(_W.msg(name, **args), _LANG.get())


@contextmanager
def _language(lang: str) -> Iterator[None]:
    token = _LANG.set(normalise_lang(lang))
    try:
        yield
    finally:
        _LANG.reset(token)

# Statuses a run ends with (the unattended run maps its exit code onto these).
STATUS_OK = "ok"
STATUS_FAILED = "failed"
STATUS_BAD_INPUT = "bad-input"
STATUS_CANCELLED = "cancelled"


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _fmt_num(x: float | int | None, digits: int = 1) -> str:
    if x is None:
        return ""
    return f"{x:,.{digits}f}" if isinstance(x, float) else f"{x:,}"


def _t(text: Text | None) -> str:
    return render(text, _LANG.get())


@dataclass(frozen=True)
class Section:
    """One part of the rendered report: key/value rows, an optional table, bullet lines."""

    title: str
    rows: tuple[tuple[str, str], ...] = ()
    table: tuple[tuple[str, ...], ...] | None = None  # header row first
    bullets: tuple[str, ...] = ()


@dataclass(frozen=True)
class SessionReport:
    """What one session did, step by step; a step that did not run is None (and its section is left out)."""

    system: SystemReport | None = None  # detect
    recommendation: Recommendation | None = None  # recommend (with the user's choices applied)
    install: InstallResult | None = None  # install, or the environment reused
    verify: VerifyReport | None = None  # verify, in the new environment
    bench: BenchReport | None = None  # the speed test
    diagnosis: Diagnosis | None = None  # doctor, when something failed
    created: str = field(default_factory=_now_iso)
    hostname: str = field(default_factory=platform.node)
    assistant_version: str = __version__
    # How the run ended. ``None`` means "derive it from the parts" (see :attr:`outcome`).
    status: str | None = None
    exit_code: int | None = None
    error: UserError | None = None  # when the run failed
    duration_s: float | None = None
    source: str = "wizard"  # wizard | unattended | cli | self-test
    notes: tuple[str, ...] = ()
    language: str = LANG  # what the Markdown and HTML are written in (the JSON's keys stay English)

    # ------------------------------------------------------------------ data
    @property
    def outcome(self) -> str:
        if self.status:
            return self.status
        if self.error is not None:
            return STATUS_FAILED
        if self.verify is not None and not self.verify.ok:
            return STATUS_FAILED
        return STATUS_OK

    def summary(self) -> dict[str, Any]:
        """The few facts a fleet table shows, one row per host."""
        rec, inst, ver, bench = self.recommendation, self.install, self.verify, self.bench
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        for c in ver.checks if ver is not None else ():
            if c.status in counts:
                counts[c.status] += 1
        has_checks = ver is not None and bool(ver.checks)
        best = _best_bench(bench)
        torch = ((inst.torch_version if inst else None) or (ver.torch_version if ver else None)
                 or (rec.torch_version if rec else None))
        variant = (rec.variant if rec else None) or variant_of_version(torch)
        backend = (rec.backend if rec else None) or _backend_name(variant)
        return {
            "hostname": self.hostname,
            "status": self.outcome,
            "exit_code": self.exit_code,
            "backend": backend,
            "variant": variant,
            "torch": torch,
            "env": str(inst.env_path) if inst else None,
            "verify_passed": counts["passed"] if has_checks else None,
            "verify_failed": counts["failed"] if has_checks else None,
            "verify_skipped": counts["skipped"] if has_checks else None,
            "best_gflops": best.gflops if best else None,
            "best_device": best.device if best else None,
            "best_dtype": best.dtype if best else None,
            "bench_status": bench.status.value if bench else None,
            **_bench_summary(bench),
            "duration_s": self.duration_s,
            "error": self.error.text() if self.error else None,
            "error_code": self.error.error_code if self.error else None,
        }

    def to_dict(self) -> dict[str, Any]:
        def part(x: Any) -> Any:
            return x.to_dict() if x is not None else None

        return {
            "schema": SCHEMA,
            "created": self.created,
            "hostname": self.hostname,
            "assistant_version": self.assistant_version,
            "source": self.source,
            "status": self.outcome,
            "exit_code": self.exit_code,
            "duration_s": self.duration_s,
            "error": part(self.error),
            "notes": list(self.notes),
            "language": self.language,
            "summary": self.summary(),
            "system": part(self.system),
            "recommendation": part(self.recommendation),
            "install": part(self.install),
            "verify": part(self.verify),
            "bench": part(self.bench),
            "diagnosis": part(self.diagnosis),
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON, every credential and device identifier masked (it leaves the process)."""
        return mask(json.dumps(mask_data(self.to_dict()), indent=indent, ensure_ascii=False, default=str))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SessionReport:
        """A report read back from JSON, each part rebuilt as its core type."""
        if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("torch-setup-session/"):
            raise BadInput("this is not a torch-setup session report (no 'schema' of torch-setup-session/N)")

        def part(key: str) -> dict[str, Any] | None:
            value = data.get(key)
            return value if isinstance(value, dict) else None

        system, rec, inst = part("system"), part("recommendation"), part("install")
        ver, bench, diag, err = part("verify"), part("bench"), part("diagnosis"), part("error")
        return cls(
            system=SystemReport.from_dict(system) if system else None,
            recommendation=Recommendation.from_dict(rec) if rec else None,
            install=InstallResult.from_dict(inst) if inst else None,
            verify=VerifyReport.from_dict(ver) if ver else None,
            bench=BenchReport.from_dict(bench) if bench else None,
            diagnosis=Diagnosis.from_dict(diag) if diag else None,
            created=data.get("created") or "", hostname=data.get("hostname") or "",
            assistant_version=data.get("assistant_version") or "",
            status=data.get("status"), exit_code=data.get("exit_code"),
            error=_error_from_dict(err) if err else None,
            duration_s=data.get("duration_s"), source=data.get("source") or "wizard",
            notes=tuple(str(n) for n in data.get("notes") or ()),
            language=str(data.get("language") or LANG),
        )

    # ------------------------------------------------------------- rendering
    def sections(self) -> list[Section]:
        """The report's parts in reading order (the parts that are there), every text masked
        before Markdown / HTML escaping can split a secret out of sight."""
        with _language(self.language):
            return [_masked(s) for s in self._sections()]

    def _sections(self) -> list[Section]:
        parts = (
            _system_section(self.system) if self.system else None,
            _recommendation_section(self.recommendation) if self.recommendation else None,
            _install_section(self.install) if self.install else None,
            _commands_section(self.install) if self.install else None,
            _verify_section(self.verify) if self.verify else None,
            _bench_section(self.bench) if self.bench else None,
            _diagnosis_section(self.diagnosis) if self.diagnosis else None,
        )
        return [self._overview(), *(p for p in parts if p is not None)]

    def _overview(self) -> Section:
        rows = [(_w("host"), self.hostname), (_w("result"), self._status_word()), (_w("created"), self.created),
                (_w("assistant"), f"torch-setup {self.assistant_version} ({self.source})")]
        if self.duration_s is not None:
            rows.append((_w("duration"), f"{self.duration_s:.1f} s"))
        if self.recommendation is not None and self.recommendation.compat_data_version:
            rows.append((_w("compat"), _data_version(self.recommendation)))
        bullets: list[str] = []
        err = self.error
        if err is not None:
            rows.append((_w("error"), _t(err.message) or err.text()))
            for r in err.remedies:
                rows.append((_w("why"), _t(r.explanation)))
            if err.hint:
                rows.append((_w("what_to_do"), render_hint(err.hint, _LANG.get())))
            for a in err.actions:  # an answer-file run is fixed in its answer file
                line = answer_line(a) if self.source == "unattended" else None
                rows.append((_w("fix"), line or _t(a.label())))
            if err.log_path:
                rows.append((_w("full_log"), str(err.log_path)))
            bullets = [str(x) for x in err.lines]
        bullets += [str(n) for n in self.notes]
        return Section(_w("summary"), tuple(rows), None, tuple(bullets))

    def _status_word(self) -> str:
        status = self.outcome
        key = "status_" + status.replace("-", "_")
        return _w(key) if key in _W.templates else status

    def to_markdown(self) -> str:
        with _language(self.language):
            return mask(self._markdown())

    def _markdown(self) -> str:
        lines = [f"# {_w('title', host=mask(self.hostname))}", ""]
        for s in self.sections():
            lines += [f"## {s.title}", ""]
            for k, v in s.rows:
                lines.append(f"- **{k}:** {_md_escape(v)}")
            if s.rows:
                lines.append("")
            if s.table:
                lines.append("| " + " | ".join(_md_cell(c) for c in s.table[0]) + " |")
                lines.append("|" + "|".join("---" for _ in s.table[0]) + "|")
                for r in s.table[1:]:
                    lines.append("| " + " | ".join(_md_cell(c) for c in r) + " |")
                lines.append("")
            for b in s.bullets:
                lines.append(f"- {_md_escape(b)}")
            if s.bullets:
                lines.append("")
        return "\n".join(lines).rstrip() + "\n"

    def to_html(self) -> str:
        with _language(self.language):
            return mask(self._html())

    def _html(self) -> str:
        def e(text: str) -> str:
            return html.escape(mask(text))

        status = self.outcome
        parts = [
            "<!DOCTYPE html>", f'<html lang="{_LANG.get().replace("_", "-")}"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{e(_w('title', host=self.hostname))}</title>",
            f"<style>{_CSS}</style></head><body>",
            f'<h1>{e(_w("title", host=self.hostname))} <span class="badge {e(status)}">{e(self._status_word())}'
            '</span></h1>',
        ]
        for s in self.sections():
            parts.append(f"<section><h2>{e(s.title)}</h2>")
            if s.rows:
                parts.append("<dl>" + "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in s.rows) + "</dl>")
            if s.table:
                parts.append("<table><thead><tr>" + "".join(f"<th>{e(c)}</th>" for c in s.table[0])
                             + "</tr></thead><tbody>")
                for r in s.table[1:]:
                    cells = []
                    for c in r:
                        word = {_w(k): k for k in ("passed", "failed", "skipped")}.get(c)
                        cls = f' class="{word}"' if word else ""
                        cells.append(f"<td{cls}>{e(c)}</td>")
                    parts.append("<tr>" + "".join(cells) + "</tr>")
                parts.append("</tbody></table>")
            if s.bullets:
                parts.append("<ul>" + "".join(f"<li>{e(b)}</li>" for b in s.bullets) + "</ul>")
            parts.append("</section>")
        parts.append(f'<footer>{e(_w("footer", version=self.assistant_version, created=self.created))}</footer>')
        parts.append("</body></html>")
        return "\n".join(parts) + "\n"

    # ------------------------------------------------------------------ files
    def default_stem(self) -> str:
        return safe_stem(self.hostname or "report")

    def save(self, folder: str | Path, formats: Iterable[str] = FORMATS, stem: str | None = None) -> list[Path]:
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
            raise BadInput(msg("report.folder_failed", "the report folder {path} cannot be created: {reason}",
                               path=str(folder), reason=os_error_text(exc)),
                           hint=msg("report.folder_failed_hint", "choose a folder you can write to")) from None
        stem = safe_stem(stem) if stem else self.default_stem()
        renderers = {"json": self.to_json, "md": self.to_markdown, "html": self.to_html}
        written = []
        for fmt in formats:
            path = folder / f"{stem}.{fmt}"
            write_private(path, renderers[fmt]())  # masked (again), mode 0600, replaced in one step
            written.append(path)
        return written


# ------------------------------------------------------------------ sections

def _masked(s: Section) -> Section:
    return Section(mask(s.title), tuple((mask(k), mask(v)) for k, v in s.rows),
                   tuple(tuple(mask(c) for c in row) for row in s.table) if s.table is not None else None,
                   tuple(mask(b) for b in s.bullets))


def _system_section(s: SystemReport) -> Section:
    rows = [(_w("os"), " ".join(x for x in (s.os.family, s.os.version) if x) + (" (WSL)" if s.os.wsl else "")),
            (_w("arch"), s.arch or ""),
            ("Python", " ".join(x for x in (s.python.version, s.python.executable) if x)),
            (_w("cpu"), _w("cpu_line", model=s.cpu.model or "?", cores=s.cpu.cores if s.cpu.cores is not None else "?",
                           threads=s.cpu.threads if s.cpu.threads is not None else "?"))]
    if s.memory_mb is not None:
        rows.append((_w("memory"), f"{s.memory_mb / 1024:.1f} GiB"))
    if s.disk_free_mb is not None:
        rows.append((_w("free_disk"), f"{s.disk_free_mb / 1024:.1f} GiB"))
    if s.nvidia_cuda_version:
        rows.append((_w("driver_cuda"), s.nvidia_cuda_version))
    table = None
    if s.gpus:
        table = ((_w("vendor"), _w("name"), _w("driver"), _w("cc"), _w("gpu_memory")),
                 *((g.vendor, g.name, g.driver_version or "", g.compute_capability or g.gfx_target or "",
                    _fmt_num(g.memory_mb)) for g in s.gpus))
    else:
        rows.append((_w("gpus"), _w("no_gpus")))
    return Section(_w("system"), tuple(rows), table)


def _data_version(r: Recommendation) -> str:
    """``2026.12.01 (2026-12-01)``, with where it came from and whether the build's facts are assumed."""
    text = f"{r.compat_data_version} ({r.compat_data_date})" if r.compat_data_date else r.compat_data_version
    if r.compat_data_origin == "downloaded":
        text += _w("downloaded")
    return text + (_w("assumed") if r.facts_assumed else "")


def _recommendation_section(r: Recommendation) -> Section:
    rows = [(_w("backend"), r.backend), (_w("variant"), r.variant), ("PyTorch", r.torch_version or ""),
            (_w("index"), r.index_url), (_w("compat"), _data_version(r))]
    if r.packages:
        rows.append((_w("packages"), " ".join(r.packages)))
    if r.command:
        rows.append((_w("command"), " ".join(r.command)))
    bullets = [_t(x) for x in r.reasons] + [_w("warning", text=_t(w)) for w in r.warnings]
    return Section(_w("recommendation"), tuple(rows), None, tuple(bullets))


def _install_section(i: InstallResult) -> Section:
    rows = [(_w("environment"), str(i.env_path)), ("Python", str(i.python)), ("PyTorch", i.torch_version or ""),
            (_w("install_time"), f"{i.duration_s:.1f} s")]
    if i.log_path:
        rows.append((_w("log"), str(i.log_path)))
    if i.packages:
        rows.append((_w("packages"), ", ".join(f"{k} {v}" for k, v in i.packages.items())))
    for s in i.downloads:  # which source served each wheel (the assistant's own downloads)
        how = f"{_t(s.source)} ({s.url})"
        if s.earlier:
            how += f", resumed at byte {s.resumed_at} after {', '.join(s.earlier)} failed: " + \
                "; ".join(_t(f) for f in s.failures)
        rows.append((_w("source_of", file=s.filename), how))
    return Section(_w("installation"), tuple(rows))


def _commands_section(i: InstallResult) -> Section | None:
    """What the install ran, step by step, as it ran (credentials masked)."""
    if not i.commands_run:
        return None
    table = ((_w("step"), _w("command"), _w("exit_code"), _w("time")),
             *((c.step, shells.join(c.argv), "" if c.exit_code is None else str(c.exit_code), f"{c.duration_s:.1f} s")
               for c in i.commands_run))
    return Section(_w("commands"), (), table)


def _verify_section(v: VerifyReport) -> Section:
    rows = []
    if v.torch_version is not None:
        rows.append(("PyTorch", v.torch_version))
    rows.append((_w("all_passed"), _w("yes") if v.ok else _w("no")))
    table = None
    if v.checks:
        table = ((_w("check"), _w("result"), _w("detail")),
                 *((_t(c.title) or c.name, _status(c.status), _t(c.detail)) for c in v.checks))
    return Section(_w("verification"), tuple(rows), table)


def _status(status: str) -> str:
    """passed / failed / skipped in the report's language (another status as it is)."""
    return _w(status) if status in ("passed", "failed", "skipped") else status


def _bench_section(b: BenchReport) -> Section:
    rows = []
    device = " ".join(x for x in (b.device, b.device_name) if x)
    if device:
        rows.append((_w("device"), device))
    if b.cpu_name and b.device != "cpu":
        rows.append((_w("cpu"), b.cpu_name))
    if b.cancelled:
        rows.append((_w("status"), _w("partial")))
    head = bench_headline_text(b)
    if head is not None:
        rows.append((_w("result"), _t(head)))
    per_dtype = bench_dtype_lines(b)
    if len(per_dtype) > 1:
        rows.append((_w("per_dtype"), "; ".join(_t(line) for line in per_dtype)))
    share = bench_peak_text(b)
    if share is not None and head is not None:
        rows.append((_w("peak_share"), _t(share)))
    if b.load is not None:
        rows.append((_w("load"), _w("load_busy" if b.load.busy else "load_quiet", share=b.load.other_share * 100,
                                    cpus=b.load.other_cpus, total=b.load.cpus)))
    if b.spread is not None:
        rows.append((_w("spread"), _w("spread_value", pct=b.spread * 100)))
    if b.remeasured:
        rows.append((_w("remeasured"), _w("rounds_one") if b.remeasured == 1 else _w("rounds", n=b.remeasured)))
    if b.threads is not None:
        rows.append((_w("threads"), str(b.threads)))
    for peak, label in ((b.peak, "peak"), (b.cpu_peak, "cpu_peak")):
        if peak is None or not peak.gflops or (label == "cpu_peak" and peak == b.peak):
            continue  # unknown, or the device is the CPU: one line is enough
        text = ", ".join(f"{k} {_fmt_num(v)} GFLOP/s" for k, v in peak.gflops.items())
        if peak.source:
            text += _w("peak_source", source=peak.source)
        rows.append((_w(label), text))
    for c in b.copy:
        rows.append((_w("copy", direction=c.direction, memory=c.memory), f"{_fmt_num(c.gb_per_s, 2)} GB/s"))
    for sp in bench_speedup_lines(b):
        rows.append((_w("speedup"), _t(sp)))
    ended = {BenchStatus.BUDGET: _w("budget_reached"),
             BenchStatus.CANCELLED: _w("stopped_partial")}.get(b.status, "")
    if b.budget_exhausted and not ended:
        ended = _w("budget_reached")
    rows.append((_w("time_taken"), f"{b.elapsed_s:.1f} s{ended}"))
    results = b.all_results()
    table = None
    if results:
        table = ((_w("device"), "dtype", _w("size"), "GFLOP/s", _w("time_ms"), _w("of_peak"), _w("spread_col"),
                  _w("runs")),
                 *((r.device, r.dtype, str(r.n), _fmt_num(r.gflops), _fmt_num(r.median_s * 1000.0, 2),
                    f"{r.fraction_of_peak * 100:.0f} %" if r.fraction_of_peak is not None else "",
                    f"±{r.spread * 100:.0f} %" if r.spread is not None else "", str(r.runs))
                   for r in results))
    notes = [_t(n) for n in bench_notes(b) if n.code not in ("bench.partial", "bench.budget", "bench.quiet")]
    if b.cancelled:
        notes.append(_w("stopped_note"))
    if b.peak is not None and b.peak.assumptions:
        notes.append(_w("peak_how", how="; ".join(_t(a) for a in b.peak.assumptions)))
    for sk in b.skipped:
        what = " ".join(x for x in (sk.device, sk.dtype, f"n={sk.n}" if sk.n else None) if x)
        notes.append(_w("skipped_what", what=what, reason=sk.reason))
    title = _w("bench_partial") if b.cancelled else _w("bench")
    return Section(title, tuple(rows), table, tuple(notes))


def _diagnosis_section(d: Diagnosis) -> Section:
    bullets = []
    for f in d.findings:
        fix = _t(f.fix)
        bullets.append(f"{_t(f.title) or f.code}: {_t(f.explanation)}" + (_w("fix_inline", fix=fix) if fix else ""))
    if not d.findings:
        bullets.append(_w("no_problems"))
    return Section(_w("diagnosis"), (), None, tuple(bullets))


# --------------------------------------------------------------------- reading back

_ERRORS: dict[str, type[UserError]] = {"UserError": UserError, "BadInput": BadInput, "Cancelled": Cancelled}


def _error_from_dict(d: dict[str, Any]) -> UserError:
    cls = _ERRORS.get(str(d.get("error")), UserError)
    log = d.get("log_path")
    kw: dict[str, Any] = {"lines": [str(x) for x in d.get("lines") or ()], "log_path": Path(log) if log else None}
    if d.get("exit_code") is not None:
        kw["exit_code"] = int(d["exit_code"])
    if d.get("code"):
        kw["code"] = str(d["code"])
    kw["remedies"] = tuple(Remedy.from_dict(r) for r in d.get("remedies") or () if isinstance(r, dict))
    return cls(str(d.get("message", "")), str(d.get("hint", "")), **kw)


# --------------------------------------------------------------------- helpers

def load_session_report(path: str | Path) -> SessionReport:
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(msg("report.missing", "report file {path} does not exist", path=str(p))) from None
    except json.JSONDecodeError as exc:
        raise BadInput(msg("report.bad_json", "report file {path} is not valid JSON (line {line}: {reason})",
                           path=str(p), line=exc.lineno, reason=exc.msg)) from None
    return SessionReport.from_dict(data)


def safe_stem(name: str) -> str:
    """A file-name-safe stem (host names may hold characters Windows refuses)."""
    s = re.sub(r"[^\w.-]+", "_", str(name), flags=re.UNICODE).strip("._")
    return s[:120] or "report"


def _backend_name(variant: str | None) -> str | None:
    backend = backend_of_variant(variant)
    return backend.value if backend is not None else None


def _bench_summary(bench: BenchReport | None) -> dict[str, Any]:
    """The figure to quote (the median at the largest size, see BenchReport.headline) and how
    certain it is: the busy verdict from the measured load, the typical spread of the runs."""
    head = bench.headline() if bench is not None else None
    return {"bench_gflops": head.gflops if head else None, "bench_dtype": head.dtype if head else None,
            "bench_n": head.n if head else None, "bench_busy": bench.busy if bench is not None else None,
            "bench_spread": bench.spread if bench is not None else None}


def _best_bench(bench: BenchReport | None) -> BenchResult | None:
    """The fastest measurement, the CPU baseline included."""
    results = bench.all_results() if bench is not None else ()
    return max(results, key=lambda r: r.gflops) if results else None


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
