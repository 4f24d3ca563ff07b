"""Index pages: the files a package index (or a flat find-links page) lists for a project.

* PEP 691 JSON (``Accept: application/vnd.pypi.simple.v1+json``), asked for first;
* PEP 503 HTML (``<a href="…/file.whl#sha256=…" data-requires-python="…">``), what most
  mirrors and ``download.pytorch.org`` serve;
* a flat page (``layout = "flat"``: Aliyun's ``pytorch-wheels/<variant>/``), the same anchors
  for every project on one page.

Only wheels are kept (an install from a wheelhouse never builds). Each :class:`Link` has the
absolute URL and the sha256 the page lists for it (None when it lists none).
"""
from __future__ import annotations

import html.parser
import json
import urllib.parse
from dataclasses import dataclass

from app.core.base.requirements import canonical
from app.core.base.text import msg
from app.core.base.wheels import WheelFile, parse_wheel
from app.core.net.client import PAGE_DEADLINE_S, PAGE_TIMEOUT_S, Client, Failure, NetError

__all__ = ["ACCEPT", "MAX_PAGE_BYTES", "Link", "project_url", "read_page"]

ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"
MAX_PAGE_BYTES = 64 << 20  # torch's page on download.pytorch.org is a few MB


@dataclass(frozen=True)
class Link:
    """One wheel a page lists."""

    filename: str
    url: str
    sha256: str | None
    requires_python: str | None = None

    @property
    def wheel(self) -> WheelFile | None:
        return parse_wheel(self.filename)


def project_url(index_url: str, project: str, layout: str = "pep503") -> str:
    """The page that lists ``project``'s files: ``<index>/<project>/``, or the flat page itself."""
    if layout == "flat":
        return index_url
    return index_url.rstrip("/") + "/" + canonical(project) + "/"


class _Anchors(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            d = dict(attrs)
            href = d.get("href")
            if href:
                self.found.append((href, d))


def _link(base: str, href: str, sha256: str | None, requires_python: str | None) -> Link | None:
    url = urllib.parse.urljoin(base, href)
    parts = urllib.parse.urlsplit(url)
    if not sha256 and parts.fragment.startswith("sha256="):
        sha256 = parts.fragment.split("=", 1)[1].lower()
    clean = urllib.parse.urlunsplit(parts._replace(fragment=""))
    filename = urllib.parse.unquote(parts.path.rsplit("/", 1)[-1])
    if not filename.endswith(".whl") or parse_wheel(filename) is None:
        return None
    return Link(filename, clean, sha256.lower() if sha256 else None, requires_python or None)


def _from_json(base: str, data: object) -> list[Link]:
    files = data.get("files") if isinstance(data, dict) else None
    out = []
    for f in files if isinstance(files, list) else []:
        if not isinstance(f, dict) or not isinstance(f.get("url"), str):
            continue
        hashes = f.get("hashes")
        sha = hashes.get("sha256") if isinstance(hashes, dict) else None
        rp = f.get("requires-python")
        link = _link(base, f["url"], sha if isinstance(sha, str) else None, rp if isinstance(rp, str) else None)
        if link is not None:
            out.append(link)
    return out


def _from_html(base: str, text: str) -> list[Link]:
    parser = _Anchors()
    parser.feed(text)
    out = []
    for href, attrs in parser.found:
        link = _link(base, href, None, attrs.get("data-requires-python"))
        if link is not None:
            out.append(link)
    return out


def read_page(net: Client, url: str, project: str | None = None, *, timeout: float = PAGE_TIMEOUT_S) -> list[Link]:
    """The wheels ``url`` lists (of ``project`` only, when given). Raises NetError (a page that is
    not all there within :data:`PAGE_DEADLINE_S`, or that stalls, included)."""
    with net.get(url, headers={"Accept": ACCEPT}, timeout=timeout, deadline=PAGE_DEADLINE_S) as r:
        chunks, size = [], 0
        while True:
            chunk = r.read(1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_PAGE_BYTES:
                raise NetError(Failure("http", msg("sources.err_page_too_large", "lists more than {mb} MB for one "
                                                   "project: not a package index page", mb=MAX_PAGE_BYTES >> 20)))
            chunks.append(chunk)
        base, ctype = r.url, r.headers.get("Content-Type", "")
    body = b"".join(chunks).decode("utf-8", "replace")
    if "json" in ctype:
        try:
            links = _from_json(base, json.loads(body))
        except ValueError:
            links = []
    else:
        links = _from_html(base, body)
    if project is None:
        return links
    want = canonical(project)
    return [lk for lk in links if (w := lk.wheel) is not None and w.name == want]
