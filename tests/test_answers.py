"""Answer files: the documented example parses; every malformed key is named with its line."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from app.core.base.errors import BadInput
from app.core.base.paths import resources_dir
from app.core.base.text import render
from app.core.pipeline.answers import SCHEMA, Answers, load_answers, parse_answers

EXAMPLE = resources_dir() / "answers.example.toml"


def test_the_documented_example_parses_and_documents_every_key():
    a = load_answers(EXAMPLE)
    assert a.env_path == Path("~/torch-env").expanduser()
    assert (a.backend, a.variant, a.torch, a.installer, a.env_kind) == ("auto", None, None, "uv", "venv")
    assert a.bench and a.verify and a.bench_budget_s == 60
    assert a.report_formats == ("json", "html")
    text = EXAMPLE.read_text(encoding="utf-8")
    for section, keys in SCHEMA.items():
        assert f"[{section}]" in text
        for key in keys:
            assert re.search(rf"^{key}\s*=", text, re.M), f"example lacks {section}.{key}"


def test_full_answer_file(tmp_path):
    home_var = "USERPROFILE" if os.name == "nt" else "HOME"  # what a user there writes for the home folder
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    bundle = tmp_path / "torch-bundle"
    bundle.mkdir()
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n", encoding="utf-8")
    f = tmp_path / "a.toml"
    f.write_text(f"""
version = 1
[environment]
path = "envs/torch env ü"
python = "3.11"
installer = "pip"
[torch]
backend = "cu126"
version = "==2.7.1"
packages = ["torchvision", "numpy>=1.26"]
[sources]
mirror = "https://pypi.tuna.tsinghua.edu.cn/simple"
find_links = ["wheels"]
bundle = "torch-bundle"
proxy = "http://proxy:3128"
ca_bundle = '{ca}'
[bench]
enabled = false
budget_s = 5.5
sizes = [256, 512]
dtypes = ["fp32", "BF16"]
[report]
folder = "${home_var}/reports"
name = "pc-01"
""", encoding="utf-8")
    a = load_answers(f)
    assert a.env_path == tmp_path / "envs" / "torch env ü"  # relative to the file
    assert (a.backend, a.variant, a.torch) == ("cuda", "cu126", "2.7.1")
    assert a.packages == ("torchvision", "numpy>=1.26")
    assert a.sources.find_links == (str(wheels),) and a.sources.bundle == bundle and a.sources.ca_bundle == str(ca)
    assert a.bench is False and a.bench_budget_s == 5.5 and a.bench_sizes == (256, 512)
    assert a.bench_dtypes == ("fp32", "bf16")
    assert a.report_dir == Path.home() / "reports" and a.report_name == "pc-01"
    assert isinstance(a.to_dict()["env_path"], str)


@pytest.mark.parametrize("value,backend,variant", [
    ("mps", "mps", None), ("rocm-therock", "rocm", "rocm-therock"), ("rocm6.2.4", "rocm", "rocm6.2.4"),
    ("XPU", "xpu", None), ("cu130", "cuda", "cu130"),
])
def test_backend_policy_values(tmp_path, value, backend, variant):
    a = parse_answers(f'[environment]\npath = "e"\n[torch]\nbackend = "{value}"\n', base=tmp_path)
    assert (a.backend, a.variant) == (backend, variant)


def test_the_sources_keys_speak_the_sources_vocabulary_and_the_old_names_still_read(tmp_path):
    """[sources] names the torch index and the default index as everything else does (torch_index,
    default_index); an older file's index_url / mirror mean the same, and giving both is refused."""
    new = parse_answers('[environment]\npath = "e"\n[sources]\ntorch_index = "https://t.example/whl/cpu"\n'
                        'default_index = "https://p.example/simple"\n', base=tmp_path)
    old = parse_answers('[environment]\npath = "e"\n[sources]\nindex_url = "https://t.example/whl/cpu"\n'
                        'mirror = "https://p.example/simple"\n', base=tmp_path)
    assert new.sources == old.sources
    assert (new.sources.torch_index, new.sources.default_index) == ("https://t.example/whl/cpu",
                                                                     "https://p.example/simple")
    with pytest.raises(BadInput) as err:
        parse_answers('[environment]\npath = "e"\n[sources]\ntorch_index = "https://t.example/whl/cpu"\n'
                      'index_url = "https://u.example/whl/cpu"\n', base=tmp_path)
    assert err.value.exit_code == 2 and "give only torch_index" in str(err.value)


def test_bundle_auto(tmp_path):
    a = parse_answers('[environment]\npath = "e"\n[sources]\nbundle = "auto"\n', base=tmp_path)
    assert a.bundle_auto and a.sources.bundle is None


