"""Issue 27: a FIFO or a device given as a report or answer file never blocks: with no writer it is
refused at once as an empty file (exit 2), a pipe that delivers is read, and an endless device is
refused by the size cap. Real FIFOs (os.mkfifo), real subprocesses of the CLI under a timeout.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.core.base.errors import BadInput
from app.core.detection.system import load_report
from app.core.pipeline.answers import load_answers

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.posix_only("FIFOs and /dev/zero are POSIX")


def _cli(*argv: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TORCH_SETUP_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "app", *argv], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("argv", [("recommend", "--from-report"), ("install", "--yes", "--config")])
def test_a_fifo_with_no_writer_is_refused_at_once(tmp_path, argv):
    fifo = tmp_path / "input.fifo"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    res = _cli(*argv, str(fifo), home=tmp_path / "home")
    assert time.monotonic() - t0 < 30  # it used to wait for a writer forever
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr and fifo.name in res.stderr
    assert "nothing was written to it" in res.stderr


def test_a_pipe_that_delivers_is_read(tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    doc = (REPO / "tests/fixtures/reports/macos-rosetta-python.json").read_text(encoding="utf-8")

    def writer() -> None:
        with open(fifo, "w", encoding="utf-8") as fh:  # blocks until the reader opens it
            fh.write(doc[:100])
            fh.flush()
            time.sleep(0.5)  # a slow producer: the reader waits for the rest, under its deadline
            fh.write(doc[100:])

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    time.sleep(0.2)
    for _ in range(50):  # the writer's open() returns once a reader has the FIFO open
        try:
            rep = load_report(fifo)
            break
        except BadInput as err:  # opened before the writer: read as empty; try again
            assert "nothing was written to it" in str(err), err
            time.sleep(0.1)
    else:
        pytest.fail("the pipe was never read")
    t.join(5)
    assert [g.name for g in rep.gpus] == [g["name"] for g in json.loads(doc)["gpus"]]


def test_an_endless_device_is_refused_by_the_size_cap():
    with pytest.raises(BadInput) as err:
        load_answers("/dev/zero")
    assert "larger than" in str(err.value) or "not UTF-8" in str(err.value) or "answer file" in str(err.value)
