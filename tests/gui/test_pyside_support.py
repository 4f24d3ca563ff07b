"""PySide6's support code from a bytecode cache (app/gui/pyside_support.py).

Each check starts fresh interpreters: PySide6 compiles its support code only the first time a
process imports it, and pytest-qt has imported it in this one already.
"""
from __future__ import annotations
import __future__

import builtins
import json
import marshal
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from app.gui import pyside_support

MODULE = Path(pyside_support.__file__)
REPO = MODULE.parents[2]

# Imports PySide6 through import_pyside(cache=argv[1]) without the app.gui package (whose import
# would use the default cache first), then reports what happened and what PySide can still do.
CHILD = r"""
import builtins, importlib.util, json, sys
spec = importlib.util.spec_from_file_location("pyside_support", sys.argv[2])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
calls = []
real = builtins.compile
def counting(source, filename, *a, **k):
    calls.append(str(filename))
    return real(source, filename, *a, **k)
builtins.compile = counting  # sees what reaches Python's compile while PySide loads
from_cache = mod.import_pyside(cache=__import__("pathlib").Path(sys.argv[1]))
restored = builtins.compile is counting
builtins.compile = real
from PySide6.QtWidgets import QWidget
from shibokensupport.signature import get_signature
print(json.dumps({"from_cache": from_cache, "restored": restored,
                  "compiled": [c for c in calls if c.startswith("shibokensupport/")],
                  "signature": [str(s) for s in get_signature(QWidget.resize)]}))
"""


