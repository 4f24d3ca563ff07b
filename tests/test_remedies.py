"""The failure -> remedy catalogue (app.core.remedies) against recorded real outputs.

Every file of tests/fixtures/failures/ (public issue threads and real runs on this machine,
each cited in tests/fixtures/SOURCES.md) and every uv/pip ``fail-*`` recording must be listed
in tests/fixtures/failures/expected.toml and must come out of the catalogue as that cause, with
an explanation and at least one action. A new fixture without an entry, or an output the
catalogue does not recognise, fails.
"""
from __future__ import annotations

import errno
import re
import socket
import sys
from pathlib import Path

import pytest

from app.core import remedies
from app.core.base.actions import Action, ActionKind, Remedy
from app.core.base.errors import BadInput, ForFace, UserError, render_hint
from app.core.base.text import render
from app.core.compat.data import load_compat
from app.core.remedies import CATALOGUE, Context, diagnose, failure_lines, os_error_text
from app.core.remedies.commands import answer_line, cli_text, command_for, replace_option
from app.core.remedies.reasons import explain_reasoning, reasoning_lines, suggested_torch

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FIX = Path(__file__).parent / "fixtures"
EXPECTED = tomllib.loads((FIX / "failures" / "expected.toml").read_text(encoding="utf-8"))["failure"]
BY_FILE = {e["file"]: e for e in EXPECTED}
CJK = re.compile(r"[\u4e00-\u9fff]")
DATA = load_compat()


def _recorded() -> list[str]:
    files = [f"failures/{p.name}" for p in sorted((FIX / "failures").glob("*.txt"))]
    files += [f"{tool}/{p.name}" for tool in ("uv", "pip") for p in sorted((FIX / tool).glob("fail-*.txt"))]
    return files


def _context(entry: dict) -> Context:
    ctx = dict(entry.get("context") or {})
    data = DATA if ctx.pop("data", False) else None
    return Context(data=data, **ctx)


def test_there_are_at_least_25_recorded_real_failures_and_each_has_its_source():
    files = _recorded()
    assert len(files) >= 25, len(files)
    sources = (FIX / "SOURCES.md").read_text(encoding="utf-8")
    missing = [f for f in files if f"`{f}`" not in sources and f"`{Path(f).name}`" not in sources]
    assert not missing, f"fixtures without a line in SOURCES.md: {missing}"


@pytest.mark.parametrize("name", _recorded())
def test_every_recorded_failure_maps_to_its_explanation_and_actions(name):
    assert name in BY_FILE, f"{name} has no entry in tests/fixtures/failures/expected.toml"
    entry = BY_FILE[name]
    lines = (FIX / name).read_text(encoding="utf-8").splitlines()
    found = diagnose(lines, _context(entry))
    assert found, f"{name}: the catalogue did not recognise this output"
    top = found[0]
    assert top.code == entry["code"], (name, [r.code for r in found])
    assert render(top.explanation).strip() and not render(top.explanation).startswith("{")
    kinds = [a.kind.value for a in top.actions]
    assert kinds, f"{name}: no action"
    assert kinds == entry["actions"], (name, kinds)
    if "value" in entry:
        assert entry["value"] in [a.value for a in top.actions], (name, top.actions)
    if "variant" in entry:
        assert entry["variant"] in [a.variant for a in top.actions], (name, top.actions)
    # every sentence and every button has its Chinese
    for text in (top.explanation, *top.details, *(a.label() for a in top.actions), *(a.tooltip() for a in top.actions)):
        assert CJK.search(render(text, "zh_CN")), (name, text)


def test_every_expected_entry_is_a_recorded_file_and_every_catalogue_entry_is_exercised():
    recorded = set(_recorded())
    assert not [e["file"] for e in EXPECTED if e["file"] not in recorded]
    codes = {e["code"] for e in EXPECTED}
    untested = [e.code for e in CATALOGUE if e.code not in codes]
    # these have no recorded output yet; each is tested on the lines that mark it below
    assert set(untested) <= {"http-404", "file-in-use", "no-cuda-device"}, untested


