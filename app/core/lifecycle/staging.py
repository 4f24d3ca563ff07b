"""The file-level moves of a staged upgrade: path fix-ups, the swap, what belongs to the user, the journal.

A venv is not relocatable: its activation scripts, its console scripts' ``#!`` lines and (with
``python -m venv``) its pyvenv.cfg name the folder it was made in. The staging env is therefore
created with ``uv venv --relocatable`` (activation scripts find their folder at run time, console
scripts start the ``python`` next to them) and, before the swap, :func:`fix_paths` rewrites any
remaining mention of the staging folder in ``bin/`` (``Scripts\\``), ``pyvenv.cfg`` and
``*.pth`` files to the final path.

The swap (:func:`swap`) is one ``renameat2(RENAME_EXCHANGE)`` on Linux (the env's path is never
missing, not even for a moment), else two renames in the same parent folder (same filesystem,
each atomic), undone if the second fails. A small journal in the per-user data folder records
each step, so an interrupted swap is put back by :func:`recover`.

The journal knows the folders by identity (device and inode), not by where they should be: the
one that was at the env's path when the operation began (``keep``) and the one coming in
(``incoming``), where each came from, where ``keep`` goes aside, and the user's entries carried
from one to the other. Whatever step a kill (SIGKILL, a power cut) interrupted, :func:`recover`
finds each folder wherever it is and, until the operation is committed, rolls back: ``keep`` at
the env's path again, the carried entries back in it, ``incoming`` back where it came from (or,
when it is a staging env this run built, deleted: checked by its identity, never by its name).
After the commit (an undo whose swap is done) it rolls forward instead. A folder whose identity
the journal does not hold is never moved or deleted.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from app.core.base.deletion import delete_tree
from app.core.base.errors import BadInput
from app.core.base.paths import data_dir, identity
from app.core.base.schema import Record, document, read_state, set_aside, spec
from app.core.base.secrets import write_private
from app.core.base.text import Text, join, msg
from app.core.env.backends import WINDOWS

__all__ = ["USER_KEEP", "VENV_LAYOUT", "activation_scripts", "begin", "damaged_text", "exchange", "fix_paths",
           "foreign_entries", "ident", "journal_file", "read_journal", "recover", "swap", "user_files",
           "write_journal"]

#: What a venv (or uv) puts at the top of an env folder; anything else there is the user's.
VENV_LAYOUT = frozenset({"bin", "Scripts", "lib", "lib64", "Lib", "include", "Include", "share", "etc", "man",
                         "pyvenv.cfg", ".gitignore", "CACHEDIR.TAG", ".lock", "pip-selfcheck.json", "Tools", "DLLs",
                         "libs", "conda-meta"})
#: Files the assistant itself writes at the top of an env (the guard's, the staging marker).
OURS = frozenset({"torch-setup-constraints.txt", "torch-setup-guard.json", "torch-setup-vars.json",
                  ".torch-setup-staging"})
#: pip's own configuration: carried over to the new env (the guard is then put back on top).
USER_KEEP = frozenset({"pip.conf", "pip.ini"})


def foreign_entries(env: Path) -> list[str]:
    """Top-level entries of ``env`` that no installer made (notebooks, scripts, data the user put there)."""
    try:
        names = sorted(p.name for p in env.iterdir())
    except OSError:
        return []
    return [n for n in names if n not in VENV_LAYOUT and n not in OURS and n not in USER_KEEP]


#: What venv / virtualenv / uv write into an env's scripts folder (its activation, its Python).
_VENV_SCRIPTS = re.compile(r"(?i)(activate.*|deactivate.*|pydoc.*|python[0-9.]*(w)?(\.exe)?|pythonw?(\.exe)?|"
                           r"activate_this\.py|.*\.torch-setup-tmp)")
#: Files at the top of site-packages that the env's maker puts there (uv's and virtualenv's hooks).
_SITE_OWN = re.compile(r"(?i)(_virtualenv\.(py|pth)|distutils-precedence\.pth|_distutils_hack|__pycache__)")
_ACTIVATE = ("activate", "activate.fish", "activate.csh", "activate.nu", "Activate.ps1", "activate.bat")


def _installed_files(env: Path) -> set[str]:
    """Every file the env's distributions installed (their RECORD files), relative to ``env``."""
    from app.core.env.backends import site_packages

    out: set[str] = set()
    for sp in site_packages(env):
        try:
            infos = sorted(sp.glob("*.dist-info"))
        except OSError:
            continue
        for d in infos:
            out.add(os.path.relpath(d, env))
            try:
                lines = (d / "RECORD").read_bytes().decode("utf-8", "replace").splitlines()
            except OSError:
                continue
            for line in lines:
                name = line.split(",", 1)[0].strip().strip('"')
                if name:
                    out.add(os.path.normpath(os.path.relpath(sp / name, env)))
    return out


