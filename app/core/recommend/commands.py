"""The package list and the install commands: pins, the build's index, pip and uv forms.

The user's package list is read by :mod:`app.core.base.requirements`: ``torch`` itself is pinned by
``--torch`` (a pin in the list is refused), torchvision / torchaudio are pinned to match the
torch release, anything else is installed from the default index in a second step, so that one
command never mixes two indexes. The torch pin names the exact build with the local version
label the PyTorch index gives its wheels (:func:`app.core.base.wheels.index_local_label`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.base import requirements
from app.core.base.errors import BadInput
from app.core.base.wheels import index_local_label, with_local_label
from app.core.compat.data import Release, Variant
from app.core.recommend.types import COMPANIONS

__all__ = ["Install", "Wishes", "install_commands", "read_wishes"]

_HINT = "List packages like: torch torchvision numpy"
_COMPANION_PIN = re.compile(r"^([A-Za-z]+)\s*==\s*(\d+\.\d+(?:\.\d+)?)$")


@dataclass(frozen=True)
class Wishes:
    """The user's package list, sorted out."""

    companions: tuple[str, ...] = ()  # torchvision / torchaudio, pinned to match torch
    extras: tuple[str, ...] = ()  # everything else, as the user wrote it
    companion_pins: tuple[tuple[str, str], ...] = ()  # ("torchvision", "0.28.0"): a version the user asked for


def read_wishes(packages: tuple[str, ...] | None) -> Wishes:
    """Sort a package list; BadInput for an entry that is not a package, or pins what is pinned for you."""
    companions: list[str] = []
    extras: list[str] = []
    pins: dict[str, str] = {}
    for p in requirements.split_list(packages):
        name = _name(p)
        if name == "torch":
            if p.lower() != "torch":
                raise BadInput(f"{p!r}: pin torch with --torch VERSION, not in the package list")
            continue
        if name in COMPANIONS:
            if p.lower() != name:
                pin = _COMPANION_PIN.match(p.strip())
                if pin is None or pin.group(1).lower() != name:
                    raise BadInput(f"{p!r}: {name} is pinned to match torch automatically; list it by name only "
                                   f"(or ask for one version: {name}==0.29.1)")
                if pins.get(name, pin.group(2)) != pin.group(2):
                    raise BadInput(f"{name} is asked for in two versions ({pins[name]} and {pin.group(2)})")
                pins[name] = pin.group(2)
            if name not in companions:
                companions.append(name)
            continue
        if p not in extras:
            extras.append(p)
    return Wishes(tuple(companions), tuple(extras), tuple(pins.items()))


def _name(req: str) -> str:
    if requirements.is_option(req):
        requirements.requirement_name(req)  # raises its own message: an option is not a package
    try:
        name, _spec = requirements.parse(req)
    except BadInput:
        raise BadInput(f"{req!r} is not a package name (or name==version)", hint=_HINT) from None
    return name


@dataclass(frozen=True)
class Install:
    packages: tuple[str, ...]  # the pins, then the other packages
    commands: dict[str, tuple[str, ...]]  # pip, uv; pip_extra, uv_extra for the other packages
    needs_pip: bool = False  # only pip can install it (AMD's index: pip moves on after a 403, uv stops)


def install_commands(rel: Release, v: Variant, torch_version: str, wishes: Wishes, platform: str | None,
                     gfx: tuple[str, ...] = (), *, held: tuple[tuple[str, str], ...] = (), pypi_build: bool = False,
                     find_links: tuple[str, ...] = (), no_index: bool = False) -> Install:
    """The pins and commands for ``torch_version`` of build ``v`` on ``platform`` (the wheels' platform).

    ``gfx``: the AMD GPUs' targets, for a build from AMD's own index (``device_extra``);
    ``held``: the exact versions the sources hold (pinned as they are); ``pypi_build``: PyPI's
    default build (no local label, from the default index); ``find_links``: wheel folders the
    install reads; ``no_index``: only from them.
    """
    if v.device_extra and not held:
        return _amd_index(rel, v, torch_version, wishes, gfx)
    if held:
        pins = [f"{pkg}=={ver}" for pkg, ver in held]
    else:
        label = None if pypi_build else index_local_label(v.index_url, platform)
        asked = dict(wishes.companion_pins)
        if any(want.count(".") == 2 and want != rel.companions.get(pkg) for pkg, want in asked.items()):
            pins = [f"torch=={rel.torch}.*"]  # an older companion patch: the torch patch it requires
        else:
            pins = [f"torch=={with_local_label(torch_version, label)}"]
        for pkg in wishes.companions:
            ver = asked.get(pkg) or rel.companions.get(pkg, "")
            if ver.count(".") < 2 or (torch_version != rel.latest and pkg not in asked):
                ver = ".".join(ver.split(".")[:2]) + ".*"  # a patch pin: the companion's matching minor
            else:
                ver = with_local_label(ver, label)
            pins.append(f"{pkg}=={ver}")
    if no_index:
        idx = ["--no-index"]
    elif pypi_build or v.index_url.startswith("https://pypi.org/"):
        idx = []
    else:
        idx = ["--index-url", v.index_url]
    for folder in find_links:
        idx += ["--find-links", folder]
    commands = {"pip": ("pip", "install", *pins, *idx), "uv": ("uv", "pip", "install", *pins, *idx)}
    if wishes.extras:
        # never mix indexes: the other packages come from the default index, in a second step
        commands["pip_extra"] = ("pip", "install", *wishes.extras)
        commands["uv_extra"] = ("uv", "pip", "install", *wishes.extras)
    return Install(tuple(pins) + wishes.extras, commands)


def _amd_index(rel: Release, v: Variant, torch_version: str, wishes: Wishes, gfx: tuple[str, ...]) -> Install:
    """A build from AMD's own index: torch with the GPUs' device extras, the release's newest patch there.

    Plain ``torch`` from AMD's multi-arch indexes is host-only and does not work, so the extra is
    part of the pin (ROCm/TheRock#5289). The index answers 403 for packages it does not host
    (mudler/LocalAI#10997), so it is an extra index beside the default one (PyPI or a mirror),
    which gives torch's other dependencies; pip moves on after a 403, uv stops, so only a pip
    command is given. AMD numbers its builds with its own local label: the pin takes the
    release's newest patch on that index (``==2.14.*``)."""
    extras = sorted({v.device_extra.format(gfx=g) for g in gfx}) or [v.device_extra.format(gfx="all")]
    tag = "[" + ",".join(extras) + "]"
    minor = ".".join(torch_version.split(".")[:2]) + ".*"
    pins = [f"torch{tag}=={torch_version if torch_version != rel.latest else minor}"]
    for pkg in wishes.companions:
        ver = rel.companions.get(pkg, "")
        pins.append(f"{pkg}{tag}=={'.'.join(ver.split('.')[:2])}.*")
    commands = {"pip": ("pip", "install", *pins, "--extra-index-url", v.index_url)}
    if wishes.extras:
        commands["pip_extra"] = ("pip", "install", *wishes.extras)
        commands["uv_extra"] = ("uv", "pip", "install", *wishes.extras)
    return Install(tuple(pins) + wishes.extras, commands, needs_pip=True)
