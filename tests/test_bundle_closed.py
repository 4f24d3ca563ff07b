"""Closed bundles (finding 10) and must-show 5: ``bundle --check`` and ``install --from-bundle``
agree on every tampered bundle.

A pristine bundle of small real wheels passes both (and really installs, with uv and pip, no
index). Each tampering below is applied to a fresh copy; both commands run through the real
CLI and must give the same verdict: exit 2 with the same message, and no environment made.
An answer file pointing at a tampered bundle writes the host report with that error (exit 2).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.base.text import render
from app.core.base.wheels import parse_wheel
from app.core.install import bundle as core
from tests.helpers import can_symlink

REPO = Path(__file__).resolve().parents[1]
PY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def cli(*args, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, encoding="utf-8", timeout=timeout, stdin=subprocess.DEVNULL)


def make_bundle(folder: Path, wheels: list[Path], python: str = PY) -> Path:
    """A bundle as ``torch-setup bundle`` writes it, from wheels already at hand."""
    (folder / core.WHEELS).mkdir(parents=True)
    files = []
    for w in wheels:
        dest = folder / core.WHEELS / w.name
        shutil.copyfile(w, dest)
        wf = parse_wheel(w.name)
        assert wf is not None
        files.append(core.BundleFile(w.name, dest.stat().st_size, core.sha256_of(dest), wf.name, wf.version, wf.tags))
    m = core.Manifest(python_version=python, implementation="cp", abi=f"cp{python.replace('.', '')}",
                      platforms=tuple(core.expand_platform(core.this_platform())), packages=("netlab-demo",),
                      files=tuple(files), created="2026-12-01T00:00:00Z", assistant_version="test")
    (folder / core.REQUIREMENTS).write_text(
        "# test bundle\n" + "".join(f"{f.package}=={f.version} --hash=sha256:{f.sha256}\n" for f in files), encoding="utf-8")
    (folder / core.MANIFEST).write_text(json.dumps(m.to_dict(), indent=2), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def pristine(tiny_wheels, tmp_path_factory) -> Path:
    wheels = [next(tiny_wheels.glob("netlab_demo-1.1-*.whl")), next(tiny_wheels.glob("netlab_dep-0.5-*.whl"))]
    return make_bundle(tmp_path_factory.mktemp("pristine") / "bundle", wheels)


# ------------------------------------------------------------------ the tamperings
def _manifest(b: Path) -> dict:
    return json.loads((b / core.MANIFEST).read_text(encoding="utf-8"))


def _save(b: Path, m: dict) -> None:
    (b / core.MANIFEST).write_text(json.dumps(m), encoding="utf-8")


def _edit(fn: Callable[[dict], None]) -> Callable[[Path, Path], None]:
    def apply(b: Path, outside: Path) -> None:
        m = _manifest(b)
        fn(m)
        _save(b, m)
    return apply


def _dep(b: Path) -> Path:
    return next((b / core.WHEELS).glob("netlab_dep-*.whl"))


def dotdot_name(b, outside):
    """A name that climbs out of wheels/ to a real file beside the bundle."""
    evil = b.parent / "evil-1.0-py3-none-any.whl"
    evil.write_bytes(b"x")
    m = _manifest(b)
    m["files"][0].update(name="../../evil-1.0-py3-none-any.whl", size=1, sha256=core.sha256_of(evil))
    _save(b, m)


def absolute_name(b, outside):
    m = _manifest(b)
    m["files"][0]["name"] = "/etc/hostname"
    _save(b, m)


def swapped_wheel_manifest_updated(b, outside):
    dep = _dep(b)
    data = bytearray(dep.read_bytes())
    data[-30] ^= 0x01
    dep.write_bytes(bytes(data))
    m = _manifest(b)
    entry = next(f for f in m["files"] if f["name"] == dep.name)
    entry["sha256"], entry["size"] = core.sha256_of(dep), dep.stat().st_size
    _save(b, m)


def tags_contradict_name(b, outside):
    m = _manifest(b)
    m["files"][0]["tags"] = [f"cp{PY.replace('.', '')}-cp{PY.replace('.', '')}-win_amd64"]
    _save(b, m)


def _link(link: Path, target: Path, directory: bool = False) -> None:
    """A symbolic link where this system makes them; elsewhere (Windows without the privilege,
    Wine) the moved file is simply missing, which must be refused too."""
    if can_symlink():
        link.symlink_to(target, target_is_directory=directory)


def wheels_dir_symlink_outside(b, outside):
    shutil.move(str(b / core.WHEELS), outside / "w")
    _link(b / core.WHEELS, outside / "w", directory=True)


def wheel_symlink_outside(b, outside):
    dep = _dep(b)
    shutil.move(str(dep), outside / dep.name)
    _link(dep, outside / dep.name)


def requirements_symlink_outside(b, outside):
    shutil.move(str(b / core.REQUIREMENTS), outside / "req.txt")
    _link(b / core.REQUIREMENTS, outside / "req.txt")


def unlisted_wheel(b, outside):
    shutil.copyfile(_dep(b), b / core.WHEELS / "netlab_dep-0.6-py3-none-any.whl")


def url_requirement(b, outside):
    req = b / core.REQUIREMENTS
    lines = req.read_text(encoding="utf-8").splitlines()
    lines[-1] = "netlab-dep @ http://127.0.0.1:9/netlab_dep-0.5-py3-none-any.whl"
    req.write_text("\n".join(lines) + "\n", encoding="utf-8")


def index_option_line(b, outside):
    with open(b / core.REQUIREMENTS, "a", encoding="utf-8") as fh:
        fh.write("--extra-index-url http://127.0.0.1:9/simple\n")


def requirements_hash_edited(b, outside):
    req = b / core.REQUIREMENTS
    req.write_text(req.read_text(encoding="utf-8").replace("sha256:", "sha256:0", 1), encoding="utf-8")


def corrupted_byte(b, outside):
    dep = _dep(b)
    data = bytearray(dep.read_bytes())
    data[len(data) // 2] ^= 0xFF
    dep.write_bytes(bytes(data))


def truncated(b, outside):
    dep = _dep(b)
    dep.write_bytes(dep.read_bytes()[:1000])


def missing_wheel(b, outside):
    _dep(b).unlink()


def foreign_platform(b, outside):
    dep = _dep(b)
    foreign = dep.with_name("netlab_dep-0.5-cp311-cp311-win_amd64.whl")
    dep.rename(foreign)
    m = _manifest(b)
    entry = next(f for f in m["files"] if f["name"] == dep.name)
    entry["name"], entry["tags"] = foreign.name, ["cp311-cp311-win_amd64"]
    _save(b, m)


def manifest_text(text: str) -> Callable[[Path, Path], None]:
    def apply(b: Path, outside: Path) -> None:
        (b / core.MANIFEST).write_text(text, encoding="utf-8")
    return apply


def size_infinity(b, outside):
    m = _manifest(b)
    m["files"][0]["size"] = "__INF__"
    (b / core.MANIFEST).write_text(json.dumps(m).replace('"__INF__"', "Infinity"), encoding="utf-8")


def deep_manifest(b, outside):
    m = _manifest(b)
    m["packages"] = "__DEEP__"
    (b / core.MANIFEST).write_text(json.dumps(m).replace('"__DEEP__"', "[" * 100_000 + "]" * 100_000), encoding="utf-8")


TAMPERINGS: dict[str, Callable[[Path, Path], None]] = {
    "dotdot file name": dotdot_name,
    "absolute file name": absolute_name,
    "wheel swapped, manifest updated": swapped_wheel_manifest_updated,
    "tags contradict the file name": tags_contradict_name,
    "package contradicts the file name": _edit(lambda m: m["files"][0].update(package="other")),
    "version contradicts the file name": _edit(lambda m: m["files"][0].update(version="9.9")),
    "duplicate entry": _edit(lambda m: m["files"].append(m["files"][0])),
    "wheels_dir outside": _edit(lambda m: m.update(wheels_dir="../outside")),
    "wheels_dir absolute": _edit(lambda m: m.update(wheels_dir="/tmp")),
    "wheels_dir symlinked outside": wheels_dir_symlink_outside,
    "requirements_file outside": _edit(lambda m: m.update(requirements_file="../req.txt")),
    "requirements symlinked outside": requirements_symlink_outside,
    "wheel symlinked outside": wheel_symlink_outside,
    "unlisted wheel": unlisted_wheel,
    "pkg @ URL requirement": url_requirement,
    "index option in requirements": index_option_line,
    "requirements hash edited": requirements_hash_edited,
    "corrupted byte": corrupted_byte,
    "truncated wheel": truncated,
    "missing wheel": missing_wheel,
    "foreign platform": foreign_platform,
    "manifest []": manifest_text("[]"),
    "manifest null": manifest_text("null"),
    "manifest string": manifest_text('"torch"'),
    "size Infinity": size_infinity,
    "deep nesting": deep_manifest,
    "python_version number": _edit(lambda m: m.update(python_version=3.11)),
    "python_version garbage": _edit(lambda m: m.update(python_version="three")),
    "requirements_file 5": _edit(lambda m: m.update(requirements_file=5)),
    "wheels_dir null": _edit(lambda m: m.update(wheels_dir=None)),
    "sha256 5": _edit(lambda m: m["files"][0].update(sha256=5)),
}


def _message(stderr: str) -> str:
    return next((ln for ln in stderr.splitlines() if ln.startswith("torch-setup:")), stderr.strip())


@pytest.fixture
def tampered(pristine, tmp_path) -> Callable[[str], Path]:
    def make(kind: str) -> Path:
        root = tmp_path / f"case-{len(list(tmp_path.glob('case-*')))}"
        b = root / "bundle"
        shutil.copytree(pristine, b)
        outside = root / "outside"
        outside.mkdir()
        TAMPERINGS[kind](b, outside)
        return b
    return make


@pytest.mark.slow
@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_the_pristine_bundle_passes_both_and_installs(pristine, tmp_path, installer):
    check = cli("bundle", "--check", pristine)
    assert check.returncode == 0 and "all hashes match" in check.stdout, check.stderr
    env = tmp_path / f"env-{installer}"
    r = cli("install", "--env", env, "--installer", installer, "--from-bundle", pristine, "--yes", "--no-verify",
            "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(r.stdout)
    assert data["install"]["packages"]["netlab-demo"] == "1.1"
    assert "--no-index" in data["plan"]["commands"][-1]


@pytest.mark.parametrize("kind", sorted(TAMPERINGS))
def test_check_and_install_agree_on_a_tampered_bundle(tampered, tmp_path, kind):
    b = tampered(kind)
    check = cli("bundle", "--check", b)
    env = tmp_path / "env"
    install = cli("install", "--env", env, "--from-bundle", b, "--yes", "--no-verify")
    assert check.returncode == install.returncode == 2, (check.stderr, install.stderr)
    assert _message(check.stderr) == _message(install.stderr), (check.stderr, install.stderr)
    assert "all hashes match" not in check.stdout
    for r in (check, install):
        assert "Traceback" not in r.stdout + r.stderr
    assert not env.exists()


def test_every_tampering_is_a_bad_input_of_the_core(tampered, pristine):
    """In-process, the same suite: check_bundle (what both commands call) refuses each one."""
    from app.core.base.errors import BadInput

    core.check_bundle(pristine)
    outcomes = {}
    for kind in TAMPERINGS:
        with pytest.raises(BadInput) as err:
            core.check_bundle(tampered(kind))
        outcomes[kind] = render(err.value.message)
    for kind in ("wheels_dir symlinked outside", "requirements symlinked outside", "wheel symlinked outside"):
        if can_symlink():  # else (Windows without the privilege, Wine) no link was made: the file is missing
            assert "not closed" in outcomes[kind] and "outside the bundle" in outcomes[kind]
    assert "does not list" in outcomes["unlisted wheel"] and "netlab_dep-0.6" in outcomes["unlisted wheel"]
    assert "contradict its file name" in outcomes["tags contradict the file name"]
    assert "does not list exactly" in outcomes["wheel swapped, manifest updated"]
    assert "pinned wheel with its hash" in outcomes["pkg @ URL requirement"]
    assert "'files[0].name'" in outcomes["dotdot file name"]


def test_an_answer_file_pointing_at_a_tampered_bundle_writes_the_host_report(tampered, tmp_path):
    b = tampered("sha256 5")
    reports = tmp_path / "reports"
    answers = tmp_path / "a.toml"
    # TOML literal strings ('...'): a Windows path's backslashes are not escapes there
    answers.write_text(f"[environment]\npath = '{tmp_path / 'env'}'\n[sources]\nbundle = '{b}'\n"
                       f"[report]\nfolder = '{reports}'\nname = 'host-1'\nformats = ['json', 'md']\n",
                       encoding="utf-8")
    r = cli("install", "--config", answers, "--yes")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    data = json.loads((reports / "host-1.json").read_text(encoding="utf-8"))
    assert data["status"] == "bad-input" and data["exit_code"] == 2
    assert "'files[0].sha256'" in data["error"]["message"]
    assert "'files[0].sha256'" in (reports / "host-1.md").read_text(encoding="utf-8")
    assert not (tmp_path / "env").exists()
