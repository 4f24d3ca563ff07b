"""The install's download step when the pre-flight found a verified route (:mod:`app.core.sources`).

:func:`fetch_wheelhouse` fills a per-run wheelhouse: for a new environment (and uv at hand)
the whole resolved set, so the installer then runs with no index at all and
``--require-hashes``; for an existing environment only the pinned torch wheels (its other
packages stay as the installer finds them). :func:`wheelhouse_index` is how the installer is
then pointed at it.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from app.core.base.enums import Phase, PhaseState
from app.core.base.events import Event, PhaseEvent
from app.core.base.text import Text, msg, render
from app.core.env import backends as envs
from app.core.env.backends import env_python
from app.core.install.config import default_index_for
from app.core.install.request import InstallPlan
from app.core.net.client import Client
from app.core.proc import runner
from app.core.sources import variant_of_index
from app.core.sources.download import Served
from app.core.sources.routing import Route
from app.core.sources.settings import SourceSettings
from app.core.sources.wheelhouse import Wheelhouse, fill, new_wheelhouse, resolve
from app.core.sources.wheelhouse import prefetch as _prefetch

__all__ = ["fetch_wheelhouse", "wheelhouse_index"]


def _python(p: InstallPlan) -> str | None:
    """The target Python as "3.11": the plan's, else the new env's own (uv may have fetched it)."""
    if p.python is not None:
        return p.python.minor
    info, _ = envs.probe_python(env_python(p.env_path))
    return info.minor if info is not None else None


def fetch_wheelhouse(p: InstallPlan, route: Route, emit: Callable[[Event], None], cancel: runner.CancelToken,
                     child_env: dict[str, str], log_path: Path, info: Callable[[str], None],
                     warnings: list[Text]) -> Wheelhouse:
    """Resolve (new env) and download into a fresh wheelhouse; raises UserError / Cancelled."""
    chosen = route.chosen
    assert chosen is not None  # route_of() only gives verified routes
    emit(PhaseEvent(Phase.DOWNLOAD, PhaseState.START, msg("sources.download_from", "from {source}",
                                                          source=chosen.source.label(variant_of_index(route.index_url)))))
    python = _python(p)
    net = Client(p.request.sources.proxy, p.request.sources.ca_bundle)
    folders = p.request.sources.folders
    fetched: dict[str, tuple[Path, Served]] = {}
    stop_early = runner.CancelToken()  # stops the early downloads when resolving fails (or on cancel)
    unhook = cancel.on_cancel(stop_early.cancel)
    early = threading.Thread(target=lambda: fetched.update(
        _prefetch(route, net, emit, stop_early, local_folders=folders)), daemon=True)
    early.start()  # the big torch wheels arrive while uv resolves the rest
    locked = None
    try:
        if p.new_env and p.backend.uv:
            locked = resolve(p.backend.uv, p.packages, python, route,
                             default_index=p.index.default_index or default_index_for(p.installer),
                             extra_index_urls=p.index.extra_index_urls, find_links=p.index.find_links,
                             env=child_env, cancel=cancel, log_path=log_path)
    except BaseException:
        stop_early.cancel()
        raise
    finally:
        early.join()
        unhook()
    cancel.raise_if_cancelled()
    house = fill(new_wheelhouse(), route, net, emit, cancel, locked=locked, local_folders=folders, fetched=fetched)
    for s in house.served:
        info(f"{s.filename}: {render(s.source)} ({s.url}), {s.size} bytes"
             + (f", resumed at byte {s.resumed_at}" if s.resumed_at else "") + (" (already here)" if s.cached else ""))
        if s.earlier:
            warnings.append(msg("sources.switched", "{file}: {failures}; {source} sent the rest, from byte {at}.",
                                file=s.filename, failures=s.failures, source=s.source, at=s.resumed_at))
    emit(PhaseEvent(Phase.DOWNLOAD, PhaseState.END))
    return house


def wheelhouse_index(p: InstallPlan, house: Wheelhouse) -> tuple[tuple[str, ...], SourceSettings, Path | None]:
    """The packages, indexes and requirements file the installer gets once the wheelhouse is full."""
    if house.complete and house.requirements is not None:
        wheels = SourceSettings(find_links=(str(house.folder),), offline=True, require_hashes=True)
        return (), wheels, house.requirements
    index = replace(p.index, torch_index=None, find_links=(str(house.folder), *p.index.find_links))
    return p.packages, index, p.requirements_file
