"""The mirror catalogue (resources/mirrors.toml) and its loader (app/core/sources/mirrors.py).

The real file loads; every row and every known problem carries sources and a date; a malformed
row is refused with exit 2 naming the file, the row and the field; no mirror is offered for a
variant it does not list; hostile files (generated) never raise anything but BadInput.
"""
from __future__ import annotations

import datetime as dt
import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.base.errors import EXIT_BAD_INPUT, BadInput
from app.core.base.text import render
from app.core.sources import mirrors
from app.core.sources.mirrors import (
    NOTE_CODES,
    PROBLEM_KINDS,
    KnownProblem,
    Mirror,
    MirrorCatalogue,
    describe,
    load_mirrors,
)

REAL = Path(__file__).resolve().parents[1] / "resources" / "mirrors.toml"


@pytest.fixture(scope="module")
def catalogue() -> MirrorCatalogue:
    return load_mirrors(REAL)


# ------------------------------------------------------------------------------ the real file
def test_the_shipped_file_loads_with_every_kind(catalogue):
    assert mirrors.mirrors_file() == REAL
    assert mirrors.default_catalogue().mirrors == catalogue.mirrors
    kinds = {m.kind for m in catalogue.mirrors}
    assert kinds == {"pypi", "torch", "python"}
    ids = [m.id for m in catalogue.mirrors]
    assert len(ids) == len(set(ids))
    for wanted in ("tuna-pypi", "aliyun-pypi", "tencent-pypi", "ustc-pypi", "nju-torch", "aliyun-torch",
                   "sjtu-torch", "nju-python", "ustc-python"):
        assert catalogue.by_id(wanted)
    with pytest.raises(KeyError):
        catalogue.by_id("nowhere")


def test_every_row_and_problem_has_sources_and_a_date(catalogue):
    today = dt.date.today()
    for m in catalogue.mirrors:
        assert m.source and all(s.strip() for s in m.source), m.id
        assert isinstance(m.checked, dt.date) and m.checked <= today, m.id
        for p in m.known_problems:
            assert p.source, (m.id, p.kind)
            assert p.kind in PROBLEM_KINDS
            if p.reported and p.fixed:
                assert p.reported <= p.fixed <= today
        assert m.url.startswith("https://"), m.id
        assert m.region == "CN"


def test_layouts_match_what_the_mirrors_are(catalogue):
    aliyun = catalogue.by_id("aliyun-torch")
    assert aliyun.layout == "flat" and "flat_layout" in aliyun.notes  # a find-links page, not an index
    assert catalogue.by_id("nju-torch").layout == "pep503"
    assert catalogue.by_id("sjtu-torch").layout == "pep503"
    for m in catalogue.pypi_mirrors():
        assert m.layout == "pep503" and m.variants == () and "pypi_default_build_only" in m.notes
    for m in catalogue.python_mirrors():
        assert m.layout == "github-release" and "python_install_mirror" in m.notes
    # flat torch mirrors say so to the user
    for m in catalogue.mirrors:
        assert (m.layout == "flat") == ("flat_layout" in m.notes), m.id


def test_no_mirror_is_offered_for_a_variant_it_does_not_carry(catalogue):
    every = {v for m in catalogue.mirrors for v in m.variants} | {"cu134", "rocm9.9", "cpu", "mps", "nonsense"}
    for variant in sorted(every):
        offered = catalogue.torch_mirrors_for(variant)
        assert all(m.kind == "torch" and variant in m.variants for m in offered), variant
        carriers = {m.id for m in catalogue.mirrors if m.kind == "torch" and variant in m.variants}
        assert {m.id for m in offered} == carriers
        for m in catalogue.mirrors:
            if m.kind == "torch" and variant not in m.variants:
                with pytest.raises(ValueError):
                    m.url_for(variant)
    # the real rows: TUNA carries nothing of download.pytorch.org; Aliyun and SJTU no CPU build listed
    assert [m.id for m in catalogue.torch_mirrors_for("cpu")] == ["nju-torch"]
    assert catalogue.torch_mirrors_for("cu134") == ()
    assert "tuna-pypi" not in {m.id for v in every for m in catalogue.torch_mirrors_for(v)}
    nju = catalogue.by_id("nju-torch")
    assert nju.url_for("cu128") == "https://mirror.nju.edu.cn/pytorch/whl/cu128/"
    assert catalogue.by_id("aliyun-torch").url_for("cu130") == "https://mirrors.aliyun.com/pytorch-wheels/cu130/"
    assert catalogue.by_id("tuna-pypi").url_for() == "https://pypi.tuna.tsinghua.edu.cn/simple/"
    # module-level lookups read the shipped file
    assert mirrors.torch_mirrors_for("cu130") == catalogue.torch_mirrors_for("cu130")
    assert mirrors.pypi_mirrors() == catalogue.pypi_mirrors()
    assert mirrors.python_mirrors() == catalogue.python_mirrors()