@pytest.mark.parametrize("line,code", [
    ("ERROR: HTTP error 404 while getting https://download.pytorch.org/whl/cu128/x.whl", "http-404"),
    ("ERROR: Could not install packages due to an OSError: [WinError 32] The process cannot access the file "
     "because it is being used by another process", "file-in-use"),
    ("RuntimeError: No CUDA GPUs are available", "no-cuda-device"),
])
def test_entries_without_a_recording_match_their_marker(line, code):
    assert diagnose([line])[0].code == code


def test_no_match_and_a_successful_install_give_nothing():
    ok = (FIX / "uv" / "install-warm-torch-0.13.9.txt").read_text(encoding="utf-8").splitlines()
    assert diagnose(ok) == ()
    assert diagnose(["Resolved 3 packages in 2ms", "error: something new"]) == ()


def test_a_network_failure_hides_what_pip_concludes_about_the_packages():
    lines = (FIX / "pip" / "fail-connection-refused-23.2.1.txt").read_text(encoding="utf-8").splitlines()
    assert [r.code for r in diagnose(lines)] == ["connection-refused"]


def test_uv_reasoning_is_kept_and_put_into_words():
    lines = (FIX / "failures" / "uv-transitive-no-version-0.5.18.txt").read_text(encoding="utf-8").splitlines()
    kept = reasoning_lines(lines)
    assert any("Because there is no version of nvidia-cudnn-cu12" in ln for ln in kept)
    assert any("And because you require torch==2.4.1" in ln for ln in kept)
    words = [render(m) for m in explain_reasoning(lines)]
    assert words == ["There is no nvidia-cudnn-cu12==9.1.0.70 on the package sources.",
                     "torch==2.4.1 needs nvidia-cudnn-cu12==9.1.0.70.", "So torch==2.4.1 cannot be used."]
    assert all(CJK.search(render(m, "zh_CN")) for m in explain_reasoning(lines))
    # the lines shown keep uv's explanation (a plain error filter drops them: no error word)
    shown = failure_lines(lines)
    assert any("we can conclude that torch==2.4.1 cannot be used" in ln for ln in shown)


def test_the_torch_version_the_tools_point_at():
    pip = (FIX / "failures" / "pip-resolution-impossible-22.2.2.txt").read_text(encoding="utf-8").splitlines()
    assert suggested_torch(pip) == "1.12.0"
    assert suggested_torch(["  ╰─▶ Because only torch<=2.14.1 is available and you require torch==2.15.0, we can "
                            "conclude that your requirements are unsatisfiable."]) == "2.14.1"
    assert suggested_torch(["ERROR: Could not find a version that satisfies the requirement torch==9 "
                            "(from versions: 2.12.0, 2.13.0, 2.14.1, 2.15.0rc1)"]) == "2.14.1"


def test_free_space_carries_the_gb_and_the_folder():
    lines = (FIX / "uv" / "fail-disk-full-0.13.9.txt").read_text(encoding="utf-8").splitlines()
    top = diagnose(lines, Context(path="/srv/envs/torch", need_mb=4200, free_mb=1000))[0]
    free = top.actions[0]
    assert free.kind is ActionKind.FREE_SPACE and free.path == "/srv/envs/torch" and free.gb == pytest.approx(3.2)
    assert render(top.explanation) == "The disk of /srv/envs/torch is full."
    assert "3.2 GiB" in render(free.label()) and "3.2 GiB" in render(free.label(), "zh_CN")


def test_cuda_visible_devices_from_the_environment_of_the_failing_call():
    top = diagnose(["RuntimeError: No CUDA GPUs are available"], Context(env=(("CUDA_VISIBLE_DEVICES", ""),)))[0]
    assert top.code == "visible-devices"
    assert top.actions == (Action(ActionKind.UNSET_ENV, "CUDA_VISIBLE_DEVICES", path=""),)


