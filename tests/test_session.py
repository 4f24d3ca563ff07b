"""The pipeline object (app.core.pipeline.session): its state machine, the approved plan carried to the
install, the straight-through run, how a run ends, and the two CLI faces driving it.

Real parts where they are cheap: detection, the recommendation engine, planning, the local
pre-flight checks and the re-validation. The installer, the probes and the network are
replaced where the point is the session's bookkeeping (the real installs run in
test_install.py, test_unattended.py and the wizard's end-to-end test).
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import app.core.detection.detect
import app.core.doctor
import app.core.install
import app.core.install.checks
import app.core.measure.bench
import app.core.measure.verify
import app.core.recommend
from app.core.base.errors import BadInput, Cancelled, UserError
from app.core.detection.system import SystemReport
from app.core.install import Check, InstallPlan, InstallRequest, InstallResult
from app.core.install import plan as make_plan
from app.core.measure.probe import ProbeFailed
from app.core.pipeline.session import BenchOptions, Observer, Planned, RunOptions, Session, Stage
from app.core.recommend import Choices
from tests.factories import (
    make_bench_report,
    make_bench_result,
    make_check,
    make_install_result,
    make_recommendation,
    make_verify_report,
)

OK_CHECKS = (Check("target", True, "ok"), Check("disk", True, "ok"))


@pytest.fixture(scope="module")
def machine() -> SystemReport:
    from app.core.detection.detect import detect

    return detect()


@pytest.fixture
def no_network(monkeypatch):
    """The pre-flight's local checks run; its index probes answer "reachable" without a network."""
    monkeypatch.setattr(app.core.install.checks, "check_indexes", lambda p: [])


def _request(env: Path, **kw) -> InstallRequest:
    """A small request (its disk estimate fits any test machine; the free space is measured for real)."""
    return InstallRequest(env_path=env, kind="venv", installer="uv", **{"packages": ("six",), **kw})


def _approve(session: Session, env: Path, checks: tuple[Check, ...] = OK_CHECKS) -> InstallPlan:
    """Approve a real plan for ``env`` with the given pre-flight (no network)."""
    p = make_plan(_request(env), session.system)
    return session.approve(Planned(p, checks, system=session.system, recommendation=session.recommendation))


def _full(tmp_path: Path, machine: SystemReport) -> Session:
    """A session holding a result at every stage."""
    s = Session.resume(system=machine, choices=Choices(backend="cpu"), recommendation=make_recommendation())
    _approve(s, tmp_path / "env")
    s.install_result = make_install_result(tmp_path / "env")
    s.verify_report = make_verify_report()
    s.diagnosis = app.core.doctor.Diagnosis(python="p", env_path="e", findings=())
    s.bench_report = make_bench_report()
    return s


def _held(s: Session) -> set[Stage]:
    have = {Stage.SYSTEM: s.system, Stage.RECOMMENDATION: s.recommendation, Stage.PLAN: s.planned,
            Stage.INSTALL: s.install_result, Stage.VERIFY: s.verify_report, Stage.DIAGNOSIS: s.diagnosis,
            Stage.BENCH: s.bench_report}
    return {k for k, v in have.items() if v is not None}


# ------------------------------------------------------------------ the state machine
@pytest.mark.parametrize("stage,kept", [
    (Stage.SYSTEM, set()),
    (Stage.RECOMMENDATION, {Stage.SYSTEM}),
    (Stage.PLAN, {Stage.SYSTEM, Stage.RECOMMENDATION}),
    (Stage.INSTALL, {Stage.SYSTEM, Stage.RECOMMENDATION, Stage.PLAN}),
    (Stage.VERIFY, {Stage.SYSTEM, Stage.RECOMMENDATION, Stage.PLAN, Stage.INSTALL, Stage.BENCH}),
    (Stage.DIAGNOSIS, set(Stage) - {Stage.DIAGNOSIS}),
    (Stage.BENCH, set(Stage) - {Stage.BENCH}),
])
def test_forgetting_a_stage_forgets_what_was_built_on_it(tmp_path, machine, stage, kept):
    s = _full(tmp_path, machine)
    assert _held(s) == set(Stage)
    s.invalidate(stage)
    assert _held(s) == kept
    assert s.choices == Choices(backend="cpu"), "the user's wishes outlive the results"
    if Stage.PLAN not in kept:
        assert s.approved_plan is None and s.checks == ()