def user_files(env: Path, *, limit: int = 20_000) -> list[str]:
    """The files inside ``env``'s own layout (``bin/``, ``lib/``, ``etc/`` ...) that neither a
    distribution (its RECORD) nor the env's maker put there: the user's scripts in ``bin/``, loose
    modules and ``.pth`` files in site-packages, their ``etc/`` and ``share/`` files. Relative paths;
    generated bytecode and links are left out; top-level entries of the user are
    :func:`foreign_entries` (not listed here)."""
    installed = _installed_files(env)
    out: list[str] = []
    for top in sorted(VENV_LAYOUT):
        root = env / top
        if not root.is_dir() or root.is_symlink():
            continue
        for folder, dirs, files in os.walk(root, followlinks=False):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.endswith(".dist-info")
                             and not os.path.islink(os.path.join(folder, d)))
            rel_dir = os.path.relpath(folder, env)
            in_scripts = rel_dir in ("bin", "Scripts")
            in_site = os.path.basename(folder) == "site-packages"
            for f in sorted(files):
                rel = os.path.normpath(os.path.join(rel_dir, f))
                full = os.path.join(folder, f)
                if rel in installed or f.endswith((".pyc", ".pyo")) or os.path.islink(full):
                    continue
                if (in_scripts and _VENV_SCRIPTS.fullmatch(f)) or (in_site and _SITE_OWN.fullmatch(f)):
                    continue
                out.append(rel)
                if len(out) >= limit:
                    return out
    return out


def activation_scripts(env: Path) -> list[str]:
    """The activation scripts ``env`` has (relative paths)."""
    scripts = "Scripts" if WINDOWS else "bin"
    return [os.path.join(scripts, n) for n in _ACTIVATE if (env / scripts / n).is_file()]


def _text_file(path: Path) -> bytes | None:
    try:
        st = path.lstat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > 2_000_000:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    return None if b"\0" in data[:4096] else data


def fix_paths(env: Path, old: str, new: str) -> list[str]:
    """Rewrite ``old`` (the staging folder) as ``new`` in the env's scripts, pyvenv.cfg and .pth files.

    Returns the files changed (relative). Symlinks and binaries are left alone.
    """
    targets = [env / "pyvenv.cfg"]
    scripts = env / ("Scripts" if WINDOWS else "bin")
    try:
        targets += sorted(scripts.iterdir())
    except OSError:
        pass
    for sp in (env / "lib").glob("python*/site-packages") if not WINDOWS else [env / "Lib" / "site-packages"]:
        targets += sorted(sp.glob("*.pth"))
    changed = []
    old_b, new_b = old.encode(), new.encode()
    for path in targets:
        data = _text_file(path)
        if data is None or old_b not in data:
            continue
        mode = path.stat().st_mode
        tmp = path.with_name(path.name + ".torch-setup-tmp")
        tmp.write_bytes(data.replace(old_b, new_b))
        os.chmod(tmp, stat.S_IMODE(mode))
        os.replace(tmp, path)
        changed.append(str(path.relative_to(env)))
    return changed


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2``); False when the OS cannot (nothing moved)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    rc = int(fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE))
    return rc == 0


