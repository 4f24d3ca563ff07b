"""``torch-setup compat refresh``: newer data signed by the project, served by a real server on
127.0.0.1 (tests/netlab). A correctly signed newer file is installed and used; a bad signature, a
file that fails validation and an unreachable server each leave the bundled data in use, with a
clear message and the documented exit code. The tests sign with a throwaway key pair and point
the app at its public key (TORCH_SETUP_COMPAT_KEYS); the shipped key's private half is not here."""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from app.core.base.errors import BadInput
from app.core.compat import data as compat
from app.core.compat import refresh as compat_refresh
from app.core.compat.data import load_compat
from tests.netlab.clients import clean_env
from tests.netlab.files import FakeRelease, IndexFile

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "resources" / "compat"
BUNDLED = load_compat(bundled=True)
REPORT = {"os": {"family": "linux", "glibc": "2.39"}, "arch": "x86_64", "python": {"version": "3.12.4"}, "gpus": []}


def _keypair(folder: Path, name: str) -> tuple[bytes, Path]:
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    pub = folder / f"{name}.pub"
    pub.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo))
    return pem, pub


def _data_folder(tmp_path: Path, version: str, date: str, *, break_it: bool = False) -> Path:
    folder = tmp_path / f"data-{version}"
    shutil.copytree(SRC, folder)
    rel = folder / "releases.toml"
    text = rel.read_text(encoding="utf-8")
    text = text.replace(f'version = "{BUNDLED.version}"', f'version = "{version}"', 1)
    text = text.replace(f'date = "{BUNDLED.date}"', f'date = "{date}"', 1)
    rel.write_text(text, encoding="utf-8")
    return folder


def _document(folder: Path, *, break_it: bool = False) -> bytes:
    doc = compat_refresh.build_document(folder, built="2099-01-01T00:00:00+00:00")
    if break_it:  # signed, but a row the loader refuses: a compute capability that is not one
        obj = json.loads(doc)
        obj["files"]["releases.toml"] = obj["files"]["releases.toml"].replace('"7.5", "8.0"', '"7.x", "8.0"', 1)
        doc = json.dumps(obj, sort_keys=True, indent=1).encode("utf-8")
    return doc