def test_notes_and_problems_render_in_both_languages(catalogue):
    for m in catalogue.mirrors:
        for lang in ("en", "zh_CN"):
            text = render(describe(m), lang)
            assert "{" not in text and "}" not in text
            if m.notes or m.open_problems:
                assert (m.name_zh or m.name if lang == "zh_CN" else m.name) in text  # its name in that language
        for p in m.known_problems:
            en, zh = render(p.text(m), "en"), render(p.text(m), "zh_CN")
            assert en != zh and m.name in en and (m.name_zh or m.name) in zh
            if p.reported:
                assert p.reported.isoformat() in en and p.reported.isoformat() in zh
    sjtu = catalogue.by_id("sjtu-torch")
    assert len(sjtu.problem_texts(include_fixed=True)) == 4 and sjtu.problem_texts() == ()  # all fixed
    tuna = catalogue.by_id("tuna-pypi")
    assert {p.kind for p in tuna.open_problems} == {"forbidden_files", "blocks_clients"}
    assert "403" in render(describe(tuna), "zh_CN")


# ------------------------------------------------------------------------------- refusals
GOOD = {
    "id": "test-torch", "name": "Test mirror", "kind": "torch", "url": "https://example.org/whl/{variant}/",
    "layout": "pep503", "variants": ["cpu", "cu128"], "region": "CN", "notes": [],
    "source": ["owner/repo#1"], "checked": dt.date(2026, 12, 1),
}


def _toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f'"{k}" = {_toml_value(x)}' for k, x in v.items()) + "}"
    raise TypeError(type(v))


def _write(tmp_path: Path, *rows: dict, head: str = "schema_version = 1\n") -> Path:
    out = [head]
    for row in rows:
        out.append("[[mirror]]")
        out += [f'"{k}" = {_toml_value(v)}' for k, v in row.items()]
    path = tmp_path / "mirrors.toml"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def _refused(path: Path) -> BadInput:
    with pytest.raises(BadInput) as caught:
        load_mirrors(path)
    assert caught.value.exit_code == EXIT_BAD_INPUT
    assert "docs/mirrors.md" in render(caught.value.hint)
    return caught.value


def test_a_good_row_loads(tmp_path):
    cat = load_mirrors(_write(tmp_path, GOOD))
    (m,) = cat.mirrors
    assert m == Mirror(id="test-torch", name="Test mirror", kind="torch", url="https://example.org/whl/{variant}/",
                       layout="pep503", variants=("cpu", "cu128"), region="CN", notes=(), known_problems=(),
                       source=("owner/repo#1",), checked=dt.date(2026, 12, 1))


