"""Property: whatever the machine, the engine never picks a wheel that cannot run there.

Random machines (platform, NVIDIA/AMD GPUs with random CC / gfx / driver, Python, glibc, macOS)
go through recommend(); the answer is then re-checked here straight against the data rows,
without the engine's helpers: the build exists for that release and platform, the driver meets
the floor of its CUDA major (Windows floor on Windows and WSL2), every served GPU has SASS of
its major with a lower or equal minor (Tegra never), every served AMD GPU's gfx is listed or
the HSA override is set, Python/glibc/macOS floors hold."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.base.errors import BadInput
from app.core.compat.data import load_compat, version_tuple
from app.core.detection.system import SystemReport
from app.core.recommend import recommend

DATA = load_compat()
CCS = sorted({a for r in DATA.releases for v in r.variants for a in v.arch} | set(DATA.tegra)
             | {"3.5", "5.2", "6.1", "7.5", "8.9", "10.3", "12.1", "13.0"})
GFX = sorted({g for r in DATA.releases for v in r.variants for g in v.gfx} | {"gfx803", "gfx1031", "gfx1010",
                                                                             "gfx1032", "gfx90c"})
DRIVERS = ["35.3.1", "450.80.02", "470.57.02", "525.60.13", "528.33", "535.183.01", "550.54.14", "560.35.05",
           "570.86.15", "576.02", "579.99", "580", "580.95.05", "590.48.01", "610.62"]
PY = [f"3.{m}" for m in range(7, 17)]

nvidia = st.builds(lambda cc, d, i: {"vendor": "nvidia", "name": "GPU", "compute_capability": cc,
                                     "driver_version": d, "index": i},
                   st.sampled_from(CCS), st.sampled_from(DRIVERS), st.integers(0, 3))
amd = st.builds(lambda g, integ: {"vendor": "amd", "name": "Radeon", "gfx_target": g, "integrated": integ},
                st.sampled_from(GFX), st.booleans())
machine = st.fixed_dictionaries({
    "os": st.one_of(
        st.fixed_dictionaries({"family": st.just("linux"), "glibc": st.sampled_from(["2.17", "2.27", "2.28", "2.35"]),
                               "wsl": st.booleans()}),
        st.fixed_dictionaries({"family": st.just("linux"), "glibc": st.just("2.39")}),
        st.fixed_dictionaries({"family": st.just("windows")}),
        st.fixed_dictionaries({"family": st.just("macos"),
                               "version": st.sampled_from(["11.7", "12.2", "12.6", "13.5", "14.5", "15.1"])})),
    "arch": st.sampled_from(["x86_64", "x86_64", "x86_64", "aarch64", "arm64"]),
    "python": st.fixed_dictionaries({"version": st.sampled_from(PY)}),
    "gpus": st.lists(st.one_of(nvidia, nvidia, amd), min_size=1, max_size=3),
})


def _runs(device, codes):
    if device in DATA.tegra:
        return device in codes
    dm, dn = map(int, device.split("."))
    return any(int(c.split(".")[0]) == dm and int(c.split(".")[1]) <= dn for c in codes)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(machine)
def test_never_a_wheel_that_cannot_run(m):
    report = SystemReport.from_dict(m)
    try:
        rec = recommend(report, DATA)
    except BadInput:
        return  # refusing is allowed; recommending something broken is not
    rel = DATA.release(rec.torch_release)
    assert rel is not None and rec.torch_version == rel.latest
    plat = rec.platform if rec.platform != "windows-arm64" else "windows-x86_64"
    rows = [v for v in rel.variants_for(plat) if v.name == rec.variant]
    assert len(rows) == 1, (rec.variant, plat)
    v = rows[0]
    py = rec.env_python or m["python"]["version"]
    assert v.python_ok(rel, py)
    fam = m["os"]["family"]
    if fam == "linux":
        assert version_tuple(m["os"]["glibc"]) >= version_tuple(v.glibc_min or rel.glibc_min)
    if fam == "macos" and v.macos_min:
        assert version_tuple(m["os"]["version"]) >= version_tuple(v.macos_min)
    if v.backend == "mps":
        assert version_tuple(m["os"]["version"]) >= version_tuple(v.mps_macos_min)
    if v.backend == "cuda":
        floor = DATA.driver_floors[v.cuda_major]
        need = floor.windows if (fam == "windows" or m["os"].get("wsl")) else floor.linux
        assert rec.served_gpus
        for g in rec.served_gpus:
            assert version_tuple(g.driver_version) >= version_tuple(need)
            assert g.compute_capability not in DATA.tegra
            assert _runs(g.compute_capability, v.arch), (g, v.name, v.arch)
    if v.backend == "rocm":
        assert fam == "linux" or v.provider == "amd"  # ROCm on Windows: AMD's own index only
        if v.device_extra:  # AMD's index: plain torch is host-only, so every pin carries the GPUs' extras
            assert all(f"device-{g.gfx_target}" in rec.command[2] for g in rec.served_gpus)
        for g in rec.served_gpus:
            if g.gfx_target not in v.gfx:
                assert "HSA_OVERRIDE_GFX_VERSION" in rec.env_vars and not v.therock
    # one index for the torch packages
    assert rec.command.count("--index-url") <= 1
