"""Can this build of this torch release run here? One :class:`Evaluation` per (release, build).

:class:`Engine` holds one call's inputs (the machine as read from the report, the compat data, the
user's wishes) and evaluates candidates: the platform, Python, glibc and macOS floors, the
companion packages, and the hardware. A CUDA build must pass both the compute-capability rule
and the driver floor of its CUDA major (:mod:`app.core.compat.cuda`); a ROCm build must list each AMD
GPU's gfx target, or a known ``HSA_OVERRIDE_GFX_VERSION`` must map it onto one it lists.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from app.core.base.actions import Action, ActionKind, Remedy
from app.core.base.errors import BadInput, ForFace
from app.core.base.text import Text, msg
from app.core.base.visible import VISIBLE_VARS, showing_only
from app.core.compat import cuda
from app.core.compat.data import CompatData, Release, Variant, version_tuple
from app.core.detection.system import SystemReport
from app.core.recommend import problems
from app.core.recommend.commands import Wishes, read_wishes
from app.core.recommend.facts import GpuView, Machine, version_of
from app.core.recommend.machine import read_machine
from app.core.recommend.sources import fit
from app.core.recommend.types import Choices
from app.core.recommend.wheelfiles import WheelFiles

__all__ = ["Engine", "Evaluation"]

# (kind, why); kind: platform | explicit | python | glibc | macos | companion | hardware | cc | driver | gfx
# | sources (the sources do not hold the build, or not for the wished Python / companions)
Problem = tuple[str, Text]


@dataclass(frozen=True)
class Evaluation:
    """One build of one release on this machine: the problems (none: it runs) and whom it serves."""

    release: Release
    variant: Variant
    problems: tuple[Problem, ...] = ()
    served: tuple[GpuView, ...] = ()
    unserved: tuple[tuple[GpuView, Text], ...] = ()
    env_vars: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[Text, ...] = ()
    floor_text: str | None = None  # the NVIDIA driver floor of a CUDA build, on this OS
    # what the sources hold of it (only when they are all there is): the version, Pythons, exact pins
    held_version: str | None = None
    pythons: frozenset[str] | None = None  # None: any Python the release supports
    pins: tuple[tuple[str, str], ...] = ()
    on_cpu: bool = False  # the PyPI default (GPU) build, used on the processor: its GPU libraries stay unused

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(k for k, _ in self.problems)

    @property
    def whys(self) -> tuple[Text, ...]:
        """The distinct problems, in the order found."""
        return tuple(dict.fromkeys(w for _, w in self.problems))

    def first_by_kind(self) -> dict[str, Text]:
        """kind -> its first problem, kinds in the order found."""
        out: dict[str, Text] = {}
        for k, w in self.problems:
            out.setdefault(k, w)
        return out

    @property
    def floor(self) -> tuple[int, ...] | None:
        return version_of(self.floor_text) if self.floor_text else None

    @property
    def torch_version(self) -> str:
        """The version to install: the newest of the release, or the newest the sources hold."""
        return self.held_version or self.release.latest

    @property
    def backend(self) -> str:
        """What it computes on: the build's backend, or the processor for a GPU build used on it."""
        return "cpu" if self.on_cpu else self.variant.backend

    def runtime(self) -> tuple[int, ...]:
        """The CUDA or ROCm version of the build, (0,) for others."""
        return version_of(self.variant.cuda or self.variant.rocm or "0") or (0,)

    def rank(self) -> tuple[tuple[int, int], int, tuple[int, ...], tuple[int, ...]]:
        """Newer release, then more GPUs served, then newer CUDA / ROCm, then the newer patch."""
        return (self.release.key, len(self.served), self.runtime(), version_of(self.torch_version) or (0,))


@dataclass(frozen=True)
class _Hardware:
    problems: tuple[Problem, ...] = ()
    served: tuple[GpuView, ...] = ()
    unserved: tuple[tuple[GpuView, Text], ...] = ()
    env_vars: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[Text, ...] = ()
    floor_text: str | None = None


