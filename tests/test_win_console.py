"""The command line's own output never raises UnicodeEncodeError, whatever code page its stream
is in (app.core.base.consoles): a redirected stream on Windows is in the ANSI code page (cp1252 on an
English machine), PYTHONIOENCODING may name any (cp437, cp936), and the user's folders hold
names such as 张伟. What the stream cannot encode comes out as a backslash escape, so a JSON
document stays valid and loses nothing. Runs on every OS; on Windows also with no
PYTHONIOENCODING at all (a pipe there is cp1252 by itself).
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest


def _cli(*args: str, encoding: str | None, cwd=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "PYTHONUTF8")}
    if encoding:
        env["PYTHONIOENCODING"] = encoding
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, env=env, timeout=300, cwd=cwd)


def _ok(res: subprocess.CompletedProcess) -> None:
    err = res.stderr.decode("utf-8", "replace")
    assert res.returncode == 0, err[-2000:]
    assert "Traceback" not in err and "UnicodeEncodeError" not in err


@pytest.fixture(scope="module")
def cjk_target(tmp_path_factory):
    folder = tmp_path_factory.mktemp("console") / "张伟" / "torch env"
    folder.mkdir(parents=True)
    return folder


@pytest.mark.parametrize("encoding", ["cp1252", "cp936", "cp437"])
def test_detect_with_a_chinese_target_prints_in_any_code_page(cjk_target, encoding):
    res = _cli("detect", "--target", str(cjk_target), encoding=encoding)
    _ok(res)
    out = res.stdout.decode(encoding)
    assert "torch env" in out
    if encoding != "cp936":  # cp936 spells 张伟 itself
        assert "\\u5f20\\u4f1f" in out  # escaped, not lost


def test_detect_json_in_cp1252_stays_valid_and_lossless(cjk_target):
    res = _cli("detect", "--json", "--target", str(cjk_target), encoding="cp1252")
    _ok(res)
    report = json.loads(res.stdout.decode("cp1252"))
    assert report["target"] == str(cjk_target)


@pytest.mark.parametrize("encoding", ["cp437", "cp1252"])
def test_recommend_prints_its_dashes_in_a_code_page_without_them(encoding):
    res = _cli("recommend", encoding=encoding)
    _ok(res)
    assert res.stdout.decode(encoding).startswith("Recommended: torch ")


@pytest.mark.skipif(os.name != "nt", reason="a pipe is in the ANSI code page only on Windows")
def test_windows_pipe_in_its_own_code_page(cjk_target):
    for args in (["detect", "--target", str(cjk_target)], ["recommend"]):
        _ok(_cli(*args, encoding=None))


def test_only_streams_that_cannot_encode_everything_are_changed():
    from app.core.base import consoles

    raw = io.BytesIO()
    cp = io.TextIOWrapper(raw, encoding="cp1252", newline="\n")
    assert consoles.tolerant(cp) and cp.errors == "backslashreplace"
    cp.write("C:\\Users\\张伟 — ok\n")
    cp.flush()
    assert raw.getvalue() == b"C:\\Users\\\\u5f20\\u4f1f \x97 ok\n"
    utf = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    assert not consoles.tolerant(utf) and utf.errors == "strict"
    c_locale = io.TextIOWrapper(io.BytesIO(), encoding="cp1252", errors="surrogateescape")
    assert consoles.tolerant(c_locale) and c_locale.errors == "backslashreplace"
    chosen = io.TextIOWrapper(io.BytesIO(), encoding="cp1252", errors="replace")
    assert not consoles.tolerant(chosen) and chosen.errors == "replace"  # the user's own choice stays
    assert not consoles.tolerant(None)  # a windowed program has no stream
