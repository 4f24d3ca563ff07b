"""Newer compatibility data, signed by this project: ``torch-setup compat refresh``.

The project publishes ``compat-data.json`` (``{"format": 1, "version", "date", "built", "files":
{"releases.toml": "...", "drivers.toml": "...", "hardware.toml": "..."}}``) and beside it a
detached signature ``compat-data.json.sig`` (``{"algorithm": "ed25519", "key_id", "signature"}``,
the signature in base64 over the document's exact bytes). :func:`refresh`:

1. fetches both (an unreachable server: :class:`RefreshFailed`, exit 1, nothing changed);
2. verifies the signature against the PUBLIC keys shipped in ``resources/compat/keys/*.pub``
   (PEM, Ed25519; ``TORCH_SETUP_COMPAT_KEYS`` names another key file or folder, for tests and
   for a site's own signer). A bad or unknown signature: BadInput, exit 2, nothing changed;
3. validates the files with the same loader as the bundled data
   (:func:`app.core.compat.data.build_data`). Invalid: BadInput, exit 2, nothing changed;
4. installs it into the per-user data folder (:func:`app.core.compat.data.user_folder`) when it is
   newer than the data in use (else: "already the newest", exit 0). The bundled data stays as
   it is, the fallback: :func:`app.core.compat.data.load_compat` uses the per-user copy only while it
   is newer than the bundled one and its bytes match the digest recorded after verification.

:func:`build_document` and :func:`sign` are what ``scripts/sign_compat.py`` uses (the private
key never leaves the maintainer's machine).
"""
from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from app.core.base.errors import BadInput, UserError
from app.core.base.schema import Record
from app.core.compat import data as compat
from app.core.compat.data import DOCUMENT, FILES, MARKER, CompatData, data_version_key
from app.core.net.indexes import display_url

__all__ = ["KEYS_ENV", "PublicKey", "RefreshFailed", "Refreshed", "build_document", "key_id", "load_keys",
           "refresh", "sign", "verify"]

KEYS_ENV = "TORCH_SETUP_COMPAT_KEYS"
SIGNATURE_SUFFIX = ".sig"
MAX_DOCUMENT = 8 << 20


class RefreshFailed(UserError):
    """The data could not be fetched (exit 1); nothing was changed."""


@dataclass(frozen=True)
class PublicKey:
    key_id: str
    path: str
    raw: bytes  # the 32-byte Ed25519 public key


@dataclass(frozen=True)
class Refreshed(Record):
    """What ``refresh`` did: ``updated`` (installed a newer copy) or ``current`` (nothing newer)."""

    outcome: str  # updated | current
    version: str  # the published version
    date: str
    in_use: str  # the version now in use
    folder: str  # where the per-user copy lives
    key_id: str


# ------------------------------------------------------------------------------ keys