BAD = [
    # (file text, the key the message must name, a phrase it must hold, the line)
    ('[environment]\npath = "e"\npyhton = "3.11"\n', "environment.pyhton", "did you mean 'python'", 3),
    ('[environment]\npath = "e"\n[torhc]\nbackend = "cpu"\n', "torhc", "did you mean 'torch'", 3),
    ('colour = "blue"\n[environment]\npath = "e"\n', "colour", "unknown", 1),
    ('[environment]\npath = "e"\nkind = "docker"\n', "environment.kind", "must be one of venv, conda", 3),
    ('[environment]\npath = "e"\nexisting = "yes"\n', "environment.existing", "true or false", 3),
    ('[environment]\npath = 5\n', "environment.path", "must be a text, not the number 5", 2),
    ('[environment]\npath = "e"\npython = "3.1.x"\n', "environment.python", "neither a version", 3),
    ('[environment]\npath = "e"\npython = "3.6"\n', "environment.python", "too old", 3),
    ('[environment]\npath = "e"\n\n[torch]\nbackend = "cuda12"\n', "torch.backend", "not one of", 5),
    ('[environment]\npath = "e"\n[torch]\nversion = "latest"\n', "torch.version", "not a version", 4),
    ('[environment]\npath = "e"\n[torch]\npackages = ["torch vision"]\n', "torch.packages",
     "not a package requirement", 4),
    ('[environment]\npath = "e"\n[torch]\npackages = ["numpy", "torch==2.1"]\n', "torch.packages",
     "pin its version with [torch] version", 4),
    ('[environment]\npath = "e"\n[torch]\npackages = ["torchvision==0.20"]\n', "torch.packages",
     "list it by name only", 4),
    ('[environment]\npath = "e"\n[torch]\nbackend = "rocm"\nvariant = "cu126"\n', "torch.variant",
     "not a rocm build", 5),
    ('[environment]\npath = "e"\n[sources]\nindex_url = "download.pytorch.org/whl/cpu"\n',
     "sources.index_url", "not a URL", 4),
    ('[environment]\npath = "e"\n[sources]\nfind_links = ["/no/such/wheels"]\n', "sources.find_links",
     "does not exist", 4),
    ('[environment]\npath = "e"\n[sources]\nbundle = "/no/such/bundle"\n', "sources.bundle", "does not exist", 4),
    ('[environment]\npath = "e"\n[sources]\nca_bundle = "nope.pem"\n', "sources.ca_bundle", "does not exist", 4),
    ('[environment]\npath = "e"\n[sources]\nproxy = "proxy:3128"\n', "sources.proxy", "not a URL", 4),
    ('[environment]\npath = "e"\n[bench]\nbudget_s = "60"\n', "bench.budget_s", "must be a number, not the text '60'", 4),
    ('[environment]\npath = "e"\n[bench]\nbudget_s = 0\n', "bench.budget_s", "must be within 1..3600", 4),
    ('[environment]\npath = "e"\n[bench]\ndtypes = ["fp8"]\n', "bench.dtypes[0]", "is 'fp8'; it must be one of", 4),
    ('[environment]\npath = "e"\n[bench]\nsizes = [1024, 1e9]\n', "bench.sizes[1]", "must be a whole number", 4),
    ('[environment]\npath = "e"\n[report]\nformats = ["pdf"]\n', "report.formats[0]", "must be one of", 4),
    ('[environment]\npath = "e"\n[report]\nname = "../x"\n', "report.name", "without folders", 4),
    ('version = 2\n[environment]\npath = "e"\n', "version", "not supported", 1),
    ('environment = "e"\n', "environment", "must be a section", 1),
    ('[torch]\nbackend = "cpu"\n', "environment", "path is required", None),
    ('[environment]\npath = "e"\n[torch]\nbackend = "cpu"\nbackend = "cuda"\n', None, "not valid TOML", 5),
    ('[environment]\npath = "e"\n[verify]\nenabled = yes\n', None, "not valid TOML", 4),
]


@pytest.mark.parametrize("text,key,phrase,line", BAD, ids=[b[1] or b[2] for b in BAD])
def test_malformed_answer_files_name_the_key_and_line(tmp_path, text, key, phrase, line):
    f = tmp_path / "answers.toml"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(BadInput) as info:
        load_answers(f)
    err = info.value
    msg = render(err.message)
    assert err.exit_code == 2
    assert phrase in msg, msg
    if key:
        assert f"'{key}'" in msg, msg
    if line:
        assert f"line {line}" in msg, msg
    assert "answers.toml" in msg
    assert err.hint


def test_existing_env_must_be_a_venv(tmp_path):
    (tmp_path / "e").mkdir()
    with pytest.raises(BadInput, match=r"'environment.existing'.*not a Python virtual environment"):
        parse_answers('[environment]\npath = "e"\nexisting = true\n', base=tmp_path)
    (tmp_path / "e" / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    assert parse_answers('[environment]\npath = "e"\nexisting = true\n', base=tmp_path).existing


def test_bundle_and_index_do_not_mix(tmp_path):
    (tmp_path / "b").mkdir()
    with pytest.raises(BadInput, match=r"'sources.bundle'.*cannot be combined"):
        parse_answers('[environment]\npath = "e"\n[sources]\nbundle = "b"\n'
                      'index_url = "https://download.pytorch.org/whl/cpu"\n', base=tmp_path)


def test_missing_and_non_utf8_files(tmp_path):
    with pytest.raises(BadInput, match="does not exist"):
        load_answers(tmp_path / "none.toml")
    f = tmp_path / "latin1.toml"
    f.write_bytes('[environment]\npath = "caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(BadInput, match="not UTF-8"):
        load_answers(f)


def test_defaults_are_the_wizards():
    a = Answers()
    assert a.backend == "auto" and a.installer == "uv" and a.env_kind == "venv"
