"""``torch-setup fleet plan REPORTS… --out DIR``: one plan for a room of machines.

    torch-setup fleet plan reports/ --out fleet-plan            groups, blockers, one answer file per group
    torch-setup fleet plan reports/ --out fleet-plan --lock pylock.toml
                                                                 which hosts can run a verified lock, and why not

REPORTS are detect reports (``torch-setup detect --json > HOST.json``) or the session reports the
Ansible role brings back, as files or folders of them. The plan (:mod:`app.core.lab.fleet`) groups
the hosts by the build they can run (the recommendation engine decides, host by host), names what
keeps a host from its platform's newest shared build (an old driver, a GPU the build has no kernels
for, Python, disk), and writes ``DIR/plan.json`` and ``DIR/answers/<group>.toml``; each host then
runs ``torch-setup install --config answers/<group>.toml --yes`` (the Ansible role does it with
``torch_setup_plan: DIR``), and ``--dry-run`` shows the plan first.

Exit codes: 0 every host has a build it can install; 1 the plan is written, but some hosts are
blocked (named, with the reason); 2 bad input (a report or the lock unreadable, naming the file and
field): nothing was written.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.commands._lab import say
from app.core.base.errors import EXIT_FAILED, EXIT_OK
from app.core.base.text import msg


def register(sub) -> None:
    p = sub.add_parser("fleet", help="plan PyTorch for many machines from their detect reports",
                       description="Plan one install for a room of machines: group them by the build they can "
                                   "run, name each host's blockers, write one answer file per group. Exit codes: 0 "
                                   "every host can install its group's build, 1 some hosts are blocked (named), 2 "
                                   "bad input (nothing written).")
    s = p.add_subparsers(dest="fleet_command", metavar="ACTION", required=True)
    a = s.add_parser("plan", help="group the hosts, list their blockers, write answer files")
    a.add_argument("reports", nargs="+", metavar="REPORT",
                   help="detect reports (or session reports) of the hosts, or folders of them (*.json)")
    a.add_argument("--out", metavar="DIR", required=True, help="where plan.json and answers/ go")
    a.add_argument("--lock", metavar="FILE", help="a pylock.toml: which hosts can run exactly this build")
    a.add_argument("--fewest-builds", action="store_true",
                   help="as few builds as possible (one for all of a platform when one fits, even an older one) "
                        "instead of the newest build each group of hosts can share")
    a.add_argument("--env-path", metavar="PATH", default="~/torch-env",
                   help="the environment folder on each host (default: ~/torch-env)")
    a.add_argument("--report-folder", metavar="PATH", default="~/torch-setup-reports",
                   help="where each host writes its report (default: ~/torch-setup-reports)")
    a.add_argument("--index-url", metavar="URL", help="the torch index (or its mirror) the hosts use")
    a.add_argument("--mirror", metavar="URL", help="a PyPI mirror the hosts use for the other packages")
    a.add_argument("--find-links", metavar="DIR", action="append", default=[],
                   help="a wheel folder ON THE HOSTS (repeatable)")
    a.add_argument("--json", action="store_true", help="print the plan (plan.json) as JSON")
    a.set_defaults(func=run_plan)


def _sources(args: argparse.Namespace) -> dict[str, object]:
    out: dict[str, object] = {}
    if args.index_url:
        out["torch_index"] = args.index_url
    if args.mirror:
        out["default_index"] = args.mirror
    if args.find_links:
        out["find_links"] = list(args.find_links)
    return out


def _offers(args: argparse.Namespace):
    """What the named sources hold (the recommendation is then the newest they offer); None: none named."""
    if not (args.index_url or args.find_links):
        return None
    from app.core.sources import SourceSettings, availability

    return availability(SourceSettings(torch_index=args.index_url, find_links=tuple(args.find_links)))


def run_plan(args: argparse.Namespace) -> int:
    from app.core.lab.fleet import load_hosts, plan_fleet, write_plan
    from app.core.pylock.lockfile import read_lock

    hosts = load_hosts(args.reports)
    lock = read_lock(args.lock) if args.lock else None
    plan = plan_fleet(hosts, lock=lock, fewest=args.fewest_builds, offers=_offers(args))
    out = Path(args.out).absolute()
    doc = write_plan(plan, out, env_path=args.env_path, report_folder=args.report_folder, sources=_sources(args))
    if args.json:
        from app.core.base.serial import dumps

        print(dumps(doc))
    else:
        _show(plan, out)
    return EXIT_FAILED if plan.blocked() else EXIT_OK


def _show(plan, out: Path) -> None:
    from app.core.recommend.words import platform_words

    say(msg("lab.fleet_head", "Fleet plan for {count} host(s) (compatibility data {version}), written to {out}:",
            count=len(plan.hosts), version=plan.compat_version, out=str(out)))
    if plan.one_for_all:
        say(msg("lab.fleet_one_for_all", "One build fits all of them."))
    for g in plan.groups:
        say(msg("lab.fleet_group", "  {id}: {build} on {platform}, {count} host(s): {hosts} -> answers/{id}.toml",
                id=g.id, build=g.build, platform=platform_words(g.platform), count=len(g.hosts),
                hosts=", ".join(g.hosts)))
    if plan.blockers:
        say(msg("lab.fleet_blockers", "Blockers:"))
    for b in plan.blockers:
        group = plan.group_of(b.host)
        where = msg("lab.fleet_in_group", "in {id}", id=group.id) if group else msg("lab.fleet_no_group", "no build")
        say(msg("lab.fleet_blocker", "  {host} ({where}) [{kind}] for {build}: {why}", host=b.host, where=where,
                kind=b.kind, build=b.build or "-", why=b.text))
    blocked = plan.blocked()
    if blocked:
        say(msg("lab.fleet_blocked", "Blocked: {hosts}: they cannot install a build of this plan as they are.",
                hosts=", ".join(blocked)), sys.stderr)
    say(msg("lab.fleet_next", "On each host: torch-setup install --config answers/GROUP.toml --dry-run (then without "
            "--dry-run, with --yes); or let the Ansible role do it: -e torch_setup_plan={out}", out=str(out)))
