#!/usr/bin/env python3
"""Build and sign the compatibility data for ``torch-setup compat refresh`` (maintainers only).

    python scripts/sign_compat.py keygen --out ~/secure/compat-2027.key
    python scripts/sign_compat.py sign --key ~/secure/compat-2027.key --out dist/compat
    python scripts/sign_compat.py verify dist/compat/compat-data.json

``keygen`` writes an Ed25519 key pair: the private key (PEM, PKCS#8; encrypted when
``--passphrase-env VAR`` names a variable holding the passphrase) and ``<out>.pub``, the public key
to copy into ``resources/compat/keys/``. ``sign`` validates ``resources/compat`` with the app's own
loader, writes ``compat-data.json`` and its detached signature ``compat-data.json.sig`` into
``--out``; publish both side by side (the app fetches ``URL`` and ``URL.sig``). ``verify`` checks a
signed file against the public keys shipped in the app (or ``TORCH_SETUP_COMPAT_KEYS``).

The private key is never in the repository: see docs/compat-decisions.md, "Refresh", for how
the maintainers keep it and how to rotate it. Exit codes: 0 done, 2 bad input (invalid data, bad
key, bad signature).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.base.errors import BadInput  # noqa: E402
from app.core.compat import refresh as compat_refresh  # noqa: E402  (the repository root is put on sys.path first)


def _passphrase(var: str | None) -> bytes | None:
    if not var:
        return None
    value = os.environ.get(var)
    if not value:
        raise BadInput(f"--passphrase-env {var}: the variable is not set")
    return value.encode("utf-8")


def keygen(args: argparse.Namespace) -> int:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    out = Path(args.out).expanduser()
    if out.exists() or Path(str(out) + ".pub").exists():
        raise BadInput(f"{out} (or its .pub) exists; not overwritten")
    key = Ed25519PrivateKey.generate()
    password = _passphrase(args.passphrase_env)
    enc: serialization.KeySerializationEncryption = (serialization.BestAvailableEncryption(password) if password
                                                     else serialization.NoEncryption())
    out.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, enc))
    pub = key.public_key()
    Path(str(out) + ".pub").write_bytes(pub.public_bytes(serialization.Encoding.PEM,
                                                         serialization.PublicFormat.SubjectPublicKeyInfo))
    raw = pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    print(f"private key: {out} (keep it offline; never commit it)")
    print(f"public key:  {out}.pub  -> copy into resources/compat/keys/ (key id {compat_refresh.key_id(raw)})")
    return 0


def sign(args: argparse.Namespace) -> int:
    folder = Path(args.data).expanduser()
    document = compat_refresh.build_document(folder)
    key_pem = Path(args.key).expanduser().read_bytes()
    try:
        signature = compat_refresh.sign(document, key_pem, _passphrase(args.passphrase_env))
    except (ValueError, TypeError) as exc:
        raise BadInput(f"{args.key}: not a usable private key ({exc})") from None
    out = Path(args.out).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    (out / "compat-data.json").write_bytes(document)
    (out / "compat-data.json.sig").write_bytes(signature)
    signer = compat_refresh.verify(document, signature, compat_refresh.load_keys())
    print(f"signed {out / 'compat-data.json'} with key {signer.key_id} (a key the app trusts)")
    return 0


def verify(args: argparse.Namespace) -> int:
    path = Path(args.file).expanduser()
    document = path.read_bytes()
    signature = Path(str(path) + ".sig").read_bytes()
    signer = compat_refresh.verify(document, signature, compat_refresh.load_keys())
    print(f"{path}: signed by key {signer.key_id} ({signer.path})")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="sign_compat.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    k = sub.add_parser("keygen", help="create a new Ed25519 key pair")
    k.add_argument("--out", required=True, help="the private key file to write (its public key: <out>.pub)")
    k.add_argument("--passphrase-env", metavar="VAR", help="encrypt the private key with the passphrase in $VAR")
    k.set_defaults(func=keygen)
    s = sub.add_parser("sign", help="build compat-data.json from resources/compat and sign it")
    s.add_argument("--key", required=True, help="the private key (PEM); never commit it")
    s.add_argument("--passphrase-env", metavar="VAR", help="the key's passphrase is in $VAR")
    s.add_argument("--data", default=str(REPO / "resources" / "compat"), help="the data folder to publish")
    s.add_argument("--out", required=True, help="the folder to write compat-data.json and .sig into")
    s.set_defaults(func=sign)
    v = sub.add_parser("verify", help="check a signed compat-data.json against the app's public keys")
    v.add_argument("file")
    v.set_defaults(func=verify)
    args = p.parse_args(argv)
    try:
        return int(args.func(args))
    except BadInput as err:
        print(f"sign_compat: {err.render()}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"sign_compat: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
