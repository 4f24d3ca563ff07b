"""A forward proxy on 127.0.0.1: plain HTTP forwarding and CONNECT tunnels, Basic auth, loopback only.

* ``auth=(user, password)``: every request needs ``Proxy-Authorization: Basic ...``; without
  it (or with wrong credentials) the answer is ``407`` with ``Proxy-Authenticate``.
* Targets: only ``127.0.0.1`` (or ``localhost``, which is connected as 127.0.0.1). Any other
  host is refused with ``403`` and never resolved or contacted.
* ``hosts_reached``: the ``host:port`` targets it connected to, in order; ``refused``: the
  ones it would not. ``log`` has one entry per request (credentials left out).
"""
from __future__ import annotations

import selectors
import socket
import socketserver
import threading
from urllib.parse import quote, urlsplit

from tests.netlab.base import LOOPBACK, LoggedRequest, LoopbackServer, assert_loopback, basic_credentials

_HOP = {"proxy-authorization", "proxy-connection", "connection", "keep-alive", "te", "trailer", "upgrade"}


class ProxyServer(LoopbackServer):
    def __init__(self, auth: tuple[str, str] | None = None, port: int = 0) -> None:
        super().__init__(port=port)
        self.auth = auth
        self.hosts_reached: list[str] = []
        self.refused: list[str] = []
        self._lock = threading.Lock()

    def url(self, *, auth: bool = False) -> str:
        """``http://127.0.0.1:PORT``; ``auth=True`` puts ``user:password@`` into it."""
        if auth and self.auth:
            user, password = self.auth
            return f"http://{quote(user, safe='')}:{quote(password, safe='')}@{LOOPBACK}:{self.port}"
        return self.origin

    def _reached(self, target: str) -> None:
        with self._lock:
            self.hosts_reached.append(target)

    def _refuse(self, target: str) -> None:
        with self._lock:
            self.refused.append(target)


def _loopback_target(host: str) -> bool:
    return host in (LOOPBACK, "localhost")


