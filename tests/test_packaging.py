"""Packaging: the wheel carries resources and probes, the offline edition, the Linux tarball
and its per-user install, and (slow) the PyInstaller onedir itself with its --self-test."""
from __future__ import annotations

import configparser
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.helpers import scratch

# extraction refuses links and paths that leave the folder where Python has it (3.11.4+; Debian 12 has 3.11.2)
_DATA_ONLY: dict[str, str] = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "installer"))


def _tracked(prefix: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", prefix], cwd=REPO, capture_output=True, text=True, encoding="utf-8")
    files = [f for f in out.stdout.split() if f]
    if not files:  # not a git checkout: fall back to the tree
        files = [p.relative_to(REPO).as_posix() for p in (REPO / prefix).rglob("*") if p.is_file()]
    return files


@pytest.fixture(scope="module")
def project_wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    build_tmp = tmp_path_factory.mktemp("wheel-build")
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                          "-q", "-w", str(out), str(REPO)], capture_output=True, text=True, encoding="utf-8",
                         timeout=300, env={**os.environ, "TMPDIR": str(build_tmp)})
    assert res.returncode == 0, res.stderr
    return next(out.glob("torch_setup_assistant-*.whl"))


def test_wheel_carries_every_resource_and_probe(project_wheel):
    names = set(zipfile.ZipFile(project_wheel).namelist())
    data = next(n.split("/")[0] for n in names if n.endswith(".data/data/share/torch-setup-assistant/resources/answers.example.toml"))
    missing = [f for f in _tracked("resources")
               if f"{data}/data/share/torch-setup-assistant/{f}" not in names]
    assert not missing, f"resources not in the wheel (add them to [tool.setuptools.data-files]): {missing}"
    probes = [f for f in _tracked("app/probes") if f.endswith(".py")]
    assert probes and all(p in names for p in probes)


