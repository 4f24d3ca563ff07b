"""The values an install passes along: what was asked, what was planned, what was checked, what came out.

All frozen: :func:`~app.core.install.plan` turns an :class:`InstallRequest` into an
:class:`InstallPlan`, :func:`~app.core.install.preflight` judges the plan with :class:`Check` s,
and :func:`~app.core.install.install` returns an :class:`InstallResult`. Sentences in them
(check messages and hints, plan notes, warnings) are :data:`~app.core.base.text.Text`; their
``to_dict`` renders English and adds the codes.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from app.core.base.actions import Action
from app.core.base.enums import ACCELERATORS
from app.core.base.errors import BadInput
from app.core.base.schema import Record
from app.core.base.serial import to_jsonable
from app.core.base.text import Joined, Msg, Text, render
from app.core.detection.system import PythonInfo
from app.core.env.backends import EnvBackend, env_python
from app.core.install.bundle import Manifest
from app.core.net.indexes import display_url
from app.core.sources.download import Served
from app.core.sources.routing import Route
from app.core.sources.settings import SourceSettings

if TYPE_CHECKING:  # start-up: the recommendation engine is only imported where it runs
    from app.core.recommend import Recommendation

__all__ = ["ACCELERATORS", "Check", "CommandRun", "InstallPlan", "InstallRequest", "InstallResult", "Severity",
           "code_of", "masked"]

Severity = Literal["error", "warning"]


def code_of(text: Text, default: str) -> str:
    """The stable code of a text (``default`` for a plain, language-neutral string)."""
    return text.code if isinstance(text, (Msg, Joined)) else default


def masked(argv: Sequence[str]) -> tuple[str, ...]:
    """A command as it may be shown, logged or saved: credentials in URLs (``user:token@``,
    token query values) hidden in every argument."""
    return tuple(display_url(str(a)) for a in argv)


@dataclass(frozen=True)
class CommandRun(Record):
    """One command an install ran, as it ran (``argv`` masked): the report's record."""

    step: str  # create-env | seed-pip | install
    argv: tuple[str, ...]
    exit_code: int | None = None  # None: it did not finish (cancelled, could not start)
    duration_s: float = 0.0


@dataclass(frozen=True)
class InstallRequest:
    """What the user asked for. Everything optional has a sensible default.

    Requirements given as a list (argparse, the GUI) are stored as a tuple; where the packages
    come from is :attr:`sources` (:class:`~app.core.sources.settings.SourceSettings`).
    """

    env_path: str | os.PathLike[str]
    kind: str = "venv"  # venv | conda
    installer: str = "uv"  # uv | pip
    python: str | None = None  # "3.11" or a path; default: the recommendation's / ours
    packages: tuple[str, ...] | None = None  # explicit requirements; else the recommendation's
    recommendation: Recommendation | None = None
    sources: SourceSettings = field(default_factory=SourceSettings)  # folders, bundle, indexes, mirrors, proxy, CA
    existing: bool = False  # the user asked to add to an existing env
    timeout_s: float | None = None  # per command; None: no limit (cancel still works)
    lock: Path | None = None  # a pylock.toml: its files, pinned by hash, are what goes in (app.core.install.lockplan)

    def __post_init__(self) -> None:
        if self.packages is not None:
            object.__setattr__(self, "packages", tuple(str(p) for p in self.packages))
        if self.lock is not None:
            object.__setattr__(self, "lock", Path(self.lock))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {f.name: to_jsonable(getattr(self, f.name)) for f in fields(self)
                             if f.name != "recommendation"}
        d["recommendation"] = self.recommendation.to_dict() if self.recommendation is not None else None
        src = d["sources"]  # credentials never leave the process
        for key in ("proxy", "torch_index", "default_index"):
            if src.get(key):
                src[key] = display_url(str(src[key]))
        src["extra_index_urls"] = [display_url(u) for u in self.sources.extra_index_urls]
        return d


