"""Undo: what an install created goes away again, and nothing else; an existing env goes back
to its snapshot (:mod:`.restore`).

A new env: :class:`Rollback` records, before anything is created, whether the folder (and which
of its parents) existed, then, once the env was created, every entry the creator made (the venv
skeleton). Undoing removes only what is ours:

* what the creator made (recorded after it finished; while it was still running, the entries of
  the venv layout: ``bin``, ``lib``, ``pyvenv.cfg`` ... or anything for conda, which fills the
  whole prefix);
* everything in the installer's own folders, ``site-packages`` and ``bin`` / ``Scripts``
  (a cancelled installer leaves half-unpacked packages there, not yet in any RECORD), and the
  files it works with at the top (uv's ``.lock``);
* every file the installed packages' ``RECORD`` lists elsewhere in the env (data files,
  headers), and byte-code caches.

Anything else (a file the user saved into the env folder during the install) is KEPT, with the
folders that hold it, and named in the message: "kept 1 file that was not ours: notes.txt".
A folder the user chose that existed (empty) before is emptied, not removed; parents that did
not exist are removed when empty. Each entry goes through :func:`app.core.base.deletion.delete_entry`:
a read-only file is made writable first, and on Windows a file another program holds open is
tried again for a few seconds, and a tree deeper than MAX_PATH is reached by its ``\\\\?\\`` form.
"""
from __future__ import annotations

import csv
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from app.core.base.deletion import delete_entry, is_link, os_path
from app.core.base.enums import Phase, PhaseState
from app.core.base.events import Event, PhaseEvent, ignore
from app.core.base.text import Text, msg
from app.core.env import backends as envs
from app.core.install.request import InstallPlan
from app.core.install.restore import PackageState, Snapshot, freeze_names, restore, take_snapshot

__all__ = ["PackageState", "Rollback", "Snapshot", "freeze_names", "kept_text", "restore", "rollback",
           "take_snapshot"]

#: Top-level entries a venv creator makes (python -m venv, uv venv, virtualenv; Windows and POSIX).
VENV_LAYOUT = frozenset({"bin", "Scripts", "lib", "lib64", "Lib", "include", "Include", "pyvenv.cfg",
                         ".gitignore", "CACHEDIR.TAG", "share", "etc", "python.exe", "pythonw.exe"})
#: Files an installer writes at the top of the env while it works (``uv pip`` locks the env with ``.lock``).
INSTALLER_FILES = frozenset({".lock"})


def _entries(root: Path) -> Iterator[tuple[str, bool]]:
    """``(path relative to root, is a real folder)`` for everything under ``root``: links and
    Windows junctions are not followed (they are entries, not folders); on Windows the walk
    goes by the extended form of ``root``, so a tree deeper than MAX_PATH is listed whole."""
    top = os_path(root, min_length=0)
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        rel_dir = dirpath[len(top):].lstrip(os.sep)
        real = []
        for name in dirnames:
            rel = os.path.join(rel_dir, name) if rel_dir else name
            is_real = not is_link(os.path.join(dirpath, name))
            if is_real:
                real.append(name)
            yield rel, is_real
        dirnames[:] = real  # os.walk enters a junction otherwise
        for name in filenames:
            yield (os.path.join(rel_dir, name) if rel_dir else name), False


