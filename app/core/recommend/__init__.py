"""The recommendation engine: which PyTorch build, for which GPU(s), and why.

``recommend(report, data=None, choices=None) -> Recommendation`` is a pure function of the
:class:`~app.core.system.SystemReport`, the compatibility data (``resources/compat``, see
:mod:`app.core.compat`) and the user's overrides (:class:`Choices`). It never picks a wheel that
cannot run: a CUDA build must pass BOTH the driver floor of its CUDA major AND carry kernels for
the GPU's compute capability (:mod:`app.core.cuda`: same major, device minor >= compiled minor,
Tegra exact only; PTX is not counted as support, see docs/compat-decisions.md). It picks the
newest torch release that works on the machine and the best build of it, says which driver
would unlock a newer one, and explains every decision in texts (:mod:`app.core.text`) that the
presenters render in their language (:meth:`Recommendation.texts`).

``valid_choices(report, data=None)`` lists every backend / variant / torch release on this
platform, each valid or with the reason it is not (the GUI's "Change…" dialog).

The package, by responsibility: ``types`` (the public types), ``machine`` (the report read into
the engine's view, ``facts``), ``evaluate`` (one release x build against the machine),
``engine`` (the pick, or the refusal), ``decide`` (what follows from the pick: Python, driver
upgrade), ``commands`` (package list, pins, pip/uv commands), ``choices`` (alternatives and
valid_choices), ``problems`` / ``explain`` / ``words`` (every sentence), ``assemble`` (the
Recommendation).
"""
from __future__ import annotations

from app.core.recommend.choices import valid_choices
from app.core.recommend.engine import recommend
from app.core.recommend.types import (
    COMPANIONS,
    Alternative,
    BuildOption,
    Choices,
    DriverUpgrade,
    GpuRef,
    Option,
    Recommendation,
    RecommendationText,
    Rendered,
    UnservedGpu,
    ValidChoices,
    code_of,
)

__all__ = [
    "COMPANIONS",
    "Alternative",
    "BuildOption",
    "Choices",
    "DriverUpgrade",
    "GpuRef",
    "Option",
    "Recommendation",
    "RecommendationText",
    "Rendered",
    "UnservedGpu",
    "ValidChoices",
    "code_of",
    "recommend",
    "valid_choices",
]
