"""Package requirements as the user types them: validated, named, never passed as options.

The one place that turns ``"torch==2.13.0"``, ``"torchvision>=0.20"``, ``"numpy"`` or a wheel path
into a canonical project name. A text starting with ``-`` is never a requirement (it would reach
the installer as an option: ``-e /etc``).
"""
from __future__ import annotations

import os
import re

from app.core.base.errors import BadInput

__all__ = ["canonical", "is_option", "parse", "requirement_name", "split_list"]

# The everyday forms ("torch", "torch==2.13.0", "numpy>=1.26,<3") without importing
# packaging.requirements (~17 ms) on the start-up path; anything else goes to packaging.
_SIMPLE = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*"
                     r"((?:===|==|>=|<=|~=|!=|<|>)\s*[A-Za-z0-9.*+!_-]+"
                     r"(?:\s*,\s*(?:===|==|>=|<=|~=|!=|<|>)\s*[A-Za-z0-9.*+!_-]+)*)?\s*$")
_CANON = re.compile(r"[-_.]+")


def canonical(name: str) -> str:
    """PEP 503 normalised project name: ``Torch_Vision`` -> ``torch-vision``."""
    return _CANON.sub("-", name).lower()


def is_option(text: str) -> bool:
    return text.strip().startswith("-")


def _wheel_name(text: str) -> str | None:
    base = text.replace("\\", "/").rsplit("/", 1)[-1]
    if base.endswith(".whl"):
        return canonical(base.split("-", 1)[0])
    return None


def requirement_name(text: str, *, field: str = "packages") -> str | None:
    """The canonical name of a requirement; None for a local path that is not a wheel.

    Raises :class:`BadInput` (naming ``field``) for an option or an invalid requirement.
    """
    req = text.strip()
    if not req:
        raise BadInput(f"{field}: an empty package name", hint='List packages like: torch torchvision numpy')
    if is_option(req):
        raise BadInput(f"{field}: {req!r} is an installer option, not a package",
                       hint="List package names (torchvision, numpy==2.1); options are not passed through.")
    m = _SIMPLE.match(req)
    if m:
        return canonical(m.group(1))
    if req.endswith(".whl") or "/" in req or os.sep in req:
        return _wheel_name(req)
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return canonical(Requirement(req).name)
    except InvalidRequirement:
        raise BadInput(f"{field}: {req!r} is not a valid package requirement",
                       hint='Write packages like "torch", "torch==2.13.0" or "torchvision>=0.20".') from None


def parse(text: str, *, field: str = "packages") -> tuple[str, str]:
    """``(canonical name, specifier text)`` of a named requirement (no paths, no URLs)."""
    req = text.strip()
    name = requirement_name(req, field=field)
    if name is None or "@" in req:
        raise BadInput(f"{field}: {req!r} is not a package name (or name==version)",
                       hint="List packages like: torch torchvision numpy")
    m = _SIMPLE.match(req)
    if m:
        return name, (m.group(2) or "").replace(" ", "")
    from packaging.requirements import Requirement

    r = Requirement(req)
    if r.url:
        raise BadInput(f"{field}: {req!r} points at a URL; name a package instead",
                       hint="List packages like: torch torchvision numpy")
    return name, str(r.specifier)


def split_list(packages: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """A user's package list (``"a b,c"`` or a list) -> non-empty stripped items."""
    if not packages:
        return []
    if isinstance(packages, str):
        # "torch torchvision", "torch,torchvision", but "numpy>=1.26,<3" stays one item
        packages = re.split(r"\s*,\s*(?=[A-Za-z0-9])|\s+", packages)
    return [p.strip() for p in packages if p and p.strip()]
