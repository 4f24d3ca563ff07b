"""``torch-setup fleet plan REPORTS…``: one plan for a room of machines, from their detect reports.

Each report is a SystemReport (``detect --json``) or the session report an unattended run writes
(the Ansible role fetches those; the machine is its ``system``). Every decision is the
recommendation engine's, as on each machine itself:

1. each host's own build (:func:`app.core.recommend.recommend`), or why it gets none;
2. hosts of one platform and backend (Linux x86_64 with NVIDIA GPUs, Apple Silicon Macs, …) are
   one segment; every host's own build is a candidate for its whole segment, and each candidate
   is judged on every host of it (the same engine with that torch and build pinned: the driver
   floor, the GPU's kernels, the Python);
3. a group is the newest candidate and every host of the segment that runs it, then the next
   newest for the hosts left, so a segment gets one build when the newest fits all of it (with
   ``fewest``: the candidate that serves the most hosts first, the newest on a tie: one build for
   all of a segment whenever one fits, at the price of an older release for some);
4. each host that cannot join its segment's first group gets the engine's reason as a blocker
   (driver too old, a GPU without kernels in the build, Python, platform), and every host whose
   disk is too small for its group's build gets a disk blocker.

With a lock (``--lock``) the lock is the one build: each host either runs it
(:func:`app.core.pylock.fit.fit_lock`) or gets the reason and the nearest working build.

:func:`write_plan` writes ``plan.json`` (groups, and per host its group, answer file and
blockers) and one answer file per group (``answers/<group>.toml``, which ``install --config FILE``
runs and ``install --config FILE --dry-run`` shows), so the Ansible role can push each host its
group's file.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.base.enums import Backend
from app.core.base.errors import BadInput, UserError
from app.core.base.schema import Fields, Record, parse_json, read_text, spec
from app.core.base.text import Joined, Msg, Text, msg, render
from app.core.compat.data import CompatData, load_compat, version_tuple
from app.core.detection.system import SystemReport
from app.core.install.sizing import ENV_BASE_MB, INSTALLED_MB, MARGIN
from app.core.pylock.fit import engine_reason, fit_lock
from app.core.pylock.lockfile import Lock
from app.core.recommend import Choices, Recommendation, recommend
from app.core.recommend.machine import wheel_platform
from app.core.recommend.words import platform_words

if TYPE_CHECKING:  # start-up: the sources load only when the plan names some
    from app.core.sources import Availability

__all__ = ["Blocker", "FleetPlan", "Group", "Host", "load_hosts", "plan_fleet", "write_plan"]

SCHEMA = "torch-setup-fleet-plan/1"
MAX_HOSTS = 5000


@dataclass(frozen=True)
class Host:
    name: str
    source: Path
    report: SystemReport
    platform: str | None
    own: Recommendation | None = None  # the build recommended for this host alone
    own_error: UserError | None = field(default=None, compare=False)  # why it gets none


@dataclass(frozen=True)
class Blocker(Record):
    """Why a host cannot run a build: ``kind`` is driver | gpu | python | platform | disk | other."""

    host: str = field(metadata=spec(skip=True))  # the host's own entry holds it
    kind: str
    text: Text = field(metadata=spec(write=render))
    build: str = ""  # the build it is about ("torch 2.15.0 (cu130)")


@dataclass(frozen=True)
class Group:
    id: str
    torch: str
    variant: str
    backend: str
    platform: str | None
    hosts: tuple[str, ...]
    lock: bool = False  # the build is a lock's

    @property
    def build(self) -> str:
        return f"torch {self.torch} ({self.variant})"


@dataclass(frozen=True)
class FleetPlan:
    hosts: tuple[Host, ...]
    groups: tuple[Group, ...]
    blockers: tuple[Blocker, ...]
    compat_version: str
    lock: Lock | None = None

    @property
    def one_for_all(self) -> bool:
        return len(self.groups) == 1 and len(self.groups[0].hosts) == len(self.hosts)

    def group_of(self, host: str) -> Group | None:
        return next((g for g in self.groups if host in g.hosts), None)

    def blocked(self) -> list[str]:
        """Hosts that cannot install a build of this plan as they are (no group, or a disk blocker)."""
        return [h.name for h in self.hosts if self.group_of(h.name) is None
                or any(b.host == h.name and b.kind == "disk" for b in self.blockers)]


# ------------------------------------------------------------------ reading the reports

def _system_of(data: object, what: str) -> SystemReport:
    """A SystemReport, or the ``system`` of a session report (what the Ansible role fetches)."""
    if isinstance(data, dict) and isinstance(data.get("system"), dict):
        return SystemReport.from_dict(data["system"], what=what)
    if isinstance(data, dict) and str(data.get("schema", "")).startswith("torch-setup-session"):
        raise Fields(data, "", what=what).fail("system", "is missing: that run ended before it detected the machine",
                                               hint="Run torch-setup detect --json on that host instead.")
    return SystemReport.from_dict(data, what=what)


def _report_files(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    files: list[Path] = []
    for given in paths:
        p = Path(given)
        if p.is_dir():
            files += sorted(x for x in p.iterdir() if x.suffix == ".json" and x.is_file())
        else:
            files.append(p)
    if not files:
        raise BadInput(msg("lab.fleet_no_reports", "REPORTS: no report file was found (folders are searched for "
                           "*.json)."), hint=msg("lab.fleet_no_reports_hint", "Collect the hosts' reports first: "
                                                "torch-setup detect --json > HOST.json on each, or the Ansible "
                                                "role's reports folder."))
    if len(files) > MAX_HOSTS:
        raise BadInput(msg("lab.fleet_too_many", "REPORTS: {count} files; a plan takes at most {most}.",
                           count=len(files), most=MAX_HOSTS))
    return files


def load_hosts(paths: Sequence[str | os.PathLike[str]]) -> list[Host]:
    """The hosts the report files (or folders of them) describe; BadInput names a bad file and field."""
    hosts: list[Host] = []
    seen: set[str] = set()
    for f in _report_files(paths):
        what = f"report file {f}"
        report = _system_of(parse_json(read_text(f, what="report file"), what=what), what)
        name = f.stem  # the Ansible role names each host's report after its inventory name
        if name in seen:
            name = f"{f.stem}-{len(seen)}"
        seen.add(name)
        hosts.append(Host(name, f, report, wheel_platform(report.os.family or "", report.arch)))
    return hosts


# ------------------------------------------------------------------ judging builds

def _codes(text: object) -> list[str]:
    """Every message code inside a text (the engine's reasons are nested in its refusal)."""
    if isinstance(text, Msg):
        return [text.code, *(c for _, v in text.args for c in _codes(v))]
    if isinstance(text, Joined):
        return [c for p in text.parts for c in _codes(p)]
    if isinstance(text, tuple):
        return [c for p in text for c in _codes(p)]
    return []


_KINDS = (("driver", ("driver",)), ("gpu", ("kernels", "gfx", "rocm", "no_amd", "no_nvidia", "no_xpu", "arch")),
          ("python", ("python",)), ("platform", ("glibc", "macos", "windows", "platform", "woa", "jetson")))


def blocker_kind(text: Text) -> str:
    """What keeps a host from a build, from the code of the first reason the engine gave."""
    for code in _codes(text):
        name = code.rsplit(".", 1)[-1]
        kind = next((k for k, words in _KINDS if any(w in name for w in words)), None)
        if kind is not None and not code.startswith("recommend.asked"):
            return kind
    return "other"


def _runs(host: Host, data: CompatData, torch: str, variant: str) -> UserError | None:
    try:
        recommend(host.report, data, Choices(torch=torch, variant=variant))
    except UserError as err:
        return err
    return None


def _newest_first(key: tuple[str, str]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    torch, variant = key
    return version_tuple(torch), tuple(int(x) for x in re.findall(r"\d+", variant))


def _groups_of(segment: list[Host], data: CompatData, start: int, fewest: bool) -> tuple[list[Group], list[Blocker]]:
    """The segment's groups and the blockers against its first build: the newest build any host gets,
    for every host that can run it, then the next newest for the rest; ``fewest``: the build that
    serves the most hosts first (fewer, older builds: one for all when one fits)."""
    candidates = sorted({(h.own.torch_version or "", h.own.variant) for h in segment if h.own is not None},
                        key=_newest_first, reverse=True)
    verdicts = {c: {h.name: _runs(h, data, *c) for h in segment} for c in candidates}
    left = [h.name for h in segment]
    groups: list[Group] = []
    while left:
        serving = [c for c in candidates if any(verdicts[c][n] is None for n in left)]
        if not serving:
            break
        best = max(serving, key=lambda c: sum(1 for n in left if verdicts[c][n] is None)) if fewest else serving[0]
        served = tuple(n for n in left if verdicts[best][n] is None)
        if not served:
            break
        own = next(h.own for h in segment if h.own is not None)
        groups.append(Group(f"g{start + len(groups)}", best[0], best[1], str(own.backend), segment[0].platform,
                            served))
        left = [n for n in left if n not in served]
    blockers: list[Blocker] = []
    if groups:
        first = groups[0]
        for n in (h.name for h in segment):
            err = verdicts[(first.torch, first.variant)][n]
            if err is not None:
                why = engine_reason(err)
                blockers.append(Blocker(n, blocker_kind(why), why, first.build))
    return groups, blockers


def _need_mb(group: Group, data: CompatData) -> int:
    backend = Backend.parse(group.backend) or Backend.CPU
    for rel in data.releases:
        for v in rel.variants:
            if v.name == group.variant and group.torch.startswith(rel.torch + ".") and v.install_mb:
                return int((v.install_mb + ENV_BASE_MB["uv"]) * MARGIN)
    return int((INSTALLED_MB.get(backend, INSTALLED_MB[Backend.CUDA]) + ENV_BASE_MB["uv"]) * MARGIN)


def _disk_blockers(hosts: Sequence[Host], groups: Sequence[Group], data: CompatData) -> list[Blocker]:
    out = []
    for g in groups:
        need = _need_mb(g, data)
        for h in hosts:
            free = h.report.disk_free_mb
            if h.name in g.hosts and free is not None and free < need:
                out.append(Blocker(h.name, "disk", msg("lab.fleet_disk", "{free} MB free where it was measured; the "
                                                       "build needs about {need} MB", free=free, need=need), g.build))
    return out


def _with_own(hosts: Sequence[Host], data: CompatData, offers: Availability | None) -> list[Host]:
    out = []
    for h in hosts:
        try:
            out.append(Host(h.name, h.source, h.report, h.platform, recommend(h.report, data, sources=offers)))
        except UserError as err:
            out.append(Host(h.name, h.source, h.report, h.platform, None, err))
    return out


def plan_fleet(hosts: Sequence[Host], data: CompatData | None = None, lock: Lock | None = None, *,
               fewest: bool = False, offers: Availability | None = None) -> FleetPlan:
    """The groups and blockers for ``hosts`` (see the module's docstring); ``fewest``: as few builds as
    possible (each the one that serves the most hosts), instead of the newest each host can share;
    ``offers``: what the hosts' sources hold (a wheel folder, an index): "newest" is newest available."""
    data = data or load_compat()
    if lock is not None:
        return _plan_lock(hosts, data, lock)
    judged = _with_own(hosts, data, offers)
    segments: dict[tuple[str, str], list[Host]] = {}
    blockers: list[Blocker] = []
    for h in judged:
        if h.own is None:
            why: Text = engine_reason(h.own_error) if h.own_error is not None else ""
            blockers.append(Blocker(h.name, blocker_kind(why), why))
            continue
        segments.setdefault((h.platform or "", str(h.own.backend)), []).append(h)
    groups: list[Group] = []
    for key in sorted(segments, key=lambda k: (-len(segments[k]), k)):
        found, against = _groups_of(segments[key], data, len(groups) + 1, fewest)
        groups += found
        blockers += against
    blockers += _disk_blockers(judged, groups, data)
    return FleetPlan(tuple(judged), tuple(groups), tuple(blockers), data.version)


def _plan_lock(hosts: Sequence[Host], data: CompatData, lock: Lock) -> FleetPlan:
    served: list[str] = []
    blockers: list[Blocker] = []
    build = f"torch {lock.torch or '?'} ({lock.variant or '?'})"
    for h in hosts:
        fit = fit_lock(lock, h.report, data)
        if fit.ok:
            served.append(h.name)
            continue
        reason: Text = fit.problems[0]
        if fit.nearest is not None:
            reason = msg("lab.fleet_nearest", "{why}; the nearest build that runs there: {gives}", why=reason,
                         gives=fit.nearest_gives)
        blockers.append(Blocker(h.name, blocker_kind(fit.problems[0]), reason, build))
    groups = [Group("g1", lock.torch or "?", lock.variant or "?", lock.backend or "", lock.platform, tuple(served),
                    lock=True)] if served else []
    blockers += _disk_blockers(hosts, groups, data)
    return FleetPlan(tuple(hosts), tuple(groups), tuple(blockers), data.version, lock)


# ------------------------------------------------------------------ writing the plan

def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def answer_file(group: Group, *, env_path: str, report_folder: str, sources: dict[str, object],
                lock_name: str | None = None) -> str:
    """The answer file a group's hosts run (``install --config FILE --yes``)."""
    lines = [f"# Written by torch-setup fleet plan: group {group.id}, {group.build} on {group.platform or '?'}",
             f"# for {len(group.hosts)} host(s): {', '.join(group.hosts)}",
             "# On each: torch-setup install --config THIS_FILE --yes   (--dry-run first shows the plan)",
             "version = 1", "", "[environment]", f"path = {_toml_str(env_path)}", "", "[torch]"]
    if lock_name:
        lines.append(f"lock = {_toml_str(lock_name)}")
    else:
        lines += [f"backend = {_toml_str(group.variant)}", f"version = {_toml_str(group.torch)}"]
    if sources:
        lines += ["", "[sources]"]
        for k, v in sources.items():
            shown = "[" + ", ".join(_toml_str(str(x)) for x in v) + "]" if isinstance(v, list) else _toml_str(str(v))
            lines.append(f"{k} = {shown}")
    lines += ["", "[report]", f"folder = {_toml_str(report_folder)}", ""]
    return "\n".join(lines)


def plan_document(plan: FleetPlan, answers: dict[str, str]) -> dict[str, object]:
    hosts: dict[str, object] = {}
    for h in plan.hosts:
        g = plan.group_of(h.name)
        hosts[h.name] = {"report": str(h.source), "platform": h.platform, "group": g.id if g else None,
                         "answers": answers.get(g.id) if g else None,
                         "own_build": f"torch {h.own.torch_version} ({h.own.variant})" if h.own else None,
                         "blockers": [b.to_dict() for b in plan.blockers if b.host == h.name]}
    return {"schema": SCHEMA, "compat_data_version": plan.compat_version, "one_for_all": plan.one_for_all,
            "lock": str(plan.lock.source) if plan.lock is not None and plan.lock.source else None,
            "groups": [{"id": g.id, "torch": g.torch, "variant": g.variant, "backend": g.backend,
                        "platform": g.platform, "platform_words": render(platform_words(g.platform)),
                        "hosts": list(g.hosts), "answers": answers.get(g.id)} for g in plan.groups],
            "hosts": hosts, "blocked": plan.blocked()}


def _clear_previous(out: Path) -> None:
    """``out`` is new, empty, or holds an earlier plan: that plan's files go (nothing else is touched)."""
    if not out.exists() or (out.is_dir() and not any(out.iterdir())):
        return
    old = out / "plan.json"
    try:
        doc = json.loads(old.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise BadInput(msg("lab.fleet_out_taken", "--out: {out} is not empty and holds no earlier fleet plan; "
                           "nothing is written there.", out=str(out)),
                       hint=msg("lab.fleet_out_taken_hint", "Choose a new folder for the plan."))
    groups = doc.get("groups")
    for g in groups if isinstance(groups, list) else []:
        rel = g.get("answers") if isinstance(g, dict) else None
        if isinstance(rel, str) and re.fullmatch(r"answers/g\d{1,6}\.toml", rel):
            (out / rel).unlink(missing_ok=True)
    (out / "answers" / "pylock.toml").unlink(missing_ok=True)


def write_plan(plan: FleetPlan, out: Path, *, env_path: str = "~/torch-env",
               report_folder: str = "~/torch-setup-reports", sources: dict[str, object] | None = None
               ) -> dict[str, object]:
    """Write ``out/plan.json`` and ``out/answers/<group>.toml`` (the lock beside them); returns the plan
    document. ``out`` must be new, empty, or hold an earlier plan (whose files are replaced)."""
    _clear_previous(out)
    (out / "answers").mkdir(parents=True, exist_ok=True)
    lock_name = None
    if plan.lock is not None and plan.lock.source is not None:
        shutil.copyfile(plan.lock.source, out / "answers" / "pylock.toml")
        lock_name = "pylock.toml"
    answers: dict[str, str] = {}
    for g in plan.groups:
        rel = f"answers/{g.id}.toml"
        (out / rel).write_text(answer_file(g, env_path=env_path, report_folder=report_folder, sources=sources or {},
                                           lock_name=lock_name), encoding="utf-8")
        answers[g.id] = rel
    doc = plan_document(plan, answers)
    (out / "plan.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return doc
