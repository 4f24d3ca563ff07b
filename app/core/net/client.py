"""The assistant's one HTTP(S) client: every request it makes goes through :class:`Client`.

A :class:`Client` holds the user's network settings and makes requests with them:

* ``proxy`` (``http://user:password@host:port``; None: ``HTTPS_PROXY`` / ``HTTP_PROXY`` /
  ``NO_PROXY`` from the environment, or the system's settings on Windows and macOS, as
  :func:`proxy_for` says). HTTPS through a proxy uses ``CONNECT``; the proxy's credentials go
  only into the ``Proxy-Authorization`` header, never into a sentence.
* ``ca_bundle``: which certificate authorities are trusted. A PEM file, or ``"system"`` (and
  None, the default) for the operating system's trust store, through ``truststore`` (Windows'
  and macOS' certificate stores, OpenSSL's system paths on Linux, where ``SSL_CERT_FILE`` /
  ``SSL_CERT_DIR`` name them): the store uv reads with ``--system-certs`` (which the assistant
  gives it unless a file is named) and pip by default, so a network that inspects HTTPS with its
  own authority is trusted or refused alike by the pre-flight, the downloader, ``compat status``
  and the installer.
* ``timeout``: seconds the connection and an answer's headers may take. A body is read under the
  stall rule (``stall_s``, :data:`STALL_S`: a source that sends nothing for that long, or less than
  :data:`STALL_BYTES` in any such window, has stalled, so a download goes on with the next source
  within seconds), and a call's ``deadline`` bounds the whole request (a server that trickles a
  byte now and then is given up on when it is over): every timeout is a deadline, never a wait per
  read.

Requests: :meth:`Client.get` opens a streamed answer (:class:`Response`: ``status``, headers,
final URL, the redirects followed; :meth:`Response.read` in chunks); ``byte_range=(start, end)``
asks for part of a file (a resumed download; :attr:`Response.range_start` says whether the
server honoured it). :meth:`Client.fetch` reads a small document whole (at most ``limit``
bytes). ``user:token@`` in a URL is sent as HTTP Basic authentication (also to the same
server's other URLs, as pip and uv do for an index's files, unless ``share_auth=False``), never
on to a redirect's other host, and never shown (every URL in a sentence passes
:func:`~app.core.base.secrets.mask`).

Every failure is a value, raised as :class:`NetError`: its :class:`Failure` has a ``kind``
(``dns``, ``refused``, ``timeout``, ``reset``, ``short_read``, ``tls_verify``, ``tls``,
``proxy_auth``, ``proxy_refused``, ``http``, ``redirect_unreachable``, ``too_large``,
``wrong_hash``, ``missing``), a sentence fragment (``text``, a :class:`~app.core.base.text.Msg`
whose code names the failure for the remedy catalogue), the HTTP ``status`` and ``reason`` when
a server answered, and, where the user can act, the fix.
"""
from __future__ import annotations

import http.client
import os
import socket
import ssl
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from http.client import HTTPMessage
from typing import IO

from app.core.base.oserrors import os_error_text
from app.core.base.secrets import basic_auth, split_credentials
from app.core.base.secrets import mask as display_url
from app.core.base.text import Text, msg

__all__ = ["PAGE_DEADLINE_S", "PAGE_TIMEOUT_S", "STALL_BYTES", "STALL_S", "SYSTEM", "Client", "Document", "Failure",
           "NetError", "Response", "http_failure", "over_deadline", "proxy_for", "set_read_timeout", "short_read",
           "stalled", "trust_context"]

PAGE_TIMEOUT_S = 5.0  # an index page or a short probe: the connection and the headers; a probe's whole request
PAGE_DEADLINE_S = 120.0
#: A body that sends nothing for this long, or less than STALL_BYTES in any such window, has stalled:
#: the downloader moves to the next source, and uv is given it as its read timeout (UV_HTTP_TIMEOUT)
STALL_S = 10.0  # an index page, whole (torch's is a few MB: a slow link needs a minute)
STALL_BYTES = 64 * 1024  # 6.4 KB/s: torch (~200 MB) would take nine hours; a CUDA build days
DOCUMENT_LIMIT = 32 << 20
SYSTEM = "system"  # ca_bundle: the operating system's trust store
USER_AGENT = "torch-setup-assistant"


