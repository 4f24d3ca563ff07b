"""The domain rules that live in exactly one module each: CUDA arch coverage and driver floors
(app.core.compat.cuda), visible-device parsing (app.core.base.visible), wheel names and variants
(app.core.base.wheels), requirements (app.core.base.requirements). Property tests state the rule; the
named cases pin the real-world forms."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.base import requirements, visible, wheels
from app.core.base.enums import Backend
from app.core.base.errors import BadInput
from app.core.compat import cuda
from app.core.compat.data import load_compat

ccs = st.tuples(st.integers(1, 12), st.integers(0, 9))


# ------------------------------------------------------------------ compute capability

@given(device=ccs, code=ccs)
def test_sass_runs_on_same_major_with_a_newer_or_equal_minor(device, code):
    covered = cuda.arch_covers(f"{device[0]}.{device[1]}", [f"sm_{code[0]}{code[1]}"])
    assert covered == (device[0] == code[0] and device[1] >= code[1])


@given(device=ccs, codes=st.lists(ccs, min_size=1, max_size=8))
def test_coverage_is_any_entry_and_both_spellings_agree(device, codes):
    cc = f"{device[0]}.{device[1]}"
    dotted = [f"{a}.{b}" for a, b in codes]
    sm = [f"sm_{a}{b}" for a, b in codes]
    expect = any(cuda.sass_serves(device, c) for c in codes)
    assert cuda.arch_covers(cc, dotted) == expect
    assert cuda.arch_covers(cc, sm) == expect


@given(device=ccs, code=ccs)
def test_ptx_counts_only_when_asked(device, code):
    cc = f"{device[0]}.{device[1]}"
    assert cuda.arch_covers(cc, [f"compute_{code[0]}{code[1]}"]) is False
    assert cuda.arch_covers(cc, [f"{code[0]}.{code[1]}+PTX"], count_ptx=True) == (code <= device)


@pytest.mark.parametrize("cc,arch,expect", [
    ("6.1", ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"], True),  # GTX 1080 Ti on cu126
    ("6.1", ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"], False),  # ... on cu128: no Pascal
    ("12.0", ["8.0", "9.0"], False),  # RTX 5090 on cu126
    ("9.0", ["sm_90a"], True),  # arch-specific suffix
    ("10.3", ["sm_100f"], True),  # family suffix
    ("8.7", ["8.0", "8.6"], False),  # Jetson Orin: Tegra, exact only
    ("8.9", [], None),
    ("garbage", ["8.0"], None),
])
def test_named_arch_cases(cc, arch, expect):
    assert cuda.arch_covers(cc, arch, tegra={"8.7"}) is expect


def test_parse_cc_rejects_garbage():
    assert cuda.parse_cc("8.6") == (8, 6)
    for bad in (None, "", "8", "8.", "a.b", "8.6.1"):
        assert cuda.parse_cc(bad) is None


# ------------------------------------------------------------------------ driver floors

@given(major=st.integers(300, 700), minor=st.integers(0, 99))
def test_driver_meets_is_numeric_not_textual(major, minor):
    drv = f"{major}.{minor:02d}"
    assert cuda.driver_meets(drv, "525.60.13") == ((major, minor) >= (525, 60))
    assert cuda.driver_meets(drv, "580") == (major >= 580)


def test_floors_come_from_the_compat_data():
    data = load_compat()
    for major, row in data.driver_floors.items():
        floor, got = cuda.driver_floor(f"{major}.0", "linux", data)
        assert floor == row.linux and got is row
        assert cuda.driver_floor(f"{major}.1", "windows", data)[0] == row.windows
    assert cuda.driver_floor("99.0", "linux", data) is None


@pytest.mark.parametrize("wmi,nv", [("32.0.15.7680", "576.80"), ("31.0.15.4633", "546.33"),
                                    ("30.0.14.7141", "471.41"), ("546.33", None), ("", None)])
def test_windows_driver_form(wmi, nv):
    assert cuda.windows_driver_to_nvidia(wmi) == nv


def test_windows_form_is_compared_as_the_nvidia_number():
    assert cuda.driver_meets("31.0.15.4633", "528.33") is True  # 546.33
    assert cuda.driver_meets("30.0.14.7141", "528.33") is False  # 471.41


# ----------------------------------------------------------------------- visible devices

# ------------------------------------------------------------------ driver ceilings

DATA = load_compat(bundled=True)


@given(device=ccs)
def test_driver_ceiling_is_r470_for_kepler_and_r580_for_maxwell_pascal_volta(device):
    """R470 is the last branch for CC 3.x, R580 for 5.x, 6.x, 7.0/7.2 (drivers.toml); Turing and newer have none."""
    cc = f"{device[0]}.{device[1]}"
    ceiling = cuda.driver_ceiling(cc, DATA)
    old = device[0] in (3, 5, 6) or device in ((7, 0), (7, 1), (7, 2))
    assert (ceiling is not None) == old
    if ceiling is not None:
        assert (ceiling.branch, ceiling.beyond) == (("470", "495") if device[0] == 3 else ("580", "590"))
        assert ceiling.architecture == {3: "Kepler", 5: "Maxwell", 6: "Pascal", 7: "Volta"}[device[0]]


@given(device=ccs, major=st.integers(400, 700), minor=st.integers(0, 99))
def test_advice_never_goes_past_the_ceiling(device, major, minor):
    """A driver may be advised only below the next branch; a driver of that branch or newer is past it."""
    ceiling = cuda.driver_ceiling(f"{device[0]}.{device[1]}", DATA)
    driver = f"{major}.{minor:02d}"
    allowed = cuda.capped_driver(driver, [ceiling])
    if ceiling is None:
        assert allowed
    else:
        beyond = 495 if device[0] == 3 else 590  # R470 is Kepler's last branch, R580 Maxwell/Pascal/Volta's
        assert allowed == (major < beyond)
        assert cuda.above_ceiling(driver, ceiling) == (major >= beyond)


@pytest.mark.parametrize("driver,above", [("580.95.05", False), ("581.57", False), ("590.48.01", True),
                                          ("595.71.05", True), ("32.0.15.8157", False), ("32.0.15.9144", True),
                                          ("garbage", None)])
def test_ceiling_reads_every_driver_form(driver, above):
    assert cuda.above_ceiling(driver, cuda.driver_ceiling("6.1", DATA)) is above


@given(device=ccs)
def test_the_engine_never_advises_a_driver_past_a_served_gpus_ceiling(device):
    from app.core.recommend import recommend

    cc = f"{device[0]}.{device[1]}"
    report = {"os": {"family": "linux", "glibc": "2.39"}, "arch": "x86_64", "python": {"version": "3.12.1"},
              "gpus": [{"vendor": "nvidia", "name": "GPU", "compute_capability": cc, "driver_version": "470.57.02"}]}
    rec = recommend(report, DATA)
    for g in rec.served_gpus:
        ceiling = cuda.driver_ceiling(g.compute_capability, DATA)
        if ceiling is not None and rec.driver_upgrade is not None:
            assert cuda.capped_driver(rec.driver_upgrade.driver, [ceiling]), rec.driver_upgrade


@pytest.mark.parametrize("cc,platform,last", [("6.1", "linux-x86_64", "2.14.1"), ("7.0", "windows-x86_64", "2.14.1"),
                                              ("3.7", "linux-x86_64", "2.7.1"), ("8.9", "linux-x86_64", "2.15.0"),
                                              ("3.5", "linux-x86_64", None)])
def test_last_release_built_for_a_capability(cc, platform, last):
    found = cuda.last_release(cc, platform, DATA)
    assert (found[0].latest if found else None) == last


# ------------------------------------------------------------------ visible devices

@given(n=st.integers(0, 8), tokens=st.lists(st.integers(0, 12), min_size=1, max_size=6))
def test_visible_indices_stop_at_the_first_invalid_entry(n, tokens):
    value = ",".join(map(str, tokens))
    got = visible.parse_visible(value, n)
    expect: list[int] = []
    for t in tokens:
        if t >= n or t in expect:
            break
        expect.append(t)
    assert list(got.indices) == expect
    assert got.hides_all == (not expect)
    for i in range(n):
        assert got.hides(i) == (i not in expect)


@pytest.mark.parametrize("value,state", [
    (None, visible.Visibility.UNSET), ("", visible.Visibility.EMPTY), ("  ", visible.Visibility.EMPTY),
    ("-1", visible.Visibility.DISABLED), ("none", visible.Visibility.DISABLED),
    ("NoDevFiles", visible.Visibility.DISABLED), ("abc", visible.Visibility.NONE_VALID),
    ("0,abc,1", visible.Visibility.PARTIAL), ("GPU-<uuid>", visible.Visibility.ALL),
    ("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6,MIG-1/2/3", visible.Visibility.PARTIAL),
    ("MIG-8932f937-d72c-4106-c12f-20bd9faed9f6/1/0", visible.Visibility.ALL),
])
def test_visible_named_cases(value, state):
    assert visible.parse_visible(value, 2).state is state


def test_uuids_count_as_visible_but_unmatched():
    got = visible.parse_visible("GPU-<uuid>,1", 2)
    assert got.count == 2 and not got.hides_all and not got.hides(0)


@given(uuid=st.uuids(), cut=st.integers(1, 36), kind=st.sampled_from(["GPU", "MIG"]))
def test_the_first_characters_of_a_uuid_name_a_device(uuid, cut, kind):
    """NVIDIA's MPS guide: the first few characters of a UUID ("GPU-" included) work for the whole."""
    entry = f"{kind}-{str(uuid)[:cut]}"
    assert visible.is_uuid(entry)
    got = visible.parse_visible(f"{entry},abc", 2)
    assert got.uuids == 1 and got.state is visible.Visibility.PARTIAL and got.invalid == "abc"


