"""Early downloads (issue 29, item 4) on the link laboratory: the recommended build's wheels come
while the wizard's pages are read; cancelled, they leave nothing but complete, hash-checked files;
the install that follows fetches none of them again; never beyond the disk's room, never when
turned off or on a connection that looks metered.

Real servers on 127.0.0.1 (the generated CUDA-like set at 1 %), real uv, the real install path;
a fake ``nmcli`` on PATH stands in for NetworkManager (the OS edge).
"""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from app.core.base.prefs import Prefs, load_prefs, save_prefs
from app.core.detection.metered import Metered, metered, parse_nmcli, parse_windows_cost
from app.core.detection.system import SystemReport
from app.core.install.early import Ahead, Prefetch, early_allowed
from app.core.proc.runner import CancelToken
from app.core.recommend import Choices, recommend
from app.core.sources import SourceSettings
from app.core.sources.download import Downloader, Wanted
from app.core.sources.pieces import HostSlots
from app.core.sources.settings import Source
from app.core.sources.wheelhouse import download_folder
from tests.helpers import fake_program
from tests.netlab import Link, file_sha256
from tests.netlab.clients import clean_env

PY = f"{sys.version_info[0]}.{sys.version_info[1]}"
CUDA_BOX = {"os": {"family": "linux", "glibc": "2.36"}, "arch": "x86_64", "python": {"version": f"{PY}.0"},
            "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "driver_version": "580.65",
                      "compute_capability": "8.9", "memory_mb": 24564}]}


@pytest.fixture
def lab(index_server, cuda_set, unreachable, monkeypatch, tmp_path):
    """The set on a slow link (about 2 MB/s over six connections: the 13 MB take seconds), the PyTorch
    server unreachable, a fresh home (an empty download folder), no settings of this machine."""
    seeds = sorted(Path("/opt/pypi/files").glob("pip-*.whl"))  # the new env is seeded from the index
    server = index_server([*cuda_set.files, *seeds], link=Link(per_conn_bps=350_000, latency_s=0.01))
    for k in [k for k in __import__("os").environ if k.startswith(("PIP_", "UV_"))]:
        monkeypatch.delenv(k)
    for k, v in clean_env(TORCH_SETUP_HOME=str(tmp_path / "home"), UV_CACHE_DIR=str(tmp_path / "uv"),
                          TORCH_SETUP_TORCH_INDEX=unreachable.refused_url.replace("/simple/", "/whl/")).items():
        monkeypatch.setenv(k, v)
    return server


def _ahead(server) -> Ahead:
    from app.core.env.backends import uv_bin

    assert uv_bin()
    rec = recommend(SystemReport.from_dict(CUDA_BOX), None, Choices(torch="2.13.0"))
    return Ahead(rec.packages, rec.index_url, PY,
                 SourceSettings(mirrors=(server.whl_url("cu132").replace("/cu132/", "/{variant}/"),)),
                 default_index=server.simple_url())


def _complete_checked(folder: Path, cuda_set) -> list[str]:
    """The files in the download folder, each checked: complete and of the right bytes."""
    real = {f.name: file_sha256(f) for f in cuda_set.files}
    names = []
    for f in folder.iterdir():
        assert not f.name.endswith(".part"), f"a partial file was left: {f.name}"
        sha, _, name = f.name.partition("-")
        assert file_sha256(f) == real[name] and real[name].startswith(sha), f"{f.name} is not the listed file"
        names.append(name)
    return names


def test_a_cancelled_early_download_leaves_only_complete_hash_checked_files(lab, cuda_set):
    from app.core.env.backends import uv_bin

    early = Prefetch(_ahead(lab), uv=uv_bin()).start()
    folder = download_folder()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(not f.name.endswith(".part") for f in folder.glob("*")):
        time.sleep(0.05)  # until the first file is complete (the others are still arriving)
    assert early.running and early.state == "downloading"
    early.cancel()
    assert early.wait(30) and early.state == "cancelled"
    kept = _complete_checked(folder, cuda_set)
    assert 1 <= len(kept) < len(cuda_set.files)  # what was complete stayed; the rest went


def test_the_install_fetches_nothing_that_came_early(lab, cuda_set, tmp_path):
    from app.core.env.backends import uv_bin
    from app.core.install import InstallRequest, install, plan, preflight

    early = Prefetch(_ahead(lab), uv=uv_bin()).start()
    assert early.wait(180) and early.state == "done", early.why
    assert sorted(_complete_checked(download_folder(), cuda_set)) == sorted(f.name for f in cuda_set.files)
    assert early.done_bytes == early.total_bytes == cuda_set.total_bytes
    lab.log.clear()
    ahead = early.ahead
    rec = recommend(SystemReport.from_dict(CUDA_BOX), None, Choices(torch="2.13.0"))
    p = plan(InstallRequest(tmp_path / "env", recommendation=rec, python=sys.executable,
                            sources=SourceSettings(mirrors=ahead.sources.mirrors, default_index=ahead.default_index)))
    result = install(p, checks=preflight(p))
    assert result.torch_version == "2.13.0+cu132"
    from app.core.sources.routing import PROBE_BYTES

    probe = f"bytes=0-{PROBE_BYTES - 1}"  # the pre-flight's timed range request of the torch wheel
    fetched = [r.path for r in lab.log.all() if r.method == "GET" and r.path.endswith(".whl")
               and "/pip-" not in r.path and r.header("Range") != probe]
    assert fetched == []
    assert all(d.cached for d in result.downloads)  # every wheel was found in the download folder


