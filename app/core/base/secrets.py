"""The one secret masker: nothing that authenticates leaves the process.

:func:`mask` is applied at every point where text leaves: the console (the CLI wraps
``sys.stdout`` / ``sys.stderr`` in a :class:`MaskingStream`), the log files (the runner's log
writer), JSON (:func:`app.core.base.serial.dumps`) and the session reports. It hides

* ``scheme://user:password@host`` user information, also when the password holds ``/``,
  ``@``, ``:``, ``?``, ``#`` or percent-escapes (``http://u:tok/en@x@host`` is read the way a
  person meant it, not the way a URL parser would);
* token-like query values (``?password=``, ``&token=``, ``access_token``, ``key``, ``auth``,
  ``sig``, ``X-Amz-Signature`` ...), also after an HTML-escaped ``&amp;``;
* ``Authorization:`` / ``Proxy-Authorization:`` header values and ``NAME_PASSWORD=value``
  style assignments;
* every secret this process has seen in its inputs (:func:`remember_url`, :func:`remember`),
  in whatever form a tool echoes it: as given, percent-decoded or -encoded (either case of
  hex), HTML- or JSON-escaped, or as the Base64 of ``user:password`` in a Basic header;
* device identifiers that fleets must not collect: GPU / MIG UUIDs and serial numbers.

Masking is idempotent and leaves text without credentials byte-identical. Every pattern is
linear in the length of the text (a scan for ``://`` with bounded look-behind, and regular
expressions without nested or adjacent unbounded repeats), so a hostile 100 KB line costs
milliseconds.
"""
from __future__ import annotations

import io
import json
import os
import re
import threading
import time
from collections.abc import Iterable, Mapping
from typing import TextIO
from urllib.parse import quote, unquote, urlsplit, urlunsplit

__all__ = ["PRIVATE_MODE", "REDACTED", "MaskingStream", "append_private", "basic_auth", "forget_all", "hide_ids",
           "known_secrets", "mask", "mask_data", "open_private", "remember", "remember_environ", "remember_url",
           "split_credentials", "unencoded_credentials", "write_private"]

REDACTED = "***"
# Shorter remembered secrets would hide ordinary words everywhere; they are still hidden
# wherever they stand in a URL (the patterns need no registry).
MIN_REMEMBERED = 4
_SCHEME_MAX = 32
_AT_TRIES = 64


class _Lazy:
    """A regular expression compiled on first use: the masker is set up before the wizard's
    first window, which writes nothing, so its patterns cost nothing until text is masked."""

    __slots__ = ("_args", "_rx")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._rx: re.Pattern[str] | None = None

    @property
    def rx(self) -> re.Pattern[str]:
        if self._rx is None:
            self._rx = re.compile(*self._args)
        return self._rx


# ------------------------------------------------------------------ URL user information
_TOKEN_END = frozenset(" \t\r\n\f\v\"'<>`\\")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
# A host that really follows an ``@``: a dotted name ending in a label that starts with a
# letter, an IPv4 address, a bracketed IPv6 address or localhost, then a port, a path, a
# query, a fragment or the end (punctuation such as ``)`` or ``,`` may follow).
_HOST_RE = _Lazy(
    r"(?:\[[0-9A-Fa-f:.]{2,45}\]|(?:\d{1,3}\.){3}\d{1,3}|localhost|"
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})\.){1,16}[A-Za-z][A-Za-z0-9-]{0,62})"
    r"(?::\d{1,5})?(?=[/?#)\],;.!]|$)", re.IGNORECASE)
# ... or one intranet name ("nexus") with a port, or before a path or the end
_PORTED_HOST_RE = _Lazy(r"[A-Za-z0-9][A-Za-z0-9-]{0,62}(?::\d{1,5}(?=[/?#)\],;!]|$)|(?=[/?#]|$))")
_AUTHORITY_RE = _Lazy(r"(?:[A-Za-z0-9\-._~%!$&'()*+,;=]*|\[[0-9A-Fa-f:.]*\])(?::\d*)?")