BAD_ROWS = [
    # (change to GOOD, field named in the message)
    ({"id": None}, "id"),
    ({"id": "Bad Id!"}, "id"),
    ({"name": ""}, "name"),
    ({"name": 5}, "name"),
    ({"kind": "conda"}, "kind"),
    ({"url": "http://example.org/whl/{variant}/"}, "url"),  # https only
    ({"url": "https://example.org/whl/"}, "url"),  # a torch url without {variant}
    ({"url": "https://example.org/{variant}/{variant}/"}, "url"),
    ({"layout": "html"}, "layout"),
    ({"layout": "github-release"}, "layout"),
    ({"variants": []}, "variants"),
    ({"variants": None}, "variants"),
    ({"variants": ["cu12.8"]}, "variants"),
    ({"variants": ["cpu", "cpu"]}, "variants"),
    ({"variants": "cpu"}, "variants"),
    ({"variants": ["cpu", 5]}, "variants"),
    ({"kind": "pypi", "url": "https://example.org/simple/", "variants": ["cpu"]}, "variants"),
    ({"kind": "pypi", "variants": []}, "url"),  # a PyPI url cannot hold {variant}
    ({"kind": "python", "url": "https://example.org/pbs/", "variants": [], "layout": "pep503"}, "layout"),
    ({"region": "China"}, "region"),
    ({"notes": ["made_up_note"]}, "notes"),
    ({"source": []}, "source"),
    ({"source": None}, "source"),
    ({"source": ["see the internet"]}, "source"),
    ({"source": "owner/repo#1"}, "source"),
    ({"checked": None}, "checked"),
    ({"checked": "2026-12-01"}, "checked"),
    ({"checked": dt.datetime(2026, 12, 1, 8, 0)}, "checked"),
    ({"colour": "blue"}, "colour"),
    ({"known_problems": "stale"}, "known_problems"),
    ({"known_problems": ["stale"]}, "known_problems[0]"),
    ({"known_problems": [{"kind": "haunted", "source": ["o/r#2"]}]}, "known_problems[0].kind"),
    ({"known_problems": [{"kind": "slow"}]}, "known_problems[0].source"),
    ({"known_problems": [{"kind": "slow", "source": ["nope"]}]}, "known_problems[0].source"),
    ({"known_problems": [{"kind": "slow", "source": ["o/r#2"], "reported": "May"}]}, "known_problems[0].reported"),
    ({"known_problems": [{"kind": "slow", "source": ["o/r#2"], "reported": dt.date(2026, 5, 2),
                          "fixed": dt.date(2026, 5, 1)}]}, "known_problems[0].fixed"),
    ({"known_problems": [{"kind": "slow", "source": ["o/r#2"], "when": 1}]}, "known_problems[0].when"),
    ({"known_problems": [{"kind": "slow", "source": ["o/r#2"], "detail": 5}]}, "known_problems[0].detail"),
]


@pytest.mark.parametrize(("change", "field"), BAD_ROWS, ids=[f"{f}-{i}" for i, (_, f) in enumerate(BAD_ROWS)])
def test_a_malformed_row_is_refused_naming_file_row_and_field(tmp_path, change, field):
    row = {**GOOD, **change}
    row = {k: v for k, v in row.items() if v is not None}
    other = {**GOOD, "id": "first-row"}
    err = _refused(_write(tmp_path, other, row))
    text = err.text()
    assert str(tmp_path / "mirrors.toml") in text
    assert "(mirror 2, " in text, text
    assert f"'mirror[1].{field}'" in text, text
    assert "Traceback" not in text


def test_file_level_refusals(tmp_path):
    path = tmp_path / "mirrors.toml"
    assert "Cannot read" in _refused(path).text()  # missing
    path.write_bytes(b"\xff\xfe[[mirror]]")
    assert "not valid TOML" in _refused(path).text()
    path.write_text("[[mirror]\nid = ", encoding="utf-8")
    assert "not valid TOML" in _refused(path).text()
    path.write_text("schema_version = 1\n", encoding="utf-8")
    assert "no [[mirror]]" in _refused(path).text()
    path.write_text("mirror = 5\n", encoding="utf-8")
    assert "no [[mirror]]" in _refused(path).text()
    path.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    assert "not valid TOML" in _refused(path).text() or "unknown keys" in _refused(path).text()
    path.write_text("# " + "x" * (mirrors.MAX_BYTES + 10) + "\n", encoding="utf-8")
    assert "larger than" in _refused(path).text()
    err = _refused(_write(tmp_path, GOOD, GOOD))
    assert "'mirror[1].id'" in err.text() and "earlier row" in err.text()
    err = _refused(_write(tmp_path, GOOD, head="surprise = 1\n"))
    assert "surprise" in err.text()
    path.write_text("[[mirror]]\n[[mirror.x]]\n", encoding="utf-8")
    assert "'mirror[0].x'" in _refused(path).text()