def test_no_more_is_fetched_than_the_disk_has_room_for(tmp_path, index_server, cuda_set):
    server = index_server(cuda_set.files)
    wanted = [Wanted(f.name, file_sha256(f), ((Source("s", "s", "mirror", server.origin), server.file_url(f.name)),))
              for f in cuda_set.files]
    room = cuda_set.torch.stat().st_size + 10  # the largest file fits, nothing beside it
    got = Downloader(_net(), tmp_path / "dl", lambda e: None, CancelToken(), slots=HostSlots(),
                     keep_partial=False).fetch_each(wanted, limit_bytes=room)
    assert isinstance(got[0], tuple) and all("no room" in str(g) for g in got[1:])
    assert [p.name for p in (tmp_path / "dl").iterdir()] == [got[0][0].name]


def _net():
    from app.core.net.client import Client

    return Client()


def test_early_downloads_are_a_setting_kept_in_the_configuration(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_SETUP_HOME", str(tmp_path))
    monkeypatch.delenv("TORCH_SETUP_EARLY_DOWNLOADS", raising=False)
    assert load_prefs() == Prefs(early_downloads=True)  # no file: on
    save_prefs(Prefs(early_downloads=False))
    assert load_prefs().early_downloads is False
    assert "early = false" in (tmp_path / "config" / "settings.toml").read_text(encoding="utf-8")
    (tmp_path / "config" / "settings.toml").write_text("[downloads]\nearly = 'maybe'\n", encoding="utf-8")
    assert load_prefs().early_downloads is True  # a value it cannot use: the default
    (tmp_path / "config" / "settings.toml").write_text("not toml [", encoding="utf-8")
    assert load_prefs().early_downloads is True
    monkeypatch.setenv("TORCH_SETUP_EARLY_DOWNLOADS", "0")
    assert load_prefs().early_downloads is False
    assert early_allowed(False, lambda: False)[0] is False
    ok, why = early_allowed(True, lambda: True)
    assert not ok and "metered" in str(why)
    assert early_allowed(True, lambda: None) == (True, "")


def test_a_metered_connection_is_read_from_network_manager(tmp_path, monkeypatch):
    if not sys.platform.startswith("linux"):
        pytest.skip("NetworkManager is Linux's")
    out = ("GENERAL.DEVICE:lo\nGENERAL.STATE:100 (connected (externally))\nGENERAL.METERED:no (guessed)\n"
           "GENERAL.DEVICE:wwan0\nGENERAL.STATE:100 (connected)\nGENERAL.METERED:yes (guessed)\n"
           "GENERAL.DEVICE:eth0\nGENERAL.STATE:20 (unavailable)\nGENERAL.METERED:no\n")
    fake_program(tmp_path, "nmcli", f"import sys\nsys.stdout.write({out!r})\n")
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    found = metered(fresh=True)
    assert found.value is True and "wwan0" in found.how
    assert parse_nmcli("GENERAL.DEVICE:eth0\nGENERAL.STATE:100 (connected)\nGENERAL.METERED:no\n").value is False
    assert parse_nmcli("GENERAL.DEVICE:eth0\nGENERAL.STATE:30 (disconnected)\nGENERAL.METERED:yes\n").value is None
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert metered(fresh=True) == Metered(None)  # no NetworkManager: not known, not metered


def test_the_windows_connection_cost_says_metered():
    assert parse_windows_cost("Unrestricted False False False").value is False
    assert parse_windows_cost("Fixed False False False").value is True
    assert parse_windows_cost("Unrestricted True False False").value is True  # roaming
    assert parse_windows_cost("").value is None


def test_each_wheel_that_goes_in_while_others_download_teaches_the_time_left(lab, cuda_set, tmp_path):
    """Issue 29, item 5: the wheels installed while the rest still download say so (an "installed" event
    under the download's own package name), so the Install page's time left learns what follows the
    last byte (the last wheel going in, the install step's check) instead of saying ~0 s there."""
    from app.core.base.events import ProgressEvent
    from app.core.base.progress_model import InstallProgress
    from app.core.install import InstallRequest, install, plan, preflight

    rec = recommend(SystemReport.from_dict(CUDA_BOX), None, Choices(torch="2.13.0"))
    ahead = _ahead(lab)
    p = plan(InstallRequest(tmp_path / "env", recommendation=rec, python=sys.executable,
                            sources=SourceSettings(mirrors=ahead.sources.mirrors, default_index=ahead.default_index)))
    events: list[ProgressEvent] = []
    model = InstallProgress()
    lock = threading.Lock()

    def on_event(e) -> None:
        if isinstance(e, ProgressEvent):
            with lock:
                events.append(e)
                model.feed(e)

    result = install(p, checks=preflight(p), on_event=on_event)
    assert result.torch_version == "2.13.0+cu132"
    downloaded = {e.package for e in events if e.unit == "bytes" and e.total_bytes and e.done_bytes >= e.total_bytes}
    went_in = [e for e in events if e.unit == "installed"]
    assert went_in, "no wheel was installed while the others downloaded"
    assert {e.package for e in went_in} <= downloaded  # the downloads' own names: the model pairs them
    assert [e.done_bytes for e in went_in] == sorted(e.done_bytes for e in went_in)  # a count that only grows
    assert all(e.total_bytes == went_in[0].total_bytes >= len(went_in) for e in went_in)
    assert model.tail() > 0  # learnt from this install's own wheels
