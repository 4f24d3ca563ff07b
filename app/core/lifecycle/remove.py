"""Delete an environment, and nothing else.

Destructive cleanup is the real fear (LykosAI/StabilityMatrix#1733 deleted 1.2 TB of models when
it tore down shared-folder links). :func:`plan_remove` refuses, before anything is touched:

* a path that IS a symbolic link (or a Windows junction): it is never followed;
* a filesystem root or any mount point;
* the home folder, the user folders (Desktop, Documents, Downloads, Pictures, Music, Videos, the
  XDG user dirs, the per-user data / config / cache folders), the assistant's own folders and
  interpreter, system folders, and ANY parent of one of them;
* a folder that is not a Python environment (no ``pyvenv.cfg``, no ``conda-meta``);
* unless ``force``: an environment the registry does not list as made by this app;
* an environment holding a mount point (another filesystem, or a bind mount of a folder of the
  same disk, which has the same device: the kernel's mount list tells it), never entered.

The plan says what will go (files, folders, links, size) so the user sees it first.
:func:`delete_tree` then walks bottom-up with ``os.scandir`` (``follow_symlinks=False``, the
device checked for every folder), unlinks links as links, and re-checks the root before each
step. The registry record and the Jupyter kernel this app registered for the env go with it.
"""
from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.core.base.deletion import delete_tree, mount_points_under, os_path, shown_path
from app.core.base.deletion import is_link as _is_link
from app.core.base.events import Event, StepEvent, ignore
from app.core.base.locks import env_lock
from app.core.base.paths import cache_dir, config_dir, data_dir, log_dir, state_dir
from app.core.base.schema import Record
from app.core.base.text import Text, msg
from app.core.env import registry
from app.core.env.backends import env_python, is_env
from app.core.env.registry import EnvRecord
from app.core.lifecycle.common import Refused
from app.core.lifecycle.sizes import TreeSize, human_bytes
from app.core.proc.runner import CancelToken

__all__ = ["RemovePlan", "RemoveResult", "delete_tree", "plan_remove", "protected_folders", "remove", "scan"]

_USER_DIR_NAMES = ("Desktop", "Documents", "Downloads", "Pictures", "Music", "Videos", "Movies", "Public",
                   "Templates", "OneDrive", "Dropbox", "Library", "AppData", "Applications")
_SYSTEM = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/opt", "/var", "/srv", "/boot", "/home", "/root",
           "/Users", "/System", "/Applications", "/Library", "/private", "/tmp", "/mnt", "/media")


def _xdg_user_dirs(home: Path) -> list[Path]:
    """The folders ``~/.config/user-dirs.dirs`` names (localised Desktop, Documents ...)."""
    out: list[Path] = []
    try:
        text = (home / ".config" / "user-dirs.dirs").read_text(encoding="utf-8")
    except OSError:
        return out
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip().startswith("XDG_") and key.strip().endswith("_DIR"):
            out.append(Path(value.strip().strip('"').replace("$HOME", str(home))))
    return out


def _platform_user_dirs() -> list[Path]:
    import platformdirs  # start-up: only a removal needs these

    out = []
    for fn in (platformdirs.user_desktop_dir, platformdirs.user_documents_dir, platformdirs.user_downloads_dir,
               platformdirs.user_pictures_dir, platformdirs.user_music_dir, platformdirs.user_videos_dir,
               platformdirs.user_data_dir, platformdirs.user_config_dir, platformdirs.user_cache_dir):
        try:
            out.append(Path(fn()))
        except Exception:  # an unusual platform: the fixed names below still apply
            pass
    return out


def protected_folders() -> list[Path]:
    """Folders no removal may be, or be a parent of."""
    home = Path.home()
    out = [home, *(home / n for n in _USER_DIR_NAMES), *_xdg_user_dirs(home), *_platform_user_dirs()]
    out += [data_dir(), config_dir(), cache_dir(), log_dir(), state_dir()]
    out += [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)]
    out += [Path(p) for p in _SYSTEM]
    for var in ("SystemRoot", "ProgramFiles", "ProgramFiles(x86)", "ProgramData", "USERPROFILE", "APPDATA",
                "LOCALAPPDATA"):
        v = os.environ.get(var)
        if v:
            out.append(Path(v))
    return out


def _norm(p: Path) -> str:
    return os.path.normcase(os.path.normpath(os.path.abspath(p)))


def _real(p: Path) -> str:
    try:
        return os.path.normcase(os.path.realpath(p))
    except OSError:
        return _norm(p)


