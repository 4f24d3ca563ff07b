"""Must-show 3: credentials placed in every input never leave the process, and an index on the
loopback interface that requires HTTP Basic authentication really serves the install.

Real servers on 127.0.0.1 (tests.netlab): package indexes that answer 401 without the right
``Authorization: Basic`` header, and forward proxies that answer 407 without the right
``Proxy-Authorization``. Each input gets its own credential (a password holding ``/``, ``@``,
``:`` or ``%``), so a leak names its source:

* command line: ``--index-url``, ``--default-index-url`` (one index, the one torch comes from),
  ``--extra-index-url``, ``--proxy``;
* environment: ``PIP_INDEX_URL``, ``PIP_EXTRA_INDEX_URL``, ``UV_EXTRA_INDEX_URL``,
  ``HTTPS_PROXY`` / ``HTTP_PROXY``, ``UV_INDEX_PRIVATE_PASSWORD``;
* answer file: ``index_url``, ``mirror``, ``extra_index_urls``, ``proxy``.

Then every byte the runs produced is searched for every form of every credential (as given,
percent-encoded in either case, the Base64 of ``user:password``): stdout, stderr, the ``--json``
output, every file under the run's ``TORCH_SETUP_HOME`` (logs, state) and the report folder
(JSON, Markdown, HTML), and the small files of the new environments (pyvenv.cfg, dist-info).
"""
from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.netlab.clients import clean_env

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

INDEX = ("user", "tok/en@x")  # the index the install uses: --index-url and --default-index-url
EXTRA = ("xuser", "Ex:tra%Secret/1")  # --extra-index-url
PROXY = ("puser", "Pr0xy@Secret/2")  # --proxy
PIP_ENV = ("pipuser", "Pip:Env@Secret/3")  # PIP_INDEX_URL
PIP_EXTRA_ENV = ("pipx", "PipExtra@Secret/4")  # PIP_EXTRA_INDEX_URL
UV_EXTRA_ENV = ("uvx", "UvExtra:Secret/5")  # UV_EXTRA_INDEX_URL
ENV_PROXY = ("penv", "EnvProxy@Secret/6")  # HTTPS_PROXY / HTTP_PROXY
NAMED_PASSWORD = "UvNamed-Password-7"  # UV_INDEX_PRIVATE_PASSWORD
ANSWER_INDEX = ("ans", "Answer/Index@Secret8")  # answer file: index_url + mirror
ANSWER_EXTRA = ("ans2", "Answer:Extra/Secret9")  # answer file: extra_index_urls
ANSWER_PROXY = ("pans", "Answer@Proxy/Secret10")  # answer file: proxy
WRONG = ("user", "Wrong/Token@11")  # a run that fails: its error and log must not show it either

ALL = [INDEX, EXTRA, PROXY, PIP_ENV, PIP_EXTRA_ENV, UV_EXTRA_ENV, ENV_PROXY, ANSWER_INDEX, ANSWER_EXTRA, ANSWER_PROXY,
       WRONG]


def forms(user: str, password: str) -> set[bytes]:
    """Every way a tool may print the password."""
    enc = quote(password, safe="")
    out = {password, enc, enc.lower(), quote(password, safe="/"), quote(password, safe=":@/"),
           base64.b64encode(f"{user}:{password}".encode()).decode(), base64.b64encode(f"{user}:{enc}".encode()).decode()}
    return {s.encode() for s in out}


SECRETS = {f: pw for user, pw in ALL for f in forms(user, pw)} | {NAMED_PASSWORD.encode(): NAMED_PASSWORD}


def leaks(data: bytes) -> list[str]:
    return sorted({pw for form, pw in SECRETS.items() if form in data})


def scan_tree(root: Path, *, skip_big: bool = False) -> dict[str, list[str]]:
    found = {}
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.is_symlink():
            continue
        if skip_big and (p.stat().st_size > 4_000_000 or p.suffix in (".so", ".pyc", ".whl")):
            continue
        hit = leaks(p.read_bytes())
        if hit:
            found[str(p)] = hit
    return found


def run(args, env, timeout=900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], cwd=REPO, capture_output=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env=env)


@pytest.fixture
def world(index_server, proxy_server, tmp_path, local_wheels):
    """The servers, a private TORCH_SETUP_HOME, a fresh uv cache (so the wheels really come
    through the index and the proxy), and the environment variables holding credentials."""
    servers = {name: index_server(auth=cred) for name, cred in
               (("index", INDEX), ("extra", EXTRA), ("pip", PIP_ENV), ("pipx", PIP_EXTRA_ENV),
                ("uvx", UV_EXTRA_ENV), ("answer", ANSWER_INDEX), ("answer_extra", ANSWER_EXTRA))}
    proxies = {name: proxy_server(auth=cred) for name, cred in
               (("cli", PROXY), ("env", ENV_PROXY), ("answer", ANSWER_PROXY))}
    home = tmp_path / "home"
    env = clean_env(
        TORCH_SETUP_HOME=str(home), UV_CACHE_DIR=str(tmp_path / "uv-cache"),
        PIP_INDEX_URL=servers["pip"].simple_url(auth=True), PIP_EXTRA_INDEX_URL=servers["pipx"].simple_url(auth=True),
        UV_EXTRA_INDEX_URL=servers["uvx"].simple_url(auth=True), HTTPS_PROXY=proxies["env"].url(auth=True),
        HTTP_PROXY=proxies["env"].url(auth=True), UV_INDEX_PRIVATE_PASSWORD=NAMED_PASSWORD,
    )
    return servers, proxies, home, env


