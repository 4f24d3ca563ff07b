"""Can this machine reach a package index or a wheel folder? Quick answers, before installing.

Shared by the install pre-flight (:mod:`app.core.install.checks`) and the bundle builder
(:mod:`app.core.install.bundle`). Reasons come back as :data:`~app.core.base.text.Text` (stable codes,
rendered by the presenter); ``None`` means reachable.

* :func:`check_url`: for http(s) a DNS lookup and a TCP connection (to the proxy, when one
  applies): "offline", DNS failures, a wrong host or port and a firewall show up in a few
  milliseconds, where a full TLS + HTTP request costs ~90 ms. Local paths and ``file://``
  URLs must exist (which is which: :func:`app.core.base.locations.local_path`, so ``C:\\wheels``,
  ``\\\\server\\share`` and ``file:///C:/wheels`` are folders on Windows).
* :func:`probe_index`: a real HEAD request, for the indexes the user or the recommendation
  named (a mistyped path on the right host is caught too). ``user:token@`` in the URL is
  sent as HTTP Basic authentication (a private index answers), and never shown.
"""
from __future__ import annotations

import socket
import urllib.parse
from pathlib import Path

from app.core.base.locations import local_path, url_scheme
from app.core.base.oserrors import os_error_text
from app.core.base.secrets import mask as display_url
from app.core.base.secrets import unencoded_credentials
from app.core.base.text import Text, msg

__all__ = ["NET_TIMEOUT_S", "check_url", "display_url", "host_port", "probe_index", "proxy_problem"]

NET_TIMEOUT_S = 3.0


def _unparsable(url: str) -> Text:
    return msg("preflight.url_unparsable", "{url} is not a valid URL (check the host and the port, a number "
               "from 1 to 65535)", url=display_url(url))


def host_port(url: str) -> tuple[str, int] | Text:
    """``(host, port)`` of an http(s) URL, or why it has none. Never raises: a port out of range
    or a broken IPv6 literal is an answer, not an exception (and the reason never quotes the
    URL's text, which may hold a password)."""
    shown = display_url(url)
    if unencoded_credentials(url):
        return _unencoded(shown)
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return _unparsable(url)
    if parts.scheme not in ("http", "https"):
        return msg("preflight.url_scheme", "{url}: unsupported URL scheme {scheme}", url=shown,
                   scheme=repr(parts.scheme))
    if not parts.hostname:
        return msg("preflight.url_no_host", "{url}: no host name", url=shown)
    if port == 0:
        return _unparsable(url)
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


def proxy_problem(proxy: str) -> Text | None:
    """Why the proxy setting cannot be used (None: it is a usable http(s) proxy URL)."""
    found = host_port(proxy if "://" in proxy else "http://" + proxy)
    return found if not isinstance(found, tuple) else None


def check_url(url: str, *, proxy: str | None = None, timeout: float = NET_TIMEOUT_S) -> Text | None:
    """None when ``url`` (an index or find-links location) is reachable, else why not."""
    local = local_path(url)  # a folder: C:\wh, \\server\share, ./wh, /srv/wh, file:///C:/wh
    if local is not None:
        return None if _exists(local) else msg("preflight.path_missing", "{path} does not exist", path=local)
    found = host_port(url)
    if not isinstance(found, tuple):
        return found
    from app.core.net.client import proxy_for  # start-up: the client loads urllib and ssl

    via = proxy_for(url, proxy)
    if via:
        through = host_port(via if "://" in via else "http://" + via)
        if not isinstance(through, tuple):
            return msg("preflight.proxy_unusable", "the proxy cannot be used: {why}", why=through)
        found = through
    return _connect(found[0], found[1], via is not None, timeout)


def _exists(path: str) -> bool:
    try:
        return Path(path).exists()
    except (OSError, ValueError):  # a name the OS cannot take (a NUL, a name too long)
        return False


def _unencoded(shown: str) -> Text:
    return msg("preflight.url_credentials_unencoded",
               "{url}: the user name or password holds a character that must be percent-encoded in a URL "
               "(/ as %2F, ? as %3F, # as %23, @ as %40)", url=shown)


def _connect(host: str, port: int, via_proxy: bool, timeout: float) -> Text | None:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except socket.gaierror as exc:
        return msg("preflight.dns_failed", "{error} ({host})", host=host, error=os_error_text(exc))
    except OSError as exc:
        what = os_error_text(exc) if (exc.errno is not None or exc.strerror) else (str(exc) or type(exc).__name__)
        if via_proxy:
            return msg("preflight.proxy_connect_failed", "cannot connect to {host}:{port} (proxy): {error}",
                       host=host, port=port, error=what)
        return msg("preflight.connect_failed", "cannot connect to {host}:{port}: {error}",
                   host=host, port=port, error=what)
    return None


def probe_index(url: str, *, proxy: str | None = None, ca_bundle: str | None = None,
                timeout: float = NET_TIMEOUT_S) -> tuple[Text | None, Text | None]:
    """A real HTTP(S) request to an index the user (or the recommendation) named, through the one
    client (:class:`app.core.net.client.Client`: the same proxy, CA bundle or system trust store
    as the downloads and the installer).

    Returns ``(error, warning)``: ``error`` when it cannot be reached at all (DNS, refused,
    TLS: blocking); ``warning`` when it answered with an HTTP error (some mirrors answer 404
    at the index root yet serve every project page, so that does not block).
    Costs ~90 ms (TLS), so the default PyPI index only gets :func:`check_url`.
    """
    if url_scheme(url) not in ("http", "https"):
        return check_url(url, proxy=proxy, timeout=timeout), None
    if unencoded_credentials(url):
        return _unencoded(display_url(url)), None
    from app.core.net.client import Client, NetError  # start-up: urllib and ssl, only for the pre-flight

    # user:token@ in the URL becomes a Basic Authorization header, not sent on to a redirect's target
    try:
        with Client(proxy, ca_bundle, timeout, share_auth=False).get(url.rstrip("/") + "/", method="HEAD"):
            return None, None
    except NetError as err:
        failure = err.failure
    if failure.status in (405, 501):  # HEAD not allowed: the server is there
        return None, None
    if failure.status is not None:
        return None, msg("preflight.http_error", "{url} answered HTTP {code} {reason}", url=display_url(url),
                         code=failure.status, reason=failure.reason)
    return failure.cause or failure.text, None  # the OS's words where an OS error was the cause, as check_url
