"""Named machine scenarios (tests/scenarios/*.toml): each gives a machine (a SystemReport, or
GPUs read by the detection parsers from a real tool output in tests/fixtures), optional user
choices, the expected backend / variant / torch release, and the fact that decides it."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from app.core.base.errors import BadInput
from app.core.compat.data import load_compat
from app.core.detection.system import SystemReport
from app.core.recommend import Choices, recommend, valid_choices

HERE = Path(__file__).resolve().parent
SCENARIOS = sorted((HERE / "scenarios").glob("*.toml"))
FIXTURES = HERE / "fixtures"


def _load(path: Path) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def _fixture_gpus(kind: str, file: str) -> list[dict]:
    """GPUs as the real detection parsers read them from a recorded tool output."""
    text = (FIXTURES / file).read_text(encoding="utf-8")
    if kind == "nvidia-smi":
        from app.core.detection.nvidia import cc_from_name, parse_smi_header, parse_smi_table

        header = parse_smi_header(text)
        return [{"vendor": "nvidia", "name": r["name"], "index": r["index"],
                 "driver_version": header.get("driver_version"), "compute_capability": cc_from_name(r["name"])}
                for r in parse_smi_table(text)]
    if kind == "nvidia-smi-query":
        from app.core.detection.nvidia import parse_query_csv

        return [{"vendor": "nvidia", "name": r["name"], "index": r["index"], "driver_version": r["driver_version"],
                 "compute_capability": r["compute_cap"]} for r in parse_query_csv(text)]
    if kind == "rocminfo":
        from app.core.detection.amd import amd_is_integrated, parse_rocminfo

        return [{"vendor": "amd", "name": r.get("name") or "", "index": i, "gfx_target": r.get("gfx"),
                 "integrated": amd_is_integrated(r.get("gfx"), r.get("name"))}
                for i, r in enumerate(parse_rocminfo(text))]
    if kind in ("lspci", "windows-videocontroller"):  # detection's PCI / Windows path, merged as detect does
        from app.core.detection.merge import merge_gpus
        from app.core.detection.pci import parse_lspci
        from app.core.detection.windows import adapter_gpu, parse_video_controllers

        if kind == "lspci":
            gpus = merge_gpus([], parse_lspci(text))
        else:
            found = [adapter_gpu(it, n) for n, it in enumerate(parse_video_controllers(text))]
            gpus = merge_gpus([(g, None) for g in found if g is not None])
        return [{k: v for k, v in g.__dict__.items() if v is not None} for g in gpus]
    raise AssertionError(f"unknown fixture kind {kind}")


def test_at_least_40_named_scenarios():
    assert len(SCENARIOS) >= 40
    fixture_based = [p for p in SCENARIOS if "fixture" in _load(p)]
    assert len(fixture_based) >= 10


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path: Path):
    sc = _load(path)
    assert sc.get("name") and sc.get("decides"), f"{path.name}: every scenario names the fact that decides it"
    report_dict = dict(sc["report"])
    if "fixture" in sc:
        gpus = _fixture_gpus(sc["fixture"]["kind"], sc["fixture"]["file"])
        assert gpus, f"{sc['fixture']['file']}: the parser found no GPU"
        report_dict["gpus"] = list(report_dict.get("gpus", [])) + gpus
    report = SystemReport.from_dict(report_dict)
    choices = Choices(**sc.get("choices", {}))
    exp = sc["expect"]
    data = load_compat()
    if "error" in exp:
        with pytest.raises(BadInput) as info:
            recommend(report, data, choices)
        assert exp["error"] in info.value.text()
        return
    rec = recommend(report, data, choices)
    got = (rec.backend, rec.variant, rec.torch_version)
    assert got == (exp["backend"], exp["variant"], exp["torch"]), \
        f"{sc['name']}: expected {exp['backend']}/{exp['variant']}/{exp['torch']} because {sc['decides']}; " \
        f"got {got}\n" + "\n".join(rec.texts().reasons)
    if "python_ok" in exp:
        assert rec.python_ok is exp["python_ok"]
    if "env_python" in exp:
        assert rec.env_python == exp["env_python"]
    if "env_vars" in exp:
        assert rec.env_vars == exp["env_vars"]
    else:
        assert "HSA_OVERRIDE_GFX_VERSION" not in rec.env_vars
    if "driver_upgrade" in exp:
        assert rec.driver_upgrade and rec.driver_upgrade.driver == exp["driver_upgrade"], rec.driver_upgrade
    if "served" in exp:
        assert len(rec.served_gpus) == exp["served"]
    if "reason" in exp:
        assert any(exp["reason"] in r for r in rec.texts().reasons), rec.texts().reasons
    if "warning" in exp:
        assert any(exp["warning"] in w for w in rec.texts().warnings), rec.texts().warnings
    if "package" in exp:
        assert exp["package"] in rec.packages and exp["package"] in rec.command
    words = rec.texts()
    said = list(words.reasons) + list(words.warnings)
    for fragment in exp.get("reasons", []):
        assert any(fragment in r for r in words.reasons), (fragment, words.reasons)
    for fragment in exp.get("warnings", []):
        assert any(fragment in w for w in words.warnings), (fragment, words.warnings)
    for fragment in exp.get("absent", []):  # what must never be said (e.g. advice past a driver ceiling)
        assert not any(fragment in t for t in said), (fragment, said)
    if exp.get("no_driver_upgrade"):
        assert rec.driver_upgrade is None, rec.driver_upgrade
    if "command" in exp:
        assert exp["command"] in " ".join(rec.command), rec.command
    if "facts_assumed" in exp:
        assert rec.facts_assumed is exp["facts_assumed"]
        assert any("assumed" in r for r in words.reasons) is exp["facts_assumed"], words.reasons
    if "vendor_name" in exp:
        assert any(f"({exp['vendor_name']})" in r for r in words.reasons), words.reasons
    # every answer is self-consistent
    # the torch pin names the exact build: the PyTorch index's local tag on Linux and Windows,
    # so that another index or a wheel folder can never swap in a different build
    tagged = (rec.index_url.startswith("https://download.pytorch.org/")
              and rec.platform.startswith(("linux-", "windows-")))
    assert rec.command[:2] == ("pip", "install")
    if rec.variant.endswith("-amd"):
        # AMD's own index: torch with the GPUs' device extras (plain torch there is host-only), the
        # index beside the default one (it answers 403 for torch's other dependencies), no uv form
        extras = ",".join(sorted({f"device-{g.gfx_target}" for g in rec.served_gpus}))
        assert rec.command[2].startswith(f"torch[{extras}]==") and rec.command[2] in rec.packages
        assert rec.command[-2:] == ("--extra-index-url", rec.index_url) and "--index-url" not in rec.command
        assert "uv" not in rec.commands
    else:
        pin = f"torch=={rec.torch_version}" + (f"+{rec.index_url.rstrip('/').rsplit('/', 1)[-1]}" if tagged else "")
        assert pin in rec.command and pin in rec.packages
        assert rec.command.count("--index-url") <= 1 and "--extra-index-url" not in rec.command
    if rec.index_url.startswith("https://download.pytorch.org/"):
        assert rec.command[-2:] == ("--index-url", rec.index_url)
        assert rec.index_url.endswith("/" + rec.variant)
    assert rec.compat_data_version == data.version
    assert any(data.version in r for r in rec.texts().reasons)
    # the GUI's Change… dialog offers the chosen build as valid
    options = valid_choices(report, data, choices).to_dict()["options"]
    if not choices.torch or rec.torch_version == rec.choices.torch:
        assert {"backend": rec.backend, "variant": rec.variant, "torch_version": rec.torch_version, "valid": True,
                "why": ""} in options
