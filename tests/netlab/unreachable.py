"""Addresses that fail: a refused port and a port that accepts and never answers."""
from __future__ import annotations

import socket

from tests.netlab.base import LOOPBACK, assert_loopback
from tests.netlab.index import RefusedPort


class Unreachable:
    """Two 127.0.0.1 ports held for the test's lifetime.

    * ``refused_port`` / ``refused_url``: bound, not listening: connecting is refused at once.
    * ``silent_port`` / ``silent_url``: listening, never accepting: the TCP handshake completes
      (in the kernel's backlog) and then nothing ever answers: a client times out.
    """

    def __init__(self) -> None:
        self._refused = RefusedPort()
        self._silent = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._silent.bind((LOOPBACK, 0))
        assert_loopback(self._silent.getsockname())
        self._silent.listen(64)
        self.refused_port: int = self._refused.port
        self.silent_port: int = self._silent.getsockname()[1]

    @property
    def refused_url(self) -> str:
        return f"http://{LOOPBACK}:{self.refused_port}/simple/"

    @property
    def silent_url(self) -> str:
        return f"http://{LOOPBACK}:{self.silent_port}/simple/"

    def close(self) -> None:
        self._refused.close()
        self._silent.close()

    def __enter__(self) -> Unreachable:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
