"""A test certificate authority (trustme) and the server/client TLS contexts made from it."""
from __future__ import annotations

import ssl
from pathlib import Path

import trustme


class TestCA:
    """A throwaway CA; :attr:`bundle` is its certificate as a PEM file, for ``--cert``,
    ``SSL_CERT_FILE`` or ``--ca-bundle``. Server certificates are for ``127.0.0.1`` and
    ``localhost``."""

    __test__ = False  # not a pytest test class

    def __init__(self, directory: Path) -> None:
        self.ca = trustme.CA(organization_name="netlab test CA")
        directory.mkdir(parents=True, exist_ok=True)
        self.bundle: Path = directory / "netlab-ca.pem"
        self.ca.cert_pem.write_to_path(str(self.bundle))
        self._leaf = self.ca.issue_cert("127.0.0.1", "localhost")

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._leaf.configure_cert(ctx)
        return ctx

    def client_context(self) -> ssl.SSLContext:
        """A client context that trusts this CA only."""
        return ssl.create_default_context(cafile=str(self.bundle))
