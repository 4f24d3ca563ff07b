"""The registry of environments: schema, atomic writes, corrupt files set aside, no credentials stored."""
from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from app.core.base.errors import BadInput
from app.core.base.text import render
from app.core.env import guard, registry
from app.core.env.backends import backend_for
from app.core.env.registry import EnvRecord, Verification
from app.core.install import InstallPlan, InstallRequest
from app.core.lifecycle import protect
from app.core.sources.settings import SourceSettings
from tests.factories import make_check, make_install_result, make_recommendation, make_verify_report
from tests.helpers import site_packages


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A registry of its own for each test."""
    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path / "home"))
    return tmp_path


def _plan(env: Path, *, index: SourceSettings | None = None, packages=("torch==2.13.0+cpu",), rec=None) -> InstallPlan:
    return InstallPlan(request=InstallRequest(env_path=env, recommendation=rec), env_path=env,
                       backend=backend_for("venv", "uv"), python=None, python_request="3.11", packages=packages,
                       index=index or SourceSettings(), new_env=True, estimate_mb=500, estimate_why="test")


def _fake_env(path: Path) -> Path:
    (path / "bin").mkdir(parents=True)
    (path / "pyvenv.cfg").write_text("home = /usr/bin\nversion_info = 3.11.7\n", encoding="utf-8")
    (path / "bin" / "activate").write_text("deactivate () {\n    unset VIRTUAL_ENV\n}\nVIRTUAL_ENV=/x\n",
                                           encoding="utf-8")
    return path


def test_empty_registry_loads_and_a_record_round_trips(home):
    assert registry.load().records == ()
    env = _fake_env(home / "e1")
    rec = registry.record_install(make_install_result(env), _plan(env), None)
    assert rec is not None and rec.made_by_app and rec.origin == "created"
    doc = json.loads(registry.registry_file().read_text(encoding="utf-8"))
    assert doc["schema_version"] == registry.SCHEMA_VERSION
    assert doc["environments"][0]["path"] == str(env)
    again = registry.find(str(env) + "/")  # another spelling of the same path
    assert again == rec
    assert EnvRecord.from_dict(rec.to_dict()) == rec


def test_credentials_are_never_stored(home):
    env = _fake_env(home / "e1")
    idx = SourceSettings(torch_index="https://alice:s3cret@mirror.example.org/whl/cu126",
                         extra_index_urls=("https://bob:tok@pkgs.example.org/simple?token=abc123",),
                         find_links=("/opt/wheels",), default_index="https://pypi.example.org/simple")
    registry.record_install(make_install_result(env), _plan(env, index=idx), None)
    text = registry.registry_file().read_text(encoding="utf-8")
    for secret in ("alice", "s3cret", "bob", "tok@", "abc123"):
        assert secret not in text
    rec = registry.find(env)
    assert rec is not None and rec.credentials_removed
    assert rec.sources.torch_index == "https://mirror.example.org/whl/cu126"
    assert rec.sources.find_links == ("/opt/wheels",)


def test_the_registry_file_keeps_its_format(home):
    """The file's keys, in their order, are what version 1 wrote (a row read by its fields and
    written by them: the sources' credentials flag and the verification's summary included)."""
    env = _fake_env(home / "e1")
    idx = SourceSettings(find_links=("/w",), bundle=Path("/b"), proxy="http://proxy:3128", mirrors=("nju-torch",))
    registry.record_install(make_install_result(env), _plan(env, index=idx), make_verify_report())
    row = json.loads(registry.registry_file().read_text(encoding="utf-8"))["environments"][0]
    assert list(row) == ["path", "kind", "origin", "python", "installer", "torch", "variant", "backend", "family",
                         "packages", "sources", "created", "updated", "verification", "guard", "kernel",
                         "pending_upgrade", "folder"]
    assert row["sources"] == {"torch_index": None, "default_index": None, "extra_index_urls": [], "find_links": ["/w"],
                              "bundle": str(Path("/b")), "offline": False, "credentials_removed": False}
    assert list(row["verification"])[-1] == "summary" and "checks passed" in row["verification"]["summary"]


def test_clean_url_keeps_a_url_without_credentials_as_it_is():
    assert registry.clean_url("https://download.pytorch.org/whl/cu126") == ("https://download.pytorch.org/whl/cu126",
                                                                           False)
    assert registry.clean_url("file:///opt/pypi/simple") == ("file:///opt/pypi/simple", False)


@pytest.mark.parametrize("content, why", [
    ("{not json", "not valid JSON"),
    ('{"schema_version": 1, "environments": {}}', "'environments' must be a list, not an object"),
    ('{"schema_version": 1, "environments": [{"path": 3}]}', "'environments[0].path' must be a text, not the number 3"),
    ('{"environments": []}', "schema_version"),
    ('{"schema_version": 1, "environments": [{"path": "/x", "kind": "venv", "origin": "stolen", "installer": "uv", '
     '"created": "", "updated": ""}]}', "origin"),
])
def test_a_corrupt_registry_is_reported_and_set_aside_never_raised(home, content, why):
    f = registry.registry_file()
    f.write_text(content, encoding="utf-8")
    reg = registry.load()
    assert reg.records == ()
    assert reg.problem is not None and why in render(reg.problem)
    assert reg.set_aside is not None and reg.set_aside.read_text(encoding="utf-8") == content  # kept for the user
    assert not f.exists()
    assert "damaged" in render(reg.problem) and "已损坏" in render(reg.problem, "zh_CN")
    env = _fake_env(home / "e1")  # and a new list starts
    assert registry.record_install(make_install_result(env), _plan(env), None) is not None
    assert len(registry.load().records) == 1


def test_a_registry_from_a_newer_version_is_left_alone(home):
    f = registry.registry_file()
    content = '{"schema_version": 99, "environments": [{"future": true}]}'
    f.write_text(content, encoding="utf-8")
    reg = registry.load()
    assert reg.read_only and "newer version" in render(reg.problem)
    with pytest.raises(BadInput):
        registry.update(home / "x", lambda r: r)
    env = _fake_env(home / "e1")
    assert registry.record_install(make_install_result(env), _plan(env), None) is None  # never raises
    assert f.read_text(encoding="utf-8") == content


def test_writes_are_atomic_and_serialised(home):
    """Many threads recording at once: every record lands, the file is always valid JSON."""
    envs = [_fake_env(home / f"e{i}") for i in range(12)]
    errors: list[BaseException] = []

    def one(env: Path) -> None:
        try:
            registry.record_verification(env, Verification(True, registry.now(), "2.13.0+cpu", passed=3))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(e,)) for e in envs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert {r.path for r in registry.load().records} == {str(e) for e in envs}
    assert not list(registry.registry_file().parent.glob(".*.tmp"))


def test_a_verified_install_is_guarded_and_a_failed_one_lifts_a_stale_guard(home):
    env = _fake_env(home / "e1")
    ok = make_verify_report()
    rec = protect.record_install(make_install_result(env), _plan(env, rec=make_recommendation()), ok)
    assert rec is not None and rec.guard is not None and rec.guard.enabled
    assert rec.guard.pins == ("torch==2.13.0+cpu",)
    assert rec.verification is not None and rec.verification.ok and rec.backend == "cpu" and rec.variant == "cpu"
    assert guard.status(env).active
    bad = make_verify_report([make_check("cpu_matmul", "failed", "wrong")])
    res = make_install_result(env, torch_version="2.14.1", packages={"torch": "2.14.1"}, created=False)
    rec2 = protect.record_install(res, _plan(env), bad)
    assert rec2 is not None and rec2.guard is not None and not rec2.guard.enabled
    assert not guard.status(env).constraints  # nothing verified to protect: the old pins are gone
    assert rec2.origin == "created"  # an install into an env we made keeps it ours
    assert render(rec2.verification.summary) == "1 of 1 checks failed (cpu_matmul)"


def test_record_verification_adds_an_env_it_did_not_know_as_checked(home):
    env = _fake_env(home / "other")
    rec = registry.record_verification(env, Verification.could_not_run("torch is not installed"), {}, python="3.12.1")
    assert rec is not None and rec.origin == "checked" and not rec.made_by_app
    assert "could not run" in render(rec.verification.summary)
    assert "无法运行" in render(rec.verification.summary, "zh_CN")


def test_sources_of_a_bundle(home):
    s, removed = registry.stored_sources(SourceSettings(find_links=("/b/wheels",), offline=True, bundle=Path("/b")))
    assert s.offline and s.bundle == Path("/b") and not removed
    rec = EnvRecord(path="/e", sources=s, credentials_removed=removed, created="c", updated="u")
    assert EnvRecord.from_dict(rec.to_dict()) == rec


def test_record_verify_reads_the_family_from_the_env_and_guards_a_pass(home):
    env = _fake_env(home / "e1")
    sp = site_packages(env)
    for name, version in (("torch", "2.13.0+cpu"), ("torchvision", "0.28.0+cpu"), ("numpy", "2.0.0")):
        (sp / f"{name}-{version}.dist-info").mkdir(parents=True)
    rec = protect.record_verify(env, make_verify_report())
    assert rec is not None and rec.family == {"torch": "2.13.0+cpu", "torchvision": "0.28.0+cpu"}
    assert rec.guard is not None and rec.guard.pins == ("torch==2.13.0+cpu", "torchvision==0.28.0+cpu")
    assert guard.status(env).active
    assert registry.guard_facts(env) is not None and not registry.guard_facts(env).changed