@dataclass(frozen=True)
class Failure:
    """Why a request (or a file) failed: ``kind``, the sentence fragment, the fix if any."""

    kind: str
    text: Text
    status: int | None = None
    fix: Text = ""
    reason: str = ""  # the server's reason phrase, with ``status``
    cause: Text = ""  # the OS error in words, when one was the cause ("connection refused")

    @property
    def code(self) -> str:
        return self.text.code if not isinstance(self.text, str) else f"sources.{self.kind}"


class NetError(Exception):
    """A request failed; ``failure`` says how."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(str(failure.text))
        self.failure = failure


def proxy_for(url: str, proxy: str | None) -> str | None:
    """The proxy a request to ``url`` goes through: ``proxy``, else the environment's (or none)."""
    if proxy:
        return proxy
    if sys.platform.startswith("linux") and not any(k.lower().endswith("_proxy") for k in os.environ):
        return None
    proxies = urllib.request.getproxies()
    parts = urllib.parse.urlsplit(url)
    if urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxies.get(parts.scheme) or proxies.get("https") or proxies.get("http")


def proxy_auth_fix() -> Text:
    return msg("sources.fix_proxy_auth", "Give the proxy's user name and password in its address "
               "(http://USER:PASSWORD@host:port) with --proxy or HTTPS_PROXY; they are never shown or logged.")


def tls_fix() -> Text:
    return msg("sources.fix_tls_verify", "If your network inspects HTTPS with its own certificate authority (a "
               "company proxy or firewall), pass that authority's certificate file with --ca-bundle FILE, or "
               "--ca-bundle system to trust this computer's certificates.")


def http_failure(status: int, reason: str, url: str) -> Failure:
    shown = display_url(url)
    if status == 403:
        return Failure("http", msg("sources.err_403", "answers 403 Forbidden for {url}", url=shown), status,
                       reason=reason)
    if status == 404:
        return Failure("http", msg("sources.err_404", "answers 404 Not Found for {url}", url=shown), status,
                       reason=reason)
    if status == 407:
        return Failure("proxy_auth", msg("sources.err_proxy_auth", "the proxy asks for a user name and password "
                                         "(407 Proxy Authentication Required)"), status, proxy_auth_fix(), reason)
    return Failure("http", msg("sources.err_http", "answers HTTP {status} {reason} for {url}", status=status,
                               reason=reason, url=shown), status, reason=reason)


def short_read(got: int, expected: int) -> Failure:
    return Failure("short_read", msg("sources.err_short_read", "closed the connection after {got} of {expected} "
                                     "bytes", got=got, expected=expected))


def trust_context(ca_bundle: str | None) -> ssl.SSLContext:
    """The TLS context for ``ca_bundle``: a PEM file, else (:data:`SYSTEM` or None) the operating
    system's trust store. Raises NetError (``tls``) when the file cannot be used."""
    try:
        if not ca_bundle or ca_bundle == SYSTEM:
            import truststore  # start-up: loaded with the first request

            return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        return ssl.create_default_context(cafile=ca_bundle)
    except (OSError, ssl.SSLError) as exc:
        raise NetError(Failure("tls", msg("sources.err_ca_bundle", "the CA bundle {path} cannot be used "
                                          "({error})", path=str(ca_bundle), error=str(exc)), fix=tls_fix())) from None


_HOST_AUTH: dict[str, str] = {}  # scheme://host:port -> the Authorization header the user's URL gave for it
_HOST_AUTH_LOCK = threading.Lock()


def _authorization(url: str, shared: bool = True) -> tuple[str, str | None]:
    """``url`` without user information, and the Basic auth for its server: the credentials of this
    URL, else (``shared``) those an earlier URL of the same server carried (an index's files live on
    its host, linked without credentials, as pip and uv treat them)."""
    bare, user, password = split_credentials(url)
    if not shared:
        return bare, basic_auth(user, password) if user is not None else None
    try:
        parts = urllib.parse.urlsplit(bare)
        server = f"{parts.scheme}://{parts.netloc}".lower()
    except ValueError:
        return bare, None
    with _HOST_AUTH_LOCK:
        if user is not None:
            _HOST_AUTH[server] = basic_auth(user, password)
        return bare, _HOST_AUTH.get(server)