@dataclass(frozen=True)
class Check:
    """One pre-flight check. ``ok`` False with severity "error" stops the install.

    ``name`` says what was checked (``backend``, ``python``, ``target``, ``disk``,
    ``reach:<what>``; on Windows ``vcruntime``, ``path``, ``cloud``); ``code`` names the outcome
    (the message's code unless given), stable across languages and releases. ``actions``: what
    the user can do about a failed one (a shorter folder, the runtime's installer), as the faces
    show remedies' actions.
    """

    name: str
    ok: bool
    message: Text
    hint: Text = ""
    severity: Severity = "error"
    code: str = ""
    route: Route | None = field(default=None, compare=False, repr=False)  # the verified sources (reach:torch index)
    actions: tuple[Action, ...] = ()

    def __post_init__(self) -> None:
        if not self.code:
            object.__setattr__(self, "code", code_of(self.message, f"preflight.{self.name}"))

    @property
    def blocking(self) -> bool:
        return not self.ok and self.severity == "error"

    @property
    def status(self) -> Literal["ok", "warning", "error"]:
        """How a checklist shows it: passed, a warning, or blocking."""
        if self.ok:
            return "ok"
        return "warning" if self.severity == "warning" else "error"

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "code": self.code, "ok": self.ok, "severity": self.severity,
                             "message": render(self.message, lang), "hint": render(self.hint, lang)}
        if self.actions:
            d["actions"] = [a.to_dict() for a in self.actions]
        if self.route is not None:
            d["sources"] = [{"id": v.source.id, "name": render(v.source.name, lang),
                             "url": display_url(v.source.url), "ok": v.ok, "reason": render(v.reason, lang),
                             "speed_bps": v.speed_bps, "hash_checked": v.hash_checked} for v in self.route.verdicts]
        return d


@dataclass(frozen=True)
class InstallPlan:
    """Everything decided before anything is written (see :func:`~app.core.install.plan`)."""

    request: InstallRequest  # what was asked
    env_path: Path  # absolute
    backend: EnvBackend  # venv with uv or pip, or conda
    python: PythonInfo | None  # None: uv will look for / download ``python_request``
    python_request: str | None
    packages: tuple[str, ...]  # requirement strings, torch first
    index: SourceSettings  # where the packages come from, resolved (the torch index filled in, a bundle's wheels)
    new_env: bool  # False: installing into an environment that exists
    estimate_mb: int  # disk the install will take
    estimate_why: Text
    variant: str | None = None
    bundle_manifest: Manifest | None = None
    requirements_file: Path | None = None
    notes: tuple[Text, ...] = ()
    python_notes: tuple[str, ...] = ()  # why interpreters that were tried did not fit
    # the pip the installer will find in the env (pip >= 24.1 reports raw progress); () unknown
    pip_version: tuple[int, ...] = ()
    # installed again although the installed version fits (a repair): replaced by the installer only
    # once it has the new files
    reinstall: tuple[str, ...] = ()
    # uv's key for the Python to look for or download when none here fits
    # (``cpython-3.12-windows-x86_64-none``): a version alone lets uv take an interpreter of another
    # architecture (the 32-bit one that was passed over); None where uv is not asked for one
    uv_python: str | None = None
    relocatable: bool = False  # the new env's folder is renamed afterwards (the staged upgrade)

    @property
    def kind(self) -> str:
        """``venv`` or ``conda``."""
        return self.backend.kind

    @property
    def installer(self) -> str:
        """``uv``, ``pip`` or ``conda``: what installs the packages."""
        return self.backend.installer

    @property
    def recommendation(self) -> Recommendation | None:
        """The recommendation this plan follows: the request's, else the one the bundle was built for."""
        if self.request.recommendation is not None:
            return self.request.recommendation
        return self.bundle_manifest.recommendation if self.bundle_manifest is not None else None

    @property
    def expected_accelerator(self) -> str | None:
        """The accelerator backend the verification should find usable (None: CPU or unknown)."""
        rec = self.recommendation
        backend = str(rec.backend) if rec is not None else None
        return backend if backend in ACCELERATORS else None

    def create_steps(self) -> list[tuple[str, list[str]]]:
        """(step, argv) that make the new env, pip included (a uv env is seeded with it); [] for an existing env."""
        if not self.new_env:
            return []
        steps = [("create-env", argv) for argv in self.backend.create_argv(
            self.env_path, self.python, self.uv_python or self.python_request, idx=self.index,
            relocatable=self.relocatable)]
        seed = self.backend.seed_argv(self.env_path, self.python, self.index)
        return steps + ([("seed-pip", seed)] if seed else [])

    def install_argv(self) -> list[str]:
        """The install command itself."""
        return self.backend.install_argv(self.env_path, self.packages, self.index,
                                         requirements=self.requirements_file, pip_version=self.pip_version,
                                         reinstall=self.reinstall)

    def commands(self) -> list[list[str]]:
        """The commands install() will run, in order: exactly these, and nothing else."""
        return [argv for _, argv in self.create_steps()] + [self.install_argv()]

    def shown_commands(self) -> list[tuple[str, ...]]:
        """:meth:`commands` as they may be shown or saved (credentials masked)."""
        return [masked(c) for c in self.commands()]

    @property
    def env_python(self) -> Path:
        return env_python(self.env_path, self.kind)

    def _commands_or_empty(self) -> list[list[str]]:
        try:
            return self.commands()
        except BadInput:  # no interpreter yet: the pre-flight says so
            return []

    def to_dict(self) -> dict[str, Any]:
        return {
            "env_path": str(self.env_path),
            "kind": self.kind,
            "installer": self.installer,
            "backend": self.backend.describe(),
            "python": self.python.to_dict() if self.python else None,
            "python_request": self.python_request,
            "uv_python": self.uv_python,
            "packages": list(self.packages),
            "torch_index": display_url(self.index.torch_index) if self.index.torch_index else None,
            "default_index": display_url(self.index.default_index) if self.index.default_index else None,
            "extra_index_urls": [display_url(u) for u in self.index.extra_index_urls],
            "find_links": [str(f) for f in self.index.find_links],
            "offline": self.index.offline,
            "new_env": self.new_env,
            "estimate_mb": self.estimate_mb,
            "estimate_why": render(self.estimate_why),
            "variant": self.variant,
            "bundle": str(self.request.sources.bundle) if self.request.sources.bundle else None,
            "commands": [list(masked(c)) for c in self._commands_or_empty()],
            "notes": [render(n) for n in self.notes],
            "note_codes": [code_of(n, "install.note") for n in self.notes],
        }


