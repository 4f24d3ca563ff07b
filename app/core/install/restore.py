"""An existing env: a snapshot before the install, and a restore package by package after a failure.

:func:`take_snapshot` records, before anything changes, each package of the env: its version
(from its ``*.dist-info``, which editable and local installs have too), its ``pip freeze`` line
(how to get exactly it back) and a copy of its ``*.dist-info`` folder (RECORD, direct_url.json:
where it came from), in a folder next to the logs.

:func:`restore` then works package by package, never all or nothing: it uninstalls the packages
the run added, reinstalls the previous version of each package the run changed or removed
(``--no-deps``, from the same indexes and folders, or the file it came from when that still
exists), and compares the result with the snapshot. What could not be restored is named, one
package at a time, with the reason; everything else is back.
"""
from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from app.core.base.enums import Phase, PhaseState
from app.core.base.errors import UserError
from app.core.base.events import Event, LogEvent, PhaseEvent, ignore
from app.core.base.locations import file_url_path, url_scheme
from app.core.base.paths import new_log_path
from app.core.base.requirements import canonical
from app.core.base.secrets import write_private
from app.core.base.text import msg, render
from app.core.env import backends as envs
from app.core.env.backends import env_python
from app.core.install.interpreter import ensure_own_interpreter
from app.core.install.request import InstallPlan
from app.core.proc import runner
from app.core.sources.settings import SourceSettings

__all__ = ["PackageState", "Snapshot", "freeze_names", "restore", "take_snapshot"]

_FREEZE_LINE = re.compile(r"^([A-Za-z0-9_.\-]+)\s*(?:==|@| @ )\s*(.*)$")


@dataclass(frozen=True)
class PackageState:
    """One package of the env as it was: ``name`` canonical; ``spec``: what reinstalls exactly it
    (``["six==1.16.0"]``, ``["pkg @ file:///x.whl"]``, ``["-e", "/src/pkg"]``; empty: unknown)."""

    name: str
    version: str
    spec: tuple[str, ...] = ()
    source: str = ""  # a local file or folder it was installed from ("" for an index)


@dataclass(frozen=True)
class Snapshot:
    """An existing env before the install: its packages, and where the record is kept."""

    folder: Path  # holds freeze.txt and a copy of each *.dist-info
    packages: dict[str, PackageState]


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