def _host_follows(token: str, at: int) -> bool:
    return bool(_HOST_RE.rx.match(token, at + 1) or _PORTED_HOST_RE.rx.match(token, at + 1))


def _userinfo_end(token: str) -> int:
    """Index of the ``@`` that ends the user information in ``token`` (the part after
    ``scheme://``), or -1 when it carries none.

    A URL parser ends the authority at the first ``/``, ``?`` or ``#``; a person (or a tool
    printing a decoded URL) may have a raw one in the password (``u:tok/en@x@host``). So when
    the part before the path holds an ``@`` or a ``:`` (it is more than a plain host name),
    a later ``@`` that a real host name follows ends the user information instead."""
    cut = len(token)
    for stop in "/?#":
        i = token.find(stop)
        if i != -1 and i < cut:
            cut = i
    at = token.rfind("@", 0, cut)
    if at == -1 and _AUTHORITY_RE.rx.fullmatch(token[:cut]) and ":" not in token[:cut]:
        return -1  # a plain host: an "@" further on is in the path ("repo@v1.0")
    later = token.rfind("@")
    for _ in range(_AT_TRIES):  # bounded: a token of 50,000 "@" stays linear
        if later <= cut:
            break
        if _host_follows(token, later):
            return later
        later = token.rfind("@", cut, later)
    return at


def _mask_userinfo(text: str) -> str:
    if "://" not in text:
        return text
    out: list[str] = []
    pos = 0  # everything before pos is already in out
    i = text.find("://")
    while i != -1:
        j = i
        while j > 0 and i - j < _SCHEME_MAX and text[j - 1] in _SCHEME_CHARS:
            j -= 1
        start = i + 3
        end = start
        n = len(text)
        while end < n and text[end] not in _TOKEN_END:
            end += 1
        if j < i:  # a scheme precedes "://"
            token = text[start:end]
            at = _userinfo_end(token)
            if at > 0 and token[:at] != REDACTED:
                out.append(text[pos:start])
                out.append(REDACTED)
                pos = start + at
        i = text.find("://", max(end, start))
    out.append(text[pos:])
    return "".join(out)


# ------------------------------------------------------------------ query values, headers
_QUERY_RE = _Lazy(r"(&amp;|[?&])([A-Za-z0-9_.\-]{1,64})=([^&#\s\"'<>\\]*)")
_SECRET_NAMES = frozenset({"key", "sig", "pwd", "pass", "auth"})
_SECRET_SUFFIXES = ("token", "password", "passwd", "secret", "signature", "credential", "credentials", "apikey",
                    "api_key", "key", "auth", "sig", "pwd")


def _secret_name(name: str) -> bool:
    n = name.lower().replace("-", "_")
    return n in _SECRET_NAMES or n.endswith(_SECRET_SUFFIXES)


def _query_sub(m: re.Match[str]) -> str:
    value = m.group(3)
    if not value or value == REDACTED or not _secret_name(m.group(2)):
        return m.group(0)
    return f"{m.group(1)}{m.group(2)}={REDACTED}"


_HEADER_RE = _Lazy(
    r"\b((?:proxy-)?authorization)([\"']?[ \t]{0,8}[:=][ \t]{0,8}[\"']?)"
    r"(?:(basic|bearer|digest|token|negotiate|ntlm|aws4-hmac-sha256)[ \t]{1,8})?([^\s\"'\\<>,;]+)",
    re.IGNORECASE)
_ASSIGN_RE = _Lazy(
    r"\b([A-Za-z0-9_]{0,64}(?:PASSWORD|PASSWD|TOKEN|SECRET|API_KEY))([ \t]{0,4}=[ \t]{0,4})([^\s\"'\\<>,;&]+)",
    re.IGNORECASE)


def _header_sub(m: re.Match[str]) -> str:
    scheme = f"{m.group(3)} " if m.group(3) else ""
    return f"{m.group(1)}{m.group(2)}{scheme}{REDACTED}"


