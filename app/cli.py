"""``torch-setup``: the headless front end over the same core the wizard uses.

Each sub-command lives in ``app/commands/<name>.py`` and defines ``register(sub)``;
importing this module stays cheap (no Qt, no torch, no psutil) so that e.g.
``recommend --from-report`` answers fast.

Exit codes: 0 success, 1 failed (anything half-made was rolled back), 2 bad input
(nothing was done), 130 cancelled (rolled back).

Two things happen here for every command, in one place:

* no secret leaves on the console: ``sys.stdout`` / ``sys.stderr`` are wrapped in the masker
  (:class:`app.core.base.secrets.MaskingStream`), and the credentials in the command line and the
  environment are registered first, so a tool echoing them in another form is masked too; a
  windowed program, which has no console streams, writes into a log file instead
  (:mod:`app.core.base.streams`);
* a path argument that cannot be a path (a name over 255 bytes, NUL) is refused by the parser
  naming the option, and an ``OSError`` about a path (too long, permission denied on a
  parent ...) ends as exit 2 naming the option, never as a traceback.
"""
from __future__ import annotations

import argparse
import errno
import importlib
import json
import os
import sys
from typing import TYPE_CHECKING

from app import __version__
from app.core.base import consoles, printable, secrets, streams
from app.core.base.locations import local_path

if TYPE_CHECKING:  # start-up: the wizard's first window needs no error types
    from app.core.base.errors import UserError

COMMANDS = ("detect", "recommend", "install", "bundle", "verify", "bench", "doctor", "compat", "envs", "upgrade",
            "cache", "export", "fleet", "gui")


