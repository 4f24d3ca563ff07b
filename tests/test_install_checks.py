"""The install core's seams, fast: each pre-flight check on real folders, the installer-output ->
hint table on recorded uv / pip output, the frozen request / plan / check values, phases as an
enum, the sizing and pip-configuration rules, the rollback guard, and the pre-flight in Chinese
(rendered by the presenter: the core has no language of its own)."""
from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path

import pytest

from app.core import install as core
from app.core.base.enums import Backend, Phase, PhaseState
from app.core.base.errors import BadInput
from app.core.base.events import PhaseEvent, WarningEvent
from app.core.base.text import Msg, render
from app.core.env.backends import backend_for
from app.core.install import checks, config, sizing, transaction
from app.core.install.request import Check, InstallPlan, InstallRequest, InstallResult
from app.core.recommend import Recommendation
from app.core.sources.settings import SourceSettings

FIX = Path(__file__).parent / "fixtures"
CJK = re.compile(r"[\u4e00-\u9fff]")


def _rec(**kw) -> Recommendation:
    base = dict(backend="cpu", variant="cpu", torch_version="2.13.0", python_ok=True, env_python=None,
                index_url="https://download.pytorch.org/whl/cpu", packages=["torch==2.13.0+cpu"],
                command=[], reasons=[], warnings=[], alternatives=[], compat_data_version="test")
    base.update(kw)
    return Recommendation(**base)