class Engine:
    """One call's inputs, and the evaluation of candidate builds against them."""

    def __init__(self, report: SystemReport, data: CompatData, choices: Choices,
                 available: WheelFiles | None = None) -> None:
        self.report = report
        self.data = data
        self.choices = choices
        self.available = available
        self.m: Machine = read_machine(report, data)
        self.fixed_python = norm_python(choices.python) if choices.python else None
        self.wishes: Wishes = read_wishes(choices.packages)

    @property
    def sources_bound(self) -> bool:
        """The sources are all there is: a build counts only if they hold it."""
        return self.available is not None and self.available.only

    # -- what hardware each backend would serve
    def targets(self, backend: str) -> tuple[GpuView, ...]:
        m = self.m
        if backend == "cuda":
            return m.nvidia
        if backend == "rocm":
            return tuple(g for g in m.amd if not g.integrated) or tuple(g for g in m.amd if g.integrated)
        if backend == "xpu":
            return tuple(g for g in m.intel if g.xpu)
        if backend == "mps":  # Apple silicon, or the AMD GPU of an Intel Mac (torch <= 2.2.2, macOS 12.3+)
            return m.apple if m.platform == "macos-arm64" else (m.amd if m.platform == "macos-x86_64" else ())
        return ()

    def platform_for_wheels(self) -> str | None:
        """Windows on Arm installs the x64 wheels (under emulation)."""
        return "windows-x86_64" if self.m.emulated_x64 else self.m.platform

    def evaluate(self, rel: Release, v: Variant, *, explicit: bool = False, on_cpu: bool = False) -> Evaluation:
        """``on_cpu``: the build is used on the processor (PyPI's default GPU build where the sources
        hold no CPU-only pair): its hardware is not checked, its GPU libraries stay unused."""
        if self.platform_for_wheels() not in v.platforms:
            return Evaluation(rel, v, (("platform", problems.no_build_for_platform(rel, v, self.m.platform)),))
        found = self._floors(rel, v, explicit)
        hw = _Hardware() if on_cpu else self._hardware(rel, v, explicit)
        e = Evaluation(rel, v, tuple(found) + hw.problems, hw.served, hw.unserved, hw.env_vars, hw.notes,
                       hw.floor_text, on_cpu=on_cpu)
        return self._in_sources(e) if self.sources_bound else e

    def _in_sources(self, e: Evaluation) -> Evaluation:
        """``e`` narrowed to what the sources hold: their version, Pythons and pins, or why not."""
        assert self.available is not None
        rel = e.release
        pythons = [self.fixed_python] if self.fixed_python else rel.pythons()
        pinned = str(self.choices.torch).strip().lstrip("v") if self.choices.torch else ""
        got = fit(self.available, rel, e.variant, self.platform_for_wheels(), pythons, self.wishes.companions,
                  pinned if pinned.count(".") == 2 else None, dict(self.wishes.companion_pins))
        if got.problems:
            return replace(e, problems=e.problems + tuple(("sources", w) for w in got.problems),
                           held_version=got.torch_version)
        return replace(e, held_version=got.torch_version, pythons=got.pythons, pins=got.pins)

    def _floors(self, rel: Release, v: Variant, explicit: bool) -> list[Problem]:
        """Everything but the hardware: by-name-only builds, Python, Windows on Arm, glibc, macOS, companions."""
        m = self.m
        out: list[Problem] = []
        if v.explicit and not explicit:
            out.append(("explicit", problems.explicit_only(v)))
        if self.fixed_python and not v.python_ok(rel, self.fixed_python):
            out.append(("python", problems.python_unsupported(rel, self.fixed_python, v)))
        if m.emulated_x64 and v.backend != "cpu":
            out.append(("platform", problems.windows_on_arm_cpu_only(v)))
        win_min = version_of(v.windows_min)
        if m.family == "windows" and m.windows and win_min and m.windows < win_min:
            out.append(("platform", problems.windows_too_old(v, win_min, m.windows)))
        if m.wsl and v.backend == "xpu" and not v.wsl:
            out.append(("platform", problems.xpu_not_validated_on_wsl(rel)))
        gmin = version_of(v.glibc_min or rel.glibc_min)
        if m.family == "linux" and m.glibc and gmin and m.glibc < gmin:
            out.append(("glibc", problems.glibc_too_old(rel, v, gmin, m.glibc)))
        if m.family == "macos" and m.macos:
            mac_min = version_of(v.macos_min)
            if mac_min and m.macos < mac_min:
                out.append(("macos", problems.macos_too_old(rel, mac_min, m.macos)))
            mps_min = version_of(v.mps_macos_min)
            if v.backend == "mps" and mps_min and m.macos < mps_min:
                out.append(("macos", problems.mps_macos_too_old(rel, mps_min, m.macos)))
        for pkg in self.wishes.companions:
            if not rel.companions.get(pkg):
                out.append(("companion", problems.no_companion(rel, pkg)))
        for pkg, want in self.wishes.companion_pins:
            have = rel.companions.get(pkg, "")
            if have and have.split(".")[:2] != want.split(".")[:2]:
                out.append(("companion", companion_pin_elsewhere(rel, pkg, want, have)))
        return out

    def _hardware(self, rel: Release, v: Variant, explicit: bool) -> _Hardware:
        if v.backend == "cuda":
            return self._cuda(rel, v)
        if v.backend == "rocm":
            return self._rocm(v, explicit)
        if v.backend == "xpu":
            gpus = self.targets("xpu")
            return _Hardware(served=gpus) if gpus else _Hardware((("hardware", problems.no_xpu_gpu()),))
        if v.backend == "mps":
            if self.m.platform == "macos-arm64":
                return _Hardware(served=self.m.apple)
            gpus = self.targets("mps")
            return _Hardware(served=gpus) if gpus else _Hardware((("hardware", problems.mps_apple_only()),))
        return _Hardware()

    def _cuda(self, rel: Release, v: Variant) -> _Hardware:
        m, data = self.m, self.data
        gpus = self.targets("cuda")
        if not gpus:
            why = problems.jetson_no_cuda_wheels(m.jetson[0]) if m.jetson else problems.no_nvidia_gpu()
            return _Hardware((("hardware", why),))
        found: list[Problem] = []
        served = [g for g in gpus if g.cc is None or cuda.arch_covers(g.cc_text, v.arch, tegra=data.tegra)]
        unserved = [(g, problems.no_kernels(rel, v, g)) for g in gpus if g not in served]
        if not served:
            found.append(("cc", unserved[0][1] if len(unserved) == 1 else
                          problems.no_kernels_for_any(rel, v, [g for g, _ in unserved])))
        floor = cuda.driver_floor(v.cuda or "", m.driver_os, data)
        floor_text = floor[0] if floor else None
        if m.driver is not None and floor_text and cuda.driver_meets(m.driver_text, floor_text) is False:
            found.append(("driver", problems.driver_too_old(v, floor_text, m.driver_text, m.wsl)))
        env, notes = self._shown_only("cuda", served, [g for g, _ in unserved])
        return _Hardware(tuple(found), tuple(served), tuple(unserved), env, notes, floor_text=floor_text)

    def _shown_only(self, backend: str, served: list[GpuView],
                    unserved: list[GpuView]) -> tuple[dict[str, str], tuple[Text, ...]]:
        """On a machine where the build serves some GPUs of the vendor and not others: the variables
        that show PyTorch only the served ones (so that ``cuda:0`` has kernels), and the sentence that
        says so; or, when the GPUs' numbering is not known, the sentence that says what to set."""
        m = self.m
        every = (m.nvidia + m.jetson) if backend == "cuda" else m.amd
        hidden = [g for g in every if g not in served]
        if not served or not (hidden or unserved):
            return {}, ()
        env_now = self.report.env or {}
        if any(var in env_now for var, backends in VISIBLE_VARS.items() if backend in backends):
            return {}, ()  # the user chose what PyTorch sees: left as it is (the warnings say what it hides)
        env = showing_only(backend, [g.gpu.index for g in served if g.gpu.index is not None],
                           [g.gpu.index for g in every])
        if not env:
            return {}, (problems.visible_unknown(backend, served, hidden),)
        return env, (problems.visible_set(env, served, hidden),)

    def _rocm(self, v: Variant, explicit: bool) -> _Hardware:
        gpus = self.targets("rocm")
        if not gpus:
            return _Hardware((("hardware", problems.no_amd_gpu()),))
        served: list[GpuView] = []
        unserved: list[tuple[GpuView, Text]] = []
        notes: list[Text] = []
        overrides: dict[str, str] = {}
        for g in gpus:
            if g.gfx is None:  # never claimed served: nothing tells which kernels it needs
                unserved.append((g, problems.rocm_gfx_unknown(v, g)))
                continue
            if g.gfx in v.gfx:
                served.append(g)
                continue
            ov = next((o for o in self.data.hsa_overrides if g.gfx in o.gfx), None)
            if g.integrated:
                unserved.append((g, problems.rocm_integrated(v, g)))
            elif ov is None:
                unserved.append((g, problems.rocm_no_override(v, g)))
            elif v.therock:
                unserved.append((g, problems.rocm_therock_no_override(v, g)))
            elif ov.as_gfx not in v.gfx:
                unserved.append((g, problems.rocm_override_target_missing(v, ov)))
            elif not ov.reliable and not explicit:
                unserved.append((g, problems.rocm_override_only_when_asked(v, g, ov)))
            else:
                served.append(g)
                overrides[g.gfx] = ov.value
                notes.append(problems.rocm_override_note(v, g, ov))
        found: list[Problem] = []
        env: dict[str, str] = {}
        if len(set(overrides.values())) > 1:
            found.append(("gfx", problems.rocm_override_conflict()))
        elif overrides:
            env["HSA_OVERRIDE_GFX_VERSION"] = next(iter(overrides.values()))
        if not served:
            found.append(("gfx", unserved[0][1] if unserved else problems.no_amd_served()))
        shown, said = self._shown_only("rocm", served, [g for g, _ in unserved])
        return _Hardware(tuple(found), tuple(served), tuple(unserved), {**env, **shown}, tuple(notes) + said)

    # -- a GPU of unknown compute capability
    def cc_unknown(self, backend: str) -> bool:
        return backend == "cuda" and any(g.cc is None for g in self.targets("cuda"))

    @functools.cached_property
    def generations(self) -> tuple[str, ...]:
        """The compute capabilities an NVIDIA GPU of unknown capability may have here: those of the
        chips the data knows (Tegra left out), less those whose last driver branch the driver is past."""
        data, driver = self.data, self.m.driver_text
        ccs = sorted({c.value for c in data.nvidia_chips if c.value not in data.tegra},
                     key=lambda cc: cuda.parse_cc(cc) or (0, 0))
        out = []
        for cc in ccs:
            ceiling = cuda.driver_ceiling(cc, data)
            if driver and ceiling is not None and cuda.above_ceiling(driver, ceiling):
                continue
            out.append(cc)
        return tuple(out)

    def width(self, e: Evaluation) -> int:
        """How many of :meth:`generations` the build's kernels serve."""
        return sum(1 for cc in self.generations if cuda.arch_covers(cc, e.variant.arch, tegra=self.data.tegra))

    def pick_key(self, e: Evaluation) -> tuple[int, tuple[tuple[int, int], int, tuple[int, ...], tuple[int, ...]]]:
        """Which of two working builds is better: the newer one (:meth:`Evaluation.rank`), except for a
        GPU of unknown compute capability, which gets the build whose kernels cover the most
        generations its driver can run first (the newest build lacks the older GPUs' kernels)."""
        return (self.width(e) if self.cc_unknown(e.variant.backend) else 0, e.rank())

    def serves(self, v: Variant, g: GpuView) -> bool | None:
        """Does build ``v`` carry kernels for ``g`` (the hardware alone: no driver, no Python)?
        None when the GPU's capability / gfx target is unknown."""
        if v.backend == "cuda" and g.vendor == "nvidia":
            return cuda.arch_covers(g.cc_text, v.arch, tegra=self.data.tegra) if g.cc else None
        if v.backend == "rocm" and g.vendor == "amd":
            return g.gfx in v.gfx if g.gfx else None
        return False

    def last_release(self, backend: str, g: GpuView) -> Release | None:
        """The newest release with a ``backend`` build for ``g`` on this platform, when newer
        releases of the data have none (``g`` has reached its last release); else None."""
        plat = self.platform_for_wheels()
        newest_serving = next((r for r in self.data.releases
                               if any(v.backend == backend and self.serves(v, g) for v in r.variants_for(plat))), None)
        if newest_serving is None or newest_serving.key == self.data.newest.key:
            return None
        newer = [r for r in self.data.releases if r.key > newest_serving.key]
        if not any(v.backend == backend for r in newer for v in r.variants_for(plat)):
            return None  # the newer releases have no such build here at all: that is another story
        return newest_serving

    # -- candidate enumeration
    def releases(self) -> list[Release]:
        if not self.choices.torch:
            return list(self.data.releases)
        return [self.pinned_release()]

    def pinned_release(self) -> Release:
        want = str(self.choices.torch).strip().lstrip("v")
        m = re.match(r"^(\d+)\.(\d+)(?:\.(\d+))?$", want)
        if not m:
            raise BadInput(msg("recommend.bad_torch", "--torch {value!r} is not a version like 2.14 or 2.14.1",
                               value=str(self.choices.torch)))
        rel = self.data.release(f"{m.group(1)}.{m.group(2)}")
        known = ", ".join(r.torch for r in reversed(self.data.releases))
        if rel is None:
            raise BadInput(msg("recommend.unknown_torch", "torch {version} is not in the compatibility data ({data}), "
                               "which knows releases {known}.", version=want, data=self.data.version, known=known),
                           hint=msg("recommend.unknown_torch_hint", "Pick one of those releases."))
        if m.group(3) is not None and version_tuple(want) > version_tuple(rel.latest):
            raise BadInput(msg("recommend.torch_too_new", "torch {version} is newer than the newest {release} release "
                               "the compatibility data knows ({latest}).", version=want, release=rel.torch,
                               latest=rel.latest),
                           hint=ForFace(msg("recommend.torch_too_new_gui", "Choose torch {latest} with Change….",
                                            latest=rel.latest),
                                        msg("recommend.torch_too_new_cli", "Use --torch {latest}.", latest=rel.latest)),
                           remedies=(Remedy("recommend-torch-too-new",
                                            msg("recommend.torch_latest", "The newest {release} release is {latest}.",
                                                release=rel.torch, latest=rel.latest),
                                            (Action(ActionKind.SET_TORCH_VERSION, rel.latest),)),))
        return rel

    def pinned_version(self, rel: Release) -> str:
        """The exact version of ``rel`` to install: the pinned patch release, or its newest."""
        want = str(self.choices.torch or "").strip().lstrip("v")
        return want if want.count(".") == 2 and want.startswith(rel.torch + ".") else rel.latest

    def candidates(self, backend: str | None = None, variant: str | None = None,
                   explicit: bool = False) -> list[Evaluation]:
        if backend == "cpu" and variant and not any(v.name == variant and v.backend == "cpu"
                                                    for r in self.data.releases for v in r.variants):
            return self.on_cpu_candidates(variant)  # a GPU build asked for on the processor
        out = []
        plat = self.platform_for_wheels()
        for rel in self.releases():
            for v in rel.variants_for(plat):
                if backend and v.backend != backend:
                    continue
                if variant and v.name != variant:
                    continue
                out.append(self.evaluate(rel, v, explicit=explicit))
        return out

    def on_cpu_candidates(self, variant: str | None = None) -> list[Evaluation]:
        """Each release's PyPI default GPU build, used on the processor (``variant``: only that build)."""
        plat = self.platform_for_wheels()
        out = []
        for rel in self.releases():
            name = rel.pypi_default.get(plat or "")
            pv = next((v for v in rel.variants_for(plat) if v.name == name), None)
            if pv is None or pv.backend == "cpu" or (variant and pv.name != variant):
                continue
            out.append(self.evaluate(rel, pv, explicit=True, on_cpu=True))
        return out

    def all_builds(self) -> list[Evaluation]:
        """Every build of every release on this platform, each as if asked for by name."""
        plat = self.platform_for_wheels()
        return [self.evaluate(r, v, explicit=True) for r in self.data.releases for v in r.variants_for(plat)]


def companion_pin_elsewhere(rel: Release, pkg: str, want: str, have: str) -> Text:
    return msg("rec.companion_pin_elsewhere", "{pkg} {want} belongs to another torch release (torch {torch} pairs with "
               "{pkg} {have})", pkg=pkg, want=want, torch=rel.torch, have=have)


def norm_python(text: str) -> str:
    """``"3.12"``, ``"python3.12"``, ``"3.12.4"`` -> ``"3.12"``."""
    m = re.match(r"^\s*(?:python)?(\d)\.(\d{1,2})(?:\.\d+)?\s*$", str(text))
    if not m:
        raise BadInput(msg("recommend.bad_python", "--python {value!r} is not a Python version like 3.12", value=text))
    return f"{m.group(1)}.{m.group(2)}"
