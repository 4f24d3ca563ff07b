"""Wheel file names, local version labels and variants: the one reading of them.

``torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl`` -> name ``torch``, version
``2.13.0+cpu``, variant ``cpu``, tags ``cp311-cp311-manylinux_2_28_x86_64``. A variant is the
name of a PyTorch wheel index (``cpu``, ``cu126``, ``rocm6.4``, ``xpu``); its backend is what the
build computes on.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.base.enums import Backend

__all__ = ["PYTORCH_INDEX", "WheelFile", "backend_of_variant", "index_local_label", "local_label", "parse_wheel",
           "variant_of_version", "with_local_label"]

_VARIANT = re.compile(r"^(cpu|xpu|mps|cu\d{2,4}|rocm\d+(?:\.\d+)*|rocm-therock)$")


def local_label(version: str | None) -> str | None:
    """``"2.13.0+cu126"`` -> ``"cu126"``; no label -> None."""
    if not version or "+" not in str(version):
        return None
    return str(version).split("+", 1)[1] or None


#: The PyTorch wheel indexes: ``https://download.pytorch.org/whl/<variant>``.
PYTORCH_INDEX = "https://download.pytorch.org/"


def index_local_label(index_url: str, platform: str | None) -> str | None:
    """The local version label the PyTorch index gives its wheels on ``platform``, or None.

    ``https://download.pytorch.org/whl/cu126`` on ``linux-*`` and ``windows-*`` -> ``"cu126"``
    (its wheels are ``torch-2.14.1+cu126-...``); its macOS wheels carry no label, and other
    indexes (PyPI, AMD's) are not known to label theirs.
    """
    if not index_url.startswith(PYTORCH_INDEX):
        return None
    if not (platform or "").startswith(("linux-", "windows-")):
        return None
    return index_url.rstrip("/").rsplit("/", 1)[-1] or None


def with_local_label(version: str, label: str | None) -> str:
    """``("2.14.1", "cu126")`` -> ``"2.14.1+cu126"``; no label -> the version as it is."""
    return f"{version}+{label}" if label else version


def variant_of_version(version: str | None) -> str | None:
    """The wheel variant named by a version's local label (``+cu126`` -> ``cu126``), or None.

    A version without a label (PyPI's builds) or with a label that is not a PyTorch variant
    gives None.
    """
    label = local_label(version)
    return label if label and _VARIANT.match(label) else None


def backend_of_variant(variant: str | None) -> Backend | None:
    """``cu126`` -> CUDA, ``rocm6.4`` -> ROCm, ``cpu``/``xpu``/``mps`` -> themselves; else None."""
    if not variant:
        return None
    v = variant.lower()
    if re.fullmatch(r"cu\d{2,4}", v):
        return Backend.CUDA
    if v.startswith("rocm"):
        return Backend.ROCM
    return Backend.parse(v)


@dataclass(frozen=True)
class WheelFile:
    filename: str
    name: str  # canonical
    version: str  # with its local label
    tags: tuple[str, ...]  # "cp311-cp311-manylinux_2_28_x86_64", one per expanded tag

    @property
    def variant(self) -> str | None:
        return variant_of_version(self.version)

    @property
    def pythons(self) -> frozenset[str]:
        return frozenset(t.split("-")[0] for t in self.tags)

    @property
    def platforms(self) -> frozenset[str]:
        return frozenset(t.split("-")[2] for t in self.tags)


def parse_wheel(filename: str) -> WheelFile | None:
    """A wheel's parts from its file name; None when it is not a valid wheel name."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    try:
        name, version, _build, tags = parse_wheel_filename(base)
    except (InvalidWheelFilename, ValueError):
        return None
    return WheelFile(base, str(name), str(version), tuple(sorted(str(t) for t in tags)))
