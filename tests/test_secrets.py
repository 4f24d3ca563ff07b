"""The one secret masker (app.core.base.secrets): properties, the registry, and every exit it guards
(console streams, the runner's log, serial.dumps, session reports, environment snapshots)."""
from __future__ import annotations

import base64
import io
import json
import string
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from app.core.base import secrets
from app.core.base.secrets import MaskingStream, mask, remember, remember_environ, remember_url
from tests.factories import make_install_result


@pytest.fixture(autouse=True)
def _empty_registry():
    secrets.forget_all()
    yield
    secrets.forget_all()


# ----------------------------------------------------------------- generated credentials
# Passwords hold what broke the old masker ("/", "@", ":", "%", "?", "#") and non-ASCII letters;
# "*" is left out (the mask itself), as are spaces and quotes (no URL holds them raw).
_PW_ALPHABET = st.sampled_from([*list(string.ascii_letters + string.digits + "/@:%?#!$&()+,;=._~-"), "ü", "密", "ß"])
passwords = st.text(_PW_ALPHABET, min_size=6, max_size=24).filter(lambda s: s.strip("%") != "")
users = st.text(st.sampled_from(list(string.ascii_lowercase + string.digits + "._-")), min_size=1, max_size=10)
hosts = st.sampled_from(["127.0.0.1", "127.0.0.1:8080", "localhost", "pypi.example.org", "mirror.example.com:3128",
                         "[::1]:8000", "download.pytorch.org"])
paths = st.sampled_from(["", "/", "/simple", "/simple/", "/whl/cu126", "/whl/cpu/torch/", "/pkg@1.0/x"])
# Text around the URL: words, spaces, punctuation a tool or a JSON document puts next to it.
_CLEAN = st.text(st.sampled_from(list(string.ascii_letters + string.digits + " \t\n.,;()[]{}<>\"'=-_|ü")),
                 max_size=60)
# What follows a URL in a line: a separator first (a host glued to a word is no host).
_AFTER = st.tuples(st.sampled_from([" ", "\n", ", ", ")", "\"", "'", ". "]), _CLEAN).map("".join) | st.just("")


@st.composite
def url_with_credentials(draw):
    user, password = draw(users), draw(passwords)
    encoded = draw(st.booleans())
    shown = quote(password, safe="") if encoded else password
    url = f"{draw(st.sampled_from(['http', 'https', 'socks5h']))}://{user}:{shown}@{draw(hosts)}{draw(paths)}"
    return url, user, password, shown


@given(url_with_credentials(), _CLEAN, _AFTER)
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@example(("http://user:tok/en@x@127.0.0.1:8000/simple/", "user", "tok/en@x", "tok/en@x"), "ok ", " is reachable")
@example(("http://user:tok%2Fen%40x@127.0.0.1/simple", "user", "tok/en@x", "tok%2Fen%40x"), "", "")
def test_a_password_in_a_url_never_survives_masking(cred, before, after):
    url, user, password, shown = cred
    assume(shown not in before + after and password not in before + after)
    text = f"{before}{url}{after}"
    out = mask(text)
    assert shown not in out and f"{user}:" + shown not in out
    assert password not in out or password in before + after
    assert mask(out) == out  # idempotent
    assert "***@" in out


@given(url_with_credentials(), _CLEAN, _AFTER)
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
def test_a_remembered_secret_is_masked_in_any_form(cred, before, after):
    url, user, password, _shown = cred
    remember_url(url)
    assume(all(f not in before + after for f in (password, quote(password, safe=""))))
    basic = base64.b64encode(f"{user}:{password}".encode()).decode()
    for form in (password, quote(password, safe=""), quote(password, safe="").lower(), json.dumps(password)[1:-1],
                 f"Authorization: Basic {basic}", f"{user}:{password}"):
        out = mask(f"{before}{form}{after}")
        assert password not in out and quote(password, safe="") not in out
        assert basic not in out
        assert mask(out) == out