def _serve(index_server, folder: Path, document: bytes, signature: bytes, fake=()) -> str:
    files = []
    for name, body in (("compat-data.json", document), ("compat-data.json.sig", signature)):
        path = folder / name
        path.write_bytes(body)
        files.append(IndexFile(filename=name, project="compat-data", version="1",
                               sha256=hashlib.sha256(body).hexdigest(), size=len(body), path=path))
    server = index_server(files=files, fake=fake)
    return server.file_url("compat-data.json")


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A fresh per-user home, a throwaway signing key the app trusts, and one it does not."""
    home = tmp_path / "home"
    trusted, trusted_pub = _keypair(tmp_path, "trusted")
    stranger, _ = _keypair(tmp_path, "stranger")
    monkeypatch.setenv("TORCH_SETUP_HOME", str(home))
    monkeypatch.setenv(compat_refresh.KEYS_ENV, str(trusted_pub))
    monkeypatch.delenv("TORCH_SETUP_COMPAT", raising=False)
    compat.clear_cache()
    yield {"home": home, "trusted": trusted, "stranger": stranger, "pub": trusted_pub, "tmp": tmp_path}
    compat.clear_cache()


def _cli(site, *args: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    env = clean_env(TORCH_SETUP_HOME=str(site["home"]), **{compat_refresh.KEYS_ENV: str(site["pub"])})
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, encoding="utf-8", timeout=timeout,
                          cwd=REPO, env=env)


def _recommend_version(site, tmp_path: Path) -> str:
    report = tmp_path / "report.json"
    report.write_text(json.dumps(REPORT), encoding="utf-8")
    done = _cli(site, "recommend", "--from-report", str(report), "--json")
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["compat_data_version"])


def test_a_correctly_signed_newer_file_is_installed_and_used(index_server, site):
    folder = _data_folder(site["tmp"], "2099.01.01", "2099-01-01")
    doc = _document(folder)
    url = _serve(index_server, site["tmp"], doc, compat_refresh.sign(doc, site["trusted"]),
                 fake=[FakeRelease("torch", "2.15.0", ("cpu",))])
    done = _cli(site, "compat", "refresh", "--url", url)
    assert done.returncode == 0, done.stderr
    assert "Updated: compatibility data 2099.01.01 (2099-01-01) verified" in done.stdout
    data = load_compat()
    assert (data.version, data.origin) == ("2099.01.01", "downloaded")
    assert load_compat(bundled=True).version == BUNDLED.version  # the fallback is still there
    assert _recommend_version(site, site["tmp"]) == "2099.01.01"
    status = _cli(site, "compat", "status", "--index-url", url.rsplit("/files/", 1)[0] + "/simple")
    assert "downloaded and verified; the bundled" in status.stdout
    # asked again: nothing newer, nothing changed, exit 0
    again = _cli(site, "compat", "refresh", "--url", url, "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["outcome"] == "current"
    # the copy on disk is checked against what was verified: tampered with, it is not used
    stored = compat.user_folder() / compat.DOCUMENT
    stored.write_bytes(stored.read_bytes().replace(b"2099.01.01", b"2099.01.02"))
    compat.clear_cache()
    assert load_compat().origin == "bundled"
    removed = _cli(site, "compat", "refresh", "--remove")
    assert removed.returncode == 0 and not compat.user_folder().exists()


def _refused(site, done: subprocess.CompletedProcess[str], code: int, *phrases: str) -> None:
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    for phrase in phrases:
        assert phrase in done.stderr, done.stderr
    compat.clear_cache()
    data = load_compat()
    assert (data.version, data.origin) == (BUNDLED.version, "bundled")
    assert not compat.user_folder().exists()
    assert _recommend_version(site, site["tmp"]) == BUNDLED.version


def test_a_bad_signature_changes_nothing(index_server, site):
    folder = _data_folder(site["tmp"], "2099.01.01", "2099-01-01")
    doc = _document(folder)
    url = _serve(index_server, site["tmp"], doc, compat_refresh.sign(doc, site["stranger"]))
    _refused(site, _cli(site, "compat", "refresh", "--url", url), 2,
             "does not verify with the project's key", "nothing was changed")


def test_a_signature_over_other_bytes_changes_nothing(index_server, site):
    folder = _data_folder(site["tmp"], "2099.01.01", "2099-01-01")
    doc = _document(folder)
    sig = compat_refresh.sign(doc + b" ", site["trusted"])  # the right key, the wrong bytes
    url = _serve(index_server, site["tmp"], doc, sig)
    _refused(site, _cli(site, "compat", "refresh", "--url", url), 2, "does not verify")


def test_a_file_that_fails_validation_changes_nothing(index_server, site):
    folder = _data_folder(site["tmp"], "2099.01.01", "2099-01-01")
    doc = _document(folder, break_it=True)
    url = _serve(index_server, site["tmp"], doc, compat_refresh.sign(doc, site["trusted"]))
    _refused(site, _cli(site, "compat", "refresh", "--url", url), 2,
             "signed but fails validation", "'7.x' is not a compute capability", "nothing was changed")


def test_an_unreachable_server_changes_nothing(unreachable, site):
    url = unreachable.refused_url + "compat-data.json"
    _refused(site, _cli(site, "compat", "refresh", "--url", url, timeout=60), 1,
             "Could not fetch the compatibility data", "Nothing was changed")


def test_a_missing_signature_file_changes_nothing(index_server, site):
    folder = _data_folder(site["tmp"], "2099.01.01", "2099-01-01")
    doc = _document(folder)
    (site["tmp"] / "compat-data.json").write_bytes(doc)
    server = index_server(files=[IndexFile("compat-data.json", "compat-data", "1", hashlib.sha256(doc).hexdigest(),
                                           len(doc), site["tmp"] / "compat-data.json")])
    _refused(site, _cli(site, "compat", "refresh", "--url", server.file_url("compat-data.json")), 1,
             "Could not fetch the signature")


def test_no_url_configured_is_bad_input(site):
    assert BUNDLED.refresh_url == ""
    done = _cli(site, "compat", "refresh")
    assert done.returncode == 2 and "No publication URL" in done.stderr


def test_an_older_published_file_is_not_installed(index_server, site):
    folder = _data_folder(site["tmp"], "2020.01.01", "2020-01-01")
    doc = _document(folder)
    url = _serve(index_server, site["tmp"], doc, compat_refresh.sign(doc, site["trusted"]))
    done = _cli(site, "compat", "refresh", "--url", url)
    assert done.returncode == 0 and "Already the newest" in done.stdout
    assert not compat.user_folder().exists()


def test_the_shipped_public_key_is_real_and_its_private_half_is_not_in_the_repository(monkeypatch):
    monkeypatch.delenv(compat_refresh.KEYS_ENV, raising=False)
    keys = compat_refresh.load_keys()
    assert keys and all(len(k.raw) == 32 for k in keys)
    if shutil.which("git") is None:
        pytest.skip("git is not on PATH (the Windows lane has none): the tracked files are unknown")
    tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True, encoding="utf-8", cwd=REPO, timeout=60).stdout
    marker = b"-----BEGIN" + b" PRIVATE KEY-----"  # PKCS#8, as sign_compat.py writes it (not spelled out here)
    for name in tracked.splitlines():
        path = REPO / name
        if path.is_file() and path.stat().st_size < 1 << 20:
            assert marker not in path.read_bytes(), name


def test_verify_rejects_garbage_signatures():
    keys = compat_refresh.load_keys()
    for bad in (b"", b"{}", b'{"algorithm": "ed25519", "signature": "not base64!"}', b"\xff\xfe"):
        with pytest.raises(BadInput):
            compat_refresh.verify(b"{}", bad, keys)


def test_only_ed25519_public_keys_are_trusted(tmp_path):
    """The app reads the shipped PEM keys without cryptography (RFC 8410 SubjectPublicKeyInfo):
    an Ed25519 key is read to its 32 raw bytes; another kind of key, or garbage, is skipped."""
    from cryptography.hazmat.primitives.asymmetric import ec

    from app.core.compat.refresh import load_keys

    good = Ed25519PrivateKey.generate().public_key()
    (tmp_path / "good.pub").write_bytes(good.public_bytes(serialization.Encoding.PEM,
                                                          serialization.PublicFormat.SubjectPublicKeyInfo))
    other = ec.generate_private_key(ec.SECP256R1()).public_key()
    (tmp_path / "ec.pub").write_bytes(other.public_bytes(serialization.Encoding.PEM,
                                                         serialization.PublicFormat.SubjectPublicKeyInfo))
    (tmp_path / "junk.pub").write_bytes(b"-----BEGIN PUBLIC KEY-----\nnot base64!\n-----END PUBLIC KEY-----\n")
    keys = load_keys(sorted(tmp_path.glob("*.pub")))
    assert [k.raw for k in keys] == [good.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)]
    shipped = load_keys()
    assert len(shipped) == 1 and len(shipped[0].raw) == 32  # resources/compat/keys/compat-2026-12.pub
