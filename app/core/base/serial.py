"""JSON for the core's dataclasses: one place that knows how to turn them into plain data.

:func:`dumps` is where JSON leaves the process (``--json``, report files): its text goes
through the secret masker (:mod:`app.core.base.secrets`)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.core.base.schema import dump
from app.core.base.secrets import mask, mask_data


def to_jsonable(obj: Any) -> Any:
    """``obj`` as plain JSON data: the one writer, :func:`app.core.base.schema.dump` (a record as it
    writes itself, a dataclass as its fields, tuples as lists, paths as text, enums as their value)."""
    return dump(obj)


def dumps(obj: Any, *, indent: int | None = 2) -> str:
    """``obj`` as JSON text, every credential and device identifier masked."""
    return mask(json.dumps(mask_data(to_jsonable(obj)), indent=indent, ensure_ascii=False))


def read_json_object(path: Path) -> dict[str, object]:
    """A small state file's JSON object ({} when it is missing, unreadable or not an object)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
