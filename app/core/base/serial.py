"""JSON for the core's dataclasses: one place that knows how to turn them into plain data.

:func:`dumps` is where JSON leaves the process (``--json``, report files): its text goes
through the secret masker (:mod:`app.core.base.secrets`)."""
from __future__ import annotations

import dataclasses
import enum
import json
from pathlib import Path, PurePath
from typing import Any

from app.core.base.secrets import mask, mask_data


def to_jsonable(obj: Any) -> Any:
    if hasattr(obj, "to_dict") and not isinstance(obj, type):
        return obj.to_dict()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, PurePath):
        return str(obj)
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in obj]
    return obj


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
