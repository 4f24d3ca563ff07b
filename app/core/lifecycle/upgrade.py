"""Safe torch upgrade: build the new stack next to the env, verify it there, swap it in; undo until confirmed.

``plan_upgrade(env, torch="2.14")`` decides everything before anything is written:

* the new torch family (the recommendation for this machine, or the packages given) and its
  index; the env's Python (the staging env is built on the same base interpreter);
* the user's other packages (kept at their versions: a requirements file written from the env's
  dist-info; direct-URL and editable installs kept as they were), leaving out torch's own
  dependencies, which the new torch brings in the versions it needs;
* the companion check (:mod:`.companions`): conflicts stop here, with the list.

``upgrade(plan)`` then, holding the env's lock:

1. creates ``.<name>.torch-setup-staging`` next to the env (``uv venv --relocatable``) and installs
   the new stack plus the kept packages, both through the install runner
   (:func:`app.core.install.install`); uv links them from its cache (hard links on Linux, clones on
   macOS), so an already-downloaded stack costs little disk and time;
2. verifies the staging env on this machine's accelerator (the verify probe) and imports each
   compiled extension the env had;
3. only then rewrites the staging folder's name in its scripts to the final path and swaps it in
   (:func:`.staging.swap`); the old env stays at ``.<name>.torch-setup-old-<time>``; the user's own
   files at the env's top level and its pip.conf move along; the guard pins the new build.

Any failure before the swap (including a failed verification or a cancel) removes the staging
env and leaves the original env exactly as it was: nothing under it is opened for writing.
``undo(env)`` swaps the old env back; ``confirm(env)`` deletes it.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement

from app.core import remedies
from app.core.base.disk import free_mb
from app.core.base.enums import ACCELERATORS, Phase, PhaseState
from app.core.base.errors import BadInput, Cancelled, ForFace, UserError
from app.core.base.events import Event, LogEvent, PhaseEvent, StepEvent, ignore
from app.core.base.locks import env_lock
from app.core.base.oserrors import os_error_text
from app.core.base.paths import new_log_path
from app.core.base.requirements import canonical, requirement_name
from app.core.base.secrets import append_private, write_private
from app.core.base.text import Text, join, msg, render
from app.core.base.wheels import variant_of_version
from app.core.compat.data import CompatData, load_compat
from app.core.env import activate_vars, guard, registry
from app.core.env.backends import WINDOWS, backend_for, env_python, uv_bin, uv_extras
from app.core.env.distinfo import TORCH_FAMILY, Dist, TorchBuildInfo, distributions, requires_dist, torch_build
from app.core.env.registry import EnvRecord, PendingUpgrade, Verification
from app.core.install import InstallPlan, InstallRequest, install
from app.core.lifecycle import staging as st
from app.core.lifecycle.common import (
    Failed,
    Refused,
    env_root,
    python_version_of,
    pyvenv_cfg,
    record_unless_pending,
)
from app.core.lifecycle.companions import CompanionReport, check_companions, import_names
from app.core.lifecycle.remove import delete_tree
from app.core.lifecycle.sizes import tree_size
from app.core.measure.probe import ProbeFailed
from app.core.measure.verify import VerifyReport, run_verify
from app.core.net.indexes import check_url, display_url
from app.core.proc import runner
from app.core.sources.settings import SourceSettings, torch_origin

if TYPE_CHECKING:  # start-up: only the types
    from app.core.detection.system import SystemReport

__all__ = ["UpgradePlan", "UpgradeResult", "base_python", "confirm", "plan_upgrade", "recover", "swap_in", "undo",
           "upgrade"]

#: Never carried over as "the user's packages": installers and build tools come with the env.
_TOOLING = frozenset({"pip", "setuptools", "wheel", "uv"})


@dataclass(frozen=True)
class UpgradePlan:
    env: Path
    staging: Path
    old_copy: Path
    base_python: Path
    python_version: str | None
    current: TorchBuildInfo
    packages: tuple[str, ...]  # the new torch family, pinned
    keep: tuple[str, ...]  # the user's other requirements, as they are now
    index: SourceSettings
    companions: CompanionReport
    new_torch: str
    expect: str | None = None
    record: EnvRecord | None = None
    notes: tuple[Text, ...] = ()
    timeout_s: float | None = None
    env_vars: tuple[tuple[str, str], ...] = ()  # what the new env's activation sets (app.core.env.activate_vars)

    def to_dict(self) -> dict[str, object]:
        return {"env": str(self.env), "staging": str(self.staging), "old_copy": str(self.old_copy),
                "base_python": str(self.base_python), "python": self.python_version,
                "current": self.current.to_dict(), "new_torch": self.new_torch, "packages": list(self.packages),
                "keep": list(self.keep), "torch_index": self.index.torch_index,
                "default_index": self.index.default_index, "extra_index_urls": list(self.index.extra_index_urls),
                "find_links": list(self.index.find_links), "companions": self.companions.to_dict(),
                "expect": self.expect, "notes": [str(n) for n in self.notes]}


@dataclass(frozen=True)
class UpgradeResult:
    env: str
    old_copy: str
    old_torch: str
    new_torch: str | None
    verify: VerifyReport
    duration_s: float
    log_path: str
    fixed_paths: tuple[str, ...] = ()
    moved: tuple[str, ...] = ()  # the user's top-level files carried into the new env
    guard: guard.GuardStatus | None = None
    timings: Mapping[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {"env": self.env, "old_copy": self.old_copy, "old_torch": self.old_torch, "new_torch": self.new_torch,
                "verify": self.verify.to_dict(), "duration_s": self.duration_s, "log_path": self.log_path,
                "fixed_paths": list(self.fixed_paths), "moved": list(self.moved),
                "guard": self.guard.to_dict() if self.guard else None, "timings": dict(self.timings)}


# --------------------------------------------------------------------------- planning

def base_python(env: Path) -> Path | None:
    """The interpreter a venv was made from (its pyvenv.cfg ``home``), or None."""
    cfg = pyvenv_cfg(env)
    version = python_version_of(env) or ""
    minor = ".".join(version.split(".")[:2])
    home = cfg.get("home")
    names = ["python.exe"] if WINDOWS else [f"python{minor}" if minor else "python3", "python3", "python"]
    if home:
        for name in names:
            cand = Path(home) / name
            if cand.exists():
                return cand
    py = env_python(env)
    try:
        real = py.resolve()
    except OSError:
        return None
    return real if real.exists() and env not in real.parents else None


def _markers(python: str | None) -> dict[str, str]:
    if not python:
        return {"extra": ""}
    return {"extra": "", "python_version": ".".join(python.split(".")[:2]), "python_full_version": python}


def family_closure(dists: Mapping[str, Dist], python: str | None) -> set[str]:
    """The torch family and everything it depends on (as installed), by canonical name."""
    todo = [n for n in TORCH_FAMILY if n in dists]
    seen: set[str] = set(todo)
    while todo:
        d = dists.get(todo.pop())
        if d is None:
            continue
        for line in requires_dist(d):
            try:
                req = Requirement(line)
                if req.marker is not None and not req.marker.evaluate(_markers(python)):
                    continue
            except (InvalidRequirement, InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
                continue
            name = canonical(req.name)
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def _direct_url(dist: Dist) -> str | None:
    """``name @ url`` / ``-e path`` for a package installed from a URL or a folder (PEP 610)."""
    try:
        data = json.loads((dist.path / "direct_url.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(url, str):
        return None
    if (data.get("dir_info") or {}).get("editable"):
        return f"-e {url}"
    vcs = data.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") and vcs.get("commit_id"):
        return f"{dist.name} @ {vcs['vcs']}+{url}@{vcs['commit_id']}"
    return f"{dist.name} @ {url}"


def keep_requirements(dists: Mapping[str, Dist], python: str | None) -> tuple[str, ...]:
    """The user's packages to carry into the new env (torch family, its dependencies and tooling left out)."""
    skip = family_closure(dists, python) | _TOOLING
    out = []
    for name in sorted(dists):
        if name in skip:
            continue
        out.append(_direct_url(dists[name]) or f"{name}=={dists[name].version}")
    return tuple(out)


