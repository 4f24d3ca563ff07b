"""How busy the machine is with OTHER work while a measurement runs.

A speed test on a machine that also compiles, trains or renders measures the share of the CPU
it was left, not the hardware. :class:`LoadWatch` samples, from a thread of the assistant's
process, the CPU time the whole machine spent busy and the CPU time of the assistant's own
process tree (itself and the probe it started); the difference is what other programs used.
The busy verdict of the speed test rests on this measured load, never on the timings
themselves (a slow result is not proof of a busy machine, nor a fast one of a quiet one).

``other_share`` is a fraction of the machine's whole CPU capacity (all logical CPUs): 0.5 on
a 2-CPU machine means other programs kept one CPU busy on average. A file (``path``) receives
the recent value while the watch runs, so that a probe can read it between measurements.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psutil

#: Other programs using at least this share of the machine's CPU make a measurement "busy".
BUSY_SHARE = 0.20

_BUSY_FIELDS = ("user", "nice", "system", "irq", "softirq", "steal")


@dataclass(frozen=True)
class LoadSummary:
    """What other programs used while a measurement ran (fractions of the whole machine)."""

    other_share: float  # the mean over the run, 0..1
    other_share_max: float  # the busiest sampling interval
    cpus: int
    samples: int
    duration_s: float

    @property
    def busy(self) -> bool:
        return self.other_share >= BUSY_SHARE

    @property
    def other_cpus(self) -> float:
        """The mean load of other programs in CPUs (1.0: one CPU kept busy)."""
        return self.other_share * self.cpus

    def to_dict(self) -> dict[str, object]:
        return {"other_share": self.other_share, "other_share_max": self.other_share_max, "cpus": self.cpus,
                "samples": self.samples, "duration_s": self.duration_s, "busy": self.busy}

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> LoadSummary:
        def num(key: str) -> float:
            v = d.get(key)
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0

        return cls(other_share=num("other_share"), other_share_max=num("other_share_max"),
                   cpus=int(num("cpus")) or 1, samples=int(num("samples")), duration_s=num("duration_s"))


def _busy_seconds(times: object) -> float:
    return sum(float(getattr(times, f, 0.0) or 0.0) for f in _BUSY_FIELDS)


class LoadWatch:
    """Samples the other programs' CPU load every ``interval_s`` from :meth:`start` to :meth:`stop`.

    ``own`` lists the processes whose CPU is not "other" (default: this process and all its
    descendants, found anew at each sample so that a probe started later is counted as ours).
    """

    def __init__(self, interval_s: float = 0.25, path: str | os.PathLike[str] | None = None,
                 own: Callable[[], list[psutil.Process]] | None = None, window: int = 4) -> None:
        import psutil  # the assistant's dependency; loaded when a measurement starts

        self._psutil = psutil
        self.interval_s = interval_s
        self.path = Path(path) if path is not None else None
        self._own = own or self._own_tree
        self._window = max(1, window)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shares: list[tuple[float, float]] = []  # (interval seconds, other share)
        self._cpu_of: dict[int, float] = {}  # pid -> CPU seconds at the last sample
        self._last: tuple[float, float] | None = None  # (wall clock, machine busy seconds)
        self._started = 0.0
        self.cpus = psutil.cpu_count() or os.cpu_count() or 1

    def _own_tree(self) -> list[psutil.Process]:
        me = self._psutil.Process()
        try:
            return [me, *me.children(recursive=True)]
        except self._psutil.Error:
            return [me]

    def _own_delta(self) -> float:
        """CPU seconds our processes used since the last sample (a new process: all it used)."""
        seen: dict[int, float] = {}
        delta = 0.0
        for p in self._own():
            try:
                t = p.cpu_times()
            except self._psutil.Error:  # ended meanwhile: its last interval is lost (a few ms)
                continue
            used = float(t.user + t.system)
            seen[p.pid] = used
            delta += max(0.0, used - self._cpu_of.get(p.pid, 0.0))
        self._cpu_of = seen
        return delta

    def sample(self) -> float | None:
        """Take one sample; the other programs' share of the machine since the last one."""
        now = time.monotonic()
        busy = _busy_seconds(self._psutil.cpu_times())
        ours = self._own_delta()
        last, self._last = self._last, (now, busy)
        if last is None:
            return None
        wall = now - last[0]
        if wall <= 0:
            return None
        share = max(0.0, min(1.0, (busy - last[1] - ours) / (wall * self.cpus)))
        self._shares.append((wall, share))
        self._publish()
        return share

    def recent(self) -> float | None:
        """The mean share over the last few intervals (what the probe is told)."""
        tail = self._shares[-self._window:]
        total = sum(w for w, _ in tail)
        return sum(w * s for w, s in tail) / total if total > 0 else None

    def _publish(self) -> None:
        if self.path is None:
            return
        value = self.recent()
        if value is None:
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text(f"{value:.4f} {BUSY_SHARE:.4f}\n", encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:  # the probe then measures without the hint
            pass

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.sample()
            except self._psutil.Error:
                continue

    def start(self) -> LoadWatch:
        self._started = time.monotonic()
        self.sample()  # the reference point
        self._thread = threading.Thread(target=self._run, name="load-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> LoadSummary | None:
        """Stop sampling; None when the run was too short for one interval."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        try:
            self.sample()
        except self._psutil.Error:
            pass
        if self.path is not None:
            for p in (self.path, self.path.with_name(self.path.name + ".tmp")):
                try:
                    p.unlink()
                except OSError:
                    pass
        return self.summary()

    def summary(self) -> LoadSummary | None:
        total = sum(w for w, _ in self._shares)
        if total <= 0:
            return None
        mean = sum(w * s for w, s in self._shares) / total
        return LoadSummary(other_share=mean, other_share_max=max(s for _, s in self._shares), cpus=self.cpus,
                           samples=len(self._shares), duration_s=time.monotonic() - self._started)

    def __enter__(self) -> LoadWatch:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
