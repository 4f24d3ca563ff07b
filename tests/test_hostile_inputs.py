"""Hostile files for the three loaders a person hands us: SystemReport JSON, answer-file TOML,
bundle manifests. Every outcome is either a loaded value or a BadInput (exit 2) whose message
names the field (or the line of a syntax error); never another exception, never unbounded
time or memory.

* the named cases of the adversarial review, each as its own test (and a sample of them
  through the real CLI: exit 2, the field on stderr, no traceback, peak RSS and time measured);
* generated cases: 1,000 per loader (hypothesis), a valid document with one field replaced by
  a hostile value (a wrong type, a special number, deep nesting, a huge string ...), each loaded
  with its time and peak memory (tracemalloc) bounded relative to its size.
"""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from app.core.base.errors import BadInput
from app.core.base.schema import parse_json
from app.core.detection.system import MAX_GPUS, SystemReport, load_report
from app.core.install.bundle import Manifest
from app.core.pipeline.answers import parse_answers

REPO = Path(__file__).resolve().parents[1]

REPORT = {
    "schema_version": 1,
    "os": {"family": "linux", "version": "Debian GNU/Linux 12", "wsl": False, "glibc": "2.36", "kernel": "6.1.0",
           "distro": "debian"},
    "arch": "x86_64",
    "python": {"version": "3.11.7", "executable": "/usr/bin/python3", "implementation": "CPython"},
    "cpu": {"model": "AMD Ryzen 9 5950X", "vendor": "AMD", "cores": 16, "threads": 32, "flags": ["avx2"],
            "max_mhz": 4900.0},
    "memory_mb": 64000, "disk_free_mb": 500000, "target": "/home/u",
    "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080 Ti", "driver_version": "550.54.14",
              "compute_capability": "6.1", "memory_mb": 11264, "integrated": False, "index": 0,
              "pci_id": "10de:1b06", "source": "nvml"}],
    "nvidia_cuda_version": "12.4",
    "env": {"CUDA_VISIBLE_DEVICES": "0"},
    "interpreters": [{"version": "3.11.7", "executable": "/usr/bin/python3"}],
    "tools": {"uv": {"path": "/usr/bin/uv", "version": "0.5.0"}},
    "probes": [{"name": "nvml", "status": "ok", "detail": "1 GPU", "duration_ms": 12, "command": ["nvml"]}],
    "created": "2026-11-30T10:00:00+0000", "hostname": "lab-01", "assistant_version": "1.0",
}

ANSWERS = {
    "version": 1,
    "environment": {"kind": "venv", "path": "~/torch-env", "python": "3.11", "installer": "uv", "existing": False},
    "torch": {"backend": "cpu", "version": "2.13.0", "packages": ["numpy"]},
    "sources": {"index_url": "https://download.pytorch.org/whl/cpu", "mirror": "https://pypi.example.org/simple",
                "extra_index_urls": ["https://extra.example.org/simple"], "proxy": "http://127.0.0.1:3128"},
    "verify": {"enabled": True},
    "bench": {"enabled": True, "budget_s": 30, "device": "auto", "sizes": [256, 512], "dtypes": ["fp32"]},
    "report": {"folder": "reports", "formats": ["json", "md"], "name": "lab-01"},
}

SHA = "a" * 64
MANIFEST = {
    "format": "torch-setup-bundle", "format_version": 1, "python_version": "3.11", "implementation": "cp",
    "abi": "cp311", "platforms": ["manylinux_2_28_x86_64"], "packages": ["six"],
    "files": [{"name": "six-1.17.0-py2.py3-none-any.whl", "size": 11050, "sha256": SHA, "package": "six",
               "version": "1.17.0", "tags": ["py2-none-any", "py3-none-any"]}],
    "created": "2026-11-30T00:00:00Z", "assistant_version": "1.0", "recommendation": None, "index_url": None,
    "find_links": [], "requirements_file": "requirements.txt", "wheels_dir": "wheels",
}


def load_report_text(text: str) -> SystemReport:
    return SystemReport.from_dict(parse_json(text, what="report"), what="report")


