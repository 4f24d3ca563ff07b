"""Contract of ``torch-setup recommend``: the JSON shape (keys and types), the human output,
minimal reports, overrides, the Python API (to_dict/from_dict, valid_choices)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.base.errors import BadInput
from app.core.compat.data import load_compat
from app.core.detection.system import SystemReport
from app.core.recommend import Alternative, Choices, Recommendation, recommend, valid_choices

REPO = Path(__file__).resolve().parents[1]

# key -> allowed JSON types (None = null allowed)
SHAPE = {
    "backend": (str,), "variant": (str,), "torch_version": (str,), "python_ok": (bool, type(None)),
    "env_python": (str, type(None)), "index_url": (str,), "packages": (list,), "command": (list,),
    "reasons": (list,), "warnings": (list,), "alternatives": (list,), "compat_data_version": (str,),
    "compat_data_date": (str,), "env_vars": (dict,), "served_gpus": (list,), "unserved_gpus": (list,),
    "driver_upgrade": (dict, type(None)), "commands": (dict,), "platform": (str,), "torch_release": (str,),
    "unknowns": (list,), "choices": (dict,), "summary": (str,), "reason_codes": (list,), "warning_codes": (list,),
    "install_size_mb": (int, type(None)), "facts_assumed": (bool,), "compat_data_origin": (str,),
    "availability": (str,), "availability_code": (str, type(None)),  # why this version, when the sources decided
    # issue 13: what each wish cost, the Pythons the build installs for, where it installs from
    "costs": (list,), "cost_codes": (list,), "pythons": (list,), "python_range": (list, type(None)),
    "find_links": (list,), "no_index": (bool,),
    "needs_pip": (bool,),  # issue 26: only pip installs it (AMD's own index)
}
ALT_SHAPE = {"backend": (str,), "variant": (str,), "torch_version": (str, type(None)), "valid": (bool,),
             "why": (str,), "code": (str,)}
GPU_SHAPE = {"index": (int,), "name": (str,), "vendor": (str,), "compute_capability": (str, type(None)),
             "gfx_target": (str, type(None)), "driver_version": (str, type(None))}


def _cli(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "app", "recommend", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def _write(tmp_path, data, name="report.json"):
    p = tmp_path / name
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


GTX = {"os": {"family": "linux", "glibc": "2.36"}, "arch": "x86_64", "python": {"version": "3.11.7"},
       "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080 Ti", "driver_version": "560.35.03",
                 "compute_capability": "6.1", "index": 0}]}


def _check_shape(obj, shape, where):
    assert set(obj) == set(shape), f"{where}: keys differ: {sorted(set(obj) ^ set(shape))}"
    for k, types in shape.items():
        assert isinstance(obj[k], types), f"{where}.{k} is {type(obj[k]).__name__}"


def test_json_shape_is_pinned(tmp_path):
    res = _cli("--from-report", str(_write(tmp_path, GTX)), "--json")
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout)
    _check_shape(d, SHAPE, "recommendation")
    for a in d["alternatives"]:
        _check_shape(a, ALT_SHAPE, "alternative")
    for g in d["served_gpus"]:
        _check_shape(g, GPU_SHAPE, "served_gpu")
    for g in d["unserved_gpus"]:
        _check_shape(g, {**GPU_SHAPE, "why": (str,)}, "unserved_gpu")
    assert all(isinstance(x, str) for k in ("packages", "command", "reasons", "warnings", "unknowns", "reason_codes",
                                            "warning_codes") for x in d[k])
    assert len(d["reason_codes"]) == len(d["reasons"]) and len(d["warning_codes"]) == len(d["warnings"])
    assert all(c.startswith("rec.") for c in d["reason_codes"] + d["warning_codes"] + [a["code"] for a in
                                                                                          d["alternatives"]])
    assert set(d["commands"]) >= {"pip", "uv"} and all(isinstance(x, str) for c in d["commands"].values() for x in c)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in d["env_vars"].items())
    assert d["backend"] in ("cpu", "cuda", "rocm", "mps", "xpu")
    # the answer itself
    assert (d["backend"], d["variant"], d["torch_version"]) == ("cuda", "cu126", "2.14.1")
    assert d["command"] == ["pip", "install", "torch==2.14.1+cu126", "--index-url", "https://download.pytorch.org/whl/cu126"]
    assert d["commands"]["uv"] == ["uv", "pip", "install", "torch==2.14.1+cu126", "--index-url",
                                   "https://download.pytorch.org/whl/cu126"]
    assert d["compat_data_version"] == load_compat().version
    # driver 560 < 580 -> upgrade hint to the CUDA 13 builds
    assert d["driver_upgrade"] is None  # Pascal: no driver unlocks a newer torch
    assert any("compute capability 6.1" in r for r in d["reasons"])


def test_recommendation_roundtrips_through_json():
    rec = recommend(SystemReport.from_dict(GTX))
    again = Recommendation.from_dict(json.loads(json.dumps(rec.to_dict())))
    # the JSON keeps the sentences' codes and English words, not their arguments: what comes back is the
    # same recommendation, rendering the same English (in every language), with the same codes
    assert again.to_dict() == rec.to_dict()
    assert again.texts("zh_CN") == again.texts("en") == rec.texts("en")
    assert again.reason_codes == rec.reason_codes and again.warning_codes == rec.warning_codes
    assert (again.backend, again.variant, again.torch_version, again.packages, again.command, again.commands,
            again.served_gpus, [u.gpu for u in again.unserved_gpus], again.driver_upgrade, again.choices) == \
           (rec.backend, rec.variant, rec.torch_version, rec.packages, rec.command, rec.commands,
            rec.served_gpus, [u.gpu for u in rec.unserved_gpus], rec.driver_upgrade, rec.choices)
    assert all(isinstance(a, Alternative) for a in again.alternatives)
    assert [(a.backend, a.variant, a.torch_version, a.valid, a.code) for a in again.alternatives] == \
           [(a.backend, a.variant, a.torch_version, a.valid, a.code) for a in rec.alternatives]
    with pytest.raises(BadInput):
        Recommendation.from_dict({"backend": "cpu"})


def test_minimal_report_is_accepted(tmp_path):
    minimal = {"os": "linux", "arch": "x86_64", "python": "3.12",
               "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 3090"}]}
    res = _cli("--from-report", str(_write(tmp_path, minimal)), "--json")
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout)
    assert d["backend"] == "cuda" and d["torch_version"] == load_compat().newest.latest
    assert "gpus[].driver_version" in d["unknowns"] and "os.glibc" in d["unknowns"]
    assert any("driver version is unknown" in w for w in d["warnings"])
    assert any("taken from its name" in u for u in d["unknowns"])


def test_human_output_has_choice_command_reasons_alternatives(tmp_path):
    res = _cli("--from-report", str(_write(tmp_path, GTX)))
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert out.startswith("Recommended: torch 2.14.1")
    assert "pip install torch==2.14.1+cu126 --index-url https://download.pytorch.org/whl/cu126" in out
    assert "Why:" in out and "Other choices:" in out
    assert "not supported by the CUDA 12.8, 12.9 and 13.x builds" in out
    assert f"Compatibility data {load_compat().version}" in out


def test_overrides_on_the_command_line(tmp_path):
    rep = _write(tmp_path, GTX)
    res = _cli("--from-report", str(rep), "--json", "--torch", "2.10", "--python", "3.12",
               "--packages", "torch", "torchvision", "numpy")
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout)
    assert d["torch_version"] == "2.10.0" and d["variant"] == "cu126" and d["env_python"] == "3.12"
    assert d["packages"] == ["torch==2.10.0+cu126", "torchvision==0.25.0+cu126", "numpy"]
    assert d["command"] == ["pip", "install", "torch==2.10.0+cu126", "torchvision==0.25.0+cu126", "--index-url",
                            "https://download.pytorch.org/whl/cu126"]
    assert d["commands"]["pip_extra"] == ["pip", "install", "numpy"]
    refused = _cli("--from-report", str(rep), "--json", "--variant", "cu130")
    assert refused.returncode == 2
    err = json.loads(refused.stdout)
    assert err["error"] == "BadInput" and "compute capability 6.1" in err["message"]
    assert "2.14.1" in err["hint"]


def test_bad_report_and_bad_options_exit_2(tmp_path):
    assert _cli("--from-report", str(tmp_path / "nope.json")).returncode == 2
    bad = _write(tmp_path, {"os": {"family": "beos"}, "arch": "x86_64", "gpus": []}, "bad.json")
    assert _cli("--from-report", str(bad)).returncode == 2
    noos = _write(tmp_path, {"arch": "x86_64", "gpus": []}, "noos.json")
    r = _cli("--from-report", str(noos))
    assert r.returncode == 2 and "operating system" in r.stderr
    for args in (["--torch", "1.13"], ["--torch", "banana"], ["--python", "three"], ["--variant", "cu999"],
                 ["--packages", "torch==2.1"], ["--backend", "cpu", "--variant", "cu126"]):
        r = _cli("--from-report", str(_write(tmp_path, GTX, "g.json")), *args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)


def test_valid_choices_shape_and_content():
    vc = valid_choices(SystemReport.from_dict(GTX), load_compat()).to_dict()
    assert set(vc) == {"options", "backends", "variants", "torch_versions", "pythons", "compat_data_version",
                       "platform"}
    for o in vc["options"]:
        assert set(o) == {"backend", "variant", "torch_version", "valid", "why"}
        assert o["valid"] or o["why"]
    by = {(o["variant"], o["torch_version"]): o for o in vc["options"]}
    assert by[("cu126", "2.14.1")]["valid"] is True
    assert by[("cu130", "2.15.0")]["valid"] is False and "6.1" in by[("cu130", "2.15.0")]["why"]
    backends = {o["name"]: o for o in vc["backends"]}
    assert backends["cuda"]["valid"] and backends["cpu"]["valid"]
    assert not backends["rocm"]["valid"] and not backends["mps"]["valid"]
    torches = {o["name"]: o for o in vc["torch_versions"]}
    assert torches["2.15.0"]["valid"] is True  # CPU works for 2.15
    variants = {o["name"]: o for o in vc["variants"]}
    assert variants["cu132"]["valid"] is False and variants["cu126"]["valid"] is True
    # every valid option really is accepted by recommend()
    report = SystemReport.from_dict(GTX)
    for o in vc["options"][:40]:
        if o["valid"]:
            rec = recommend(report, None, Choices(variant=o["variant"], torch=o["torch_version"]))
            assert (rec.variant, rec.torch_version) == (o["variant"], o["torch_version"])
        else:
            with pytest.raises(BadInput):
                recommend(report, None, Choices(variant=o["variant"], torch=o["torch_version"]))


def test_recommend_is_pure():
    report = SystemReport.from_dict(GTX)
    a = recommend(report).to_dict()
    b = recommend(report).to_dict()
    assert a == b
    assert report == SystemReport.from_dict(GTX)


def test_without_from_report_it_detects(tmp_path):
    """No --from-report: the real detector runs on this machine (no GPU here) and we recommend."""
    pytest.importorskip("app.core.detection.detect")
    res = _cli("--json", timeout=120)
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout)
    assert d["platform"] and d["backend"] in ("cpu", "cuda", "rocm", "mps", "xpu")


def test_from_report_import_path_stays_light(tmp_path):
    """recommend --from-report must not pay for Qt, torch, psutil, pynvml, packaging or the detector."""
    rep = str(_write(tmp_path, GTX))
    code = ("import sys, io, contextlib\n"
            "from app.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    rc = main(['recommend', '--from-report', {rep!r}, '--json'])\n"
            "heavy = {'PySide6', 'torch', 'psutil', 'pynvml', 'packaging', 'platformdirs', 'shiboken6'}\n"
            "print(rc, sorted({m.split('.')[0] for m in sys.modules} & heavy),"
            " 'app.core.detection.detect' in sys.modules)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "0 [] False", res.stdout
