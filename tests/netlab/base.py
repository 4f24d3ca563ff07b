"""The loopback-only threaded server every netlab server is built on.

Every server binds 127.0.0.1 (there is no host parameter: nothing here can listen anywhere
else), runs ``serve_forever`` in one background thread, serves each connection in its own
thread, and on :meth:`LoopbackServer.stop` closes every open connection, joins every thread
it started and closes its sockets, so a test leaves no thread, socket or ResourceWarning behind.
``lifetime_s`` bounds a server that a script starts: it stops by itself when that time is over.
:attr:`LoopbackServer.peak_connections` is the most connections it ever had open at once.
"""
from __future__ import annotations

import base64
import socket
import socketserver
import ssl
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

LOOPBACK = "127.0.0.1"

# Headers never written to a request log: they carry credentials.
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


def assert_loopback(address: tuple[str, int] | tuple[str, int, int, int]) -> None:
    """Refuse any bound or target address that is not 127.0.0.1."""
    if address[0] != LOOPBACK:
        raise AssertionError(f"netlab only uses {LOOPBACK}, not {address[0]!r}")


def clean_headers(headers: Mapping[str, str] | object) -> tuple[tuple[str, str], ...]:
    """The request headers as (name, value) pairs, credentials left out."""
    items = headers.items() if hasattr(headers, "items") else ()  # type: ignore[union-attr]
    return tuple((k, v) for k, v in items if k.lower() not in SECRET_HEADERS)


def basic_credentials(header: str | None) -> tuple[str, str] | None:
    """``"Basic dTpw"`` -> ``("u", "p")``; anything else -> None."""
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, sep, password = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    return (user, password) if sep else None


@dataclass(frozen=True)
class LoggedRequest:
    """One request a server answered (credentials never recorded)."""

    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    status: int
    bytes_sent: int = 0
    user: str | None = None  # the Basic-auth user name that was accepted, if any
    note: str = ""  # what a behaviour did ("dropped after 1024 bytes", "redirect", ...)

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)


@dataclass
class RequestLog:
    """Thread-safe list of :class:`LoggedRequest`."""

    _items: list[LoggedRequest] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, item: LoggedRequest) -> None:
        with self._lock:
            self._items.append(item)

    def all(self) -> list[LoggedRequest]:
        with self._lock:
            return list(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


class _ThreadedLoopbackTCP(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """TCPServer on 127.0.0.1 whose handler threads are joined on close (not daemons)."""

    daemon_threads = False
    block_on_close = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, handler: type[socketserver.BaseRequestHandler], owner: LoopbackServer, port: int) -> None:
        self.owner = owner
        super().__init__((LOOPBACK, port), handler)
        assert_loopback(self.server_address)

    def process_request(self, request, client_address):  # type: ignore[no-untyped-def]
        self.owner._track(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):  # type: ignore[no-untyped-def]
        self.owner._untrack(request)
        super().shutdown_request(request)

    def handle_error(self, request, client_address):  # type: ignore[no-untyped-def]
        # A client that goes away mid-answer (or fails the TLS handshake) is part of the
        # tests, not a server bug: record it instead of printing a traceback.
        self.owner.errors.append(repr(sys.exc_info()[1]))


class LoopbackServer:
    """Base: a threaded TCP server on 127.0.0.1:<ephemeral>, started and stopped explicitly.

    Subclasses give ``handler`` (a ``socketserver.BaseRequestHandler`` subclass whose
    ``self.server.owner`` is this object) and may wrap accepted sockets (TLS) in ``wrap``.
    """

    handler: type[socketserver.BaseRequestHandler]

    def __init__(self, port: int = 0, tls: ssl.SSLContext | None = None, lifetime_s: float | None = None) -> None:
        self.requested_port = port
        self.tls_context = tls
        self.lifetime_s = lifetime_s
        self.log = RequestLog()
        self.errors: list[str] = []
        self.stopping = threading.Event()
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        self._peak = 0
        self._server: _ThreadedLoopbackTCP | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    # --------------------------------------------------------------------------- lifecycle
    def start(self) -> LoopbackServer:
        if self._server is not None:
            return self
        self._server = _ThreadedLoopbackTCP(self.handler, self, self.requested_port)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"netlab-{type(self).__name__}-{self.port}", daemon=True)
        self._thread.start()
        if self.lifetime_s is not None:
            self._timer = threading.Timer(self.lifetime_s, self.stop)
            self._timer.daemon = True
            self._timer.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.cancel()
        self.stopping.set()
        server.shutdown()  # serve_forever returns; no new connections are accepted
        with self._conns_lock:
            open_conns = list(self._conns)
        for conn in open_conns:  # wake handlers blocked on a keep-alive read or a tunnel
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        server.server_close()  # closes the listener and joins every handler thread
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self.on_stop()

    def on_stop(self) -> None:
        """Subclasses release what else they hold (helper sockets)."""

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----------------------------------------------------------------------------- address
    @property
    def address(self) -> tuple[str, int]:
        if self._server is None:
            raise RuntimeError("server is not running")
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    @property
    def port(self) -> int:
        return self.address[1]

    @property
    def scheme(self) -> str:
        return "https" if self.tls_context is not None else "http"

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT`` (``https`` for TLS servers), no trailing slash."""
        return f"{self.scheme}://{LOOPBACK}:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    # --------------------------------------------------------------------------- tracking
    def _track(self, conn: socket.socket) -> None:
        with self._conns_lock:
            self._conns.add(conn)
            self._peak = max(self._peak, len(self._conns))

    def _untrack(self, conn: socket.socket) -> None:
        with self._conns_lock:
            self._conns.discard(conn)

    def _swap(self, old: socket.socket, new: socket.socket) -> None:
        with self._conns_lock:
            self._conns.discard(old)
            self._conns.add(new)

    @property
    def open_connections(self) -> int:
        with self._conns_lock:
            return len(self._conns)

    @property
    def peak_connections(self) -> int:
        """The most connections open at once since the start (or :meth:`reset_peak`)."""
        with self._conns_lock:
            return self._peak

    def reset_peak(self) -> None:
        with self._conns_lock:
            self._peak = len(self._conns)


class TLSHandlerMixin:
    """For StreamRequestHandler subclasses: wrap the accepted socket in the owner's TLS context.

    The handshake runs in the connection's own thread (a client that never speaks cannot hold
    up the accept loop), and the TLS socket is closed here because socketserver only knows the
    raw one.
    """

    request: socket.socket
    server: _ThreadedLoopbackTCP
    timeout: float | None

    def setup(self) -> None:
        ctx = self.server.owner.tls_context
        if ctx is not None:
            raw = self.request
            raw.settimeout(self.timeout)
            tls = ctx.wrap_socket(raw, server_side=True, do_handshake_on_connect=False)
            self.server.owner._swap(raw, tls)  # stop() can now wake a handshake that never ends
            self.request = tls
            try:
                tls.do_handshake()
            except BaseException:
                self.server.owner._untrack(tls)
                tls.close()
                raise
        super().setup()  # type: ignore[misc]

    def finish(self) -> None:
        try:
            super().finish()  # type: ignore[misc]
        finally:
            if isinstance(self.request, ssl.SSLSocket):
                self.server.owner._untrack(self.request)
                try:
                    self.request.close()
                except OSError:
                    pass