def load_manifest_text(text: str) -> Manifest:
    return Manifest.from_dict(parse_json(text, what="manifest"), what="manifest")


def load_answers_text(text: str, base: Path):
    return parse_answers(text, base=base)


def measured(load, text: str, *args):
    """``load(text)`` -> (value or BadInput, seconds, peak bytes); any other exception fails the test."""
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        out = load(text, *args)
    except BadInput as err:
        out = err
    finally:
        seconds = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    size = len(text.encode("utf-8", "surrogatepass"))
    assert seconds < 2.0 + size / 1e6, f"{seconds:.2f} s for {size} bytes"
    assert peak < 16 * 2**20 + 40 * size, f"peak {peak / 2**20:.1f} MB for {size} bytes"
    return out


def refused(load, text, *fields, args=()):
    out = measured(load, text, *args)
    assert isinstance(out, BadInput), f"accepted: {out!r}"
    assert out.exit_code == 2
    for f in fields:
        assert f in out.text(), (f, out.text())
    assert "Traceback" not in out.text()
    return out.text()


def with_(doc: dict, path: tuple, value) -> dict:
    d = copy.deepcopy(doc)
    cur = d
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return d


# ----------------------------------------------------------------- named: the report loader
@pytest.mark.parametrize("path, value, field", [
    (("os",), 5, "'os'"),
    (("cpu",), "x", "'cpu'"),
    (("env",), [], "'env'"),
    (("tools",), [], "'tools'"),
    (("gpus", 0, "name"), 5, "'gpus[0].name'"),
    (("gpus", 0, "gfx_target"), 1100, "'gpus[0].gfx_target'"),
    (("gpus", 0, "memory_mb"), "11 GB", "'gpus[0].memory_mb'"),
    (("gpus", 0, "integrated"), "no", "'gpus[0].integrated'"),
    (("os", "wsl"), "maybe", "'os.wsl'"),
    (("os", "family"), "beos", "'os.family'"),
    (("python", "version"), 3.10, "'python.version'"),
    (("gpus",), {"vendor": "nvidia"}, "'gpus'"),
    (("probes", 0, "duration_ms"), [], "'probes[0].duration_ms'"),
    (("memory_mb",), True, "'memory_mb'"),
    (("schema_version",), 2, "schema_version"),
    (("env", "X"), {"nested": 1}, "'env.X'"),
])
def test_report_wrong_types_are_refused_naming_the_field(path, value, field):
    refused(load_report_text, json.dumps(with_(REPORT, path, value)), field)


def test_report_wsl_false_as_text_is_false_and_unknown_vendors_are_kept():
    rep = load_report_text(json.dumps(with_(with_(REPORT, ("os", "wsl"), "false"), ("gpus", 0, "vendor"), "Qualcomm")))
    assert rep.os.wsl is False and rep.gpus[0].vendor == "qualcomm"
    rep = load_report_text(json.dumps(with_(REPORT, ("gpus", 0, "vendor"), "moorethreads")))
    assert rep.gpus[0].vendor == "moorethreads"
    assert load_report_text(json.dumps(with_(REPORT, ("os", "wsl"), "true"))).os.wsl is True


@pytest.mark.parametrize("token, field", [
    ("1" + "0" * 5000, "'memory_mb'"), ("Infinity", "'memory_mb'"), ("NaN", "'memory_mb'"), ("1e999", "'memory_mb'"),
])
def test_report_special_numbers_are_refused_naming_the_field(token, field):
    text = json.dumps(with_(REPORT, ("memory_mb",), "__N__")).replace('"__N__"', token)
    refused(load_report_text, text, field)


