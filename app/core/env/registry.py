"""The registry of environments: what this app made (or installed into, or checked), and how it went.

One JSON file in the per-user data folder (:func:`app.core.base.paths.data_dir`), ``environments.json``::

    {"schema_version": 1, "environments": [{"path": ..., "kind": "venv", "python": "3.11.7", ...}]}

* Written atomically (a temporary file in the same folder, fsync, ``os.replace``) under a lock, so
  two runs never interleave their read-modify-write.
* Validated on load, field by field. A file that is not valid JSON or does not match the schema is
  reported (:attr:`Registry.problem`) and set aside as ``environments.json.corrupt-<time>``, never
  a crash; a file written by a newer version is reported and left alone (no write touches it).
* Sources are stored WITHOUT credentials: ``user:token@`` is removed from every URL and query
  tokens are masked (:func:`clean_url`); :attr:`Sources.credentials_removed` says it happened.

:func:`record_install` records the env after every successful install (the CLI's ``install``, the
answer-file run, the wizard, the session), through :mod:`app.core.lifecycle.protect`, which first
applies the torch guard's policy: the registry itself only keeps records and changes no env.
"""
from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from app.core.base.errors import BadInput
from app.core.base.locks import EnvLock, acquire
from app.core.base.paths import data_dir, identity
from app.core.base.schema import read_state, set_aside
from app.core.base.secrets import mask, write_private
from app.core.base.text import Text, msg
from app.core.base.wheels import variant_of_version
from app.core.env import guard as guard_mod
from app.core.env.backends import IndexOptions
from app.core.env.distinfo import TORCH_FAMILY

if TYPE_CHECKING:  # start-up: the install and verify modules are only needed for their types here
    from _typeshed import DataclassInstance

    from app.core.install.request import InstallPlan, InstallResult
    from app.core.measure.verify import VerifyReport

__all__ = [
    "ORIGINS",
    "SCHEMA_VERSION",
    "EnvRecord",
    "GuardRecord",
    "KernelRecord",
    "PendingUpgrade",
    "Registry",
    "Sources",
    "Verification",
    "clean_url",
    "env_key",
    "find",
    "forget",
    "guard_facts",
    "load",
    "now",
    "record_install",
    "record_verification",
    "record_verify",
    "registry_file",
    "update",
]

SCHEMA_VERSION = 1
FILE_NAME = "environments.json"
#: created: this app made the env; installed: it installed into an existing env; checked: found and checked.
ORIGINS = ("created", "installed", "checked")


def now() -> str:
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")


def env_key(path: str | os.PathLike[str]) -> str:
    """How two spellings of one env path compare (absolute, normalised; case-folded on Windows)."""
    p = os.path.normpath(os.path.abspath(os.path.expanduser(os.fspath(path))))
    return os.path.normcase(p)


_USERINFO = re.compile(r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]*@")


def clean_url(url: str) -> tuple[str, bool]:
    """``(url without credentials, whether any were removed)``: ``user:token@`` goes, query tokens are masked."""
    stripped = _USERINFO.sub(r"\g<scheme>", url)
    masked = mask(stripped)
    return masked, (stripped != url or masked != stripped)


class _Invalid(ValueError):
    """A registry file that does not match the schema (the message says where)."""


def _s(d: Mapping[str, object], key: str, *, optional: bool = False) -> str | None:
    v = d.get(key)
    if v is None and optional:
        return None
    if not isinstance(v, str):
        raise _Invalid(f"{key}: expected text, got {type(v).__name__}")
    return v


def _req(d: Mapping[str, object], key: str) -> str:
    v = _s(d, key)
    assert v is not None
    return v


def _b(d: Mapping[str, object], key: str, default: bool = False) -> bool:
    v = d.get(key, default)
    if not isinstance(v, bool):
        raise _Invalid(f"{key}: expected true/false")
    return v


def _i(d: Mapping[str, object], key: str) -> int:
    v = d.get(key, 0)
    if not isinstance(v, int) or isinstance(v, bool):
        raise _Invalid(f"{key}: expected a number")
    return v


def _strs(d: Mapping[str, object], key: str) -> tuple[str, ...]:
    v = d.get(key, [])
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise _Invalid(f"{key}: expected a list of texts")
    return tuple(v)


def _obj(d: Mapping[str, object], key: str) -> Mapping[str, object] | None:
    v = d.get(key)
    if v is None:
        return None
    if not isinstance(v, dict):
        raise _Invalid(f"{key}: expected an object")
    return v