@given(rest=st.text(min_size=1, max_size=12))
def test_a_uuid_is_hex_digits_in_their_places(rest):
    shape = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
    fits = len(rest) <= len(shape) and all(
        (c == "-") if s == "-" else (c in "0123456789abcdefABCDEF") for c, s in zip(rest, shape, strict=False))
    assert visible.is_uuid("GPU-" + rest) == (fits or rest == "<uuid>")
    assert not visible.is_uuid("XPU-" + rest) and not visible.is_uuid(rest)


# ---------------------------------------------------------------------- wheels, variants

@pytest.mark.parametrize("version,variant,backend", [
    ("2.13.0+cpu", "cpu", Backend.CPU), ("2.8.0+cu128", "cu128", Backend.CUDA),
    ("2.9.1+rocm6.4", "rocm6.4", Backend.ROCM), ("2.9.0+xpu", "xpu", Backend.XPU),
    ("2.13.0", None, None), ("2.13.0+local.build", None, None), (None, None, None),
])
def test_variant_of_version(version, variant, backend):
    assert wheels.variant_of_version(version) == variant
    assert wheels.backend_of_variant(variant) == backend


def _index_rows():
    data = load_compat()
    seen = set()
    for rel in data.releases:
        for v in rel.variants:
            for p in v.platforms:
                if (v.name, v.index_url, p) not in seen:
                    seen.add((v.name, v.index_url, p))
                    yield pytest.param(v, p, id=f"{v.name}-{p}")