def _json_of(r: subprocess.CompletedProcess) -> dict:
    return json.loads(r.stdout.decode())


def test_no_credential_leaves_the_process_and_the_authenticated_index_serves_the_install(world, tmp_path):
    servers, proxies, home, env = world
    index = servers["index"]
    outputs: dict[str, bytes] = {}

    # 1. command line + environment: a real torch install through the Basic-auth index and the proxy
    env_dir = tmp_path / "env cli"
    r = run(["install", "--env", env_dir, "--packages", "torch==2.13.0",
             "--index-url", index.whl_url("cpu", auth=True), "--default-index-url", index.simple_url(auth=True),
             "--extra-index-url", servers["extra"].simple_url(auth=True), "--proxy", proxies["cli"].url(auth=True),
             "--yes", "--no-verify", "--json", "--verbose"], env)
    outputs["install stdout"], outputs["install stderr"] = r.stdout, r.stderr
    assert r.returncode == 0, (r.stdout + r.stderr).decode()[-4000:]
    data = _json_of(r)
    assert data["install"]["torch_version"] == "2.13.0+cpu"
    torch_wheel = index.file("torch-").filename
    assert torch_wheel in index.files_served()  # the wheel itself came from the authenticated index
    authed = [q for q in index.log.all() if q.user == INDEX[0]]
    assert authed and any(q.status == 200 for q in authed)
    assert all(q.status == 401 for q in index.log.all() if q.user is None)  # nothing served without it
    assert proxies["cli"].hosts_reached and any(q.user == PROXY[0] for q in proxies["cli"].log.all())
    assert "***@127.0.0.1" in r.stdout.decode()  # the plan (its commands) showed the indexes, masked

    # 2. the same credentials in an answer file, with every report format
    reports = tmp_path / "reports"
    answers = tmp_path / "answers.toml"
    answer = servers["answer"]
    answers.write_text(f"""
[environment]
path = '{tmp_path / 'env answers'}'
[torch]
backend = "cpu"
version = "2.13.0"
[sources]
index_url = "{answer.whl_url('cpu', auth=True)}"
mirror = "{answer.simple_url(auth=True)}"
extra_index_urls = ["{servers['answer_extra'].simple_url(auth=True)}"]
proxy = "{proxies['answer'].url(auth=True)}"
[verify]
enabled = false
[bench]
enabled = false
[report]
folder = '{reports}'
name = "host-1"
formats = ["json", "md", "html"]
""", encoding="utf-8")
    r = run(["install", "--config", answers, "--yes", "--json"], env)
    outputs["answers stdout"], outputs["answers stderr"] = r.stdout, r.stderr
    assert r.returncode == 0, (r.stdout + r.stderr).decode()[-4000:]
    assert any(q.user == ANSWER_INDEX[0] and q.status == 200 for q in answer.log.all())
    assert {p.name for p in reports.iterdir()} >= {"host-1.json", "host-1.md", "host-1.html"}

    # 3. a run that fails: wrong token (401 from uv), the error and its log
    r = run(["install", "--env", tmp_path / "env wrong", "--packages", "torch==2.13.0",
             "--index-url", index.whl_url("cpu").replace("://", f"://{WRONG[0]}:{quote(WRONG[1], safe='')}@"),
             "--default-index-url", index.simple_url().replace("://", f"://{WRONG[0]}:{quote(WRONG[1], safe='')}@"),
             "--yes", "--no-verify", "--json"], env)
    outputs["failed stdout"], outputs["failed stderr"] = r.stdout, r.stderr
    assert r.returncode in (1, 2), (r.stdout + r.stderr).decode()[-3000:]
    error = _json_of(r)
    assert error["message"] and "401" in json.dumps(error)  # the cause shows; the token does not (below)

    # 4. detection shows the environment: masked
    r = run(["detect", "--json"], env)
    outputs["detect stdout"], outputs["detect stderr"] = r.stdout, r.stderr
    assert r.returncode == 0 and "***@" in r.stdout.decode()

    found = {name: leaks(data) for name, data in outputs.items()}
    found = {k: v for k, v in found.items() if v}
    found |= scan_tree(home)
    found |= scan_tree(reports)
    for env_path in (env_dir, tmp_path / "env answers"):
        found |= {p: v for p, v in scan_tree(env_path, skip_big=True).items() if "site-packages/torch/" not in p}
    assert not found, found
    logs = list(home.rglob("*.log"))
    assert len(logs) >= 3, logs  # every run wrote its log, and they were searched
    if os.name != "nt":  # and each file that can hold what was typed is the user's alone (mode 0600)
        written = [*logs, *home.rglob("*.json"), *(p for p in reports.iterdir() if p.is_file())]
        loose = {str(p): oct(stat.S_IMODE(p.stat().st_mode)) for p in written if stat.S_IMODE(p.stat().st_mode) & 0o077}
        assert not loose, loose
