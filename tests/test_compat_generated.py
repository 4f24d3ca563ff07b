"""Tests generated from the compatibility data itself: every release x platform x build, every
compiled compute capability and gfx target, every driver floor, Python range and glibc floor.
If a row of resources/compat changes, these follow it; the engine must agree with every row."""
from __future__ import annotations

import pytest

from app.core.base.errors import BadInput
from app.core.compat.data import cc_tuple, load_compat, version_tuple
from app.core.detection.system import SystemReport
from app.core.recommend import Choices, recommend

DATA = load_compat()
OS_OF = {"linux-x86_64": ("linux", "x86_64"), "linux-aarch64": ("linux", "aarch64"),
         "windows-x86_64": ("windows", "x86_64"), "macos-arm64": ("macos", "arm64"),
         "macos-x86_64": ("macos", "x86_64")}


def _report(platform, gpus, *, python=None, glibc="2.39", wsl=False, macos="15.1"):
    family, arch = OS_OF[platform]
    os_info = {"family": family, "wsl": wsl}
    if family == "linux":
        os_info["glibc"] = glibc
    if family == "macos":
        os_info["version"] = macos
    return SystemReport.from_dict({"os": os_info, "arch": arch, "python": {"version": python or "3.12.1"},
                                   "gpus": gpus})


def _floor(v, platform, wsl=False):
    f = DATA.driver_floors[v.cuda_major]
    return f.windows if (platform.startswith("windows") or wsl) else f.linux


def _cuda_rows():
    for rel in DATA.releases:
        for v in rel.variants:
            if v.backend == "cuda":
                for p in v.platforms:
                    yield pytest.param(rel, v, p, id=f"{rel.torch}-{v.name}-{p}")


def _outside(v):
    """Compute capabilities just outside what the build's SASS serves."""
    codes = v.arch_tuples
    out = set()
    majors = sorted({c[0] for c in codes})
    for maj in majors:
        lowest = min(c for c in codes if c[0] == maj)
        if lowest[1] > 0:
            out.add((maj, lowest[1] - 1))
    out.add((majors[-1] + 1, 0))  # a newer major: only PTX could reach it, and PTX is not counted
    below = majors[0] - 1
    if below >= 3 and below not in majors:
        out.add((below, 9 if below != 3 else 7))
    return sorted(c for c in out if not any(c[0] == k[0] and c[1] >= k[1] for k in codes))


@pytest.mark.parametrize("rel,v,platform", list(_cuda_rows()))
def test_every_compiled_cc_is_served_and_the_neighbours_are_not(rel, v, platform):
    py = rel.python_min
    driver = _floor(v, platform)
    choices = Choices(variant=v.name, torch=rel.latest, python=py)
    for cc in v.arch:
        if cc in DATA.tegra:
            continue
        gpu = {"vendor": "nvidia", "name": f"Synthetic sm_{cc}", "compute_capability": cc, "driver_version": driver}
        rec = recommend(_report(platform, [gpu], python=py + ".0", glibc=v.glibc_min or rel.glibc_min), DATA, choices)
        assert (rec.backend, rec.variant, rec.torch_version) == ("cuda", v.name, rel.latest), cc
        assert rec.index_url == v.index_url and rec.command[-1] == v.index_url
    for cc in _outside(v):
        text = f"{cc[0]}.{cc[1]}"
        gpu = {"vendor": "nvidia", "name": f"Synthetic sm_{text}", "compute_capability": text, "driver_version": driver}
        with pytest.raises(BadInput, match="no kernels"):
            recommend(_report(platform, [gpu], python=py + ".0", glibc=v.glibc_min or rel.glibc_min), DATA, choices)
    # Tegra parts are never served by desktop SASS, even when their major is compiled in
    for tegra in sorted(DATA.tegra):
        if any(cc_tuple(tegra)[0] == c[0] for c in v.arch_tuples) and tegra not in v.arch:
            gpu = {"vendor": "nvidia", "name": "Synthetic Tegra", "compute_capability": tegra, "driver_version": driver}
            with pytest.raises(BadInput):
                recommend(_report(platform, [gpu], python=py + ".0"), DATA, choices)


def _floor_rows():
    for major, _floor in DATA.driver_floors.items():
        for platform in ("linux-x86_64", "windows-x86_64"):
            rel = next((r for r in DATA.releases for v in r.variants_for(platform)
                        if v.backend == "cuda" and v.cuda_major == major), None)
            if rel is None:
                continue
            v = max((v for v in rel.variants_for(platform) if v.backend == "cuda" and v.cuda_major == major),
                     key=lambda v: version_tuple(v.cuda))
            yield pytest.param(rel, v, platform, id=f"cuda{major}-{platform}")


def _just_below(text):
    parts = list(version_tuple(text))
    i = len(parts) - 1
    while i >= 0 and parts[i] == 0:
        i -= 1
    if i < 0:
        return None
    parts[i] -= 1
    if i < len(parts) - 1 or len(parts) == 1:
        parts = [*parts[:i + 1], 99]
    return ".".join(map(str, parts))


@pytest.mark.parametrize("rel,v,platform", list(_floor_rows()))
def test_driver_floor_boundary(rel, v, platform):
    floor = _floor(v, platform)
    cc = v.arch[-1]
    choices = Choices(variant=v.name, torch=rel.latest, python=rel.python_min)
    ok = recommend(_report(platform, [{"vendor": "nvidia", "name": "GPU", "compute_capability": cc,
                                       "driver_version": floor}], python=rel.python_min), DATA, choices)
    assert ok.variant == v.name
    below = _just_below(floor)
    assert version_tuple(below) < version_tuple(floor)
    with pytest.raises(BadInput, match=f"driver {floor} or newer"):
        recommend(_report(platform, [{"vendor": "nvidia", "name": "GPU", "compute_capability": cc,
                                      "driver_version": below}], python=rel.python_min), DATA, choices)