def _pinned_version(packages: Sequence[str], name: str) -> str | None:
    for p in packages:
        try:
            req = Requirement(p)
        except InvalidRequirement:
            continue
        if canonical(req.name) == name:
            for spec in req.specifier:
                if spec.operator in ("==", "==="):
                    return spec.version
    return None


def _family_pins(packages: tuple[str, ...], report: CompanionReport, torch_label: str | None) -> tuple[str, ...]:
    """The packages, plus a pin for each installed family member they do not name."""
    named = {requirement_name(p) for p in packages}
    extra = []
    for name in ("torchvision", "torchaudio"):
        version = report.family.get(name)
        if name not in named and version:
            full = version if "+" in version or not torch_label else f"{version}+{torch_label}"
            extra.append(f"{name}=={full}")
    return (*packages, *extra)


def _sources(record: EnvRecord | None, torch_index: str | None, extra: Sequence[str], links: Sequence[str],
             default_index: str | None) -> SourceSettings:
    src = record.sources if record is not None else SourceSettings()
    return SourceSettings(torch_index=torch_index or src.torch_index, default_index=default_index or src.default_index,
                          extra_index_urls=tuple(extra) or src.extra_index_urls,
                          find_links=tuple(links) or src.find_links)


@dataclass(frozen=True)
class _Target:
    packages: tuple[str, ...]
    torch_index: str | None
    expect: str | None
    env_vars: tuple[tuple[str, str], ...] | None = None  # the recommendation's; None: the env keeps its own


def _target(python: str | None, dists: Mapping[str, Dist], *, torch: str | None, packages: Sequence[str] | None,
            variant: str | None, backend: str | None, report: SystemReport | None,
            data: CompatData | None) -> _Target:
    if packages:
        for p in packages:
            requirement_name(p)  # validates (BadInput names a bad one)
        return _Target(tuple(packages), None, None)
    from app.core.detection.detect import detect  # start-up: detection only when no packages were given
    from app.core.recommend import Choices, recommend  # start-up: the engine only runs here

    fam = [n for n in TORCH_FAMILY if n in dists]
    minor = ".".join((python or "").split(".")[:2]) or None
    rec = recommend(report or detect(), data, Choices(torch=torch, variant=variant, backend=backend, python=minor,
                                                      packages=tuple(fam)))
    b = str(rec.backend)
    # the PyTorch server, or its replacement (TORCH_SETUP_TORCH_INDEX), as for an install
    return _Target(tuple(p for p in rec.packages if requirement_name(p) in TORCH_FAMILY), torch_origin(rec.index_url),
                   b if b in ACCELERATORS else None, tuple(rec.env_vars.items()))


