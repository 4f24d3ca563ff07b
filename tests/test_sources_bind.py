"""The session binds the engine to the wheel folders when no index can be reached (issue 13):
``Session.fit_sources`` (the wizard's Environment page, ``install --find-links``, an answer
file's ``find_links``) gives the engine the folders' files as the only builds there are, so a
ticked companion pairs with a torch the folders hold, instead of a build nothing can install.

The folders hold files by name only (what the engine reads); the PyTorch server is a
127.0.0.1 port that refuses, or a real 127.0.0.1 index (tests/netlab) that lists the pair."""
from __future__ import annotations

import platform
import sys
from pathlib import Path

import pytest

from app.core.base.text import render
from app.core.detection.system import SystemReport
from app.core.install import InstallRequest
from app.core.pipeline.session import Observer, RunOptions, Session
from app.core.recommend import Choices
from app.core.sources.settings import SourceSettings

# the folders' wheels fit the machine that runs the tests (what the availability judges), and what
# their names mean is PyPI's on Linux x86-64 (a plain torch-2.14.1 is the CUDA 13.0 build there, the
# CPU build on Windows): tests/gui/test_win_wheel_folder.py has Windows's folders
pytestmark = pytest.mark.skipif(not (sys.platform == "linux" and platform.machine() == "x86_64"),
                                reason="Linux x86-64 wheel folders (PyPI's builds as named there)")

CPU_BOX = {"os": {"family": "linux", "glibc": "2.36"}, "arch": "x86_64", "python": {"version": "3.11.7"},
           "gpus": []}
LINUX = "cp311-cp311-manylinux_2_28_x86_64"
PAIR = (f"torch-2.13.0+cpu-{LINUX}.whl",  # the CPU-only torch, without its torchvision
        f"torch-2.14.1-{LINUX}.whl",  # PyPI's standard build (CUDA 13.0 on Linux x86-64)
        f"torchvision-0.29.1-{LINUX}.whl", f"torchvision-0.28.0-{LINUX}.whl")  # PyPI's: CUDA 13.0 builds


def _folder(tmp_path: Path, names=PAIR) -> Path:
    d = tmp_path / "wheels"
    d.mkdir(exist_ok=True)
    for n in names:
        (d / n).write_bytes(b"")
    return d


def _session(*packages: str) -> Session:
    s = Session(source="cli")
    s.use_system(SystemReport.from_dict(CPU_BOX))
    s.choose(Choices(packages=packages) if packages else None)
    s.recommend()
    return s


@pytest.fixture
def refused(monkeypatch, unreachable):
    """The PyTorch server replaced by a 127.0.0.1 port that refuses connections."""
    monkeypatch.setenv("TORCH_SETUP_TORCH_INDEX", unreachable.refused_url.replace("/simple/", "/whl/"))
    return unreachable


def test_no_index_reachable_binds_to_the_folders_and_the_companion_pairs_with_their_torch(tmp_path, refused):
    folder = _folder(tmp_path)
    s = _session("torchvision")
    before = s.recommendation
    assert before.packages == ("torch==2.14.1+cpu", "torchvision==0.29.1+cpu")  # what no folder holds
    rec = s.fit_sources(InstallRequest(env_path=tmp_path / "env", sources=SourceSettings(find_links=(str(folder),))))
    assert rec is s.recommendation and rec is not before
    assert (rec.backend, rec.variant, rec.torch_version) == ("cpu", "cu130", "2.14.1")
    assert rec.packages == ("torch==2.14.1", "torchvision==0.29.1") and rec.no_index
    assert rec.find_links == (str(folder),)
    assert s.bound_folders == (str(folder),) and s.available is not None and s.available.only
    why = render(rec.availability)  # the recommendation says why: the plan, the pages and the report show it
    assert why.startswith("torch 2.14.1, from the wheels in your folders alone, because the PyTorch server "
                          "cannot be reached (") and "refuses connections" in why
    assert "因为无法连接" in render(rec.availability, "zh_CN")
    # the same folders again: the binding stands, the recommendation is not made anew
    assert s.fit_sources(InstallRequest(env_path=tmp_path / "env", sources=SourceSettings(find_links=(str(folder),)))) is rec
    # the plan installs the pair from the folders alone
    planned = s.check_plan(InstallRequest(env_path=tmp_path / "env", sources=SourceSettings(find_links=(str(folder),))))
    assert planned.plan.index.offline and planned.plan.index.find_links == (str(folder),)
    assert "torchvision==0.29.1" in planned.plan.packages
    assert any(render(n).startswith("Why torch 2.14.1: torch 2.14.1, from the wheels in your folders alone") for n in planned.plan.notes)


