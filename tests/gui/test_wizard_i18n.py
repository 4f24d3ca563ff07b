"""The Simplified Chinese translation is complete, current, and compiled.

Fails when a string is untranslated (``type="unfinished"`` or empty), when a ``self.tr(...)``
literal in app/gui is missing from the .ts (lupdate was not run), when a translation drops or
invents a ``{placeholder}``, and when the compiled .qm does not match the .ts.
"""
from __future__ import annotations

import ast
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TS = REPO / "resources" / "i18n" / "torch_setup_zh_CN.ts"
QM = TS.with_suffix(".qm")
FIX = "run: .venv/bin/python scripts/update_translations.py, then translate the new strings"


def _messages() -> list[tuple[str, str, ET.Element]]:
    out = []
    for ctx in ET.parse(TS).getroot().iter("context"):
        name = ctx.findtext("name") or ""
        for msg in ctx.iter("message"):
            out.append((name, msg.findtext("source") or "", msg.find("translation")))
    return out


def _tr_literals() -> list[tuple[str, str, str]]:
    """(context, source, where) for every self.tr("...") / QCoreApplication.translate("ctx", "...")."""
    found = []
    for path in sorted((REPO / "app" / "gui").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def visit(node, cls, path=path):
            for child in ast.iter_child_nodes(node):
                c = child.name if isinstance(child, ast.ClassDef) else cls
                if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute):
                    args = child.args
                    where = f"{path.relative_to(REPO)}:{child.lineno}"
                    if child.func.attr == "tr" and args and isinstance(args[0], ast.Constant) \
                            and isinstance(args[0].value, str):
                        found.append((cls or "", args[0].value, where))
                    elif child.func.attr == "translate" and len(args) >= 2 and all(
                            isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args[:2]):
                        found.append((args[0].value, args[1].value, where))
                visit(child, c)

        visit(tree, None)
    return found


def test_catalogue_exists():
    assert TS.is_file(), f"{TS} is missing; {FIX}"
    assert QM.is_file(), f"{QM} is missing; {FIX}"


def test_every_string_is_translated():
    bad = []
    for ctx, src, tr in _messages():
        if tr is None:
            bad.append(f"{ctx}: {src!r} (no translation element)")
        elif tr.get("type") in ("vanished", "obsolete"):
            continue
        elif tr.get("type") == "unfinished" or not (tr.text or "").strip():
            bad.append(f"{ctx}: {src!r}")
    assert not bad, f"{len(bad)} untranslated strings ({FIX}):\n" + "\n".join(bad)


def test_every_tr_literal_is_in_the_catalogue():
    have = {(ctx, src) for ctx, src, _ in _messages()}
    literals = _tr_literals()
    assert len(literals) > 100, "the scan found the GUI's strings"
    missing = [f"{where}: {ctx}: {src!r}" for ctx, src, where in literals if (ctx, src) not in have]
    assert not missing, f"strings not in {TS.name} ({FIX}):\n" + "\n".join(missing)


def test_placeholders_and_accelerators_survive():
    bad = []
    for ctx, src, tr in _messages():
        text = (tr.text or "") if tr is not None else ""
        if not text or tr.get("type") in ("vanished", "obsolete"):
            continue
        fields = re.compile(r"\{(\w*(?::[^{}]*)?)\}")  # {name} and {name:.1f}
        if sorted(fields.findall(src)) != sorted(fields.findall(text)):
            bad.append(f"{ctx}: {src!r} -> {text!r}: placeholders differ")
        if "&" in src.replace("&&", "") and "&" not in text.replace("&&", ""):
            bad.append(f"{ctx}: {src!r} -> {text!r}: keyboard accelerator lost")
    assert not bad, "\n".join(bad)


def test_compiled_catalogue_matches_the_source():
    pytest.importorskip("PySide6")
    from PySide6.QtCore import QTranslator

    tr = QTranslator()
    assert tr.load(str(QM))
    stale = []
    for ctx, src, t in _messages():
        if t is None or t.get("type") in ("unfinished", "vanished", "obsolete") or not t.text:
            continue
        if tr.translate(ctx, src) != t.text:
            stale.append(f"{ctx}: {src!r}")
    assert not stale, f"{QM.name} is older than {TS.name} (run pyside6-lrelease):\n" + "\n".join(stale[:20])


def test_install_page_redraws_the_package_line_on_language_change(qtbot):
    pytest.importorskip("PySide6")
    from app.core.base.events import ProgressEvent
    from app.gui import i18n as gui_i18n
    from app.gui.pages.install import InstallPage
    from app.gui.state import WizardState

    gui_i18n.set_language("en")
    try:
        page = InstallPage(WizardState())
        qtbot.addWidget(page)
        page._status = "running"  # (the line shows while the install runs: events come only then)
        page.on_event(ProgressEvent("torch", 10, 10, unit="packages"))
        assert page.package_label.text() == "torch (package 10 of 10)"
        gui_i18n.set_language("zh_CN")
        qtbot.waitUntil(lambda: page.package_label.text() != "torch (package 10 of 10)", timeout=3000)
        text = page.package_label.text()
        assert re.search(r"[\u4e00-\u9fff]", text) and "torch" in text and "10" in text
        gui_i18n.set_language("en")
        qtbot.waitUntil(lambda: page.package_label.text() == "torch (package 10 of 10)", timeout=3000)
    finally:
        gui_i18n.set_language("en")
