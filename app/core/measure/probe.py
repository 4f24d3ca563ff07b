"""Running a probe inside a target environment: ``<env python> -I app/probes/<x>.py [args]``.

The probe prints JSON lines (see DESIGN.md, "Probe protocol"). This module streams them as
:class:`~app.core.base.events.StepEvent` s, and turns every way a probe can go wrong into a clear
:class:`ProbeFailed` (a :class:`UserError`): the interpreter is missing, the process crashed
(segfault in a native library), it printed an error event (torch missing / cannot load),
it exited without a result, or it ran past its timeout. A cancel stops the probe's whole
process tree (the runner does that) and raises :class:`Cancelled`, or, for a probe that
prints what it measured while stopping (the speed test), returns that partial result as a
value (``keep_partial=True``: :attr:`ProbeOutput.cancelled` is then True).
"""
from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core import remedies
from app.core.base.errors import BadInput, Cancelled, ForFace, Hint, UserError
from app.core.base.events import EventCallback, LogEvent, StepEvent
from app.core.base.paths import new_log_path, probes_dir
from app.core.base.text import Msg, Text, msg
from app.core.proc import runner


class ProbeFailed(UserError):
    """A probe gave no usable result. ``kind``: crash | error | no-result | timeout | start."""

    def __init__(self, message: Text, hint: Hint = "", *, kind: str = "error", code: str | None = None,
                 facts: dict[str, Any] | None = None, **kw: Any) -> None:
        super().__init__(message, hint, **kw)
        self.kind = kind
        self.code = code  # the probe's own error code: torch-missing, torch-import-failed, ...
        self.facts = facts or {}  # what the probe said before it failed (interpreter facts)

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.update({"kind": self.kind, "code": self.code})
        return d


@dataclass(frozen=True)
class ProbeOutput:
    """What a probe printed. ``result`` is its result object; when ``cancelled`` (only with
    ``keep_partial``), it is what the probe printed while stopping, or ``{}`` if nothing."""

    result: dict[str, Any]
    steps: tuple[dict[str, Any], ...] = ()
    log_path: Path | None = None
    duration_s: float = 0.0
    cancelled: bool = False


def resolve_python(env: str | os.PathLike[str]) -> Path:
    """The interpreter of an environment folder (venv or conda), or an interpreter path itself.

    Raises :class:`BadInput` (exit 2) when ``env`` does not exist or holds no Python.
    """
    p = Path(env).expanduser()
    if not p.exists():
        raise BadInput(msg("probe.env_missing", "{path} does not exist", path=str(p)),
                       hint=msg("probe.env_missing_hint", "Give the folder of a virtual environment or conda "
                                "environment (the one holding bin/python or python.exe), or a Python interpreter."))
    if p.is_file():
        if os.access(p, os.X_OK) or p.suffix.lower() == ".exe":
            return p
        raise BadInput(msg("probe.not_a_program", "{path} is a file but not a program that can be run", path=str(p)),
                       hint=msg("probe.not_a_program_hint", "Give the environment folder or its python program."))
    for rel in ("bin/python", "bin/python3", "Scripts/python.exe", "python.exe"):
        cand = p / rel
        if cand.is_file():
            return cand
    raise BadInput(msg("probe.not_an_env", "{path} is not a Python environment: it holds no bin/python or "
                       "Scripts/python.exe", path=str(p)),
                   hint=ForFace(msg("probe.not_an_env_gui", "Choose the folder the assistant created (or any venv "
                                    "or conda environment), or a Python interpreter."),
                                msg("probe.not_an_env_cli", "Pass the folder `torch-setup install` created (or any "
                                    "venv / conda env), or the path of a Python interpreter.")),
                   code="not-an-env")


def probe_path(name: str) -> Path:
    return probes_dir() / f"{name}.py"