# long: one check after another, each refusing with its own sentence before anything is written
def plan_upgrade(target: str | os.PathLike[str], *, torch: str | None = None, packages: Sequence[str] | None = None,
                 variant: str | None = None, backend: str | None = None, index_url: str | None = None,
                 extra_index_urls: Sequence[str] = (), find_links: Sequence[str] = (),
                 default_index_url: str | None = None, expect: str | None = None, report: SystemReport | None = None,
                 data: CompatData | None = None, timeout_s: float | None = None) -> UpgradePlan:
    """Everything about the upgrade, decided without writing anything. Raises Refused / BadInput."""
    recovered = recover(_path_of(target))  # first: a kill may have left the env's path empty for a moment
    env = env_root(target)
    if (env / "conda-meta").is_dir():
        raise Refused(msg("envs.upgrade_conda", "{path} is a conda environment: a staged upgrade swaps venvs only",
                          path=str(env)),
                      msg("envs.upgrade_conda_hint", "Use `torch-setup envs repair` with --torch VERSION for a conda "
                          "environment (it is snapshotted and restored on failure)."))
    if os.path.ismount(env):
        raise Refused(msg("envs.upgrade_mount", "{path} is a mount point, so it cannot be swapped by renaming",
                          path=str(env)))
    record = record_unless_pending(env)
    dists = distributions(env)
    current = torch_build(env, dists)
    if current is None:
        raise Refused(msg("envs.upgrade_no_torch", "{path} has no PyTorch to upgrade", path=str(env)),
                      msg("envs.upgrade_no_torch_hint", "Install it: torch-setup install --env {path} --existing",
                          path=str(env)))
    base = base_python(env)
    if base is None:
        raise Refused(msg("envs.upgrade_no_base", "The Python that {path} was made from cannot be found, so a "
                          "staging environment cannot be built on it", path=str(env)),
                      msg("envs.upgrade_no_base_hint", "Repair the environment instead (torch-setup envs repair)."))
    if uv_bin() is None:
        raise Refused(msg("install.uv_missing", "uv was not found (the uv package is missing from the assistant)"))
    python = python_version_of(env)
    data = data if data is not None else _compat()
    tgt = _target(python, dists, torch=torch, packages=packages, variant=variant, backend=backend, report=report,
                  data=data)
    new_torch = _pinned_version(tgt.packages, "torch")
    if not new_torch:
        raise Refused(msg("envs.upgrade_unpinned", "The new torch must be an exact version (torch==X.Y.Z)"),
                      msg("envs.upgrade_unpinned_hint", "Pass --torch X.Y or --packages torch==X.Y.Z ..."))
    if new_torch in (current.version, current.full_version):
        raise Refused(msg("envs.upgrade_same", "torch {version} is already installed in {path}", version=new_torch,
                          path=str(env)),
                      msg("envs.upgrade_same_hint", "To reinstall it, use `torch-setup envs repair`."))
    given = {n: v for n in ("torchvision", "torchaudio") if (v := _pinned_version(tgt.packages, n))}
    comp = check_companions(dists, new_torch, data, python=python, new_family=given)
    if not comp.ok:
        raise Refused(msg("envs.upgrade_conflicts", "Nothing was changed: {count} installed package(s) do not fit "
                          "torch {torch}: {list}", count=len(comp.conflicts), torch=new_torch,
                          list="; ".join(str(c.text) for c in comp.conflicts)),
                      msg("envs.upgrade_conflicts_hint", "Upgrade or remove those packages first, or choose a torch "
                          "version they accept (--torch)."))
    label = new_torch.split("+", 1)[1] if "+" in new_torch else None
    pkgs = _family_pins(tgt.packages, comp, label)
    index = _sources(record, index_url or tgt.torch_index, extra_index_urls, find_links, default_index_url)
    _refuse_unreachable(index, new_torch)
    need = max(2048, tree_size(env, max_seconds=2.0).bytes // (1024 * 1024) // 2)
    free = free_mb(env.parent)
    if free is not None and free < need:
        raise Refused(msg("envs.upgrade_disk", "Only {free} MB are free next to {path}; the staging environment "
                          "needs about {need} MB", free=free, need=need, path=str(env)))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    notes: list[Text] = ([msg("envs.recovered", "An interrupted upgrade was found: {what}.", what=recovered)]
                         if recovered is not None else [])
    notes += comp.warnings
    if record is not None and record.credentials_removed:
        notes.append(msg("envs.credentials_not_stored", "the index needed credentials, which were not stored: "
                         "they come from your netrc / keyring (or pass the index again)"))
    return UpgradePlan(env=env, staging=env.parent / f".{env.name}.torch-setup-staging",
                       old_copy=env.parent / f".{env.name}.torch-setup-old-{stamp}", base_python=base,
                       python_version=python, current=current, packages=pkgs,
                       keep=keep_requirements(dists, python), index=index, companions=comp, new_torch=new_torch,
                       expect=expect or tgt.expect, record=record, notes=tuple(notes), timeout_s=timeout_s,
                       env_vars=tuple(activate_vars.recorded(env).items()) if tgt.env_vars is None else tgt.env_vars)


def _refuse_unreachable(index: SourceSettings, torch: str) -> None:
    """Refuses a plan whose PyTorch index cannot be reached (and no wheel folder is given): the upgrade
    would only end in the installer's network errors."""
    url = index.torch_index
    if not url or index.find_links or not url.startswith(("http://", "https://")):
        return
    why = check_url(url)
    if why is None:
        return
    raise Refused(msg("envs.upgrade_index_unreachable", "The PyTorch index {url} cannot be reached: {why}. The "
                      "upgrade cannot download torch {torch}; nothing was changed.", url=display_url(url), why=why,
                      torch=torch),
                  ForFace(msg("envs.upgrade_index_unreachable_gui", "Check the network; or put the wheel files in a "
                              "folder, choose it as \"Local wheels folder\" under Advanced and press \"Plan again\"."),
                          msg("envs.upgrade_index_unreachable_cli", "Check the network; or pass --find-links DIR with "
                              "the wheel files, or --index-url with a mirror that answers.")))


def _compat() -> CompatData | None:
    try:
        return load_compat()
    except BadInput:
        return None


# --------------------------------------------------------------------------- running

STAGING_MARKER = ".torch-setup-staging"


def staging_plan(p: UpgradePlan, requirements: Path | None) -> InstallPlan:
    """The install runner's plan for the staging env: a new relocatable uv venv on the env's own
    base interpreter, the new stack from the upgrade's sources, the kept packages' requirements."""
    return InstallPlan(request=InstallRequest(p.staging, python=str(p.base_python), packages=p.packages,
                                              timeout_s=p.timeout_s),
                       env_path=p.staging, backend=backend_for("venv", "uv"), python=None,
                       python_request=str(p.base_python), packages=p.packages, index=p.index, new_env=True,
                       estimate_mb=0, estimate_why="", requirements_file=requirements, relocatable=True)


class _Run:
    def __init__(self, p: UpgradePlan, emit: Callable[[Event], None], cancel: runner.CancelToken) -> None:
        self.p = p
        self.emit = emit
        self.cancel = cancel
        self.log = new_log_path("upgrade")
        self.started = time.monotonic()
        self.timings: dict[str, float] = {}
        self.staging_id: list[int] | None = None  # the staging env this run made (st.ident)
        self._phase_started: dict[Phase, float] = {}
        # A guarded env the assistant itself was started from must not constrain the new stack.
        self.child_env = runner.clean_env(uv_extras(), drop=("UV_CONSTRAINT", "PIP_CONSTRAINT"))

    def info(self, text: str) -> None:
        self.emit(LogEvent(text, "info"))
        try:
            append_private(self.log, f"# {text}\n")  # masked, mode 0600: the plan names the index
        except OSError:
            pass

    def _run(self, argv: list[str], on_line: runner.LineCallback | None = None,
             timeout: float | None = None) -> runner.RunResult:
        res = runner.run(argv, env=self.child_env, cancel=self.cancel, log_path=self.log,
                         timeout=timeout if timeout is not None else self.p.timeout_s,
                         on_line=on_line or (lambda s, ln: self.emit(LogEvent(ln, s))))
        if res.cancelled:
            raise Cancelled(log_path=self.log)
        return res

    def _fail(self, text: Text, res: runner.RunResult | None = None) -> Failed:
        lines = runner.relevant_lines(res.tail, 12) if res is not None else []
        err = Failed(text, msg("envs.upgrade_unchanged", "Your environment was not changed."), lines=lines,
                     log_path=self.log)
        if res is not None:  # the installer's output in words (the catalogue's), not only its cause chain
            p = self.p
            err.remedies = remedies.diagnose([*res.tail, res.start_error or ""], remedies.Context(
                path=str(p.env), python=p.python_version or "", torch=p.new_torch, installer="uv"))
        return err

    def build(self) -> None:
        """Create the staging env and install the new stack plus the kept packages into it, through
        the install runner (:func:`app.core.install.install`: the env's own interpreter only, one
        torch build, the installer's failures through the remedy catalogue; the staging env removed
        again when it fails)."""
        p = self.p
        if os.path.lexists(p.staging):  # a staging env an interrupted run left: ours (the marker says so)
            if p.staging.is_symlink() or not (p.staging / STAGING_MARKER).is_file():
                raise Refused(msg("envs.upgrade_staging_taken", "{path} exists and holds no mark of this assistant "
                                  "(a folder of yours, or a staging environment an upgrade stopped while making): it "
                                  "is left as it is", path=str(p.staging)),
                              msg("envs.upgrade_staging_taken_hint", "Move or rename that folder (or delete it, if "
                                  "it is an unfinished staging environment), then run the upgrade again."))
            delete_tree(p.staging)
        reqs = self.log.with_suffix(".requirements.txt")
        # mode 0600, exact (a package kept from a URL is fetched from it); it goes once the installer read it
        write_private(reqs, "".join(line + "\n" for line in p.keep), masked=False)
        self.info(f"kept packages ({len(p.keep)}): {', '.join(p.keep)}")
        try:
            install(staging_plan(p, reqs if p.keep else None), on_event=self._staging_event, cancel=self.cancel,
                    checks=(), log_path=self.log, env_drop=("UV_CONSTRAINT", "PIP_CONSTRAINT"))
        except Cancelled:
            raise Cancelled(log_path=self.log) from None
        except UserError as exc:
            failed = Failed(msg("envs.upgrade_install_failed", "Installing the new stack into the staging environment "
                                "failed ({why})", why=exc.message), msg("envs.upgrade_unchanged", "Your environment "
                                                                        "was not changed."),
                            lines=exc.lines, log_path=exc.log_path or self.log)
            failed.remedies = exc.remedies
            raise failed from None
        finally:
            reqs.unlink(missing_ok=True)

    def _staging_event(self, event: Event) -> None:
        """The install runner's events, less its (empty) pre-flight; the staging env is marked as
        ours as soon as it exists, so a run that was killed can clear it next time."""
        if isinstance(event, PhaseEvent):
            if event.name == Phase.PREFLIGHT:
                return
            if event.name == Phase.CREATE_ENV and event.state == PhaseState.END:
                self.staging_id = st.ident(self.p.staging)  # made by this run: the cleanup deletes only it
                (self.p.staging / STAGING_MARKER).write_text(str(self.p.env) + "\n", encoding="utf-8")
            if event.state == PhaseState.START:
                self._phase_started[event.name] = time.monotonic()
            elif event.state == PhaseState.END and event.name in self._phase_started:
                key = {Phase.CREATE_ENV: "create_s", Phase.INSTALL: "install_s"}.get(event.name, f"{event.name}_s")
                self.timings[key] = round(time.monotonic() - self._phase_started[event.name], 3)
        self.emit(event)

    def activation_vars(self) -> None:
        """The variables the new env's activation sets (the GPUs PyTorch sees), so that its verification
        runs with them too; a script that cannot be written is said, never a failure."""
        try:
            activate_vars.apply(self.p.staging, dict(self.p.env_vars))
        except (OSError, ValueError) as exc:
            self.info(f"the activation's variables could not be written: {exc}")

    def verify(self) -> VerifyReport:
        p = self.p
        t0 = time.monotonic()
        self.emit(PhaseEvent(Phase.VERIFY, PhaseState.START, str(p.staging)))
        try:
            report = run_verify(env_python(p.staging), on_event=self.emit, cancel=self.cancel, expect=p.expect)
        except ProbeFailed as exc:
            self.emit(PhaseEvent(Phase.VERIFY, PhaseState.FAILED, render(exc.message)[:200]))
            raise Failed(msg("envs.upgrade_verify_error", "The new stack does not work in the staging environment: "
                             "{why}", why=render(exc.message)[:300]),
                         msg("envs.upgrade_unchanged", "Your environment was not changed."),
                         lines=list(exc.lines)[-12:], log_path=exc.log_path or self.log) from None
        if not report.ok:
            self.emit(PhaseEvent(Phase.VERIFY, PhaseState.FAILED))
            raise Failed(msg("envs.upgrade_verify_failed", "The new stack failed verification in the staging "
                             "environment ({names})", names=", ".join(c.name for c in report.failed)),
                         msg("envs.upgrade_unchanged", "Your environment was not changed."),
                         lines=[f"{c.name}: {c.detail}" for c in report.failed][:12],
                         log_path=Path(report.log_path) if report.log_path else self.log)
        for module in import_names(p.companions.extensions):
            res = self._run([str(env_python(p.staging)), "-I", "-c", f"import {module}"], timeout=300)
            self.emit(StepEvent(f"import:{module}", "passed" if res.ok else "failed"))
            if not res.ok:
                raise self._fail(msg("envs.upgrade_extension_failed", "{module} does not import with the new torch "
                                     "(it was built for another release)", module=module), res)
        self.emit(PhaseEvent(Phase.VERIFY, PhaseState.END))
        self.timings["verify_s"] = round(time.monotonic() - t0, 3)
        return report

    def swap(self) -> tuple[list[str], list[str]]:
        """Fix the paths, swap, carry the user's files. Returns (files fixed, entries moved)."""
        p = self.p
        self.cancel.raise_if_cancelled()
        self.emit(StepEvent("swap", "running", str(p.env)))
        fixed = st.fix_paths(p.staging, str(p.staging), str(p.env))
        try:
            moved = swap_in(p.env, p.staging, p.old_copy, self.info)
        except OSError as exc:  # before the swap, nothing was moved; after it, the journal puts all back
            self.roll_back()
            raise Failed(msg("envs.upgrade_swap_failed", "The new stack worked but could not be moved into place: "
                             "{why}", why=os_error_text(exc)),
                         msg("envs.upgrade_unchanged", "Your environment was not changed."), log_path=self.log) from exc
        try:
            guard.carry_pip_conf(p.old_copy, p.env)  # the user's own part byte for byte; a link stays a link
        except OSError as exc:
            self.info(f"could not carry pip's configuration over: {exc}")
        self.emit(StepEvent("swap", "passed", str(p.env)))
        return fixed, moved

    def roll_back(self) -> None:
        """Undo whatever of the swap was done (the journal knows each folder by identity: the env that
        was there back at its path with the user's files, the new stack deleted), then the staging
        env this run made, if it is still at its path. Raises Failed when the journal cannot do it."""
        try:
            st.recover(self.p.env)
        except OSError as exc:
            raise Failed(msg("envs.upgrade_rollback_failed", "The upgrade failed and could not be put back: {why}",
                             why=os_error_text(exc)),
                         msg("envs.upgrade_rollback_failed_hint", "Nothing is deleted: the next torch-setup command on "
                             "{path} puts it back (its journal is kept).", path=str(self.p.env)),
                         log_path=self.log) from exc
        self.drop_staging()

    def commit(self, report: VerifyReport) -> tuple[list[str], list[str], dict[str, str], guard.GuardStatus | None]:
        """The verified stack in: swap, guard, record. Without its record the upgrade could never be
        confirmed or undone, so a record that cannot be written rolls the swap back (Failed).
        Returns (files fixed, entries carried, the new torch family, the guard's status)."""
        p = self.p
        fixed, moved = self.swap()
        new_family = {n: d.version for n, d in distributions(p.env).items() if n in TORCH_FAMILY}
        status = None
        try:
            status = guard.apply(p.env, guard.pins_for(new_family))
        except OSError as exc:
            self.info(f"the guard could not be written: {exc}")
        try:
            _record(p, report, new_family, status)
        except (OSError, BadInput) as exc:
            self.roll_back()
            why = os_error_text(exc) if isinstance(exc, OSError) else exc.message
            raise Failed(msg("envs.upgrade_not_recorded", "The new stack worked, but the upgrade could not be "
                             "recorded in the list of environments ({why}), so it could not be confirmed or undone "
                             "later", why=why),
                         msg("envs.upgrade_put_back", "Your environment was put back as it was, with your files in "
                             "it."), log_path=self.log) from exc
        st.clear_journal(p.env)  # committed: the registry holds the upgrade waiting for --confirm / --undo
        return fixed, moved, new_family, status

    def drop_staging(self) -> list[str]:
        """Delete the staging env this run made (checked by identity: a folder found there is not ours)."""
        if self.staging_id is not None and st.ident(self.p.staging) == self.staging_id:
            return delete_tree(self.p.staging)
        return []

    def stopped(self, exc: OSError) -> Failed:
        """A file-system error before the swap (a full disk, a folder that cannot be written), in words."""
        named = exc.filename
        where = os.fsdecode(named) if isinstance(named, (str, bytes, os.PathLike)) else str(self.p.staging)
        left = self.drop_staging()
        return Failed(msg("envs.upgrade_os_error", "The upgrade stopped before the swap: {why} ({path})",
                          why=os_error_text(exc), path=where),
                      msg("envs.upgrade_stopped_hint", "Your environment was not changed and the staging environment "
                          "{staging} was removed. Once that is fixed (room on the disk, a folder that can be written), "
                          "run the upgrade again.", staging=str(self.p.staging)) if not left else
                      msg("envs.upgrade_stopped_left_hint", "Your environment was not changed; the staging environment "
                          "{staging} could not be removed entirely ({problem}): delete it, then run the upgrade again.",
                          staging=str(self.p.staging), problem=left[0]),
                      log_path=self.log)


def swap_in(env: Path, staging: Path, old_copy: Path, info: Callable[[str], None]) -> list[str]:
    """The verified staging env in at ``env``, the old one aside at ``old_copy``, the user's own
    entries carried over; every step journaled by identity, so a kill at any point is rolled back
    by :func:`recover`. Returns the entries carried. Raises OSError when the swap itself fails
    (nothing was moved then)."""
    st.begin(env, op="upgrade", incoming=staging, aside=old_copy, disposable=True)
    try:
        st.swap(env, staging, old_copy)
    except OSError:
        st.clear_journal(env)
        raise
    # the staging marker goes only now: a staging env a kill left before this point still says it is ours
    (env / STAGING_MARKER).unlink(missing_ok=True)
    moved = []
    # the user's own: their top-level entries, and their files inside the env's layout (scripts in bin/,
    # loose modules and .pth files, etc/ ...) where the new env has nothing at that path
    names = [*st.foreign_entries(old_copy),
             *(rel for rel in st.user_files(old_copy) if not os.path.lexists(env / rel))]
    st.write_journal(env, carried=names)  # before the first move: a rollback knows what to bring back
    for name in names:  # after the swap: a problem here is reported, not raised
        try:
            (env / name).parent.mkdir(parents=True, exist_ok=True)
            os.rename(old_copy / name, env / name)
            moved.append(name)
        except OSError as exc:
            info(f"could not move {name} into the new environment: {exc}")
    # the activation scripts as the user had them (their edits kept; the env's path and Python are the
    # same, so they fit the new env), copied: the old env keeps its own until --confirm
    for rel in st.activation_scripts(old_copy):
        try:
            text = guard.strip_hook((old_copy / rel).read_bytes().decode("utf-8", "surrogateescape"))
            target = env / rel
            mode = (old_copy / rel).stat().st_mode & 0o777
            target.write_bytes(text.encode("utf-8", "surrogateescape"))
            os.chmod(target, mode)
        except OSError as exc:
            info(f"could not carry {rel} over: {exc}")
    return moved


def upgrade(p: UpgradePlan, *, on_event: Callable[[Event], None] | None = None,
            cancel: runner.CancelToken | None = None) -> UpgradeResult:
    """Run the plan. Raises Failed / Cancelled with the env unchanged, or returns after the swap."""
    run = _Run(p, on_event or ignore, cancel or runner.CancelToken())
    with env_lock(p.env, "upgrade"):
        run.info("upgrade plan: " + json.dumps(p.to_dict()))
        try:
            run.build()
            run.activation_vars()
            report = run.verify()
            run.cancel.raise_if_cancelled()
        except OSError as exc:  # a full disk, a folder that cannot be written: said in words, the staging env gone
            raise run.stopped(exc) from exc
        except BaseException:
            run.drop_staging()  # only the staging env this run made (a folder found there, not ours, stays)
            raise
        fixed, moved, new_family, status = run.commit(report)
    return UpgradeResult(str(p.env), str(p.old_copy), p.current.version, new_family.get("torch"), report,
                         round(time.monotonic() - run.started, 3), str(run.log), tuple(fixed), tuple(moved), status,
                         run.timings)


def _record(p: UpgradePlan, report: VerifyReport, family: dict[str, str], status: guard.GuardStatus | None) -> None:
    pending = PendingUpgrade(str(p.old_copy), p.current.version, family.get("torch"), registry.now(),
                             p.record.to_dict() if p.record is not None else {})

    sources, removed = registry.stored_sources(p.index)

    def change(old: EnvRecord | None) -> EnvRecord:
        base = old or EnvRecord(path=str(p.env), origin="installed", created=registry.now())
        return replace(base, torch=family.get("torch"), family=family, packages=p.packages,
                       python=p.python_version or base.python, installer="uv",
                       variant=variant_of_version(family.get("torch")) or p.current.variant,
                       sources=sources, credentials_removed=removed, verification=Verification.of(report),
                       guard=registry.GuardRecord(status.active, status.pins, registry.now()) if status else base.guard,
                       pending_upgrade=pending, updated=registry.now(), folder=registry.folder_of(p.env))

    registry.update(p.env, change)  # raises OSError / BadInput: the caller rolls the swap back


# --------------------------------------------------------------------------- undo / confirm

def _path_of(target: str | os.PathLike[str]) -> Path:
    """The env's path as given (it may be missing: a swap a kill interrupted; recover puts it back)."""
    return Path(os.path.abspath(os.path.expanduser(os.fspath(target))))


def _record_undone(env: Path) -> None:
    """The registry's record as it was before the upgrade (the one its pending upgrade kept)."""
    def change(old: EnvRecord | None) -> EnvRecord | None:
        if old is None or old.pending_upgrade is None:
            return old  # already put back
        back = old.pending_upgrade.old_record
        return replace(EnvRecord.from_dict(back), updated=registry.now()) if back else None

    registry.update(env, change)


def recover(env: Path) -> Text | None:
    """An upgrade or undo a kill interrupted, finished or rolled back (:func:`.staging.recover`).
    An upgrade killed after the registry recorded it (only its journal was left) is complete; an
    undo killed after its swap is finished (the registry's record put back, the new stack deleted).
    Returns what was done, in words that name where each folder is (None: nothing to do)."""
    j = st.read_journal(env)
    if "damaged" in j:  # kept aside by read_journal
        return st.damaged_text(env, j)
    if j.get("op") == "undo" and j.get("state") == "committed":
        _record_undone(env)
    if j.get("op") == "upgrade" and j.get("state") == "swapping" and j.get("incoming_id") is not None \
            and st.ident(env) == j.get("incoming_id"):
        rec = registry.find(env)
        if rec is not None and rec.pending_upgrade is not None and rec.pending_upgrade.old_path == j.get("aside"):
            st.clear_journal(env)
            return None
    return st.recover(env)


def leftovers(env: Path, *, but: str | None = None) -> list[Path]:
    """Folders an upgrade names beside ``env`` (an old copy, a staging env, an undone stack) other
    than ``but``: what an interrupted run, or a list of environments that was set aside, left."""
    try:
        names = sorted(p.name for p in env.parent.iterdir())
    except OSError:
        return []
    mine = f".{env.name}.torch-setup-"
    kinds = ("old-", "staging", "undone", "recovering")
    return [env.parent / n for n in names if n.startswith(mine) and n[len(mine):].startswith(kinds)
            and str(env.parent / n) != but]


def _pending(env: Path, recovered: Text | None = None) -> tuple[EnvRecord, PendingUpgrade]:
    """The upgrade of ``env`` waiting for --confirm / --undo; Refused naming what there is instead:
    what the recovery just did, and the folders an upgrade left beside the env that no record names."""
    rec = registry.find(env)
    if rec is None or rec.pending_upgrade is None:
        parts: list[Text] = [msg("envs.no_pending", "No upgrade of {path} is waiting to be confirmed or undone",
                                 path=str(env))]
        if recovered is not None:
            parts.append(msg("envs.recovered", "An interrupted upgrade was found: {what}.", what=recovered))
        left = leftovers(env)
        hint: Text = ""
        if left:
            parts.append(msg("envs.leftovers", "Beside it: {names}, left by an upgrade that no record names (a run "
                             "that was stopped, or a list of environments that was set aside).",
                             names=", ".join(p.name for p in left)))
            hint = msg("envs.leftovers_hint", "They are left as they are: look inside, keep what you need (an old "
                       "copy is the environment from before an upgrade; to go back to it, move {path} aside and "
                       "rename the copy to {name}), then delete them yourself.", path=str(env), name=env.name)
        raise Refused(join(parts, " "), hint)
    return rec, rec.pending_upgrade


def undo(target: str | os.PathLike[str]) -> dict[str, object]:
    """Swap the old env back in and delete the new stack (the registry record goes back too); the
    user's files in the new env (their top-level entries, their files inside its layout) go back
    with it; one the old env holds differently stops the undo before anything moves."""
    path = _path_of(target)
    finishing = st.read_journal(path).get("op") == "undo"  # an undo killed part-way: run again, it is finished
    recovered = recover(path)
    env = env_root(target)
    rec = registry.find(env)
    if finishing and recovered is not None and (rec is None or rec.pending_upgrade is None):
        return {"env": str(env), "restored_torch": rec.torch if rec else None, "removed_torch": None,
                "moved_back": [], "problems": [], "recovered": render(recovered)}
    _rec, pend = _pending(env, recovered)
    old = Path(pend.old_path)
    if not old.is_dir() or old.is_symlink():
        raise Refused(msg("envs.undo_gone", "The old environment {path} is no longer there, so the upgrade cannot "
                          "be undone", path=str(old)))
    with env_lock(env, "upgrade-undo"):
        names = _to_carry_back(env, old)
        # a name of its own, never one that exists (a folder there is not ours to delete)
        trash = st._free_name(env.parent / f".{env.name}.torch-setup-undone")
        st.begin(env, op="undo", incoming=old, aside=trash, disposable=False)  # a kill from here on: rolled back
        st.write_journal(env, carried=names)
        moved: list[str] = []
        for name in names:
            (old / name).parent.mkdir(parents=True, exist_ok=True)
            os.rename(env / name, old / name)
            moved.append(name)
        st.swap(env, old, trash)  # env <- the old env; trash <- the new stack
        st.write_journal(env, state="committed")  # from here a kill rolls forward (recover finishes it)
        _record_undone(env)
        problems = delete_tree(trash)
        st.clear_journal(env)
    return {"env": str(env), "restored_torch": pend.old_torch, "removed_torch": pend.new_torch,
            "moved_back": moved, "problems": problems, "recovered": render(recovered) if recovered else None}


def _to_carry_back(env: Path, old: Path) -> list[str]:
    """The user's entries in the upgraded env that go back into the old one on undo: their top-level
    entries and their files inside the layout (the ones the upgrade carried over, and any written
    since). Refused, before anything moves, when the old env holds one of them differently."""
    names = [n for n in st.foreign_entries(env) if not os.path.lexists(old / n)]
    clash = []
    for rel in st.user_files(env):
        if not os.path.lexists(old / rel):
            names.append(rel)
        elif not _same_bytes(old / rel, env / rel):
            clash.append(rel)
    if clash:
        raise Refused(msg("envs.undo_would_lose", "{path} holds {count} file(s) of yours that the old environment "
                          "holds differently ({names}): undoing would lose one of the two, so nothing was changed",
                          path=str(env), count=len(clash), names=", ".join(clash[:8])),
                      msg("envs.undo_would_lose_hint", "Copy the version you want to keep out of {path}, then run "
                          "--undo again.", path=str(env)))
    return names


def _would_be_lost(old: Path, env: Path) -> list[str]:
    """The user's files in the set-aside env that the env does not hold as they are (top-level
    entries and files inside the layout)."""
    lost = [n for n in st.foreign_entries(old) if not os.path.lexists(env / n)]
    return lost + [rel for rel in st.user_files(old) if not _same_bytes(env / rel, old / rel)]


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def confirm(target: str | os.PathLike[str]) -> dict[str, object]:
    """Keep the upgrade: delete the old env (only the folder the upgrade moved aside)."""
    recovered = recover(_path_of(target))
    env = env_root(target)
    _rec, pend = _pending(env, recovered)
    old = Path(pend.old_path)
    freed = 0
    problems: list[str] = []
    with env_lock(env, "upgrade-confirm"):
        if old.exists():
            if old.is_symlink() or old.parent != env.parent or ".torch-setup-old-" not in old.name:
                raise Refused(msg("envs.confirm_odd", "{path} is not the copy an upgrade set aside; it is not "
                                  "deleted", path=str(old)))
            lost = _would_be_lost(old, env)
            if lost:
                raise Refused(msg("envs.confirm_would_lose", "The old environment {path} still holds {count} "
                                  "file(s) of yours that the new one does not have ({names}): it is not deleted",
                                  path=str(old), count=len(lost), names=", ".join(lost[:8])),
                              msg("envs.confirm_would_lose_hint", "Copy what you need into {env} (or delete it from "
                                  "{path} if you do not), then run --confirm again.", env=str(env), path=str(old)))
            freed = tree_size(old).bytes
            problems = delete_tree(old)
        registry.update(env, lambda r: replace(r, pending_upgrade=None, updated=registry.now()) if r else None)
    return {"env": str(env), "deleted": str(old), "freed_bytes": freed, "problems": problems,
            "recovered": render(recovered) if recovered else None}
