#!/usr/bin/env python3
"""Refresh the Qt Linguist catalogue from the GUI sources and compile it.

    .venv/bin/python scripts/update_translations.py          # lupdate + lrelease
    .venv/bin/python scripts/update_translations.py --check  # also fail on untranslated strings

lupdate scans every ``self.tr(...)`` / ``QCoreApplication.translate(...)`` in app/gui and
keeps the translations already in resources/i18n/torch_setup_<lang>.ts; new strings come
in as ``type="unfinished"`` until someone translates them (Qt Linguist, or any editor).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LANGS = ("zh_CN",)


def tool(name: str) -> str:
    cand = Path(sys.executable).parent / name
    return str(cand) if cand.exists() else name


def untranslated(ts: Path) -> list[str]:
    bad = []
    for ctx in ET.parse(ts).getroot().iter("context"):
        cname = ctx.findtext("name") or ""
        for msg in ctx.iter("message"):
            tr = msg.find("translation")
            if tr is None or tr.get("type") in ("unfinished",) or not (tr.text or "").strip():
                if tr is not None and tr.get("type") in ("obsolete", "vanished"):
                    continue
                bad.append(f"{cname}: {msg.findtext('source')}")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    sources = sorted(str(p.relative_to(REPO)) for p in (REPO / "app" / "gui").rglob("*.py"))
    rc = 0
    for lang in LANGS:
        ts = REPO / "resources" / "i18n" / f"torch_setup_{lang}.ts"
        qm = ts.with_suffix(".qm")
        subprocess.run([tool("pyside6-lupdate"), *sources, "-no-obsolete", "-locations", "relative",
                        "-target-language", lang, "-ts", str(ts.relative_to(REPO))], cwd=REPO, check=True)
        subprocess.run([tool("pyside6-lrelease"), str(ts), "-qm", str(qm)], cwd=REPO, check=True)
        missing = untranslated(ts)
        if missing:
            print(f"{ts.name}: {len(missing)} untranslated:", *missing, sep="\n  ")
            rc = 1 if args.check else 0
    return rc


if __name__ == "__main__":
    sys.exit(main())
