"""Windows folders are folders: ``C:\\wheels``, ``D:\\bundle``, ``\\\\server\\share\\wheels`` and
``file:///C:/wheels`` are accepted wherever a wheel folder or a bundle is (app.core.base.locations).

Before, ``urlsplit("C:\\\\wh").scheme == "c"`` made the pre-flight refuse every absolute Windows
path ("unsupported URL scheme 'c'") and ``file:///C:/wh`` became ``\\C:\\wh``. The rule's cases
are pure string work, tested for both OSes on either; the installs run the real CLI with uv on
a folder of small wheels (on the Windows lane: C:\\ paths, the folder dialog's ``C:/`` form and
``Path.as_uri()``; on Linux the same forms of a POSIX folder).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest

from app.core.base.text import render
from app.core.env.backends import env_python
from app.core.net.indexes import check_url
from app.core.pipeline.answers import parse_answers
from app.core.sources import SourceSettings
from tests.netlab import build_wheel
from tests.test_bundle_closed import make_bundle

REPO = Path(__file__).resolve().parents[1]
WINDOWS = os.name == "nt"


def _loc():  # imported in each test: the behaviour tests below also run against a checkout without it
    from app.core.base import locations

    return locations

# ------------------------------------------------------------------ the rule (pure, both OSes)

LOCAL = ["C:\\wheels", "c:/Users/Jane Doe/wheels", "D:\\bundle", "C:wheels", "C:", "\\\\server\\share\\wheels",
         "//server/share/wheels", "\\\\?\\C:\\wheels", "\\wheels", "./wheels", "wheels", "/srv/wheels",
         "wheels:old", "~/wheels", "C:\\Users\\张伟\\轮子"]
URLS = ["https://download.pytorch.org/whl/cpu", "http://127.0.0.1:8080/simple", "HTTPS://MIRROR.EXAMPLE/simple",
        "ftp://host/wheels", "htps://typo.example/simple", "http:relative"]


@pytest.mark.parametrize("windows", [True, False])
@pytest.mark.parametrize("location", LOCAL)
def test_a_path_is_local_on_either_os_and_passes_unchanged(location, windows):
    assert _loc().url_scheme(location) == ""
    assert _loc().local_path(location, windows=windows) == location


@pytest.mark.parametrize("windows", [True, False])
@pytest.mark.parametrize("location", URLS)
def test_a_url_is_no_local_path(location, windows):
    assert _loc().local_path(location, windows=windows) is None
    assert _loc().url_scheme(location) == location.split(":", 1)[0].lower()


@pytest.mark.parametrize(("url", "windows_path"), [
    ("file:///C:/wheels", "C:\\wheels"),
    ("file:///c:/Users/Jane%20Doe/wheels/", "C:\\Users\\Jane Doe\\wheels\\"),
    ("file:///C:/Users/%E5%BC%A0%E4%BC%9F/wh", "C:\\Users\\张伟\\wh"),
    ("file:///C|/old/form", "C:\\old\\form"),
    ("file:/D:/bundle", "D:\\bundle"),
    ("FILE:///D:/bundle", "D:\\bundle"),
    ("file://localhost/C:/wheels", "C:\\wheels"),
    ("file://server/share/wheels", "\\\\server\\share\\wheels"),
    ("file:////server/share/wheels", "\\\\server\\share\\wheels"),
])
def test_a_file_url_names_its_windows_folder(url, windows_path):
    assert _loc().url_scheme(url) == "file"
    assert _loc().local_path(url, windows=True) == windows_path
    assert not _loc().is_url(url)


@pytest.mark.parametrize(("url", "posix_path"), [
    ("file:///srv/wheels", "/srv/wheels"),
    ("file:///srv/my%20wheels/%E8%BD%AE", "/srv/my wheels/轮"),
    ("file://localhost/srv/wheels", "/srv/wheels"),
])
def test_a_file_url_names_its_posix_folder(url, posix_path):
    assert _loc().local_path(url, windows=False) == posix_path


@pytest.mark.parametrize("path", ["C:\\Users\\张伟\\my wheels", "D:\\", "\\\\server\\share\\wheels dir\\x"])
def test_what_path_as_uri_writes_for_windows_comes_back(path):
    assert _loc().file_url_path(PureWindowsPath(path).as_uri(), windows=True) == path


def test_what_path_as_uri_writes_for_posix_comes_back():
    path = "/srv/张伟/my wheels"
    assert _loc().file_url_path(PurePosixPath(path).as_uri(), windows=False) == path


@pytest.mark.skipif(not WINDOWS, reason="urllib's Windows conversion is only there on Windows")
@pytest.mark.parametrize("url", ["file:///C:/wheels", "file:///c:/Users/Jane%20Doe/w", "file://server/share/w",
                                 "file:///C:/Users/%E5%BC%A0/wh"])
def test_the_conversion_is_urllibs_on_windows(url):
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    expected = urllib.request.url2pathname(("//" + parts.netloc if parts.netloc else "") + parts.path)
    assert _loc().local_path(url) == expected


# ------------------------------------------------------------------ the core takes them (this OS)

def _forms(folder: Path) -> list[str]:
    """The ways a user gives this absolute folder: as the OS writes it, as the folder dialog
    (Qt) gives it on Windows, and as a file URL."""
    forms = [str(folder), folder.as_uri()]
    if WINDOWS:
        forms.append(str(folder).replace("\\", "/"))
    return forms


def test_the_preflight_finds_an_absolute_folder_in_every_form(tmp_path):
    folder = tmp_path / "wheels 张伟"
    folder.mkdir()
    for form in _forms(folder):
        assert check_url(form) is None, (form, render(check_url(form) or ""))
    assert Path(_loc().local_path(folder.as_uri()) or "") == folder
    assert _loc().folder_path(folder.as_uri()) == folder


@pytest.mark.parametrize("missing", ["C:\\no-such-wheels-folder-4521", "D:\\no\\such\\bundle"])
def test_a_missing_windows_folder_is_missing_not_an_unknown_url_scheme(missing):
    why = render(check_url(missing) or "")
    assert why == f"{missing} does not exist", why


def test_the_wheel_folders_of_the_sources_are_local_paths(tmp_path):
    folder = tmp_path / "wh"
    folder.mkdir()
    build_wheel(folder, "netlab-demo", "1.0")
    settings = SourceSettings(find_links=(*_forms(folder), "https://mirror.example/wheels/"))
    assert [Path(f) for f in settings.folders] == [folder] * len(_forms(folder))


def test_an_answer_file_takes_windows_and_file_url_folders(tmp_path):
    wheels, bundle = tmp_path / "wh", tmp_path / "b"
    wheels.mkdir()
    bundle.mkdir()
    text = (f"[environment]\npath = 'env'\n[sources]\nfind_links = {json.dumps(_forms(wheels))}\n"
            f"bundle = {json.dumps(bundle.as_uri())}\n")
    a = parse_answers(text, base=tmp_path)
    assert list(a.sources.find_links) == [str(wheels)] * len(_forms(wheels))
    assert a.sources.bundle == bundle
    local_index = parse_answers(f"[environment]\npath = 'e'\n[sources]\nmirror = {json.dumps(str(wheels))}\n",
                                base=tmp_path)
    assert local_index.sources.default_index == str(wheels)


# ------------------------------------------------------------------ real installs through the CLI

def _cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, encoding="utf-8", errors="replace", timeout=600, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})


def _demo_version(env: Path) -> str:
    out = subprocess.run([str(env_python(env)), "-c", "import netlab_demo; print(netlab_demo.VERSION)"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.fixture(scope="module")
def demo_wheels(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("win paths") / "my wheels 轮子"
    build_wheel(folder, "netlab-demo", "1.1", requires=["netlab-dep"])
    build_wheel(folder, "netlab-dep", "0.5")
    return folder


@pytest.mark.slow
@pytest.mark.lane  # the installs the Windows lane must run: they were the bug
@pytest.mark.parametrize("form", ["native", "uri", "slashes"])
def test_install_from_an_absolute_wheel_folder(tmp_path, demo_wheels, form):
    if form == "slashes" and not WINDOWS:
        pytest.skip("the C:/ form of the folder dialog is Windows'")
    given = {"native": str(demo_wheels), "uri": demo_wheels.as_uri(),
             "slashes": str(demo_wheels).replace("\\", "/")}[form]
    env = tmp_path / "env"
    r = _cli("install", "--env", env, "--installer", "uv", "--packages", "netlab-demo", "--find-links", given,
             "--yes", "--no-verify")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _demo_version(env) == "1.1"


@pytest.mark.slow
@pytest.mark.lane  # the installs the Windows lane must run: they were the bug
@pytest.mark.parametrize("form", ["native", "uri"])
def test_install_from_an_absolute_bundle(tmp_path, demo_wheels, form):
    bundle = make_bundle(tmp_path / "bundle 包", sorted(demo_wheels.glob("*.whl")))
    given = str(bundle) if form == "native" else bundle.as_uri()
    env = tmp_path / "env"
    r = _cli("install", "--env", env, "--installer", "uv", "--from-bundle", given, "--yes", "--no-verify")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _demo_version(env) == "1.1"
