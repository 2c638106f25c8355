"""Type checks for data read back from JSON: a report given to `tpucheck merge`, a cache
entry, a notebook.

`json.load` returns whatever the file holds, and these files come from outside the
process (another machine's shard, a cache directory anyone could write, a notebook
from the scanned tree), so each value is checked for the exact type expected before it
is used. A mismatch raises TypeError naming the field, which each caller turns into its
own answer (a malformed-report error, a cache miss); `json_type` names what was found,
in JSON's own words, for messages.
"""

from __future__ import annotations

from typing import Any

__all__ = ["expect_bool", "expect_int", "expect_list", "expect_str", "json_type", "optional_str"]


def json_type(value: Any) -> str:
    """JSON's name for the type of a value `json.load` returned."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def expect_str(value: Any, what: str = "value") -> str:
    if type(value) is not str:
        raise TypeError(f"{what} must be a string")
    return value


def optional_str(value: Any, what: str = "value") -> str | None:
    return None if value is None else expect_str(value, what)


def expect_int(value: Any, what: str = "value") -> int:
    """An integer; `true` is not one, although Python's bool is an int."""
    if type(value) is not int:
        raise TypeError(f"{what} must be an integer")
    return value


def expect_bool(value: Any, what: str = "value") -> bool:
    if type(value) is not bool:
        raise TypeError(f"{what} must be a boolean")
    return value


def expect_list(value: Any, what: str = "value", length: int | None = None) -> list[Any]:
    """A list, of exactly `length` items when given (a fixed-shape record)."""
    if type(value) is not list:
        raise TypeError(f"{what} must be a list")
    if length is not None and len(value) != length:
        raise TypeError(f"{what} must have {length} items")
    return value