def _host_port(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.hostname}:{port}"


class _Recorder(urllib.request.HTTPRedirectHandler):
    """Follows redirects (as urllib does) and writes down where each one went."""

    def __init__(self, chain: list[str]) -> None:
        self.chain = chain

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg_: str,
                         headers: HTTPMessage, newurl: str) -> urllib.request.Request | None:
        self.chain.append(newurl)
        new = super().redirect_request(req, fp, code, msg_, headers, newurl)
        if new is not None and req.has_header("Range"):  # a resumed download stays a range request
            new.add_unredirected_header("Range", req.get_header("Range") or "")
        return new


def _canonical_header(name: str) -> str:
    """``content-type`` -> ``Content-Type``: HTTP header names are case-insensitive, the lookups here are not."""
    return "-".join(part.capitalize() for part in name.split("-"))


@dataclass
class Response:
    """An answer being read: ``status`` (200 / 206), headers, the final URL and the redirects."""

    status: int
    headers: Mapping[str, str]
    url: str
    redirects: list[str] = field(default_factory=list)
    _raw: http.client.HTTPResponse | None = None
    _client: Client | None = None
    _ends_at: float | None = None  # time.monotonic() of the deadline
    _deadline: float = 0.0
    _window: tuple[float, int] | None = None  # (start of the stall window, bytes in it)
    _read_s: float | None = None  # the request's own wait for each read, when shorter (a downloader's piece)

    @property
    def length(self) -> int | None:
        value = self.headers.get("Content-Length")
        return int(value) if value and value.isdigit() else None

    @property
    def range_start(self) -> int | None:
        """Where the bytes of a honoured range request start (``Content-Range: bytes START-…``);
        None when the server sent the whole file instead."""
        value = self.headers.get("Content-Range", "")
        if self.status != 206 or not value.startswith("bytes "):
            return None
        start = value[6:].split("-", 1)[0]
        return int(start) if start.isdigit() else None

    def read(self, n: int = 1 << 20) -> bytes:
        """What has arrived, up to ``n`` bytes (one read at most; b"" at the end), under the request's
        deadline and the stall rule: a body that sends nothing for :attr:`Client.stall_s` seconds,
        or less than :data:`STALL_BYTES` in any such window, has stalled; a request given a shorter
        ``timeout`` (a downloader's piece) gives up on silence after that. Raises NetError then, and
        when the connection fails."""
        assert self._raw is not None and self._client is not None
        client, now = self._client, time.monotonic()
        began, got = self._window or (now, 0)
        if now - began >= client.stall_s:  # a window is over: enough came in it, or the source stalled
            if got < STALL_BYTES:
                raise NetError(stalled(_host_port(self.url), got, now - began))
            began, got = now, 0
        wait = client.stall_s  # nothing at all for that long: stalled (a read that timed out cannot go on)
        own = self._read_s is not None and self._read_s < wait  # the caller leaves a silent source sooner
        if own and self._read_s is not None:
            wait = self._read_s
        if self._ends_at is not None:
            if now >= self._ends_at:
                raise NetError(over_deadline(_host_port(self.url), self._deadline))
            wait = min(wait, self._ends_at - now)
        set_read_timeout(self._raw, wait)
        try:
            data = self._raw.read1(n)
        except TimeoutError:
            if self._ends_at is not None and time.monotonic() >= self._ends_at:
                raise NetError(over_deadline(_host_port(self.url), self._deadline)) from None
            if own:
                raise NetError(client.classify(TimeoutError(), self.url)) from None
            raise NetError(stalled(_host_port(self.url), 0, wait)) from None
        except (OSError, ValueError, http.client.HTTPException) as exc:  # a reset, a broken chunk
            raise NetError(client.classify(exc, self.url)) from None
        self._window = (began, got + len(data))
        return data


def stalled(host: str, got: int, seconds: float) -> Failure:
    return Failure("timeout", msg("sources.err_stalled", "{host} stalled: it sent {got} bytes in {seconds:g} s",
                                  host=host, got=got, seconds=round(seconds, 1)))


