"""The layering rules of DESIGN.md, checked in a fresh interpreter and on the source."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _imported_after(code: str) -> set[str]:
    probe = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, encoding="utf-8",
                         timeout=60, check=True).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


@pytest.mark.parametrize("stmt", [
    "import app.core",
    "import app.cli; app.cli.build_parser()",
    "import app.core.proc.runner, app.core.base.errors, app.core.base.events, app.core.base.paths",
])
def test_core_and_cli_import_neither_qt_nor_torch(stmt):
    mods = _imported_after(stmt)
    assert not any(m == "PySide6" or m.startswith("PySide6.") for m in mods), stmt
    assert not any(m == "torch" or m.startswith("torch.") for m in mods), stmt


def _imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_source_layers():
    """core never imports Qt; nothing outside app/probes imports torch; probes are stdlib+torch."""
    for path in (REPO / "app").rglob("*.py"):
        rel = path.relative_to(REPO).as_posix()
        imports = _imports_of(path)
        if rel.startswith("app/core/") or rel.startswith("app/probes/"):
            assert "PySide6" not in imports, f"{rel} imports Qt"
        if not rel.startswith("app/probes/"):
            assert "torch" not in imports, f"{rel} imports torch"
        else:
            allowed = set(sys.stdlib_module_names) | {"torch", "numpy"}
            assert imports <= allowed, f"{rel} imports {imports - allowed}: probes are stdlib + torch"


def test_no_shell_strings():
    for path in list((REPO / "app").rglob("*.py")) + list((REPO / "installer").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "shell=True" not in text.replace(" ", ""), path
        assert "os.system(" not in text, path


def test_subprocess_only_in_runner():
    """Every subprocess goes through app.core.proc.runner (probes run inside the target env and
    may start their own distributed workers; the GUI never starts processes itself)."""
    for path in (REPO / "app").rglob("*.py"):
        rel = path.relative_to(REPO).as_posix()
        if rel in ("app/core/proc/runner.py",) or rel.startswith("app/probes/"):
            continue
        text = path.read_text(encoding="utf-8")
        for needle in ("subprocess.Popen", "subprocess.run(", "subprocess.check_", "os.spawn",
                       "os.exec", "QProcess"):
            assert needle not in text, f"{rel} starts a process itself ({needle}); use app.core.proc.runner"
