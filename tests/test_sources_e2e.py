"""Never stuck on the network (issue 12), end to end through the CLI, on 127.0.0.1 only.

1. The PyTorch index unreachable, only a local wheel folder: ``install --env E --find-links DIR
   --yes`` installs torch 2.13.0+cpu with no index at all and says why that version.
2. Broken mirrors (403, a redirect to an unreachable origin, a wrong hash), one that drops the
   torch download half-way, and an HTTPS one behind a proxy that needs a password: the plan
   names each skipped mirror with its reason, the download switches source mid-way, the
   report names the source of every wheel, and the password is in no output, log or report.
3. ``bundle`` with the index unreachable builds the bundle from the folder.

The PyTorch server is replaced by a 127.0.0.1 address (``TORCH_SETUP_TORCH_INDEX``); the child
environment carries none of this machine's pip / uv / proxy settings (tests.netlab.clients).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.env import backends as envs
from tests.netlab import FORBIDDEN, Drop, Redirect, Slow, WrongHash
from tests.netlab.clients import clean_env

REPO = Path(__file__).resolve().parents[1]
PASSWORD = "s3cret-Pr0xy-pw"


def cli(*args: object, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, encoding="utf-8", timeout=timeout, stdin=subprocess.DEVNULL, env=env)


def torch_of(env_dir: Path) -> str:
    out = subprocess.run([str(envs.env_python(env_dir)), "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.slow
def test_install_from_a_folder_when_the_pytorch_index_is_unreachable(tmp_path, torch_wheelhouse, unreachable):
    home = tmp_path / "home"
    env = clean_env(TORCH_SETUP_HOME=str(home), TORCH_SETUP_TORCH_INDEX=unreachable.refused_url.replace("simple", "whl"))
    target = tmp_path / "E"
    r = cli("install", "--env", target, "--find-links", torch_wheelhouse.folder, "--yes", "--no-verify", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Installed torch 2.13.0+cpu" in r.stdout and torch_of(target) == "2.13.0+cpu"
    why = (f"Why torch 2.13.0: torch 2.13.0 (CPU), the newest build available in your folder "
           f"{torch_wheelhouse.folder}; 2.15.0 exists but is not reachable.")
    assert why in r.stderr  # the plan says why that version
    assert "no index is used" in r.stderr
    warning = next(line for line in r.stderr.splitlines() if "cannot be reached" in line)
    assert warning.lstrip().startswith("?") and "Nothing is needed from it" in warning  # a warning, not a refusal
    log = next((home / "logs").glob("install-*.log")).read_text(encoding="utf-8")
    assert "--no-index" in log and "--offline" in log  # the installer ran with no index at all


@pytest.fixture
def broken_mirrors(index_server, proxy_server, torch_wheelhouse):
    """The origin (slow, so a mirror is chosen), the four bad mirrors, and the HTTPS mirror behind
    a proxy that wants a password (every source goes through that proxy)."""
    files = torch_wheelhouse.files
    half = torch_wheelhouse.torch.stat().st_size // 2
    servers = {
        "origin": index_server(files, behaviours={"torch-*": Slow(delay_s=0.3)}),
        "forbidden": index_server(files, behaviours={"torch-*": FORBIDDEN}),
        "redirect": index_server(files, behaviours={"torch-*": Redirect()}),
        "wrong-hash": index_server(files, behaviours={"torch-*": WrongHash("page")}),
        "drop": index_server(files, behaviours={"torch-*": Drop(after=half)}),
        "https": index_server(files, tls=True, behaviours={"torch-*": Slow(delay_s=0.05)}),
    }
    return servers, proxy_server(auth=("lab-user", PASSWORD))


@pytest.mark.slow
def test_broken_mirrors_are_skipped_a_drop_switches_source_and_the_password_stays_secret(
        tmp_path, broken_mirrors, test_ca, torch_wheelhouse):
    servers, proxy = broken_mirrors
    home, reports = tmp_path / "home", tmp_path / "reports"
    order = ("forbidden", "redirect", "wrong-hash", "drop", "https")
    mirrors = [servers[k].whl_url("cpu").replace("/cpu/", "/{variant}/") for k in order]
    answers = tmp_path / "answers.toml"
    answers.write_text(f"""version = 1
