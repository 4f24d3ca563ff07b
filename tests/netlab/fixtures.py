"""pytest fixtures for netlab (registered by tests/conftest.py through ``pytest_plugins``).

Factory fixtures (call them as often as a test needs; every server is stopped at teardown and
checked to have left no connection behind):

* ``index_server(files=None, *, behaviours=None, tls=False, auth=None, pep691=True,
  core_metadata=True, variants=None, fake=(), link=None, ranges=True)`` -> a started
  :class:`IndexServer`.
  ``files=None`` serves ``torch_wheelhouse`` (torch 2.13.0+cpu and its dependencies).
* ``proxy_server(auth=None)`` -> a started :class:`ProxyServer`.

Plain fixtures: ``torch_wheelhouse`` (session; :class:`Wheelhouse`), ``test_ca`` (session;
:class:`TestCA`), ``unreachable`` (:class:`Unreachable`), ``tiny_wheels`` (session; a folder of
small generated wheels, for tests that do not need torch), ``cuda_set`` (session; the generated
CUDA-like wheel set at 1 % of its size: a 5 MB torch-like wheel and twelve small libraries).
"""
from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from tests.netlab.behaviours import BehaviourMap
from tests.netlab.files import FakeRelease, IndexFile, build_wheel
from tests.netlab.index import IndexServer
from tests.netlab.link import Link
from tests.netlab.proxy import ProxyServer
from tests.netlab.tls import TestCA
from tests.netlab.unreachable import Unreachable
from tests.netlab.wheelhouse import Wheelhouse, gather_wheelhouse
from tests.netlab.wheelset import WheelSet, cuda_like_set

IndexFactory = Callable[..., IndexServer]
ProxyFactory = Callable[..., ProxyServer]


@pytest.fixture(scope="session")
def torch_wheelhouse(local_wheels: Path) -> Wheelhouse:
    """torch 2.13.0+cpu and every wheel it needs, in one cached folder (pip download, local sources)."""
    return gather_wheelhouse([local_wheels])


@pytest.fixture(scope="session")
def test_ca(tmp_path_factory: pytest.TempPathFactory) -> TestCA:
    """A trustme CA; ``test_ca.bundle`` is the PEM file clients trust."""
    return TestCA(tmp_path_factory.mktemp("netlab-ca"))


@pytest.fixture(scope="session")
def tiny_wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with ``netlab-demo 1.0`` / ``1.1`` (needs ``netlab-dep``) and ``netlab-dep 0.5``, each
    with a 256 KiB payload: small real wheels that pip and uv install."""
    folder = tmp_path_factory.mktemp("tiny-wheels")
    blob = random.Random(503).randbytes(256 * 1024)  # incompressible: the wheel stays 256 KiB
    build_wheel(folder, "netlab-demo", "1.0", requires_python=">=3.8", payload={"blob.bin": blob})
    build_wheel(folder, "netlab-demo", "1.1", requires_python=">=3.8", requires=["netlab-dep"],
                payload={"blob.bin": blob})
    build_wheel(folder, "netlab-dep", "0.5", payload={"blob.bin": blob[::-1]})
    return folder


@pytest.fixture(scope="session")
def cuda_set(tmp_path_factory: pytest.TempPathFactory) -> WheelSet:
    """The CUDA-like wheel set at 1 % (13 MB): a torch-like wheel of 5 MB needing twelve libraries."""
    return cuda_like_set(tmp_path_factory.mktemp("cuda-set"), scale=0.01)


@pytest.fixture
def unreachable() -> Iterator[Unreachable]:
    with Unreachable() as u:
        yield u


def _stop_all(servers: list) -> None:  # type: ignore[type-arg]
    problems = []
    for s in servers:
        s.stop()
        if s.open_connections:
            problems.append(f"{type(s).__name__} kept {s.open_connections} connection(s)")
    assert not problems, "; ".join(problems)


@pytest.fixture
def index_server(request: pytest.FixtureRequest) -> Iterator[IndexFactory]:
    servers: list[IndexServer] = []

    def make(files: Iterable[Path | IndexFile] | None = None, *, behaviours: BehaviourMap | None = None,
             tls: bool = False, auth: tuple[str, str] | None = None, pep691: bool = True,
             core_metadata: bool = True, variants: Iterable[str] | None = None,
             fake: Iterable[FakeRelease] = (), link: Link | None = None, ranges: bool = True) -> IndexServer:
        if files is None:
            files = request.getfixturevalue("torch_wheelhouse").files
        ctx = request.getfixturevalue("test_ca").server_context() if tls else None
        server = IndexServer(files, behaviours=behaviours, tls=ctx, auth=auth, pep691=pep691,
                             core_metadata=core_metadata, variants=variants, fake=fake, link=link, ranges=ranges)
        servers.append(server)
        server.start()
        return server

    yield make
    _stop_all(servers)


@pytest.fixture
def proxy_server() -> Iterator[ProxyFactory]:
    servers: list[ProxyServer] = []

    def make(auth: tuple[str, str] | None = None) -> ProxyServer:
        server = ProxyServer(auth=auth)
        servers.append(server)
        server.start()
        return server

    yield make
    _stop_all(servers)
