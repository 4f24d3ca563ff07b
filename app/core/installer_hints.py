"""What to do when an installer fails: its output lines -> one plain-language hint.

uv's and pip's messages for the same cause differ ("No space left on device (os error 28)" /
"[Errno 28] No space left on device"), so each rule lists the lowercase needles that mark it;
the first rule with a needle in the output wins. The network rule comes before "no build
exists": pip that cannot reach its index ends with "No matching distribution found" too
(tests/fixtures/pip/fail-connection-refused-23.2.1.txt), and the cause to tell is the network.

Shared by the install (:mod:`app.core.install`) and the bundle builder (:mod:`app.core.bundle`).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from app.core.text import Msg, Text, msg

__all__ = ["HINTS", "Hint", "hint_for", "match_hint"]


@dataclass(frozen=True)
class Hint:
    needles: tuple[str, ...]  # lowercase fragments of the installer's output
    text: Msg


HINTS: tuple[Hint, ...] = (
    Hint(("no space left", "space left on device", "errno 28", "os error 28", "disk quota"),
         msg("install.hint_disk_full", "The disk is full. Free some space or choose a location on another disk.")),
    Hint(("read-only file system", "permission denied", "os error 13", "errno 13"),
         msg("install.hint_no_write", "The assistant could not write there. Choose a folder you own.")),
    Hint(("do not match the hashes", "hash mismatch", "hashes are required"),
         msg("install.hint_hash_mismatch",
             "A downloaded file does not match its expected hash: the bundle or download is damaged; "
             "build or download it again.")),
    Hint(("failed to fetch", "connection refused", "could not connect", "name or service not known",
          "temporary failure in name resolution", "dns error", "network is unreachable",
          "newconnectionerror", "connecterror", "timed out", "certificate verify",
          "ssl error", "sslerror", "invalid peer certificate", "proxy"),
         msg("install.hint_network",
             "The network or the index failed. Check the connection, a proxy (HTTPS_PROXY), a CA "
             "bundle (--ca-bundle), or use an offline bundle.")),
    Hint(("no matching distribution", "no solution found", "not found in the package registry",
          "could not find a version", "we can conclude", "unsatisfiable"),
         msg("install.hint_no_build",
             "No build of these packages exists for this Python and platform on the chosen index. "
             "Check the versions, the Python version, or the index URL.")),
    Hint(("ensurepip", "python3-venv", "no module named venv"),
         msg("install.hint_no_venv",
             "This Python cannot create virtual environments. On Debian/Ubuntu install python3-venv, "
             "or use --installer uv.")),
    Hint(("no interpreter found", "no python", "download python", "managed python", "python downloads"),
         msg("install.hint_no_python",
             "uv found no matching Python and could not download one (downloads need internet). "
             "Install that Python version here or pass --python PATH.")),
)


def match_hint(lines: Iterable[str]) -> Msg | None:
    """The hint of the first rule whose needle occurs in ``lines``, or None."""
    text = "\n".join(lines).lower()
    for rule in HINTS:
        if any(n in text for n in rule.needles):
            return rule.text
    return None


def hint_for(lines: Iterable[str], default: Text) -> Text:
    """:func:`match_hint`, or ``default`` when no rule matches."""
    found = match_hint(lines)
    return found if found is not None else default