def _dist_infos(env_path: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for sp in envs.site_packages(env_path):
        for d in sp.glob("*.dist-info"):
            name, sep, _ = d.name[: -len(".dist-info")].partition("-")
            if sep:
                out[canonical(name)] = d
    return out


def _direct_url(dist_info: Path) -> tuple[str, bool]:
    """(local path it was installed from or "", editable) from PEP 610 ``direct_url.json``."""
    try:
        data = json.loads((dist_info / "direct_url.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "", False
    url = str(data.get("url", "")) if isinstance(data, dict) else ""
    editable = bool(isinstance(data, dict) and isinstance(data.get("dir_info"), dict)
                    and data["dir_info"].get("editable"))
    return (file_url_path(url) if url_scheme(url) == "file" else ""), editable


def _state(name: str, version: str, line: str | None, dist_info: Path | None) -> PackageState:
    source, editable = _direct_url(dist_info) if dist_info is not None else ("", False)
    if editable and source:
        return PackageState(name, version, ("-e", source), source)
    if source:  # a local wheel or folder: only that file gives back exactly this build
        return PackageState(name, version, (f"{name} @ {Path(source).as_uri()}",), source)
    if line and " @ " in line:  # a URL (or a VCS checkout) it came from
        return PackageState(name, version, (line,))
    return PackageState(name, version, (f"{name}=={version}",) if version else ())


def take_snapshot(p: InstallPlan, log_path: Path | None = None,
                  cancel: runner.CancelToken | None = None) -> Snapshot:
    """Record the env's packages before changing it (freeze + a copy of each dist-info)."""
    res = runner.run(p.backend.freeze_argv(p.env_path), env=p.backend.child_env(p.index),
                     log_path=log_path, cancel=cancel, timeout=120)
    res.raise_for_status(msg("install.snapshot_failed", "Could not record the packages of {path} before changing it",
                             path=str(p.env_path)),
                         hint=msg("install.snapshot_failed_hint", "Nothing was changed. Check that the environment "
                                  "works ({command}).", command=f"{env_python(p.env_path)} -m pip list"))
    folder = new_log_path("snapshot").with_suffix("")
    (folder / "dist-info").mkdir(parents=True, exist_ok=True)
    write_private(folder / "freeze.txt", res.stdout.strip() + "\n")  # for people: masked (a URL's token), 0600
    lines = freeze_names(res.stdout)
    infos = _dist_infos(p.env_path)
    packages = {}
    for name, version in envs.installed_distributions(p.env_path).items():
        d = infos.get(name)
        if d is not None:
            try:
                shutil.copytree(d, folder / "dist-info" / d.name, symlinks=True, dirs_exist_ok=True)
            except OSError:
                pass  # the copy is a record for people; the restore needs the state below
        packages[name] = _state(name, version, lines.get(name), d)
    write_private(folder / "packages.json", json.dumps(  # what the restore reads: exact, so mode 0600 only
        {n: {"version": s.version, "spec": list(s.spec), "source": s.source} for n, s in sorted(packages.items())},
        indent=1), masked=False)
    return Snapshot(folder, packages)


# --------------------------------------------------------------------------- restore

class _Restorer:
    """One restore: runs the installer commands, checking the interpreter before each."""

    def __init__(self, p: InstallPlan, emit: Callable[[Event], None], log_path: Path | None) -> None:
        self.p = p
        self.emit = emit
        self.log_path = log_path
        self.env = p.backend.child_env(p.index, p.request.sources.proxy)

    def _run(self, argv: Sequence[str], timeout: float) -> runner.RunResult:
        try:
            ensure_own_interpreter(self.p.env_path, log_path=self.log_path)
        except UserError as err:
            return runner.RunResult(list(argv), None, "", "", 0.0, start_error=render(err.message))
        return runner.run(argv, env=self.env, log_path=self.log_path, timeout=timeout,
                          on_line=lambda s, ln: self.emit(LogEvent(ln, s)))

    def uninstall(self, names: Sequence[str]) -> dict[str, str]:
        """Uninstall ``names`` (all at once, then one by one); {name: why} for those left."""
        if not names:
            return {}
        if self._run(self.p.backend.uninstall_argv(self.p.env_path, names), 600).ok:
            return {}
        left: dict[str, str] = {}
        for n in names:
            r = self._run(self.p.backend.uninstall_argv(self.p.env_path, [n]), 600)
            if not r.ok:
                left[n] = _why(r)
        return left

    def _install_argv(self, spec: Sequence[str], idx: SourceSettings) -> list[str]:
        return [*self.p.backend.install_argv(self.p.env_path, (), idx), "--no-deps", *spec]

    def reinstall(self, states: Sequence[PackageState]) -> dict[str, str]:
        """Reinstall each previous version (all at once, then one by one); {name: why} for those
        that could not be."""
        failed: dict[str, str] = {}
        todo = []
        for s in states:
            if not s.spec:
                failed[s.name] = render(msg("rollback.no_spec", "it is not known where it came from"))
            elif s.source and not Path(s.source).exists():
                failed[s.name] = render(msg("rollback.no_source", "its source {source} no longer exists",
                                            source=s.source))
            else:
                todo.append(s)
        idx = replace(self.p.index, require_hashes=False)  # the old versions are not the bundle's files
        if not todo or self._run(self._install_argv([x for s in todo for x in s.spec], idx), 1800).ok:
            return failed
        plain = replace(idx, torch_index=None)  # a torch index ranked first may lack an older plain package
        for s in todo:
            r = self._run(self._install_argv(s.spec, idx), 1800)
            if not r.ok and idx.torch_index:
                r = self._run(self._install_argv(s.spec, plain), 1800)
            if not r.ok:
                failed[s.name] = _why(r)
        return failed


def _why(r: runner.RunResult) -> str:
    lines = runner.relevant_lines(r.tail, 2)
    return r.describe() + (": " + " / ".join(lines) if lines else "")


def _problems(before: dict[str, PackageState], after: dict[str, str], why: dict[str, str]) -> list[str]:
    """One sentence per package that is not as it was."""
    out = []
    for name, st in sorted(before.items()):
        now = after.get(name)
        if now == st.version:
            continue
        reason = why.get(name, "")
        text = (msg("rollback.not_restored_changed", "{name} {version} could not be restored ({why}); {now} from "
                    "this run is still installed", name=name, version=st.version, why=reason, now=now)
                if now is not None else
                msg("rollback.not_restored_missing", "{name} {version} could not be restored ({why}); it is missing "
                    "now", name=name, version=st.version, why=reason))
        out.append(render(text).replace(" ()", ""))
    for name in sorted(set(after) - set(before)):
        out.append(render(msg("rollback.not_removed", "{name} {version}, added by this run, could not be removed "
                              "({why})", name=name, version=after[name], why=why.get(name, ""))).replace(" ()", ""))
    return out


def restore(p: InstallPlan, snapshot: Snapshot, *, on_event: Callable[[Event], None] | None = None,
            log_path: Path | None = None) -> list[str]:
    """Bring an existing env back to ``snapshot``, package by package.

    Returns one problem per package that is not as it was (empty: every package is back).
    """
    emit = on_event or ignore
    emit(PhaseEvent(Phase.RESTORE, PhaseState.START,
                    msg("install.restoring", "restoring {env} from {snapshot}", env=str(p.env_path),
                        snapshot=str(snapshot.folder))))
    before = snapshot.packages
    now = envs.installed_distributions(p.env_path)
    added = sorted(n for n in now if n not in before)
    changed = [st for n, st in sorted(before.items()) if now.get(n) != st.version]
    r = _Restorer(p, emit, log_path)
    why = r.uninstall(added)
    why |= r.reinstall(changed)
    problems = _problems(before, envs.installed_distributions(p.env_path), why)
    emit(PhaseEvent(Phase.RESTORE, PhaseState.FAILED if problems else PhaseState.END))
    return problems