# Text with no credential: left byte for byte as it is.
_PLAIN_URLS = st.sampled_from([
    "https://download.pytorch.org/whl/cu126", "https://pypi.org/simple/torch/", "http://127.0.0.1:8000/simple/",
    "file:///opt/wheels/torch-2.13.0+cpu-cp311-cp311-linux_x86_64.whl", "git+https://github.com/org/repo@v1.0",
    "https://github.com/org/repo@v1.2.3#egg=x", "https://h.example/x?page=2&sort=name", "https://[::1]:80/a",
])


@given(st.lists(st.one_of(_CLEAN, _PLAIN_URLS), max_size=8).map(" ".join))
@settings(max_examples=400, deadline=None)
def test_text_without_credentials_is_left_byte_identical(text):
    assert mask(text) == text


@pytest.mark.parametrize("text", [
    "Resolved 23 packages in 1.2s", "Downloading torch (190.2MiB)", " + torch==2.13.0+cpu",
    "Looking in indexes: https://download.pytorch.org/whl/cpu", "pkg @ file:///tmp/x/pkg-1.0-py3-none-any.whl",
    "ERROR: No matching distribution found for torch==9.9", "C:\\Users\\me\\env\\Scripts\\python.exe",
    "export CUDA_VISIBLE_DEVICES=0,1", "serial console on ttyS0", "--hash=sha256:" + "a" * 64,
    "torch==2.13.0 --hash=sha256:0123abcd", "The key is in the ignition", "token bucket of 5",
])
def test_ordinary_lines_are_untouched(text):
    assert mask(text) == text


