"""Can this machine reach a package index or a wheel folder? Quick answers, before installing.

Shared by the install pre-flight (:mod:`app.core.install.checks`) and the bundle builder
(:mod:`app.core.bundle`). Reasons come back as :data:`~app.core.text.Text` (stable codes,
rendered by the presenter); ``None`` means reachable.

* :func:`check_url`: for http(s) a DNS lookup and a TCP connection (to the proxy, when one
  applies): "offline", DNS failures, a wrong host or port and a firewall show up in a few
  milliseconds, where a full TLS + HTTP request costs ~90 ms. Local paths and ``file://``
  URLs must exist (which is which: :func:`app.core.locations.local_path`, so ``C:\\wheels``,
  ``\\\\server\\share`` and ``file:///C:/wheels`` are folders on Windows).
* :func:`probe_index`: a real HEAD request, for the indexes the user or the recommendation
  named (a mistyped path on the right host is caught too). ``user:token@`` in the URL is
  sent as HTTP Basic authentication (a private index answers), and never shown.
"""
from __future__ import annotations

import os
import socket
import sys
import urllib.parse
from pathlib import Path

from app.core.locations import local_path, url_scheme
from app.core.oserrors import os_error_text
from app.core.secrets import basic_auth, split_credentials, unencoded_credentials
from app.core.secrets import mask as display_url
from app.core.text import Text, msg

__all__ = ["NET_TIMEOUT_S", "check_url", "display_url", "host_port", "probe_index", "proxy_for", "proxy_problem"]

NET_TIMEOUT_S = 3.0


def proxy_for(url: str, proxy: str | None) -> str | None:
    """The proxy a request to ``url`` goes through: ``proxy``, else the environment's (or none)."""
    if proxy:
        return proxy
    if sys.platform.startswith("linux") and not any(k.lower().endswith("_proxy") for k in os.environ):
        return None  # urllib would read the same variables (and costs ~15 ms to import)
    import urllib.request  # start-up: only when a proxy may apply

    proxies = urllib.request.getproxies()
    parts = urllib.parse.urlsplit(url)
    if urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxies.get(parts.scheme) or proxies.get("https") or proxies.get("http")


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
    """A real HTTP(S) request to an index the user (or the recommendation) named.

    Returns ``(error, warning)``: ``error`` when it cannot be reached at all (DNS, refused,
    TLS: blocking); ``warning`` when it answered with an HTTP error (some mirrors answer 404
    at the index root yet serve every project page, so that does not block).
    Costs ~90 ms (TLS), so the default PyPI index only gets :func:`check_url`.
    """
    # start-up: urllib.request and ssl cost ~30 ms; only the pre-flight needs them
    import ssl
    import urllib.error
    import urllib.request

    if url_scheme(url) not in ("http", "https"):
        return check_url(url, proxy=proxy, timeout=timeout), None
    if unencoded_credentials(url):
        return _unencoded(display_url(url)), None
    handlers: list[urllib.request.BaseHandler] = []
    if proxy:
        handlers.append(urllib.request.ProxyHandler({"http": proxy, "https": proxy}))
    if ca_bundle and ca_bundle != "system":
        try:
            handlers.append(urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=ca_bundle)))
        except (OSError, ssl.SSLError) as exc:
            return msg("preflight.ca_bundle_unusable", "the CA bundle {path} cannot be used ({error})",
                       path=ca_bundle, error=str(exc)), None
    opener = urllib.request.build_opener(*handlers)
    # user:token@ in the URL becomes a Basic Authorization header (urllib would take
    # "user:token@host" for the host name); it is not sent on to a redirect's target.
    clean, user, password = split_credentials(url)
    req = urllib.request.Request(clean.rstrip("/") + "/", method="HEAD",
                                 headers={"User-Agent": "torch-setup-assistant"})
    if user is not None:
        req.add_unredirected_header("Authorization", basic_auth(user, password))
    try:
        with opener.open(req, timeout=timeout):
            return None, None
    except urllib.error.HTTPError as exc:
        if exc.code in (405, 501):  # HEAD not allowed: the server is there
            return None, None
        return None, msg("preflight.http_error", "{url} answered HTTP {code} {reason}", url=display_url(url),
                         code=exc.code, reason=str(exc.reason))
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, OSError) and reason.errno is not None:
            return os_error_text(reason), None
        return str(reason), None
    except (OSError, ValueError) as exc:
        return str(exc), None
