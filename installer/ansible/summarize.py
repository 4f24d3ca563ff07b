#!/usr/bin/env python3
"""Summarise a fleet's Torch Setup reports (``<reports>/<host>.json``) in one table.

    python summarize.py REPORTS_DIR [--expect host1,host2,...] [--format text|md|csv]

Prints the table and writes ``summary.md`` and ``summary.csv`` next to the reports. Hosts
named by ``--expect`` with no report show up as "no report". Exit code 0 when every host
reported ``ok``, 1 otherwise (2 for bad usage).

Standard library only: it runs on the Ansible control machine, which need not have the
assistant installed.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

COLUMNS = [
    ("host", "Host"), ("status", "Status"), ("backend", "Backend"), ("torch", "PyTorch"),
    ("checks", "Checks"), ("best", "Best GFLOP/s"), ("time", "Time"), ("detail", "Detail"),
]


def _row(host: str, data: dict | None, problem: str = "") -> dict:
    if data is None:
        return {"host": host, "status": "no report", "backend": "", "torch": "", "checks": "",
                "best": "", "time": "", "detail": problem}
    s = data.get("summary") or {}
    backend = "/".join(x for x in (s.get("backend"), s.get("variant")) if x)
    checks = ""
    if s.get("verify_passed") is not None:
        checks = f"{s['verify_passed']} passed"
        if s.get("verify_failed"):
            checks += f", {s['verify_failed']} failed"
        if s.get("verify_skipped"):
            checks += f", {s['verify_skipped']} skipped"
    best = ""
    if isinstance(s.get("best_gflops"), (int, float)):
        best = f"{s['best_gflops']:.1f}"
        extra = " ".join(x for x in (s.get("best_device"), s.get("best_dtype")) if x)
        best += f" ({extra})" if extra else ""
    dur = data.get("duration_s", s.get("duration_s"))
    err = data.get("error")
    detail = (err.get("message") if isinstance(err, dict) else err) or ""
    if not detail and s.get("env"):
        detail = str(s["env"])
    return {
        "host": data.get("hostname") or host,
        "status": str(data.get("status") or s.get("status") or "?"),
        "backend": backend, "torch": s.get("torch") or "", "checks": checks, "best": best,
        "time": f"{dur:.0f} s" if isinstance(dur, (int, float)) else "",
        "detail": " ".join(str(detail).split())[:160],
    }


def collect(folder: Path, expect: list[str]) -> list[dict]:
    rows = {}
    for path in sorted(folder.glob("*.json")):
        host = path.stem
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            rows[host] = _row(host, None, f"unreadable report: {exc}")
            continue
        if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("torch-setup-session/"):
            continue  # not a session report (e.g. something else in the folder)
        rows[host] = _row(host, data)
        rows[host]["host"] = host  # the inventory name the file was fetched under
    for host in expect:
        if host and host not in rows:
            rows[host] = _row(host, None, "the host produced no report (unreachable, or it failed early)")
    return [rows[h] for h in sorted(rows)]


def render_text(rows: list[dict]) -> str:
    """A compact table (fits a terminal and Ansible's output); details listed below it."""
    cols = [c for c in COLUMNS if c[0] != "detail"]
    heads = [h for _, h in cols]
    table = [[str(r[k]) for k, _ in cols] for r in rows]
    widths = [max([len(h)] + [len(t[i]) for t in table]) for i, h in enumerate(heads)]
    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [sep, "| " + " | ".join(h.ljust(w) for h, w in zip(heads, widths, strict=False)) + " |", sep]
    for t in table:
        out.append("| " + " | ".join(c.ljust(w) for c, w in zip(t, widths, strict=False)) + " |")
    out.append(sep)
    ok = sum(1 for r in rows if r["status"] == "ok")
    out.append(f"{ok} of {len(rows)} hosts ok")
    for r in rows:
        if r["status"] != "ok" and r["detail"]:
            out.append(f"{r['host']}: {r['detail']}")
    return "\n".join(out)


def render_md(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(h for _, h in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in rows:
        lines.append("| " + " | ".join(str(r[k]).replace("|", "\\|") for k, _ in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def render_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow([h for _, h in COLUMNS])
    for r in rows:
        w.writerow([r[k] for k, _ in COLUMNS])
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Summarise Torch Setup reports in one table.")
    p.add_argument("reports", type=Path, help="the folder holding <host>.json reports")
    p.add_argument("--expect", default="", help="comma-separated host names that should have reported")
    p.add_argument("--format", choices=("text", "md", "csv"), default="text")
    p.add_argument("--no-write", action="store_true", help="do not write summary.md / summary.csv")
    args = p.parse_args(argv)
    if not args.reports.is_dir():
        print(f"summarize.py: {args.reports} is not a folder", file=sys.stderr)
        return 2
    rows = collect(args.reports, [h.strip() for h in args.expect.split(",")])
    if not args.no_write:
        (args.reports / "summary.md").write_text(render_md(rows), encoding="utf-8")
        (args.reports / "summary.csv").write_text(render_csv(rows), encoding="utf-8", newline="")
    print({"text": render_text, "md": render_md, "csv": render_csv}[args.format](rows))
    return 0 if rows and all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