def test_installed_wheel_finds_its_resources(project_wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    res = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q",
                          str(project_wheel)], capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert res.returncode == 0, res.stderr
    out = subprocess.run([str(py), "-I", "-c", "from app.core.base import paths; print(paths.resources_dir()); "
                          "print(paths.probes_dir())"], capture_output=True, text=True, encoding="utf-8", timeout=60,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    res_dir, probes_dir = (Path(x) for x in out.stdout.split("\n")[:2])
    assert str(res_dir).startswith(str(venv)) and (res_dir / "answers.example.toml").is_file()
    assert (probes_dir / "verify.py").is_file()


# --------------------------------------------------------------------- offline edition

def _fake_app(folder: Path) -> Path:
    """An app folder shaped like the PyInstaller onedir (its executable answers --version)."""
    app = folder / "torch-setup"
    (app / "_internal").mkdir(parents=True)
    exe = app / "torch-setup"
    exe.write_text("#!/bin/sh\necho 'torch-setup 0.1.0'\n", encoding="utf-8")
    exe.chmod(0o755)
    return app


def _tiny_bundle(folder: Path, wheel: Path) -> Path:
    """A real bundle (manifest, hashed requirements, wheels/) holding one wheel."""
    from app.core.install.bundle import BundleFile, Manifest, sha256_of

    b = folder / "bundle"
    (b / "wheels").mkdir(parents=True)
    target = b / "wheels" / wheel.name
    target.write_bytes(wheel.read_bytes())
    digest = sha256_of(target)
    m = Manifest(python_version="3.11", implementation="cp", abi="cp311",
                 platforms=["manylinux_2_28_x86_64"], packages=["torch-setup-assistant"],
                 files=[BundleFile(name=wheel.name, size=target.stat().st_size, sha256=digest,
                                   package="torch-setup-assistant", version="0.1.0",
                                   tags=("py3-none-any",))],
                 created="2026-11-30T00:00:00Z", assistant_version="0.1.0")
    (b / "manifest.json").write_text(json.dumps(m.to_dict(), indent=2), encoding="utf-8")
    (b / "requirements.txt").write_text(f"torch-setup-assistant==0.1.0 --hash=sha256:{digest}\n", encoding="utf-8")
    return b


def test_offline_edition_archive_is_found_by_the_app(tmp_path, project_wheel):
    import offline_edition
    from app.core.install.bundle import find_bundle

    app = _fake_app(tmp_path / "dist")
    bundle = _tiny_bundle(tmp_path, project_wheel)
    rc = offline_edition.main(["--app", str(app), "--bundle", str(bundle), "--out", str(tmp_path / "out")])
    assert rc == 0
    archive = next((tmp_path / "out").glob("torch-setup-*-offline-cp311-manylinux_2_28_x86_64.tar.gz"))
    with tarfile.open(archive) as tf:
        tf.extractall(tmp_path / "x", **_DATA_ONLY)
    top = next((tmp_path / "x").iterdir())
    found = find_bundle(near=top / "torch-setup")
    assert found is not None and found.name == offline_edition.BUNDLE_DIR_NAME
    assert (found / "wheels" / project_wheel.name).is_file()
    readme = (top / "README-OFFLINE.txt").read_text(encoding="utf-8")
    assert 'bundle = "auto"' in readme and "torch-setup/torch-setup" in readme
    assert (top / "install.sh").is_file()  # the Linux per-user installer rides along


def test_offline_edition_zip_for_windows_apps(tmp_path, project_wheel):
    import offline_edition

    app = tmp_path / "win" / "torch-setup"
    (app / "_internal").mkdir(parents=True)
    (app / "torch-setup.exe").write_bytes(b"MZ")
    bundle = _tiny_bundle(tmp_path, project_wheel)
    assert offline_edition.main(["--app", str(app), "--bundle", str(bundle), "--out", str(tmp_path / "o")]) == 0
    archive = next((tmp_path / "o").glob("*.zip"))
    names = zipfile.ZipFile(archive).namelist()
    assert any(n.endswith(f"torch-setup/torch-bundle/wheels/{project_wheel.name}") for n in names)
    assert not any(n.endswith("install.sh") for n in names)


def test_offline_edition_refuses_a_damaged_bundle(tmp_path, project_wheel, capsys):
    import offline_edition

    app = _fake_app(tmp_path / "dist")
    bundle = _tiny_bundle(tmp_path, project_wheel)
    w = next((bundle / "wheels").iterdir())
    w.write_bytes(w.read_bytes()[:-10] + b"0123456789")
    rc = offline_edition.main(["--app", str(app), "--bundle", str(bundle), "--out", str(tmp_path / "out")])
    assert rc == 1 and w.name in capsys.readouterr().err
    assert not list((tmp_path / "out").glob("*")) if (tmp_path / "out").exists() else True


# --------------------------------------------------------------------- Linux tarball

def test_linux_tarball_and_per_user_install(tmp_path):
    app = _fake_app(tmp_path / "dist")
    res = subprocess.run(["bash", str(REPO / "installer/linux/make_tarball.sh"), str(app), str(tmp_path / "out")],
                         capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert res.returncode == 0, res.stderr
    archive = Path(res.stdout.strip().splitlines()[-1])
    assert re.match(r"torch-setup-0\.1\.0-linux-[\w]+\.tar\.gz$", archive.name)
    with tarfile.open(archive) as tf:
        tf.extractall(tmp_path / "x", **_DATA_ONLY)
    top = next((tmp_path / "x").iterdir())
    home = tmp_path / "home dir"
    home.mkdir()
    env = {"HOME": str(home), "PATH": os.environ["PATH"]}
    res = subprocess.run(["bash", str(top / "install.sh")], capture_output=True, text=True, encoding="utf-8", env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    prefix = home / ".local/opt/torch-setup"
    link = home / ".local/bin/torch-setup"
    assert link.is_symlink() and link.resolve() == (prefix / "torch-setup").resolve()
    assert subprocess.run([str(link), "--version"], capture_output=True, text=True, encoding="utf-8").stdout.startswith("torch-setup")
    desktop = home / ".local/share/applications/torch-setup.desktop"
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(desktop, encoding="utf-8")
    d = entry["Desktop Entry"]
    assert d["Exec"] == f'"{prefix}/torch-setup"' and d["Type"] == "Application"
    assert d["Name[zh_CN]"] and d["Icon"] == "torch-setup"
    assert (home / ".local/share/icons/hicolor/scalable/apps/torch-setup.svg").is_file()
    res = subprocess.run(["bash", str(top / "install.sh"), "--uninstall"], capture_output=True, text=True, encoding="utf-8",
                         env=env, timeout=60)
    assert res.returncode == 0 and not prefix.exists() and not desktop.exists() and not link.is_symlink()


def test_windows_and_macos_installers_name_the_onedir():
    iss = (REPO / "installer/windows/torch-setup.iss").read_text(encoding="utf-8")
    assert r"..\..\dist\torch-setup" in iss and "torch-setup-gui.exe" in iss
    assert r"{app}\torch-bundle" in iss  # the offline edition's bundle next to the executable
    dmg = (REPO / "installer/macos/build_dmg.sh").read_text(encoding="utf-8")
    assert "Torch Setup.app" in dmg and "installer/macos/package_app.sh" in dmg
    assert "hdiutil create" in (REPO / "installer/macos/package_app.sh").read_text(encoding="utf-8")
    spec = (REPO / "build.spec").read_text(encoding="utf-8")
    assert 'name="Torch Setup.app"' in spec and 'NAME + "-gui"' in spec
    for script in ("build_dmg.sh", "package_app.sh"):
        res = subprocess.run(["bash", "-n", str(REPO / "installer/macos" / script)], capture_output=True)
        assert res.returncode == 0, script


# --------------------------------------------------------------------- the frozen app

@pytest.fixture(scope="module")
def frozen_app(tmp_path_factory):
    """The onedir: $TORCH_SETUP_FROZEN_APP (CI builds it once with installer/build_linux.sh)
    or a fresh PyInstaller build of this tree into a temp folder."""
    given = os.environ.get("TORCH_SETUP_FROZEN_APP")
    if given:
        yield Path(given)
        return
    pytest.importorskip("PyInstaller")
    with scratch(tmp_path_factory, "pyinstaller") as tmp:
        res = subprocess.run([sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
                              "--distpath", str(tmp / "dist"), "--workpath", str(tmp / "work"),
                              str(REPO / "build.spec")], cwd=REPO, capture_output=True, text=True, encoding="utf-8", timeout=1200)
        assert res.returncode == 0, res.stderr[-3000:]
        yield tmp / "dist" / "torch-setup"


@pytest.mark.slow
def test_frozen_onedir_contents(frozen_app):
    internal = frozen_app / "_internal"
    probes = sorted(p.name for p in (internal / "app" / "probes").glob("*.py"))
    assert "verify.py" in probes and "bench.py" in probes
    # They are the source files themselves (run by the target env's Python).
    for name in ("verify.py", "bench.py"):
        assert hashlib.sha256((internal / "app/probes" / name).read_bytes()).digest() == \
            hashlib.sha256((REPO / "app/probes" / name).read_bytes()).digest()
    assert os.access(internal / "bin" / "uv", os.X_OK)
    assert (internal / "resources" / "answers.example.toml").is_file()
    names = {p.name for p in internal.rglob("*")}
    for unused in ("libQt6Quick.so.6", "libQt6Qml.so.6", "libQt6Network.so.6", "libQt6Pdf.so.6",
                   "libqwayland-generic.so", "libqgtk3.so", "QtNetwork.abi3.so", "QtOpenGL.abi3.so"):
        assert unused not in names, unused
    assert "libqoffscreen.so" in names and "libqxcb.so" in names and "libQt6Charts.so.6" in names
    size_mb = sum(p.stat().st_size for p in frozen_app.rglob("*") if p.is_file() and not p.is_symlink()) / 1e6
    assert size_mb <= 170, f"the onedir is {size_mb:.0f} MB (goal <= 170 MB with uv)"


@pytest.mark.slow
def test_frozen_self_test_passes_and_children_get_the_users_library_path(frozen_app, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(QT_QPA_PLATFORM="offscreen", LD_LIBRARY_PATH="/opt/user-libs", TORCH_SETUP_HOME=str(tmp_path))
    res = subprocess.run([str(frozen_app / "torch-setup"), "--self-test"], capture_output=True, text=True, encoding="utf-8",
                         env=env, timeout=300, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "self-test OK" in res.stdout and "(frozen," in res.stdout
    assert "LD_LIBRARY_PATH for children: /opt/user-libs" in res.stdout
    assert "wizard pages" in res.stdout
    # build.spec bundles PySide6's compiled support code, and its run-time hook loads PySide6
    # through it before PyInstaller's own Qt hook imports PySide6 (app/gui/pyside_support.py)
    assert "PySide6 support code from its cache" in res.stdout, res.stdout


@pytest.mark.slow
def test_frozen_cli_rejects_a_bad_answer_file(frozen_app, tmp_path):
    f = tmp_path / "a.toml"
    f.write_text('[environment]\npath = "env"\n[torch]\nbakcend = "cpu"\n', encoding="utf-8")
    res = subprocess.run([str(frozen_app / "torch-setup"), "install", "--config", str(f), "--yes"],
                         capture_output=True, text=True, encoding="utf-8", timeout=120, cwd=tmp_path,
                         env={**os.environ, "TORCH_SETUP_HOME": str(tmp_path / "home")})
    assert res.returncode == 2 and "'torch.bakcend'" in res.stderr and "line 4" in res.stderr
    assert not (tmp_path / "env").exists()