class Rollback:
    """Knows what install() created in a new env and takes exactly that away again."""

    def __init__(self, env_path: Path, kind: str = "venv") -> None:
        self.env_path = env_path
        self.kind = kind
        self.env_existed = env_path.exists()
        self.created_parents: list[Path] = []
        self.created: set[str] | None = None  # what the creator made; None: it has not finished
        self.kept: list[str] = []  # what the last run() left in place because it was not ours
        p = env_path.parent
        while not p.exists():
            self.created_parents.append(p)
            if p.parent == p:
                break
            p = p.parent

    def record_created(self) -> None:
        """Call when the env's creator finished: everything in the folder now is its work."""
        self.created = {rel for rel, _ in _entries(self.env_path)} if self.env_path.is_dir() else set()

    # ------------------------------------------------------------------ what is ours
    def _areas(self) -> list[str]:
        """The installer's folders (relative): site-packages and the scripts folder."""
        env = self.env_path
        found = [os.path.relpath(sp, env) for sp in envs.site_packages(env)]
        found += [rel for rel in ("bin", "Scripts") if (env / rel).is_dir() and not (env / rel).is_symlink()]
        return found

    def _recorded(self) -> set[str]:
        """Files the installed packages' RECORDs list, relative to the env (inside it only)."""
        env = os.path.realpath(self.env_path)
        out: set[str] = set()
        for sp in envs.site_packages(self.env_path):
            for record in sp.glob("*.dist-info/RECORD"):
                for row in _record_rows(record):
                    full = os.path.normpath(os.path.join(os.path.realpath(sp), row))
                    if full.startswith(env + os.sep):
                        out.add(os.path.relpath(full, env))
        return out

    def _ours(self, rel: str, areas: list[str], recorded: set[str], recorded_dirs: set[str]) -> bool:
        top = rel.split(os.sep, 1)[0]
        if rel in INSTALLER_FILES:
            return True
        if self.created is None:
            if self.kind == "conda" or top in VENV_LAYOUT:
                return True
        elif rel in self.created:
            return True
        return (any(rel == a or rel.startswith(a + os.sep) for a in areas) or rel in recorded
                or rel in recorded_dirs or "__pycache__" in rel.split(os.sep))

    # ------------------------------------------------------------------ undo
    def run(self) -> list[str]:
        """Remove what was ours; returns the problems met (empty: all of it is gone).
        :attr:`kept` names what was left because it was not ours."""
        problems: list[str] = []
        self.kept = []
        env = self.env_path
        if env.is_symlink() and not self.env_existed:
            env.unlink(missing_ok=True)
        elif env.is_dir():
            self._remove_ours(problems)
            if not self.env_existed and not self.kept and not problems:
                delete_entry(env, is_dir=True, problems=problems)
        for parent in self.created_parents:  # deepest first
            try:
                parent.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                break  # not empty (the env was kept, or someone else wrote there): leave it
        return problems

    def _remove_ours(self, problems: list[str]) -> None:
        areas, recorded = self._areas(), self._recorded()
        recorded_dirs = {d for r in recorded for d in _parents(r)}
        entries = sorted(_entries(self.env_path), key=lambda e: e[0].count(os.sep), reverse=True)
        kept_dirs: set[str] = set()
        stuck_dirs: set[str] = set()  # folders holding what could not be deleted (said once, for that entry)
        for rel, is_dir in entries:  # deepest first: a folder's content before the folder
            full = self.env_path / rel
            if not self._ours(rel, areas, recorded, recorded_dirs):
                self.kept.append(rel + os.sep if is_dir else rel)
                kept_dirs.update(_parents(rel))
            elif rel in kept_dirs:
                continue  # ours, but it holds something that is not: kept with it
            elif rel in stuck_dirs:
                continue
            elif not delete_entry(full, is_dir=is_dir, problems=problems, within=str(self.env_path)):
                stuck_dirs.update(_parents(rel))
        # a kept folder is named only when nothing inside it is (its content says it all)
        named = set(self.kept)
        self.kept = sorted(k for k in named if not (k.endswith(os.sep) and any(
            o != k and o.startswith(k) for o in named)))


def _record_rows(record: Path) -> Iterable[str]:
    try:
        with open(record, encoding="utf-8", newline="") as fh:
            return [row[0] for row in csv.reader(fh) if row and row[0]]
    except (OSError, ValueError, csv.Error):
        return []


def _parents(rel: str) -> list[str]:
    parts = rel.split(os.sep)
    return [os.sep.join(parts[:i]) for i in range(1, len(parts))]


def kept_text(kept: list[str], limit: int = 5) -> Text:
    """"1 file that was not ours: notes.txt" (folders end in the path separator)."""
    shown = ", ".join(kept[:limit]) + (f" (+{len(kept) - limit} more)" if len(kept) > limit else "")
    if len(kept) == 1:
        return msg("rollback.kept_one", "1 file that was not ours: {names}", names=shown)
    return msg("rollback.kept_many", "{count} files that were not ours: {names}", count=len(kept), names=shown)


def rollback(p: InstallPlan, *, snapshot: Snapshot | None = None, guard: Rollback | None = None,
             on_event: Callable[[Event], None] | None = None, log_path: Path | None = None) -> list[str]:
    """Undo an install: remove what a new env's install created, or restore an existing env.

    ``guard``: what install() recorded before it created anything (which folders existed, what
    the creator made); without it, a folder that exists now is treated as pre-existing (emptied
    of what is ours, never removed). Returns the problems met (empty when everything was undone).
    """
    emit = on_event or ignore
    if p.new_env:
        emit(PhaseEvent(Phase.ROLLBACK, PhaseState.START, str(p.env_path)))
        g = guard or Rollback(p.env_path, p.kind)
        problems = g.run()
        emit(PhaseEvent(Phase.ROLLBACK, PhaseState.FAILED if problems else PhaseState.END,
                        msg("rollback.kept", "kept {what}", what=kept_text(g.kept)) if g.kept else ""))
        return problems
    if snapshot is not None:
        return restore(p, snapshot, on_event=on_event, log_path=log_path)
    return []