def _assign_sub(m: re.Match[str]) -> str:
    return f"{m.group(1)}{m.group(2)}{REDACTED}"


# ------------------------------------------------------------------ device identifiers
_UUID_RE = _Lazy(r"\b(GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}(?:/\d{1,6}/\d{1,6})?|"
                 r"\b[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b")
_SERIAL_RE = _Lazy(r"\b(serial(?:[ _-]?(?:number|no\.?|num|#))?)([ \t]{0,8}[:=#>]?[ \t]{0,8})"
                   r"([0-9A-Za-z][0-9A-Za-z-]{3,63})\b", re.IGNORECASE)


def _serial_sub(m: re.Match[str]) -> str:
    value = m.group(3)
    if not any(c.isdigit() for c in value):  # "serial console", "serial port": words, not numbers
        return m.group(0)
    return f"{m.group(1)}{m.group(2)}<serial>"


def hide_ids(text: str) -> str:
    """GPU / MIG UUIDs (``GPU-8932f937-...`` -> ``GPU-<uuid>``) and serial numbers hidden."""
    if "-" in text:
        text = _UUID_RE.rx.sub(lambda m: f"{m.group(1)}-<uuid>" if m.group(1) else "<uuid>", text)
    if "serial" in text.lower():
        text = _SERIAL_RE.rx.sub(_serial_sub, text)
    return text


# ------------------------------------------------------------------ the registry
class _Registry:
    """The secrets this process has been given, each with the forms a tool may print."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._secrets: set[str] = set()
        self._forms: tuple[str, ...] = ()  # longest first

    def add(self, secrets: Iterable[str]) -> None:
        with self._lock:
            new = {s for s in secrets if _worth_remembering(s)} - self._secrets
            if not new:
                return
            self._secrets |= new
            forms: set[str] = set(self._forms)
            for s in new:
                forms |= _forms_of(s)
            self._forms = tuple(sorted((f for f in forms if _worth_remembering(f)), key=len, reverse=True))

    def clear(self) -> None:
        with self._lock:
            self._secrets = set()
            self._forms = ()

    def secrets(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._secrets)

    def hide(self, text: str) -> str:
        for form in self._forms:  # a tuple swapped whole under the lock: safe to read unlocked
            if form in text:
                text = text.replace(form, REDACTED)
        return text


def _worth_remembering(s: str) -> bool:
    return len(s) >= MIN_REMEMBERED and s.strip("*") != "" and s != REDACTED


def _forms_of(secret: str) -> set[str]:
    raw = {secret, unquote(secret)}
    import html  # start-up: only when a secret is remembered

    forms = set(raw)
    for s in raw:
        for safe in ("", "/", ":@/", "!$&'()*+,;=:@/~"):
            enc = quote(s, safe=safe)
            forms |= {enc, re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), enc)}
        forms.add(quote(s, safe="").replace("%20", "+"))
    for s in list(forms):
        forms.add(html.escape(s))
        forms.add(html.escape(s, quote=False))
        forms.add(json.dumps(s)[1:-1])
        forms.add(json.dumps(s, ensure_ascii=False)[1:-1])
    return forms


_REGISTRY = _Registry()


def remember(*secrets: str) -> None:
    """Register secrets (passwords, tokens) so that :func:`mask` hides them in any text."""
    _REGISTRY.add(s for s in secrets if isinstance(s, str))


def known_secrets() -> frozenset[str]:
    """What :func:`remember` was given (tests check every one is hidden)."""
    return _REGISTRY.secrets()


def forget_all() -> None:
    """Empty the registry (for tests)."""
    _REGISTRY.clear()


def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """``(url without user information, user, password)``, user and password percent-decoded.

    ``http://u:tok%2Fen@host/simple`` -> ``("http://host/simple", "u", "tok/en")``; a URL
    without user information comes back unchanged with ``(None, None)``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url, None, None
    if "@" not in parts.netloc:
        return url, None, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, colon, password = userinfo.partition(":")
    clean = urlunsplit((parts.scheme, hostport, parts.path, parts.query, parts.fragment))
    return clean, unquote(user), unquote(password) if colon else None