def test_a_new_system_report_or_new_choices_drop_the_later_results(tmp_path, machine):
    s = _full(tmp_path, machine)
    s.use_system(machine)
    assert _held(s) == {Stage.SYSTEM}
    s = _full(tmp_path, machine)
    s.choose(Choices(backend="cpu", torch="2.13.0"))
    assert _held(s) == {Stage.SYSTEM} and s.choices == Choices(backend="cpu", torch="2.13.0")


def test_detect_recommend_plan_then_other_choices_need_a_new_plan(tmp_path, machine, no_network, monkeypatch):
    """Real detection, engine and planning: the request names no packages, so the plan installs
    the session's recommendation; new choices withdraw the approval."""
    monkeypatch.setattr(app.core.detection.detect, "detect", lambda target=None, **kw: machine)
    s = Session()
    with pytest.raises(BadInput, match="no system report"):
        s.recommend()
    assert s.detect(tmp_path) is machine and s.system is machine
    s.choose(Choices(backend="cpu"))
    rec = s.recommend()
    assert s.recommendation is rec and str(rec.backend) == "cpu"
    plan, checks = s.plan(InstallRequest(env_path=tmp_path / "env", installer="uv"))
    assert s.approved_plan is plan and plan.request.recommendation is rec
    assert plan.packages == rec.packages and plan.index.torch_index == rec.index_url
    windows_only = {"path", "cloud", "vcruntime"}  # the path budget, OneDrive, the VC++ runtime
    assert [c.name for c in checks if c.name not in windows_only][:4] == ["backend", "python", "target", "disk"]
    assert s.recommendation_followed is rec
    s.choose(Choices(backend="cpu", torch="2.13.0"))
    assert s.recommendation is None and s.approved_plan is None
    with pytest.raises(BadInput, match="No installation plan was approved"):
        s.install()


def test_choices_the_engine_refuses_leave_no_recommendation(machine):
    s = Session.resume(system=machine, recommendation=make_recommendation())
    s.choose(Choices(backend="cpu", torch="1.0"))
    with pytest.raises(BadInput):
        s.recommend()
    assert s.recommendation is None


def test_an_answer_for_inputs_that_changed_meanwhile_is_not_recorded(tmp_path, machine, monkeypatch):
    """A step that ran in a worker records only if what it was computed from is still current."""
    other = dataclasses.replace(machine)  # an equal report, but a new scan
    s = Session.resume(system=machine)
    rec = make_recommendation()

    def engine_while_rescanned(report, data=None, choices=None, available=None, sources=None):
        s.use_system(other)  # the user re-scanned while the engine ran
        return rec

    monkeypatch.setattr(app.core.recommend, "recommend", engine_while_rescanned)
    assert s.recommend() is rec
    assert s.system is other and s.recommendation is None

    s = Session.resume(system=machine)
    _approve(s, tmp_path / "env")

    def install_while_replanned(p, *, on_event=None, cancel=None, checks=None, lock=None):
        s.invalidate(Stage.PLAN)  # the inputs changed while it ran
        return make_install_result(tmp_path / "env")

    monkeypatch.setattr(app.core.install, "install", install_while_replanned)
    assert isinstance(s.install(), InstallResult)
    assert s.install_result is None


def test_approve_refuses_a_plan_made_for_an_earlier_recommendation(tmp_path, machine):
    s = Session.resume(system=machine, recommendation=make_recommendation())
    planned = Planned(make_plan(_request(tmp_path / "env")), OK_CHECKS, system=machine,
                      recommendation=s.recommendation)
    s.choose(Choices(backend="cpu", torch="2.13.0"))
    with pytest.raises(BadInput, match="earlier"):
        s.approve(planned)
    assert s.planned is None and s.approved_plan is None