#: a flat record's field type -> how its value is read from the record file (refused when it is not that)
_READERS: dict[str, Callable[[Mapping[str, object], str], object]] = {
    "bool": _b,
    "int": _i,
    "str": _req,
    "str | None": lambda d, key: _s(d, key, optional=True),
    "tuple[str, ...]": _strs,
    "Mapping[str, object]": lambda d, key: dict(_obj(d, key) or {}),
}


def _plain(value: object) -> object:
    if isinstance(value, tuple):
        return list(value)
    return dict(value) if isinstance(value, Mapping) else value


_Record = TypeVar("_Record", bound="_FlatRecord")


class _FlatRecord:
    """A dataclass of plain fields, written as a JSON object in field order (tuples as lists, mappings as
    dicts) and read back field by field, each checked by its type (:data:`_READERS`)."""

    def to_dict(self) -> dict[str, object]:
        return {f.name: _plain(getattr(self, f.name)) for f in fields(cast("DataclassInstance", self))}

    @classmethod
    def from_dict(cls: type[_Record], d: Mapping[str, object]) -> _Record:
        kinds = fields(cast("type[DataclassInstance]", cls))
        values: dict[str, Any] = {f.name: _READERS[str(f.type)](d, f.name) for f in kinds}
        return cls(**values)


@dataclass(frozen=True)
class Sources(_FlatRecord):
    """Where an env's packages came from (credentials never stored)."""

    torch_index: str | None = None
    default_index: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    bundle: str | None = None
    offline: bool = False
    credentials_removed: bool = False

    @classmethod
    def of(cls, index: IndexOptions, bundle: str | os.PathLike[str] | None = None) -> Sources:
        removed = False

        def one(url: str | None) -> str | None:
            nonlocal removed
            if not url:
                return None
            clean, had = clean_url(url)
            removed = removed or had
            return clean

        extras = tuple(u for u in (one(x) for x in index.extra_index_urls) if u)
        links = tuple(u for u in (one(x) for x in index.find_links) if u)
        return cls(one(index.torch_index), one(index.default_index), extras, links,
                   os.fspath(bundle) if bundle is not None else None, index.offline, removed)

    def index_options(self) -> IndexOptions:
        """The sources again, for a repair or upgrade (without credentials: netrc / keyring supply them)."""
        return IndexOptions(torch_index=self.torch_index, default_index=self.default_index,
                            extra_index_urls=self.extra_index_urls, find_links=self.find_links,
                            offline=self.offline, require_hashes=False)


@dataclass(frozen=True)
class Verification(_FlatRecord):
    """The last verification of an env, in short."""

    ok: bool
    when: str
    torch_version: str | None = None
    accelerator: str | None = None
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failed_checks: tuple[str, ...] = ()
    error: str | None = None  # the probe could not run (why)
    devices: tuple[str, ...] = ()  # the accelerators it ran on ("NVIDIA GeForce RTX 4090"); () on the CPU

    @classmethod
    def of(cls, report: VerifyReport) -> Verification:
        counts = {s: sum(1 for c in report.checks if c.status == s) for s in ("passed", "failed", "skipped")}
        return cls(report.ok, now(), report.torch_version, report.accelerator, counts["passed"], counts["failed"],
                   counts["skipped"], tuple(c.name for c in report.failed),
                   devices=tuple(d.name for d in report.devices if d.name))

    @classmethod
    def could_not_run(cls, why: str) -> Verification:
        return cls(False, now(), error=why[:300])

    @property
    def summary(self) -> Text:
        if self.error:
            return msg("envs.verify_not_run", "the verification could not run: {why}", why=self.error)
        if self.ok:
            return msg("envs.verify_ok", "{passed} checks passed, {skipped} skipped", passed=self.passed,
                       skipped=self.skipped)
        return msg("envs.verify_failed", "{failed} of {total} checks failed ({names})", failed=self.failed,
                   total=self.passed + self.failed + self.skipped, names=", ".join(self.failed_checks))

    def to_dict(self) -> dict[str, object]:
        return {**super().to_dict(), "summary": str(self.summary)}


@dataclass(frozen=True)
class GuardRecord(_FlatRecord):
    enabled: bool
    pins: tuple[str, ...]
    changed: str


@dataclass(frozen=True)
class KernelRecord(_FlatRecord):
    """A Jupyter kernel this app registered for the env (removal deletes exactly ``path``)."""

    name: str
    display_name: str
    path: str


