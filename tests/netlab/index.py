"""A package index on 127.0.0.1, laid out like download.pytorch.org and like PyPI.

Routes (``O`` = ``server.origin``)::

    O/simple/                       PEP 503 root: every project
    O/simple/<project>/             every file of the project
    O/whl/                          the variants
    O/whl/<variant>/                PEP 503 root of one variant (like download.pytorch.org/whl/cpu/)
    O/whl/<variant>/<project>/      files labelled +<variant> and files with no label
    O/whl/torch_stable.html         one flat find-links page with every file
    O/flat/  O/flat/<variant>/      flat find-links pages (like mirrors.aliyun.com/pytorch-wheels/cpu/)
    O/files/<file>                  the files (also under /whl/<variant>/ and /flat/[<variant>/])
    O/files/<file>.metadata         PEP 658 core metadata of a wheel

Project pages carry ``#sha256=`` fragments, ``data-requires-python`` and (unless
``core_metadata=False``) ``data-core-metadata``; with ``pep691=True`` a request that accepts
``application/vnd.pypi.simple.v1+json`` gets PEP 691 JSON. Files answer HEAD and single
``Range`` requests (206; ``ranges=False``: a server that ignores them and sends the whole file,
with no ``Accept-Ranges``). Every request is logged (``server.log``) without its credentials;
:attr:`IndexServer.bytes_out` counts every byte of every answer body sent. ``link`` paces the
answers (:mod:`tests.netlab.link`).
"""
from __future__ import annotations

import html
import http.server
import json
import re
import select
import socket
import ssl
import threading
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from packaging.utils import canonicalize_name

from tests.netlab.base import (
    LOOPBACK,
    LoggedRequest,
    LoopbackServer,
    TLSHandlerMixin,
    basic_credentials,
    clean_headers,
)
from tests.netlab.behaviours import (
    BehaviourMap,
    Drop,
    Redirect,
    Rule,
    Slow,
    Stall,
    Status,
    WrongHash,
    compile_rules,
)
from tests.netlab.files import FakeRelease, IndexFile
from tests.netlab.link import ConnPace, Link

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


