"""The distributed check overlapped with the others: its two ranks start at the beginning (forked
right after ``import torch`` on Linux, fresh interpreters where forking is not safe) and are
collected when the check's turn comes. Same check, same codes, same result either way; the
probe's stdout stays the protocol; a probe that fails leaves no rank behind."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from app.core.base.errors import UserError
from app.core.base.paths import probes_dir
from app.core.measure.probe import ProbeFailed, run_probe
from app.core.measure.verify import VerifyReport
from app.core.proc.runner import clean_env

PROBE = probes_dir() / "verify.py"
CPU = ("cpu_matmul", "cpu_conv2d", "cpu_training", "cpu_autocast")


def _verify(py, *args):
    out = run_probe("verify", py, list(args), timeout_s=300)
    return out, VerifyReport.from_dict({**out.result, "python": str(py)})


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_the_ranks_start_before_the_other_checks_and_give_the_same_result(torch_env, mode):
    _env, py = torch_env
    out, report = _verify(py, "--dist-mode", mode)
    gloo = report.check("gloo_all_reduce")
    assert gloo is not None and gloo.status == "passed" and gloo.code == "all_reduce_ok"
    assert gloo.params["world"] == 2 and gloo.params["backend"] == "gloo"
    data = gloo.data or {}
    expected = mode if sys.platform.startswith("linux") or mode == "spawn" else "spawn"
    assert data["mode"] == expected
    # started before the single-process checks, collected after them
    assert data["started_s"] <= data["others_started_s"]
    import_s = report.check("torch_import").data["seconds"]
    if expected == "fork":
        assert data["started_s"] >= import_s  # forked after `import torch`...
    else:
        assert data["started_s"] <= import_s  # ...spawned before it, so the imports overlap
    assert all(report.check(n).status == "passed" for n in CPU)
    # the order of the checks (and of their step events) is the same as before
    names = [c.name for c in report.checks]
    assert names.index("cpu_autocast") + 1 == names.index("gloo_all_reduce") < names.index("accelerator")
    assert [s["name"] for s in out.steps if s["status"] == "running"][-1] == "gloo_all_reduce"


@pytest.mark.slow
def test_forked_ranks_never_write_to_the_protocol(torch_env):
    """Every stdout line of the probe is one JSON object, even with ranks forked from it."""
    _env, py = torch_env
    res = subprocess.run([str(py), "-I", str(PROBE), "--dist-mode", "fork"], capture_output=True, text=True, encoding="utf-8",
                         env=clean_env(), timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    objs = [json.loads(line) for line in res.stdout.splitlines()]
    assert [o["event"] for o in objs].count("result") == 1 and objs[-1]["event"] == "result"
    assert not [o for o in objs if o.get("event") == "dist"]  # the ranks' lines went to their pipes


@pytest.mark.slow
def test_no_dist_starts_no_rank(torch_env):
    _env, py = torch_env
    _out, report = _verify(py, "--no-dist")
    assert report.check("gloo_all_reduce").status == "skipped"
    assert report.check("gloo_all_reduce").code == "dist_not_asked"


RANKS = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, {folder!r})
    import verify as probe
    import torch
    out = {{}}
    slow = probe.DistRun.fork(torch, "gloo", 2, timeout_s=0.01)  # far too short: the ranks are stopped
    out["timeout"] = list(slow.collect()[:2])
    bad = probe.DistRun.fork(torch, "no-such-backend", 2, timeout_s=60)  # a rank fails: its error is told
    st, code, params = bad.collect()[:3]
    out["failed"] = [st, code, params.get("error", "")]
    out["spawned"] = list(probe.check_all_reduce("gloo", 2, 90.0)[:2])  # nothing started: spawned now
    print(json.dumps(out))
''')


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked ranks are the Linux path")
def test_a_rank_that_fails_or_hangs_is_reported_and_stopped(torch_env):
    _env, py = torch_env
    code = RANKS.format(folder=str(probes_dir()))
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    res = subprocess.run([str(py), "-I", "-c", code], capture_output=True, text=True, encoding="utf-8", env=clean_env(), timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["timeout"] == ["failed", "all_reduce_timeout"]
    assert out["failed"][:2] == ["failed", "all_reduce_failed"] and out["failed"][2]
    assert out["spawned"] == ["passed", "all_reduce_ok"]
    time.sleep(0.2)
    assert {p.pid for p in psutil.Process().children(recursive=True)} <= before


@pytest.mark.slow
def test_spawned_ranks_are_stopped_when_torch_is_missing(tmp_path):
    """--dist-mode spawn starts the ranks before `import torch`; when the import fails the probe
    stops them before it reports the error."""
    from uv import find_uv_bin

    env = tmp_path / "no-torch"
    subprocess.run([find_uv_bin(), "venv", "--quiet", "--python", sys.executable, str(env)], check=True, timeout=120)
    py = env / "bin" / "python"
    with pytest.raises(ProbeFailed) as err:
        run_probe("verify", py, ["--dist-mode", "spawn"], timeout_s=120)
    assert isinstance(err.value, UserError) and err.value.code == "torch-missing"
    time.sleep(0.3)
    left = [p for p in psutil.process_iter(["cmdline"]) if "--dist-worker" in (p.info["cmdline"] or [])
            and str(PROBE) in " ".join(p.info["cmdline"] or []) and str(py) in " ".join(p.info["cmdline"] or [])]
    assert not left


@pytest.mark.slow
def test_a_new_environment_gets_its_compiler_stack_compiled_on_another_core(torch_wheelhouse, tmp_path):
    """Right after an install no .pyc exists for torch's compiler stack (what torch.optim loads):
    the probe starts a helper that compiles it while torch is imported; once the .pyc files
    exist, no helper starts. The checks pass either way."""
    import importlib.util

    from uv import find_uv_bin

    env = tmp_path / "fresh"
    uv = find_uv_bin()
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(env)], check=True, timeout=120)
    py = env / "bin" / "python"
    subprocess.run([uv, "pip", "install", "--quiet", "--python", str(py), "--offline", "--no-index", "--find-links",
                    str(torch_wheelhouse.folder), torch_wheelhouse.requirement], check=True, timeout=600,
                   env=clean_env({"UV_NO_PROGRESS": "1"}))
    site = next((env / "lib").glob("python3*/site-packages"))
    dynamo = site / "torch" / "_dynamo" / "__init__.py"
    assert not Path(importlib.util.cache_from_source(str(dynamo))).exists()
    out, report = _verify(py)
    assert out.result["compile_helper"] is True and report.ok
    assert Path(importlib.util.cache_from_source(str(dynamo))).exists()
    out, report = _verify(py)
    assert out.result["compile_helper"] is False and report.ok
