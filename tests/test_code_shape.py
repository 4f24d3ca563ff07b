"""The shape rules of docs/CONTRIBUTING.md that a linter does not check.

* No function in app/core is longer than 80 lines unless a ``# long: <why>`` comment stands on
  one of the lines just above its ``def`` (or its decorators): a long function must say why.
* No function anywhere in app/ is longer than 120 lines, unless it is a literal table (its body,
  after a docstring, is one ``return`` of a tuple, list or dict display), and no class is longer
  than 500 lines.
* The probes stand alone: they import nothing from ``app`` (import-linter checks it too; this test
  also catches a relative import).
"""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 80
MAX_FUNCTION_LINES = 120  # anywhere in app/
MAX_CLASS_LINES = 500


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


def _is_literal_table(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = node.body[1:] if node.body and isinstance(node.body[0], ast.Expr) \
        and isinstance(node.body[0].value, ast.Constant) else node.body
    return len(body) == 1 and isinstance(body[0], ast.Return) \
        and isinstance(body[0].value, (ast.Tuple, ast.List, ast.Dict))


def _too_long(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        length = (getattr(node, "end_lineno", None) or 0) - getattr(node, "lineno", 0) + 1
        if isinstance(node, ast.ClassDef) and length > MAX_CLASS_LINES:
            found.append(f"{path.relative_to(REPO)}:{node.lineno} class {node.name} ({length} lines)")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and length > MAX_FUNCTION_LINES \
                and not _is_literal_table(node):
            found.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_function_over_120_lines_nor_class_over_500_in_the_app():
    long = [f for p in sorted((REPO / "app").rglob("*.py")) for f in _too_long(p)]
    assert not long, "functions over 120 lines (not a literal table) or classes over 500 lines:\n" + "\n".join(long)


def test_the_size_limits_can_fail(tmp_path):
    global REPO
    old, REPO = REPO, tmp_path
    try:
        body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
        (tmp_path / "f.py").write_text(f"def f():\n{body}\n", encoding="utf-8")
        assert _too_long(tmp_path / "f.py")
        rows = "\n".join(f"        ({i}, {i})," for i in range(MAX_FUNCTION_LINES))
        (tmp_path / "t.py").write_text(f'def t():\n    """A table."""\n    return (\n{rows}\n    )\n', encoding="utf-8")
        assert not _too_long(tmp_path / "t.py")  # a literal table may be long
        methods = "\n".join(f"    def m{i}(self):\n        return {i}\n" for i in range(MAX_CLASS_LINES // 3 + 1))
        (tmp_path / "c.py").write_text(f"class C:\n{methods}", encoding="utf-8")
        assert any("class C" in f for f in _too_long(tmp_path / "c.py"))
    finally:
        REPO = old


def test_probes_import_nothing_from_the_app():
    for path in sorted((REPO / "app" / "probes").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0 and not (node.module or "").startswith("app"), f"{path.name}: {ast.dump(node)}"
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("app") for a in node.names), path.name