@dataclass(frozen=True)
class InstallResult:
    env_path: Path
    python: Path
    torch_version: str | None
    log_path: Path | None
    duration_s: float
    packages: dict[str, str]  # what the env holds afterwards (name -> version)
    kind: str = "venv"
    installer: str = "uv"
    created: bool = True
    warnings: tuple[Text, ...] = ()
    downloads: tuple[Served, ...] = ()  # who served each wheel (our own downloads; empty when the installer fetched)
    commands_run: tuple[CommandRun, ...] = ()  # what ran, step by step, as it ran (masked)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {f.name: to_jsonable(getattr(self, f.name)) for f in fields(self)
                             if f.name not in ("warnings", "downloads", "commands_run")}
        d["warnings"] = [render(w) for w in self.warnings]
        d["warning_codes"] = [code_of(w, "install.warning") for w in self.warnings]
        d["downloads"] = [s.to_dict() for s in self.downloads]
        d["commands_run"] = [c.to_dict() for c in self.commands_run]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> InstallResult:
        """Rebuild a saved result (texts come back as the English they were saved as)."""
        log = d.get("log_path")
        return cls(env_path=Path(d["env_path"]), python=Path(d["python"]), torch_version=d.get("torch_version"),
                   log_path=Path(log) if log else None, duration_s=float(d.get("duration_s") or 0.0),
                   packages={str(k): str(v) for k, v in (d.get("packages") or {}).items()},
                   kind=str(d.get("kind", "venv")), installer=str(d.get("installer", "uv")),
                   created=bool(d.get("created", True)), warnings=tuple(str(w) for w in d.get("warnings") or ()),
                   downloads=tuple(Served.from_dict(s) for s in d.get("downloads") or () if isinstance(s, dict)),
                   commands_run=tuple(CommandRun.from_dict(c) for c in d.get("commands_run") or ()
                                      if isinstance(c, dict)))
