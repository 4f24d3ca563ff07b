"""Issue 27: a timeout is a deadline for the whole request. A server on the loopback interface that
sends its headers at once and then one byte of its body every half second (never idle long enough
for a per-read timeout) is given up on when the deadline is over, with a plain reason; a server
that answers in time is read whole."""
from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from app.core.net.client import Client, NetError

BODY = b'{"schema": 1, "rows": []}' * 8


class _Trickle(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        delay = 0.5 if self.path == "/trickle" else 0.0
        try:
            for i in range(len(BODY)):
                self.wfile.write(BODY[i:i + 1])
                self.wfile.flush()
                if delay:
                    time.sleep(delay)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def test_a_trickling_server_is_given_up_on_at_the_deadline(server):
    t0 = time.monotonic()
    with pytest.raises(NetError) as err:
        Client().fetch(f"{server}/trickle", deadline=2)
    took = time.monotonic() - t0
    assert took < 6, f"{took:.1f} s: the timeout was taken per read, not for the request"  # the body needs ~100 s
    assert "did not send the whole answer within 2 s" in str(err.value)


def test_a_server_that_answers_in_time_is_read_whole(server):
    got = Client().fetch(f"{server}/fast", deadline=5)
    assert got.status == 200 and got.body == BODY


def test_a_tls_failure_is_never_called_permission_denied():
    """ssl.SSLError is an OSError whose errno is the SSL library's number (1, EPERM's number): it
    read "permission denied". A real TLS handshake against a loopback server that speaks no TLS."""
    import socket
    import ssl

    from app.core.base.oserrors import os_error_text

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def answer() -> None:  # a plain-text answer, then wait for the client to give up (no reset)
        conn, _ = srv.accept()
        with conn:
            conn.sendall(b"HTTP/1.0 400 not tls\r\n\r\n" * 20)
            conn.settimeout(10)
            try:
                while conn.recv(4096):
                    pass
            except OSError:
                pass

    t = threading.Thread(target=answer, daemon=True)
    t.start()
    ctx = ssl.create_default_context()
    try:
        with socket.create_connection(srv.getsockname(), timeout=10) as raw, pytest.raises(ssl.SSLError) as err:
            ctx.wrap_socket(raw, server_hostname="localhost")
    finally:
        t.join(15)
        srv.close()
    text = os_error_text(err.value).render("en")
    assert "permission" not in text and "TLS" in text, (err.value.errno, text)
    assert "TLS" in os_error_text(err.value).render("zh_CN")