def swap(env: Path, staging: Path, old_copy: Path) -> None:
    """``staging`` becomes ``env``; the old env goes to ``old_copy``. Raises OSError (nothing moved then)."""
    if exchange(staging, env):  # env now holds the new stack; staging's path the old env
        os.rename(staging, old_copy)
        return
    os.rename(env, old_copy)
    try:
        os.rename(staging, env)
    except OSError:
        os.rename(old_copy, env)
        raise


def journal_file(env: Path) -> Path:
    key = hashlib.sha256(os.path.normcase(os.path.abspath(env)).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    d = data_dir() / "upgrades"
    d.mkdir(parents=True, exist_ok=True)
    return d / f"{key}.json"


def write_journal(env: Path, **fields: object) -> None:
    path = journal_file(env)
    data = read_journal(env)
    data.pop("damaged", None)
    data.update(fields)
    data["env"] = str(env)
    write_private(path, json.dumps(data, indent=1), masked=False)  # mode 0600; paths only, kept exact


@dataclass(frozen=True)
class Journal(Record):
    """The fields a journal may hold (:func:`begin`, :func:`write_journal`), each checked when it is
    read (:mod:`app.core.base.schema`); ``old_copy``: the earlier layout's (no identities)."""

    env: str | None = None
    op: str | None = None
    state: str | None = None
    keep_id: tuple[int, ...] | None = field(default=None, metadata=spec(max_items=4))
    incoming_id: tuple[int, ...] | None = field(default=None, metadata=spec(max_items=4))
    incoming_path: str | None = None
    aside: str | None = None
    disposable: bool = False
    carried: tuple[str, ...] = field(default=(), metadata=spec(max_items=100_000))
    old_copy: str | None = None


def read_journal(env: Path) -> dict[str, object]:
    """The env's journal; {} when there is none. A damaged one (read as every state file is:
    :func:`app.core.base.schema.read_state`; a field of the wrong type is damage too) is kept,
    renamed beside it, and ``{"damaged": <its new name>}`` says so."""
    path = journal_file(env)
    what = document("journal", path)
    found = read_state(path, what=what, limit=1_000_000)
    if found.data is not None:
        try:
            Journal.from_dict(found.data, what=what)  # every field of the type it must have
        except BadInput as err:
            found = set_aside(path, str(err.message))
    if found.damaged:
        return {"damaged": str(found.aside)} if found.aside is not None else {}
    return found.data or {}


def clear_journal(env: Path) -> None:
    journal_file(env).unlink(missing_ok=True)


ident = identity  # a folder's identity: [device, inode] (app.core.base.paths.identity)


def begin(env: Path, *, op: str, incoming: Path, aside: Path, disposable: bool) -> None:
    """Journal an operation that swaps ``incoming`` in at ``env`` and puts what is there at ``aside``.

    ``disposable``: ``incoming`` is a staging env this run built (a rollback deletes it); else it is
    put back where it came from."""
    write_journal(env, op=op, state="swapping", keep_id=ident(env), incoming_id=ident(incoming),
                  incoming_path=str(incoming), aside=str(aside), disposable=disposable, carried=[])


def _free_name(base: Path) -> Path:
    n = 0
    while True:
        cand = base.with_name(f"{base.name}-{n}") if n else base
        if not os.path.lexists(cand):
            return cand
        n += 1


def _legacy_recover(env: Path, j: dict[str, object]) -> Text | None:
    """A journal of the earlier layout (no identities): only the missing-env case is put back."""
    old = j.get("old_copy")
    if j.get("state") != "swapping" or not isinstance(old, str):
        return None
    if not env.exists() and Path(old).exists():
        os.rename(old, env)
        clear_journal(env)
        return msg("envs.recover_moved_back", "moved {old} back to {env}", old=old, env=str(env))
    return None


def damaged_text(env: Path, j: dict[str, object]) -> Text:
    """What :func:`recover` says of a damaged journal (:func:`read_journal` kept it aside)."""
    return msg("envs.recover_damaged", "the journal of an interrupted upgrade of {env} was damaged; it was kept as "
               "{aside} and nothing was moved", env=str(env), aside=str(j["damaged"]))


def recover(env: Path) -> Text | None:
    """Finish or undo an interrupted swap (see the module's text). Returns what was done (naming
    where each folder is), or None when there was nothing to do. Raises OSError when a move fails
    (the journal is kept then)."""
    j = read_journal(env)
    if "damaged" in j:
        return damaged_text(env, j)
    if "keep_id" not in j:
        return _legacy_recover(env, j)
    op = (msg("envs.op_undo", "undo") if j.get("op") == "undo" else
          msg("envs.op_confirm", "confirm") if j.get("op") == "confirm" else msg("envs.op_upgrade", "upgrade"))
    keep_id, inc_id = j.get("keep_id"), j.get("incoming_id")
    inc_path, aside = Path(str(j.get("incoming_path"))), Path(str(j.get("aside")))
    places = [env, inc_path, aside]

    def where(want: object) -> Path | None:
        return next((p for p in places if want and ident(p) == want), None)

    keep_at, inc_at = where(keep_id), where(inc_id)
    if j.get("state") == "committed":  # the operation's goal was reached: finish it
        if j.get("op") == "undo" and keep_at is not None and keep_at != env:
            delete_tree(keep_at)  # the new stack the user chose to drop (its identity checked)
        clear_journal(env)
        return msg("envs.recover_finished", "finished the interrupted {op} of {env}", op=op, env=str(env))
    if keep_at is None:  # cannot tell where the env that was there went: move nothing
        return msg("envs.recover_lost", "the environment that was at {env} before the interrupted {op} was not "
                   "found; nothing was moved (the other one is at {other})", env=str(env), op=op,
                   other=str(inc_at or "?"))
    done: list[Text] = []
    if keep_at == env and inc_at is not None and _carry(inc_at, env, j.get("carried")):
        # stopped while the user's entries were being carried, before the swap: they come back
        done.append(msg("envs.recover_files_back", "moved your files back into {env}", env=str(env)))
    if keep_at != env:
        if inc_at == env:  # the incoming one is in place: the user's entries go back first
            _carry(env, keep_at, j.get("carried"))
            if exchange(keep_at, env):
                inc_at = keep_at
            else:
                spare = _free_name(env.with_name(f".{env.name}.torch-setup-recovering"))
                os.rename(env, spare)
                os.rename(keep_at, env)
                inc_at = spare
        elif not os.path.lexists(env):
            os.rename(keep_at, env)
        else:  # something else is at the env's path: it is not ours to move
            return msg("envs.recover_taken", "{env} holds a folder the interrupted {op} did not make; nothing was "
                       "moved (the environment from before it is at {kept})", env=str(env), op=op, kept=str(keep_at))
        done.append(msg("envs.recover_put_back", "put {env} back as it was, with your files in it", env=str(env)))
    if inc_at is not None and inc_at != env:
        if j.get("disposable"):
            delete_tree(inc_at)
            done.append(msg("envs.recover_deleted_staging", "deleted the staging environment"))
        elif inc_at != inc_path and not os.path.lexists(inc_path):
            os.rename(inc_at, inc_path)
            done.append(msg("envs.recover_moved_other", "moved the other environment back to {path}",
                            path=str(inc_path)))
    clear_journal(env)
    if not done:
        return msg("envs.recover_nothing", "nothing of the interrupted {op} was left to undo", op=op)
    return join(done, msg("rec.semicolon", "; "))


def _carry(src_root: Path, dst_root: Path, carried: object) -> bool:
    """The user's entries an operation carried (from ``dst_root`` into ``src_root``), moved back
    where they came from; a name already there is left. True when one was moved."""
    moved = False
    for name in carried if isinstance(carried, list) else []:
        src, dst = src_root / str(name), dst_root / str(name)
        if os.path.lexists(src) and not os.path.lexists(dst):
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.rename(src, dst)
            moved = True
    return moved