def test_driver_suggestion_respects_the_driver_and_the_gpu():
    lines = ["RuntimeError: The NVIDIA driver on your system is too old (found version 12040)."]
    top = diagnose(lines, Context(variant="cu130", compute_capability="6.1", python="3.12.3", data=DATA,
                                  os_family="windows"))[0]
    update, older = top.actions
    assert update.kind is ActionKind.UPDATE_DRIVER and update.value == "580" and update.url.startswith("https://")
    # an older build the 12.x driver runs (CUDA minor-version compatibility) with Pascal (sm_61) code
    assert older.kind is ActionKind.SET_TORCH_VERSION and older.variant.startswith("cu12")
    rel = next(r for r in DATA.releases if r.latest == older.value)
    v = next(v for v in rel.variants if v.name == older.variant and v.platforms[0].startswith("windows"))
    assert "6.1" in v.arch and v.cuda.startswith("12.")
    newer = [r for r in DATA.releases if r.key > rel.key]  # and none newer has one
    assert not [x for r in newer for x in r.variants if x.platforms[0].startswith("windows") and x.cuda
                and x.cuda.startswith("12.") and "6.1" in x.arch]


# ------------------------------------------------------------------ the command line's rendering

def test_cli_renders_the_exact_command():
    argv = ["install", "--env", "/srv/e", "--torch", "2.15.0", "--yes"]
    pin = Action(ActionKind.SET_TORCH_VERSION, "2.14.1")
    assert command_for(pin, argv) == "torch-setup install --env /srv/e --yes --torch 2.14.1"
    assert render(cli_text(pin, argv)) == "Run: torch-setup install --env /srv/e --yes --torch 2.14.1"
    drop = Action(ActionKind.SET_TORCH_VERSION, "")
    assert command_for(drop, argv) == "torch-setup install --env /srv/e --yes"
    assert command_for(Action(ActionKind.CHOOSE_OTHER_LOCATION), argv) == \
        "torch-setup install --torch 2.15.0 --yes --env NEW_FOLDER"
    unset = Action(ActionKind.UNSET_ENV, "CUDA_VISIBLE_DEVICES", path="")
    assert command_for(unset, ["verify", "--env", "/srv/e"]) == "env -u CUDA_VISIBLE_DEVICES torch-setup verify --env /srv/e"
    assert command_for(unset, ["verify"], os_family="windows", shell="cmd") == \
        'set "CUDA_VISIBLE_DEVICES=" & torch-setup verify'
    assert command_for(unset, ["verify"], os_family="windows") == \
        "Remove-Item Env:CUDA_VISIBLE_DEVICES -ErrorAction SilentlyContinue; torch-setup verify"
    free = Action(ActionKind.FREE_SPACE, path="/srv", gb=3.2)
    assert render(cli_text(free, argv)).startswith("Free 3.2 GiB on the disk of /srv, then run: torch-setup install")
    assert replace_option(["--torch=2.1", "x"], "--torch", None) == ["x"]


def test_answer_file_runs_get_the_key_to_set():
    assert answer_line(Action(ActionKind.SET_TORCH_VERSION, "2.14.1")) == '[torch] version = "2.14.1"'
    assert answer_line(Action(ActionKind.SET_TORCH_VERSION, "")) == "[torch] version: remove"
    assert answer_line(Action(ActionKind.SET_PROXY)) == '[sources] proxy = "http://USER:PASSWORD@HOST:PORT"'
    assert answer_line(Action(ActionKind.RETRY)) is None
    text = cli_text(Action(ActionKind.CHOOSE_PYTHON, "3.12"), ["install", "--config", "a.toml"], answers=True)
    assert render(text) == 'In the answer file: [environment] python = "3.12"'