def _is_within(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class RemovePlan:
    path: Path
    size: TreeSize
    dirs: int
    links: int
    top: tuple[str, ...]  # the folder's top-level entries (what the user sees)
    record: EnvRecord | None
    kernel: Path | None  # the Jupyter kernel folder this app registered for the env
    forced: bool = False
    notes: tuple[Text, ...] = ()

    @property
    def summary(self) -> Text:
        return msg("envs.remove_summary", "{path}: {files} files, {dirs} folders, {links} links, {size}",
                   path=str(self.path), files=self.size.files, dirs=self.dirs, links=self.links,
                   size=human_bytes(self.size.bytes))

    def to_dict(self) -> dict[str, object]:
        return {"path": str(self.path), "size": self.size.to_dict(), "dirs": self.dirs, "links": self.links,
                "top": list(self.top), "made_by_app": bool(self.record and self.record.made_by_app),
                "kernel": str(self.kernel) if self.kernel else None, "forced": self.forced,
                "summary": str(self.summary), "notes": [str(n) for n in self.notes]}


@dataclass(frozen=True)
class RemoveResult(Record):
    path: str
    removed: bool
    freed_bytes: int
    problems: tuple[str, ...] = field(default_factory=tuple)


def _refuse(text: Text, hint: Text = "") -> Refused:
    return Refused(text, hint)


@dataclass
class _Scan:
    files: int = 0
    dirs: int = 0
    links: int = 0
    bytes: int = 0
    mounts: list[str] = field(default_factory=list)


def scan(root: Path, *, max_entries: int = 2_000_000) -> _Scan:
    """Walk ``root`` without following links (nor Windows junctions); mount points inside are
    listed, not entered. On Windows the walk goes by the extended form of ``root``, so a tree
    deeper than MAX_PATH is counted whole."""
    s = _Scan()
    top = os_path(root, min_length=0)
    dev = os.lstat(top).st_dev
    mounts = mount_points_under(top)  # bind mounts of the same disk: the same device, still not ours
    for folder, dirnames, filenames in os.walk(top, followlinks=False):
        keep = []
        for d in dirnames:
            p = os.path.join(folder, d)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode) or _is_link(Path(p)):
                s.links += 1
            elif st.st_dev != dev or (mounts and os.path.realpath(p) in mounts):
                s.mounts.append(shown_path(p))
            else:
                s.dirs += 1
                keep.append(d)
        dirnames[:] = keep
        for f in filenames:
            try:
                st = os.lstat(os.path.join(folder, f))
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                s.links += 1
            else:
                s.files += 1
                s.bytes += st.st_size
        if s.files + s.dirs > max_entries:
            break
    return s


def kernel_runs(path: Path, env: Path) -> bool:
    """The kernelspec at ``path`` (a folder in a ``kernels`` folder) starts this env's Python (or
    the env is gone: then any is ours to drop)."""
    try:
        spec = json.loads((path / "kernel.json").read_text(encoding="utf-8"))
        argv0 = Path(str(spec["argv"][0]))
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return False
    if path.parent.name != "kernels":
        return False
    if not env.exists():
        return True
    return argv0 == env_python(env) or env in argv0.parents


def running_in(env: Path, *, limit: int = 3) -> list[tuple[int, str]]:
    """Programs running from ``env`` right now: (pid, name) of each process whose program or first
    argument lies inside it (a venv's ``bin/python`` is a link to the base interpreter, so the
    program alone does not tell it). Processes this user cannot see are not counted."""
    import psutil

    top = os.path.normcase(os.path.realpath(env)) + os.sep
    here = os.getpid()
    found: list[tuple[int, str]] = []
    for proc in psutil.process_iter(["pid", "name", "exe", "cmdline"]):
        info = proc.info
        if info.get("pid") == here:
            continue
        cmd = info.get("cmdline") or []
        paths = [p for p in (info.get("exe"), cmd[0] if cmd else None) if p]
        for p in paths:
            if os.path.isabs(p) and os.path.normcase(os.path.abspath(p)).startswith(top):
                found.append((int(info["pid"]), str(info.get("name") or os.path.basename(p))))
                break
        if len(found) >= limit:
            break
    return found


