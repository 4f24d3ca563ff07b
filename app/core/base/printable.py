"""Text from outside made safe to print on a terminal: the one filter on the CLI's streams.

A report, a tool's output or a folder name can hold control characters: ``ESC [2J`` clears the
screen, ``ESC ]0;…BEL`` retitles the window, a C1 ``CSI`` (U+009B) does the same on some
terminals, a lone ``\\r`` overwrites what was said, a bidi override (U+202E) shows a name
backwards. :func:`printable` writes each as a visible ``\\uXXXX`` escape (which is also the
character's JSON escape, so ``--json`` output stays valid and reads back the same); newline and
tab stay. The one control sequence that passes is the assistant's own "clear the line"
(``\\r ESC[K``, the progress bar), written as :class:`Own` text: a report that carries the same
characters has them shown, wherever they stand.

The CLI wraps ``sys.stdout`` / ``sys.stderr`` in :class:`PrintableStream` (outside the masker),
so every print from every command passes here; no command escapes text on its own.
"""
from __future__ import annotations

import io
import re
from typing import TextIO

__all__ = ["CLEAR_LINE", "Own", "PrintableStream", "printable"]

#: The assistant's own escape: back to the start of the line and clear it (the progress bar).
CLEAR_LINE = "\r\x1b[K"
# C0 but tab and newline, DEL, C1, the bidi controls (embeddings, overrides, isolates), and lone
# surrogates: a POSIX path that is not UTF-8 (a Latin-1 folder name) reaches Python as surrogate
# escapes, which no terminal encoding can write (they are shown as their JSON escape, \udce9).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _visible(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group(0)):04x}"


class Own(str):
    """A control sequence the assistant itself writes (:data:`CLEAR_LINE`), passed as it is."""

    __slots__ = ()


def printable(text: str) -> str:
    """``text`` with its control characters shown as ``\\uXXXX`` (CRLF kept); :class:`Own` text as it is."""
    if isinstance(text, Own):
        return str(text)
    if not isinstance(text, str) or not _CONTROL.search(text):
        return text
    parts = text.split("\r\n")
    return "\r\n".join(_CONTROL.sub(_visible, p) for p in parts)


class PrintableStream(io.TextIOBase):
    """A text stream that writes :func:`printable` text to ``inner`` (the masker's stream)."""

    def __init__(self, inner: TextIO | io.TextIOBase) -> None:
        super().__init__()
        self.inner = inner

    def write(self, s: str) -> int:
        self.inner.write(printable(s))
        return len(s)

    def flush(self) -> None:
        self.inner.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return bool(self.inner.isatty())

    def fileno(self) -> int:
        return self.inner.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # the wrapped stream's
        return str(getattr(self.inner, "encoding", None) or "utf-8")

    @property
    def errors(self) -> str | None:  # type: ignore[override]  # the wrapped stream's
        value = getattr(self.inner, "errors", None)
        return str(value) if value is not None else None