def over_deadline(host: str, seconds: float) -> Failure:
    return Failure("timeout", msg("sources.err_deadline", "{host} did not send the whole answer within {seconds} s",
                                  host=host, seconds=f"{seconds:g}"))


def set_read_timeout(raw: object, seconds: float) -> None:
    """The socket under an ``http.client`` answer waits at most ``seconds`` for its next bytes
    (what urllib set when it connected applies to every read otherwise)."""
    sock = getattr(getattr(getattr(raw, "fp", None), "raw", None), "_sock", None)
    if sock is not None:
        try:
            sock.settimeout(max(0.01, seconds))
        except OSError:
            pass


@dataclass(frozen=True)
class Document:
    """A small answer read whole by :meth:`Client.fetch`."""

    url: str
    status: int
    content_type: str
    body: bytes


class Client:
    """The user's network settings, and requests made with them (see the module docstring)."""

    def __init__(self, proxy: str | None = None, ca_bundle: str | None = None, timeout: float = 10.0, *,
                 share_auth: bool = True, stall_s: float = STALL_S) -> None:
        self.proxy = proxy or None
        self.ca_bundle = ca_bundle or None
        self.timeout = timeout  # the connection and the headers of an answer
        self.stall_s = stall_s  # the body: see Response.read
        self.share_auth = share_auth  # False: only a URL's own user:token@ is sent with it
        self._ctx: ssl.SSLContext | None = None

    def __repr__(self) -> str:  # never the proxy's credentials
        return f"Client(proxy={display_url(self.proxy) if self.proxy else None!r}, ca_bundle={self.ca_bundle!r})"

    def context(self) -> ssl.SSLContext:
        """The TLS context (made once); NetError when the CA bundle cannot be used."""
        if self._ctx is None:
            self._ctx = trust_context(self.ca_bundle)
        return self._ctx

    def _opener(self, chain: list[str]) -> urllib.request.OpenerDirector:
        handlers: list[urllib.request.BaseHandler] = [urllib.request.HTTPSHandler(context=self.context()),
                                                      _Recorder(chain)]
        if self.proxy:
            handlers.append(urllib.request.ProxyHandler({"http": self.proxy, "https": self.proxy}))
        return urllib.request.build_opener(*handlers)

    @contextmanager
    def get(self, url: str, *, headers: Mapping[str, str] | None = None, timeout: float | None = None,
            deadline: float | None = None, byte_range: tuple[int, int | None] | None = None,
            method: str = "GET") -> Iterator[Response]:
        """Open ``url``: ``timeout`` per connect or read (default :attr:`timeout`), ``deadline``
        seconds for the whole request, ``byte_range`` ``(start, end or None)`` for part of the file.
        Raises :class:`NetError` naming the failure (an HTTP error status included)."""
        ends_at = time.monotonic() + deadline if deadline is not None else None
        per_read = min(timeout or self.timeout, deadline) if deadline is not None else (timeout or self.timeout)
        chain: list[str] = []
        bare, auth = _authorization(url, self.share_auth)  # an authenticated index: Basic auth, never in the URL
        sent = {"User-Agent": USER_AGENT, **(headers or {})}
        if byte_range is not None:
            sent["Range"] = f"bytes={byte_range[0]}-{'' if byte_range[1] is None else byte_range[1]}"
        try:
            req = urllib.request.Request(bare, method=method, headers=sent)
            if auth is not None:  # unredirected: a redirect to another host never gets the credentials
                req.add_unredirected_header("Authorization", auth)
            raw = self._opener(chain).open(req, timeout=per_read)
        except urllib.error.HTTPError as exc:
            exc.close()
            raise NetError(self._status_failure(exc.code, str(exc.reason), url, chain)) from None
        except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
            raise NetError(self.classify(exc, url, chain)) from None
        try:
            # header names in their canonical spelling: servers may send "content-type" (PyPI does)
            yield Response(int(raw.status), {_canonical_header(k): v for k, v in raw.headers.items()}, raw.geturl(),
                           chain, raw, self, ends_at, deadline or 0.0, _read_s=timeout)
        finally:
            raw.close()

    def fetch(self, url: str, *, accept: str = "*/*", limit: int = DOCUMENT_LIMIT,
              deadline: float | None = None) -> Document:
        """GET a small document whole (at most ``limit`` bytes, else a ``too_large`` failure)."""
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise NetError(Failure("http", msg("sources.err_not_http", "{url} is not an http(s) URL",
                                               url=display_url(url))))
        with self.get(url, headers={"Accept": accept}, deadline=deadline) as r:
            chunks: list[bytes] = []
            size = 0
            while size <= limit:
                chunk = r.read(min(1 << 16, limit + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            if size > limit:
                raise NetError(Failure("too_large", msg("sources.err_too_large", "{url} is larger than {mb} MB; "
                                                        "not read", url=display_url(url), mb=limit >> 20)))
            return Document(r.url, r.status, r.headers.get("Content-Type", ""), b"".join(chunks))

    def _status_failure(self, status: int, reason: str, url: str, chain: list[str]) -> Failure:
        failure = http_failure(status, reason, chain[-1] if chain else url)
        if chain and failure.kind != "proxy_auth":  # a proxy says 502 for a target it cannot reach
            failure = Failure("redirect_unreachable", msg(
                "sources.err_redirect_status", "redirects to {target}, which cannot be reached (HTTP {status} "
                "{reason})", target=display_url(chain[-1]), status=status, reason=reason), status, reason=reason)
        return failure

    def classify(self, exc: BaseException, url: str, redirects: list[str] | None = None) -> Failure:
        """The failure ``exc`` (raised while talking to ``url``) stands for."""
        if isinstance(exc, NetError):
            return exc.failure
        reason: object = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        if isinstance(reason, NetError):
            return reason.failure
        target = redirects[-1] if redirects else url
        via = proxy_for(target, self.proxy)
        found = _failure_of(reason, target, via)
        if isinstance(reason, OSError) and reason.errno is not None:
            found = replace(found, cause=os_error_text(reason))
        if redirects and found.kind in ("dns", "refused", "timeout", "reset", "tls", "tls_verify"):
            return Failure("redirect_unreachable", msg(
                "sources.err_redirect_unreachable", "redirects to {target}, which cannot be reached ({why})",
                target=display_url(target), why=found.text), found.status, found.fix)
        return found


# long: one branch per kind of network failure, each with its sentence
def _failure_of(reason: object, url: str, via: str | None) -> Failure:
    text = str(reason)
    host = _host_port(via or url)
    if isinstance(reason, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in text:
        return Failure("tls_verify", msg("sources.err_tls_verify", "the certificate of {host} is not trusted "
                                         "(CERTIFICATE_VERIFY_FAILED)", host=_host_port(url)), fix=tls_fix())
    if isinstance(reason, ssl.SSLError):
        return Failure("tls", msg("sources.err_tls", "the secure connection to {host} failed ({error})",
                                  host=_host_port(url), error=text), fix=tls_fix())
    if "407" in text:
        return Failure("proxy_auth", msg("sources.err_proxy_auth", "the proxy asks for a user name and password "
                                         "(407 Proxy Authentication Required)"), 407, proxy_auth_fix())
    if isinstance(reason, socket.gaierror):
        return Failure("dns", msg("sources.err_dns", "the name {host} cannot be resolved", host=host))
    if isinstance(reason, (TimeoutError, socket.timeout)) or "timed out" in text:
        return Failure("timeout", msg("sources.err_timeout", "{host} did not answer in time", host=host))
    if isinstance(reason, ConnectionRefusedError):
        if via:
            return Failure("proxy_refused", msg("sources.err_proxy_refused", "the proxy {host} refuses "
                                                "connections", host=host))
        return Failure("refused", msg("sources.err_refused", "{host} refuses connections", host=host))
    if isinstance(reason, (ConnectionError, http.client.HTTPException)):
        return Failure("reset", msg("sources.err_reset", "the connection to {host} was closed ({error})",
                                    host=host, error=type(reason).__name__))
    return Failure("reset", msg("sources.err_other", "{host} cannot be reached ({error})", host=host,
                                error=text or type(reason).__name__))
