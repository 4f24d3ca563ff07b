"""What an index serves: real files (hash, size, core metadata read once) and listed-only fakes.

* :func:`file_sha256` hashes a file once per (path, size, mtime) in this process.
* :class:`IndexFile` is one distribution file as an index lists it.
* :class:`FakeRelease` lists made-up builds (``torch 2.16.0`` for ``cpu``/``cu132``/``cu134``):
  their pages look real, their files answer 404.
* :func:`build_wheel` writes a small valid wheel (installable by pip and uv), for tests that
  need a package but not torch.
"""
from __future__ import annotations

import base64
import hashlib
import threading
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename

_sha_lock = threading.Lock()
_sha_memo: dict[tuple[str, int, int], str] = {}


def file_sha256(path: Path) -> str:
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    with _sha_lock:
        known = _sha_memo.get(key)
    if known:
        return known
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()
    with _sha_lock:
        _sha_memo[key] = digest
    return digest


def _wheel_metadata(path: Path) -> bytes | None:
    """The ``*.dist-info/METADATA`` bytes of a wheel (None when it has none or is not a zip)."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            return zf.read(names[0]) if names else None
    except (OSError, zipfile.BadZipFile):
        return None


def _requires_python(metadata: bytes | None) -> str | None:
    if not metadata:
        return None
    headers = HeaderParser().parsestr(metadata.decode("utf-8", "replace"), headersonly=True)
    value = headers.get("Requires-Python")
    return value.strip() if value else None


@dataclass(frozen=True)
class IndexFile:
    """One distribution file as an index lists it; ``path`` None means listed but not served."""

    filename: str
    project: str  # canonical name
    version: str  # with its local label (2.13.0+cpu)
    sha256: str
    size: int
    path: Path | None = None
    requires_python: str | None = None
    metadata: bytes | None = None  # core metadata (PEP 658), served as <file>.metadata

    @property
    def variant(self) -> str | None:
        """The local version label (``cpu``, ``cu132``) or None for a build without one."""
        return self.version.split("+", 1)[1] if "+" in self.version else None

    @property
    def metadata_sha256(self) -> str | None:
        return hashlib.sha256(self.metadata).hexdigest() if self.metadata is not None else None

    @classmethod
    def from_path(cls, path: Path) -> IndexFile:
        path = Path(path)
        name = path.name
        if name.endswith(".whl"):
            project, version, _, _ = parse_wheel_filename(name)
            metadata = _wheel_metadata(path)
        else:
            project, version = parse_sdist_filename(name)
            metadata = None
        return cls(filename=name, project=str(project), version=str(version), sha256=file_sha256(path),
                   size=path.stat().st_size, path=path, requires_python=_requires_python(metadata),
                   metadata=metadata)


@dataclass(frozen=True)
class FakeRelease:
    """A made-up release listed on the pages only (its files answer 404).

    ``FakeRelease("torch", "2.16.0", ("cpu", "cu132", "cu134"))`` lists
    ``torch-2.16.0+cu132-cp311-cp311-manylinux_2_28_x86_64.whl`` and so on, one per variant and
    Python tag, on the variant's pages and the flat pages.
    """

    project: str
    version: str
    variants: tuple[str, ...] = ("cpu",)
    python_tags: tuple[str, ...] = ("cp310", "cp311", "cp312", "cp313")
    platform: str = "manylinux_2_28_x86_64"
    requires_python: str | None = ">=3.10"

    def files(self) -> list[IndexFile]:
        out = []
        for variant in self.variants:
            version = f"{self.version}+{variant}" if variant else self.version
            for tag in self.python_tags:
                name = f"{self.project.replace('-', '_')}-{version}-{tag}-{tag}-{self.platform}.whl"
                out.append(IndexFile(filename=name, project=str(canonicalize_name(self.project)), version=version,
                                     sha256=hashlib.sha256(name.encode()).hexdigest(), size=0,
                                     requires_python=self.requires_python))
        return out


def build_wheel(dest: Path, name: str, version: str, *, requires_python: str | None = None,
                requires: Iterable[str] = (), payload: Mapping[str, bytes] | None = None,
                tag: str = "py3-none-any") -> Path:
    """Write a small valid wheel ``<name>-<version>-<tag>.whl`` into ``dest`` and return its path.

    It holds a package ``<name>`` with ``__init__.py`` (``VERSION = "<version>"``) plus
    ``payload`` files (path inside the package -> bytes), so a test can make it as large as it
    needs.
    """
    dest.mkdir(parents=True, exist_ok=True)
    dist = name.replace("-", "_")
    pkg = dist.lower()
    info = f"{dist}-{version}.dist-info"
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        meta.append(f"Requires-Python: {requires_python}")
    meta += [f"Requires-Dist: {r}" for r in requires]
    files: dict[str, bytes] = {f"{pkg}/__init__.py": f'VERSION = "{version}"\n'.encode()}
    for rel, data in (payload or {}).items():
        files[f"{pkg}/{rel}"] = data
    files[f"{info}/METADATA"] = ("\n".join(meta) + "\n").encode()
    files[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: netlab\nRoot-Is-Purelib: true\nTag: {tag}\n").encode()
    record = []
    for rel, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{rel},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = dest / f"{dist}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for rel, data in files.items():
            zf.writestr(rel, data)
    return path