def unencoded_credentials(url: str) -> bool:
    """True when ``url``'s user information holds a raw ``/``, ``?`` or ``#`` (``u:tok/en@host``):
    URL parsers (pip, uv, urllib) then read the password as the host. It must be percent-encoded."""
    i = url.find("://")
    if i == -1:
        return False
    token = url[i + 3:]
    at = _userinfo_end(token)
    return at > 0 and any(c in token[:at] for c in "/?#")


def basic_auth(user: str, password: str | None) -> str:
    """The ``Authorization`` header value for HTTP Basic authentication."""
    import base64  # start-up: only an authenticated index needs it

    raw = f"{user}:{password or ''}".encode()
    return "Basic " + base64.b64encode(raw).decode("ascii")


def _url_secrets(url: str) -> list[str]:
    import base64  # start-up: only when a URL is remembered

    found: list[str] = []
    i = url.find("://")
    if i != -1:
        token = url[i + 3:]
        at = _userinfo_end(token)
        if at > 0:
            userinfo = token[:at]
            user, colon, password = userinfo.partition(":")
            if colon:
                found += [password, userinfo]
                for u, p in ((user, password), (unquote(user), unquote(password))):
                    found.append(base64.b64encode(f"{u}:{p}".encode()).decode("ascii"))
            else:  # a token given as the user name (https://TOKEN@host)
                found.append(user)
    for m in _QUERY_RE.rx.finditer(url):
        if _secret_name(m.group(2)) and m.group(3):
            found.append(m.group(3))
    return found


def remember_url(url: str | None) -> None:
    """Register the credentials in ``url`` (user information, token query values)."""
    if url and isinstance(url, str):
        remember(*_url_secrets(url))


_SECRET_VARS = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|CREDENTIAL|AUTH(?!OR)", re.IGNORECASE)


def _pathlike(value: str) -> bool:
    """A file path (XAUTHORITY, SSH_AUTH_SOCK): not a secret, and shown in many messages."""
    return value.startswith(("/", "~", "./", "../")) or (len(value) > 2 and value[1] == ":" and value[2] in "\\/")


def remember_environ(environ: Mapping[str, str]) -> None:
    """Register the credentials in the environment: index and proxy URLs (``PIP_INDEX_URL``,
    ``UV_INDEX_URL``, ``HTTPS_PROXY`` ... any value holding ``scheme://user@``) and the values
    of variables named like a secret (``UV_INDEX_X_PASSWORD``, ``GITHUB_TOKEN``)."""
    for name, value in environ.items():
        if not isinstance(value, str) or not value:
            continue
        if _SECRET_VARS.search(name) and not _pathlike(value):
            remember(value)
        if "://" in value:
            for word in value.split():
                remember_url(word)


# ------------------------------------------------------------------ the masker
def mask(text: str) -> str:
    """``text`` with every credential and device identifier hidden (see the module doc)."""
    if not isinstance(text, str) or not text:
        return text
    text = _REGISTRY.hide(text)
    text = _mask_userinfo(text)
    if "=" in text:
        text = _QUERY_RE.rx.sub(_query_sub, text)
        text = _ASSIGN_RE.rx.sub(_assign_sub, text)
    low = text.lower()
    if "authorization" in low:
        text = _HEADER_RE.rx.sub(_header_sub, text)
    return hide_ids(text)


