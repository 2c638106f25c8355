"""The loaded rule set, kept between runs in the user's cache folder.

Reading the rule files, validating them against their schema and building the model is
most of what a run does before it scans (about half a second for the built-in rules): a
rescan of an unchanged tree would spend more on its rules than on its files. So the
result of loading a list of rule files (the `Ruleset` and the problems found) is stored
under a key that hashes everything it depends on: every rule file's name and bytes, the
built-in judgement and the schema, tpucheck's version and source (a development checkout
changes the loader without changing the version) and the Python version. Any change is a
new key; old entries are never read again (delete the folder whenever you like).

An entry is JSON written from the model's own types (never pickle), and reading one
checks every value against the type its dataclass field declares, rebuilding regexes and
tuples as it goes. An entry that is missing, unreadable, malformed, of another layout or
key, or fails any check is rebuilt from the rule files, and a cache that cannot be
written is not written: the store can make a run faster, never different.

The folder is `$XDG_CACHE_HOME/tpucheck/rulesets` (`~/.cache/tpucheck/rulesets`), where
the result cache keeps its secret; `TPUCHECK_NO_RULESET_CACHE=1` turns the store off.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import sys
import tempfile
import types
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import tpucheck
from tpucheck.ruleset.model import Ruleset
from tpucheck.ruleset.problems import RuleProblem
from tpucheck.ruleset.versions import Version

__all__ = ["StoreError", "code_digest", "decode", "encode", "fetch", "keep", "store_key", "user_cache_dir"]

LAYOUT = "ruleset-v1"
"""Bump when the encoding changes: entries of another layout are rebuilt."""
MAX_ENTRY_BYTES = 64 * 1024 * 1024
DISABLE_ENV = "TPUCHECK_NO_RULESET_CACHE"


class StoreError(Exception):
    """A value that does not fit its declared type (reading), or a type the encoding does
    not know (writing)."""


def user_cache_dir() -> str:
    """`$XDG_CACHE_HOME/tpucheck`, else `~/.cache/tpucheck`: outside every scanned tree."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tpucheck")


_CODE_DIGEST: str | None = None


def code_digest() -> str:
    """Of the package's own source (its `.py` files and the rule schema): a development
    checkout changes the code without changing `__version__`, and what it built before
    must then not look current."""
    global _CODE_DIGEST
    if _CODE_DIGEST is None:
        hasher = hashlib.sha256()
        package = Path(tpucheck.__file__).resolve().parent
        try:
            sources = sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)
            for source in [*sources, package / "schema" / "rules.schema.json"]:
                hasher.update(source.relative_to(package).as_posix().encode("utf-8") + b"\0")
                hasher.update(source.read_bytes() + b"\0")
        except OSError:
            hasher.update(b"unreadable package source")
        _CODE_DIGEST = hasher.hexdigest()
    return _CODE_DIGEST


def store_key(files: Iterable[Path], also: Iterable[Path] = ()) -> str | None:
    """The key of loading these rule files (`also`: files the loader may read besides,
    such as the built-in judgement); None when one cannot be read (the loader reports it)."""
    hasher = hashlib.sha256()
    for part in (LAYOUT, tpucheck.__version__, code_digest(), f"{sys.version_info[0]}.{sys.version_info[1]}"):
        hasher.update(part.encode("utf-8") + b"\0")
    for kind, paths in ((b"rules", files), (b"also", also)):
        for path in paths:
            try:
                data = path.read_bytes()
            except OSError:
                return None
            hasher.update(kind + b"\0" + os.fsencode(path.resolve()) + b"\0" + hashlib.sha256(data).digest())
    return hasher.hexdigest()


def _entry_path(key: str) -> str:
    return os.path.join(user_cache_dir(), "rulesets", f"{key}.json")


def fetch(key: str) -> tuple[Ruleset, list[RuleProblem]] | None:
    """The entry stored under `key`, checked field by field; None for anything else."""
    if os.environ.get(DISABLE_ENV):
        return None
    try:
        with open(_entry_path(key), "rb") as handle:
            raw = handle.read(MAX_ENTRY_BYTES + 1)
        if len(raw) > MAX_ENTRY_BYTES:
            return None
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("layout") != LAYOUT or data.get("key") != key:
            return None
        ruleset = decode(data.get("ruleset"), Ruleset)
        problems = decode(data.get("problems"), tuple[RuleProblem, ...])
    except (OSError, ValueError, StoreError, RecursionError, TypeError, re.error):
        return None
    return ruleset, list(problems)


def keep(key: str, ruleset: Ruleset, problems: list[RuleProblem]) -> None:
    """Store an entry (written whole or not at all); a failure is silent."""
    if os.environ.get(DISABLE_ENV):
        return
    try:
        payload = json.dumps(
            {"layout": LAYOUT, "key": key, "ruleset": encode(ruleset, Ruleset), "problems": encode(tuple(problems), tuple[RuleProblem, ...])},
            ensure_ascii=False,
            separators=(",", ":"),
        ).encode("utf-8")
    except (StoreError, ValueError, TypeError, RecursionError):
        return
    path = _entry_path(key)
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".part")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


# --------------------------------------------------------------------------- the encoding


def encode(value: Any, hint: Any) -> Any:
    """A JSON-able form of `value`, read as its declared type `hint`."""
    return _codec(hint)[0](value)


