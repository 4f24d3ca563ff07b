"""netlab: real network servers on 127.0.0.1 for tests and benchmarks.

* :class:`IndexServer` - a PEP 503/691 index laid out like download.pytorch.org/whl/<variant>/
  and like PyPI's /simple/, plus flat find-links pages; Range, HEAD, Basic auth, TLS, a request
  log, and per-file failures (:mod:`tests.netlab.behaviours`).
* :class:`ProxyServer` - a forward proxy (HTTP and CONNECT) with Basic auth, loopback targets only.
* :class:`Unreachable` - a refused port and a silent port.
* :class:`TestCA` - a trustme CA with its PEM bundle.
* :func:`gather_wheelhouse` - torch + its dependencies in one cached folder.
* :func:`cuda_like_set` - a generated CUDA-like wheel set (a large torch-like wheel and a dozen
  library wheels), made once per scale and cached.
* :class:`Link` - a paced link (total and per-connection rate caps, latency per request) that
  servers share; :data:`PROFILES` the named links of ``benchmarks/links.py``.

Every server binds 127.0.0.1 only. Fixtures: :mod:`tests.netlab.fixtures`. CLI:
``python -m tests.netlab serve --root DIR [--tls] [--auth USER:TOKEN] [--port N]``.
"""
from tests.netlab.base import LOOPBACK, LoggedRequest, RequestLog
from tests.netlab.behaviours import FORBIDDEN, NOT_FOUND, Drop, Redirect, Slow, Stall, Status, WrongHash
from tests.netlab.files import FakeRelease, IndexFile, build_wheel, file_sha256
from tests.netlab.index import JSON_TYPE, IndexServer, RefusedPort
from tests.netlab.link import PROFILES, Link, LinkProfile
from tests.netlab.proxy import ProxyServer
from tests.netlab.tls import TestCA
from tests.netlab.unreachable import Unreachable
from tests.netlab.wheelhouse import Wheelhouse, gather_wheelhouse
from tests.netlab.wheelset import WheelSet, cuda_like_set

__all__ = [
    "FORBIDDEN",
    "JSON_TYPE",
    "LOOPBACK",
    "NOT_FOUND",
    "PROFILES",
    "Drop",
    "FakeRelease",
    "IndexFile",
    "IndexServer",
    "Link",
    "LinkProfile",
    "LoggedRequest",
    "ProxyServer",
    "Redirect",
    "RefusedPort",
    "RequestLog",
    "Slow",
    "Stall",
    "Status",
    "TestCA",
    "Unreachable",
    "WheelSet",
    "Wheelhouse",
    "WrongHash",
    "build_wheel",
    "cuda_like_set",
    "file_sha256",
    "gather_wheelhouse",
]
