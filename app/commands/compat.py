"""``torch-setup compat status [--json] [--index-url URL]`` and ``torch-setup compat refresh [--url URL]``.

``status`` compares the compatibility data with what the PyTorch index lists now (new releases,
new or missing builds) and says what the engine will do with them; the result is cached so that
``recommend`` can use a new release with assumed facts (``recommend --verified-only`` does not).
``refresh`` installs newer data published and signed by this project, after checking its
signature and validating it; the bundled data stays as the fallback.

Exit codes: status: 0 read (news or not), 1 the index could not be read, 2 bad input.
refresh: 0 updated or already the newest, 1 could not fetch, 2 bad input, bad signature or
invalid data (nothing changed in every failure).
"""
from __future__ import annotations

import json
import sys


def register(sub) -> None:
    p = sub.add_parser("compat", help="check or update the compatibility data (which builds exist for which GPUs)",
                       description="Check whether the compatibility data is still current (status), or install "
                                   "newer data published and signed by the project (refresh).")
    cmds = p.add_subparsers(dest="compat_command", metavar="ACTION", parser_class=type(p))
    st = cmds.add_parser("status", help="compare the data with what the PyTorch index lists now",
                         description="Read the PyTorch index's simple pages for torch (PEP 691 JSON where served) "
                                     "and report new releases, new or missing builds, and what the engine will do "
                                     "with them. Exit 0 when the index was read, 1 when it could not be.")
    st.add_argument("--json", action="store_true", help="print the result as JSON")
    st.add_argument("--index-url", metavar="URL",
                    help="the index to read (default: the data's, https://download.pytorch.org/whl); "
                         "{URL}/torch/ or {URL}/<variant>/torch/ is read")
    st.add_argument("--timeout", type=float, default=15.0, metavar="S", help="network time limit per page")
    st.add_argument("--ca-bundle", metavar="PEM", help="trust this CA bundle for HTTPS")
    st.set_defaults(func=run_status)
    rf = cmds.add_parser("refresh", help="install newer compatibility data published (and signed) by the project",
                         description="Fetch the project's newer compatibility data and its signature, verify the "
                                     "signature with the public key shipped in the app, validate the data, and "
                                     "install it for this user; the bundled data stays as the fallback. Exit 0 "
                                     "updated or already the newest; 1 could not fetch; 2 bad signature, invalid "
                                     "data or bad input (nothing changed).")
    rf.add_argument("--url", metavar="URL", help="the compat-data.json to fetch (its signature is URL.sig)")
    rf.add_argument("--json", action="store_true", help="print the result as JSON")
    rf.add_argument("--timeout", type=float, default=30.0, metavar="S", help="network time limit")
    rf.add_argument("--ca-bundle", metavar="PEM", help="trust this CA bundle for HTTPS")
    rf.add_argument("--remove", action="store_true", help="remove the downloaded copy and use the bundled data")
    rf.set_defaults(func=run_refresh)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _in_use_line(data) -> str:
    if data.origin == "downloaded":
        from app.core.compat.data import load_compat

        bundled = load_compat(bundled=True)
        return (f"Compatibility data {data.version} ({data.date}), downloaded and verified; the bundled "
                f"{bundled.version} stays as the fallback.")
    return f"Compatibility data {data.version} ({data.date}), bundled with the app."


def run_status(args) -> int:
    from app.core.base.errors import UserError
    from app.core.base.text import render
    from app.core.compat.data import load_compat
    from app.core.compat.freshness import check, plan
    from app.core.net.client import NetError

    data = load_compat()
    try:
        result = check(data, args.index_url, timeout=args.timeout, ca_bundle=args.ca_bundle)
    except NetError as exc:
        raise UserError(f"The index could not be read: {exc}. Nothing was compared.",
                        hint="Check the network or the --index-url, and try again.") from None
    steps = plan(result, data)
    if args.json:
        doc = {**result.to_dict(), "in_use": {"version": data.version, "date": data.date, "origin": data.origin},
               "plan": [render(t) for t in steps]}
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        return 0
    out = [_in_use_line(data), f"Read {result.files} torch build(s) from {result.url} ({result.checked})."]
    if not result.news:
        out.append("Up to date: the index lists no release or build that the data does not know.")
    for new in result.new_releases:
        builds = "; ".join(f"{plat}: {', '.join(vs)}" for plat, vs in new.builds.items())
        pys = f" (Python {new.pythons[0]}–{new.pythons[-1]})" if new.pythons else ""
        out.append(f"New release: torch {new.latest} — {builds}{pys}.")
    for _torch, old, new_patch in result.new_patches:
        out.append(f"New patch: torch {new_patch} (the data knows {old}).")
    for torch, variant, plat in result.new_builds:
        out.append(f"New build of a known release: torch {torch} {variant} on {plat}.")
    for torch, variant, plat in result.missing_builds:
        out.append(f"Not on the index: torch {torch} {variant} on {plat} (the data lists it).")
    for torch in result.missing_releases:
        out.append(f"Not on the index: no file of torch {torch}, which the data lists.")
    for err in result.errors:
        out.append(f"Could not read: {err}")
    if steps:
        out.append("")
        out.append("What the engine will do:")
        out.extend(f"  - {render(t)}" for t in steps)
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def run_refresh(args) -> int:
    from app.core.compat import refresh as compat_refresh

    if args.remove:
        removed = compat_refresh.forget()
        msg = ("The downloaded compatibility data was removed; the bundled data is used." if removed else
               "There is no downloaded compatibility data; the bundled data is used.")
        sys.stdout.write((json.dumps({"outcome": "removed" if removed else "none"}) if args.json else msg) + "\n")
        return 0
    done = compat_refresh.refresh(args.url, timeout=args.timeout, ca_bundle=args.ca_bundle)
    if args.json:
        sys.stdout.write(json.dumps(done.to_dict(), indent=2) + "\n")
        return 0
    if done.outcome == "updated":
        sys.stdout.write(f"Updated: compatibility data {done.version} ({done.date}) verified (key {done.key_id}) and "
                         f"installed in {done.folder}; the bundled data stays as the fallback.\n")
    else:
        sys.stdout.write(f"Already the newest: the published data is {done.version} ({done.date}); the data in use "
                         f"is {done.in_use}. Nothing was changed.\n")
    return 0