@dataclass(frozen=True)
class PendingUpgrade(_FlatRecord):
    """An upgrade swapped in and not yet confirmed: the old env waits at ``old_path``."""

    old_path: str
    old_torch: str | None
    new_torch: str | None
    when: str
    old_record: Mapping[str, object] = field(default_factory=dict)  # the record before the upgrade


@dataclass(frozen=True)
class EnvRecord:
    """One environment the app knows."""

    path: str
    kind: str = "venv"
    origin: str = "created"
    python: str | None = None  # "3.11.7"
    installer: str = "uv"
    torch: str | None = None  # "2.13.0+cpu"
    variant: str | None = None
    backend: str | None = None
    family: Mapping[str, str] = field(default_factory=dict)  # torch family as installed (verified if ok)
    packages: tuple[str, ...] = ()  # what was asked for
    sources: Sources = field(default_factory=Sources)
    created: str = ""
    updated: str = ""
    verification: Verification | None = None
    guard: GuardRecord | None = None
    kernel: KernelRecord | None = None
    pending_upgrade: PendingUpgrade | None = None
    folder: tuple[int, ...] | None = None  # the folder as it was made (folder_of)

    @property
    def made_by_app(self) -> bool:
        return self.origin == "created"

    @property
    def verified_family(self) -> dict[str, str]:
        """The torch family as verified (empty when the last verification did not pass)."""
        return dict(self.family) if self.verification is not None and self.verification.ok else {}

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "kind": self.kind, "origin": self.origin, "python": self.python,
                "installer": self.installer, "torch": self.torch, "variant": self.variant, "backend": self.backend,
                "family": dict(self.family), "packages": list(self.packages), "sources": self.sources.to_dict(),
                "created": self.created, "updated": self.updated,
                "verification": self.verification.to_dict() if self.verification else None,
                "guard": self.guard.to_dict() if self.guard else None,
                "kernel": self.kernel.to_dict() if self.kernel else None,
                "pending_upgrade": self.pending_upgrade.to_dict() if self.pending_upgrade else None,
                "folder": list(self.folder) if self.folder else None}

    def is_the_folder_at(self, path: str | os.PathLike[str]) -> bool:
        """Whether the folder at ``path`` is the one this record was made for (a record from before
        identities were kept: taken to be)."""
        return self.folder is None or folder_of(path) == self.folder

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> EnvRecord:
        origin = _req(d, "origin")
        if origin not in ORIGINS:
            raise _Invalid(f"origin: {origin!r} is not one of {', '.join(ORIGINS)}")
        fam = _obj(d, "family") or {}
        if not all(isinstance(v, str) for v in fam.values()):
            raise _Invalid("family: expected name -> version texts")
        src, ver, grd = _obj(d, "sources"), _obj(d, "verification"), _obj(d, "guard")
        ker, pend = _obj(d, "kernel"), _obj(d, "pending_upgrade")
        return cls(path=_req(d, "path"), kind=_req(d, "kind"), origin=origin, python=_s(d, "python", optional=True),
                   installer=_req(d, "installer"), torch=_s(d, "torch", optional=True),
                   variant=_s(d, "variant", optional=True), backend=_s(d, "backend", optional=True),
                   family={str(k): str(v) for k, v in fam.items()}, packages=_strs(d, "packages"),
                   sources=Sources.from_dict(src) if src is not None else Sources(),
                   created=_req(d, "created"), updated=_req(d, "updated"),
                   verification=Verification.from_dict(ver) if ver is not None else None,
                   guard=GuardRecord.from_dict(grd) if grd is not None else None,
                   kernel=KernelRecord.from_dict(ker) if ker is not None else None,
                   pending_upgrade=PendingUpgrade.from_dict(pend) if pend is not None else None,
                   folder=_folder(d.get("folder")))


def _folder(value: object) -> tuple[int, ...] | None:
    if isinstance(value, list) and len(value) == 3 and all(isinstance(v, int) and not isinstance(v, bool)
                                                            for v in value):
        return tuple(value)
    return None


@dataclass(frozen=True)
class Registry:
    """The registry as loaded: its records, and what was wrong with the file (if anything)."""

    records: tuple[EnvRecord, ...] = ()
    problem: Text | None = None
    set_aside: Path | None = None  # where a corrupt file was moved
    read_only: bool = False  # written by a newer version: never overwritten

    def find(self, path: str | os.PathLike[str]) -> EnvRecord | None:
        """The record of ``path``. A row whose path is relative (hand-edited, or from a broken
        write) names no folder for sure (it would mean another one in every working directory):
        it never matches, so nothing is ever done on its word."""
        key = env_key(path)
        return next((r for r in self.records if os.path.isabs(r.path) and env_key(r.path) == key), None)


