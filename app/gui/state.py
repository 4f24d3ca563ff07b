"""What the wizard's pages share: one object, owned by the wizard, read in initializePage.

The results of the run live in :attr:`WizardState.session`, the core's
:class:`~app.core.pipeline.session.Session`: each page runs its step of it (in a worker Task) and
reads the earlier steps' results from it. The Environment page approves the plan there,
and the Install page installs exactly that plan. The rest of the state is the wizard's
own: language, settings the user gave, the files written.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # start-up: the session is made when a page first needs it, after the first paint
    from app.core.pipeline.session import Session


class WizardState:
    """The wizard's shared state. ``session`` is created on first use (the Welcome page is
    painted before the core's pipeline is even imported)."""

    def __init__(self, session: Session | None = None, language: str = "en", bundle_dir: Path | None = None,
                 saved_reports: list[Path] | None = None, log_paths: list[Path] | None = None,
                 bench_sizes: list[int] | None = None, bench_dtypes: list[str] | None = None,
                 bench_budget_s: float | None = None, bench_device: str = "auto", skip_bench: bool = False) -> None:
        self._session = session
        self.language = language
        self.bundle_dir = bundle_dir  # an offline bundle found next to the app or chosen
        self.saved_reports: list[Path] = saved_reports if saved_reports is not None else []
        self.log_paths: list[Path] = log_paths if log_paths is not None else []
        # Speed test (Speed test page): None means the page's defaults; tests set tiny sweeps.
        self.bench_sizes = bench_sizes
        self.bench_dtypes = bench_dtypes
        self.bench_budget_s = bench_budget_s
        self.bench_device = bench_device
        self.skip_bench = skip_bench
        self.early: object | None = None  # the wizard's early downloads (app.gui.early.early_downloads)

    @property
    def session(self) -> Session:
        """The run's pipeline (:class:`app.core.pipeline.session.Session`), made on first use."""
        if self._session is None:
            from app.core.pipeline.session import Session

            self._session = Session()
        return self._session

    @session.setter
    def session(self, value: Session) -> None:
        self._session = value
