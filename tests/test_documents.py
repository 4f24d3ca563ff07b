"""Issue 26, item 5: every document is read through one validator (app/core/base/schema.py) and a bad
field gets ONE error everywhere: which document and file, the field by its path, what was expected, in
English and Chinese; through the command line, exit 2.

Each document below is fed the same bad field (the number 5 where a text belongs) at a path of its
own; the message must have the one shape ``<document> <file>[ (row)][, line N]: '<path>' must be a
text, not the number 5``."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from app.core.base.errors import BadInput
from app.core.base.text import render
from tests.helpers import run_cli

SRC_COMPAT = Path(__file__).resolve().parents[1] / "resources" / "compat"
EN = "must be a text, not the number 5"
ZH = "应为文本，而不是数字 5"
REPORT = {"os": {"family": "linux", "glibc": "2.36"}, "arch": "x86_64", "python": {"version": "3.12.3"}, "gpus": []}


def _shape(text: str, document: str, file: Path | str, path: str) -> None:
    """``text`` is the one error of a bad field of ``document`` in ``file`` at ``path``."""
    pattern = rf"{re.escape(document)} {re.escape(str(file))}( \([^)]*(\([^)]*\))?[^)]*\))?(, line \d+)?: " \
              rf"'{re.escape(path)}' {re.escape(EN)}"
    assert re.search(pattern, text), (pattern, text)


def _refused(load, *args) -> BadInput:
    with pytest.raises(BadInput) as err:
        load(*args)
    assert err.value.exit_code == 2
    return err.value


def _both(err: BadInput, document: str, file: Path | str, path: str, zh_document: str) -> None:
    _shape(render(err.message), document, file, path)
    zh = render(err.message, "zh_CN")
    assert f"{zh_document} {file}" in zh and f"'{path}'" in zh and ZH in zh, zh


# ------------------------------------------------------------------ the documents, one bad field each

def _report(tmp_path: Path) -> Path:
    f = tmp_path / "report.json"
    f.write_text(json.dumps({**REPORT, "gpus": [{"vendor": "nvidia", "name": 5}]}), encoding="utf-8")
    return f


def _answers(tmp_path: Path) -> Path:
    (tmp_path / "wheels").mkdir()
    f = tmp_path / "answers.toml"
    f.write_text('[environment]\npath = "env"\n[sources]\nfind_links = ["wheels", 5]\n', encoding="utf-8")
    return f


def _registry(home: Path) -> Path:
    f = home / "data" / "environments.json"
    f.parent.mkdir(parents=True, exist_ok=True)
    row = {"path": str(home / "env"), "kind": "venv", "origin": "created", "installer": "uv", "created": "c",
           "updated": "u", "sources": {"find_links": [5]}}
    f.write_text(json.dumps({"schema_version": 1, "environments": [row]}), encoding="utf-8")
    return f


def _lock(tmp_path: Path) -> Path:
    f = tmp_path / "pylock.toml"
    f.write_text('lock-version = "1.0"\ncreated-by = "torch-setup"\nrequires-python = "==3.12.*"\n'
                 '[[packages]]\nname = "six"\nversion = 5\n', encoding="utf-8")
    return f


def _compat(tmp_path: Path) -> Path:
    folder = tmp_path / "compat"
    shutil.copytree(SRC_COMPAT, folder)
    releases = folder / "releases.toml"
    text = releases.read_text(encoding="utf-8")
    first = text.index('backend = "', text.index("[[release.variant]]"))
    releases.write_text(text[:first] + "backend = 5" + text[text.index("\n", first):], encoding="utf-8")
    return folder


def _manifest(tmp_path: Path) -> Path:
    folder = tmp_path / "bundle"
    (folder / "wheels").mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({
        "format": "torch-setup-bundle", "format_version": 1, "python_version": "3.12", "implementation": "cp",
        "abi": "cp312", "platforms": ["manylinux_2_28_x86_64"], "packages": ["six"], "created": "c",
        "assistant_version": "1", "files": [{"name": "six-1.17.0-py2.py3-none-any.whl", "size": 1,
                                             "sha256": "a" * 64, "package": 5, "version": "1.17.0"}]}),
        encoding="utf-8")
    return folder


def _mirrors(tmp_path: Path) -> Path:
    f = tmp_path / "mirrors.toml"
    f.write_text('[[mirror]]\nid = "lab-torch"\nname = 5\n', encoding="utf-8")
    return f


# ------------------------------------------------------------------ the one message, per document

def test_each_document_refuses_a_bad_field_with_the_one_message(tmp_path, monkeypatch):
    from app.core.compat.data import clear_cache, load_compat
    from app.core.detection.system import load_report
    from app.core.install.bundle import load_manifest
    from app.core.pipeline.answers import load_answers
    from app.core.pylock.lockfile import read_lock
    from app.core.sources.mirrors import load_mirrors

    report = _report(tmp_path)
    _both(_refused(load_report, report), "system report", report, "gpus[0].name", "系统报告")
    answers = _answers(tmp_path)
    err = _refused(load_answers, answers)
    _both(err, "answer file", answers.resolve(), "sources.find_links[1]", "应答文件")
    assert "line 4" in render(err.message) and "第 4 行" in render(err.message, "zh_CN")
    lock = _lock(tmp_path)
    _both(_refused(read_lock, lock), "lock", lock, "packages[0].version", "锁文件")
    compat = _compat(tmp_path)
    clear_cache()
    _both(_refused(load_compat, compat), "compatibility data", compat / "releases.toml", "release[0].variant[0].backend",
          "兼容性数据")
    bundle = _manifest(tmp_path)
    _both(_refused(load_manifest, bundle), "bundle manifest", bundle / "manifest.json", "files[0].package", "离线包清单")
    mirrors = _mirrors(tmp_path)
    _both(_refused(load_mirrors, mirrors), "mirror catalogue", mirrors, "mirror[0].name", "镜像目录")


def test_the_registry_the_probe_cache_and_the_journal_read_through_the_same_validator(tmp_path, monkeypatch):
    """The assistant's own state files: a bad field is the same message, and the file is set aside
    (the registry, the journal) or forgotten (a cache), never a crash (issue 27)."""
    from app.core.detection.cache import CacheFile, StampCache
    from app.core.env import registry
    from app.core.lifecycle import staging

    home = tmp_path / "home"
    monkeypatch.setenv("TORCH_SETUP_HOME", str(home))
    f = _registry(home)
    assert registry.registry_file() == f
    reg = registry.load()
    assert reg.records == () and reg.set_aside is not None and reg.problem is not None
    _shape(render(reg.problem), "list of environments", f, "environments[0].sources.find_links[0]")
    assert ZH in render(reg.problem, "zh_CN") and "环境列表" in render(reg.problem, "zh_CN")

    cache = tmp_path / "detect-cache.json"
    bad = {"version": 1, "entries": {"python:/usr/bin/python3": {"stamp": [1, 2, 3], "value": {}},
                                     "uv:/usr/bin/uv": {"stamp": ["x"], "value": "0.9"}}}
    cache.write_text(json.dumps(bad), encoding="utf-8")
    assert StampCache(str(cache))._data == {}  # a damaged cache is an empty one
    with pytest.raises(BadInput) as err:
        CacheFile.from_dict(bad, what="probe cache x")
    assert "'entries.uv:/usr/bin/uv.stamp[0]' must be a whole number, not the text 'x'" in err.value.text()

    env = tmp_path / "env"
    env.mkdir()
    staging.journal_file(env).write_text(json.dumps({"env": str(env), "op": "upgrade", "carried": [5]}),
                                         encoding="utf-8")
    j = staging.read_journal(env)
    assert set(j) == {"damaged"} and Path(str(j["damaged"])).is_file()  # kept aside, nothing moved


# ------------------------------------------------------------------ through the command line: exit 2

def test_the_command_line_exits_2_naming_file_and_field(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "home"))
    report = _report(tmp_path)
    rc, _, err = run_cli(capsys, "recommend", "--from-report", str(report))
    assert rc == 2 and "Traceback" not in err
    _shape(err, "system report", report, "gpus[0].name")

    answers = _answers(tmp_path)
    rc, _, err = run_cli(capsys, "install", "--config", str(answers), "--yes")
    assert rc == 2
    _shape(err, "answer file", answers.resolve(), "sources.find_links[1]")

    lock = _lock(tmp_path)
    rc, _, err = run_cli(capsys, "install", "--env", str(tmp_path / "env"), "--lock", str(lock), "--dry-run")
    assert rc == 2
    _shape(err, "lock", lock, "packages[0].version")

    from app.core.compat.data import clear_cache

    good = tmp_path / "good.json"
    good.write_text(json.dumps(REPORT), encoding="utf-8")
    compat = _compat(tmp_path)
    clear_cache()
    rc, _, err = run_cli(capsys, "recommend", "--compat", str(compat), "--from-report", str(good))
    assert rc == 2
    _shape(err, "compatibility data", compat / "releases.toml", "release[0].variant[0].backend")

    bundle = _manifest(tmp_path)
    rc, _, err = run_cli(capsys, "install", "--env", str(tmp_path / "env"), "--from-bundle", str(bundle),
                         "--dry-run")
    assert rc == 2
    _shape(err, "bundle manifest", bundle / "manifest.json", "files[0].package")

    monkeypatch.setenv("TORCH_SETUP_LANG", "zh_CN")
    rc, _, err = run_cli(capsys, "recommend", "--from-report", str(report))
    assert rc == 2 and f"系统报告 {report}" in err and "'gpus[0].name'" in err and ZH in err


def test_the_registry_via_the_command_line_is_reported_and_set_aside_not_a_failure(tmp_path, capsys, monkeypatch):
    """A damaged list of environments is the assistant's own state: ``envs list`` says what was wrong
    in the same words and goes on with a new list (exit 0: a damaged state file never breaks a
    command, issue 27's must-show), the old file kept beside it."""
    home = tmp_path / "home"
    monkeypatch.setenv("TORCH_SETUP_HOME", str(home))
    f = _registry(home)
    rc, _, err = run_cli(capsys, "envs", "list", "--no-size")
    assert rc == 0
    _shape(err, "list of environments", f, "environments[0].sources.find_links[0]")
    assert list(f.parent.glob("environments.json.corrupt-*"))
