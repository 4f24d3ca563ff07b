"""The install progress model (Qt-free): what the bar, the package line and the time left show."""
from __future__ import annotations

import pytest

from app.core.base.events import ProgressEvent
from app.core.base.progress_model import InstallProgress, PackageLine


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


MB = 1_000_000


def test_bytes_drive_the_bar_and_it_never_runs_backwards():
    m = InstallProgress(clock=Clock())
    assert (m.mode, m.fraction, m.line) == ("busy", 0.0, None)
    m.feed(ProgressEvent("torch", 50 * MB, 200 * MB))
    assert m.mode == "download" and m.fraction == pytest.approx(0.25)
    assert m.line == PackageLine("bytes", "torch", 50 * MB, 200 * MB)
    # a second download makes the known total larger: the bar holds
    m.feed(ProgressEvent("sympy", 0, 6 * MB))
    assert m.fraction == pytest.approx(0.25)
    m.feed(ProgressEvent("torch", 150 * MB, 200 * MB))
    m.feed(ProgressEvent("sympy", 6 * MB, 6 * MB))
    assert m.fraction == pytest.approx(156 / 206)
    assert m.byte_totals() == (156 * MB, 206 * MB)


def test_all_downloads_done_is_a_busy_bar_then_packages_count():
    m = InstallProgress(clock=Clock())
    m.feed(ProgressEvent("torch", 10 * MB, 10 * MB))
    assert m.mode == "busy" and m.fraction == 0.0 and m.line == PackageLine("unpacking")
    m.feed(ProgressEvent("torch", 9, 10, unit="packages"))
    assert m.mode == "packages" and m.fraction == pytest.approx(0.9)
    assert m.line == PackageLine("packages", "torch", 9, 10)


def test_a_package_count_without_bytes():
    m = InstallProgress(clock=Clock())
    m.feed(ProgressEvent("numpy", 0, 12, unit="packages"))
    assert m.mode == "busy" and m.line is None  # nothing done yet: no line, a busy bar
    m.feed(ProgressEvent("numpy", 3, 12, unit="packages"))
    assert m.mode == "packages" and m.fraction == pytest.approx(0.25)
    assert m.line == PackageLine("packages", "numpy", 3, 12)


def test_time_left_from_the_byte_rate():
    clock = Clock()
    m = InstallProgress(clock=clock)
    assert m.eta() is None
    m.feed(ProgressEvent("torch", 20 * MB, 100 * MB))
    assert m.eta() is None  # no time has passed: no rate yet
    clock.t += 0.5
    assert m.eta() is None  # under a second: too little to go on
    clock.t += 9.5
    m.feed(ProgressEvent("torch", 60 * MB, 100 * MB))
    # 60 MB in 10 s since the first bytes: 40 MB left is 6.7 s
    assert m.eta() == pytest.approx(40 / 6, rel=1e-6)
    m.feed(ProgressEvent("torch", 100 * MB, 100 * MB))
    assert m.eta() is None  # busy: no made-up time left


def test_time_left_from_the_package_rate():
    clock = Clock()
    m = InstallProgress(clock=clock)
    m.feed(ProgressEvent("a", 1, 5, unit="packages"))
    clock.t += 4
    m.feed(ProgressEvent("b", 3, 5, unit="packages"))
    assert m.eta() == pytest.approx(2 / (3 / 4))


def test_reset_starts_over():
    clock = Clock()
    m = InstallProgress(clock=clock)
    m.feed(ProgressEvent("torch", 5, 10))
    m.reset()
    assert (m.mode, m.fraction, m.line, m.byte_totals(), m.eta()) == ("busy", 0.0, None, (0, 0), None)
    clock.t += 50
    m.feed(ProgressEvent("torch", 5, 10))
    clock.t += 5
    assert m.eta() == pytest.approx(5.0)  # the rate counts from this run's first bytes


def test_the_time_left_grows_with_the_work_when_another_files_size_becomes_known():
    """Issue 29: the download's total grows as the sizes of the other files arrive (the torch wheel
    first, the rest once resolved); the countdown of the smaller total must not hold the estimate."""
    clock = Clock()
    m = InstallProgress(clock=clock)
    m.feed(ProgressEvent("torch", 1 * MB, 50 * MB))
    clock.t += 2.0
    m.feed(ProgressEvent("torch", 11 * MB, 50 * MB))
    assert m.eta() == pytest.approx(39 / 5.5)  # 11 MB in 2 s, 39 MB left
    clock.t += 1.0
    m.feed(ProgressEvent("nvidia-cudnn", 0, 100 * MB))  # its size is known now: 100 MB more to come
    m.feed(ProgressEvent("torch", 16 * MB, 50 * MB))
    assert m.eta() == pytest.approx((150 - 16) / (16 / 3))  # not the old countdown (about 6 s)


