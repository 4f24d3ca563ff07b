"""The closed sets of names that cross the seams: backends and install phases.

Each is a ``str`` enum, so a member compares equal to (and serialises as) its plain value:
``Backend.CUDA == "cuda"`` and ``json.dumps(Phase.INSTALL) == '"install"'``.
"""
from __future__ import annotations

from enum import Enum

__all__ = ["ACCELERATORS", "Backend", "Phase", "PhaseState"]


class _Word(str, Enum):
    """A str enum whose ``str()`` is its plain value (``str(Backend.CUDA) == "cuda"``)."""

    def __str__(self) -> str:
        return str(self.value)


class Backend(_Word):
    """What a PyTorch build computes on."""

    CPU = "cpu"
    CUDA = "cuda"
    ROCM = "rocm"
    MPS = "mps"
    XPU = "xpu"

    @classmethod
    def parse(cls, value: str | None) -> Backend | None:
        """``"CUDA"`` -> Backend.CUDA; None or an unknown word -> None."""
        if value is None:
            return None
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            return None


#: The backends that are an accelerator (a build for one of them must find it usable).
ACCELERATORS: tuple[str, ...] = ("cuda", "rocm", "mps", "xpu")


class Phase(_Word):
    """The phases an install (or bundle build) reports through :class:`~app.core.base.events.PhaseEvent`."""

    PLAN = "plan"
    PREFLIGHT = "preflight"
    SNAPSHOT = "snapshot"
    CREATE_ENV = "create-env"
    INSTALL = "install"
    DOWNLOAD = "download"
    HASH = "hash"
    VERIFY = "verify"
    BENCH = "bench"
    ROLLBACK = "rollback"
    RESTORE = "restore"


class PhaseState(_Word):
    START = "start"
    END = "end"
    FAILED = "failed"
    SKIPPED = "skipped"