def test_cli_error_printer_prints_explanation_and_commands():
    from app.commands._errors import format_error

    lines = (FIX / "failures" / "pip-resolution-impossible-22.2.2.txt").read_text(encoding="utf-8").splitlines()
    err = UserError("Installing torch failed (exit code 1)", lines=failure_lines(lines), remedies=diagnose(lines))
    out = format_error(err, ["install", "--env", "e", "--torch", "1.12.1"])
    assert "torchvision 0.13.0 needs torch==1.12.0." in out
    assert "1. Run: torch-setup install --env e --torch 1.12.0" in out
    zh = format_error(err, ["install", "--env", "e"], "zh_CN")
    assert CJK.search(zh) and "torch-setup install --env e --torch 1.12.0" in zh


# ------------------------------------------------------------------ UserError

def test_user_error_carries_texts_codes_and_remedies():
    lines = (FIX / "uv" / "fail-disk-full-0.13.9.txt").read_text(encoding="utf-8").splitlines()
    found = diagnose(lines, Context(path="/e", need_mb=2048, free_mb=1024))
    err = UserError(remedies.run_outcome(1), remedies=found)
    d = err.to_dict()
    assert d["code"] == "disk-full" and d["message"] == "exit code 1" and d["message_code"] == "remedy.outcome_exit"
    assert d["remedies"][0]["explanation"] == "The disk of /e is full."
    assert [a["kind"] for a in d["actions"]] == ["free_space", "choose_other_location"]
    assert d["actions"][0]["gb"] == 1.0 and d["actions"][0]["path"] == "/e"
    back = Remedy.from_dict(d["remedies"][0])
    assert back.actions == found[0].actions
    assert "退出码" in err.render("zh_CN") or CJK.search(err.render("zh_CN"))
    hint = ForFace("gui words", "cli words")
    bad = BadInput("x", hint)
    assert render_hint(bad.hint, face="gui") == "gui words" and bad.to_dict()["hint"] == "cli words"
    assert bad.exit_code == 2 and bad.error_code == "error"


# ------------------------------------------------------------------ OS errors in words

@pytest.mark.parametrize("exc,code", [
    (OSError(errno.ENOSPC, "No space left on device"), "oserror.no_space"),
    (PermissionError(errno.EACCES, "Permission denied"), "oserror.access"),
    (FileNotFoundError(errno.ENOENT, "No such file or directory"), "oserror.not_found"),
    (OSError(errno.EROFS, "Read-only file system"), "oserror.read_only"),
    (OSError(errno.ENAMETOOLONG, "File name too long"), "oserror.name_too_long"),
    (ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"), "oserror.refused"),
    (TimeoutError(errno.ETIMEDOUT, "Connection timed out"), "oserror.timed_out"),
    (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), "oserror.no_such_host"),
])
def test_common_os_errors_have_translated_sentences(exc, code):
    text = os_error_text(exc)
    assert text.code == code
    assert CJK.search(render(text, "zh_CN")) and not CJK.search(render(text, "en"))


def test_an_unknown_os_error_keeps_the_systems_words():
    assert render(os_error_text(OSError(errno.EXDEV, "Invalid cross-device link")), "zh_CN") == \
        "Invalid cross-device link"


# ------------------------------------------------------------------ doctor findings carry actions