def test_other_folders_undo_the_binding(tmp_path, refused):
    folder = _folder(tmp_path)
    s = _session("torchvision")
    s.fit_sources(InstallRequest(env_path=tmp_path / "env", sources=SourceSettings(find_links=(str(folder),))))
    assert s.bound_folders is not None
    rec = s.fit_sources(InstallRequest(env_path=tmp_path / "env"))  # the folder field emptied
    assert s.bound_folders is None and s.available is None and not rec.availability
    assert rec is s.recommendation and rec.packages == ("torch==2.14.1+cpu", "torchvision==0.29.1+cpu")
    assert not rec.no_index


def test_a_folder_without_the_pair_says_which_wish_to_drop(tmp_path, refused):
    from app.core.recommend.types import NoCombination

    folder = _folder(tmp_path, (f"torch-2.13.0+cpu-{LINUX}.whl",))
    s = _session("torchvision")
    with pytest.raises(NoCombination) as caught:
        s.fit_sources(InstallRequest(env_path=tmp_path / "env", sources=SourceSettings(find_links=(str(folder),))))
    err = caught.value
    assert "your sources hold no torchvision" in render(err.message)
    hint = str(err.hint)  # the command line's words
    assert hint.count("gives torch 2.13.0") == 1, hint  # one way out, not the same one twice
    assert s.recommendation is None and s.bound_folders == (str(folder),)
    with pytest.raises(NoCombination):  # checked again (the page re-plans): the same reason, not "nothing to install"
        s.fit_sources(InstallRequest(env_path=tmp_path / "env", sources=SourceSettings(find_links=(str(folder),))))


def test_folders_that_hold_the_whole_recommendation_need_no_network(tmp_path, index_server, tiny_wheels,
                                                                    monkeypatch):
    srv = index_server(sorted(tiny_wheels.glob("*.whl")))
    monkeypatch.setenv("TORCH_SETUP_TORCH_INDEX", srv.origin + "/whl/")
    folder = _folder(tmp_path, (f"torch-2.14.1+cpu-{LINUX}.whl", f"torchvision-0.29.1+cpu-{LINUX}.whl"))
    s = _session("torchvision")
    before = s.recommendation
    assert s.fit_sources(InstallRequest(env_path=tmp_path / "env", sources=SourceSettings(find_links=(str(folder),)))) is before
    assert s.bound_folders is None and len(srv.log) == 0


def test_a_reachable_index_that_lists_the_pair_keeps_the_recommendation(tmp_path, index_server, tiny_wheels,
                                                                        monkeypatch):
    from tests.netlab import FakeRelease

    srv = index_server(sorted(tiny_wheels.glob("*.whl")), fake=[FakeRelease("torch", "2.14.1", ("cpu",)),
                                                               FakeRelease("torchvision", "0.29.1", ("cpu",))])
    monkeypatch.setenv("TORCH_SETUP_TORCH_INDEX", srv.origin + "/whl/")
    folder = _folder(tmp_path, (f"torch-2.14.1+cpu-{LINUX}.whl",))  # torch here, its torchvision on the index
    s = _session("torchvision")
    before = s.recommendation
    assert s.fit_sources(InstallRequest(env_path=tmp_path / "env", sources=SourceSettings(find_links=(str(folder),)))) is before
    assert s.bound_folders is None and s.available is None
    assert [r.path for r in srv.log.all()] == ["/whl/cpu/torchvision/"]  # only what the folder lacks