def test_report_deep_nesting_and_non_utf8(tmp_path):
    deep = json.dumps(with_(REPORT, ("gpus",), "__D__")).replace('"__D__"', "[" * 100_000 + "]" * 100_000)
    refused(load_report_text, deep, "'gpus'", "nested")
    refused(load_report_text, "[" * 100_000, "nested")
    latin = tmp_path / "latin1.json"
    latin.write_bytes(json.dumps(REPORT).replace("lab-01", "lab-\u00e9").encode("latin-1"))
    with pytest.raises(BadInput, match="not UTF-8 text"):
        load_report(latin)
    utf16 = tmp_path / "utf16.json"  # what PowerShell's ">" writes: read, not refused
    utf16.write_text(json.dumps(REPORT), encoding="utf-16")
    assert load_report(utf16).hostname == "lab-01"
    bare16 = tmp_path / "utf16-no-bom.json"
    bare16.write_bytes(json.dumps(REPORT).encode("utf-16-le"))
    with pytest.raises(BadInput):
        load_report(bare16)


def test_report_twenty_thousand_gpus_are_refused_at_once():
    gpus = [REPORT["gpus"][0]] * 20_000
    msg = refused(load_report_text, json.dumps(with_(REPORT, ("gpus",), gpus)), "'gpus'", str(MAX_GPUS))
    assert "20000" in msg


def test_report_from_dev_zero_is_cut_at_16_mb():
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    tracemalloc.start()
    t0 = time.perf_counter()
    with pytest.raises(BadInput, match="larger than 16 MB"):
        load_report("/dev/zero")
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert seconds < 60 and peak < 40 * 2**20  # a hang bound, not a speed limit: the memory says where it cut


# ----------------------------------------------------------------- named: answer files
def _toml(doc: dict) -> str:
    """A small TOML writer for the generated documents (strings, numbers, flags, lists, tables)."""
    def value(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return {float("inf"): "inf", float("-inf"): "-inf"}.get(v, "nan" if v != v else repr(v))
        if isinstance(v, str):
            return json.dumps(v, ensure_ascii=False)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v if x is not None) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{json.dumps(str(k))} = {value(x)}" for k, x in v.items() if x is not None) + "}"
        raise TypeError(v)

    lines = [f"{json.dumps(str(k))} = {value(v)}" for k, v in doc.items() if not isinstance(v, dict) and v is not None]
    for k, v in doc.items():
        if isinstance(v, dict):
            lines.append(f"[{json.dumps(str(k))}]")
            lines += [f"{json.dumps(str(kk))} = {value(vv)}" for kk, vv in v.items() if vv is not None]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text, fields", [
    ('version = true\n[environment]\npath = "e"\n', ("'version'",)),
    ('version = 1.0\n[environment]\npath = "e"\n', ("'version'",)),
    ('version = "1"\n[environment]\npath = "e"\n', ("'version'",)),
    ('[environment]\npath = "$TORCH_SETUP_UNSET_VAR_X/env"\n', ("'environment.path'", "$TORCH_SETUP_UNSET_VAR_X")),
    ('[environment]\npath = "${TORCH_SETUP_UNSET_VAR_Y}"\n', ("'environment.path'", "TORCH_SETUP_UNSET_VAR_Y")),
    ('[environment]\npath = "e"\nexisting = "yes"\n', ("'environment.existing'",)),
    ('[environment]\npath = "e"\n[bench]\nbudget_s = inf\n', ("'bench.budget_s'",)),
    ('[environment]\npath = "e"\n[bench]\nbudget_s = 1' + "0" * 5000 + "\n", ("'budget_s'", "line 4")),
    ('[environment]\npath = "e"\n[sources]\nindex_url = ' + "[" * 5000 + "]" * 5000 + "\n", ("'index_url'",)),
    ("a." * 3000 + "b = 1\n", ("nested",)),
    ('[environment]\npath = "' + "a" * 300 + '/x"\nexisting = true\n', ("'environment.path'", "300 bytes")),
])
def test_answer_file_named_cases(tmp_path, text, fields):
    refused(load_answers_text, text, *fields, args=(tmp_path,))


def test_answer_file_set_variables_are_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_SETUP_TEST_ROOT", str(tmp_path))
    a = parse_answers('[environment]\npath = "$TORCH_SETUP_TEST_ROOT/env"\n', base=tmp_path)
    assert a.env_path == tmp_path / "env"


