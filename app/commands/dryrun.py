"""``install --dry-run`` (and ``install --config FILE --dry-run``): the approved plan, and nothing created.

On this machine the session runs as for an install up to the approval: detection, the
recommendation (or the lock, checked against this machine), the plan and the whole pre-flight;
it stops where the install would start. Exit 0: the plan is approved (it is printed, and would
run as printed); 2: a check blocks (its reason is the error), the answer file or the lock is bad,
or the lock cannot run here.

With ``--from-report FILE`` the plan is made for the machine a saved detect report describes (a
host of a fleet, checked from the admin's machine): the recommendation, the lock's fit and the
plan are that machine's; the pre-flight is not run, because it checks a machine's own disk,
folders and network, and says so.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TYPE_CHECKING

from app.commands._lab import say
from app.commands._render import Console, print_plan
from app.core.base.errors import EXIT_OK
from app.core.base.text import msg
from app.core.pipeline.session import Observer, Planned, RunOptions, Session

if TYPE_CHECKING:
    from app.core.detection.system import SystemReport
    from app.core.install import Check, InstallPlan, InstallRequest
    from app.core.recommend import Choices

__all__ = ["dry_run"]


class _Approved(Exception):
    """The plan was approved: the dry run ends here, before anything is created."""


class _Stop(Observer):
    def __init__(self, out: Console, quiet: bool) -> None:
        self.out, self.quiet = out, quiet
        self.planned_: Planned | None = None

    def planned(self, planned: Planned) -> None:
        self.planned_ = planned
        if not self.quiet:
            print_plan(planned.plan, planned.checks, self.out)

    def approved(self, plan: InstallPlan) -> None:
        raise _Approved


def _show(args: argparse.Namespace, plan: InstallPlan, checks: tuple[Check, ...], preflight: bool) -> None:
    if getattr(args, "json", False):
        from app.core.base.serial import dumps

        print(dumps({"dry_run": True, "approved": preflight and not any(c.blocking for c in checks),
                     "preflight": preflight, "plan": plan.to_dict(), "checks": [c.to_dict() for c in checks]}),
              file=Console(sys.stdout))
        return
    if preflight:
        say(msg("lab.dry_run_ok", "Dry run: the plan above is approved for this machine; nothing was created."))
    else:
        say(msg("lab.dry_run_report", "Dry run for the machine in the report: the plan above; the pre-flight "
                "(disk, folders, network) runs on that machine. Nothing was created."))


def _for_report(args: argparse.Namespace, request: InstallRequest, choices: Choices, report: SystemReport) -> int:
    from app.core.install import plan

    session = Session(source="cli")
    session.use_system(report)
    if request.packages is None and request.sources.bundle is None and request.recommendation is None:
        session.choose(choices)
        request = dataclasses.replace(request, recommendation=session.recommend())
    # the interpreter is that machine's to find: this one's would only mislead (the version stays)
    the_plan = dataclasses.replace(plan(request, report), python=None, python_notes=())
    if not getattr(args, "json", False):
        print_plan(the_plan, (), Console(sys.stderr))
    _show(args, the_plan, (), preflight=False)
    return EXIT_OK


def dry_run(args: argparse.Namespace, request: InstallRequest, choices: Choices, *,
            report: SystemReport | None = None, source: str = "cli") -> int:
    """The plan for ``request`` as an install would approve it, and nothing created (see the module)."""
    if report is not None:
        return _for_report(args, request, choices, report)
    session = Session(source=source)
    observer = _Stop(Console(sys.stderr), quiet=bool(getattr(args, "json", False)))
    wants_machine = request.lock is not None or (request.packages is None and request.sources.bundle is None)
    try:
        session.run_all(request, choices=choices, options=RunOptions(detect=wants_machine, verify=False,
                                                                      strict=False), observer=observer)
    except _Approved:
        pass
    planned = observer.planned_
    assert planned is not None  # approved after it was planned
    _show(args, planned.plan, planned.checks, preflight=True)
    return EXIT_OK