def probe_tables(name: str, tables: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The literal tables ``tables`` (``TITLES = {...}`` at a probe's top level) of probe ``name``,
    read from its source as data. A probe runs in the target environment's Python and never
    imports the app, and the app never imports a probe, so texts both need (the probe writes them
    into its raw output) live in the probe and are read here. A table that is missing or not a
    literal dict is a bug in the probe: ``LookupError``."""
    import ast  # only the verify texts need it, on first use

    found: dict[str, dict[str, Any]] = {}
    tree = ast.parse(probe_path(name).read_text(encoding="utf-8"))
    for node in tree.body:
        target: ast.expr
        if isinstance(node, ast.AnnAssign):
            target, value_node = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value_node = node.targets[0], node.value
        else:
            continue
        if not (isinstance(target, ast.Name) and target.id in tables and value_node is not None):
            continue
        try:
            value = ast.literal_eval(value_node)
        except ValueError:
            continue
        if isinstance(value, dict):
            found[target.id] = value
    missing = [t for t in tables if t not in found]
    if missing:
        raise LookupError(f"probe {name}: no literal table {', '.join(missing)}")
    return found


def _signal_name(rc: int | None) -> str | None:
    if rc is None or rc >= 0:
        # Windows reports an access violation as 0xC0000005.
        if rc is not None and rc & 0xFFFFFFFF == 0xC0000005:
            return "an access violation"
        return None
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


# long: one linear reading of the probe's output, each way it can fail named in turn
def run_probe(name: str, python: str | os.PathLike[str], args: Sequence[str] = (), *,
              on_event: EventCallback | None = None, cancel: runner.CancelToken | None = None,
              timeout_s: float | None = 300.0, env: dict[str, str] | None = None, what: str | None = None,
              log_name: str | None = None, keep_partial: bool = False) -> ProbeOutput:
    """Run probe ``name`` with ``python``; return its result object or raise ProbeFailed/Cancelled.

    With ``keep_partial``, a cancel is not an error: the output comes back with ``cancelled``
    set and the result the probe printed while stopping (``{}`` when it printed none).
    """
    told: Text = _WHAT.get(what or "") or what or msg("probe.what_probe", "the {name} probe", name=name)
    py = Path(python)
    script = probe_path(name)
    log_path = new_log_path(log_name or f"probe-{name}")
    steps: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []

    def on_line(stream: str, line: str) -> None:
        if stream == "stdout" and line.startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError:
                obj = None
            if isinstance(obj, dict):
                kind = obj.get("event")
                if kind == "step":
                    steps.append(obj)
                    if on_event is not None:
                        on_event(StepEvent(str(obj.get("name", "")), str(obj.get("status", "")),
                                           str(obj.get("detail", "")), _step_data(obj)))
                    return
                if kind == "result":
                    results.append(obj)
                    return
                if kind == "error":
                    errors.append(obj)
                    return
        if on_event is not None and line.strip():
            on_event(LogEvent(line, "stderr" if stream == "stderr" else "stdout"))

    child_env = env if env is not None else runner.clean_env()
    res = runner.run([str(py), "-I", str(script), *args], timeout=timeout_s, env=child_env,
                     on_line=on_line, cancel=cancel, log_path=log_path)
    facts = next((s.get("data") or {} for s in steps if s.get("name") == "python"), {})
    if res.cancelled:
        if keep_partial:
            return ProbeOutput(result=results[-1] if results else {}, steps=tuple(steps), log_path=log_path,
                               duration_s=res.duration_s, cancelled=True)
        raise Cancelled(msg("probe.cancelled", "{what:cap} was cancelled; its process was stopped.", what=told),
                        log_path=log_path)
    if res.start_error:
        raise ProbeFailed(msg("probe.not_started", "Could not start {python}: {reason}", python=str(py),
                              reason=res.start_error),
                          hint=msg("probe.not_started_hint", "Check that the environment still exists and its "
                                   "Python runs."),
                          kind="start", log_path=log_path)
    stderr_lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    relevant = runner.relevant_lines(stderr_lines, 10)
    found = remedies.diagnose([*stderr_lines, *(f"{e.get('type', '')}: {e.get('message', '')}" for e in errors)],
                              _context(env))
    if res.timed_out:
        raise ProbeFailed(msg("probe.timed_out", "{what:cap} did not finish within {seconds:.0f} s and was stopped.",
                              what=told, seconds=timeout_s or 0),
                          hint=msg("probe.timed_out_hint", "The device may be hung or very slow; try again, or "
                                   "allow it more time."),
                          kind="timeout", lines=relevant, log_path=log_path, facts=facts, remedies=found)
    sig = _signal_name(res.returncode)
    if sig and not results:
        last = steps[-1] if steps else None
        importing = bool(last and last.get("name") == "torch_import" and last.get("status") == "running")
        crash_hint = (ForFace(msg("probe.crash_import_gui", "PyTorch crashed the Python process while loading. "
                                  "Install it again (a broken or mismatched wheel, or a conflicting native library on "
                            "LD_LIBRARY_PATH, are the usual causes)."),
                        msg("probe.crash_import_cli", "PyTorch crashed the Python process while loading. Reinstall "
                            "it (a broken or mismatched wheel, or a conflicting native library on LD_LIBRARY_PATH, "
                            "are the usual causes); `torch-setup doctor` can look for the cause."))
                if importing else
                ForFace(msg("probe.crash_gui", "A native library crashed; the log has the details."),
                        msg("probe.crash_cli", "A native library crashed. `torch-setup doctor` can look for a cause; "
                            "the log has the details.")))
        crashed = (msg("probe.crashed_during", "{what:cap} crashed (killed by {signal}) while running '{step}'.",
                       what=told, signal=sig, step=str(last.get("name"))) if last else
                   msg("probe.crashed", "{what:cap} crashed (killed by {signal}).", what=told, signal=sig))
        raise ProbeFailed(crashed, hint=crash_hint, kind="crash", code="torch-crashed" if importing else "crash",
                          lines=relevant, log_path=log_path, facts=facts, remedies=found)
    if errors and not results:
        err = errors[-1]
        said = f"{err.get('type', 'Error')}: {err.get('message', '')}".strip()
        tb = [ln for ln in str(err.get("traceback", "")).splitlines() if ln.strip()]
        code = err.get("code")
        found = remedies.diagnose([*tb, said], _context(env)) or found
        message: Text
        hint: Hint = str(err.get("hint", ""))
        if code == "torch-missing":
            where = py.parent.parent if py.parent.name in ("bin", "Scripts") else py
            message = msg("probe.torch_missing", "PyTorch is not installed in {path}.", path=str(where))
            hint = msg("probe.torch_missing_hint", "Install PyTorch into this environment.")
        elif code == "torch-import-failed":
            message = msg("probe.torch_import_failed", "PyTorch is installed but cannot be loaded ({error}).",
                          error=said[:200])
            hint = "" if found else msg("probe.torch_import_failed_hint", "Install PyTorch into this environment "
                                        "again; the lines below say what failed to load.")
        else:
            message = msg("probe.failed", "{what:cap} failed: {error}", what=told, error=said[:300])
        raise ProbeFailed(message, hint=hint, kind="error", code=code,
                          lines=runner.relevant_lines(tb, 8) or relevant, log_path=log_path,
                          facts=err.get("interpreter") or facts, remedies=found)
    if not results:
        raise ProbeFailed(msg("probe.no_result", "{what:cap} ended ({outcome}) without a result.", what=told,
                              outcome=remedies.run_outcome(res.returncode, timed_out=res.timed_out,
                                                           duration_s=res.duration_s, start_error=res.start_error)),
                          hint="" if found else msg("probe.no_result_hint", "The environment's Python may be "
                                                    "broken; the log has its output."),
                          kind="no-result", lines=relevant or res.tail[-8:], log_path=log_path, facts=facts,
                          remedies=found)
    return ProbeOutput(result=results[-1], steps=tuple(steps), log_path=log_path, duration_s=res.duration_s)


#: The steps callers name, as words (``run_probe(what="the verification")``).
_WHAT: dict[str, Msg] = {
    "the verification": msg("probe.what_verify", "the verification"),
    "the speed test": msg("probe.what_bench", "the speed test"),
}


def _context(env: Mapping[str, str] | None) -> remedies.Context:
    """What the catalogue needs for a probe's failure: the OS and CUDA_VISIBLE_DEVICES."""
    family = "windows" if os.name == "nt" else ("macos" if sys.platform == "darwin" else "linux")
    return remedies.Context.with_env(("CUDA_VISIBLE_DEVICES",), env if env is not None else os.environ,
                                     os_family=family)


def _step_data(obj: dict[str, Any]) -> dict[str, Any] | None:
    data = dict(obj.get("data") or {})
    if obj.get("title"):
        data.setdefault("title", obj["title"])
    return data or None

