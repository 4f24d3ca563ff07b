"""``torch-setup fleet plan`` over a room of recorded machines, and ``install --config FILE --dry-run``.

tests/fixtures/fleet holds 17 detect reports written from recorded tool outputs (SOURCES.md):
NVIDIA GPUs with new and old drivers (H100/H200 590, RTX 4080 SUPER 595, RTX 2080 SUPER 610, 8x
H100 550, RTX A2000 525, GTX 1050 Ti + 1060 535, P100 + GTX 1070 580, TITAN V 515), AMD (MI300X,
RX 7900 XTX, MI25), CPU-only Linux (one with almost no disk), Apple (M3, an Intel iMac Pro) and
Windows (GTX 1660 Ti 546). The plan's groups and blockers come from the real recommendation engine;
every answer file it writes is one ``install --config FILE --dry-run`` accepts for its hosts.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import tomllib

from tests.helpers import run_cli
from tests.test_lab_fit import lock_for, write_lock

FLEET = Path(__file__).resolve().parent / "fixtures" / "fleet"


@pytest.fixture(scope="module")
def plan_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fleet-plan")


@pytest.fixture(scope="module")
def planned(plan_dir) -> tuple[int, str, dict]:
    import io
    from contextlib import redirect_stdout

    from app.cli import main

    buf = io.StringIO()
    with redirect_stdout(buf):
        rc = main(["fleet", "plan", str(FLEET), "--out", str(plan_dir)])
    return rc, buf.getvalue(), json.loads((plan_dir / "plan.json").read_text(encoding="utf-8"))


def test_the_fleet_has_at_least_12_varied_machines():
    reports = [json.loads(p.read_text(encoding="utf-8")) for p in FLEET.glob("*.json")]
    vendors = {g["vendor"] for r in reports for g in r["gpus"]}
    assert len(reports) >= 12 and {"nvidia", "amd", "apple"} <= vendors
    assert any(not r["gpus"] for r in reports)  # CPU-only
    drivers = sorted(int(g["driver_version"].split(".")[0]) for r in reports for g in r["gpus"]
                     if g["vendor"] == "nvidia")
    assert drivers[0] < 525 <= 580 <= drivers[-1]  # old and new drivers


def test_the_plan_groups_the_hosts_by_the_build_they_can_run(planned):
    rc, out, doc = planned
    assert rc == 1  # written, but a host is blocked (its disk), and it is named
    groups = {g["id"]: g for g in doc["groups"]}
    by_host = {h: v for h, v in doc["hosts"].items()}
    newest = groups[by_host["lab-h100-590"]["group"]]
    assert (newest["variant"], newest["torch"]) == ("cu132", "2.15.0")
    assert set(newest["hosts"]) == {"lab-h100-590", "lab-h200-590", "ws-rtx4080s-595", "ws-rtx2080s-610"}
    # the driver-550 DGX and the Pascal machines share the next newest build they can all run
    pascal = by_host["old-p100-gtx1070-580"]["group"]
    assert by_host["dgx-8xh100-550"]["group"] == pascal == by_host["old-gtx1050ti-1060-535"]["group"]
    assert groups[pascal]["variant"] == "cu126"
    assert groups[by_host["old-titanv-515"]["group"]]["variant"] == "cu118"
    assert groups[by_host["mac-m3"]["group"]]["variant"] == "mps"
    assert groups[by_host["win-gtx1660ti-546"]["group"]]["platform"] == "windows-x86_64"
    assert groups[by_host["rocm-mi300x"]["group"]]["backend"] == "rocm"
    assert doc["one_for_all"] is False and doc["blocked"] == ["cpu-node-tiny-disk"]
    assert "Fleet plan for 17 host(s)" in out and "-> answers/g1.toml" in out


def test_each_host_kept_from_the_newest_build_is_told_why(planned):
    _, out, doc = planned
    kinds = {h: [b["kind"] for b in v["blockers"]] for h, v in doc["hosts"].items()}
    assert kinds["dgx-8xh100-550"] == ["driver"] and kinds["laptop-a2000-525"] == ["driver"]
    assert kinds["old-p100-gtx1070-580"] == ["gpu"] and kinds["rocm-mi25"] == ["gpu"]
    assert kinds["cpu-node-tiny-disk"] == ["disk"] and kinds["lab-h100-590"] == []
    dgx = doc["hosts"]["dgx-8xh100-550"]["blockers"][0]
    assert "580" in dgx["text"] and "550.90.07" in dgx["text"] and dgx["build"] == "torch 2.15.0 (cu132)"
    assert "dgx-8xh100-550 (in g2) [driver] for torch 2.15.0 (cu132)" in out


def test_every_answer_file_passes_a_dry_run_for_its_hosts(planned, plan_dir, capsys):
    _, _, doc = planned
    for g in doc["groups"]:
        answers = plan_dir / g["answers"]
        assert tomllib.loads(answers.read_text(encoding="utf-8"))["torch"] == {"backend": g["variant"],
                                                                              "version": g["torch"]}
        host = g["hosts"][0]
        rc, out, err = run_cli(capsys, "install", "--config", str(answers), "--dry-run", "--from-report",
                               str(FLEET / f"{host}.json"), "--json")
        assert rc == 0, err
        plan = json.loads(out)
        assert plan["dry_run"] is True and plan["preflight"] is False
        pinned = [p for p in plan["plan"]["packages"] if p.startswith("torch==")]
        assert pinned and pinned[0].startswith(f"torch=={g['torch']}"), (g, plan["plan"]["packages"])
    assert not any(Path(g["answers"]).stem == "" for g in doc["groups"])


def test_fewest_builds_gives_one_build_to_all_the_nvidia_linux_hosts(tmp_path, capsys):
    rc, out, _ = run_cli(capsys, "fleet", "plan", *(str(FLEET / f"{n}.json") for n in (
        "lab-h100-590", "dgx-8xh100-550", "old-titanv-515", "old-p100-gtx1070-580")), "--out", str(tmp_path),
        "--fewest-builds", "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["one_for_all"] is True and [g["variant"] for g in doc["groups"]] == ["cu118"]
    rc, out, _ = run_cli(capsys, "fleet", "plan", str(FLEET / "lab-h100-590.json"), "--out", str(tmp_path / "x"))
    assert rc == 0 and "One build fits all of them." in out


def test_a_lock_plan_says_which_hosts_run_it_and_the_nearest_build_for_the_others(tmp_path, capsys):
    lock = write_lock(tmp_path / "lock", lock_for("2.13.0", "cu130"))
    rc, out, _ = run_cli(capsys, "fleet", "plan", str(FLEET), "--out", str(tmp_path / "plan"), "--lock", str(lock),
                         "--json")
    doc = json.loads(out)
    assert rc == 1 and [g["hosts"] for g in doc["groups"]] == [["lab-h100-590", "lab-h200-590", "ws-rtx2080s-610",
                                                               "ws-rtx4080s-595"]]
    titan = doc["hosts"]["old-titanv-515"]["blockers"][0]
    assert titan["kind"] == "gpu" and "the nearest build that runs there: torch" in titan["text"]
    answers = tomllib.loads((tmp_path / "plan" / "answers" / "g1.toml").read_text(encoding="utf-8"))
    assert answers["torch"] == {"lock": "pylock.toml"} and (tmp_path / "plan" / "answers" / "pylock.toml").exists()
    rc, out, err = run_cli(capsys, "install", "--config", str(tmp_path / "plan" / "answers" / "g1.toml"), "--dry-run",
                           "--from-report", str(FLEET / "lab-h100-590.json"))
    assert rc == 0 and "from the lock" in err, err
    rc, _, err = run_cli(capsys, "install", "--config", str(tmp_path / "plan" / "answers" / "g1.toml"), "--dry-run",
                         "--from-report", str(FLEET / "old-titanv-515.json"))
    assert rc == 2 and "cannot run on this machine" in err and "no kernels" in err


def test_session_reports_are_read_and_a_bad_report_is_named(tmp_path, capsys):
    folder = tmp_path / "reports"
    folder.mkdir()
    system = json.loads((FLEET / "cpu-node-1.json").read_text(encoding="utf-8"))
    (folder / "node-a.json").write_text(json.dumps({"schema": "torch-setup-session/1", "status": "ok",
                                                    "system": system}), encoding="utf-8")
    shutil.copy(FLEET / "mac-m3.json", folder / "mac.json")
    rc, out, _ = run_cli(capsys, "fleet", "plan", str(folder), "--out", str(tmp_path / "p"), "--json")
    assert rc == 0 and set(json.loads(out)["hosts"]) == {"node-a", "mac"}
    (folder / "broken.json").write_text(json.dumps({"schema_version": 1, "gpus": [{"name": "x"}]}), encoding="utf-8")
    rc, _, err = run_cli(capsys, "fleet", "plan", str(folder), "--out", str(tmp_path / "q"))
    assert rc == 2 and "broken.json" in err and "'gpus[0].vendor'" in err
    assert not (tmp_path / "q").exists()  # nothing written for bad input
    rc, _, err = run_cli(capsys, "fleet", "plan", str(tmp_path / "missing"), "--out", str(tmp_path / "q"))
    assert rc == 2 and "missing does not exist" in err
    (tmp_path / "empty").mkdir()
    rc, _, err = run_cli(capsys, "fleet", "plan", str(tmp_path / "empty"), "--out", str(tmp_path / "q"))
    assert rc == 2 and "REPORTS" in err


def test_install_dry_run_on_this_machine_creates_nothing(tmp_path, capsys, tiny_wheels, torch_wheelhouse):
    env = tmp_path / "env"
    rc, out, err = run_cli(capsys, "install", "--env", str(env), "--packages", "netlab-demo==1.1",
                           "--find-links", str(tiny_wheels), "--dry-run")
    assert rc == 0, err
    assert "Packages    : netlab-demo==1.1" in err and "nothing was created" in out
    assert not env.exists()
    answers = tmp_path / "answers.toml"
    answers.write_text(f'version = 1\n[environment]\npath = "{env}"\n[torch]\nbackend = "cpu"\n'
                       f'[sources]\nfind_links = ["{torch_wheelhouse.folder}"]\n[report]\n'
                       f'folder = "{tmp_path / "reports"}"\n', encoding="utf-8")
    rc, out, err = run_cli(capsys, "install", "--config", str(answers), "--dry-run", "--json")  # all from the folder
    doc = json.loads(out)
    assert doc["dry_run"] is True and doc["preflight"] is True and [c["name"] for c in doc["checks"]]
    assert rc == 0 and doc["approved"] is True, doc["checks"]
    assert not env.exists() and not (tmp_path / "reports").exists()  # not even the report folder
    rc, _, err = run_cli(capsys, "install", "--env", str(env), "--packages", "x", "--from-report",
                         str(FLEET / "mac-m3.json"))
    assert rc == 2 and "--from-report" in err and "--dry-run" in err


def test_a_plan_replaces_only_an_earlier_plan(tmp_path, capsys):
    out = tmp_path / "plan"
    rc, _, _ = run_cli(capsys, "fleet", "plan", str(FLEET), "--out", str(out))
    assert rc == 1 and (out / "answers" / "g9.toml").exists()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    rc, _, _ = run_cli(capsys, "fleet", "plan", str(FLEET / "mac-m3.json"), "--out", str(out))
    assert rc == 0 and sorted(p.name for p in (out / "answers").iterdir()) == ["g1.toml"]  # the old groups went
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "plan.json").write_text('{"mine": true}', encoding="utf-8")
    rc, _, err = run_cli(capsys, "fleet", "plan", str(FLEET / "mac-m3.json"), "--out", str(theirs))
    assert rc == 2 and "--out" in err and (theirs / "plan.json").read_text(encoding="utf-8") == '{"mine": true}'