class ProxyHandler(socketserver.StreamRequestHandler):
    rbufsize = 0  # unbuffered: nothing of a tunnel's first bytes may sit in a read buffer
    timeout = 60

    # long: the request line, headers, authentication, the loopback guard, then tunnel or forward
    def handle(self) -> None:
        owner: ProxyServer = self.server.owner  # type: ignore[attr-defined]
        line = self.rfile.readline(65537).decode("latin-1").rstrip("\r\n")
        if not line:
            return
        headers: list[tuple[str, str]] = []
        while True:
            raw = self.rfile.readline(65537).decode("latin-1").rstrip("\r\n")
            if not raw:
                break
            name, _, value = raw.partition(":")
            headers.append((name.strip(), value.strip()))
        method, _, rest = line.partition(" ")
        target, _, _version = rest.partition(" ")
        lookup = {k.lower(): v for k, v in headers}
        logged = tuple((k, v) for k, v in headers if k.lower() not in ("authorization", "proxy-authorization"))
        user = None
        if owner.auth is not None:
            creds = basic_credentials(lookup.get("proxy-authorization"))
            if creds != owner.auth:
                self._reply(407, "Proxy Authentication Required",
                            {"Proxy-Authenticate": 'Basic realm="netlab-proxy"'})
                owner.log.add(LoggedRequest(method, target, logged, 407,
                                            note="bad credentials" if creds else "no credentials"))
                return
            user = creds[0]
        if method == "CONNECT":
            host, _, port_text = target.rpartition(":")
            path = ""
        else:
            parts = urlsplit(target)
            if parts.scheme != "http" or not parts.hostname:
                self._reply(400, "Bad Request")
                owner.log.add(LoggedRequest(method, target, logged, 400, user=user, note="not an absolute http URL"))
                return
            host, port_text = parts.hostname, str(parts.port or 80)
            path = parts.path or "/"
            if parts.query:
                path += "?" + parts.query
        host = host.strip("[]")
        if not _loopback_target(host) or not port_text.isdigit():
            owner._refuse(f"{host}:{port_text}")
            self._reply(403, "Forbidden")
            owner.log.add(LoggedRequest(method, target, logged, 403, user=user, note="not a loopback target"))
            return
        try:
            upstream = socket.create_connection((LOOPBACK, int(port_text)), timeout=30)
        except OSError as exc:
            self._reply(502, "Bad Gateway")
            owner.log.add(LoggedRequest(method, target, logged, 502, user=user, note=f"connect failed: {exc}"))
            return
        with upstream:
            assert_loopback(upstream.getpeername())
            owner._reached(f"{LOOPBACK}:{port_text}")
            if method == "CONNECT":
                self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                sent = self._tunnel(upstream, owner)
                owner.log.add(LoggedRequest(method, target, logged, 200, sent, user=user, note="tunnel"))
            else:
                status, sent = self._forward(upstream, method, path, headers, lookup)
                owner.log.add(LoggedRequest(method, target, logged, status, sent, user=user))

    def _reply(self, code: int, reason: str, extra: dict[str, str] | None = None) -> None:
        body = f"{code} {reason}\n".encode()
        head = [f"HTTP/1.1 {code} {reason}", f"Content-Length: {len(body)}", "Connection: close",
                "Content-Type: text/plain"]
        head += [f"{k}: {v}" for k, v in (extra or {}).items()]
        try:
            self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        except OSError:
            pass

    def _tunnel(self, upstream: socket.socket, owner: ProxyServer) -> int:
        client = self.connection
        client.settimeout(None)
        upstream.settimeout(None)
        moved = 0
        with selectors.DefaultSelector() as sel:
            sel.register(client, selectors.EVENT_READ, upstream)
            sel.register(upstream, selectors.EVENT_READ, client)
            while not owner.stopping.is_set():
                for key, _ in sel.select(timeout=0.2):
                    src: socket.socket = key.fileobj  # type: ignore[assignment]
                    dst: socket.socket = key.data
                    try:
                        data = src.recv(256 * 1024)
                    except OSError:
                        data = b""
                    if not data:
                        return moved
                    try:
                        dst.sendall(data)
                    except OSError:
                        return moved
                    if src is upstream:
                        moved += len(data)
        return moved

    def _forward(self, upstream: socket.socket, method: str, path: str, headers: list[tuple[str, str]],
                 lookup: dict[str, str]) -> tuple[int, int]:
        if "chunked" in lookup.get("transfer-encoding", "").lower():
            self._reply(411, "Length Required")
            return 411, 0
        length = int(lookup.get("content-length", "0") or 0)
        body = self.rfile.read(length) if length else b""
        out = [f"{method} {path} HTTP/1.1"]
        out += [f"{k}: {v}" for k, v in headers if k.lower() not in _HOP]
        out.append("Connection: close")
        upstream.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body)
        reader = upstream.makefile("rb")
        try:
            status_line = reader.readline(65537)
            try:
                status = int(status_line.split()[1])
            except (IndexError, ValueError):
                status = 502
            answer = [status_line.rstrip(b"\r\n")]
            while True:
                raw = reader.readline(65537)
                if raw in (b"\r\n", b"\n", b""):
                    break
                if raw.split(b":", 1)[0].strip().lower().decode("latin-1") not in _HOP:
                    answer.append(raw.rstrip(b"\r\n"))
            answer.append(b"Connection: close")
            self.wfile.write(b"\r\n".join(answer) + b"\r\n\r\n")
            sent = 0
            while not self.server.owner.stopping.is_set():  # type: ignore[attr-defined]
                data = reader.read1(256 * 1024)
                if not data:
                    break
                self.wfile.write(data)
                sent += len(data)
            return status, sent
        except OSError:
            return 502, 0
        finally:
            reader.close()


ProxyServer.handler = ProxyHandler
