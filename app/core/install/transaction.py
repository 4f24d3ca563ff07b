"""Undo: what an install created goes away again; an existing env goes back to its snapshot.

* A new env: :class:`Rollback` records, before anything is created, whether the folder (and
  which of its parents) existed; undoing removes exactly what did not (an empty folder the
  user chose is emptied, not removed).
* An existing env: :func:`take_snapshot` saves its ``pip freeze`` next to the logs first;
  :func:`restore` brings it back to exactly that list.
"""
from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from app.core import runner
from app.core.enums import Phase, PhaseState
from app.core.envs import env_python
from app.core.events import Event, PhaseEvent, ignore
from app.core.install.request import InstallPlan
from app.core.paths import new_log_path
from app.core.requirements import canonical
from app.core.text import msg

__all__ = ["Rollback", "freeze_names", "restore", "rollback", "take_snapshot"]

_FREEZE_LINE = re.compile(r"^([A-Za-z0-9_.\-]+)\s*(?:==|@| @ )\s*(.*)$")


class Rollback:
    """Knows what install() created and takes exactly that away again."""

    def __init__(self, env_path: Path) -> None:
        self.env_path = env_path
        self.env_existed = env_path.exists()
        self.created_parents: list[Path] = []
        p = env_path.parent
        while not p.exists():
            self.created_parents.append(p)
            if p.parent == p:
                break
            p = p.parent

    def run(self) -> list[str]:
        """Remove what was created; returns the problems met (empty: all gone)."""
        problems: list[str] = []
        env = self.env_path
        if env.is_symlink() and not self.env_existed:
            env.unlink(missing_ok=True)
        elif env.exists():
            if self.env_existed:  # it was an empty folder: empty it again, keep it
                for child in list(env.iterdir()):
                    _remove(child, problems)
            else:
                _remove(env, problems)
        for parent in self.created_parents:  # deepest first
            try:
                parent.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                break  # not empty (someone else wrote there): leave it
        return problems


def _remove(path: Path, problems: list[str]) -> None:
    def onerror(func: Callable[..., Any], p: str,
                _exc: tuple[type[BaseException], BaseException, TracebackType | None]) -> None:
        try:
            os.chmod(p, 0o700)
            func(p)
        except OSError as exc:
            problems.append(f"{p}: {exc.strerror or exc}")

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, onerror=onerror)
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror or exc}")


def rollback(p: InstallPlan, *, snapshot: Path | None = None, guard: Rollback | None = None,
             on_event: Callable[[Event], None] | None = None, log_path: Path | None = None) -> list[str]:
    """Undo an install: remove a new env completely, or restore an existing one.

    ``guard``: what install() recorded before it created anything (which folders existed);
    without it, a folder that exists now is treated as pre-existing and only emptied.
    Returns the problems met (empty when everything was undone).
    """
    emit = on_event or ignore
    if p.new_env:
        emit(PhaseEvent(Phase.ROLLBACK, PhaseState.START, str(p.env_path)))
        problems = (guard or Rollback(p.env_path)).run()
        emit(PhaseEvent(Phase.ROLLBACK, PhaseState.FAILED if problems else PhaseState.END))
        return problems
    if snapshot is not None:
        return restore(p, snapshot, on_event=on_event, log_path=log_path)
    return []


def take_snapshot(p: InstallPlan, log_path: Path | None = None,
                  cancel: runner.CancelToken | None = None) -> tuple[Path, str]:
    """``pip freeze`` of an existing env, saved next to the log. Returns (file, text)."""
    res = runner.run(p.backend.freeze_argv(p.env_path), env=p.backend.child_env(p.index),
                     log_path=log_path, cancel=cancel, timeout=120)
    res.raise_for_status(msg("install.snapshot_failed", "Could not record the packages of {path} before changing it",
                             path=str(p.env_path)),
                         hint=msg("install.snapshot_failed_hint", "Nothing was changed. Check that the environment "
                                  "works ({command}).", command=f"{env_python(p.env_path)} -m pip list"))
    snap = new_log_path("snapshot").with_suffix(".txt")
    snap.write_text(res.stdout.strip() + "\n", encoding="utf-8")
    return snap, res.stdout


def freeze_names(text: str) -> dict[str, str]:
    """``pip freeze`` output -> ``{canonical name: its line}``."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _FREEZE_LINE.match(line)
        if m:
            out[canonical(m.group(1))] = line
    return out


def _freeze(p: InstallPlan, env: dict[str, str], log_path: Path | None) -> runner.RunResult:
    return runner.run(p.backend.freeze_argv(p.env_path), env=env, log_path=log_path, timeout=120)


def _remove_new(p: InstallPlan, want: dict[str, str], env: dict[str, str], log_path: Path | None) -> list[str]:
    """pip has no "sync": uninstall what is not in the snapshot."""
    extra = sorted(set(freeze_names(_freeze(p, env, log_path).stdout)) - set(want))
    if not extra:
        return []
    r = runner.run(p.backend.uninstall_argv(p.env_path, extra), env=env, log_path=log_path, timeout=600)
    return [] if r.ok else [f"could not remove {', '.join(extra)} ({r.describe()})"]


def restore(p: InstallPlan, snapshot: Path, *, on_event: Callable[[Event], None] | None = None,
            log_path: Path | None = None) -> list[str]:
    """Bring an existing env back to ``snapshot``. Returns problems (empty: identical)."""
    emit = on_event or ignore
    emit(PhaseEvent(Phase.RESTORE, PhaseState.START,
                    msg("install.restoring", "restoring {env} from {snapshot}", env=str(p.env_path),
                        snapshot=str(snapshot))))
    env = p.backend.child_env(p.index, p.request.proxy)
    want = freeze_names(snapshot.read_text(encoding="utf-8"))
    problems = _remove_new(p, want, env, log_path) if p.installer == "pip" else []
    for argv in p.backend.restore_argv(p.env_path, snapshot, p.index):
        r = runner.run(argv, env=env, log_path=log_path, timeout=1800)
        if not r.ok:
            problems.append(f"{' '.join(argv[:3])} failed ({r.describe()}): "
                            + " / ".join(runner.relevant_lines(r.tail, 3)))
    after = _freeze(p, env, log_path)
    if after.ok and freeze_names(after.stdout) != want:
        diff = set(freeze_names(after.stdout).items()) ^ set(want.items())
        problems.append("the environment differs from the snapshot: "
                        + ", ".join(sorted(v for _, v in diff))[:400])
    emit(PhaseEvent(Phase.RESTORE, PhaseState.FAILED if problems else PhaseState.END))
    return problems
