"""The recommendation engine: which PyTorch build, for which GPU(s), and why.

``recommend(report, data=None, choices=None, available=None) -> Recommendation`` is a pure function of the
:class:`~app.core.detection.system.SystemReport`, the compatibility data (``resources/compat``, see
:mod:`app.core.compat.data`) and the user's overrides (:class:`Choices`). It never picks a wheel that
cannot run: a CUDA build must pass BOTH the driver floor of its CUDA major AND carry kernels for
the GPU's compute capability (:mod:`app.core.compat.cuda`: same major, device minor >= compiled minor,
Tegra exact only; PTX is not counted as support, see docs/compat-decisions.md). It picks the
newest torch release that works on the machine and the best build of it, says which driver
would unlock a newer one, and explains every decision in texts (:mod:`app.core.base.text`) that the
presenters render in their language (:meth:`Recommendation.texts`).

``valid_choices(report, data=None)`` lists every backend / variant / torch release on this
platform, each valid or with the reason it is not; ``options(report, data, choices, available)``
gives each selector of the GUI's "Change…" dialog under the current wishes (only entries that
keep a working combination are offered).

Every wish is a constraint: companions (and a companion's version), the Python, a torch pin,
the backend or build, and what the sources hold (``available``, :class:`WheelFiles`). The
answer is the newest combination satisfying all of them, with what each cost
(``Recommendation.costs``); when none does, :class:`NoCombination` (a BadInput) lists the ways
out that work (:class:`Drop`: "Drop torchvision", "Use Python 3.12").

The package, by responsibility: ``types`` (the public types), ``machine`` (the report read into
the engine's view, ``facts``), ``evaluate`` (one release x build against the machine),
``engine`` (the pick, what each wish cost, or the refusal with its ways out), ``decide`` (what
follows from the pick: Python, driver upgrade), ``commands`` (package list, pins, pip/uv
commands), ``choices`` (alternatives and valid_choices), ``options`` (the dialog's selectors),
``conflicts`` (the wishes, their costs and relaxations), ``available`` / ``sources`` (what the
sources hold), ``problems`` / ``explain`` / ``words`` (every sentence), ``assemble`` (the
Recommendation).
"""
from __future__ import annotations

from app.core.recommend.choices import valid_choices
from app.core.recommend.engine import recommend
from app.core.recommend.options import Entry, Options, options
from app.core.recommend.types import (
    COMPANIONS,
    Alternative,
    BuildOption,
    Choices,
    DriverUpgrade,
    Drop,
    GpuRef,
    NoCombination,
    Option,
    Recommendation,
    RecommendationText,
    Rendered,
    UnservedGpu,
    ValidChoices,
    code_of,
)
from app.core.recommend.wheelfiles import WheelFiles

__all__ = [
    "COMPANIONS",
    "Alternative",
    "BuildOption",
    "Choices",
    "DriverUpgrade",
    "Drop",
    "Entry",
    "GpuRef",
    "NoCombination",
    "Option",
    "Options",
    "Recommendation",
    "RecommendationText",
    "Rendered",
    "UnservedGpu",
    "ValidChoices",
    "WheelFiles",
    "code_of",
    "options",
    "recommend",
    "valid_choices",
]
