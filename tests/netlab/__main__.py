"""``python -m tests.netlab``: run netlab servers by hand or from a benchmark.

    python -m tests.netlab serve --root DIR [--tls] [--auth USER:TOKEN] [--port N]
                                 [--behave 'torch-*=403' ...] [--fake torch==2.16.0:cpu,cu132]
                                 [--ca-out FILE] [--ready-file FILE] [--link PROFILE] [--lifetime S]
    python -m tests.netlab proxy [--auth USER:PASSWORD] [--port N]
    python -m tests.netlab wheelhouse [--find-links DIR]

``serve`` prints the index URLs (never the credentials) and runs until interrupted (or for
``--lifetime`` seconds); ``--link`` paces it as one of tests/netlab/link.py's profiles;
``--ready-file`` writes ``{"origin": ..., "ca_bundle": ...}`` as JSON once it listens, so a
script can wait for it. ``wheelhouse`` prints the cached torch + dependencies folder.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import threading
from pathlib import Path

from tests.netlab.behaviours import parse_behaviour
from tests.netlab.files import FakeRelease
from tests.netlab.index import IndexServer
from tests.netlab.link import PROFILES
from tests.netlab.proxy import ProxyServer
from tests.netlab.wheelhouse import gather_wheelhouse


def _credentials(text: str | None) -> tuple[str, str] | None:
    if not text:
        return None
    user, sep, secret = text.partition(":")
    if not sep or not user:
        raise SystemExit("--auth takes USER:SECRET")
    return user, secret


def _fake(text: str) -> FakeRelease:
    spec, _, variants = text.partition(":")
    project, sep, version = spec.partition("==")
    if not sep:
        raise SystemExit("--fake takes PROJECT==VERSION[:VARIANT,...]")
    return FakeRelease(project, version, tuple(v for v in variants.split(",") if v) or ("cpu",))


def _wait_for_signal(server: IndexServer | ProxyServer | None = None) -> None:
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    while not done.wait(0.5):
        if server is not None and not server.running:  # its lifetime is over
            return


def _serve(args: argparse.Namespace) -> int:
    root = Path(args.root)
    files = sorted(p for p in root.iterdir() if p.suffix == ".whl" or p.name.endswith((".tar.gz", ".zip")))
    if not files:
        print(f"no wheels or sdists in {root}", file=sys.stderr)
        return 2
    behaviours: dict[str, list] = {}  # type: ignore[type-arg]
    for text in args.behave or ():
        pattern, b = parse_behaviour(text)
        behaviours.setdefault(pattern, []).append(b)
    with tempfile.TemporaryDirectory(prefix="netlab-ca-") as scratch:
        ca_bundle = None
        ctx = None
        if args.tls:
            from tests.netlab.tls import TestCA  # trustme only when asked for

            ca = TestCA(Path(scratch))
            ctx = ca.server_context()
            ca_bundle = ca.bundle
            if args.ca_out:
                Path(args.ca_out).write_bytes(ca.bundle.read_bytes())
                ca_bundle = Path(args.ca_out)
        link = PROFILES[args.link].link() if args.link else None
        server = IndexServer(files, behaviours=behaviours, tls=ctx, auth=_credentials(args.auth),
                             port=args.port, fake=[_fake(f) for f in args.fake or ()], link=link,
                             lifetime_s=args.lifetime)
        _run_index(server, ca_bundle, args.ready_file)
    return 0


def _run_index(server: IndexServer, ca_bundle: Path | None, ready_file: str | None) -> None:
    with server:
        print(f"netlab index: {len(server.files)} files on {server.origin}")
        print(f"  PyPI layout:    {server.simple_url()}")
        for v in server.variants:
            print(f"  torch layout:   {server.whl_url(v)}")
        print(f"  flat page:      {server.flat_url()}")
        if server.auth:
            print(f"  basic auth required (user {server.auth[0]})")
        if ca_bundle:
            print(f"  CA bundle:      {ca_bundle}")
        if ready_file:
            Path(ready_file).write_text(json.dumps({"origin": server.origin, "ca_bundle": str(ca_bundle or "")}),
                                        encoding="utf-8")
        sys.stdout.flush()
        _wait_for_signal(server)


def _proxy(args: argparse.Namespace) -> int:
    server = ProxyServer(auth=_credentials(args.auth), port=args.port)
    with server:
        print(f"netlab proxy on {server.origin}" + (f" (user {server.auth[0]})" if server.auth else ""))
        if args.ready_file:
            Path(args.ready_file).write_text(json.dumps({"origin": server.origin}), encoding="utf-8")
        sys.stdout.flush()
        _wait_for_signal()
    return 0


def _wheelhouse(args: argparse.Namespace) -> int:
    folders = [Path(p) for p in args.find_links] if args.find_links else []
    if not folders:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from tests.conftest import _pip_find_links

        folders = _pip_find_links()
    house = gather_wheelhouse(folders)
    print(house.folder)
    print(f"{len(house.files)} wheels; {'cached' if house.cached else f'gathered in {house.gather_s:.1f} s'}",
          file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.netlab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    serve = sub.add_parser("serve", help="a package index over a folder of wheels")
    serve.add_argument("--root", required=True)
    serve.add_argument("--tls", action="store_true")
    serve.add_argument("--auth")
    serve.add_argument("--port", type=int, default=0)
    serve.add_argument("--behave", action="append", metavar="PATTERN=SPEC")
    serve.add_argument("--fake", action="append", metavar="PROJECT==VERSION[:VARIANTS]")
    serve.add_argument("--ca-out")
    serve.add_argument("--ready-file")
    serve.add_argument("--link", choices=sorted(PROFILES), help="pace the answers as this link")
    serve.add_argument("--lifetime", type=float, help="stop by itself after this many seconds")
    proxy = sub.add_parser("proxy", help="a forward proxy (loopback targets only)")
    proxy.add_argument("--auth")
    proxy.add_argument("--port", type=int, default=0)
    proxy.add_argument("--ready-file")
    house = sub.add_parser("wheelhouse", help="print the cached torch + dependencies folder")
    house.add_argument("--find-links", action="append")
    args = parser.parse_args(argv)
    return {"serve": _serve, "proxy": _proxy, "wheelhouse": _wheelhouse}[args.cmd](args)


if __name__ == "__main__":
    raise SystemExit(main())
