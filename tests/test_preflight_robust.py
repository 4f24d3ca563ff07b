"""A pre-flight check that cannot run is a failed check naming what was checked: never a thread
traceback, never counted as passed (issue 11, finding 12). And the env lock as a check."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.core import install as core
from app.core.base import locks
from app.core.base.errors import BadInput
from app.core.base.text import render
from app.core.install import checks
from app.core.install.request import InstallRequest
from app.core.net import indexes
from app.core.sources.settings import SourceSettings

REPO = Path(__file__).resolve().parents[1]


def _plan(tmp_path: Path, **kw) -> core.InstallPlan:
    """A plan whose sources are ``kw`` (SourceSettings' fields), a local wheel folder by default."""
    wheels = tmp_path / "wheels"
    wheels.mkdir(exist_ok=True)
    kw.setdefault("find_links", [str(wheels)])
    kw.setdefault("default_index", str(wheels))
    return core.plan(InstallRequest(tmp_path / "env", python=sys.executable, packages=["six"],
                                    sources=SourceSettings(**kw)))


@pytest.mark.parametrize("proxy", ["http://127.0.0.1:99999", "http://127.0.0.1:abc", "http://[::1", "http://:8080",
                                   "ftp://127.0.0.1:21"])
def test_an_unusable_proxy_is_a_failed_check_naming_the_proxy(tmp_path, proxy):
    p = _plan(tmp_path, proxy=proxy, torch_index="http://127.0.0.1:9/whl/cpu")
    found = {c.name: c for c in core.preflight(p)}  # a thread traceback fails this test (filterwarnings=error)
    assert found["proxy"].blocking, found["proxy"]
    text = render(found["proxy"].message)
    assert text.startswith("The proxy setting cannot be used:"), text
    assert found["proxy"].code == "preflight.proxy_invalid"
    assert not found["reach:torch index"].ok  # never "reachable" through a proxy that cannot be used
    with pytest.raises(BadInput) as err:
        core.raise_for_checks(core.preflight(p))
    assert err.value.exit_code == 2 and "proxy" in render(err.value.message)


def test_a_good_proxy_passes(tmp_path):
    p = _plan(tmp_path, proxy="http://127.0.0.1:3128")
    assert checks.check_proxy(p).ok


@pytest.mark.parametrize("url", ["http://127.0.0.1:99999/simple", "http://[::1/simple", "http://h:0/x"])
def test_check_url_answers_for_a_broken_url_and_never_raises(url):
    why = indexes.check_url(url)
    assert why is not None and "not a valid URL" in render(why)


def test_a_password_is_never_quoted_from_a_url_that_does_not_parse():
    # urllib's own error would quote the text after the colon ("as 'pa'"), here the password's start
    why = render(indexes.host_port("http://user:pa55word@host:99999/x"))
    assert "pa55word" not in why.replace(indexes.display_url("http://user:pa55word@host:99999/x"), "")


def test_an_unusable_proxy_in_the_environment_fails_the_reach_check(tmp_path, monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:99999")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:99999")
    why = indexes.check_url("http://127.0.0.1:9/simple")
    assert why is not None and "proxy cannot be used" in render(why)


def test_a_check_that_raises_is_failed_and_named(tmp_path, monkeypatch):
    p = _plan(tmp_path)

    def broken(_p):
        raise OSError(36, "File name too long")

    monkeypatch.setattr(checks, "_LOCAL_CHECKS", (*checks._LOCAL_CHECKS[:2], ("target", broken),
                                                  *checks._LOCAL_CHECKS[3:]))
    found = {c.name: c for c in core.preflight(p)}
    assert found["target"].blocking and found["target"].code == "preflight.check_crashed"
    assert "The target check could not run: OSError" in render(found["target"].message)
    assert "File name too long" in render(found["target"].message)


def test_a_reachability_probe_that_raises_or_hangs_is_failed_not_passed(tmp_path, monkeypatch):
    p = _plan(tmp_path, torch_index="http://127.0.0.1:9/whl/cpu")

    def boom(*_a, **_k):
        raise RuntimeError("probe bug")

    monkeypatch.setattr(checks, "probe_index", boom)
    found = {c.name: c for c in checks.check_indexes(p)}
    assert found["reach:torch index"].blocking
    assert "could not run (RuntimeError)" in render(found["reach:torch index"].message)

    release = threading.Event()

    def hang(*_a, **_k):
        release.wait(60)
        return None, None

    monkeypatch.setattr(checks, "probe_index", hang)
    monkeypatch.setattr(checks, "NET_TIMEOUT_S", 0.2)
    t0 = time.monotonic()
    try:
        found = {c.name: c for c in checks.check_indexes(p)}
    finally:
        release.set()
    assert time.monotonic() - t0 < 30  # not a speed limit: a wait for the probe would take its whole 60 s
    assert found["reach:torch index"].blocking
    assert "no answer within" in render(found["reach:torch index"].message)


def test_the_env_lock_is_a_check_and_its_refusal_comes_first(tmp_path):
    p = _plan(tmp_path)
    p.env_path.mkdir()
    (p.env_path / "half-made").write_text("", encoding="utf-8")  # what another run's install looks like from outside
    code = (f"import time, pathlib\nfrom app.core.base import locks\nl = locks.acquire({str(p.env_path)!r}, 'install')\n"
            f"pathlib.Path({str(tmp_path / 'ready')!r}).write_text('x')\ntime.sleep(60)\n")
    other = subprocess.Popen([sys.executable, "-c", code], cwd=REPO)
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "ready").exists():
            assert other.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        found = core.preflight(p)
        lock = next(c for c in found if c.name == "lock")
        assert lock.blocking and f"PID {other.pid}" in render(lock.message)
        with pytest.raises(BadInput) as err:
            core.raise_for_checks(found)
        assert f"PID {other.pid}" in render(err.value.message)  # not "a folder with files in it"
    finally:
        other.kill()
        other.wait()
    with locks.env_lock(p.env_path, "install"):  # held by this process: the check passes
        assert next(c for c in core.preflight(p) if c.name == "lock").ok


def test_check_dicts_stay_json(tmp_path):
    p = _plan(tmp_path, proxy="http://127.0.0.1:99999")
    json.dumps([c.to_dict() for c in core.preflight(p)])
    assert all(dataclasses.is_dataclass(c) for c in core.preflight(p))
