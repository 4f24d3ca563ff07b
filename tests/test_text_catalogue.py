"""Texts by code (app.core.base.text): every msg() in app/ is translated, with the same placeholders.

The scan reads the source (ast), so a code used anywhere is found without running it. A code
is one sentence: two msg() calls with the same code must carry the same English template.
"""
from __future__ import annotations

import ast
import json
import re
import string
import sys
from pathlib import Path

import pytest

from app.core.base import text
from app.core.base.text import Joined, msg, render

REPO = Path(__file__).resolve().parents[1]
CATALOGUE_DIR = REPO / "resources" / "i18n" / "core"
CODE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
CJK = re.compile(r"[\u4e00-\u9fff]")


def _fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def scan_codes() -> tuple[dict[str, str], list[str]]:
    """code -> English template, for every msg("code", "template", ...) and every
    texts("prefix.", {"name": "template", ...}) table in app/; and the problems."""
    found: dict[str, str] = {}
    problems: list[str] = []

    def add(where: str, code: str, en: str) -> None:
        if not CODE.match(code):
            problems.append(f"{where}: code {code!r} is not of the form area.name")
        if code in found and found[code] != en:
            problems.append(f"{where}: code {code!r} is used with two different templates")
        found.setdefault(code, en)

    for path in sorted((REPO / "app").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            where = f"{path.relative_to(REPO)}:{node.lineno}"
            if node.func.id == "texts":
                _scan_table(node, where, add, problems)
            elif node.func.id == "msg":
                _scan_msg(node, where, add, problems)
    _scan_probe_tables(add, problems)
    return found, problems


def _scan_probe_tables(add, problems: list[str]) -> None:
    """The verify probe's TITLES / DETAILS, which app.core.measure.verify reads from the probe's source
    (one home): each is a table like texts(PROBE_TEXTS[name], {...})."""
    from app.core.measure.verify import PROBE_TEXTS

    path = REPO / "app" / "probes" / "verify.py"
    if not path.exists():  # a scan of another tree (the scanner's own tests)
        return
    tree = ast.parse(path.read_text(encoding="utf-8"))
    seen = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in PROBE_TEXTS:
            name = node.targets[0].id
            seen.add(name)
            call = ast.Call(func=ast.Name("texts"), args=[ast.Constant(PROBE_TEXTS[name]), node.value], keywords=[])
            _scan_table(call, f"{path.relative_to(REPO)}:{node.lineno}", add, problems)
    problems.extend(f"{path.relative_to(REPO)}: no literal table {name}" for name in sorted(set(PROBE_TEXTS) - seen))


def _literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _scan_msg(node: ast.Call, where: str, add, problems: list[str]) -> None:
    if len(node.args) < 2 or not all(_literal(a) for a in node.args[:2]):
        problems.append(f"{where}: msg() needs a literal code and a literal English template")
        return
    code, en = node.args[0].value, node.args[1].value
    add(where, code, en)
    given = {k.arg for k in node.keywords if k.arg}
    if any(k.arg is None for k in node.keywords):
        return  # **kwargs: placeholders checked at render time
    missing = _fields(en) - given
    if missing:
        problems.append(f"{where}: {code!r} has no value for {sorted(missing)}")


def _scan_table(node: ast.Call, where: str, add, problems: list[str]) -> None:
    """texts(prefix, {name: template}): each entry is the code prefix + name (arguments at render time)."""
    table = node.args[1] if len(node.args) == 2 else None
    if (node.keywords or table is None or not _literal(node.args[0]) or not isinstance(table, ast.Dict)
            or not table.keys or not all(k is not None and _literal(k) and _literal(v)
                                         for k, v in zip(table.keys, table.values, strict=True))):
        problems.append(f"{where}: texts() needs a literal prefix and a literal dict of literal templates")
        return
    prefix = node.args[0].value
    for k, v in zip(table.keys, table.values, strict=True):
        add(where, prefix + k.value, v.value)


def load_catalogue(lang: str) -> dict[str, str]:
    merged: dict[str, str] = {}
    for path in sorted((CATALOGUE_DIR / lang).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for k, v in data.items():
            if k.startswith("_"):
                continue
            assert k not in merged, f"{k} is defined in two catalogue files ({path.name})"
            merged[k] = v
    return merged


def test_every_msg_call_is_well_formed():
    _, problems = scan_codes()
    assert not problems, "\n".join(problems)


def test_the_scan_reads_text_tables_and_refuses_computed_ones(tmp_path, monkeypatch):
    fake = tmp_path / "app"
    fake.mkdir()
    (fake / "m.py").write_text(
        'A = texts("demo.t_", {"one": "One {x}", "two": "Two"})\n'
        'B = texts("demo.", {name: "x" for name in "ab"})\n'
        'C = texts("demo.", {"k": TEMPLATE})\n'
        'D = texts(PREFIX, {"k": "x"})\n'
        'E = texts("Demo ", {"k": "x"})\n', encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    found, problems = scan_codes()
    assert found == {"demo.t_one": "One {x}", "demo.t_two": "Two", "Demo k": "x"}
    assert [p.split(": ", 1)[1] for p in problems] == [
        "texts() needs a literal prefix and a literal dict of literal templates"] * 3 + [
        "code 'Demo k' is not of the form area.name"]


def test_a_text_table_builds_the_same_msg_as_a_call():
    table = text.texts("test.t_", {"one": "One {x}", "two": "Two"})
    assert table.msg("one", x=1) == msg("test.t_one", "One {x}", x=1)
    assert table.msg("two", x=1) == msg("test.t_two", "Two")  # no placeholders: no arguments
    assert "one" in table and "three" not in table and sorted(table) == ["one", "two"] and len(table) == 2
    with pytest.raises(KeyError):
        table.msg("three")


def test_catalogue_covers_every_code_with_the_same_placeholders():
    codes, _ = scan_codes()
    cat = load_catalogue("zh_CN")
    missing = sorted(c for c in codes if c not in cat)
    assert not missing, f"no zh_CN translation for: {missing}"
    wrong = sorted(c for c, en in codes.items() if _fields(en) != _fields(cat[c]))
    assert not wrong, f"placeholders differ from the English template: {wrong}"
    untranslated = sorted(c for c in codes if not CJK.search(cat[c])
                          and re.search(r"[A-Za-z]{4,}", re.sub(r"\{[^}]*\}", "", cat[c])))
    assert not untranslated, f"zh_CN entries that look English: {untranslated}"


def test_no_stale_catalogue_entries():
    codes, _ = scan_codes()
    stale = sorted(c for c in load_catalogue("zh_CN") if c not in codes and not c.startswith("text."))
    assert not stale, f"catalogue entries no msg() uses any more: {stale}"


def test_render_is_a_function_of_the_language_argument():
    m = msg("test.hello", "Hello {who}, {n:.1f}", who=msg("test.world", "world"), n=2.25)
    assert render(m) == "Hello world, 2.2"
    assert render(m, "en") == str(m)
    # an unknown code renders its English template in any language
    assert render(m, "zh_CN") == "Hello world, 2.2"
    assert m.to_dict() == {"code": "test.hello", "text": "Hello world, 2.2", "args": {"who": "world", "n": 2.25}}


def test_sequences_join_with_the_language_separator(monkeypatch):
    monkeypatch.setitem(text._catalogues, "zh_CN", {"test.list": "列表：{items}"})
    m = msg("test.list", "List: {items}", items=("a", "b"))
    assert render(m, "en") == "List: a, b"
    assert render(m, "zh_CN") == "列表：a、b"
    j = Joined((m, "x"), sep="; ")
    assert render(j, "zh_CN") == "列表：a、b; x"


def test_cap_writes_a_text_argument_with_a_capital_in_english_only(monkeypatch):
    monkeypatch.setitem(text._catalogues, "zh_CN", {"test.sentence": "{text}。", "test.works": "可以用"})
    m = msg("test.sentence", "{text:cap}.", text=msg("test.works", "works; pytorch.org"))
    assert render(m, "en") == "Works; pytorch.org."
    assert render(m, "zh_CN") == "可以用。"
    assert render(msg("test.sentence", "{text:cap}.", text="x"), "en") == "X."
    assert render(msg("test.num", "{n:>4}|{s:<3}|", n=7, s="ab"), "en") == "   7|ab |"  # other specs still work


def test_mappings_are_refused_as_arguments():
    with pytest.raises(TypeError):
        msg("test.bad", "{x}", x={"a": 1})
