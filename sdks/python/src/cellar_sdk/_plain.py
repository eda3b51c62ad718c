"""Duck-typed reading of provider SDK objects (pydantic models, dicts, plain objects)."""

from __future__ import annotations

import datetime as _dt
from typing import Any

_MAX_DEPTH = 64


def to_plain(value: Any, depth: int = 0) -> Any:
    """JSON-ready data from a provider object: ``model_dump()`` when it has one, else its fields.

    Copy-on-write: dicts and lists that are already plain are returned as they are (the sender
    thread reads them; nothing here mutates them), so a plain request costs one walk, no copies.
    """
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, dict):
        out = None
        for k, v in value.items():
            p = to_plain(v, depth + 1)
            if out is None and (p is not v or not isinstance(k, str)):
                out = {}
                for k2, v2 in value.items():
                    if k2 is k:
                        break
                    out[str(k2)] = v2
            if out is not None:
                out[str(k)] = p
        return value if out is None else out
    if isinstance(value, (list, tuple)):
        items = None
        for i, v in enumerate(value):
            p = to_plain(v, depth + 1)
            if items is None and (p is not v or isinstance(value, tuple)):
                items = list(value[:i])
            if items is not None:
                items.append(p)
        return value if items is None else items
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return to_plain(dump(mode="json", exclude_none=True), depth + 1)
        except TypeError:
            return to_plain(dump(), depth + 1)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_plain(to_dict(), depth + 1)
    if hasattr(value, "__dict__"):
        return {k: to_plain(v, depth + 1) for k, v in vars(value).items() if not k.startswith("_")}
    return str(value)


def copy_plain(value: Any) -> Any:
    """A copy of plain data (dicts and lists rebuilt), for code that may edit it in place."""
    if isinstance(value, dict):
        return {k: copy_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_plain(v) for v in value]
    return value


def field(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` for dicts, ``obj.name`` otherwise."""
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def iso(ts: float) -> str:
    """An epoch time as ISO 8601 UTC with milliseconds, as every Cellar reader stores it."""
    return _dt.datetime.fromtimestamp(ts, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
