"""A second torch build for the guard and upgrade tests, from the LOCAL indexes only (nothing stored in git).

The machine's pip is configured with local ``file://`` indexes (``tests.netlab.wheelhouse.local_indexes``);
one of them holds PyPI's torch 2.14.1 (a CUDA 13 build that imports and runs on the CPU) with its
nvidia-* wheels. Two of its dependencies are not in any local index: ``cuda-bindings`` (torch
imports without it on the CPU) is given as a small placeholder wheel built here
(:func:`tests.netlab.files.build_wheel`), in a find-links folder made per test session.

:func:`broken_index` makes a third source for the failed-upgrade test: a PEP 503 index whose
``nvidia-cudnn-cu13`` is an EMPTY wheel of the right name and version, so the staged torch cannot
load ``libcudnn.so.9`` ("cannot open shared object file"), the real failure of a half-installed
CUDA stack.
"""
from __future__ import annotations

import re
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import scratch
from tests.netlab.files import build_wheel, file_sha256
from tests.netlab.wheelhouse import local_indexes

VERSION = "2.14.1"


@dataclass(frozen=True)
class SecondTorch:
    version: str
    indexes: tuple[str, ...]  # file:// simple indexes: the one with torch first
    links: Path  # find-links folder: the cuda-bindings placeholder and the tests' own wheels
    wheel_url: str  # the torch wheel's file:// URL

    def uv_args(self) -> list[str]:
        """``uv pip install`` sources: torch's index ranks first (uv: extra indexes before the default)."""
        torch_index, *rest = self.indexes
        out = ["--index-url", rest[0] if rest else torch_index, "--extra-index-url", torch_index]
        for u in rest[1:]:
            out += ["--extra-index-url", u]
        return [*out, "--find-links", str(self.links)]

    def pip_args(self) -> list[str]:
        out = ["--index-url", self.indexes[0]]
        for u in self.indexes[1:]:
            out += ["--extra-index-url", u]
        return [*out, "--find-links", str(self.links)]


def _links_on(index: str, project: str) -> list[str]:
    page = f"{index.rstrip('/')}/{project}/"
    try:
        with urllib.request.urlopen(page, timeout=10) as resp:  # file:// only (local_indexes keeps those)
            text = resp.read().decode("utf-8", "replace")
    except OSError:
        try:
            with urllib.request.urlopen(page + "index.html", timeout=10) as resp:
                text = resp.read().decode("utf-8", "replace")
        except OSError:
            return []
    return [urllib.parse.urljoin(page, h) for h in re.findall(r'href="([^"]+)"', text)]


def find(tmp_root: Path) -> SecondTorch | None:
    indexes = [u for u in local_indexes() if u.startswith("file://")]
    for idx in indexes:
        hits = [u for u in _links_on(idx, "torch") if f"/torch-{VERSION}-" in u and "cp311" in u]
        if hits:
            links = tmp_root / "second-torch-links"
            links.mkdir(parents=True, exist_ok=True)
            if not any(links.glob("cuda_bindings-*.whl")):
                build_wheel(links, "cuda-bindings", "13.0.3")
            ordered = (idx, *(u for u in indexes if u != idx))
            return SecondTorch(VERSION, ordered, links, hits[0].split("#", 1)[0])
    return None


@pytest.fixture(scope="session")
def second_torch(tmp_path_factory) -> SecondTorch:
    import sys

    if sys.version_info[:2] != (3, 11):
        pytest.skip("the local torch 2.14.1 wheel is for CPython 3.11")
    found = find(tmp_path_factory.mktemp("second-torch"))
    if found is None:
        pytest.skip(f"no torch {VERSION} in the local indexes (pip's configured file:// indexes)")
    return found


def broken_index(root: Path, second: SecondTorch) -> str:
    """A file:// simple index: the real torch wheel, and an empty nvidia-cudnn-cu13 of the right version."""
    simple = root / "broken-index" / "simple"
    stub_dir = root / "broken-index" / "files"
    stub = build_wheel(stub_dir, "nvidia-cudnn-cu13", "9.24.0.43")
    torch_path = Path(urllib.parse.unquote(urllib.parse.urlparse(second.wheel_url).path))
    for project, path in (("torch", torch_path), ("nvidia-cudnn-cu13", stub)):
        page = simple / project
        page.mkdir(parents=True, exist_ok=True)
        (page / "index.html").write_text(
            f'<!DOCTYPE html><html><body><a href="{path.as_uri()}#sha256={file_sha256(path)}">{path.name}</a>'
            "</body></html>\n", encoding="utf-8")
    (simple / "index.html").write_text("<html><body>" + "".join(
        f'<a href="{p}/">{p}</a>' for p in ("torch", "nvidia-cudnn-cu13")) + "</body></html>\n", encoding="utf-8")
    return simple.as_uri()


@pytest.fixture(scope="module")
def module_uv_cache(tmp_path_factory) -> Iterator[Path]:
    with scratch(tmp_path_factory, "uv-cache") as folder:
        yield folder


@pytest.fixture
def own_uv_cache(module_uv_cache: Path, monkeypatch) -> Path:
    """uv's cache for these tests: one of the test module's own (cold once, then warm).

    The real-install tests here install several GB; a cache of their own keeps them independent of
    what happens to the shared per-user uv cache meanwhile (another tool pruning or cleaning it),
    and it goes when the module ends (torch 2.14.1 with its CUDA libraries is about 6 GB unpacked).
    """
    monkeypatch.setenv("UV_CACHE_DIR", str(module_uv_cache))
    return module_uv_cache