def test_answer_file_size_and_encoding(tmp_path):
    from app.core.pipeline.answers import load_answers

    big = tmp_path / "big.toml"
    big.write_text("# x\n" * 400_000, encoding="utf-8")
    with pytest.raises(BadInput, match="larger than 1 MB"):
        load_answers(big)
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'[environment]\npath = "\xff"\n')
    with pytest.raises(BadInput, match="not UTF-8"):
        load_answers(bad)


# ----------------------------------------------------------------- named: bundle manifests
@pytest.mark.parametrize("doc, fields", [
    ([], ("top level",)), (None, ("top level",)), ("torch", ("top level",)),
    (with_(MANIFEST, ("python_version",), 3.11), ("'python_version'",)),
    (with_(MANIFEST, ("python_version",), "three"), ("'python_version'",)),
    (with_(MANIFEST, ("requirements_file",), 5), ("'requirements_file'",)),
    (with_(MANIFEST, ("requirements_file",), "../req.txt"), ("'requirements_file'",)),
    (with_(MANIFEST, ("wheels_dir",), None), ("'wheels_dir'",)),
    (with_(MANIFEST, ("wheels_dir",), "/etc"), ("'wheels_dir'",)),
    (with_(MANIFEST, ("wheels_dir",), "a/../../b"), ("'wheels_dir'",)),
    (with_(MANIFEST, ("files", 0, "sha256"), 5), ("'files[0].sha256'",)),
    (with_(MANIFEST, ("files", 0, "sha256"), "XYZ"), ("'files[0].sha256'",)),
    (with_(MANIFEST, ("files", 0, "name"), "../../x.whl"), ("'files[0].name'",)),
    (with_(MANIFEST, ("files", 0, "name"), "/etc/hostname"), ("'files[0].name'",)),
    (with_(MANIFEST, ("files", 0, "name"), "README.txt"), ("'files[0].name'",)),
    (with_(MANIFEST, ("files", 0, "size"), -1), ("'files[0].size'",)),
    (with_(MANIFEST, ("files",), {"a": 1}), ("'files'",)),
    (with_(MANIFEST, ("format",), "zip"), ("'format'",)),
    (with_(MANIFEST, ("format_version",), 99), ("'format_version'",)),
    (with_(MANIFEST, ("platforms",), ["manylinux; rm -rf /"]), ("'platforms[0]'",)),
    (with_(MANIFEST, ("recommendation",), {"backend": []}), ("'recommendation'",)),
])
def test_manifest_named_cases(doc, fields):
    refused(load_manifest_text, json.dumps(doc), *fields)


@pytest.mark.parametrize("token", ["Infinity", "-Infinity", "NaN", "1e999", "9" * 5000])
def test_manifest_special_sizes(token):
    text = json.dumps(with_(MANIFEST, ("files", 0, "size"), "__N__")).replace('"__N__"', token)
    refused(load_manifest_text, text, "'files[0].size'")


def test_manifest_deep_nesting():
    text = json.dumps(with_(MANIFEST, ("files",), "__D__")).replace('"__D__"', "[" * 50_000 + "]" * 50_000)
    refused(load_manifest_text, text, "'files'", "nested")


def test_the_valid_documents_load(tmp_path):
    assert load_report_text(json.dumps(REPORT)).gpus[0].compute_capability == "6.1"
    assert load_manifest_text(json.dumps(MANIFEST)).files[0].size == 11050
    assert parse_answers(_toml(ANSWERS), base=tmp_path).bench_sizes == (256, 512)


# ----------------------------------------------------------------- generated: 1,000 per loader
_SCALARS = st.one_of(
    st.integers(-(10**20), 10**20), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.sampled_from(["", "false", "true", "3.11", "cu126", "gfx1100", "../../x.whl", "/etc/hostname", "a" * 300,
                     "$TORCH_SETUP_UNSET_VAR_Z", "http://u:p@127.0.0.1/", "\x00", "é" * 50, "__BIG__", "__DEEP__",
                     "__INF__"]),
)
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=8)
_SPECIAL = {'"__BIG__"': "1" + "0" * 4400, '"__DEEP__"': "[" * 3000 + "]" * 3000, '"__INF__"': "Infinity"}


