"""One small HTTP(S) GET for the compatibility data's freshness check and refresh.

``get(url)`` returns a :class:`Fetched` (status, content type, body) or raises :class:`FetchError`
with a plain reason ("cannot connect to 127.0.0.1:4321: Connection refused", "HTTP 404 Not Found").
``timeout`` is a deadline for the whole request, not for each read: a server that trickles a byte
now and then is given up on when the time is over. It reads at most ``limit`` bytes (an index
page or a data file, never a wheel), follows the
environment's proxy settings as urllib does, takes an optional CA bundle, and never puts a URL's
credentials into a message (:func:`app.core.indexes.display_url`).
"""
from __future__ import annotations

from dataclasses import dataclass

from app.core.indexes import display_url

__all__ = ["FetchError", "Fetched", "get"]

DEFAULT_TIMEOUT_S = 15.0
USER_AGENT = "torch-setup-assistant (compat status/refresh)"


class FetchError(Exception):
    """The URL could not be read; ``status`` is the HTTP status when the server answered."""

    def __init__(self, reason: str, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


@dataclass(frozen=True)
class Fetched:
    url: str
    status: int
    content_type: str
    body: bytes


def get(url: str, *, accept: str = "*/*", timeout: float = DEFAULT_TIMEOUT_S, limit: int = 32 << 20,
        ca_bundle: str | None = None) -> Fetched:
    """GET ``url``; FetchError when it cannot be read (network, HTTP error, too large)."""
    # start-up: urllib.request and ssl cost ~30 ms; only these commands need them
    import ssl
    import urllib.error
    import urllib.parse
    import urllib.request

    shown = display_url(url)
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise FetchError(f"{shown} is not an http(s) URL")
    handlers: list[urllib.request.BaseHandler] = []
    if ca_bundle:
        try:
            handlers.append(urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=ca_bundle)))
        except (OSError, ssl.SSLError) as exc:
            raise FetchError(f"the CA bundle {ca_bundle} cannot be used ({exc})") from None
    import time

    from app.core.sources.net import set_read_timeout

    opener = urllib.request.build_opener(*handlers)
    req = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": USER_AGENT})
    deadline = time.monotonic() + timeout
    try:
        with opener.open(req, timeout=timeout) as resp:
            chunks: list[bytes] = []
            size = 0
            while size <= limit:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise FetchError(f"cannot read {shown}: it did not send the whole answer within {timeout:g} s")
                set_read_timeout(resp, left)  # no read waits past the deadline
                try:
                    chunk = resp.read1(min(1 << 16, limit + 1 - size))  # what arrived (one read at most)
                except TimeoutError:
                    raise FetchError(f"cannot read {shown}: it did not send the whole answer within {timeout:g} s"
                                     ) from None
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            if size > limit:
                raise FetchError(f"{shown} is larger than {limit // (1 << 20)} MB; not read")
            return Fetched(resp.geturl(), resp.status, resp.headers.get("Content-Type", ""), b"".join(chunks))
    except urllib.error.HTTPError as exc:
        exc.close()
        raise FetchError(f"{shown} answered HTTP {exc.code} {exc.reason}", exc.code) from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        text = getattr(reason, "strerror", None) or str(reason)
        raise FetchError(f"cannot read {shown}: {text}") from None
    except (OSError, ValueError) as exc:  # timeouts, resets, malformed URLs
        raise FetchError(f"cannot read {shown}: {exc or type(exc).__name__}") from None
