"""A child process run as another user (uid 65534, "nobody"), wherever the checkout lies.

A newcomer's checkout may lie in a private folder (mode 0700, as ``/root`` and every new home
folder on Debian 12 are), and the venv's ``python`` may be a link into another private folder
(pyenv under ``/root``). A child that runs as nobody can then import nothing from the checkout,
and may not even start the venv's interpreter. So the test arranges what the child needs itself,
in a world-readable folder of its own (0755, under a temporary folder whose parents all let
others through):

* ``lib/``: a copy of this checkout's ``app`` package and ``resources/``, and of the distributions
  the app needs at run time (the project's dependencies and theirs, without Qt: no child imports
  it), copied from where this Python imports them; the child's ``PYTHONPATH``;
* ``work/``: folders for the test's own files, each 0755;

and the child runs the first interpreter of this Python's version that the user can start and
that imports the staged ``app`` (this Python's real executable, else ``/usr/bin/pythonX.Y`` and
the like). When one of these cannot be had, :func:`stage` skips with a reason that names the
missing condition; it never lets a test fail for where the checkout lies.
"""
from __future__ import annotations

import importlib.metadata as md
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOBODY = 65534
PROJECT = "torch-setup-assistant"
# Qt is 650 MB and no child run as another user imports it (the CLI's path checks do not)
NOT_STAGED = {"pyside6-essentials", "pyside6-addons", "pyside6", "shiboken6"}
# the environment a child keeps (everything else, PYTHONPATH and VIRTUAL_ENV included, is dropped)
KEPT_ENV = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "QT_QPA_PLATFORM")


@dataclass(frozen=True)
class Unprivileged:
    uid: int
    python: str  # an interpreter the user can start
    root: Path  # the world-readable folder holding lib/ and work/
    lib: Path  # the child's PYTHONPATH: app, resources and the runtime distributions

    def scratch(self) -> Path:
        """A new empty folder the user can enter (0755, root's)."""
        d = Path(tempfile.mkdtemp(dir=self.root / "work"))
        d.chmod(0o755)
        return d

    def env(self, home: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k in KEPT_ENV}
        tmp = home / "tmp"
        tmp.mkdir(exist_ok=True)
        tmp.chmod(0o1777)
        return {**env, "HOME": str(home), "TORCH_SETUP_HOME": str(home), "TMPDIR": str(tmp),
                "PYTHONPATH": str(self.lib), "PYTHONDONTWRITEBYTECODE": "1"}

    def run(self, args: list[str], *, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
        """``python ARGS`` as the user, in the staged folder (never in the checkout)."""
        return subprocess.run([*setpriv(self.uid), self.python, "-s", *args], cwd=self.root, env=env,
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def setpriv(uid: int) -> list[str]:
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]


def why_not() -> str | None:
    """Why no child can run as another user here (None: it can)."""
    if os.name != "posix":
        return "needs POSIX user ids (runs a child as uid 65534)"
    if os.geteuid() != 0:
        return f"needs root: only root can run a child as uid {NOBODY} (running as uid {os.geteuid()})"
    if shutil.which("setpriv") is None:
        return f"needs setpriv (util-linux) to run a child as uid {NOBODY}"
    return None


def stage(uid: int = NOBODY) -> Iterator[Unprivileged]:
    """Generator for a fixture: the staged folder, removed afterwards; skips naming what is missing."""
    reason = why_not()
    if reason:
        pytest.skip(reason)
    base = open_temp_folder()
    if base is None:
        pytest.skip(f"no temporary folder that uid {uid} can enter: {tempfile.gettempdir()}, /tmp, /var/tmp and "
                    "/dev/shm all have a parent closed to others")
    root = Path(tempfile.mkdtemp(prefix="tsa-other-user-", dir=base))
    try:
        root.chmod(0o755)
        lib = root / "lib"
        _copy_runtime(lib)
        (root / "work").mkdir()
        _open_up(root)
        python, tried = _python_for(uid, root, lib)
        if python is None:
            pytest.skip(f"no Python {sys.version_info[0]}.{sys.version_info[1]} that uid {uid} can start and "
                        "import the staged app with: " + "; ".join(tried))
        yield Unprivileged(uid, python, root, lib)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def open_temp_folder() -> Path | None:
    """The first temporary folder whose every parent lets others through (o+x), or None."""
    for c in (tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"):
        p = Path(os.path.realpath(c))
        if p.is_dir() and os.access(p, os.W_OK) and all(_others_enter(a) for a in (p, *p.parents)):
            return p
    return None


def _others_enter(p: Path) -> bool:
    try:
        return bool(p.stat().st_mode & stat.S_IXOTH)
    except OSError:
        return False


def runtime_distributions() -> list[md.Distribution]:
    """The project's run-time dependencies, and theirs, as installed here (without Qt)."""
    from packaging.requirements import Requirement

    seen: dict[str, md.Distribution] = {}
    todo = [Requirement(r) for r in md.requires(PROJECT) or []]
    while todo:
        req = todo.pop()
        name = req.name.lower().replace("_", "-")
        if name in seen or name in NOT_STAGED or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
            continue
        try:
            dist = md.distribution(req.name)
        except md.PackageNotFoundError:
            continue  # an optional one that is not installed: the app copes, so does the child
        seen[name] = dist
        todo.extend(Requirement(r) for r in dist.requires or [])
    return list(seen.values())


def _copy_runtime(lib: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "app", lib / "app", ignore=ignore)
    shutil.copytree(REPO / "resources", lib / "resources", ignore=ignore)
    for dist in runtime_distributions():
        site = Path(str(dist.locate_file(""))).resolve()
        for f in dist.files or []:
            src = Path(str(dist.locate_file(f))).resolve()
            if src.suffix == ".pyc" or not src.is_file() or site not in src.parents:
                continue  # bytecode, or outside site-packages (a console script, uv's binary)
            dst = lib / src.relative_to(site)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)


def _open_up(root: Path) -> None:
    """Folders 0755, files 0644 (0755 when executable): the user reads all, writes nothing."""
    for d, _dirs, files in os.walk(root):
        os.chmod(d, 0o755)
        for f in files:
            p = os.path.join(d, f)
            os.chmod(p, 0o755 if os.stat(p).st_mode & stat.S_IXUSR else 0o644)


def _python_for(uid: int, root: Path, lib: Path) -> tuple[str | None, list[str]]:
    """The first interpreter of this version that the user starts and imports the staged app with."""
    major, minor = sys.version_info[:2]
    candidates = [os.path.realpath(getattr(sys, "_base_executable", sys.executable)), os.path.realpath(sys.executable)]
    candidates += [f"{d}/python{major}.{minor}" for d in ("/usr/local/bin", "/usr/bin", "/bin")]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(lib), "HOME": str(root),
           "PYTHONDONTWRITEBYTECODE": "1"}
    probe = "import sys, app.cli, app.core.base.paths as p; print(sys.version_info[:2], p.resources_dir())"
    tried: list[str] = []
    for py in dict.fromkeys(candidates):
        if not os.path.exists(py):
            continue
        r = subprocess.run([*setpriv(uid), py, "-s", "-c", probe], cwd=root, env=env, capture_output=True, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
        want = f"({major}, {minor}) {lib / 'resources'}"
        if r.returncode == 0 and r.stdout.strip() == want:
            return py, tried
        said = (r.stderr.strip().splitlines() or [r.stdout.strip() or f"exit {r.returncode}"])[-1]
        tried.append(f"{py}: {said}")
    return None, tried or ["none found"]