def test_doctor_findings_carry_their_actions():
    from app.core.detection.system import GPU, OSInfo, SystemReport
    from app.core.doctor import analyze
    from app.core.measure.verify import BackendState, TorchBuild, VerifyReport

    report = SystemReport(os=OSInfo(family="linux"), gpus=[GPU(vendor="nvidia", name="GTX 1080 Ti",
                                                               driver_version="470.86", compute_capability="6.1")])
    verify = VerifyReport(python="/env/bin/python", torch_version="2.14.1+cu128",
                          build=TorchBuild(cuda="12.8", local_tag="cu128", arch_list=("sm_75", "sm_80", "sm_90")),
                          backends={"cuda": BackendState(built=True, available=False)}, accelerator="cuda")
    found = {f.code: f for f in analyze(verify=verify, report=report, env={"CUDA_VISIBLE_DEVICES": ""}, data=DATA)}
    driver = found["driver-too-old"].actions
    assert driver[0] == Action(ActionKind.UPDATE_DRIVER, "525.60.13", url=driver[0].url)
    assert found["arch-missing"].actions == (Action(ActionKind.SET_VARIANT),)
    assert found["cuda-visible-devices"].actions[0] == Action(ActionKind.UNSET_ENV, "CUDA_VISIBLE_DEVICES", path="")
    assert found["arch-missing"].to_dict()["actions"][0]["kind"] == "set_variant"


# ------------------------------------------------------------------ answer-file host reports

def test_answer_file_reports_hold_the_remedies_structured_and_the_keys_to_set(tmp_path):
    from app.core.pipeline.report import SessionReport, load_session_report

    lines = (FIX / "failures" / "pip-resolution-impossible-22.2.2.txt").read_text(encoding="utf-8").splitlines()
    err = UserError("Installing torch failed (exit code 1)", lines=failure_lines(lines), remedies=diagnose(lines))
    report = SessionReport(error=err, status="failed", exit_code=1, source="unattended", hostname="lab-07")
    d = report.to_dict()
    assert d["summary"]["error_code"] == "resolution-conflict"
    assert d["error"]["remedies"][0]["code"] == "resolution-conflict"
    assert [a["kind"] for a in d["error"]["actions"]] == ["set_torch_version", "switch_source"]
    assert d["error"]["actions"][0]["value"] == "1.12.0"
    md = report.to_markdown()
    assert '[torch] version = "1.12.0"' in md and "need different versions" in md
    paths = report.save(tmp_path, formats=("json",))
    back = load_session_report(paths[0])
    assert back.error is not None and back.error.actions == err.actions and back.error.error_code == "resolution-conflict"


# ------------------------------------------------------------------ a real failing install, end to end

def test_a_real_403_install_failure_prints_the_explanation_and_the_commands(tmp_path, index_server, tiny_wheels):
    import json
    import subprocess

    from tests.netlab.behaviours import FORBIDDEN

    server = index_server(sorted(tiny_wheels.glob("*.whl")), behaviours={"netlab_demo-*.whl": FORBIDDEN})
    env = tmp_path / "env"
    args = ["install", "--env", str(env), "--packages", "netlab-demo==1.0", "--index-url", server.simple_url(),
            "--default-index-url", server.simple_url(), "--yes", "--no-verify"]
    repo = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=repo, capture_output=True, text=True, encoding="utf-8",
                         timeout=600, stdin=subprocess.DEVNULL)
    assert run.returncode == 1, run.stdout + run.stderr
    err = run.stderr
    assert "refused the download (HTTP 403)" in err and "What to do:" in err, err
    assert "1. Run, with URL filled in: torch-setup install" in err and "--index-url URL" in err, err
    assert "2. Run it again: torch-setup install" in err, err
    as_json = subprocess.run([sys.executable, "-m", "app.cli", *args, "--json"], cwd=repo, capture_output=True,
                             text=True, encoding="utf-8", timeout=600, stdin=subprocess.DEVNULL)
    d = json.loads(as_json.stdout)
    assert d["code"] == "http-403" and [a["kind"] for a in d["actions"]] == ["switch_source", "retry"]
    assert not env.exists()


def test_every_entry_cites_where_its_output_was_seen():
    repo = Path(__file__).resolve().parents[1]
    for e in CATALOGUE:
        assert re.search(r"[\w.-]+/[\w.-]+#\d+|tests/fixtures/", e.source), e.code
        for p in re.findall(r"tests/fixtures/\S+?\.txt", e.source):
            assert (repo / p).is_file(), (e.code, p)