def test_a_blocking_check_is_recorded_but_nothing_is_approved(tmp_path, machine):
    s = Session.resume(system=machine)
    blocked = (Check("target", False, "the folder is taken", hint="choose another"), OK_CHECKS[1])
    with pytest.raises(BadInput) as refused:
        _approve(s, tmp_path / "env", blocked)
    assert refused.value.text() == "the folder is taken" and refused.value.hint == "choose another"
    assert refused.value.log_path is not None and refused.value.log_path.exists()
    assert s.planned is not None and not s.planned.approvable
    assert s.approved_plan is None and s.checks == blocked
    with pytest.raises(BadInput, match="No installation plan was approved"):
        s.install()


# ------------------------------------------------------------------ the approved plan runs
def test_install_runs_exactly_the_approved_plan_and_measures_only_the_disk_again(tmp_path, machine, monkeypatch):
    s = Session.resume(system=machine)
    approved = _approve(s, tmp_path / "env")
    seen: list[tuple[InstallPlan, tuple[Check, ...]]] = []

    def fake_install(p, *, on_event=None, cancel=None, checks=None, lock=None):
        seen.append((p, tuple(checks)))
        return make_install_result(tmp_path / "env")

    monkeypatch.setattr(app.core.install, "install", fake_install)
    monkeypatch.setattr(app.core.install, "plan", lambda *a, **k: pytest.fail("install() planned anew"))
    monkeypatch.setattr(app.core.install, "preflight", lambda *a, **k: pytest.fail("install() ran the pre-flight"))
    other = make_plan(_request(tmp_path / "env"))
    with pytest.raises(BadInput, match="not the approved"):
        s.install(other)
    assert seen == []
    result = s.install(approved)
    (ran, checks), = seen
    assert ran is approved and s.approved_plan is approved
    assert [c.name for c in checks] == ["target", "disk"] and all(c.ok for c in checks)
    assert all(c.message != "ok" for c in checks), "target and disk were measured again"
    assert s.install_result is result