@pytest.mark.parametrize("major", sorted(m for m, f in DATA.driver_floors.items()
                                         if version_tuple(f.linux) < version_tuple(f.windows)))
def test_wsl2_uses_the_windows_thresholds(major):
    f = DATA.driver_floors[major]
    rel = next(r for r in DATA.releases for v in r.variants_for("linux-x86_64")
               if v.backend == "cuda" and v.cuda_major == major)
    v = next(v for v in rel.variants_for("linux-x86_64") if v.backend == "cuda" and v.cuda_major == major)
    gpu = [{"vendor": "nvidia", "name": "GPU", "compute_capability": v.arch[-1], "driver_version": f.linux}]
    choices = Choices(variant=v.name, torch=rel.latest, python=rel.python_min)
    assert recommend(_report("linux-x86_64", gpu, python=rel.python_min), DATA, choices).variant == v.name
    with pytest.raises(BadInput, match="WSL2"):
        recommend(_report("linux-x86_64", gpu, python=rel.python_min, wsl=True), DATA, choices)


def _rocm_rows():
    for rel in DATA.releases:
        for v in rel.variants:
            if v.backend == "rocm":
                yield pytest.param(rel, v, id=f"{rel.torch}-{v.name}")


@pytest.mark.parametrize("rel,v", list(_rocm_rows()))
def test_every_gfx_target_is_served_and_others_are_not(rel, v):
    platform = v.platforms[0]
    python = v.python_range(rel)[0]  # the build's own range (AMD's Windows ROCm 10.0: Python 3.13 only)
    choices = Choices(variant=v.name, torch=rel.latest, python=python)
    for gfx in v.gfx:
        gpu = {"vendor": "amd", "name": f"Synthetic {gfx}", "gfx_target": gfx}
        rec = recommend(_report(platform, [gpu], python=python), DATA, choices)
        assert (rec.backend, rec.variant, rec.torch_version) == ("rocm", v.name, rel.latest)
        assert rec.env_vars == {}, "a listed target never needs an override"
    for gfx in ("gfx803", "gfx1250" if "gfx1250" not in v.gfx else "gfx1013"):
        gpu = {"vendor": "amd", "name": f"Synthetic {gfx}", "gfx_target": gfx}
        with pytest.raises(BadInput):
            recommend(_report(platform, [gpu], python=python), DATA, choices)


@pytest.mark.parametrize("rel", DATA.releases, ids=[r.torch for r in DATA.releases])
def test_python_range_edges(rel):
    platform = "linux-x86_64" if rel.variants_for("linux-x86_64") else rel.variants[0].platforms[0]
    for py in (rel.python_min, rel.python_max):
        rec = recommend(_report(platform, [], python=py + ".0"), DATA, Choices(torch=rel.latest, python=py))
        assert rec.torch_version == rel.latest and rec.python_ok is True and rec.env_python is None
    lo, hi = version_tuple(rel.python_min), version_tuple(rel.python_max)
    for py in (f"3.{lo[1] - 1}", f"3.{hi[1] + 1}"):
        with pytest.raises(BadInput, match=f"no wheels for Python {py}"):
            recommend(_report(platform, [], python=py + ".0"), DATA, Choices(torch=rel.latest, python=py))


@pytest.mark.parametrize("rel", DATA.releases, ids=[r.torch for r in DATA.releases])
def test_glibc_floor_edges(rel):
    v = next(v for v in rel.variants_for("linux-x86_64") if v.backend == "cpu")
    floor = version_tuple(v.glibc_min or rel.glibc_min)
    at = ".".join(map(str, floor))
    rec = recommend(_report("linux-x86_64", [], glibc=at), DATA, Choices(torch=rel.latest, variant="cpu",
                                                                          python=rel.python_min))
    assert rec.torch_version == rel.latest
    below = f"{floor[0]}.{floor[1] - 1}"
    with pytest.raises(BadInput, match="glibc"):
        recommend(_report("linux-x86_64", [], glibc=below), DATA, Choices(torch=rel.latest, variant="cpu",
                                                                          python=rel.python_min))


@pytest.mark.parametrize("rel", DATA.releases, ids=[r.torch for r in DATA.releases])
def test_companions_pinned_or_refused(rel):
    for pkg in ("torchvision", "torchaudio"):
        choices = Choices(torch=rel.latest, python=rel.python_min, packages=["torch", pkg])
        report = _report("linux-x86_64", [], python=rel.python_min)
        if rel.companions.get(pkg):
            rec = recommend(report, DATA, choices)
            assert f"{pkg}=={rel.companions[pkg]}+cpu" in rec.packages
            assert rec.command == ("pip", "install", f"torch=={rel.latest}+cpu", f"{pkg}=={rel.companions[pkg]}+cpu",
                                   "--index-url", rec.index_url)
        else:
            with pytest.raises(BadInput, match=f"no {pkg} release matches torch {rel.torch}"):
                recommend(report, DATA, choices)


def test_unpinned_answer_is_the_newest_release_that_any_row_allows():
    """With no GPU on Linux x86_64 and a Python every release supports... the newest CPU build."""
    rec = recommend(_report("linux-x86_64", [], python=DATA.newest.python_min), DATA)
    assert rec.torch_version == DATA.newest.latest and rec.variant == "cpu"
