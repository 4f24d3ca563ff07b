"""Wishes are constraints (issue 13): every wish goes to the engine, which returns the newest
combination that satisfies them all with what each one cost, or says which wish to drop.

What the sources hold is one of the wishes: wheel folders are written here as files with real
wheel names (their contents are never read), so each case states exactly what a folder holds.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.base.errors import BadInput, render_hint
from app.core.base.text import render
from app.core.compat.data import load_compat
from app.core.detection.system import SystemReport
from app.core.recommend import Choices, NoCombination, WheelFiles, options, recommend

CPU_BOX = {"os": {"family": "linux", "glibc": "2.36"}, "arch": "x86_64", "python": {"version": "3.11.7"}, "gpus": []}
RTX = {"os": {"family": "linux", "glibc": "2.36"}, "arch": "x86_64", "python": {"version": "3.11.7"},
       "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "driver_version": "590.48.01",
                 "compute_capability": "8.9", "index": 0}]}
LINUX = "manylinux_2_28_x86_64"


def report(d=None) -> SystemReport:
    return SystemReport.from_dict(dict(d or CPU_BOX))


def folder(tmp_path: Path, *names: str, size: int = 1000) -> WheelFiles:
    """A wheel folder holding files of these names (sparse files of ``size`` bytes)."""
    d = tmp_path / "wheels"
    d.mkdir(exist_ok=True)
    for n in names:
        with open(d / n, "wb") as fh:
            fh.truncate(size)
    return WheelFiles.from_folders([d])


# ---------------------------------------------------------------- wishes without sources
def test_a_companion_costs_the_newest_release_and_says_so():
    rec = recommend(report(), None, Choices(packages=["torchvision"]))
    assert (rec.torch_version, rec.variant) == ("2.14.1", "cpu")
    assert "torchvision==0.29.1+cpu" in rec.packages
    assert rec.cost_codes == ("rec.cost_release",)
    cost = rec.texts("en").costs[0]
    assert cost.startswith("torchvision needs torch 2.14.1 or older") and "torch 2.15" in cost
    zh = rec.texts("zh_CN").costs[0]
    assert "torchvision" in zh and "2.14.1" in zh and "需要" in zh


def test_a_python_wish_costs_releases():
    rec = recommend(report(), None, Choices(python="3.9"))
    assert rec.torch_version == "2.8.0" and rec.pythons == ("3.9",)
    assert rec.cost_codes == ("rec.cost_release",)
    assert "Python 3.9 needs torch 2.8.0 or older" in rec.texts().costs[0]


def test_no_wish_costs_nothing():
    rec = recommend(report())
    assert rec.costs == () and rec.torch_version == "2.15.0"
    assert rec.pythons == ("3.11", "3.12", "3.13", "3.14", "3.15") and rec.python_range == ("3.11", "3.15")


def test_wishes_that_cannot_all_be_had_say_which_to_drop():
    with pytest.raises(NoCombination) as info:
        recommend(report(), None, Choices(torch="2.15", packages=["torchvision"]))
    err = info.value
    assert isinstance(err, BadInput)  # the CLI's exit code 2 and JSON "error": "BadInput" stay
    kinds = [d.kind for d in err.drops]
    assert kinds[0] == "torch" and "companion" in kinds and kinds[-1] == "all"
    assert [str(d.label) for d in err.drops[:2]] == ["Use torch 2.14.1", "Drop torchvision"]
    for d in err.drops:  # every way out works
        recommend(report(), None, d.choices)
    assert err.drops[0].choices == Choices(torch="2.14.1", packages=["torchvision"])
    d = err.to_dict()
    assert d["error"] == "BadInput" and d["drops"][0]["label"] == "Use torch 2.14.1"
    # the first way out is the remedy's action ("What to do: 1. Run: ... --torch 2.14.1"); the hint gives the
    # others, so no choice is offered twice (issue 25)
    (remedy,) = err.remedies
    assert str(remedy.explanation) == "The build that works here is torch 2.14.1 (CPU-only)."
    assert [a.value for a in remedy.actions] == ["2.14.1"]
    assert "--torch 2.14.1" not in render_hint(err.hint)
    assert "--torch 2.15 (gives torch 2.15.0 (CPU-only))" in render_hint(err.hint)
    assert "--packages" not in render_hint(err.hint).split(";")[0]  # dropping torchvision: no package list left
    assert "无法" in str(err.why.render("zh_CN")) or "没有" in err.why.render("zh_CN")


def test_a_python_nobody_supports_with_a_pin_offers_the_nearest_python():
    with pytest.raises(NoCombination) as info:
        recommend(report(), None, Choices(torch="2.15", python="3.9"))
    labels = [str(d.label) for d in info.value.drops]
    assert "Use Python 3.11" in labels  # the nearest Python torch 2.15 supports
    assert labels.index("Use Python 3.11") < labels.index("Use the recommendation")


def test_a_companion_version_is_a_constraint_on_the_release():
    rec = recommend(report(), None, Choices(packages=["torchvision==0.28.0"]))
    assert rec.torch_version == "2.13.0" and "torchvision==0.28.0+cpu" in rec.packages
    rec = recommend(report(), None, Choices(packages=["torchvision==0.27"]))
    assert rec.torch_release == "2.12" and "torchvision==0.27.*" in rec.packages
    with pytest.raises(NoCombination) as info:
        recommend(report(), None, Choices(torch="2.14", packages=["torchvision==0.28.0"]))
    assert "belongs to another torch release" in render(info.value.message)
    assert any(d.kind == "companion_pin" for d in info.value.drops)
    with pytest.raises(BadInput, match="pinned to match torch automatically"):
        recommend(report(), None, Choices(packages=["torchvision>=0.28"]))


# ---------------------------------------------------------------- what the sources hold
def test_a_folder_decides_the_newest_available(tmp_path):
    av = folder(tmp_path, f"torch-2.13.0+cpu-cp311-cp311-{LINUX}.whl")
    rec = recommend(report(), None, None, av)
    assert (rec.torch_version, rec.variant, rec.backend) == ("2.13.0", "cpu", "cpu")
    assert rec.no_index and rec.find_links == (str(tmp_path / "wheels"),) and rec.index_url == ""
    assert rec.command == ("pip", "install", "torch==2.13.0+cpu", "--no-index", "--find-links",
                           str(tmp_path / "wheels"))
    assert rec.pythons == ("3.11",)
    assert "rec.cost_sources_release" in rec.cost_codes
    assert "torch 2.15.0 is not in your sources" in rec.texts().costs[0]


def test_a_pypi_companion_never_pairs_with_a_cpu_torch(tmp_path):
    """torchvision from PyPI is the default (CUDA) build: with torch 2.13.0+cpu it does not load."""
    av = folder(tmp_path, f"torch-2.13.0+cpu-cp311-cp311-{LINUX}.whl", f"torchvision-0.28.0-cp311-cp311-{LINUX}.whl")
    with pytest.raises(NoCombination) as info:
        recommend(report(), None, Choices(packages=["torchvision"]), av)
    assert "torchvision 0.28" in render(info.value.message) and "CUDA 13.0 build" in render(info.value.message)
    # dropping the only wish IS the plain recommendation: one way out, not the same one twice
    assert [d.kind for d in info.value.drops] == ["companion"]
    assert recommend(report(), None, info.value.drops[0].choices, av).torch_version == "2.13.0"


def test_the_standard_build_runs_on_the_cpu_when_no_cpu_only_pair_is_held(tmp_path):
    """The lead's fact on this machine: the only torchvision here is PyPI's, so the working pair is
    PyPI's torch 2.14.1 (CUDA 13.0 build) + torchvision 0.29.1, run on the processor."""
    av = folder(tmp_path, f"torch-2.13.0+cpu-cp311-cp311-{LINUX}.whl", f"torchvision-0.28.0-cp311-cp311-{LINUX}.whl",
                f"torch-2.14.1-cp311-cp311-{LINUX}.whl", f"torchvision-0.29.1-cp311-cp311-{LINUX}.whl",
                f"nvidia_cublas-13.1.1.3-py3-none-{LINUX}.whl", size=500_000_000)
    rec = recommend(report(), None, Choices(packages=["torchvision"]), av)
    assert (rec.backend, rec.variant, rec.torch_version) == ("cpu", "cu130", "2.14.1")
    assert rec.packages == ("torch==2.14.1", "torchvision==0.29.1")  # PyPI's own files: no label
    assert "rec.cost_standard_build_with" in rec.cost_codes
    words = " ".join(rec.texts().costs)
    assert "standard build of torch 2.14.1 (1.5 GB, with CUDA 13.0 libraries it will not use here) with " \
           "torchvision 0.29.1 works on this computer" in words
    assert "the torchvision 0.28.0 in your sources is the CUDA 13.0 build" in words
    assert "rec.standard_on_cpu" in rec.reason_codes
    zh = " ".join(rec.texts("zh_CN").costs)
    assert "标准版" in zh and "torchvision 0.29.1" in zh
    # without the companion, the CPU-only build the folder holds wins over 1.5 GB of unused CUDA libraries
    assert recommend(report(), None, None, av).variant == "cpu"
    # the same folder on an NVIDIA machine: that file is the CUDA 13.0 build, and it serves the GPU
    gpu = recommend(report(RTX), None, Choices(packages=["torchvision"]), av)
    assert (gpu.backend, gpu.variant, gpu.torch_version) == ("cuda", "cu130", "2.14.1")