def child(cache: Path, *python_flags: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run([sys.executable, *python_flags, "-c", CHILD, str(cache), str(MODULE)], env=env,
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_pyside_support_code_is_compiled_once_then_loaded_from_the_cache(tmp_path):
    cache = tmp_path / "__pycache__" / "pyside-support.bin"
    first = child(cache)
    assert not first["from_cache"] and len(first["compiled"]) >= 5  # PySide compiled its modules
    assert cache.is_file()

    second = child(cache)
    assert second["from_cache"] and second["compiled"] == []  # nothing of PySide's was compiled
    assert second["restored"]  # Python's compile is back once PySide6 is loaded
    assert second["signature"] == first["signature"] and "w: int, h: int" in second["signature"][-1]

    # the cached code is what Python's compile makes of the same source, flag for flag
    entries = pyside_support.read_cache(cache)
    assert {key[0] for key in entries} == set(first["compiled"])
    (name, _flags, size, crc), code = next(iter(entries.items()))
    assert code.co_filename == name and size > 0 and isinstance(crc, int)


def test_a_damaged_or_foreign_cache_is_ignored_and_replaced(tmp_path):
    cache = tmp_path / "__pycache__" / "pyside-support.bin"
    child(cache)
    good = cache.read_bytes()

    damaged = bytearray(good)
    damaged[-10] ^= 0xFF  # a flipped bit in the code: caught by the checksum, never unmarshalled
    cache.write_bytes(bytes(damaged))
    assert pyside_support.read_cache(cache) == {}
    again = child(cache)
    assert not again["from_cache"] and again["compiled"]
    assert pyside_support.read_cache(cache)  # written anew, whole

    cache.write_bytes(b"something else entirely")
    assert pyside_support.read_cache(cache) == {}
    assert not child(cache)["from_cache"] and pyside_support.read_cache(cache)


def test_changed_pyside_source_is_compiled_again(tmp_path):
    """An entry counts only for the very bytes PySide hands over (a PySide6 upgrade, a patched
    file): keyed by name, flags, length and CRC-32."""
    cache = tmp_path / "__pycache__" / "pyside-support.bin"
    child(cache)
    entries = pyside_support.read_cache(cache)
    stale = {(name, flags, size, crc ^ 1): code for (name, flags, size, crc), code in entries.items()}
    assert pyside_support.write_cache(cache, stale)
    run = child(cache)
    assert not run["from_cache"] and sorted(run["compiled"]) == sorted(k[0] for k in entries)
    assert set(pyside_support.read_cache(cache)) == set(entries)  # the stale entries are gone


def test_no_cache_is_written_where_python_writes_no_bytecode(tmp_path):
    cache = tmp_path / "__pycache__" / "pyside-support.bin"
    run = child(cache, "-B")
    assert not run["from_cache"] and run["compiled"] and not cache.exists()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc: a folder even root cannot write")
def test_a_folder_it_cannot_write_leaves_pyside_as_it_was():
    cache = Path("/proc/self/__pycache__/pyside-support.bin")
    run = child(cache)
    assert not run["from_cache"] and run["compiled"] and run["restored"]
    assert not cache.parent.exists()


def test_a_file_in_the_way_is_not_replaced(tmp_path):
    """The cache folder's name is taken by a file this run did not make: it stays as it was."""
    (tmp_path / "__pycache__").write_text("not a folder", encoding="utf-8")
    run = child(tmp_path / "__pycache__" / "pyside-support.bin")
    assert not run["from_cache"] and run["compiled"]
    assert (tmp_path / "__pycache__").read_text(encoding="utf-8") == "not a folder"
    assert [p.name for p in tmp_path.iterdir()] == ["__pycache__"]


def test_the_wizard_package_uses_the_cache_beside_its_bytecode(tmp_path):
    """``import app.gui`` loads PySide6 through the cache, kept where Python keeps this package's
    bytecode (here under ``-X pycache_prefix``, so the checkout is left alone)."""
    code = ("import app.gui, sys; from app.gui import pyside_support as s; "
            "print(s.cache_file()); print('shibokensupport.signature.loader' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    argv = [sys.executable, "-X", f"pycache_prefix={tmp_path}", "-c", code]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    path, loaded = out.stdout.splitlines()  # a line each: the checkout's path may hold a space
    assert loaded == "True"
    assert Path(path).is_file() and Path(path).is_relative_to(tmp_path)
    assert Path(path).name == f"pyside-support.{sys.implementation.cache_tag}.opt0.bin"


def _caller(future: bool, filename: str):
    """A function defined in code with or without ``from __future__ import annotations`` that
    calls ``compile`` the way PySide's importer does (inheriting its own future flags)."""
    src = ("from __future__ import annotations\n" if future else "") + (
        f"def call(compile_, text):\n    return compile_(text, {filename!r}, 'exec')\n")
    namespace: dict = {}
    exec(compile(src, "probe_caller.py", "exec", dont_inherit=True), namespace)
    return namespace["call"]


@pytest.mark.parametrize("future", [False, True])
def test_the_stand_in_compiles_with_the_callers_future_flags(future):
    """Every call the stand-in passes on, and every support module it compiles, gets exactly the
    ``from __future__`` flags Python's own compile would have taken from the caller."""
    stand_in = pyside_support.CachedCompile({})
    text = "def f(x: Undefined) -> None: pass\n"
    other = _caller(future, "probe.py")
    ours, python = other(stand_in, text), other(builtins.compile, text)
    assert marshal.dumps(ours) == marshal.dumps(python)  # passed on, as Python would compile it
    assert stand_in.compiled == 0 and stand_in.used == {}

    support = _caller(future, "shibokensupport/probe.py")
    code = support(stand_in, text.encode())
    assert marshal.dumps(code) == marshal.dumps(support(builtins.compile, text.encode()))
    assert bool(code.co_flags & __future__.annotations.compiler_flag) is future
    assert stand_in.compiled == 1 and len(stand_in.used) == 1
    next_run = pyside_support.CachedCompile(stand_in.used)  # the next start, with what this one kept
    assert support(next_run, text.encode()) is code and next_run.compiled == 0


def test_run_as_a_script_it_writes_the_cache_for_the_frozen_build(tmp_path):
    """build.spec runs ``python -I app/gui/pyside_support.py DIR`` with the frozen app's Python."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run([sys.executable, "-I", "-B", str(MODULE), str(tmp_path / "made")], env=env,
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    path = Path(out.stdout.strip().splitlines()[-1])
    assert path.parent == tmp_path / "made" and path.name == pyside_support.cache_file().name
    entries = pyside_support.read_cache(path)  # written although -B: the frozen app needs it
    assert len(entries) >= 5 and all(key[0].startswith("shibokensupport/") for key in entries)


def test_the_checksum_covers_the_whole_payload(tmp_path):
    path = tmp_path / "c.bin"
    assert pyside_support.write_cache(path, {("shibokensupport/x.py", 0, 1, 2): compile("1", "x", "eval")})
    data = path.read_bytes()
    head = len(pyside_support.MAGIC)
    assert data[head:head + 4] == zlib.crc32(data[head + 4:]).to_bytes(4, "little")
    assert list(pyside_support.read_cache(path)) == [("shibokensupport/x.py", 0, 1, 2)]
    assert [p.name for p in tmp_path.iterdir()] == ["c.bin"]  # no temporary file left behind