def registry_file() -> Path:
    return data_dir() / FILE_NAME


def _parse(doc: dict[str, object]) -> tuple[EnvRecord, ...]:
    version = doc.get("schema_version")
    if isinstance(version, bool) or version != SCHEMA_VERSION:
        raise _Invalid("schema_version: missing or not a number")
    items = doc.get("environments")
    if not isinstance(items, list):
        raise _Invalid("environments: expected a list")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise _Invalid(f"environments[{i}]: expected an object")
        try:
            out.append(EnvRecord.from_dict(item))
        except _Invalid as exc:
            raise _Invalid(f"environments[{i}].{exc}") from None
    return tuple(out)


def load() -> Registry:
    """The registry; a damaged file (read as every state file is: :func:`app.core.base.schema.read_state`)
    is set aside and reported, never raised."""
    path = registry_file()
    found = read_state(path, what="the file", keep=False)
    if found.unreadable:
        return Registry(problem=msg("envs.registry_unreadable", "The list of environments ({path}) cannot be "
                                    "read: {why}", path=str(path), why=found.why), read_only=True)
    if found.damaged:
        return _set_aside(path, found.why)
    if found.data is None:
        return Registry()
    schema = found.data.get("schema_version")
    if isinstance(schema, int) and not isinstance(schema, bool) and schema > SCHEMA_VERSION:
        return Registry(problem=msg("envs.registry_newer", "The list of environments ({path}) was written by a "
                                    "newer version of the assistant (format {found}; this one reads {known}); it "
                                    "is left as it is and not changed.", path=str(path), found=schema,
                                    known=SCHEMA_VERSION), read_only=True)
    try:
        return Registry(_parse(found.data), problem=_kept_aside(path))
    except _Invalid as exc:
        return _set_aside(path, str(exc))


def _kept_aside(path: Path) -> Text | None:
    """A note while a damaged list is kept beside this one: whichever command set it aside (an
    install, an upgrade), every list of the environments says so until the user deletes it."""
    try:
        kept = sorted(p.name for p in path.parent.iterdir() if p.name.startswith(f"{FILE_NAME}.corrupt-"))
    except OSError:
        return None
    if not kept:
        return None
    return msg("envs.registry_kept_aside", "A damaged list of environments was kept as {aside}; the environments "
               "it named are not shown here (they are still on disk). Delete that file once you no longer need it.",
               aside=str(path.parent / kept[-1]))


def _set_aside(path: Path, why: str) -> Registry:
    """A damaged list of environments, kept (renamed beside it) and reported; a new list starts."""
    kept = set_aside(path, why, tag="corrupt")
    aside = kept.aside or path
    return Registry(problem=msg("envs.registry_corrupt", "The list of environments was damaged ({why}); it "
                                "was set aside as {aside} and a new list was started.", why=why[:200],
                                aside=str(aside)), set_aside=kept.aside)


def _write(records: tuple[EnvRecord, ...]) -> None:
    path = registry_file()
    doc = {"schema_version": SCHEMA_VERSION, "environments": [r.to_dict() for r in records]}
    # mode 0600 (it names the indexes, masked); the paths kept exact, so not masked again
    write_private(path, json.dumps(doc, indent=1, ensure_ascii=False), masked=False)


