"""A service call's arguments, result and error as JSON on the hook socket, and back as the
same Python objects (docs/cli.md#a-running-server-answers): the CLI renders what it gets back
with the code it renders a result of its own store with, so both paths print the same bytes.

A result is the service's frozen dataclasses (core/), tuples kept apart from lists: an object
on the wire is always one of three wrappers, {"t": [...]} a tuple, {"d": {...}} a dict,
{"c": "module:Class", "f": {...}} a dataclass of one of the core modules in MODULES. Nothing
else is built from what the socket sends.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
from typing import Any

from mcp_memory.core import errors

#: The modules whose dataclasses a result may hold (every result of the CLI's five commands).
MODULES = frozenset(
    {
        "mcp_memory.core.service",
        "mcp_memory.core.model",
        "mcp_memory.core.paging",
        "mcp_memory.core.timespan",
        "mcp_memory.core.fusion",
        "mcp_memory.core.judgment",
        "mcp_memory.core.requests",
    }
)


class Undecodable(ValueError):
    """What came over the socket is not a result this module wrote."""


def encode(value: Any) -> Any:
    """`value` as JSON-ready data; TypeError for a type a result never holds."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"n": repr(value)}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, tuple):
        return {"t": [encode(v) for v in value]}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("a dict with a key that is not a string")
        return {"d": {k: encode(v) for k, v in value.items()}}
    kind = type(value)
    if dataclasses.is_dataclass(value) and kind.__module__ in MODULES:
        fields = {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"c": f"{kind.__module__}:{kind.__qualname__}", "f": fields}
    raise TypeError(f"{kind.__qualname__} is not sent over the hook socket")


def decode(data: Any) -> Any:
    """What `encode` was given; Undecodable for anything it does not write."""
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise Undecodable("not an encoded value")
    if len(data) == 1 and isinstance(data.get("t"), list):
        return tuple(decode(v) for v in data["t"])
    if len(data) == 1 and isinstance(data.get("d"), dict):
        return {k: decode(v) for k, v in data["d"].items()}
    if len(data) == 1 and data.get("n") in ("inf", "-inf", "nan"):
        return float(data["n"])
    if set(data) == {"c", "f"} and isinstance(data["c"], str) and isinstance(data["f"], dict):
        return _dataclass(data["c"], data["f"])
    raise Undecodable("not an encoded value")


def _dataclass(name: str, given: dict[str, Any]) -> Any:
    module, _, qualname = name.partition(":")
    if module not in MODULES:
        raise Undecodable("a class from elsewhere")
    kind = getattr(importlib.import_module(module), qualname, None)
    if not isinstance(kind, type) or not dataclasses.is_dataclass(kind):
        raise Undecodable("not a dataclass")
    fields = dataclasses.fields(kind)
    if set(given) != {f.name for f in fields}:
        raise Undecodable("other fields")
    values = {f.name: decode(given[f.name]) for f in fields}
    made = kind(**{f.name: values[f.name] for f in fields if f.init})
    for field in fields:
        if not field.init:
            object.__setattr__(made, field.name, values[field.name])
    return made


def encode_error(exc: errors.MemoryServerError) -> dict[str, Any]:
    """A refusal or failure of the service: its nearest class of core/errors.py and its text."""
    kind = next(k for k in type(exc).__mro__ if getattr(errors, k.__name__, None) is k)
    if isinstance(exc, errors.InvalidArgument):  # its text before the edge names the field
        message = str(exc.args[0]) if exc.args else ""
    else:
        message = str(exc)
    return {"type": kind.__name__, "message": message, "field": getattr(exc, "field", None)}


def decode_error(data: Any) -> errors.MemoryServerError:
    """The error `encode_error` described, raised again on this side."""
    if not isinstance(data, dict) or not isinstance(data.get("message"), str):
        raise Undecodable("not an encoded error")
    kind = getattr(errors, str(data.get("type")), None)
    if not isinstance(kind, type) or not issubclass(kind, errors.MemoryServerError):
        raise Undecodable("not an error of core/errors.py")
    field = data.get("field")
    if issubclass(kind, errors.InvalidArgument):
        return kind(data["message"], field=field if isinstance(field, str) else None)
    return kind(data["message"])
