"""The install's download step when the pre-flight found a verified route (:mod:`app.core.sources`).

:class:`EarlyFetch` starts the route's torch wheels as soon as the pre-flight has passed (they
arrive while the environment is made and uv resolves the rest); :func:`fetch_wheelhouse` then
fills a per-run wheelhouse: for a new environment (and uv at hand)
the whole resolved set, so the installer then runs with no index at all and
``--require-hashes``; for an existing environment only the pinned torch wheels (its other
packages stay as the installer finds them). :func:`wheelhouse_index` is how the installer is
then pointed at it.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from app.core.base.enums import Phase, PhaseState
from app.core.base.errors import UserError
from app.core.base.events import Event, PhaseEvent, ProgressEvent
from app.core.base.text import Text, msg, render
from app.core.env import backends as envs
from app.core.env.backends import env_python
from app.core.install.config import default_index_for
from app.core.install.interpreter import ensure_own_interpreter
from app.core.install.request import CommandRun, InstallPlan, masked
from app.core.net.client import Client
from app.core.proc import runner
from app.core.sources import variant_of_index
from app.core.sources.download import Served
from app.core.sources.routing import Route
from app.core.sources.settings import SourceSettings
from app.core.sources.wheelhouse import Wheelhouse, fill, new_wheelhouse, requirement_lines, resolve
from app.core.sources.wheelhouse import prefetch as _prefetch

__all__ = ["EarlyFetch", "InstallAsTheyCome", "fetch_wheelhouse", "wheelhouse_index"]


def _python(p: InstallPlan) -> str | None:
    """The target Python as "3.11": the plan's, else the new env's own (uv may have fetched it)."""
    if p.python is not None:
        return p.python.minor
    info, _ = envs.probe_python(env_python(p.env_path))
    return info.minor if info is not None else None


class EarlyFetch:
    """The route's pinned torch wheels, fetched from the moment the pre-flight has passed: while the
    environment is made and uv resolves the rest (the link is busy from the first second)."""

    def __init__(self, p: InstallPlan, route: Route, emit: Callable[[Event], None],
                 cancel: runner.CancelToken) -> None:
        self.net = Client(p.request.sources.proxy, p.request.sources.ca_bundle)
        self.fetched: dict[str, tuple[Path, Served]] = {}
        self.stop = runner.CancelToken()  # stops the early downloads when the install fails (or on cancel)
        self._unhook = cancel.on_cancel(self.stop.cancel)
        folders = p.request.sources.folders
        self._thread = threading.Thread(target=lambda: self.fetched.update(
            _prefetch(route, self.net, emit, self.stop, local_folders=folders)), daemon=True)
        self._thread.start()

    def close(self, *, stop: bool = False) -> None:
        """Wait for the early downloads (``stop``: stop them first)."""
        if stop:
            self.stop.cancel()
        self._thread.join()
        self._unhook()


class InstallAsTheyCome:
    """A new environment and a complete resolution (uv): each wheel goes into the environment as
    soon as it is in the wheelhouse (``--no-deps``, its hash required, no index), one uv run at a
    time, while the others still download; the install step then finds them in place and only
    checks. Nothing is lost when a run here fails: the install step installs (or fails on, with
    its remedies) whatever is not in yet. Only for a new environment: a failed install removes it."""

    def __init__(self, p: InstallPlan, folder: Path, lines: dict[str, str], child_env: dict[str, str],
                 log_path: Path, cancel: runner.CancelToken, commands: list[CommandRun],
                 emit: Callable[[Event], None] = lambda _e: None, names: dict[str, str] | None = None) -> None:
        self.p, self.folder, self.lines = p, folder, lines
        self.child_env, self.log_path, self.cancel, self.commands = child_env, log_path, cancel, commands
        # each wheel in tells its package (the downloads' name for it): the Install page's time left
        # learns from these how long a wheel takes to go in after its last byte
        self.emit, self.names, self.installed = emit, names or {}, 0
        self._queue: list[str] = []
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def add(self, filename: str) -> None:
        with self._cond:
            if filename in self.lines:
                self._queue.append(filename)
                self._cond.notify_all()

    def close(self) -> None:
        """Wait for the uv run under way (the rest is the install step's)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join()

    def _loop(self) -> None:
        try:
            ensure_own_interpreter(self.p.env_path, log_path=self.log_path)  # as before any installer run
        except UserError:
            return  # the install step says why
        n = 0
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if self._closed or self.cancel.cancelled:
                    return
                batch, self._queue = self._queue, []
            n += 1
            if not self._install(batch, n):
                return

    def _install(self, batch: list[str], n: int) -> bool:
        req = self.folder / f"early-{n}.txt"
        req.write_text("\n".join(self.lines[f] for f in batch) + "\n", encoding="utf-8")
        index = SourceSettings(find_links=(str(self.folder),), offline=True, require_hashes=True)
        argv = self.p.backend.install_argv(self.p.env_path, (), index, requirements=req)
        argv.insert(argv.index("-r"), "--no-deps")
        began = time.monotonic()
        res = runner.run(argv, env=self.child_env, cancel=self.cancel, log_path=self.log_path,
                         timeout=self.p.request.timeout_s)
        self.commands.append(CommandRun("install-early", masked(argv), res.returncode if not res.cancelled else None,
                                        round(time.monotonic() - began, 3)))
        if res.ok:
            for f in batch:
                self.installed += 1
                self.emit(ProgressEvent(self.names.get(f, f), self.installed, len(self.lines), unit="installed"))
        return res.ok


def fetch_wheelhouse(p: InstallPlan, route: Route, early: EarlyFetch, emit: Callable[[Event], None],
                     cancel: runner.CancelToken, child_env: dict[str, str], log_path: Path,
                     info: Callable[[str], None], warnings: list[Text],
                     commands: list[CommandRun] | None = None) -> Wheelhouse:
    """Resolve (new env) and download into a fresh wheelhouse, alongside the early downloads
    (a file they are fetching is waited for, not fetched twice); with a complete resolution for a
    new environment, each wheel is installed as it comes (:class:`InstallAsTheyCome`). Raises
    UserError / Cancelled."""
    chosen = route.chosen
    assert chosen is not None  # route_of() only gives verified routes
    emit(PhaseEvent(Phase.DOWNLOAD, PhaseState.START, msg("sources.download_from", "from {source}",
                                                          source=chosen.source.label(variant_of_index(route.index_url)))))
    locked = None
    try:
        if p.new_env and p.backend.uv:
            locked = resolve(p.backend.uv, p.packages, _python(p), route,
                             default_index=p.index.default_index or default_index_for(p.installer),
                             extra_index_urls=p.index.extra_index_urls, find_links=p.index.find_links,
                             env=child_env, cancel=cancel, log_path=log_path)
        cancel.raise_if_cancelled()
        folder = new_wheelhouse()
        folder.mkdir(parents=True, exist_ok=True)
        as_they_come = InstallAsTheyCome(p, folder, requirement_lines(locked, route, None), child_env, log_path,
                                         cancel, commands if commands is not None else [], emit,
                                         {x.filename: x.name for x in locked or ()}) \
            if locked is not None and p.new_env and p.installer == "uv" else None
        try:
            house = fill(folder, route, early.net, emit, cancel, locked=locked,
                         local_folders=p.request.sources.folders, fetched=dict(early.fetched),
                         on_file=as_they_come.add if as_they_come is not None else None)
        finally:
            if as_they_come is not None:
                as_they_come.close()
    except BaseException:
        early.close(stop=True)
        raise
    early.close()
    # who served the early files (fill found them complete): their own record, switches included
    house = replace(house, served=tuple(early.fetched[s.filename][1] if s.filename in early.fetched else s
                                        for s in house.served))
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