def test_refusals_render_in_chinese(tmp_path):
    from app.core.base.text import msg

    with pytest.raises(BadInput) as err:
        mirrors._Row("f.toml", 2, {"id": "x"}).fail("source", msg("mirrors.field_empty", "is empty"))
    assert render(err.value.message, "zh_CN") == "镜像目录 f.toml（第 2 个镜像，x）：'mirror[1].source' 为空"


# ---------------------------------------------------------------------------- hostile input
_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=30) | st.dates()
    | st.sampled_from(["cpu", "cu128", "pep503", "flat", "torch", "pypi", "python", "CN", "owner/repo#1",
                       "https://example.org/{variant}/"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(sorted(mirrors._PROBLEM_FIELDS)),
                                                                inner, max_size=5),
    max_leaves=12,
)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.dictionaries(st.sampled_from(sorted(mirrors._FIELDS | {"extra"})), _values, max_size=4))
def test_generated_rows_load_or_are_refused_cleanly(tmp_path, changes):
    row = {k: v for k, v in {**GOOD, **changes}.items() if v is not None}
    try:
        path = _write(tmp_path, row)
    except TypeError:
        return
    try:
        cat = load_mirrors(path)
    except BadInput as exc:
        assert exc.exit_code == EXIT_BAD_INPUT
        assert "mirror 1" in exc.text() or "TOML" in exc.text(), exc.text()
        return
    (m,) = cat.mirrors
    assert m.source and m.checked and (m.kind != "torch" or m.variants)


def test_byte_mutations_of_the_real_file_never_crash(tmp_path):
    data = REAL.read_bytes()
    rng = random.Random(20261201)
    path = tmp_path / "mirrors.toml"
    outcomes = {"ok": 0, "refused": 0}
    for _ in range(1000):
        buf = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(buf))
            op = rng.random()
            if op < 0.4:
                buf[i] = rng.randrange(256)
            elif op < 0.7:
                del buf[i:i + rng.randint(1, 40)]
            else:
                buf[i:i] = rng.choice([b'"', b"[", b"]", b"=", b"\n", b"{variant}", b"2026-13-40", b"#"])
        path.write_bytes(bytes(buf))
        try:
            load_mirrors(path)
            outcomes["ok"] += 1
        except BadInput as exc:
            assert exc.exit_code == EXIT_BAD_INPUT
            assert re.search(r"mirror catalogue|mirror \d+", exc.text()), exc.text()
            outcomes["refused"] += 1
    assert outcomes["refused"] > 100 and sum(outcomes.values()) == 1000


def test_known_problem_and_note_codes_are_all_translatable():
    m = Mirror(id="x", name="X", kind="torch", url="https://x/{variant}/", layout="pep503", variants=("cpu",),
               region="CN", notes=tuple(sorted(NOTE_CODES)),
               known_problems=tuple(KnownProblem(kind=k, source=("o/r#1",)) for k in sorted(PROBLEM_KINDS)),
               source=("o/r#1",), checked=dt.date(2026, 12, 1))
    for lang in ("en", "zh_CN"):
        texts = [render(t, lang) for t in (*m.note_texts(), *m.problem_texts())]
        assert len(texts) == len(NOTE_CODES) + len(PROBLEM_KINDS)
        assert all("X" in t and "{" not in t for t in texts)


def test_every_mirror_has_its_chinese_name_and_json_keeps_the_english_one(catalogue):
    """Chinese screens name a mirror as its users do (南京大学, not "Nanjing University"); JSON and
    English screens keep the English name."""
    from app.core.base.serial import to_jsonable

    for m in catalogue.mirrors:
        assert m.name_zh and re.search(r"[\u4e00-\u9fff]", m.name_zh), m.id
        assert render(m.label, "zh_CN") == m.name_zh and render(m.label, "en") == m.name
        assert to_jsonable(m.label) == m.name
