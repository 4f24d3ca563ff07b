"""netlab: real network servers on 127.0.0.1 for tests and benchmarks.

* :class:`IndexServer` - a PEP 503/691 index laid out like download.pytorch.org/whl/<variant>/
  and like PyPI's /simple/, plus flat find-links pages; Range, HEAD, Basic auth, TLS, a request
  log, and per-file failures (:mod:`tests.netlab.behaviours`).
* :class:`ProxyServer` - a forward proxy (HTTP and CONNECT) with Basic auth, loopback targets only.
* :class:`Unreachable` - a refused port and a silent port.
* :class:`TestCA` - a trustme CA with its PEM bundle.
* :func:`gather_wheelhouse` - torch + its dependencies in one cached folder.

Every server binds 127.0.0.1 only. Fixtures: :mod:`tests.netlab.fixtures`. CLI:
``python -m tests.netlab serve --root DIR [--tls] [--auth USER:TOKEN] [--port N]``.
"""
from tests.netlab.base import LOOPBACK, LoggedRequest, RequestLog
from tests.netlab.behaviours import FORBIDDEN, NOT_FOUND, Drop, Redirect, Slow, Status, WrongHash
from tests.netlab.files import FakeRelease, IndexFile, build_wheel, file_sha256
from tests.netlab.index import JSON_TYPE, IndexServer, RefusedPort
from tests.netlab.proxy import ProxyServer
from tests.netlab.tls import TestCA
from tests.netlab.unreachable import Unreachable
from tests.netlab.wheelhouse import Wheelhouse, gather_wheelhouse

__all__ = [
    "FORBIDDEN",
    "JSON_TYPE",
    "LOOPBACK",
    "NOT_FOUND",
    "Drop",
    "FakeRelease",
    "IndexFile",
    "IndexServer",
    "LoggedRequest",
    "ProxyServer",
    "Redirect",
    "RefusedPort",
    "RequestLog",
    "Slow",
    "Status",
    "TestCA",
    "Unreachable",
    "Wheelhouse",
    "WrongHash",
    "build_wheel",
    "file_sha256",
    "gather_wheelhouse",
]