def plan_remove(target: str | os.PathLike[str], *, force: bool = False) -> RemovePlan:
    """Decide whether ``target`` may be removed and what that removes. Raises :class:`Refused`."""
    path = Path(os.path.abspath(os.path.expanduser(os.fspath(target))))
    if _is_link(path):
        raise _refuse(msg("envs.remove_symlink", "{path} is a symbolic link: it is not followed and nothing is "
                          "deleted", path=str(path)),
                      msg("envs.remove_symlink_hint", "Remove the link itself with your file manager if you want it "
                          "gone; the folder it points to stays."))
    if not path.exists():
        raise _refuse(msg("envs.no_such_env", "{path} does not exist", path=str(path)))
    if path.parent == path or os.path.ismount(path):
        raise _refuse(msg("envs.remove_root", "{path} is the root of a filesystem: it is never deleted",
                          path=str(path)))
    norm, real = _norm(path), _real(path)
    for prot in protected_folders():
        pn, pr = _norm(prot), _real(prot)
        if any(_is_within(p, q) for p in (pn, pr) for q in (norm, real)):
            raise _refuse(msg("envs.remove_protected", "{path} is, or holds, a folder that must never be deleted "
                              "({protected})", path=str(path), protected=str(prot)),
                          msg("envs.remove_protected_hint", "Pass the environment folder itself."))
    if not path.is_dir() or not is_env(path):
        raise _refuse(msg("envs.remove_not_env", "{path} is not a Python environment (it holds neither pyvenv.cfg "
                          "nor conda-meta): nothing is deleted", path=str(path)))
    rec = registry.find(path)
    if not force and (rec is None or not rec.made_by_app):
        raise _refuse(msg("envs.remove_not_ours", "{path} is not in this assistant's list of the environments it "
                          "made, so it is not deleted without --force", path=str(path)),
                      msg("envs.remove_not_ours_hint", "Check that it is the environment you mean, then run the "
                          "command again with --force."))
    if not force and rec is not None and not rec.is_the_folder_at(path):
        raise _refuse(msg("envs.remove_made_again", "{path} is not the folder this assistant made there (that one was "
                          "deleted or moved, and this one was made since), so it is not deleted without --force",
                          path=str(path)),
                      msg("envs.remove_not_ours_hint", "Check that it is the environment you mean, then run the "
                          "command again with --force."))
    if rec is not None and rec.pending_upgrade is not None:
        raise _refuse(msg("envs.remove_pending", "{path} has an upgrade waiting to be confirmed or undone",
                          path=str(path)),
                      msg("envs.remove_pending_hint", "Run `torch-setup upgrade --env {path} --confirm` (or --undo) "
                          "first.", path=str(path)))
    busy = running_in(path)
    if busy:
        raise _refuse(msg("envs.remove_in_use", "{path} is in use by a running program ({programs}): nothing is "
                          "deleted", path=str(path), programs=", ".join(f"{n}, pid {p}" for p, n in busy)),
                      msg("envs.remove_in_use_hint", "Close that program (a notebook kernel, an editor's Python, a "
                          "training run), then remove the environment again."))
    s = scan(path)
    if s.mounts:
        raise _refuse(msg("envs.remove_mount_inside", "{path} holds another filesystem mounted at {mount}: nothing "
                          "is deleted", path=str(path), mount=s.mounts[0]))
    kernel = Path(rec.kernel.path) if rec is not None and rec.kernel is not None else None
    top = tuple(sorted(p.name for p in path.iterdir()))
    notes: list[Text] = []
    if kernel is not None and not kernel_runs(kernel, path):  # the row's word alone is not enough
        notes.append(msg("envs.remove_kernel_not_its", "the Jupyter kernel {path} that the record names does not "
                         "run this environment's Python: it stays", path=str(kernel)))
        kernel = None
    if kernel is not None:
        notes.append(msg("envs.remove_kernel_too", "its Jupyter kernel {name} goes too", name=kernel.name))
    return RemovePlan(path, TreeSize(s.bytes, s.files), s.dirs, s.links, top, rec, kernel, force, tuple(notes))


def remove(plan: RemovePlan, *, on_event: Callable[[Event], None] | None = None,
           cancel: CancelToken | None = None) -> RemoveResult:
    """Delete what ``plan`` showed (re-checked under the env's lock), then forget the env."""
    emit = on_event or ignore
    with env_lock(plan.path, "remove"):
        again = plan_remove(plan.path, force=plan.forced)  # nothing changed since the plan was shown
        emit(StepEvent("remove", "running", str(again.path)))
        problems = delete_tree(again.path, cancel=cancel)
        if again.kernel is not None and (again.kernel / "kernel.json").is_file() and not _is_link(again.kernel) \
                and kernel_runs(again.kernel, again.path):  # checked while the env is still there
            problems += delete_tree(again.kernel)
        gone = not again.path.exists()
        if gone:
            try:
                registry.forget(again.path)
            except Exception as exc:  # the files are gone: a bookkeeping problem is only reported
                problems.append(f"registry: {exc}")
        emit(StepEvent("remove", "passed" if gone and not problems else "failed", str(again.path)))
    return RemoveResult(str(again.path), gone, again.size.bytes if gone else 0, tuple(problems))