# The metavars of the options that take a file or folder: they get :func:`path_argument`.
PATH_METAVARS = frozenset({"PATH", "DIR", "FILE", "X.Y|PATH"})


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def path_argument(value: str) -> str:
    """An option's value that must be usable as a path; argparse names the option on refusal."""
    from app.core.base.schema import path_problem  # start-up: only when a path option is given

    problem = path_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return value


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # bad usage is "bad input": exit 2, as argparse does
        from app.core.base.errors import EXIT_BAD_INPUT

        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")

    def add_argument(self, *args, **kwargs):  # every file / folder option is checked as a path
        if kwargs.get("metavar") in PATH_METAVARS and "type" not in kwargs:
            kwargs["type"] = path_argument
        return super().add_argument(*args, **kwargs)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser; with ``only`` (a command name) just that sub-command is registered, so a
    command such as ``recommend --from-report`` does not pay for importing the others."""
    parser = _Parser(
        prog="torch-setup",
        description="Install PyTorch for this machine's accelerator, verify it and measure it. "
                    "With no command, the setup wizard opens.",
    )
    parser.add_argument("--version", action="version", version=f"torch-setup {__version__}")
    parser.add_argument("--self-test", action="store_true",
                        help="detect, build the wizard offscreen, show each page, and exit 0 or "
                             "print what failed")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        if only is not None and name != only:
            continue
        try:
            module = importlib.import_module(f"app.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"app.commands.{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    code = _masked(argv)
    _flush_quietly()
    return code


def _masked(argv: list[str] | None) -> int:
    """Run the command with the console streams masking every credential this run was given."""
    words = sys.argv[1:] if argv is None else list(argv)
    # Every credential this run was given, registered before anything is printed.
    secrets.remember_environ(os.environ)
    for word in words:
        secrets.remember_url(word)
    out, err = sys.stdout, sys.stderr
    # A redirected stream in a Windows code page (cp1252, cp936) cannot encode every path or
    # symbol: it writes escapes instead of ending the command with UnicodeEncodeError.
    consoles.tolerant_streams(out, err)
    # A windowed program (pythonw.exe, the windowed exe) has neither: prints, warnings and
    # tracebacks go to a log file there, opened when the first line comes.
    console_out, console_err, log = streams.console_streams(out, err)
    # ... and every control character from outside (a report's ESC sequences) shown, never acted on
    sys.stdout = printable.PrintableStream(secrets.MaskingStream(console_out))
    sys.stderr = printable.PrintableStream(secrets.MaskingStream(console_err))
    try:
        return _run(argv, words)
    except Exception:
        if log is not None:  # the traceback the windowed exe's dialog (or nothing) would show, kept
            import traceback

            traceback.print_exc(file=sys.stderr)
        raise
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed or broken console: nothing more to say
                pass
        sys.stdout, sys.stderr = out, err
        if log is not None:
            log.close()


def _option_of(args: argparse.Namespace, filename: object) -> str | None:
    """The option whose value is ``filename``, a parent of it or inside it, as ``--from-report``."""
    if not isinstance(filename, (str, bytes, os.PathLike)):
        return None

    def norm(p: str) -> str:
        try:
            return os.path.abspath(os.path.expanduser(p))
        except (OSError, ValueError):
            return p

    target = norm(os.fsdecode(filename))
    for dest, value in vars(args).items():
        for v in value if isinstance(value, list) else [value]:
            local = local_path(v) if isinstance(v, str) and v else None
            if local is None:  # not a path (a URL)
                continue
            given = norm(local)
            if target == given or target.startswith(given.rstrip(os.sep) + os.sep) or (
                    target != os.sep and given.startswith(target.rstrip(os.sep) + os.sep)):
                return "--" + dest.replace("_", "-")
    return None


_PATH_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.ELOOP,
                          errno.EISDIR, errno.ENOENT, errno.EROFS, errno.EEXIST})


def _path_error(args: argparse.Namespace, exc: OSError) -> int:
    """An OSError that escaped a command: exit 2 naming the option when it is about a path given."""
    from app.core.base.errors import EXIT_BAD_INPUT, EXIT_FAILED

    what = exc.strerror or str(exc) or type(exc).__name__
    name = os.fsdecode(exc.filename) if isinstance(exc.filename, (str, bytes, os.PathLike)) else ""
    option = _option_of(args, exc.filename)
    where = f" ({_short(name, 120)})" if name else ""
    bad_input = option is not None or bool(name and exc.errno in _PATH_ERRNOS)
    field = f"{option}: " if option else ""
    text = f"{field}the path cannot be used: {what}{where}." if bad_input else f"{what}{where}."
    try:
        print(f"torch-setup: {text}", file=sys.stderr)
    except (OSError, ValueError):  # the console itself is gone (a closed pipe)
        pass
    return EXIT_BAD_INPUT if bad_input else EXIT_FAILED


def _run(argv: list[str] | None, words: list[str]) -> int:
    if not words:  # no words at all opens the wizard: no parser is built (~4 ms of start-up)
        return _run_gui(words)
    from app.core.base.errors import EXIT_CANCELLED, UserError

    only = words[0] if words[0] in COMMANDS else None
    parser = build_parser(only)
    args = parser.parse_args(argv)
    try:
        if args.self_test:
            from app.selftest import main as self_test

            return self_test()
        if not args.command:
            from app.commands.gui import launch

            return launch([])
        return int(args.func(args) or 0)
    except UserError as err:
        if getattr(args, "json", False):
            _say(json.dumps(err.to_dict(), indent=2, ensure_ascii=False), sys.stdout)
        else:
            _say(f"torch-setup: {_error_text(err, words)}", sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        _say("torch-setup: cancelled.", sys.stderr)
        return EXIT_CANCELLED
    except OSError as exc:
        return _path_error(args, exc)


def _error_text(err: UserError, words: list[str]) -> str:
    """The error as the command line shows it, in TORCH_SETUP_LANG (English by default)."""
    from app.commands._errors import format_error  # start-up: only a failed run needs it
    from app.core.base.text import normalise_lang

    return format_error(err, words, normalise_lang(os.environ.get("TORCH_SETUP_LANG")))


def _say(text: str, stream) -> None:
    """A last line for the user; a console that went away (a closed pipe) does not change the exit code."""
    try:
        print(text, file=stream, flush=True)
    except (OSError, ValueError):
        pass


def _flush_quietly() -> None:
    """Flush stdout/stderr now; one that cannot be written (``| head``) is pointed at the null
    device, so the interpreter's own flush at exit cannot fail and turn the exit code into 120."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            try:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, stream.fileno())
                os.close(null)
            except (OSError, ValueError):
                pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


def _run_gui(words: list[str]) -> int:
    """The wizard, with no parser built and no error types loaded before its first window."""
    try:
        from app.gui.app import launch  # no arguments to parse: straight to the window

        return launch()
    except KeyboardInterrupt:
        from app.core.base.errors import EXIT_CANCELLED

        _say("torch-setup: cancelled.", sys.stderr)
        return EXIT_CANCELLED
    except Exception as exc:
        from app.core.base.errors import UserError

        if not isinstance(exc, UserError):
            raise
        _say(f"torch-setup: {_error_text(exc, words)}", sys.stderr)
        return exc.exit_code