def key_id(raw: bytes) -> str:
    """A public key's short name: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(raw).hexdigest()[:16]


def _key_files() -> list[Path]:
    given = os.environ.get(KEYS_ENV, "").strip()
    where = Path(given) if given else compat.default_folder() / "keys"
    if where.is_file():
        return [where]
    return sorted(where.glob("*.pub")) if where.is_dir() else []


#: the DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410 section 4): then the 32-byte key
_ED25519_SPKI = bytes.fromhex("302a300506032b6570032100")


def _pem_ed25519(text: bytes) -> bytes:
    """The raw 32-byte key of a PEM ``PUBLIC KEY`` that holds an Ed25519 key; ValueError otherwise."""
    lines = text.decode("ascii").strip().splitlines()
    if not lines or lines[0].strip() != "-----BEGIN PUBLIC KEY-----" or lines[-1].strip() != "-----END PUBLIC KEY-----":
        raise ValueError("not a PEM public key")
    der = base64.b64decode("".join(ln.strip() for ln in lines[1:-1]), validate=True)
    if len(der) != len(_ED25519_SPKI) + 32 or not der.startswith(_ED25519_SPKI):
        raise ValueError("not an Ed25519 public key")
    return der[len(_ED25519_SPKI):]


def load_keys(paths: Sequence[Path] | None = None) -> list[PublicKey]:
    """The trusted public keys (shipped, or ``TORCH_SETUP_COMPAT_KEYS``); unreadable files are skipped."""
    out: list[PublicKey] = []
    for p in paths if paths is not None else _key_files():
        try:
            raw = _pem_ed25519(Path(p).read_bytes())
        except (OSError, ValueError):
            continue
        out.append(PublicKey(key_id(raw), str(p), raw))
    return out


def verify(document: bytes, signature: bytes, keys: Sequence[PublicKey]) -> PublicKey:
    """The key that signed ``document``; BadInput when the signature is malformed or no trusted key made it."""
    # start-up: PyNaCl (libsodium) loads only for a refresh
    from nacl.exceptions import BadSignatureError
    from nacl.signing import VerifyKey

    try:
        sig = json.loads(signature.decode("utf-8"))
        raw_sig = base64.b64decode(sig["signature"], validate=True)
        if sig.get("algorithm") != "ed25519" or len(raw_sig) != 64:
            raise ValueError("not an ed25519 signature")
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise BadInput(f"the signature file is not a compat data signature ({exc}); nothing was changed",
                       hint="Ask the publisher for the matching .sig file.") from None
    if not keys:
        raise BadInput("no trusted public key was found (resources/compat/keys); nothing was changed",
                       hint="Reinstall the assistant.")
    wanted = [k for k in keys if k.key_id == sig.get("key_id")] or list(keys)
    for k in wanted:
        try:
            VerifyKey(k.raw).verify(document, raw_sig)
            return k
        except BadSignatureError:
            continue
    raise BadInput("the signature of the downloaded compatibility data does not verify with the project's key; "
                   "the data was refused and nothing was changed",
                   hint="Do not use this file. Check the URL, or try again later.")


# ------------------------------------------------------------------------------ publishing

def build_document(folder: Path, *, built: str | None = None) -> bytes:
    """The publishable document for the data in ``folder`` (validated first: BadInput when invalid)."""
    data = compat.load_compat(folder)
    files = {name: (Path(folder) / name).read_text(encoding="utf-8") for name in FILES}
    doc = {"format": 1, "version": data.version, "date": data.date,
           "built": built or datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
           "files": files}
    return json.dumps(doc, ensure_ascii=False, sort_keys=True, indent=1).encode("utf-8")


def sign(document: bytes, private_key_pem: bytes, password: bytes | None = None) -> bytes:
    """The detached signature file for ``document`` with an Ed25519 private key (PEM, PKCS#8).

    Publishing only (scripts/sign_compat.py, the tests): it needs ``cryptography`` (the ``publish``
    extra), which the app itself does not ship."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = serialization.load_pem_private_key(private_key_pem, password=password)
    if not isinstance(key, Ed25519PrivateKey):
        raise BadInput("the private key is not an Ed25519 key")
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    sig = {"algorithm": "ed25519", "key_id": key_id(raw),
           "signature": base64.b64encode(key.sign(document)).decode("ascii")}
    return (json.dumps(sig, indent=1) + "\n").encode("utf-8")


# ------------------------------------------------------------------------------ refreshing

def _fetch(url: str, what: str, timeout: float, ca_bundle: str | None) -> bytes:
    from app.core.net.client import Client, NetError  # start-up: urllib and ssl, only for a refresh

    try:
        return Client(ca_bundle=ca_bundle).fetch(url, limit=MAX_DOCUMENT, deadline=timeout).body
    except NetError as exc:
        raise RefreshFailed(f"Could not fetch the {what}: {exc}. Nothing was changed; the compatibility data "
                            "in use stays as it is.", hint="Check the network (or the --url) and try again.") from None


def refresh(url: str | None = None, *, data: CompatData | None = None, timeout: float = 30.0,
            ca_bundle: str | None = None, keys: Sequence[PublicKey] | None = None) -> Refreshed:
    """Fetch, verify, validate and install newer published data (see the module docstring)."""
    in_use = data or compat.load_compat()
    bundled = compat.load_compat(bundled=True)
    source = (url or bundled.refresh_url or "").strip()
    if not source:
        raise BadInput("No publication URL for compatibility data is configured; nothing was changed.",
                       hint="Pass --url URL (the compat-data.json the project publishes).")
    if not source.startswith(("https://", "http://")):
        raise BadInput(f"--url {display_url(source)!r} is not an http(s) URL; nothing was changed.")
    document = _fetch(source, "compatibility data", timeout, ca_bundle)
    signature = _fetch(source + SIGNATURE_SUFFIX, "signature", timeout, ca_bundle)
    signer = verify(document, signature, load_keys() if keys is None else keys)
    shown = display_url(source)
    docs = compat.parse_document(document, shown)
    try:
        new = compat.build_data(docs, lambda name: f"{shown} ({name})", str(compat.user_folder()), "downloaded")
    except BadInput as exc:
        raise BadInput(f"The downloaded compatibility data is signed but fails validation, so it was refused and "
                       f"nothing was changed: {exc.message}", hint="Report this to the project.") from None
    folder = compat.user_folder()
    if data_version_key(new.version) <= data_version_key(in_use.version) or \
            data_version_key(new.version) <= data_version_key(bundled.version):
        return Refreshed("current", new.version, new.date, in_use.version, str(folder), signer.key_id)
    _install(folder, document, signature, new, signer)
    compat.clear_cache()
    return Refreshed("updated", new.version, new.date, new.version, str(folder), signer.key_id)


def _install(folder: Path, document: bytes, signature: bytes, new: CompatData, signer: PublicKey) -> None:
    """Replace the per-user copy in one rename: a crash leaves the old copy or the new one, never half."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    stage = folder.parent / (folder.name + ".new")
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir()
    (stage / DOCUMENT).write_bytes(document)
    (stage / (DOCUMENT + SIGNATURE_SUFFIX)).write_bytes(signature)
    marker = {"version": new.version, "date": new.date, "sha256": hashlib.sha256(document).hexdigest(),
              "key_id": signer.key_id,
              "installed": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()}
    (stage / MARKER).write_text(json.dumps(marker, indent=1), encoding="utf-8")
    old = folder.parent / (folder.name + ".old")
    if old.exists():
        shutil.rmtree(old)
    if folder.exists():
        folder.rename(old)
    stage.rename(folder)
    if old.exists():
        shutil.rmtree(old)


def forget() -> bool:
    """Remove the per-user copy (the bundled data is used again); True when there was one."""
    folder = compat.user_folder()
    if not folder.exists():
        return False
    shutil.rmtree(folder)
    compat.clear_cache()
    return True