[environment]
path = '{tmp_path / 'E'}'
[sources]
mirrors = {json.dumps(mirrors)}
mirror = "{servers['origin'].simple_url()}"
proxy = "{proxy.url(auth=True)}"
ca_bundle = '{test_ca.bundle}'
[verify]
enabled = false
[bench]
enabled = false
[report]
folder = '{reports}'
formats = ["json", "md", "html"]
name = "host"
""", encoding="utf-8")
    env = clean_env(TORCH_SETUP_HOME=str(home), TORCH_SETUP_TORCH_INDEX=servers["origin"].origin + "/whl/")
    r = cli("install", "--config", answers, "--yes", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert torch_of(tmp_path / "E") == "2.13.0+cpu"
    # the plan names each skipped mirror with its reason
    skipped = {k: next((ln for ln in r.stderr.splitlines() if "Skipped" in ln and str(servers[k].port) in ln), "")
               for k in ("forbidden", "redirect", "wrong-hash")}
    assert "answers 403 Forbidden" in skipped["forbidden"]
    assert "redirects to" in skipped["redirect"] and "cannot be reached" in skipped["redirect"]
    assert "lists another SHA-256" in skipped["wrong-hash"]
    chosen = next(ln for ln in r.stderr.splitlines() if "will come from" in ln)
    assert str(servers["drop"].port) in chosen and "SHA-256 is the PyTorch server's" in chosen
    # the report names the source of every wheel; torch switched source half-way and resumed
    report = json.loads((reports / "host.json").read_text(encoding="utf-8"))
    downloads = {d["filename"]: d for d in report["install"]["downloads"]}
    fetched = {f.split("-")[0].lower() for f in downloads}
    # the env's own pip (seeded when the venv was made) was not part of the install's downloads
    installed = {k: v for k, v in report["install"]["packages"].items()
                 if k in fetched or k not in ("pip", "setuptools", "wheel")}
    assert len(downloads) == len(installed) and all(d["source_id"] for d in downloads.values())
    torch = downloads[torch_wheelhouse.torch.name]
    assert torch["source_id"] == "mirror-5" and torch["earlier"] == ["mirror-4"] and torch["resumed_at"] > 0
    assert str(servers["https"].port) in torch["url"] and torch["url"].startswith("https://")
    assert any(f"127.0.0.1:{servers['https'].port}" == h for h in proxy.hosts_reached)  # through the proxy
    md = (reports / "host.md").read_text(encoding="utf-8")
    assert md.count("Source of ") == len(installed) and "resumed at byte" in md
    assert not any(r.method == "GET" and r.path.startswith("/files/torch-") and r.status == 200
                   for k in ("forbidden", "redirect", "wrong-hash") for r in servers[k].log.all())
    # the password is in no output, no log and no report (any file this run wrote)
    assert PASSWORD not in r.stdout + r.stderr
    written = [p for root in (home, reports, tmp_path / "E") for p in root.rglob("*") if p.is_file()]
    assert any(p.suffix == ".log" for p in written) and len([p for p in written if p.parent == reports]) == 3
    leaks = [str(p) for p in written if PASSWORD.encode() in p.read_bytes()]
    assert not leaks, leaks


@pytest.mark.slow
def test_bundle_is_built_from_the_folder_when_the_index_is_unreachable(tmp_path, torch_wheelhouse, unreachable):
    env = clean_env(TORCH_SETUP_HOME=str(tmp_path / "home"),
                    TORCH_SETUP_TORCH_INDEX=unreachable.refused_url.replace("simple", "whl"))
    out = tmp_path / "bundle"
    r = cli("bundle", "--backend", "cpu", "--torch", "2.13.0", "--find-links", torch_wheelhouse.folder,
            "--out", out, "--json", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    m = json.loads(r.stdout)
    assert sorted(f["name"] for f in m["files"]) == sorted(p.name for p in torch_wheelhouse.files)
    assert m["packages"] == ["torch==2.13.0+cpu"]
    # without --torch: the newest build the folder holds, said so in the manifest's recommendation
    r = cli("bundle", "--backend", "cpu", "--find-links", torch_wheelhouse.folder, "--out", tmp_path / "b2",
            "--json", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    rec = json.loads(r.stdout)["recommendation"]
    assert rec["torch_version"] == "2.13.0" and "2.15.0 exists but is not reachable" in rec["availability"]
