"""HTTP(S) for the sources: one opener per request, with the user's proxy and CA settings,
redirects recorded, and every failure named (a :class:`Failure` with a stable code).

:class:`Net` is what the availability check, the verified routing and the downloader share:
``proxy`` (``http://user:password@host:port``; None: ``HTTPS_PROXY`` / ``HTTP_PROXY`` from
the environment) and ``ca_bundle`` (a PEM file, ``"system"`` for this computer's trust store,
None for Python's default). HTTPS through a proxy uses ``CONNECT``; the proxy's credentials
go only into the ``Proxy-Authorization`` header, never into a sentence (every URL shown passes
:func:`app.core.indexes.display_url`).

Every timeout is a deadline, never a wait per read: ``timeout`` bounds the connection and the
answer's headers, ``deadline_s`` the whole request (an index page, a probe), and every body is
read under the stall rule: a source that sends nothing for :attr:`Net.stall_s` seconds (default
:data:`STALL_S`), or less than :data:`STALL_BYTES` in any such window, has stalled, so the
downloader goes on with the next source within seconds instead of waiting for a byte that
comes every few seconds.

Failures are values: ``kind`` (``dns``, ``refused``, ``timeout``, ``reset``, ``short_read``,
``tls_verify``, ``tls``, ``proxy_auth``, ``proxy_refused``, ``http``, ``redirect_unreachable``,
``wrong_hash``, ``missing``), a sentence fragment (``text``, a :class:`~app.core.text.Msg`
whose code names the failure for the remedy catalogue) and, where the user can act, the fix.
"""
from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.client import HTTPMessage
from typing import IO

from app.core.indexes import STALL_S, display_url, proxy_for
from app.core.secrets import basic_auth, split_credentials
from app.core.text import Text, msg

__all__ = ["PAGE_DEADLINE_S", "PAGE_TIMEOUT_S", "STALL_BYTES", "STALL_S", "Failure", "Net", "NetError", "Response",
           "http_failure", "over_deadline", "set_read_timeout", "short_read", "stalled"]

PAGE_TIMEOUT_S = 5.0  # an index page or a short probe: the connection and the headers; a probe's whole request
PAGE_DEADLINE_S = 120.0  # an index page, whole (torch's is a few MB: a slow link needs a minute)
STALL_BYTES = 64 * 1024  # 6.4 KB/s: torch (~200 MB) would take nine hours; a CUDA build days
USER_AGENT = "torch-setup-assistant"


@dataclass(frozen=True)
class Failure:
    """Why a request (or a file) failed: ``kind``, the sentence fragment, the fix if any."""

    kind: str
    text: Text
    status: int | None = None
    fix: Text = ""

    @property
    def code(self) -> str:
        return self.text.code if not isinstance(self.text, str) else f"sources.{self.kind}"


