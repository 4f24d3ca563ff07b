"""The shape rules of docs/CONTRIBUTING.md that a linter does not check.

* No function in app/core is longer than 80 lines unless a ``# long: <why>`` comment stands on
  one of the lines just above its ``def`` (or its decorators): a long function must say why.
* The probes stand alone: they import nothing from ``app`` (import-linter checks it too; this test
  also catches a relative import).
"""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 80


def _long_functions(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    found = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        length = (node.end_lineno or node.lineno) - node.lineno + 1
        if length <= MAX_LINES:
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        above = lines[max(0, first - 4):first - 1]
        if not any("# long:" in line for line in above):
            found.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_core_functions_are_short_or_say_why():
    long = [f for p in sorted((REPO / "app" / "core").rglob("*.py")) for f in _long_functions(p)]
    assert not long, "functions over 80 lines without a '# long: <why>' comment:\n" + "\n".join(long)


def test_the_long_function_rule_can_fail(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES + 1))
    (tmp_path / "m.py").write_text(f"def f():\n{body}\n", encoding="utf-8")
    global REPO
    old, REPO = REPO, tmp_path
    try:
        assert _long_functions(tmp_path / "m.py")
        (tmp_path / "m.py").write_text(f"# long: a table\ndef f():\n{body}\n", encoding="utf-8")
        assert not _long_functions(tmp_path / "m.py")
    finally:
        REPO = old


def test_probes_import_nothing_from_the_app():
    for path in sorted((REPO / "app" / "probes").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0 and not (node.module or "").startswith("app"), f"{path.name}: {ast.dump(node)}"
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("app") for a in node.names), path.name
