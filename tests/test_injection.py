"""Issue 27, injection: a crafted folder name never runs a command, and a report's escape
sequences never reach the terminal raw.

* "Open a terminal here" writes an rc file that a real ``bash`` sources (``bash --rcfile RC -i``,
  as the terminal runs it); the env is a real uv venv whose folder name carries ``$( )``, ``;``,
  backticks, quotes of both kinds or a backslash. The command in the name (``touch pwned``) must
  never run, and the shell must end up with that env active and in its parent folder. A name
  with a newline or an escape character is refused before anything is written.
* fish's quoting (``\\`` and ``\\'`` are escapes inside its single quotes) has its own quoter.
* ``torch-setup detect --from-report`` style output: text from outside (a GPU name holding
  ``ESC[2J`` or a C1 control) is printed with the control characters made visible, by the one
  filter on the CLI's streams; the assistant's own progress bar keeps its ``\\r ESC[K``.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.base.errors import BadInput
from app.core.base.shells import CMD, POSIX, fish_quote, unquotable
from app.core.lifecycle import terminal
from tests.helpers import bare_venv

BASH = shutil.which("bash")

CRAFTED = [
    "x$(touch pwned)",
    "x;touch pwned;",
    "x`touch pwned`",
    "x'$(touch pwned)'",
    "x'; touch pwned; echo '",
    'x"$(touch pwned)"',
    "x\\'$(touch pwned)",
    "x & touch pwned &",
    "x|touch pwned",
]


def _source_rc(tmp_path: Path, name: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    (tmp_path / "home").mkdir(exist_ok=True)
    env = tmp_path / name
    bare_venv(env)
    rc = terminal._rc_file(env)
    try:
        res = subprocess.run([BASH or "bash", "--rcfile", str(rc), "-i"], input='echo "VE=$VIRTUAL_ENV"; pwd\nexit\n',
                             capture_output=True, text=True, timeout=60, cwd=tmp_path,
                             env={"HOME": str(tmp_path / "home"), "PATH": os.environ.get("PATH", ""),
                                  "TERM": "dumb"})
    finally:
        rc.unlink()
    return res, env


@pytest.mark.posix_only("the rc file is a bash script; Windows opens cmd in the env's folder with no path in it")
@pytest.mark.skipif(BASH is None, reason="needs bash")
@pytest.mark.parametrize("name", CRAFTED)
def test_rc_file_never_runs_a_command_from_the_folder_name(tmp_path: Path, name: str) -> None:
    res, env = _source_rc(tmp_path, name)
    assert not (tmp_path / "pwned").exists(), f"the folder name {name!r} ran a command: {res.stderr[-400:]}"
    assert not (env.parent / "pwned").exists()
    assert f"VE={env}" in res.stdout, res.stdout + res.stderr  # the env really is active
    assert f"PyTorch environment {name} is active" in res.stdout


@pytest.mark.posix_only("newlines and escapes in folder names are a POSIX matter")
@pytest.mark.parametrize("name", ["x\ntouch pwned", "x\x1b]0;owned\x07", "x\rtouch pwned"])
def test_rc_file_refuses_a_name_no_quoting_makes_safe(tmp_path: Path, name: str) -> None:
    env = tmp_path / name
    env.mkdir()
    before = set(Path(os.environ.get("TMPDIR", "/tmp")).glob("torch-setup-*.bashrc"))
    with pytest.raises(BadInput) as err:
        terminal._rc_file(env)
    assert "cannot be given safely" in str(err.value)
    assert "\n" not in str(err.value.message) and "\x1b" not in str(err.value.message)
    assert set(Path(os.environ.get("TMPDIR", "/tmp")).glob("torch-setup-*.bashrc")) == before  # nothing written


def test_unquotable_characters() -> None:
    assert unquotable("/home/u/my env (1)", POSIX) is None
    assert unquotable("/home/u/a\nb", POSIX) == "\n"
    assert unquotable("C:\\Users\\u\\100%", CMD) == "%"
    assert unquotable("C:\\Users\\u\\100%", POSIX) is None
    assert unquotable("x\x9bc", POSIX) == "\x9b"


def test_fish_quote_escapes_what_fish_reads_inside_single_quotes() -> None:
    assert fish_quote("/plain/path") == "/plain/path"
    assert fish_quote("/a b/it's") == "'/a b/it\\'s'"
    assert fish_quote("/x\\'; touch pwned; '") == "'/x\\\\\\'; touch pwned; \\''"


@pytest.mark.skipif(shutil.which("fish") is None, reason="needs fish")
def test_fish_reads_the_quoted_word_back(tmp_path: Path) -> None:
    for word in CRAFTED:
        res = subprocess.run(["fish", "-c", f"printf %s {fish_quote(word)}"], capture_output=True, text=True,
                             cwd=tmp_path, timeout=30)
        assert res.stdout == word
        assert not (tmp_path / "pwned").exists()


# ------------------------------------------------------------------ escape sequences on the console

HOSTILE_GPU = "NVIDIA \x1b[2J\x1b]0;owned\x07RTX \x9b31m 4090\u202e"


def test_printable_makes_control_characters_visible() -> None:
    from app.core.base.printable import CLEAR_LINE, Own, printable

    shown = printable(HOSTILE_GPU)
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown and "\u202e" not in shown
    assert "\\u001b[2J" in shown and "RTX" in shown
    assert printable("line one\n\ttwo\r\n") == "line one\n\ttwo\r\n"
    # the assistant's own clear-line passes only as its own text: a report holding it has it shown
    assert printable(Own(CLEAR_LINE)) == CLEAR_LINE
    assert printable("\r\x1b[Kfake 100% done") == "\\u000d\\u001b[Kfake 100% done"
    assert printable("a\rb") == "a\\u000db"
    assert printable("中文 ✓") == "中文 ✓"


def test_json_stays_valid_and_equal_after_the_filter() -> None:
    from app.core.base.printable import printable

    text = json.dumps({"gpu": HOSTILE_GPU + "\x7f"}, ensure_ascii=False)
    shown = printable(text)
    assert "\x7f" not in shown and "\u202e" not in shown
    assert json.loads(shown) == {"gpu": HOSTILE_GPU + "\x7f"}


def test_cli_prints_a_hostile_report_without_raw_escapes(tmp_path: Path) -> None:
    """``recommend --from-report`` prints the report's GPU name: its escapes arrive visible."""
    repo = Path(__file__).resolve().parents[1]
    doc = json.loads((repo / "tests/fixtures/reports/macos-rosetta-python.json").read_text(encoding="utf-8"))
    doc["gpus"][0]["name"] = HOSTILE_GPU
    report = tmp_path / "report.json"
    report.write_text(json.dumps(doc), encoding="utf-8")
    env = {**os.environ, "TORCH_SETUP_HOME": str(tmp_path / "home"), "PYTHONIOENCODING": "utf-8"}
    res = subprocess.run([sys.executable, "-m", "app", "recommend", "--from-report", str(report)], cwd=repo,
                         capture_output=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    out = res.stdout.decode("utf-8", "replace") + res.stderr.decode("utf-8", "replace")
    assert "RTX" in out, out[-2000:]  # the name is shown ...
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in out, f"{raw!r} reached the terminal raw"
    assert "\\u001b[2J" in out  # ... with its escape made visible
    res = subprocess.run([sys.executable, "-m", "app", "recommend", "--from-report", str(report), "--json"],
                         cwd=repo, capture_output=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    text = res.stdout.decode("utf-8")
    assert "\x9b" not in text and "\u202e" not in text
    json.loads(text)  # still valid JSON


def test_renderer_bar_keeps_its_own_escape_through_the_filter() -> None:
    from app.commands._render import Renderer
    from app.core.base.printable import PrintableStream

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    from app.core.base.events import ProgressEvent
    from app.core.base.printable import CLEAR_LINE

    inner = Tty()
    r = Renderer(PrintableStream(inner))  # type: ignore[arg-type]
    r._write("uv says \x1b[31mred")
    assert inner.getvalue() == "uv says \\u001b[31mred\n"
    # the bar's own clear-line reaches the terminal; one in a package name from outside does not
    r(ProgressEvent("evil\r\x1b[Kpkg", 50, 100))
    r._write("done")
    shown = inner.getvalue()
    assert shown.count(CLEAR_LINE) == 2 and "evil\\u000d\\u001b[Kpkg" in shown, repr(shown)