def test_the_python_follows_the_wheels_the_sources_hold(tmp_path):
    av = folder(tmp_path, f"torch-2.15.0+cpu-cp313-cp313-{LINUX}.whl")
    rec = recommend(report(), None, None, av)
    assert rec.env_python == "3.13" and rec.python_ok is False and rec.pythons == ("3.13",)
    assert "rec.python_not_held" in rec.reason_codes
    assert str(rec.python_problem("3.11.7")) == "your sources hold torch 2.15.0 only for Python 3.13"
    assert rec.python_problem("3.13.1") is None
    assert "supports Python 3.11–3.15" in str(rec.python_problem("3.9"))
    with pytest.raises(NoCombination, match=r"only for Python 3\.13"):
        recommend(report(), None, Choices(python="3.12"), av)


def test_python_problem_says_why_for_each_kind():
    rec = recommend(report())
    assert str(rec.python_problem("3.9.18")) == "torch 2.15.0 supports Python 3.11–3.15"
    assert rec.python_problem("3.12") is None
    chosen = recommend(report(), None, Choices(python="3.12"))
    assert str(chosen.python_problem("3.13")) == "you chose Python 3.12 for torch 2.15.0"
    assert "3.12" in chosen.python_problem("3.11").render("zh_CN")


def test_recommendation_json_round_trips_the_new_fields(tmp_path):
    av = folder(tmp_path, f"torch-2.13.0+cpu-cp311-cp311-{LINUX}.whl")
    rec = recommend(report(), None, Choices(packages=["numpy"]), av)
    d = json.loads(json.dumps(rec.to_dict()))
    back = type(rec).from_dict(d)
    assert (back.pythons, back.python_range, back.find_links, back.no_index) == (
        rec.pythons, rec.python_range, rec.find_links, rec.no_index)
    assert back.cost_codes == rec.cost_codes and back.texts().costs == rec.texts().costs


