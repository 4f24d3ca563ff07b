"""Must-show 3 (issues 19 and 27), one test: credentials placed in every input never leave the
process, every file that can hold one is the user's alone (mode 0600), and an index on the
loopback interface that requires HTTP Basic authentication really serves the install.

Real servers on 127.0.0.1 (tests.netlab): package indexes that answer 401 without the right
``Authorization: Basic`` header, and forward proxies that answer 407 without the right
``Proxy-Authorization``. Each input gets its own credential (a password holding ``/``, ``@``,
``:`` or ``%``), so a leak names its source:

* command line: ``--index-url``, ``--default-index-url`` (one index, the one torch comes from),
  ``--extra-index-url``, ``--proxy``;
* environment: ``PIP_INDEX_URL``, ``PIP_EXTRA_INDEX_URL``, ``UV_EXTRA_INDEX_URL``,
  ``HTTPS_PROXY`` / ``HTTP_PROXY``, ``UV_INDEX_PRIVATE_PASSWORD``;
* answer file: ``index_url``, ``mirror``, ``extra_index_urls``, ``proxy``;
* the user's pip configuration (``~/.config/pip/pip.conf``: an ``index-url`` with a token), read
  by an install with pip;
* the lifecycle: ``upgrade`` to the authenticated index (its log, its plan), ``envs list``;
* the wizard's pages (a subprocess, offscreen Qt): the System page's Save and the Done page's
  saved reports, of a session whose recommendation names the authenticated index.

Then every byte the runs produced is searched for every form of every credential (as given,
percent-encoded in either case, the Base64 of ``user:password``): stdout, stderr, the ``--json``
output, every file under the run's ``TORCH_SETUP_HOME`` (its state, config, cache and log
folders) and the report folders (the CLI's and the GUI's: JSON, Markdown, HTML), and the small
files of the new environments (pyvenv.cfg, dist-info). Every file under ``TORCH_SETUP_HOME``
(but the downloaded wheels) and every report must be mode 0600. (The guard keeps an env's own
pip.conf 0600 and edits it only in its block: tests/test_guard.py.)
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
PIP_CONF = ("pcuser", "PipConf:Token/12")  # the user's own pip.conf (index-url)

ALL = [INDEX, EXTRA, PROXY, PIP_ENV, PIP_EXTRA_ENV, UV_EXTRA_ENV, ENV_PROXY, ANSWER_INDEX, ANSWER_EXTRA, ANSWER_PROXY,
       WRONG, PIP_CONF]


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


GUI = """
import json, os, sys
from pathlib import Path
from app.core.base import secrets
secrets.remember_environ(os.environ)  # as the wizard does at start-up
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.core.detection.detect import detect
from app.core.pipeline.session import Session
from app.gui.pages.done import DonePage
from app.gui.pages.system import SystemPage
from app.gui.state import WizardState
from tests.factories import make_install_result, make_recommendation
index, env_dir, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
secrets.remember_url(index)  # typed into the wizard's source field
rec = make_recommendation(index_url=index, command=("uv", "pip", "install", "--index-url", index, "torch"))
state = WizardState(session=Session.resume(system=detect(), recommendation=rec, install=make_install_result(env_dir)))
SystemPage(state).save_report(out / "system.json")
print(json.dumps([str(p) for p in DonePage(state).save_report(out)]))
"""


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

    # 5. the user's own pip.conf names an index with a token: an install with pip plans from it and its
    #    pre-flight checks it (refused: nothing listens on port 9); nothing else of the world's is set
    user = tmp_path / "user"
    (user / ".config" / "pip").mkdir(parents=True)
    (user / ".config" / "pip" / "pip.conf").write_text(
        f"[global]\nindex-url = http://{PIP_CONF[0]}:{quote(PIP_CONF[1], safe='')}@127.0.0.1:9/simple/\n",
        encoding="utf-8")
    plain = {k: v for k, v in env.items() if not k.startswith(("PIP_", "UV_", "HTTP", "http"))}
    r = run(["install", "--env", tmp_path / "env pip", "--installer", "pip", "--packages", "six", "--yes",
             "--no-verify", "--json"], {**plain, "HOME": str(user)})
    outputs["pip.conf stdout"], outputs["pip.conf stderr"] = r.stdout, r.stderr
    assert b"127.0.0.1:9" in r.stdout + r.stderr and b"Traceback" not in r.stderr  # its index was read, and shown

    # 6. the lifecycle: the list, and an upgrade to the authenticated index (it fails: there is no torch 2.99
    #    there; its log stays, with the plan that names the index)
    for name, args in (("list", ["envs", "list", "--json"]),
                       ("upgrade", ["upgrade", "--env", env_dir, "--packages", "torch==2.99.0", "--index-url",
                                    index.whl_url("cpu", auth=True), "--default-index-url",
                                    index.simple_url(auth=True), "--yes", "--json"])):
        r = run(args, env)
        outputs[f"{name} stdout"], outputs[f"{name} stderr"] = r.stdout, r.stderr
        assert b"Traceback" not in r.stderr, r.stderr.decode()[-2000:]
    assert list(home.rglob("upgrade-*.log"))  # the upgrade wrote its log

    # 7. the wizard: the System page's Save and the Done page's reports, offscreen
    gui_out = tmp_path / "gui reports"
    gui_out.mkdir()
    r = subprocess.run([sys.executable, "-c", GUI, index.whl_url("cpu", auth=True), str(env_dir), str(gui_out)],
                       cwd=REPO, capture_output=True, timeout=300, stdin=subprocess.DEVNULL,
                       env={**env, "QT_QPA_PLATFORM": "offscreen"})
    outputs["gui stdout"], outputs["gui stderr"] = r.stdout, r.stderr
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    gui_files = [Path(p) for p in json.loads(r.stdout.decode().splitlines()[-1])] + [gui_out / "system.json"]
    assert {p.suffix for p in gui_files} == {".html", ".md", ".json"}
    assert any(str(index.port).encode() in p.read_bytes() for p in gui_files)  # the index is named, masked

    found = {name: leaks(data) for name, data in outputs.items()}
    found = {k: v for k, v in found.items() if v}
    found |= scan_tree(home)
    found |= scan_tree(reports)
    found |= scan_tree(gui_out)
    for env_path in (env_dir, tmp_path / "env answers"):
        found |= {p: v for p, v in scan_tree(env_path, skip_big=True).items() if "site-packages/torch/" not in p}
    assert not found, found
    logs = list(home.rglob("*.log"))
    assert len(logs) >= 5, logs  # every run wrote its log (three installs, the pip.conf one, the upgrade)
    if os.name != "nt":  # and each file that can hold what was typed is the user's alone (mode 0600)
        downloads = home / "cache" / "downloads"  # the wheels fetched for an install: the index's bytes, nothing typed
        written = [*(p for p in home.rglob("*") if p.is_file() and not p.is_symlink() and downloads not in p.parents),
                   *(p for p in reports.iterdir() if p.is_file()), *gui_files]
        loose = sorted(f"{oct(stat.S_IMODE(p.stat().st_mode))} {p.relative_to(tmp_path)}" for p in written
                       if stat.S_IMODE(p.stat().st_mode) & 0o077)
        assert not loose, loose
