"""``torch-setup bundle``: download every wheel for a target machine into a folder.

    torch-setup bundle --out DIR --python 3.11 --platform manylinux_2_28_x86_64 \\
        [--backend cpu|cuda|…] [--variant cu126] [--torch 2.13.0] [--packages …] \\
        [--index-url URL] [--find-links DIR] [--from-report REPORT.json]

Carry DIR to the offline machine and run ``torch-setup install --from-bundle DIR``.
``--check DIR`` checks an existing bundle against this machine (tags and every hash).
"""
from __future__ import annotations

import json
import sys

from app.commands._args import python_version
from app.commands._render import Renderer
from app.commands.install import add_source_arguments, detect_machine, recommend_for
from app.core.base.errors import BadInput


def register(sub) -> None:
    p = sub.add_parser(
        "bundle", help="build an offline wheel bundle for a target machine",
        description="Download every wheel a target machine needs into a folder with a "
                    "manifest (tags, versions, SHA-256 of each file) and a hashed "
                    "requirements file; install it there with --from-bundle.")
    p.add_argument("--out", metavar="DIR", help="the new bundle folder")
    p.add_argument("--python", metavar="X.Y", type=python_version, help="the target's Python version (default: this "
                                                   "one's)")
    p.add_argument("--platform", metavar="TAG",
                   help="the target's platform tag, e.g. manylinux_2_28_x86_64, win_amd64, "
                        "macosx_11_0_arm64 (default: this machine's)")
    p.add_argument("--from-report", metavar="FILE",
                   help="a SystemReport saved on the target (torch-setup detect --json) to "
                        "recommend for")
    add_source_arguments(p)
    p.add_argument("--ca-bundle", metavar="FILE",
                   help='a CA certificate file for HTTPS (or "system" for the OS trust store)')
    p.add_argument("--proxy", metavar="URL",
                   help="an HTTP(S) proxy (default: HTTPS_PROXY/HTTP_PROXY from the environment)")
    p.add_argument("--lock", metavar="FILE",
                   help="a pylock.toml (torch-setup export): bundle exactly its files, each checked by sha256")
    p.add_argument("--check", metavar="DIR", help="only check an existing bundle and exit")
    p.add_argument("--json", action="store_true", help="print the manifest as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    from app.core.install import bundle as core
    from app.core.sources import SourceSettings, availability, parse_mirrors

    if args.check:
        m = core.check_bundle(args.check)
        if args.json:
            print(json.dumps(m.to_dict(), indent=2, ensure_ascii=False))
        else:
            print(f"{args.check}: {len(m.files)} wheels for Python {m.python_version} "
                  f"({m.platforms[0]}), all hashes match, fits this machine.")
        return 0
    if not args.out:
        raise BadInput("No output folder was given.", hint="Pass --out DIR.")
    if args.lock:
        return _from_lock(args)
    python = args.python or f"{sys.version_info[0]}.{sys.version_info[1]}"
    rec = None
    packages = args.packages
    index_url = None
    sources = SourceSettings(torch_index=args.index_url, extra_index_urls=tuple(args.extra_index_url or ()),
                             find_links=tuple(args.find_links or ()), mirrors=parse_mirrors(args.mirrors),
                             proxy=args.proxy, ca_bundle=args.ca_bundle)
    if not packages:
        if args.from_report:
            from app.core.detection.system import load_report

            report = load_report(args.from_report)
        else:
            report = detect_machine()
        args.python = python
        rec = recommend_for(args, report, availability(sources))  # the newest build the sources hold
        packages = list(rec.packages)
        index_url = rec.index_url
        if not packages:
            raise BadInput("The recommendation names no packages.",
                           hint="Pass --packages explicitly.")
    renderer = Renderer(sys.stderr, quiet=args.json)
    try:
        m = core.build_bundle(args.out, packages=packages, python_version=python,
                              platform=args.platform, sources=sources, index_url=index_url, recommendation=rec,
                              on_event=renderer)
    finally:
        renderer.close()
    if args.json:
        print(json.dumps(m.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(f"Bundle written to {args.out}: {len(m.files)} wheels, "
              f"{m.total_bytes / 1e6:.0f} MB, for Python {m.python_version} on "
              f"{m.platforms[0]}.")
        if m.from_folders:
            print(f"Every wheel came from your folder(s) {', '.join(m.find_links)}; no index was used.")
        print(f"On the target: torch-setup install --env PATH --from-bundle {args.out}")
    return 0


_NOT_WITH_LOCK = ("packages", "torch", "variant", "backend", "from_report", "python", "platform", "index_url")


def _from_lock(args) -> int:
    """``bundle --lock FILE --out DIR``: the lock's files (from its folders, or downloaded and checked)."""
    from pathlib import Path

    from app.commands._lab import refuse_beside_lock
    from app.core.base.text import msg
    from app.core.lab.lockbundle import bundle_from_lock
    from app.core.pylock.lockfile import read_lock

    refuse_beside_lock(args, _NOT_WITH_LOCK)
    lock = read_lock(args.lock)
    renderer = Renderer(sys.stderr, quiet=args.json)
    try:
        m = bundle_from_lock(lock, Path(args.out), find_links=args.find_links or (), proxy=args.proxy,
                             ca_bundle=args.ca_bundle, on_event=renderer)
    finally:
        renderer.close()
    if args.json:
        print(json.dumps(m.to_dict(), indent=2, ensure_ascii=False))
    else:
        from app.commands._lab import say

        say(msg("lab.bundle_written", "Bundle written to {out}: the {count} files of the lock, {mb} MB, for Python "
                "{python}. On the target: torch-setup install --env PATH --from-bundle {out}", out=args.out,
                count=len(m.files), mb=round(m.total_bytes / 1e6), python=m.python_version))
    return 0