# ---------------------------------------------------------------- the dialog's selectors
def test_options_grey_what_the_current_wishes_exclude():
    plain = options(report())
    assert plain.recommendation is not None and plain.conflict is None and plain.nearest is None
    tv = next(e for e in plain.companions if e.value == "torchvision")
    assert tv.valid and str(tv.why) == "torch 2.14.1 (CPU-only)"  # ticking it works: the engine moves torch
    ticked = options(report(), None, Choices(packages=["torchvision"]))
    torch = {e.value: e for e in ticked.torches}
    assert torch[None].valid and not torch["2.15.0"].valid
    assert "no torchvision release matches torch 2.15" in str(torch["2.15.0"].why)
    assert torch["2.14.1"].valid
    pinned = options(report(), None, Choices(torch="2.15.0"))
    tv = next(e for e in pinned.companions if e.value == "torchvision")
    assert not tv.valid and "no torchvision release matches torch 2.15" in str(tv.why)


def test_options_offer_the_nearest_working_choice_for_a_failing_one():
    opts = options(report(), None, Choices(torch="2.15.0", packages=["torchvision"]))
    assert opts.recommendation is None and opts.conflict is not None
    assert opts.nearest == Choices(torch="2.14.1", packages=["torchvision"])
    assert recommend(report(), None, opts.nearest).torch_version == "2.14.1"


def test_options_list_the_standard_build_on_the_cpu_only_with_sources(tmp_path):
    av = folder(tmp_path, f"torch-2.14.1-cp311-cp311-{LINUX}.whl", f"torchvision-0.29.1-cp311-cp311-{LINUX}.whl")
    opts = options(report(), None, Choices(backend="cpu", packages=["torchvision"]), av)
    builds = {e.value: e for e in opts.variants}
    assert builds["cu130"].standard and builds["cu130"].valid
    assert not builds["cpu"].valid
    assert recommend(report(), None, Choices(backend="cpu", variant="cu130"), av).variant == "cu130"
    with pytest.raises(BadInput, match="is a cuda build"):  # without sources it is not a choice
        recommend(report(), None, Choices(backend="cpu", variant="cu130"))


def test_compat_data_names_the_pypi_build_of_2_14_by_its_wheel():
    rel = load_compat().release("2.14")
    assert rel is not None and rel.pypi_default["linux-x86_64"] == "cu130"