def test_a_download_measured_for_ten_seconds_says_its_time_left_as_it_is():
    """Issue 29: once a download's rate has been measured for 10 s, its time left is the bytes left
    over that average, up or down: an early estimate (made before every connection was under way)
    no longer holds it low for the rest of the download."""
    clock = Clock()
    m = InstallProgress(clock=clock)
    m.feed(ProgressEvent("torch", 1, 200 * MB))
    clock.t += 2.0
    m.feed(ProgressEvent("torch", 30 * MB, 200 * MB))  # a quick start: 15 MB/s
    early = m.eta()
    assert early == pytest.approx(170 / 15, rel=1e-3)
    clock.t += 10.0
    m.feed(ProgressEvent("torch", 90 * MB, 200 * MB))  # 90 MB in 12 s: 7.5 MB/s
    assert m.eta() == pytest.approx(110 / 7.5, rel=1e-3)  # more than the countdown (about 1.3 s) would say


def test_the_time_left_of_a_download_counts_what_follows_its_last_byte():
    """Issue 29: near the end of a download the time left said ~0 s while the last wheel still had to go
    in and the install step to check them all (1-2 s really left). The wheels that went in while the
    rest downloaded tell how long that takes: the time left adds it; an "installed" event is no
    download of its own (the bar and its line stay on the bytes)."""
    clock = Clock()
    m = InstallProgress(clock=clock)
    m.feed(ProgressEvent("torch", 1, 100 * MB))
    m.feed(ProgressEvent("nvidia-cublas", 0, 20 * MB))
    clock.t += 2
    m.feed(ProgressEvent("torch", 100 * MB, 100 * MB))  # torch's last byte
    m.feed(ProgressEvent("nvidia-cublas", 0, 20 * MB))
    plain = m.eta()
    assert plain == pytest.approx(20 / 50)  # 20 MB left at 50 MB/s, nothing learnt yet
    clock.t += 0.6
    m.feed(ProgressEvent("torch", 1, 2, unit="installed"))  # in, 0.6 s after its last byte
    assert (m.mode, m.line) == ("download", PackageLine("bytes", "nvidia-cublas", 0, 20 * MB))
    assert m.byte_totals() == (100 * MB, 120 * MB)
    assert m.tail() == pytest.approx(2 * 0.6)
    clock.t += 5  # measured long enough to say it as it is
    m.feed(ProgressEvent("nvidia-cublas", 10 * MB, 20 * MB))
    rate = 110 * MB / 7.6  # since the first byte
    assert m.eta() == pytest.approx(10 * MB / rate + 1.2)
    # an "installed" event for a package that never downloaded (it was in the folder) teaches nothing
    m.feed(ProgressEvent("numpy", 2, 3, unit="installed"))
    assert m.tail() == pytest.approx(1.2)
    m.reset()
    assert m.tail() == 0.0


def test_a_quick_starts_estimate_is_not_counted_down_once_it_is_clearly_wrong():
    """Issue 29: under load the download's first second came in a burst (3.5 times the line's rate); its
    estimate was counted down for the next 10 s, so at 21 % of the bytes the page said 9 s where 45 s
    were left. A slow patch still does not raise the countdown; a rate that says half as much again does."""
    clock = Clock()
    m = InstallProgress(clock=clock)
    m.feed(ProgressEvent("torch", 1, 200 * MB))
    clock.t += 1.0
    m.feed(ProgressEvent("torch", 20 * MB, 200 * MB))  # a burst: 20 MB/s
    assert m.eta() == pytest.approx(180 / 20, rel=1e-3)
    clock.t += 1.0
    m.feed(ProgressEvent("torch", 36 * MB, 200 * MB))  # 18 MB/s so far: a slow patch, the countdown holds
    assert m.eta() == pytest.approx(9.0 - 1.0, rel=1e-3)
    clock.t += 4.0
    m.feed(ProgressEvent("torch", 60 * MB, 200 * MB))  # 10 MB/s so far: 14 s left, not the countdown's 4
    assert m.eta() == pytest.approx(140 / 10, rel=1e-3)