@pytest.mark.parametrize("text, secret", [
    ("http://user:tok/en@x@127.0.0.1:8000/simple/", "tok/en@x"),
    ("https://u:p@ss@pypi.example.org/simple", "p@ss"),
    ("https://u:a:b:c@h.example/x", "a:b:c"),
    ("https://u:s%40cr%2Ft@h.example/", "s%40cr%2Ft"),
    ("https://__token__@pypi.example.org/simple", "__token__"),
    ("https://h.example/simple?password=hunter22&x=1", "hunter22"),
    ("https://h.example/simple?token=abc123def", "abc123def"),
    ("https://h.example/f.whl?X-Amz-Signature=deadbeef99&X-Amz-Credential=AKIAXX", "deadbeef99"),
    ("https://h.example/f.whl?sig=zzz999&sv=1", "zzz999"),
    ("https://h.example/x?access_token=ya29.tok", "ya29.tok"),
    ("<a href=\"https://h.example/x?a=1&amp;key=k3y_value\">", "k3y_value"),
    ("Authorization: Bearer eyJhbGciOi.JIUzI1", "eyJhbGciOi.JIUzI1"),
    ("proxy-authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
    ('{"Authorization": "token ghp_abcdef123"}', "ghp_abcdef123"),
    ("UV_INDEX_PRIVATE_PASSWORD=s3cr3t-pw", "s3cr3t-pw"),
    ("HTTPS_PROXY=http://prox:pr0x-pw@127.0.0.1:3128", "pr0x-pw"),
    ("socks5h://me:s0cks@127.0.0.1:1080", "s0cks"),
])
def test_named_credential_forms_are_masked(text, secret):
    out = mask(text)
    assert secret not in out, out
    assert mask(out) == out


def test_device_identifiers_are_hidden():
    err = ("Unable to determine the device handle for GPU-8932f937-d72c-4106-c12f-20bd9faed9f6: "
           "Serial Number : 1324020033467, MIG-2a7b8c1d-1234-5678-9abc-def012345678/1/0")
    out = mask(err)
    assert "8932f937" not in out and "1324020033467" not in out and "2a7b8c1d" not in out
    assert "GPU-<uuid>" in out and "<serial>" in out
    assert mask("<serial>1320218012345</serial>") == "<serial><serial></serial>"


def test_registry_ignores_short_values_and_reads_the_environment():
    remember("abc")  # too short: would hide ordinary words everywhere
    assert mask("abcdef") == "abcdef"
    remember_environ({"PIP_INDEX_URL": "https://ci:Zq9-idx@pypi.example.org/simple",
                      "GITHUB_TOKEN": "ghp_0123456789", "PATH": "/usr/bin", "HOME": "/root",
                      "XAUTHORITY": "/run/user/0/xauth_AbCd", "GIT_AUTHOR_NAME": "Ada Lovelace"})
    assert "/run/user/0/xauth_AbCd" not in secrets.known_secrets() and "Ada Lovelace" not in secrets.known_secrets()
    assert {"Zq9-idx", "ghp_0123456789"} <= secrets.known_secrets()
    assert mask("uv: failed for ci with Zq9-idx (ghp_0123456789)") == "uv: failed for ci with *** (***)"
    assert mask("/usr/bin and /root") == "/usr/bin and /root"


def test_split_credentials_and_the_raw_slash_warning():
    assert secrets.split_credentials("http://u:tok%2Fen%40x@127.0.0.1:8/simple/") == (
        "http://127.0.0.1:8/simple/", "u", "tok/en@x")
    assert secrets.split_credentials("https://h/x") == ("https://h/x", None, None)
    assert secrets.unencoded_credentials("http://u:tok/en@x@127.0.0.1:8/simple/")
    assert not secrets.unencoded_credentials("http://u:tok%2Fen%40x@127.0.0.1:8/simple/")
    assert not secrets.unencoded_credentials("https://github.com/org/repo@v1.0")


def test_masking_is_linear_on_hostile_text():
    """No wall-clock limit: 10x the text must cost about 10x (a quadratic one costs 100x), each the
    best of 3 runs so that a busy machine's pauses do not decide; below 0.2 s a ratio is noise."""
    def cost(unit: str, n: int) -> float:
        text = (unit * (n // len(unit) + 1))[:n]
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            mask(text)
            best = min(best, time.perf_counter() - t0)
        return best

    for unit in ("a", "@", "://", "http://a", "?token=", "&", "authorization:", "1" * 8 + "-", "u:p/", "%"):
        small, big = cost(unit, 10_000), cost(unit, 100_000)
        assert big < max(30 * small, 0.2), (unit, small, big)


# ----------------------------------------------------------------- the exits
def test_masking_stream_holds_a_line_until_it_is_whole():
    inner = io.StringIO()
    s = MaskingStream(inner)
    s.write("Torch index : http://user:s3cret")
    s.write("pw@127.0.0.1/simple\nnext")
    assert inner.getvalue() == "Torch index : http://***@127.0.0.1/simple\n"
    s.flush()
    assert inner.getvalue().endswith("next")


def test_cli_console_is_masked(capsys, monkeypatch):
    from app import cli

    monkeypatch.setenv("UV_INDEX_URL", "https://ci:Env-Secret-77@127.0.0.1:9/simple")
    code = cli.main(["recommend", "--from-report", "/nonexistent/http://u:Arg-Secret-88@h.example/x.json"])
    out, err = capsys.readouterr()
    assert code == 2
    assert "Arg-Secret-88" not in out + err and "***" in err
    print("echo Env-Secret-77 from a tool")  # after main(): the registry still knows it, the stream is restored
    assert "Env-Secret-77" in capsys.readouterr().out  # (only main() wraps the console)
    assert mask("echo Env-Secret-77") == "echo ***"


def test_runner_log_is_masked(tmp_path):
    from app.core.proc import runner

    log = tmp_path / "run.log"
    res = runner.run([sys.executable, "-c", "print('fetching https://u:Log-Secret-1@127.0.0.1/simple')",
                      "https://u:Argv-Secret-2@127.0.0.1/x"], log_path=log, timeout=60)
    assert res.ok
    text = log.read_text(encoding="utf-8")
    assert "Log-Secret-1" not in text and "Argv-Secret-2" not in text and text.count("***@") == 3


def test_serial_dumps_and_environment_snapshot_are_masked():
    from app.core.base.serial import dumps
    from app.core.detection.envvars import collect

    env = collect({"HTTPS_PROXY": "http://p:Proxy-Secret-3@127.0.0.1:3128",
                   "PIP_EXTRA_INDEX_URL": "https://h.example/simple?token=Tok-Secret-4",
                   "CUDA_VISIBLE_DEVICES": "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", "MY_TOKEN": "never"})
    assert "MY_TOKEN" not in env
    text = dumps({"env": env, "note": "https://u:Json-Secret-5@h.example/"})
    for s in ("Proxy-Secret-3", "Tok-Secret-4", "8932f937", "Json-Secret-5"):
        assert s not in text
    json.loads(text)  # still JSON


def test_session_reports_are_masked_in_every_format(tmp_path):
    from app.core.base.errors import UserError
    from app.core.detection.system import ProbeRecord, SystemReport
    from app.core.pipeline.report import SessionReport

    remember("Reg-Secret-6|x")
    secret_url = "https://u:Rep|Secret-7@pypi.example.org/simple"
    system = SystemReport(probes=[ProbeRecord("nvidia-smi", "error", "Unable to determine the device handle for "
                                              "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6: Serial Number: 1324020033467")])
    err = UserError(f"Installing torch from {secret_url} failed", hint="token was Reg-Secret-6|x",
                    lines=[f"uv: 401 for {secret_url}", "Authorization: Basic dXNlcjpwYXNz"])
    rep = SessionReport(system=system, install=make_install_result(), error=err, notes=(secret_url,),
                        status="failed", exit_code=1)
    written = rep.save(tmp_path, formats=("json", "md", "html"))
    assert len(written) == 3
    for p in written:
        text = p.read_text(encoding="utf-8")
        for s in ("Rep|Secret-7", "Rep\\|Secret-7", "Reg-Secret-6", "dXNlcjpwYXNz", "8932f937", "1324020033467"):
            assert s not in text, (p.name, s)
    json.loads(Path(written[0]).read_text(encoding="utf-8"))


# ----------------------------------------------------------------- authenticated indexes
def test_the_probe_authenticates_to_a_private_index_and_through_a_proxy(index_server, proxy_server, tiny_wheels,
                                                                        monkeypatch):
    from app.core.base.text import render
    from app.core.net.indexes import check_url, probe_index

    for var in ("no_proxy", "NO_PROXY", "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(var, raising=False)  # (urllib skips a proxy for hosts in no_proxy)
    index = index_server(list(tiny_wheels.glob("*.whl")), auth=("user", "tok/en@x"))
    assert check_url(index.simple_url(auth=True)) is None
    assert probe_index(index.simple_url(auth=True)) == (None, None)
    assert index.log.all()[-1].user == "user"  # the HEAD went with Basic credentials
    err, warn = probe_index(index.simple_url())  # without them: the server is there, but says 401
    assert err is None and "401" in render(warn, "en")
    err, warn = probe_index(index.simple_url().replace("://", "://user:wrong-pw@"))
    assert err is None and "401" in render(warn, "en") and "wrong-pw" not in render(warn, "en")
    proxy = proxy_server(auth=("puser", "p@ss/w:rd"))
    assert probe_index(index.simple_url(auth=True), proxy=proxy.url(auth=True)) == (None, None)
    deadline = time.monotonic() + 5  # the proxy records a request after relaying its answer
    while not proxy.log.all() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proxy.log.all() and proxy.log.all()[-1].user == "puser"
    # a raw "/" in the password: URL parsers read the host from it; say so (masked) instead of a DNS error
    raw = f"http://user:tok/en@x@127.0.0.1:{index.port}/simple/"
    for why in (check_url(raw), probe_index(raw)[0]):
        text = render(why, "en")
        assert "percent-encoded" in text and "tok/en" not in text and "***@" in text