class RefusedPort:
    """A 127.0.0.1 port held bound but not listening: connecting to it is refused."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind((LOOPBACK, 0))
        self.port: int = self._sock.getsockname()[1]

    @property
    def origin(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def close(self) -> None:
        self._sock.close()


class IndexServer(LoopbackServer):
    """The index; see the module docstring for its routes and ``behaviours`` for failures."""

    def __init__(self, files: Iterable[Path | IndexFile] = (), *, behaviours: BehaviourMap | None = None,
                 tls: ssl.SSLContext | None = None, auth: tuple[str, str] | None = None, pep691: bool = True,
                 core_metadata: bool = True, variants: Iterable[str] | None = None,
                 fake: Iterable[FakeRelease] = (), port: int = 0, link: Link | None = None,
                 ranges: bool = True, lifetime_s: float | None = None) -> None:
        super().__init__(port=port, tls=tls, lifetime_s=lifetime_s)
        self.link = link
        self.ranges = ranges
        self._out = 0
        self._out_lock = threading.Lock()
        self._answering = 0
        self._peak_answering = 0
        listed: list[IndexFile] = [f if isinstance(f, IndexFile) else IndexFile.from_path(Path(f)) for f in files]
        for release in fake:
            listed.extend(release.files())
        self.files: dict[str, IndexFile] = {}
        for f in listed:
            self.files.setdefault(f.filename, f)
        self.rules: tuple[Rule, ...] = compile_rules(behaviours)
        self.auth = auth
        self.pep691 = pep691
        self.core_metadata = core_metadata
        found = {f.variant for f in self.files.values() if f.variant}
        self.variants: tuple[str, ...] = tuple(sorted(set(variants) if variants is not None else found | {"cpu"}))
        self._drops: dict[int, int] = {}
        self._drops_lock = threading.Lock()
        self._refused: RefusedPort | None = None

    # ------------------------------------------------------------------------------ URLs
    def _with_auth(self, url: str, auth: bool) -> str:
        if not (auth and self.auth):
            return url
        user, password = self.auth
        scheme, rest = url.split("://", 1)
        return f"{scheme}://{quote(user, safe='')}:{quote(password, safe='')}@{rest}"

    def simple_url(self, *, auth: bool = False) -> str:
        """``O/simple/`` (PyPI layout); ``auth=True`` puts ``user:token@`` into the URL."""
        return self._with_auth(f"{self.origin}/simple/", auth)

    def whl_url(self, variant: str = "cpu", *, auth: bool = False) -> str:
        """``O/whl/<variant>/`` (download.pytorch.org layout)."""
        return self._with_auth(f"{self.origin}/whl/{variant}/", auth)

    def flat_url(self, variant: str | None = None, *, auth: bool = False) -> str:
        """A flat find-links page: ``O/flat/<variant>/`` or, for None, ``O/whl/torch_stable.html``."""
        path = f"/flat/{variant}/" if variant else "/whl/torch_stable.html"
        return self._with_auth(self.origin + path, auth)

    def file_url(self, filename: str, *, auth: bool = False) -> str:
        return self._with_auth(f"{self.origin}/files/{quote(filename)}", auth)

    # --------------------------------------------------------------------------- queries
    @property
    def bytes_out(self) -> int:
        """Bytes of answer bodies (files and pages) sent to clients so far (each chunk counted as it is
        handed to the socket: a client that went away may not have read the last one)."""
        with self._out_lock:
            return self._out

    def count_out(self, n: int) -> None:
        with self._out_lock:
            self._out += n

    @property
    def peak_requests(self) -> int:
        """The most requests answered at once: from reading a request to handing over its last byte
        (so it never counts a client's earlier request that the client has already closed, as the
        connection count can, for a moment)."""
        with self._out_lock:
            return self._peak_answering

    def answering(self, delta: int) -> None:
        with self._out_lock:
            self._answering += delta
            self._peak_answering = max(self._peak_answering, self._answering)

    def file_bytes(self, filename: str) -> int:
        """Bytes of ``filename`` sent so far, over every request for it (as the log has them)."""
        return sum(r.bytes_sent for r in self.log.all() if r.method == "GET"
                   and unquote(r.path.rsplit("/", 1)[-1]) == filename)

    def files_served(self) -> list[str]:
        """File names answered with file bytes (GET 200/206), in request order."""
        out = []
        for r in self.log.all():
            name = unquote(r.path.split("?", 1)[0].rsplit("/", 1)[-1])
            if r.method == "GET" and r.status in (200, 206) and name in self.files:
                out.append(name)
        return out

    def file(self, pattern: str) -> IndexFile:
        """The one listed file whose name starts with ``pattern`` (``"torch-"``)."""
        hits = [f for name, f in self.files.items() if name.startswith(pattern)]
        if len(hits) != 1:
            raise KeyError(f"{len(hits)} files start with {pattern!r}")
        return hits[0]

    # ------------------------------------------------------------------------- internals
    def redirect_origin(self, rule: Redirect) -> str:
        if rule.to:
            return rule.to.rstrip("/")
        if self._refused is None:
            self._refused = RefusedPort()
        return self._refused.origin

    def take_drop(self, rule: Rule) -> bool:
        """True when this request is one that ``rule`` (a Drop or a Stall) applies to."""
        assert isinstance(rule.behaviour, (Drop, Stall))
        with self._drops_lock:
            done = self._drops.get(rule.ordinal, 0)
            if rule.behaviour.times is not None and done >= rule.behaviour.times:
                return False
            self._drops[rule.ordinal] = done + 1
            return True

    def reset_drops(self) -> None:
        """Drops and stalls with ``times`` apply again from the next request (a new sample)."""
        with self._drops_lock:
            self._drops.clear()

    def on_stop(self) -> None:
        if self._refused is not None:
            self._refused.close()
            self._refused = None


class _Body:
    """What to send: bytes in memory or a file on disk, plus the behaviours that shape it."""

    def __init__(self, data: bytes | None = None, path: Path | None = None, size: int = 0) -> None:
        self.data = data
        self.path = path
        self.size = len(data) if data is not None else size
        self.flip_at: int | None = None  # WrongHash(file): XOR this byte offset with 0xFF
        self.wrong = False  # the bytes are not the listed file's


class IndexHandler(TLSHandlerMixin, http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "netlab-index/1"
    timeout = 60
    owner: IndexServer

    def setup(self) -> None:
        self.owner = self.server.owner  # type: ignore[assignment]
        self.pace = ConnPace()  # this connection's place on the owner's link
        super().setup()

    def log_message(self, format: str, *args: object) -> None:
        pass  # our own log is server.log

    def do_GET(self) -> None:
        self._answer(head=False)

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def _answer(self, head: bool) -> None:
        self._counted = True
        self.owner.answering(+1)
        try:
            self._serve(head)
        finally:
            self._uncount()

    def _uncount(self) -> None:
        if getattr(self, "_counted", False):
            self._counted = False
            self.owner.answering(-1)

    # ----------------------------------------------------------------------------- serve
    # long: one request from authentication through routing to the body, with each behaviour
    def _serve(self, head: bool) -> None:
        path = urlsplit(self.path).path
        owner = self.owner
        self._entry = LoggedRequest(self.command, path, clean_headers(self.headers), 0)
        self._recorded = False
        if owner.link is not None and not owner.link.wait_latency(owner.stopping):
            self.close_connection = True
            return
        user = None
        if owner.auth is not None:
            creds = basic_credentials(self.headers.get("Authorization"))
            if creds != owner.auth:
                self._simple(401, b"authentication required\n", head, {"WWW-Authenticate": 'Basic realm="netlab"'},
                             note="bad credentials" if creds else "no credentials")
                return
            user = creds[0]
            self._entry = replace(self._entry, user=user)
        filename, is_meta = self._file_of(path)
        requested = filename + ".metadata" if (filename and is_meta) else filename
        rules = [r for r in owner.rules if r.matches(path, requested)]
        for rule in rules:
            b = rule.behaviour
            if isinstance(b, Status):
                self._simple(b.code, f"{b.code} {b.reason or 'netlab'}\n".encode(), head, note="status behaviour")
                return
            if isinstance(b, Redirect):
                target = owner.redirect_origin(b) + self.path
                self._simple(b.code, b"", head, {"Location": target}, note=f"redirect to {target}")
                return
        if filename is not None:
            f = owner.files[filename]
            if is_meta:
                body = _Body(f.metadata) if (owner.core_metadata and f.metadata is not None) else None
            else:
                body = _Body(path=f.path, size=f.size) if f.path is not None else None
                wrong = [r.behaviour for r in rules
                         if isinstance(r.behaviour, WrongHash) and r.behaviour.where == "file"]
                if body is not None and wrong:
                    other = wrong[0].replacement
                    if other is not None:
                        body = _Body(path=other, size=other.stat().st_size)
                        body.wrong = True
                    else:
                        body.flip_at = f.size // 2
                        body.wrong = True
            if body is None:
                self._simple(404, b"not served\n", head, note="listed only")
                return
            ctype = "application/octet-stream" if not is_meta else "text/plain; charset=utf-8"
        else:
            page = self._page(path)
            if page is None:
                self._simple(404, b"not found\n", head)
                return
            if isinstance(page, str):  # a redirect to the canonical (slash-ended) URL
                self._simple(301, b"", head, {"Location": page})
                return
            data, ctype = page
            body = _Body(data)
        self._send(body, ctype, head, rules, ranged=filename is not None)

    def _record(self, status: int, sent: int, note: str = "") -> None:
        """Log this request once, BEFORE the client can see the end of the answer, so a test
        that has its answer always finds it in the log."""
        if not self._recorded:
            self._recorded = True
            self.owner.log.add(replace(self._entry, status=status, bytes_sent=sent, note=note))
            self._uncount()  # the answer's end is in the client's hands from here

    def _file_of(self, path: str) -> tuple[str | None, bool]:
        parts = [unquote(p) for p in path.split("/") if p]
        if len(parts) < 2 or parts[0] not in ("files", "whl", "flat"):
            return None, False
        name = parts[-1]
        if name.endswith(".metadata") and name[: -len(".metadata")] in self.owner.files:
            return name[: -len(".metadata")], True
        return (name, False) if name in self.owner.files else (None, False)

    # ----------------------------------------------------------------------------- pages
    def _page(self, path: str) -> tuple[bytes, str] | str | None:
        owner = self.owner
        parts = [unquote(p) for p in path.split("/") if p]
        if not path.endswith("/") and parts and not parts[-1].endswith(".html"):
            return path + "/"
        if not parts:
            links = [("simple/", "simple/")] + [(f"whl/{v}/", f"whl/{v}/") for v in owner.variants]
            return _html_links("netlab index", links), "text/html; charset=utf-8"
        if parts == ["whl", "torch_stable.html"]:
            return self._flat(list(owner.files.values()), relative=False, page=path)
        if parts[0] == "flat" and len(parts) <= 2:
            variant = parts[1] if len(parts) == 2 else None
            if variant is not None and variant not in owner.variants:
                return None
            return self._flat(self._files_for(variant), relative=variant is not None, page=path)
        if parts == ["whl"]:
            return _html_links("variants", [(f"{v}/", v) for v in owner.variants]), "text/html; charset=utf-8"
        if parts[0] == "simple" and len(parts) <= 2:
            files, rest = self._files_for(None), parts[1:]
        elif parts[0] == "whl" and 2 <= len(parts) <= 3 and parts[1] in owner.variants:
            files, rest = self._files_for(parts[1]), parts[2:]
        else:
            return None
        if not rest:
            return self._root(sorted({f.project for f in files}))
        project = str(canonicalize_name(rest[0]))
        mine = [f for f in files if f.project == project]
        if not mine:
            return None
        return self._project(project, mine, path)

    def _files_for(self, variant: str | None) -> list[IndexFile]:
        files = self.owner.files.values()
        if variant is None:
            return list(files)
        return [f for f in files if f.variant in (None, variant)]

    def _wants_json(self) -> bool:
        if not self.owner.pep691:
            return False
        for item in self.headers.get("Accept", "").split(","):
            kind, *params = (p.strip() for p in item.split(";"))
            if kind == JSON_TYPE:
                return not any(p.replace(" ", "") in ("q=0", "q=0.0") for p in params)
        return False

    def _root(self, projects: list[str]) -> tuple[bytes, str]:
        if self._wants_json():
            doc = {"meta": {"api-version": "1.0"}, "projects": [{"name": p} for p in projects]}
            return json.dumps(doc).encode(), JSON_TYPE
        return _html_links("Simple index", [(f"{p}/", p) for p in projects]), "text/html; charset=utf-8"

    def _digest(self, f: IndexFile, page: str) -> str:
        """The sha256 a page lists for ``f``: the real one unless a WrongHash("page") rule says not."""
        if any(isinstance(r.behaviour, WrongHash) and r.behaviour.where == "page" and r.matches(page, f.filename)
               for r in self.owner.rules):
            return "0" * 64 if f.sha256 != "0" * 64 else "1" * 64
        return f.sha256

    def _project(self, project: str, files: list[IndexFile], page: str) -> tuple[bytes, str]:
        files = sorted(files, key=lambda f: f.filename)
        meta_ok = self.owner.core_metadata
        if self._wants_json():
            entries = []
            for f in files:
                entry: dict[str, object] = {"filename": f.filename, "url": f"/files/{quote(f.filename)}",
                                            "hashes": {"sha256": self._digest(f, page)}}
                if f.requires_python:
                    entry["requires-python"] = f.requires_python
                if meta_ok and f.metadata_sha256:
                    # PEP 714's key only, as PyPI serves it: pip before 23.1 (Debian 12's venv has 23.0.1)
                    # fails with "unhashable type: 'dict'" on the older "dist-info-metadata" in JSON
                    entry["core-metadata"] = {"sha256": f.metadata_sha256}
                entries.append(entry)
            doc = {"meta": {"api-version": "1.0"}, "name": project, "files": entries}
            return json.dumps(doc).encode(), JSON_TYPE
        rows = []
        for f in files:
            attrs = f' href="/files/{quote(f.filename)}#sha256={self._digest(f, page)}"'
            if f.requires_python:
                attrs += f' data-requires-python="{html.escape(f.requires_python)}"'
            if meta_ok and f.metadata_sha256:
                attrs += f' data-dist-info-metadata="sha256={f.metadata_sha256}"'
                attrs += f' data-core-metadata="sha256={f.metadata_sha256}"'
            rows.append(f"<a{attrs}>{html.escape(f.filename)}</a><br/>")
        return _html(f"Links for {project}", rows), "text/html; charset=utf-8"

    def _flat(self, files: list[IndexFile], relative: bool, page: str) -> tuple[bytes, str]:
        rows = []
        for f in sorted(files, key=lambda f: f.filename):
            href = quote(f.filename) if relative else f"/files/{quote(f.filename)}"
            rows.append(f'<a href="{href}#sha256={self._digest(f, page)}">{html.escape(f.filename)}</a><br/>')
        return _html("Index", rows), "text/html; charset=utf-8"

    # ------------------------------------------------------------------------------ send
    def _simple(self, code: int, body: bytes, head: bool, extra: dict[str, str] | None = None,
                note: str = "") -> None:
        self.send_response(code)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self._record(code, 0 if head else len(body), note)
        self.end_headers()
        if not head:
            self.owner.count_out(len(body))
            self.wfile.write(body)

    # long: range, slow, wrong-hash and drop all shape the same byte loop
    def _send(self, body: _Body, ctype: str, head: bool, rules: list[Rule], ranged: bool) -> None:
        start, length, status = 0, body.size, 200
        want = self.headers.get("Range") if ranged and self.owner.ranges else None
        if want:
            span = _parse_range(want, body.size)
            if span is None:
                self._simple(416, b"", head, {"Content-Range": f"bytes */{body.size}"}, note="range not satisfiable")
                return
            if span != (0, body.size):
                start, length, status = span[0], span[1] - span[0], 206
        drop_after, stall = None, None
        for r in rules if not head else ():
            b = r.behaviour
            if isinstance(b, (Drop, Stall)) and (b.after or 0) < start + length and self.owner.take_drop(r):
                drop_after = max(0, (b.after or 0) - start)  # the offset is in the file
                stall = b if isinstance(b, Stall) else None
                break
        if stall is not None and stall.after is None:  # accepted, and then nothing at all
            self._record(0, 0, "stalled before the headers")
            self._hold(stall)
            self.close_connection = True
            return
        target = length if (head or drop_after is None) else drop_after  # bytes this answer will carry
        if drop_after is not None and not head:
            note = f"{'stalled' if stall else 'dropped'} after {target} bytes"
        else:
            note = "wrong bytes" if body.wrong else ""
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(length))
        if ranged and self.owner.ranges:
            self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{start + length - 1}/{body.size}")
        if head or target == 0:
            self._record(status, 0, note)
        self.end_headers()
        if not head:
            sent = self._stream(body, start, target, rules, status, note)
            if stall is not None and sent == target:
                self.wfile.flush()
                self._hold(stall)
            if sent < length:  # dropped (or stopped): headers promised more than was sent
                self.close_connection = True
                try:
                    self.wfile.flush()
                    self.request.shutdown(socket.SHUT_WR)
                except OSError:
                    pass

    def _stream(self, body: _Body, start: int, target: int, rules: list[Rule], status: int, note: str) -> int:
        """Write ``target`` bytes of ``body`` from ``start`` (slowly, with a flipped byte, ...)."""
        slow = [r.behaviour for r in rules if isinstance(r.behaviour, Slow)]
        rate = min((s.bytes_per_s for s in slow if s.bytes_per_s), default=None)
        delay = max((s.delay_s for s in slow), default=0.0)
        link = self.owner.link
        chunk = min((s.chunk for s in slow), default=64 * 1024 if link is not None else 256 * 1024)
        stall_after = min((s.stall_after for s in slow if s.stall_after is not None), default=None)
        stopping = self.owner.stopping
        if delay and stopping.wait(delay):
            self._record(status, 0, "stopped")
            return 0
        sent, began = 0, time.monotonic()
        fh = body.path.open("rb") if body.path is not None else None
        try:
            if fh is not None:
                fh.seek(start)
            while sent < target:
                if stall_after is not None and sent >= stall_after:  # stalled: nothing more until the end
                    self.wfile.flush()
                    stopping.wait(3600)
                    break
                pos = start + sent
                n = min(chunk, target - sent, stall_after - sent if stall_after is not None else target)
                data = fh.read(n) if fh is not None else (body.data or b"")[pos:pos + n]
                if not data:
                    break
                if body.flip_at is not None and pos <= body.flip_at < pos + len(data):
                    i = body.flip_at - pos
                    data = data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:]
                if rate:
                    ahead = (sent + len(data)) / rate - (time.monotonic() - began)
                    if ahead > 0 and stopping.wait(ahead):
                        break
                if link is not None and not link.pace(self.pace, len(data), stopping):
                    break
                if sent + len(data) >= target:
                    self._record(status, target, note)
                self.owner.count_out(len(data))  # before the write: a client that has the bytes finds them counted
                self.wfile.write(data)
                sent += len(data)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, TimeoutError):
            self.close_connection = True
            self._record(status, sent, "client went away")
        finally:
            if fh is not None:
                fh.close()
        self._record(status, sent, "stopped")
        return sent


    def _hold(self, stall: Stall) -> None:
        """Send nothing more until the client goes away, the server stops or ``hold_s`` is over."""
        ends = time.monotonic() + stall.hold_s
        while time.monotonic() < ends and not self.owner.stopping.is_set():
            try:
                readable, _, _ = select.select([self.connection], [], [], 0.2)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    return  # the client closed its side
            except (OSError, ValueError):
                return


IndexServer.handler = IndexHandler  # type: ignore[assignment]


def _parse_range(header: str, size: int) -> tuple[int, int] | None:
    """``bytes=a-b`` / ``a-`` / ``-n`` -> (start, end-exclusive); a list of ranges -> the whole file."""
    if "," in header:
        return 0, size
    m = _RANGE.match(header.strip())
    if not m or (not m.group(1) and not m.group(2)):
        return 0, size
    first, last = m.group(1), m.group(2)
    if not first:
        n = int(last)
        return (max(0, size - n), size) if n > 0 and size > 0 else None
    a = int(first)
    b = min(int(last), size - 1) if last else size - 1
    if a >= size or b < a:
        return None
    return a, b + 1


def _html(title: str, rows: list[str]) -> bytes:
    head = (f'<!DOCTYPE html>\n<html><head><meta name="pypi:repository-version" content="1.0">'
            f"<title>{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>\n")
    return (head + "\n".join(rows) + "\n</body></html>\n").encode()


def _html_links(title: str, links: list[tuple[str, str]]) -> bytes:
    return _html(title, [f'<a href="{quote(h)}">{html.escape(t)}</a><br/>' for h, t in links])


__all__ = ["JSON_TYPE", "IndexServer", "RefusedPort"]