class NetError(Exception):
    """A request failed; ``failure`` says how."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(str(failure.text))
        self.failure = failure


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
        return Failure("http", msg("sources.err_403", "answers 403 Forbidden for {url}", url=shown), status)
    if status == 404:
        return Failure("http", msg("sources.err_404", "answers 404 Not Found for {url}", url=shown), status)
    if status == 407:
        return Failure("proxy_auth", msg("sources.err_proxy_auth", "the proxy asks for a user name and password "
                                         "(407 Proxy Authentication Required)"), status, proxy_auth_fix())
    return Failure("http", msg("sources.err_http", "answers HTTP {status} {reason} for {url}", status=status,
                               reason=reason, url=shown), status)


def stalled(host: str, got: int, seconds: float) -> Failure:
    return Failure("timeout", msg("sources.err_stalled", "{host} stalled: it sent {got} bytes in {seconds:g} s",
                                  host=host, got=got, seconds=round(seconds, 1)))


def over_deadline(host: str, seconds: float) -> Failure:
    return Failure("timeout", msg("sources.err_deadline", "{host} did not send the whole answer within {seconds:g} s",
                                  host=host, seconds=round(seconds, 1)))


def set_read_timeout(raw: object, seconds: float) -> None:
    """The socket under an ``http.client`` answer waits at most ``seconds`` for its next bytes
    (what urllib set when it connected applies to every read otherwise)."""
    sock = getattr(getattr(getattr(raw, "fp", None), "raw", None), "_sock", None)
    if sock is not None:
        try:
            sock.settimeout(max(0.01, seconds))
        except OSError:
            pass


def short_read(got: int, expected: int) -> Failure:
    return Failure("short_read", msg("sources.err_short_read", "closed the connection after {got} of {expected} "
                                     "bytes", got=got, expected=expected))


_HOST_AUTH: dict[str, str] = {}  # scheme://host:port -> the Authorization header the user's URL gave for it
_HOST_AUTH_LOCK = threading.Lock()


def _authorization(url: str) -> tuple[str, str | None]:
    """``url`` without user information, and the Basic auth for its server: the credentials of this
    URL, else those an earlier URL of the same server carried (an index's files live on its host,
    linked without credentials, as pip and uv treat them)."""
    bare, user, password = split_credentials(url)
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


@dataclass
class Response:
    """An answer being read: ``status`` (200 / 206), headers, the final URL and the redirects.

    :meth:`read` returns what has arrived (one read at most), under the request's deadline and the
    stall rule (see the module's text); a failure while reading is a :class:`NetError` too."""

    status: int
    headers: Mapping[str, str]
    url: str
    redirects: list[str] = field(default_factory=list)
    _raw: http.client.HTTPResponse | None = None
    _net: Net | None = None
    _deadline: tuple[float, float] | None = None  # (time.monotonic() by which the whole answer is in, its seconds)
    _window: tuple[float, int] | None = None  # (start of the stall window, bytes in it)

    @property
    def length(self) -> int | None:
        value = self.headers.get("Content-Length")
        return int(value) if value and value.isdigit() else None

    def read(self, n: int = 1 << 20) -> bytes:
        assert self._raw is not None and self._net is not None
        net, now = self._net, time.monotonic()
        began, got = self._window or (now, 0)
        if now - began >= net.stall_s:  # a window is over: enough came in it, or the source stalled
            if got < STALL_BYTES:
                raise NetError(stalled(_host_port(self.url), got, now - began))
            began, got = now, 0
        wait = net.stall_s  # nothing at all for that long: stalled (a read that timed out cannot go on)
        if self._deadline is not None:
            if now >= self._deadline[0]:
                raise NetError(over_deadline(_host_port(self.url), self._deadline[1]))
            wait = min(wait, self._deadline[0] - now)
        set_read_timeout(self._raw, wait)
        try:
            data = self._raw.read1(n)
        except TimeoutError:
            if self._deadline is not None and time.monotonic() >= self._deadline[0]:
                raise NetError(over_deadline(_host_port(self.url), self._deadline[1])) from None
            raise NetError(stalled(_host_port(self.url), 0, wait)) from None
        except (OSError, ValueError, http.client.HTTPException) as exc:  # a reset, a broken chunk
            raise NetError(net.classify(exc, self.url)) from None
        self._window = (began, got + len(data))
        return data


class Net:
    """The user's network settings, and requests made with them."""

    def __init__(self, proxy: str | None = None, ca_bundle: str | None = None, timeout: float = 10.0,
                 stall_s: float = STALL_S) -> None:
        self.proxy = proxy or None
        self.ca_bundle = ca_bundle or None
        self.timeout = timeout  # the connection and the headers of an answer
        self.stall_s = stall_s
        self._ctx: ssl.SSLContext | None = None

    def __repr__(self) -> str:  # never the proxy's credentials
        return f"Net(proxy={display_url(self.proxy) if self.proxy else None!r}, ca_bundle={self.ca_bundle!r})"

    def context(self) -> ssl.SSLContext:
        if self._ctx is None:
            try:
                cafile = self.ca_bundle if self.ca_bundle not in (None, "system") else None
                self._ctx = ssl.create_default_context(cafile=cafile)
            except (OSError, ssl.SSLError) as exc:
                raise NetError(Failure("tls", msg("sources.err_ca_bundle", "the CA bundle {path} cannot be used "
                                                  "({error})", path=str(self.ca_bundle), error=str(exc)),
                                       fix=tls_fix())) from None
        return self._ctx

    def _opener(self, chain: list[str]) -> urllib.request.OpenerDirector:
        handlers: list[urllib.request.BaseHandler] = [urllib.request.HTTPSHandler(context=self.context()),
                                                      _Recorder(chain)]
        if self.proxy:
            handlers.append(urllib.request.ProxyHandler({"http": self.proxy, "https": self.proxy}))
        return urllib.request.build_opener(*handlers)

    @contextmanager
    def get(self, url: str, *, headers: Mapping[str, str] | None = None, timeout: float | None = None,
            method: str = "GET", deadline_s: float | None = None) -> Iterator[Response]:
        """Open ``url``; raises :class:`NetError` naming the failure (an HTTP error status included).
        ``timeout``: the connection and the headers (default :attr:`timeout`); ``deadline_s``: the
        whole request, body included (None: the body has the stall rule only)."""
        started = time.monotonic()
        wait = timeout or self.timeout
        deadline = (started + deadline_s, deadline_s) if deadline_s is not None else None
        chain: list[str] = []
        bare, auth = _authorization(url)  # an authenticated index: Basic auth, never in the URL
        req = urllib.request.Request(bare, method=method, headers={"User-Agent": USER_AGENT, **(headers or {})})
        if auth is not None:  # unredirected: a redirect to another host never gets the credentials
            req.add_unredirected_header("Authorization", auth)
        try:
            raw = self._opener(chain).open(req, timeout=min(wait, deadline_s) if deadline_s is not None else wait)
        except urllib.error.HTTPError as exc:
            exc.close()
            failure = http_failure(exc.code, str(exc.reason), chain[-1] if chain else url)
            if chain and failure.kind != "proxy_auth":  # a proxy says 502 for a target it cannot reach
                failure = Failure("redirect_unreachable", msg(
                    "sources.err_redirect_status", "redirects to {target}, which cannot be reached (HTTP {status} "
                    "{reason})", target=display_url(chain[-1]), status=exc.code, reason=str(exc.reason)), exc.code)
            raise NetError(failure) from None
        except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
            raise NetError(self.classify(exc, url, chain)) from None
        try:
            yield Response(int(raw.status), {k: v for k, v in raw.headers.items()}, raw.geturl(), chain, raw, self,
                           deadline)
        finally:
            raw.close()

    def classify(self, exc: BaseException, url: str, redirects: list[str] | None = None) -> Failure:
        """The failure ``exc`` (raised while talking to ``url``) stands for."""
        reason: object = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        target = redirects[-1] if redirects else url
        via = proxy_for(target, self.proxy)
        found = self._failure_of(reason, target, via)
        if redirects and found.kind in ("dns", "refused", "timeout", "reset", "tls", "tls_verify"):
            return Failure("redirect_unreachable", msg(
                "sources.err_redirect_unreachable", "redirects to {target}, which cannot be reached ({why})",
                target=display_url(target), why=found.text), found.status, found.fix)
        return found

    # long: one branch per kind of network failure, each with its sentence
    def _failure_of(self, reason: object, url: str, via: str | None) -> Failure:
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