@pytest.fixture
def a_plan(tmp_path) -> InstallPlan:
    """A plan for a new uv venv at tmp_path/env with this Python, reading a local folder only."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    return core.plan(InstallRequest(tmp_path / "env", python=sys.executable, packages=["six"],
                                    sources=SourceSettings(find_links=[str(wheels)], default_index=str(wheels))))


# ------------------------------------------------------------------ the target folder

def test_target_new_folder_will_be_created(a_plan):
    c = checks.check_target(a_plan)
    assert c.ok and c.code == "preflight.target_ok" and str(a_plan.env_path) in render(c.message)


def test_target_empty_folder_is_fine_but_one_with_files_is_refused(a_plan):
    a_plan.env_path.mkdir()
    assert checks.check_target(a_plan).ok
    (a_plan.env_path / "notes.txt").write_text("mine", encoding="utf-8")
    c = checks.check_target(a_plan)
    assert c.blocking and c.code == "preflight.target_not_empty"
    assert render(c.message) == f"{a_plan.env_path} is a folder with files in it, and not a Python environment. " \
                                "Nothing was changed."
    assert "never writes into a folder" in render(c.hint)
    assert (a_plan.env_path / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_target_that_is_a_file_or_under_a_file_is_refused(a_plan, tmp_path):
    a_plan.env_path.write_text("x", encoding="utf-8")
    c = checks.check_target(a_plan)
    assert c.blocking and c.code == "preflight.target_not_folder"
    under_a_file = dataclasses.replace(a_plan, env_path=a_plan.env_path / "sub" / "env")
    c = checks.check_target(under_a_file)
    assert c.blocking and c.code == "preflight.parent_not_folder" and str(a_plan.env_path) in render(c.message)


def test_target_of_an_existing_env_is_checked_for_writing(a_plan, tmp_path):
    env = tmp_path / "old env"
    env.mkdir()
    existing = dataclasses.replace(a_plan, env_path=env, new_env=False,
                                   request=dataclasses.replace(a_plan.request, existing=True))
    c = checks.check_target(existing)
    assert c.ok and c.code == "preflight.env_existing" and "snapshot" in render(c.message)


# ------------------------------------------------------------------ disk, python, backend

def test_disk_check_compares_the_estimate_with_the_free_space(a_plan):
    c = checks.check_disk(a_plan)
    assert c.ok and c.code == "preflight.disk_ok" and "free at" in render(c.message)
    huge = dataclasses.replace(a_plan, estimate_mb=10**12)
    c = checks.check_disk(huge)
    assert c.blocking and c.code == "preflight.disk_short"
    assert render(c.message).startswith("Not enough disk space:") and "Nothing was changed" in render(c.message)
    assert render(c.hint).startswith("Free at least ")


def test_python_checks(a_plan):
    assert checks.check_python(a_plan).code == "preflight.python_ok"
    no_venv = dataclasses.replace(a_plan, backend=backend_for("venv", "pip"),
                                  python=dataclasses.replace(a_plan.python, can_venv=False))
    c = checks.check_python(no_venv)
    assert c.blocking and c.code == "preflight.python_no_venv" and "python3-venv" in render(c.hint)
    missing = dataclasses.replace(a_plan, python=None, python_request="3.99")
    c = checks.check_python(missing)  # uv may download one: a warning, not a refusal
    assert c.ok and c.severity == "warning" and c.code == "preflight.python_download" and "3.99" in render(c.message)
    pip_missing = dataclasses.replace(no_venv, python=None, python_request=None, python_notes=("x did not run",))
    c = checks.check_python(pip_missing)
    assert c.blocking and c.code == "preflight.python_missing_tried" and "x did not run" in render(c.message)


def test_backend_check_names_what_is_missing(a_plan):
    assert checks.check_backend(a_plan).code == "preflight.backend_ok"
    no_uv = dataclasses.replace(a_plan, backend=dataclasses.replace(a_plan.backend, uv=None))
    c = checks.check_backend(no_uv)
    assert c.blocking and c.code == "install.uv_missing" and "--installer pip" in render(c.hint)


# ------------------------------------------------------------------ reachability

def test_index_targets_and_reach_checks(a_plan, tmp_path):
    targets = checks.index_targets(a_plan)
    assert ("package index", a_plan.index.default_index) in targets
    assert ("find-links", str(tmp_path / "wheels")) in targets
    ok = checks.check_reach("find-links", str(tmp_path / "wheels"), None)
    assert ok.ok and ok.name == "reach:find-links" and ok.code == "preflight.folder_ok"
    assert render(ok.message) == f"The wheel folder {tmp_path / 'wheels'} is there"  # not "find-links … is reachable"
    assert checks.check_reach("package index", "https://pypi.org/simple", None).code == "preflight.reach_ok"
    bad = checks.check_reach("torch index", "http://127.0.0.1:9/whl/cpu", "Connection refused")
    assert bad.blocking and bad.code == "preflight.reach_failed" and bad.hint.code == "preflight.reach_torch_hint"
    assert render(bad.message) == "The torch index http://127.0.0.1:9/whl/cpu cannot be reached: Connection " \
                                  "refused. Nothing was changed."
    warn = checks.check_reach("torch index", "http://127.0.0.1:9/typo", None, "it answered HTTP 404")
    assert not warn.ok and not warn.blocking and warn.severity == "warning"
    folder = checks.check_reach("bundle", "/no/such/bundle", core.check_url("/no/such/bundle"))
    assert folder.hint.code == "preflight.reach_folder_hint" and "does not exist" in render(folder.message)


def test_secrets_in_index_urls_are_not_shown():
    c = checks.check_reach("torch index", "https://alice:s3cret@mirror.example/simple?token=abc", None)
    assert "s3cret" not in render(c.message) and "abc" not in render(c.message)


def test_preflight_returns_every_check_and_raise_for_checks_refuses_the_first_blocking(a_plan):
    a_plan.env_path.mkdir()
    (a_plan.env_path / "keep.txt").write_text("x", encoding="utf-8")
    found = core.preflight(a_plan)
    assert [c.name for c in found][:4] == ["backend", "python", "target", "disk"]
    assert {c.name for c in found} >= {"reach:package index", "reach:find-links"}
    with pytest.raises(BadInput) as err:
        core.raise_for_checks(found)
    assert err.value.text().startswith(f"{a_plan.env_path} is a folder with files in it")
    assert err.value.exit_code == 2


# installer output -> what happened and what to do: tests/test_remedies.py (the remedy catalogue
# runs over every uv/pip fail-* recording and tests/fixtures/failures/).


# ------------------------------------------------------------------ the values

def test_request_is_frozen_and_normalised(tmp_path):
    r = InstallRequest(tmp_path / "e", packages=["torch"],
                       sources=SourceSettings(extra_index_urls=["https://a.example/simple"], find_links=[tmp_path],
                                              bundle=str(tmp_path / "b")))
    assert r.packages == ("torch",) and r.sources.extra_index_urls == ("https://a.example/simple",)
    assert r.sources.find_links == (str(tmp_path),) and r.sources.bundle == tmp_path / "b"
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.packages = ("numpy",)  # type: ignore[misc]
    d = r.to_dict()
    assert d["recommendation"] is None and d["sources"]["find_links"] == [str(tmp_path)]
    rec = _rec()
    assert InstallRequest(tmp_path / "e", recommendation=rec).to_dict()["recommendation"]["variant"] == "cpu"


def test_plan_follows_the_recommendation_and_says_what_to_expect(tmp_path):
    p = core.plan(InstallRequest(tmp_path / "e", recommendation=_rec(backend="cuda", variant="cu126",
                                                                      packages=["torch==2.13.0+cu126"])))
    assert p.packages == ("torch==2.13.0+cu126",) and p.variant == "cu126"
    assert p.recommendation is not None and p.expected_accelerator == "cuda"
    assert p.index.torch_index == "https://download.pytorch.org/whl/cpu"  # the recommendation's
    assert p.estimate_mb >= sizing.INSTALLED_MB[Backend.CUDA]
    assert core.plan(InstallRequest(tmp_path / "e", recommendation=_rec())).expected_accelerator is None
    d = p.to_dict()
    assert d["packages"] == ["torch==2.13.0+cu126"] and isinstance(d["estimate_why"], str)
    assert "torch (cuda)" in d["estimate_why"]


def test_check_code_and_status():
    c = Check("target", False, "plain words", severity="warning")
    assert c.code == "preflight.target" and c.status == "warning" and not c.blocking
    m = Check("disk", False, core.check_url("/no/such/folder"))
    assert m.code == "preflight.path_missing" and m.status == "error" and m.blocking
    assert m.to_dict()["message"] == "/no/such/folder does not exist" and m.to_dict()["code"] == m.code


def test_result_json_has_english_warnings_and_their_codes(tmp_path):
    w = checks.check_python(dataclasses.replace(
        core.plan(InstallRequest(tmp_path / "e", packages=["six"], python=sys.executable)),
        python=None, python_request="3.99")).message
    res = InstallResult(env_path=tmp_path, python=tmp_path / "bin" / "python", torch_version=None,
                        log_path=None, duration_s=1.0, packages={}, warnings=(w,))
    d = json.loads(json.dumps(res.to_dict()))
    assert d["warning_codes"] == ["preflight.python_download"] and d["warnings"][0].startswith("No Python 3.99")


def test_phase_events_hold_phases():
    e = PhaseEvent("create-env", "start", "x")
    assert e.name is Phase.CREATE_ENV and e.state is PhaseState.START and e.name == "create-env"
    with pytest.raises(ValueError):
        PhaseEvent("create_env", "start")  # a name no presenter knows is refused at once
    assert isinstance(WarningEvent(core.check_url("/nope")).text, Msg)


def test_every_phase_has_a_cli_label():
    from app.commands._render import PHASE_LABELS

    assert set(PHASE_LABELS) == set(Phase)


def test_every_phase_has_an_install_page_label(qtbot):
    pytest.importorskip("PySide6")
    from app.gui.pages.install import InstallPage
    from app.gui.state import WizardState

    page = InstallPage(WizardState())
    qtbot.addWidget(page)
    labels = {p: page._phase_text(p) for p in Phase}
    assert all(labels.values()) and labels[Phase.CREATE_ENV] == "Creating the environment"


# ------------------------------------------------------------------ sizing, configuration, rollback

def test_estimates(tmp_path):
    env = core.plan(InstallRequest(tmp_path / "e", packages=["six"])).backend
    mb, why = sizing.estimate(["torch", "torchvision", "numpy"], env, Backend.CPU, ())
    assert mb == int((sizing.ENV_BASE_MB["uv"] + 900 + 30 + 10) * sizing.MARGIN)
    assert render(why) == "torch (cpu): ~0.9 GiB"
    wheels = tmp_path / "w"
    wheels.mkdir()
    (wheels / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"0" * 1_000_000)
    mb, why = sizing.estimate(["torch"], env, None, (str(wheels),))
    assert mb == int((sizing.ENV_BASE_MB["uv"] + 4) * sizing.MARGIN) and render(why) == "torch: about 4 times its wheel file"
    assert render(sizing.estimate(["six", "numpy"], env, None, ())[1]) == "2 package(s)"
    assert CJK.search(render(sizing.estimate(["six"], env, None, ())[1], "zh_CN"))
    assert sizing.fmt_mb(900) == "900 MiB" and sizing.fmt_mb(1536) == "1.5 GiB"


def test_pip_config_index(tmp_path, monkeypatch):
    cfg = tmp_path / "pip.conf"
    cfg.write_text("[global]\nindex-url = https://mirror.example/simple\n[install]\nindex-url = "
                   "https://install.example/simple extra\n", encoding="utf-8")
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(cfg))
    assert config.pip_config_index() == "https://install.example/simple"  # [install] over [global]
    assert config.default_index_for("pip") == "https://install.example/simple"
    assert config.default_index_for("pip", mirror="https://m.example/simple") == "https://m.example/simple"
    monkeypatch.setenv("PIP_INDEX_URL", "https://env.example/simple")
    assert config.pip_config_index() == "https://env.example/simple"
    monkeypatch.setenv("UV_DEFAULT_INDEX", "https://uv.example/simple")
    assert config.default_index_for("uv") == "https://uv.example/simple"
    cfg.write_bytes(b"\xff\xfe[broken")
    monkeypatch.delenv("PIP_INDEX_URL")
    assert config._index_in(cfg) is None  # an unreadable file is skipped, not an error


def test_rollback_removes_only_what_was_created(tmp_path):
    mine = tmp_path / "kept"
    mine.mkdir()
    guard = transaction.Rollback(mine / "new a" / "new b" / "env")
    (mine / "new a" / "new b" / "env" / "bin").mkdir(parents=True)
    assert guard.run() == []
    assert mine.is_dir() and list(mine.iterdir()) == []
    chosen = tmp_path / "chosen"  # an empty folder the user picked: emptied again, kept
    chosen.mkdir()
    guard = transaction.Rollback(chosen)
    (chosen / "lib").mkdir()
    (chosen / "pyvenv.cfg").write_text("", encoding="utf-8")
    assert guard.run() == [] and chosen.is_dir() and list(chosen.iterdir()) == []


def test_freeze_names_and_mixed_variants():
    names = transaction.freeze_names("# comment\nSix==1.16.0\nmy_pkg @ file:///x.whl\n\n")
    assert names == {"six": "Six==1.16.0", "my-pkg": "my_pkg @ file:///x.whl"}
    assert core.mixed_variants({"torch": "2.13.0+cpu", "torchvision": "0.28.0+cu126"}) == \
        "torch 2.13.0+cpu, torchvision 0.28.0+cu126"
    assert core.mixed_variants({"torch": "2.13.0+cu126", "torchvision": "0.28.0+cu126", "torchaudio": "2.13.0"}) == ""


def test_a_bundle_manifest_carries_the_recommendation(tmp_path):
    from app.core.install.bundle import BundleFile, Manifest

    m = Manifest(python_version="3.11", implementation="cp", abi="cp311", platforms=["manylinux_2_28_x86_64"],
                 packages=["torch"], files=[BundleFile("a-1-py3-none-any.whl", 1, "0" * 64, "a", "1",
                                                       ("py3-none-any",))],
                 created="2026-11-30T00:00:00Z", assistant_version="0", recommendation=_rec())
    again = Manifest.from_dict(json.loads(json.dumps(m.to_dict())))
    assert again == m and isinstance(again.recommendation, Recommendation) and again.platforms == m.platforms


# ------------------------------------------------------------------ Chinese (moved from test_core_i18n.py)

def test_preflight_in_chinese(tmp_path):
    blocker = tmp_path / "not-empty"
    blocker.mkdir()
    (blocker / "notes.txt").write_text("mine", encoding="utf-8")
    local = tmp_path / "wheels"
    local.mkdir()
    request = InstallRequest(env_path=blocker, installer="pip", packages=["torch==2.13.0"],
                             sources=SourceSettings(find_links=(str(local),), default_index=str(local)))
    found = {c.name: c for c in core.preflight(core.plan(request))}
    english = {n: c.to_dict("en") for n, c in found.items()}
    zh = {n: c.to_dict("zh_CN") for n, c in found.items()}
    assert zh.keys() == english.keys()
    assert [c["ok"] for c in zh.values()] == [c["ok"] for c in english.values()]
    target = zh["target"]
    assert not target["ok"] and str(blocker) in target["message"] and CJK.search(target["message"])
    assert CJK.search(target["hint"])
    assert english["target"]["message"].startswith(f"{blocker} is a folder with files in it")
    for c in zh.values():
        assert CJK.search(c["message"]), c
    assert "Python" in zh["python"]["message"]
    assert str(found["target"].message) == english["target"]["message"]  # English is the same as before


def test_environment_page_renders_the_checks_in_the_new_language(qtbot, tmp_path, local_wheels):
    pytest.importorskip("PySide6")
    from PySide6.QtWidgets import QWizard

    from app.core.detection.detect import detect
    from app.core.pipeline.session import Session
    from app.core.recommend import recommend
    from app.gui import i18n as gui_i18n
    from app.gui.pages.environment import EnvironmentPage
    from app.gui.state import WizardState

    gui_i18n.set_language("en")
    try:
        report = detect()
        state = WizardState(session=Session.resume(system=report, recommendation=recommend(report)))
        wiz = QWizard()
        page = EnvironmentPage(state)
        wiz.setPage(0, page)
        qtbot.addWidget(wiz)
        taken = tmp_path / "envs" / "taken"
        taken.mkdir(parents=True)
        (taken / "thesis.tex").write_text("do not delete", encoding="utf-8")
        page.initializePage()
        page.index_url.setText("https://pypi.org/simple")
        page.find_links.setText(str(local_wheels))
        with qtbot.waitSignal(page.preflight_done, timeout=30000):
            page.location.setText(str(tmp_path / "envs"))
            page.name.setText("taken")
        qtbot.waitUntil(lambda: not page.is_busy() and not page._debounce.isActive(), timeout=30000)
        errors = [m for _, s, m, _ in page.checks if s == "error"]
        assert errors and errors[0].startswith(f"{taken} is a folder with files in it")
        results = list(page.check_results)
        gui_i18n.set_language("zh_CN")  # LanguageChange -> retranslate(): the same checks, re-rendered
        assert page.check_results == results and not page.is_busy()  # no new run
        zh_errors = [(m, h) for _, s, m, h in page.checks if s == "error"]
        assert zh_errors and str(taken) in zh_errors[0][0]
        assert CJK.search(zh_errors[0][0]) and CJK.search(zh_errors[0][1])
        assert all(CJK.search(m) for _, _, m, _ in page.checks)
        from app.gui.widgets import StatusRow

        def shown() -> list[str]:  # what the checklist shows, once LanguageChange reached the page
            return [w.title_label.text() for w in page.findChildren(StatusRow) if w.parent() is not None]

        qtbot.waitUntil(lambda: any(str(taken) in t and CJK.search(t) for t in shown()), timeout=5000)
        gui_i18n.set_language("en")
        assert [m for _, s, m, _ in page.checks if s == "error"] == errors
        assert (taken / "thesis.tex").read_text(encoding="utf-8") == "do not delete"
    finally:
        gui_i18n.set_language("en")


def test_a_build_from_amds_index_is_installed_with_pip_as_the_recommendation_says(tmp_path):
    """Issue 26: "only pip installs it" is a field of the recommendation (AMD's index answers 403 for
    what it does not host: pip moves on, uv stops), no longer guessed from the commands it lists."""
    import tomllib

    from app.core.detection.system import SystemReport
    from app.core.recommend import recommend

    scenario = Path(__file__).resolve().parent / "scenarios" / "radeon-windows.toml"
    rec = recommend(SystemReport.from_dict(tomllib.loads(scenario.read_text(encoding="utf-8"))["report"]))
    assert rec.needs_pip and Recommendation.from_dict(rec.to_dict()).needs_pip
    assert core.plan(InstallRequest(tmp_path / "e", recommendation=rec)).installer == "pip"
    # the same build with the field off is left to uv, whatever commands it lists
    assert core.plan(InstallRequest(tmp_path / "e", recommendation=dataclasses.replace(rec, needs_pip=False))
                     ).installer == "uv"