def decode(data: Any, hint: Any) -> Any:
    """The value of type `hint` that `encode` wrote as `data`; StoreError if it is not one."""
    return _codec(hint)[1](data)


Codec = tuple[Callable[[Any], Any], Callable[[Any], Any]]
_CODECS: dict[Any, Codec] = {}


def _codec(hint: Any) -> Codec:
    found = _CODECS.get(hint)
    if found is None:
        found = _CODECS[hint] = _make(hint)
    return found


def _make(hint: Any) -> Codec:
    if hint is str or hint is bool:
        return _identity, _checked(hint)
    if hint is int:
        return _identity, _checked_int
    if hint is float:
        return _identity, _checked_float
    if hint is type(None):
        return _identity, _checked_none
    if hint is Version:  # a plain class (slots, no dataclass): its parts
        return (lambda value: list(value.parts)), (lambda data: Version.of(tuple(_checked_int(p) for p in _list(data))))
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _dataclass_codec(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is re.Pattern:
        return _encode_regex, _decode_regex
    if origin is types.UnionType or origin is typing.Union:
        return _union_codec(args)
    if origin is tuple:
        return _tuple_codec(args)
    if origin is frozenset:
        element = _codec(args[0])
        return (lambda value: sorted((element[0](v) for v in value), key=_canonical)), (lambda data: frozenset(element[1](v) for v in _list(data)))
    if origin is dict:
        key, item = _codec(args[0]), _codec(args[1])
        return (lambda value: [[key[0](k), item[0](v)] for k, v in value.items()]), (lambda data: {key[1](k): item[1](v) for k, v in map(_pair, _list(data))})
    raise StoreError(f"no encoding for {hint!r}")


def _identity(value: Any) -> Any:
    return value


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _checked(kind: type) -> Callable[[Any], Any]:
    def check(data: Any) -> Any:
        if type(data) is not kind:
            raise StoreError(f"expected {kind.__name__}")
        return data

    return check


def _checked_int(data: Any) -> int:
    if type(data) is not int:
        raise StoreError("expected int")
    return data


def _checked_float(data: Any) -> float:
    if type(data) is not float and type(data) is not int:
        raise StoreError("expected float")
    return float(data)


def _checked_none(data: Any) -> None:
    if data is not None:
        raise StoreError("expected null")


def _list(data: Any) -> list[Any]:
    if type(data) is not list:
        raise StoreError("expected a list")
    return data


def _pair(data: Any) -> tuple[Any, Any]:
    items = _list(data)
    if len(items) != 2:
        raise StoreError("expected a pair")
    return items[0], items[1]


def _encode_regex(value: re.Pattern[str]) -> Any:
    if not isinstance(value.pattern, str):
        raise StoreError("a bytes regex")
    return {"re": value.pattern, "flags": value.flags}


def _decode_regex(data: Any) -> re.Pattern[str]:
    if type(data) is not dict or set(data) != {"re", "flags"} or type(data["re"]) is not str or type(data["flags"]) is not int:
        raise StoreError("expected a regex")
    return re.compile(data["re"], data["flags"])


def _union_codec(args: tuple[Any, ...]) -> Codec:
    """`X | None` (the only unions the model has): null, or an X."""
    others = [a for a in args if a is not type(None)]
    if len(others) != 1 or len(args) != 2:
        raise StoreError(f"no encoding for the union {args!r}")
    inner = _codec(others[0])
    return (lambda value: None if value is None else inner[0](value)), (lambda data: None if data is None else inner[1](data))


def _tuple_codec(args: tuple[Any, ...]) -> Codec:
    if len(args) == 2 and args[1] is Ellipsis:
        element = _codec(args[0])
        return (lambda value: [element[0](v) for v in value]), (lambda data: tuple(element[1](v) for v in _list(data)))
    parts = [_codec(a) for a in args]

    def encode_fixed(value: Any) -> Any:
        if len(value) != len(parts):
            raise StoreError("a tuple of another length")
        return [part[0](v) for part, v in zip(parts, value, strict=True)]

    def decode_fixed(data: Any) -> Any:
        items = _list(data)
        if len(items) != len(parts):
            raise StoreError("a tuple of another length")
        return tuple(part[1](v) for part, v in zip(parts, items, strict=True))

    return encode_fixed, decode_fixed


def _dataclass_codec(cls: type) -> Codec:
    """An object of the field names; reading checks the names and each value's type."""
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    if len(names) != len(dataclasses.fields(cls)):
        raise StoreError(f"{cls.__name__} has fields its constructor does not take")
    fields: list[tuple[str, Codec]] = []

    def encode_object(value: Any) -> Any:
        if type(value) is not cls:
            raise StoreError(f"expected {cls.__name__}")
        if not fields:
            fields.extend((name, _codec(hints[name])) for name in names)
        return {name: codec[0](getattr(value, name)) for name, codec in fields}

    def decode_object(data: Any) -> Any:
        if type(data) is not dict or len(data) != len(names):
            raise StoreError(f"expected {cls.__name__}")
        if not fields:
            fields.extend((name, _codec(hints[name])) for name in names)
        try:
            return cls(**{name: codec[1](data[name]) for name, codec in fields})
        except KeyError:
            raise StoreError(f"{cls.__name__} with other fields") from None

    return encode_object, decode_object