def _paths(doc, prefix=()) -> list[tuple]:
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for k, v in items:
        out.append((*prefix, k))
        out += _paths(v, (*prefix, k))
    return out


@st.composite
def mutated(draw, base: dict):
    """``base`` with one field replaced by a hostile value, deleted, or a new key added."""
    paths = _paths(base)
    path = draw(st.sampled_from(paths))
    action = draw(st.sampled_from(["replace", "replace", "replace", "delete", "add"]))
    doc = copy.deepcopy(base)
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    if action == "delete" and isinstance(parent, dict):
        del parent[path[-1]]
    elif action == "add" and isinstance(parent, dict):
        key = draw(st.text(min_size=1, max_size=10))
        parent[key] = draw(_VALUES)
        path = (*path[:-1], key)
    else:
        parent[path[-1]] = draw(_VALUES)
    return doc, path


def _json_text(doc) -> str:
    text = json.dumps(doc, ensure_ascii=False)
    for k, v in _SPECIAL.items():
        text = text.replace(k, v)
    return text


def _names_the_place(message: str, path: tuple) -> bool:
    keys = [str(p) for p in path if isinstance(p, str)]
    return any(k in message for k in keys) or "line " in message or "top level" in message


@given(mutated(REPORT))
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_generated_reports(case):
    doc, path = case
    out = measured(load_report_text, _json_text(doc))
    event("refused" if isinstance(out, BadInput) else "loaded")
    if isinstance(out, BadInput):
        assert _names_the_place(out.text(), path), (path, out.text())
    else:
        assert isinstance(out, SystemReport)


@given(mutated(MANIFEST))
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_generated_manifests(case):
    doc, path = case
    out = measured(load_manifest_text, _json_text(doc))
    event("refused" if isinstance(out, BadInput) else "loaded")
    if isinstance(out, BadInput):
        assert _names_the_place(out.text(), path), (path, out.text())
    else:
        assert isinstance(out, Manifest)


@given(mutated(ANSWERS))
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_generated_answer_files(tmp_path_factory, case):
    doc, path = case
    text = _toml(doc).replace('"__BIG__"', "1" + "0" * 4400).replace('"__DEEP__"', "[" * 3000 + "]" * 3000)
    out = measured(load_answers_text, text, tmp_path_factory.getbasetemp())
    event("refused" if isinstance(out, BadInput) else "loaded")
    if isinstance(out, BadInput):
        assert _names_the_place(out.text(), path), (path, out.text())


@pytest.mark.parametrize("text, place", [
    ('"" = 1' + "0" * 4400, "line 1"),  # an empty key (found by the generated files above)
    ("[install]\nfind_links = [1" + "0" * 4400 + "]", "'find_links' (line 2)"),
])
def test_a_number_too_long_to_read_is_refused_naming_its_line(text, place):
    with pytest.raises(BadInput) as err:
        parse_answers(text)
    assert place in err.value.text() and "too long" in err.value.text()


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
                    max_leaves=30))
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_arbitrary_json_is_loaded_or_refused(doc):
    text = json.dumps(doc)
    for load in (load_report_text, load_manifest_text):
        out = measured(load, text)
        assert isinstance(out, (BadInput, SystemReport, Manifest))


# ----------------------------------------------------------------- through the real CLI
# The child's own peak memory: ru_maxrss of an exec'd child starts from the parent's high-water mark on
# Linux (a big pytest process inflates it), so the child reads VmHWM of its own address space at exit.
_PEAK_LAUNCHER = """
import atexit, os, runpy, sys
def _peak():
    try:
        with open('/proc/self/status') as f:
            kb = next((int(l.split()[1]) for l in f if l.startswith('VmHWM:')), 0)
        with open(os.environ['TORCH_SETUP_TEST_PEAK_FILE'], 'w') as out:
            out.write(str(kb))
    except OSError:
        pass
atexit.register(_peak)
sys.argv = ['torch-setup', *sys.argv[1:]]
runpy.run_module('app.cli', run_name='__main__', alter_sys=True)
"""