def test_a_target_filled_after_approval_is_refused_and_nothing_is_written(tmp_path, machine):
    """The real install: re-validation refuses before anything is written; the plan stays approved."""
    s = Session.resume(system=machine)
    env = tmp_path / "env"
    approved = _approve(s, env)
    env.mkdir()
    (env / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(BadInput) as refused:
        s.install()
    assert str(env) in refused.value.text() and "Nothing was changed" in refused.value.text()
    assert [p.name for p in env.iterdir()] == ["notes.txt"]
    assert s.approved_plan is approved and s.install_result is None


# ------------------------------------------------------------------ straight through
class _Recorder(Observer):
    """Writes down which of the observer's hooks were called, in order."""

    def __init__(self) -> None:
        self.calls: list[str] = []


for _hook in [n for n in vars(Observer) if not n.startswith("_")]:
    setattr(_Recorder, _hook, lambda self, *_args, _hook=_hook: self.calls.append(_hook))


@pytest.fixture
def fake_tools(tmp_path, monkeypatch, no_network):
    """Installer, verify, doctor and bench replaced by functions returning real result types."""
    calls: dict[str, object] = {"verify": make_verify_report(), "bench": make_bench_report()}

    def install(p, *, on_event=None, cancel=None, checks=None, lock=None):
        return make_install_result(p.env_path)

    def verify(python, *, on_event=None, cancel=None, expect=None, **kw):
        calls["expect"] = expect
        v = calls["verify"]
        if isinstance(v, Exception):
            raise v
        return v

    def diagnose(python, report=None, verify=None, **kw):
        calls["diagnosed"] = verify
        return app.core.doctor.Diagnosis(python=str(python), env_path=str(tmp_path), findings=())

    def bench(python, **kw):
        calls["bench_options"] = kw
        b = calls["bench"]
        if isinstance(b, Exception):
            raise b
        return b

    monkeypatch.setattr(app.core.install, "install", install)
    monkeypatch.setattr(app.core.measure.verify, "run_verify", verify)
    monkeypatch.setattr(app.core.doctor, "diagnose", diagnose)
    monkeypatch.setattr(app.core.measure.bench, "run_bench", bench)
    return calls


def test_run_all_goes_through_every_step_in_order(tmp_path, fake_tools):
    s, obs = Session(source="cli"), _Recorder()
    opts = RunOptions(detect=False, strict=True, bench=BenchOptions(sizes=(256,), dtypes=("fp32",), budget_s=5))
    result = s.run_all(_request(tmp_path / "env"), options=opts, observer=obs)
    assert obs.calls == ["recommended", "planned", "approved", "installed", "verifying", "verified", "benching",
                         "benched"]
    assert s.install_result is result and s.verify_report is fake_tools["verify"]
    assert s.bench_report is fake_tools["bench"] and s.diagnosis is None and s.system is None
    assert fake_tools["bench_options"]["sizes"] == [256] and fake_tools["bench_options"]["budget_s"] == 5
    assert s.conclude(None) == 0
    rep = s.report()
    assert rep.status == "ok" and rep.exit_code == 0 and rep.source == "cli" and rep.install is result
    assert rep.duration_s is not None and rep.notes == ()


def test_a_failed_verification_is_diagnosed_and_fails_a_strict_run(tmp_path, fake_tools):
    failed = make_verify_report([make_check("import", "failed", "No module named 'torch'", "Import PyTorch")])
    fake_tools["verify"] = failed
    s, obs = Session(source="unattended"), _Recorder()
    with pytest.raises(UserError) as err:
        s.run_all(_request(tmp_path / "env"), options=RunOptions(detect=False, bench=BenchOptions()), observer=obs)
    assert "verification failed: Import PyTorch: No module named 'torch'" in err.value.text()
    assert "torch-setup doctor --env" in str(err.value.hint)
    assert "benching" not in obs.calls and s.bench_report is None
    assert fake_tools["diagnosed"] is failed and s.diagnosis is not None
    assert s.conclude(err.value) == 1
    rep = s.report()
    assert rep.status == "failed" and rep.error is err.value and rep.verify is failed
    assert rep.notes == ("The speed test was skipped because the verification failed.",)
    assert json.loads(rep.to_json())["diagnosis"] is not None


def test_a_verification_that_cannot_run_is_only_reported_when_not_strict(tmp_path, fake_tools):
    fake_tools["verify"] = ProbeFailed("the probe crashed")
    s, obs = Session(source="cli"), _Recorder()
    result = s.run_all(_request(tmp_path / "env"), options=RunOptions(detect=False, strict=False), observer=obs)
    assert obs.calls[-2:] == ["verifying", "verify_failed"]
    assert s.install_result is result and s.verify_report is None
    fake_tools["verify"] = ProbeFailed("the probe crashed")
    with pytest.raises(ProbeFailed):
        Session().run_all(_request(tmp_path / "env2"), options=RunOptions(detect=False, strict=True))


def test_a_stopped_speed_test_keeps_its_measurements_and_cancels_the_run(tmp_path, fake_tools):
    from app.core.measure.bench import BenchStatus

    fake_tools["bench"] = make_bench_report([make_bench_result(256, 90.0)], status=BenchStatus.CANCELLED)
    s = Session(source="unattended")
    with pytest.raises(Cancelled) as stopped:
        s.run_all(_request(tmp_path / "env"), options=RunOptions(detect=False, bench=BenchOptions()))
    assert s.bench_report is fake_tools["bench"]
    assert s.conclude(stopped.value) == 130
    data = json.loads(s.report().to_json())
    assert data["status"] == "cancelled" and data["bench"]["status"] == "cancelled"


def test_a_failed_speed_test_is_a_note_not_a_failure(tmp_path, fake_tools):
    fake_tools["bench"] = ProbeFailed("out of memory")
    s, obs = Session(), _Recorder()
    s.run_all(_request(tmp_path / "env"), options=RunOptions(detect=False, bench=BenchOptions()), observer=obs)
    assert obs.calls[-1] == "bench_failed" and s.bench_report is None
    assert s.report().notes == ("The speed test failed: out of memory",)


def test_expected_accelerator_comes_from_the_plan(tmp_path, machine):
    s = Session.resume(system=machine, recommendation=make_recommendation(backend="cuda", variant="cu126"))
    assert s.expected_accelerator == "cuda"
    _approve(s, tmp_path / "env")  # explicit packages: the plan follows no recommendation
    assert s.expected_accelerator is None


@pytest.mark.parametrize("error,code,status", [
    (None, 0, "ok"), (BadInput("bad"), 2, "bad-input"), (Cancelled(), 130, "cancelled"),
    (UserError("broke"), 1, "failed"), (KeyboardInterrupt(), 130, "cancelled"),
])
def test_conclude_maps_how_the_run_ended(error, code, status):
    s = Session()
    assert s.conclude(error) == code
    assert s.status == status and s.exit_code == code
    assert (s.error is None) == (error is None)
    with pytest.raises(TypeError):
        Session().conclude(ValueError("not a user error"))


# ------------------------------------------------------------------ the CLI faces drive it
@pytest.fixture
def observed_install(monkeypatch, tmp_path):
    """Session.install replaced by an observer: what it was asked to install, by which session."""
    seen: list[tuple[Session, InstallPlan | None, InstallPlan | None]] = []

    def install(self, plan=None, *, on_event=None, cancel=None, lock=None):
        assert lock is not None and lock.held  # the CLI faces hold the env's lock across the run
        seen.append((self, plan, self.approved_plan))
        result = make_install_result(tmp_path / "env")
        self.install_result = result
        return result

    monkeypatch.setattr(Session, "install", install)
    return seen


def test_cli_install_goes_through_the_session(tmp_path, capsys, no_network, observed_install):
    from app.cli import main

    env = tmp_path / "env"
    rc = main(["install", "--env", str(env), "--packages", "six", "--yes", "--no-verify", "--json"])
    assert rc == 0
    (session, plan, approved), = observed_install
    assert plan is approved and approved is not None and approved.packages == ("six",)
    assert session.source == "cli" and session.system is None, "--packages: nothing to detect"
    out = json.loads(capsys.readouterr().out)
    assert out["plan"]["packages"] == ["six"] and out["verify"] is None


def test_answer_file_runs_go_through_the_session_and_report_it(tmp_path, capsys, no_network, observed_install,
                                                              local_wheels):
    from app.cli import main

    answers = tmp_path / "answers.toml"
    answers.write_text(f"""
[environment]
path = "env"
[torch]
backend = "cpu"
version = "2.13.0"
[sources]
find_links = [{json.dumps(str(local_wheels))}]
[verify]
enabled = false
[bench]
enabled = false
[report]
folder = "reports"
name = "pc-01"
""", encoding="utf-8")
    assert main(["install", "--config", str(answers), "--yes"]) == 0
    (session, plan, approved), = observed_install
    assert plan is approved and approved is not None and session.source == "unattended"
    rec = session.recommendation
    assert rec is not None and approved.request.recommendation is rec and rec.torch_version == "2.13.0"
    err = capsys.readouterr().err
    assert "==> Detecting this machine…" in err and "==> Recommended: cpu (cpu), torch 2.13.0" in err
    data = json.loads((tmp_path / "reports" / "pc-01.json").read_text(encoding="utf-8"))
    assert data["source"] == "unattended" and data["status"] == "ok" and data["exit_code"] == 0
    assert data["recommendation"]["torch_version"] == "2.13.0" and data["system"] is not None


def test_a_failed_answer_file_run_still_writes_the_sessions_report(tmp_path, monkeypatch, no_network):
    from app.cli import main

    def broken(self, plan=None, *, on_event=None, cancel=None, lock=None):
        raise UserError("the installer broke", hint="read the log")

    monkeypatch.setattr(Session, "install", broken)
    answers = tmp_path / "answers.toml"
    answers.write_text('[environment]\npath = "env"\n[torch]\nbackend = "cpu"\n[report]\nfolder = "reports"\n'
                       'name = "pc-02"\n', encoding="utf-8")
    assert main(["install", "--config", str(answers), "--yes"]) == 1
    data = json.loads((tmp_path / "reports" / "pc-02.json").read_text(encoding="utf-8"))
    assert data["status"] == "failed" and data["exit_code"] == 1 and data["error"]["message"] == "the installer broke"
    assert data["install"] is None and data["recommendation"] is not None
