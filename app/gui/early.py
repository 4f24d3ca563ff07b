"""Early downloads in the wizard: the recommended build's wheels come while the user reads.

The core's :class:`~app.core.install.early.Prefetch` does the work in its own thread. One
:class:`EarlyDownloads` per wizard (:func:`early_downloads`) starts one for what the pages show
(the Recommendation page's build, then the Environment page's approved plan), cancels it as
soon as the choice changes (the files it completed stay in the download folder, complete and
hash-checked; the partial ones go), stops it when the wizard closes, and tells the pages how far
it got (:attr:`EarlyDownloads.changed`, :meth:`EarlyDownloads.status`). The Install page needs
nothing from it: the install finds the files in the download folder (and waits for one still
arriving rather than fetching it twice).

It does nothing when the user turned early downloads off (the Environment page's check box, kept
in ``settings.toml``: :mod:`app.core.base.prefs`), and a prefetch does nothing on a connection that
looks metered (:mod:`app.core.detection.metered`, asked in the prefetch's own thread).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal

if TYPE_CHECKING:
    from app.core.install.early import Ahead, Prefetch
    from app.core.install.request import InstallPlan
    from app.core.pipeline.session import Session
    from app.core.recommend import Recommendation
    from app.gui.state import WizardState

__all__ = ["EarlyDownloads", "ahead_of", "early_downloads"]


def ahead_of(session: Session, plan: InstallPlan | None = None) -> Ahead | None:
    """What to fetch for the approved ``plan``, else for the session's recommendation (the
    Environment page's defaults: the recommendation's Python, the sources named so far)."""
    from app.core.install.config import default_index_for
    from app.core.install.early import Ahead
    from app.core.sources import SourceSettings

    if plan is not None:
        rec: Recommendation | None = plan.recommendation
        if rec is None or rec.index_url is None or plan.request.packages is not None or plan.index.offline:
            return None  # packages named by hand, a bundle or the folders alone: nothing to fetch early
        python = (plan.python.minor if plan.python is not None else None) or plan.python_request or ""
        return Ahead(tuple(rec.packages), rec.index_url, python, plan.request.sources,
                     plan.index.default_index or default_index_for("uv"), tuple(plan.index.extra_index_urls))
    rec = session.recommendation
    system = session.system
    if rec is None or system is None or not rec.packages or rec.no_index:
        return None
    python = rec.env_python or ".".join((system.python.version or "").split(".")[:2])
    if not python:
        return None
    return Ahead(tuple(rec.packages), rec.index_url, python, session.sources or SourceSettings(),
                 default_index_for("uv"))


class EarlyDownloads(QObject):
    """The wizard's early downloads (see the module docstring)."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        from app.core.base.prefs import load_prefs

        super().__init__(parent)
        self.prefs = load_prefs()
        self.current: Prefetch | None = None
        self.stopped: list[Prefetch] = []  # cancelled ones (they end within a read), for the record
        self._timer = QTimer(self)
        self._timer.setInterval(500)
        self._timer.timeout.connect(self._tick)

    @property
    def enabled(self) -> bool:
        return self.prefs.early_downloads

    def set_enabled(self, on: bool) -> None:
        """The user's setting (kept in settings.toml); off stops what is under way."""
        import dataclasses

        from app.core.base.prefs import save_prefs

        if on == self.prefs.early_downloads:
            return
        self.prefs = dataclasses.replace(self.prefs, early_downloads=on)
        try:
            save_prefs(self.prefs)
        except OSError:
            pass  # the setting holds for this run
        if not on:
            self.stop()
        self.changed.emit()

    def want(self, ahead: Ahead | None) -> None:
        """Fetch ``ahead`` early (None: nothing); another one under way is cancelled first."""
        cur = self.current
        if ahead is not None and cur is not None and cur.ahead == ahead and cur.state != "cancelled":
            return  # already under way (or done) for this choice
        self.stop()
        if ahead is None or not self.enabled:
            return
        from app.core.detection.metered import metered
        from app.core.env.backends import uv_bin
        from app.core.install.early import Prefetch, early_allowed

        self.current = Prefetch(ahead, uv=uv_bin(), proxy=ahead.sources.proxy, ca_bundle=ahead.sources.ca_bundle,
                                check=lambda: early_allowed(True, lambda: metered().value)).start()
        self._timer.start()
        self.changed.emit()

    def stop(self, wait_s: float = 0.0) -> None:
        """Cancel what is under way; wait up to ``wait_s`` seconds for it to end (it ends within a
        read and removes its partial files)."""
        cur = self.current
        if cur is not None:
            if cur.running:
                cur.cancel()
                self.stopped.append(cur)
            self.current = None
            self._timer.stop()
            self.changed.emit()
        for old in self.stopped if wait_s else ():
            old.wait(wait_s)

    def _tick(self) -> None:
        self.changed.emit()
        if self.current is None or not self.current.running:
            self._timer.stop()

    def status(self) -> tuple[str, int, int, str]:
        """(state, bytes in, bytes in all, why) of the current early download ("" when none)."""
        from app.core.base.text import render
        from app.gui.i18n import current_language

        cur = self.current
        if cur is None:
            return "", 0, 0, ""
        return cur.state, cur.done_bytes, cur.total_bytes, render(cur.why, current_language()) if cur.why else ""


def early_downloads(state: WizardState) -> EarlyDownloads:
    """The wizard's one :class:`EarlyDownloads` (made on first use)."""
    if state.early is None:
        state.early = EarlyDownloads()
    assert isinstance(state.early, EarlyDownloads)
    return state.early
