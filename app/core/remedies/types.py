"""What the failing call knew (:class:`Context`), so that the catalogue's actions carry real values."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.base.actions import Action, ActionKind, Remedy, Step

if TYPE_CHECKING:  # the compat data is read by the caller
    from app.core.compat.data import CompatData

__all__ = ["Action", "ActionKind", "Context", "Remedy", "Step"]


@dataclass(frozen=True)
class Context:
    """What the failing call knew, so that actions carry real values (all optional).

    ``need_mb`` / ``free_mb``: the space the step needs and the space there is at ``path``;
    ``env``: the variables that matter (``CUDA_VISIBLE_DEVICES``); ``data``: the compat data, for
    suggesting a build or a torch version (None: the actions stay general).
    """

    os_family: str = ""  # linux | windows | macos
    path: str = ""  # the environment (or the folder written to)
    python: str = ""  # the environment's Python version, "3.11.7"
    torch: str = ""  # the torch version asked for
    variant: str = ""  # the build asked for: cu126, cpu, ...
    installer: str = ""  # uv | pip | conda
    bundle: bool = False  # installing from an offline bundle
    need_mb: int | None = None
    free_mb: int | None = None
    compute_capability: str = ""  # the GPU's, "6.1"
    driver: str = ""  # the NVIDIA driver, "550.54.14"
    env: tuple[tuple[str, str], ...] = ()
    data: CompatData | None = field(default=None, repr=False, compare=False)

    def env_value(self, name: str) -> str | None:
        return next((v for k, v in self.env if k == name), None)

    @classmethod
    def with_env(cls, names: Sequence[str], environ: Mapping[str, str], **kw: Any) -> Context:
        """A context carrying the variables ``names`` that are set in ``environ``."""
        return cls(env=tuple((n, environ[n]) for n in names if n in environ), **kw)
