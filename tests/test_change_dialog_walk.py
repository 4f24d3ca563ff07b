"""Must show 2 (issue 13): every combination the "Change…" dialog lets a user select works.

The dialog's selectors cascade: "Runs on" (backend), then "Build" (its wheel index), then the
PyTorch version, the Python, and the companions (torchvision, torchaudio). Each selector offers
the entries :func:`app.core.recommend.options` marks valid under the wishes made so far. This
walks that tree on recorded machines (tests/scenarios, the GPU lists parsed from real tool
outputs in tests/fixtures among them): every selectable combination is asked of the engine,
and none may fail (``recommend()`` returns a Recommendation; no BadInput, no NoCombination).
The GUI test in tests/gui checks that the dialog offers exactly these entries.
"""
from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.compat.data import load_compat
from app.core.detection.system import SystemReport
from app.core.recommend import Choices, WheelFiles, options, recommend
from tests.test_recommend_scenarios import SCENARIOS, _fixture_gpus, _load

# A spread of recorded machines: no GPU, old and new NVIDIA cards and drivers (two from real
# nvidia-smi outputs), several GPUs, AMD (from rocminfo), Intel, Apple, Windows, Windows on
# Arm, an old Python, a Jetson.
MACHINES = ("no-gpu", "fx-1050ti-1060-535", "fx-h200-590", "gtx1080ti-driver580", "rtx5090-driver570",
            "fx-rx7900xtx-gfx1100", "arc-a770-linux", "m1-macos14", "intel-mac-py313", "windows-on-arm",
            "python39-interpreters", "jetson-orin", "fx-windows-1660ti-546")
COMPANION_SETS = ((), ("torchvision",), ("torchaudio",), ("torchvision", "torchaudio"))


def machine(name: str) -> SystemReport:
    path = next(p for p in SCENARIOS if p.stem == name)
    sc = _load(path)
    d = dict(sc["report"])
    if "fixture" in sc:
        d["gpus"] = list(d.get("gpus", [])) + _fixture_gpus(sc["fixture"]["kind"], sc["fixture"]["file"])
    return SystemReport.from_dict(d)


# long: the dialog's five nested selectors, walked in order
def walk(report: SystemReport, available: WheelFiles | None = None) -> tuple[int, list[str]]:
    """(combinations checked, failures) over the dialog's cascade."""
    data = load_compat()

    def offered(choices: Choices, selector: str) -> list[str | None]:
        opts = options(report, data, choices, available, selectors=(selector,))
        return [e.value for e in getattr(opts, selector) if e.valid]

    checked, failures = 0, []
    root = Choices()
    for backend in offered(root, "backends"):
        b = replace(root, backend=backend)
        for variant in offered(b, "variants") if backend else [None]:
            v = replace(b, variant=variant)
            for torch in offered(v, "torches"):
                t = replace(v, torch=torch)
                for python in offered(t, "pythons"):
                    p = replace(t, python=python)
                    for pkgs in COMPANION_SETS:
                        ch = replace(p, packages=pkgs or None)
                        if pkgs and not _companions_offered(report, data, p, pkgs, available):
                            continue
                        checked += 1
                        try:
                            recommend(report, data, ch, available)
                        except Exception as exc:  # any failure of a selectable combination
                            failures.append(f"{ch}: {exc!r}")
    return checked, failures


def _companions_offered(report, data, base: Choices, pkgs: tuple[str, ...], available=None) -> bool:
    """Can the user tick ``pkgs`` one after the other, each offered when it is ticked?"""
    ch = base
    for pkg in pkgs:
        opts = options(report, data, ch, available, selectors=("companions",))
        entry = next(e for e in opts.companions if e.value == pkg)
        if not entry.valid:
            return False
        ch = replace(ch, packages=(*(ch.packages or ()), pkg))
    return True


@pytest.mark.slow
@pytest.mark.parametrize("name", MACHINES)
def test_every_selectable_combination_works(name):
    started = time.monotonic()
    checked, failures = walk(machine(name))
    assert checked > 0
    assert not failures, f"{len(failures)} of {checked} selectable combinations fail:\n" + "\n".join(failures[:10])
    print(f"{name}: {checked} combinations in {time.monotonic() - started:.1f} s")


@pytest.mark.slow
def test_every_selectable_combination_works_with_a_wheel_folder(tmp_path):
    """The sources are a wish too: this machine's folder (torch 2.13.0+cpu, PyPI's torch 2.14.1 and
    torchvision 0.28.0 / 0.29.1), the standard build on the processor among the builds offered."""
    names = ["torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
             "torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl",
             *(f"torchvision-{v}-cp311-cp311-manylinux_2_28_x86_64.whl" for v in ("0.28.0", "0.29.0", "0.29.1"))]
    for n in names:
        (tmp_path / n).write_bytes(b"")
    checked, failures = walk(machine("no-gpu"), WheelFiles.from_folders([tmp_path]))
    assert checked > 10 and not failures, failures[:10]


def test_the_machines_are_recorded_ones():
    names = {p.stem for p in SCENARIOS}
    assert set(MACHINES) <= names
    fixture_based = [n for n in MACHINES if "fixture" in _load(next(p for p in SCENARIOS if p.stem == n))]
    assert len(fixture_based) >= 3, "machines read from real tool outputs are among them"
    assert Path(__file__).parent.joinpath("scenarios").is_dir()
