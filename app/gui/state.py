"""What the wizard's pages share: one object, owned by the wizard, read in initializePage.

The results of the run live in :attr:`WizardState.session`, the core's
:class:`~app.core.session.Session`: each page runs its step of it (in a worker Task) and
reads the earlier steps' results from it. The Environment page approves the plan there,
and the Install page installs exactly that plan. The rest of the state is the wizard's
own: language, settings the user gave, the files written.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from app.core.session import Session  # light: the steps load the core's larger modules when they run


@dataclass
class WizardState:
    session: Session = field(default_factory=Session)
    language: str = "en"
    bundle_dir: Path | None = None  # an offline bundle found next to the app or chosen
    saved_reports: list[Path] = field(default_factory=list)
    log_paths: list[Path] = field(default_factory=list)
    # Speed test (Speed test page): None means the page's defaults; tests set tiny sweeps.
    bench_sizes: list[int] | None = None
    bench_dtypes: list[str] | None = None
    bench_budget_s: float | None = None
    bench_device: str = "auto"
    skip_bench: bool = False