def run_cli(*args, timeout=120) -> tuple[int, str, str, float, float]:
    """(exit code, stdout, stderr, seconds, peak RSS in MB) of ``python -m app.cli ARGS``."""
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.TemporaryDirectory() as peak_dir:
        peak_file = os.path.join(peak_dir, "peak")
        env = {**os.environ, "TORCH_SETUP_TEST_PEAK_FILE": peak_file}
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", _PEAK_LAUNCHER, *map(str, args)], cwd=REPO, stdout=out,
                              stderr=err, stdin=subprocess.DEVNULL, env=env, timeout=timeout)
        seconds = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        try:
            with open(peak_file, encoding="utf-8") as f:
                peak_mb = int(f.read() or 0) / 1024
        except FileNotFoundError:
            peak_mb = float("inf")  # no reading is a failure, not a pass
        return (proc.returncode, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"),
                seconds, peak_mb)


def _cli_refuses(args, *fields, max_s=30.0, max_mb=400.0):
    code, out, err, seconds, rss = run_cli(*args)
    assert code == 2, out + err
    assert "Traceback" not in out + err
    for f in fields:
        assert f in err, (f, err)
    assert seconds < max_s and rss < max_mb, (seconds, rss)
    return err


@pytest.mark.parametrize("name, doc, field", [
    ("os-5", with_(REPORT, ("os",), 5), "'os'"),
    ("env-list", with_(REPORT, ("env",), []), "'env'"),
    ("gpu-name", with_(REPORT, ("gpus", 0, "name"), 5), "'gpus[0].name'"),
    ("gfx-int", with_(REPORT, ("gpus", 0, "gfx_target"), 1100), "'gpus[0].gfx_target'"),
    ("gpus-20000", with_(REPORT, ("gpus",), [REPORT["gpus"][0]] * 20_000), "'gpus'"),
])
def test_cli_refuses_bad_reports(tmp_path, name, doc, field):
    f = tmp_path / f"{name}.json"
    f.write_text(json.dumps(doc), encoding="utf-8")
    _cli_refuses(["recommend", "--from-report", f], field)
    _cli_refuses(["doctor", "--env", tmp_path, "--from-report", f], field)


def test_cli_refuses_dev_zero_and_deep_nesting_with_bounded_memory(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text('{"gpus": ' + "[" * 1_000_000 + "]" * 1_000_000 + "}", encoding="utf-8")
    _cli_refuses(["recommend", "--from-report", deep], "'gpus'", "nested")
    if os.path.exists("/dev/zero"):
        err = _cli_refuses(["recommend", "--from-report", "/dev/zero"], "larger than 16 MB", max_mb=250)
        assert "MemoryError" not in err


@pytest.mark.parametrize("doc, field", [
    ([], "top level"), ("x", "top level"),
    (with_(MANIFEST, ("files", 0, "sha256"), 5), "'files[0].sha256'"),
    (with_(MANIFEST, ("wheels_dir",), None), "'wheels_dir'"),
    (with_(MANIFEST, ("python_version",), 3.11), "'python_version'"),
])
def test_cli_refuses_bad_manifests(tmp_path, doc, field):
    (tmp_path / "manifest.json").write_text(json.dumps(doc), encoding="utf-8")
    _cli_refuses(["bundle", "--check", tmp_path], field)


@pytest.mark.parametrize("text, field", [
    ('version = true\n[environment]\npath = "e"\n', "'version'"),
    ('[environment]\npath = "$TORCH_SETUP_UNSET_VAR_X/e"\n', "'environment.path'"),
    ('[environment]\npath = "e"\nx = ' + "[" * 5000 + "]" * 5000 + "\n", "'x'"),
])
def test_cli_refuses_bad_answer_files(tmp_path, text, field):
    f = tmp_path / "a.toml"
    f.write_text(text, encoding="utf-8")
    _cli_refuses(["install", "--config", f, "--yes"], field)
