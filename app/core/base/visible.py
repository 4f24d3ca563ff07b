"""What ``CUDA_VISIBLE_DEVICES`` (and its ROCm cousins) let PyTorch see: the one parser, and
the variables that show PyTorch only the GPUs a build serves (:func:`showing_only`).

The CUDA runtime reads the list left to right and stops at the first entry that is not a
device: an index out of range, a repeated index, an unknown word. Entries before it stay
visible; a list whose first entry is invalid hides every GPU. ``-1``, ``none`` and
``NoDevFiles`` hide everything on purpose; an empty value hides everything too. Entries may be
UUIDs (``GPU-8932f937-…``, ``MIG-…``; reports store them as ``GPU-<uuid>``), which count as
visible devices we cannot match to an index.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

__all__ = ["VISIBLE_VARS", "Visibility", "VisibleDevices", "is_uuid", "parse_visible", "showing_only"]

#: variable -> the backends it affects
VISIBLE_VARS = {
    "CUDA_VISIBLE_DEVICES": ("cuda", "rocm"),
    "HIP_VISIBLE_DEVICES": ("rocm",),
    "ROCR_VISIBLE_DEVICES": ("rocm",),
}
_DISABLED = ("-1", "none", "nodevfiles", "void")
_UUID = re.compile(r"^(?:GPU|MIG|MIG-GPU)-(?:<uuid>|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})"
                   r"(?:/\d+/\d+)?$")
_UUID_SHAPE = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
_HEX = frozenset("0123456789abcdefABCDEF")


def is_uuid(entry: str) -> bool:
    """A GPU/MIG UUID, full or its first characters (``GPU-8932f937``, ``GPU-8b5e2c1a-00``)."""
    if _UUID.match(entry):
        return True
    prefix, _, rest = entry.partition("-")
    if prefix not in ("GPU", "MIG") or not rest or len(rest) > len(_UUID_SHAPE):
        return False
    return all((c == "-") if s == "-" else (c in _HEX) for c, s in zip(rest, _UUID_SHAPE[:len(rest)], strict=True))


class Visibility(str, Enum):
    UNSET = "unset"  # the variable is not set: every GPU is visible
    ALL = "all"  # set, and every entry is a device
    PARTIAL = "partial"  # an invalid entry cuts the list short
    EMPTY = "empty"  # set to "": no GPU
    DISABLED = "disabled"  # -1 / none / NoDevFiles: no GPU, on purpose
    NONE_VALID = "none-valid"  # the first entry is not a device: no GPU


@dataclass(frozen=True)
class VisibleDevices:
    state: Visibility
    value: str | None = None
    indices: tuple[int, ...] = ()  # the visible ordinals, in the order PyTorch numbers them
    uuids: int = 0  # how many visible entries are UUIDs
    invalid: str | None = None  # the first entry that is not a device
    entries: int = 0  # how many entries the value lists

    @property
    def hides_all(self) -> bool:
        return self.state in (Visibility.EMPTY, Visibility.DISABLED, Visibility.NONE_VALID)

    @property
    def count(self) -> int | None:
        """How many devices PyTorch will see (None: every device, unknown how many)."""
        if self.state is Visibility.UNSET:
            return None
        return len(self.indices) + self.uuids

    def hides(self, index: int) -> bool:
        """Is GPU ``index`` (the machine's numbering) hidden? False when unknowable (UUIDs)."""
        if self.state is Visibility.UNSET:
            return False
        if self.hides_all:
            return True
        if self.uuids:
            return False
        return index not in self.indices


def parse_visible(value: str | None, gpu_count: int | None = None) -> VisibleDevices:
    """Parse a ``*_VISIBLE_DEVICES`` value; ``gpu_count`` (when known) bounds the indices."""
    if value is None:
        return VisibleDevices(Visibility.UNSET)
    v = value.strip()
    if v == "":
        return VisibleDevices(Visibility.EMPTY, value)
    tokens = [t.strip() for t in v.split(",")]
    if tokens[0].lower() in _DISABLED or re.fullmatch(r"-\d+", tokens[0]):
        return VisibleDevices(Visibility.DISABLED, value, entries=len(tokens))
    indices: list[int] = []
    uuids = 0
    invalid: str | None = None
    for t in tokens:
        if re.fullmatch(r"\d{1,6}", t):
            i = int(t)
            if (gpu_count is not None and i >= gpu_count) or i in indices:
                invalid = t
                break
            indices.append(i)
        elif is_uuid(t):
            uuids += 1
        else:
            invalid = t
            break
    if not indices and not uuids:
        return VisibleDevices(Visibility.NONE_VALID, value, invalid=invalid, entries=len(tokens))
    state = Visibility.PARTIAL if invalid is not None else Visibility.ALL
    return VisibleDevices(state, value, tuple(indices), uuids, invalid, len(tokens))


def showing_only(backend: str, shown: Sequence[int], every: Sequence[int | None]) -> dict[str, str]:
    """The variables that make PyTorch see only the GPUs ``shown`` (their indices, as the vendor's
    tool numbers them) of a machine whose GPUs of that vendor are ``every``; {} when nothing is
    hidden, or when a GPU's index is unknown (the numbering cannot be trusted then).

    * CUDA numbers GPUs fastest first unless ``CUDA_DEVICE_ORDER=PCI_BUS_ID``; nvidia-smi (and
      NVML) number them in PCI bus order. Both variables are set, so the indices mean what
      nvidia-smi shows, and the first one shown is ``cuda:0``.
    * ROCm (HIP) numbers GPUs as rocminfo lists its GPU agents; ``HIP_VISIBLE_DEVICES`` takes those
      indices.
    """
    if not shown or any(i is None for i in every) or set(shown) >= {i for i in every if i is not None}:
        return {}
    value = ",".join(str(i) for i in sorted(set(shown)))
    if backend == "cuda":
        return {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": value}
    if backend == "rocm":
        return {"HIP_VISIBLE_DEVICES": value}
    return {}