def test_folders_without_torch_are_not_bound(tmp_path, refused, tiny_wheels):
    s = _session()
    s.fit_sources(InstallRequest(env_path=tmp_path / "env", sources=SourceSettings(find_links=(str(tiny_wheels),))))
    assert s.bound_folders is None and s.available is None


class _StopAtPlan(Observer):
    class Stop(Exception):
        pass

    def planned(self, planned) -> None:
        self.plan = planned.plan
        raise self.Stop


def test_an_answer_file_run_with_a_companion_binds_the_same_way(tmp_path, refused):
    """run_all (install --config, install --find-links) fits the sources as the wizard does."""
    folder = _folder(tmp_path)
    s = Session(source="unattended")
    obs = _StopAtPlan()
    s.detect = lambda target=None: s.use_system(SystemReport.from_dict(CPU_BOX))  # this CPU box, as a report
    with pytest.raises(_StopAtPlan.Stop):
        s.run_all(InstallRequest(env_path=tmp_path / "env", sources=SourceSettings(find_links=(str(folder),))),
                  choices=Choices(packages=("torchvision",)), options=RunOptions(verify=False), observer=obs)
    assert obs.plan.index.offline and "torchvision==0.29.1" in obs.plan.packages
    assert s.bound_folders == (str(folder),)
    notes = [render(n) for n in obs.plan.notes]  # what the console prints under the plan
    assert any("from the wheels in your folders alone, because the PyTorch server cannot be reached" in n
               for n in notes), notes


def test_a_bound_recommendation_does_not_warn_that_the_sources_lack_it(tmp_path, refused):
    """The folders' files decided the build: the index check of the user's sources (which reads
    local labels, and PyPI's files have none) must not add "your sources hold neither …"."""
    folder = _folder(tmp_path)
    s = _session("torchvision")
    rec = s.fit_sources(InstallRequest(env_path=tmp_path / "env", sources=SourceSettings(find_links=(str(folder),))))
    assert "rec.not_on_offer" not in rec.warning_codes and not rec.warnings, [render(w) for w in rec.warnings]


def test_without_a_companion_the_newest_build_on_offer_is_enough(tmp_path, refused):
    """No wish, the folder holds torch 2.13.0+cpu, no index: the recommendation over what the
    sources offer already installs from the folder, with its reason; nothing is bound."""
    folder = _folder(tmp_path, (f"torch-2.13.0+cpu-{LINUX}.whl",))
    s = _session()
    rec = s.fit_sources(InstallRequest(env_path=tmp_path / "env", sources=SourceSettings(find_links=(str(folder),))))
    assert rec.packages == ("torch==2.13.0+cpu",) and s.bound_folders is None
    assert "the newest build available in your folder" in render(rec.availability)


def test_each_index_page_is_read_once_while_the_sources_are_fitted(tmp_path, index_server, tiny_wheels,
                                                                    monkeypatch):
    """The folder lacks the recommended build, so the index is asked; the recommendation made
    anew over the sources (and an answer file's run, which recommends first) reuses that answer."""
    srv = index_server(sorted(tiny_wheels.glob("*.whl")))  # lists no torch at all
    monkeypatch.setenv("TORCH_SETUP_TORCH_INDEX", srv.origin + "/whl/")
    folder = _folder(tmp_path, (f"torch-2.13.0+cpu-{LINUX}.whl",))
    s = _session()
    rec = s.fit_sources(InstallRequest(env_path=tmp_path / "env", sources=SourceSettings(find_links=(str(folder),))))
    assert rec.packages == ("torch==2.13.0+cpu",)
    assert [r.path for r in srv.log.all()].count("/whl/cpu/torch/") == 1, [r.path for r in srv.log.all()]
    before = len(srv.log.all())
    obs = _StopAtPlan()
    run = Session(source="unattended")
    run.detect = lambda target=None: run.use_system(SystemReport.from_dict(CPU_BOX))
    with pytest.raises(_StopAtPlan.Stop):
        run.run_all(InstallRequest(env_path=tmp_path / "env", sources=SourceSettings(find_links=(str(folder),))),
                    options=RunOptions(verify=False), observer=obs)
    assert [r.path for r in srv.log.all()[before:]].count("/whl/cpu/torch/") == 1
