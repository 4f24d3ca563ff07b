"""What the configured sources hold: the builds a recommendation may choose from.

:class:`WheelFiles` lists wheel files (read from their names, :func:`app.core.base.wheels.parse_wheel`)
of the sources the install will use: local wheel folders, or the files an index offered. With
``only`` set, nothing else can be had (no index is reachable or wanted), and the engine narrows
every choice to the builds these files make: "newest" means newest *available*.

Reading a build off file names needs one more fact: a wheel without a local version label
(``torch-2.14.1-cp311-...whl``, ``torchvision-0.29.1-...whl``) is the PyPI default build of its
release on its platform (``pypi_default`` of the compatibility data: CUDA 13.0 on Linux x86-64
for torch 2.14), so a PyPI torchvision pairs only with a PyPI torch, never with a ``+cpu`` one.

The sources helper fills this from folders, bundles and reachable indexes; :meth:`from_folders`
reads local folders.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.core.base.locations import folder_path
from app.core.base.text import Text
from app.core.base.wheels import WheelFile, local_label
from app.core.compat.data import Release, Variant, version_tuple

__all__ = ["Held", "WheelFiles", "platform_tag_fits", "python_of_tag", "pythons_for", "variant_of_file"]


@dataclass(frozen=True)
class Held:
    """One wheel file the sources hold."""

    wheel: WheelFile
    size: int = 0  # bytes (0: unknown)
    where: str = ""  # the folder (or index) it is in


def python_of_tag(tag: str) -> str | None:
    """``"cp311"`` -> ``"3.11"``; ``"py3"`` / ``"abi3"`` wheels fit every Python 3 (None)."""
    if tag.startswith("cp3") and tag[3:].isdigit():
        return f"3.{tag[3:]}"
    return None


def platform_tag_fits(tag: str, platform: str | None) -> bool:
    """Does a wheel's platform tag install on ``platform`` (``linux-x86_64``, ``macos-arm64`` ...)?"""
    if tag == "any":
        return True
    if not platform:
        return False
    family, _, arch = platform.partition("-")
    if family == "linux":
        return ("linux" in tag) and tag.endswith("_" + arch)
    if family == "windows":
        return tag == {"x86_64": "win_amd64", "arm64": "win_arm64"}.get(arch, "")
    if family == "macos":
        return tag.startswith("macosx_") and (tag.endswith("_" + arch) or tag.endswith("_universal2"))
    return False


@dataclass(frozen=True)
class WheelFiles:
    """Wheel files the sources hold. ``only``: nothing else can be installed from them."""

    held: tuple[Held, ...] = ()
    only: bool = True
    folders: tuple[str, ...] = ()  # local folders among the sources (the install reads them as find-links)
    why: Text = ""  # why these files are all there is ("the PyTorch server cannot be reached (…)"): a reason shown

    @classmethod
    def from_folders(cls, folders: Iterable[str | os.PathLike[str]], *, only: bool = True,
                     why: Text = "") -> WheelFiles:
        """The wheels in these folders (not their subfolders), read as the sources read them
        (:func:`app.core.sources.local.scan`); unreadable folders hold nothing."""
        from app.core.sources.local import scan  # start-up: only when folders are given

        names = [str(folder_path(folder).expanduser()) for folder in folders]
        return cls(tuple(Held(lw.wheel, _size(lw.path), lw.folder) for lw in scan(names)), only, tuple(names), why)

    # ---------------------------------------------------------------- queries
    def files(self, name: str) -> list[Held]:
        return [h for h in self.held if h.wheel.name == name]

    def builds(self, name: str, version_prefix: str, rel: Release, v: Variant, platform: str | None,
               exact: str | None = None) -> list[Held]:
        """``name`` wheels of build ``v`` of ``rel`` for ``platform`` whose version starts with
        ``version_prefix`` (``"2.14."``), or is ``exact``; newest first."""
        out = []
        for h in self.files(name):
            base = h.wheel.version.split("+", 1)[0]
            if exact is not None and base != exact:
                continue
            if exact is None and not (base + ".").startswith(version_prefix):
                continue
            if not any(platform_tag_fits(t, platform) for t in h.wheel.platforms):
                continue
            if variant_of_file(h.wheel, rel, platform) != v.name:
                continue
            out.append(h)
        return sorted(out, key=lambda h: _vkey(h.wheel.version), reverse=True)

    def bytes_of(self, names: Sequence[str], platform: str | None) -> int:
        """The size of the newest wheel of each name (for this platform) the sources hold."""
        total = 0
        for n in names:
            fitting = [h for h in self.files(n) if any(platform_tag_fits(t, platform) for t in h.wheel.platforms)]
            if fitting:
                total += max(fitting, key=lambda h: _vkey(h.wheel.version)).size
        return total

    def runtime_bytes(self, platform: str | None) -> int:
        """The size of the CUDA runtime wheels the sources hold (nvidia-*, cuda-*, triton): what a
        standard Linux build pulls in besides torch."""
        names = sorted({h.wheel.name for h in self.held
                        if h.wheel.name.startswith(("nvidia-", "cuda-")) or h.wheel.name == "triton"})
        return self.bytes_of(names, platform)


def variant_of_file(wheel: WheelFile, rel: Release, platform: str | None) -> str | None:
    """The build a wheel file is: its local label, or without one the PyPI default build of
    ``rel`` on ``platform`` (what PyPI publishes unlabelled)."""
    label = local_label(wheel.version)
    if label:
        return label
    return rel.pypi_default.get(platform or "")


def pythons_for(groups: Iterable[Sequence[Held]], candidates: Iterable[str]) -> set[str]:
    """The Pythons (of ``candidates``, "3.11") for which every group (one package's fitting files)
    holds a file: a ``py3`` / ``abi3`` file fits every Python."""
    out = set(candidates)
    for files in groups:
        fit: set[str] = set()
        for h in files:
            tags = {python_of_tag(t.split("-")[0]) for t in h.wheel.tags}
            if None in tags:
                fit = set(out)
                break
            fit |= {t for t in tags if t}
        out &= fit
    return out


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _vkey(version: str) -> tuple[int, ...]:
    base = version.split("+", 1)[0]
    try:
        return version_tuple(base)
    except ValueError:
        return (0,)