def mask_data(obj: object) -> object:
    """Plain data (as :func:`app.core.base.serial.to_jsonable` makes it) with every string masked."""
    if isinstance(obj, str):
        return mask(obj)
    if isinstance(obj, dict):
        return {mask(k) if isinstance(k, str) else k: mask_data(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [mask_data(v) for v in obj]
    return obj


class MaskingStream(io.TextIOBase):
    """A text stream that masks what is written to ``inner``.

    Text is held back until a line ends (``\\n`` or ``\\r``) or the stream is flushed, so a
    secret printed in pieces (``print(a, b)`` writes twice) is still seen whole.

    ``inner`` may be None: a windowed program (``pythonw.exe``, a PyInstaller ``console=False``
    exe) has no ``sys.stdout`` / ``sys.stderr``. The text is then dropped, as ``print()`` drops it
    there, and flushing does nothing (the CLI gives such a program a log file instead:
    :func:`app.core.base.streams.console_streams`)."""

    def __init__(self, inner: TextIO | io.TextIOBase | None) -> None:
        super().__init__()
        self.inner = inner
        self._pending = ""
        self._lock = threading.RLock()

    def write(self, s: str) -> int:
        with self._lock:
            text = self._pending + s
            cut = max(text.rfind("\n"), text.rfind("\r"))
            if cut == -1:
                self._pending = text
                return len(s)
            self._pending = text[cut + 1:]
            if self.inner is not None:
                self.inner.write(mask(text[:cut + 1]))
        return len(s)

    def flush(self) -> None:
        with self._lock:
            if self._pending:
                text, self._pending = self._pending, ""
                if self.inner is not None:
                    self.inner.write(mask(text))
            if self.inner is not None:
                self.inner.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.inner is not None and bool(self.inner.isatty())

    def fileno(self) -> int:
        if self.inner is None:
            raise io.UnsupportedOperation("no console: this stream has no file descriptor")
        return self.inner.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # the wrapped stream's
        return str(getattr(self.inner, "encoding", None) or "utf-8")

    @property
    def errors(self) -> str | None:  # type: ignore[override]  # the wrapped stream's
        value = getattr(self.inner, "errors", None)
        return str(value) if value is not None else None


# ------------------------------------------------------------------ private files
#: The mode of every file the assistant writes that can hold what a user typed (logs, journals,
#: reports, state): readable by the user only. Windows ignores it (a profile's files are the user's).
PRIVATE_MODE = 0o600


def open_private(path: str | os.PathLike[str], *, errors: str = "replace") -> TextIO:
    """``path`` opened for appending text, created mode 0600 (an existing file is made 0600 too).

    What is written is not masked here: write through :func:`mask` (or use :func:`append_private`)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), PRIVATE_MODE)
    try:
        if os.name != "nt":
            os.fchmod(fd, PRIVATE_MODE)
        return os.fdopen(fd, "a", encoding="utf-8", errors=errors)
    except BaseException:
        os.close(fd)
        raise


def append_private(path: str | os.PathLike[str], text: str) -> None:
    """``text``, masked, appended to the private file ``path`` (mode 0600). Raises OSError."""
    with open_private(path) as fh:
        fh.write(mask(text))


#: Windows: a reader that has the target open (another assistant reading the list of environments,
#: an antivirus scan) makes os.replace fail with WinError 5 or 32 for a moment; tried again after these.
_REPLACE_RETRY_S = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8)


def _replace(tmp: str, target: str) -> None:
    for delay in (*_REPLACE_RETRY_S, None):
        try:
            os.replace(tmp, target)
            return
        except PermissionError as exc:
            if os.name != "nt" or getattr(exc, "winerror", None) not in (5, 32) or delay is None:
                raise
            time.sleep(delay)


def write_private(path: str | os.PathLike[str], text: str, *, masked: bool = True) -> None:
    """``text`` (masked unless ``masked`` is False: the caller masked it already, or it is a
    machine's record that must stay exact) as the whole of ``path``, mode 0600, replaced in one
    step (a temporary file beside it, then ``os.replace``). Raises OSError (the temporary file
    is removed then)."""
    target = os.fspath(path)
    tmp = f"{target}.{os.getpid()}.{threading.get_ident() % 100000}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), PRIVATE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            if os.name != "nt":
                os.fchmod(fh.fileno(), PRIVATE_MODE)
            fh.write(mask(text) if masked else text)
            fh.flush()
            os.fsync(fh.fileno())
        _replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and exc.filename is None:  # a write that failed (a full disk): name the file
            raise OSError(exc.errno, exc.strerror or str(exc), target) from exc
        raise