@contextmanager
def _locked(timeout_s: float = 20.0) -> Iterator[EnvLock]:
    """The registry's own lock (another run writing it: wait a moment, it is quick)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            lock = acquire(registry_file(), "registry")
            break
        except BadInput:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    try:
        yield lock
    finally:
        lock.release()


def update(path: str | os.PathLike[str], change: Callable[[EnvRecord | None], EnvRecord | None]) -> EnvRecord | None:
    """Read-modify-write one record under the lock: ``change(old or None)`` -> new record, or None to drop it.

    Raises BadInput when the file belongs to a newer version of the app.
    """
    with _locked():
        reg = load()
        if reg.read_only:
            raise BadInput(str(reg.problem), hint="Update the assistant, or move that file away.")
        key = env_key(path)
        old = reg.find(path)
        new = change(old)
        rest = tuple(r for r in reg.records if env_key(r.path) != key)
        _write((*rest, new) if new is not None else rest)
        return new


def folder_of(path: str | os.PathLike[str]) -> tuple[int, ...] | None:
    """What a record keeps of the folder at ``path`` to know it again (None: nothing there): its
    identity (device, inode) and when its pyvenv.cfg was written, which nothing rewrites in an env's
    life (a file system gives a new folder the inode of one just deleted: the identity alone would
    take a folder made again for the one made before)."""
    found = identity(path)
    if not found:
        return None
    try:
        written = os.stat(os.path.join(path, "pyvenv.cfg")).st_mtime_ns
    except (OSError, ValueError):
        written = 0  # a conda env: its identity only
    return found[0], found[1], written


def find(path: str | os.PathLike[str]) -> EnvRecord | None:
    return load().find(path)


def forget(path: str | os.PathLike[str]) -> None:
    """Drop the record of ``path`` (after it was removed)."""
    update(path, lambda _old: None)


def guard_facts(path: str | os.PathLike[str]) -> guard_mod.GuardFacts | None:
    """What the doctor compares: the build the guard pins (or, without a guard, the one last verified)
    against what the env holds now. None when nothing was verified there."""
    try:
        rec = find(path)
    except OSError:
        return None
    if rec is None:
        return None
    if rec.guard is not None and rec.guard.enabled and rec.guard.pins:
        return guard_mod.facts(path, guard_mod.parse_pins(rec.guard.pins), guard_recorded=True)
    return guard_mod.facts(path, rec.verified_family, guard_recorded=False)


def record_verification(path: str | os.PathLike[str], verification: Verification,
                        family: Mapping[str, str] | None = None, *, python: str | None = None,
                        kind: str | None = None) -> EnvRecord | None:
    """Store a check's outcome; an env the app did not know is recorded as ``checked``."""
    def change(old: EnvRecord | None) -> EnvRecord:
        base = old or EnvRecord(path=os.path.abspath(os.fspath(path)), kind=kind or "venv", origin="checked",
                                installer="uv", created=now())
        fam = dict(family) if family is not None else dict(base.family)
        return replace(base, verification=verification, family=fam, torch=fam.get("torch", base.torch),
                       python=python or base.python, updated=now())

    return update(path, change)


def family_of(packages: Mapping[str, str]) -> dict[str, str]:
    """The torch family among installed ``packages`` (name -> version)."""
    return {n: v for n, v in packages.items() if n in TORCH_FAMILY}


def record_install(result: InstallResult, plan: InstallPlan, verify: VerifyReport | None = None, *,
                   guard_record: GuardRecord | None = None) -> EnvRecord | None:
    """Record a successful install (after ``install()`` returned, with the verification if it ran)
    and ``guard_record``, what the guard's policy did (None: the guard stays as recorded).

    Never raises for the registry's own problems (an install that worked must not be reported as
    failed because its bookkeeping could not be written): returns None then.
    """
    family = family_of(result.packages)
    rec = plan.recommendation
    python = plan.python.version if plan.python is not None else None
    variant = plan.variant or (rec.variant if rec is not None else None) or variant_of_version(result.torch_version)
    verification = Verification.of(verify) if verify is not None else None

    def change(old: EnvRecord | None) -> EnvRecord:
        origin = "created" if result.created else (old.origin if old is not None and old.origin != "checked"
                                                   else "installed")
        return EnvRecord(
            path=str(result.env_path), kind=result.kind, origin=origin, python=python or (old.python if old else None),
            installer=result.installer, torch=result.torch_version, variant=variant,
            backend=str(rec.backend) if rec is not None else None, family=family, packages=tuple(plan.packages),
            sources=Sources.of(plan.index, plan.request.bundle),
            created=old.created if old is not None and not result.created else now(), updated=now(),
            verification=verification, guard=guard_record or (old.guard if old else None),
            kernel=old.kernel if old is not None else None, pending_upgrade=None,
            folder=folder_of(result.env_path) if result.created else (old.folder if old is not None else None))

    try:
        return update(result.env_path, change)
    except (OSError, BadInput):
        return None


def record_verify(env_path: str | os.PathLike[str], report: VerifyReport, family: Mapping[str, str], *,
                  guard_record: GuardRecord | None = None) -> EnvRecord | None:
    """Record a verification of an env, the torch ``family`` it found and ``guard_record`` (what the
    guard's policy did; :func:`app.core.lifecycle.protect.record_verify`). Never raises for the
    registry's own problems."""
    env = Path(os.path.abspath(os.fspath(env_path)))

    def change(old: EnvRecord | None) -> EnvRecord:
        base = old or EnvRecord(path=str(env), origin="checked", created=now())
        return replace(base, verification=Verification.of(report), family=dict(family),
                       torch=family.get("torch", base.torch), guard=guard_record or base.guard, updated=now())

    try:
        return update(env, change)
    except (OSError, BadInput):
        return None
    return None