@pytest.mark.parametrize("v,platform", list(_index_rows()))
def test_the_pytorch_index_labels_its_wheels_with_the_variant(v, platform):
    """torch==2.14.1+cu126 names the build on the PyTorch index (Linux, Windows); macOS wheels and other
    indexes carry no label, so the pin stays bare there."""
    label = wheels.index_local_label(v.index_url, platform)
    if v.index_url.startswith(wheels.PYTORCH_INDEX) and not platform.startswith("macos"):
        assert wheels.variant_of_version(wheels.with_local_label("2.14.1", label)) == v.name
        assert wheels.backend_of_variant(label) == v.backend
    else:
        assert label is None and wheels.with_local_label("2.14.1", label) == "2.14.1"


def test_parse_wheel_reads_tags_from_the_file_name():
    w = wheels.parse_wheel("torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
    assert (w.name, w.version, w.variant) == ("torch", "2.13.0+cpu", "cpu")
    assert w.pythons == {"cp311"} and w.platforms == {"manylinux_2_28_x86_64"}
    assert wheels.parse_wheel("not-a-wheel.txt") is None
    assert wheels.parse_wheel("../../x.whl") is None


# ------------------------------------------------------------------------- requirements

@pytest.mark.parametrize("text,name", [
    ("torch", "torch"), ("Torch_Vision==0.29.1", "torch-vision"), ("numpy>=1.26,<3", "numpy"),
    ("pkg[extra]>=1", "pkg"), ("./dist/foo_bar-1.0-py3-none-any.whl", "foo-bar"),
])
def test_requirement_names(text, name):
    assert requirements.requirement_name(text) == name


@pytest.mark.parametrize("text", ["-e /etc", "--index-url=http://x", "", "  ", "torch==", "a b c ==="])
def test_bad_requirements_name_the_field(text):
    with pytest.raises(BadInput) as err:
        requirements.requirement_name(text, field="packages")
    assert "packages" in str(err.value)


def test_split_list_keeps_specifier_commas():
    assert requirements.split_list("torch, numpy>=1.26,<3 torchvision") == ["torch", "numpy>=1.26,<3", "torchvision"]
    assert requirements.split_list(["a", " ", "b "]) == ["a", "b"]
