"""The project's settings and every value it gives them: the defaults its modules declare
(`ImportFacts.options`) and, for the keys of a config tree (`_C.MODEL.MORE_POS = False`),
the values its config files set (`MORE_POS: True` in a YAML config).

Why config files count: a yacs project declares each key's default once in Python and
changes it per experiment in YAML. A branch that only a non-default value takes is
optional only if no shipped config sets that value; a key some config turns on is part of
the product, as a flag a launch script passes is (judge/entrypoints.py `options_launched`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from tpucheck.analyze.imports import OVERRIDE
from tpucheck.findings import ImportFacts

__all__ = ["UNKNOWN", "declared_settings"]

UNKNOWN = "?"
"""A value a config file sets that is no literal (a list, an expression): it settles nothing."""

_YAML_SUFFIXES = (".yaml", ".yml")
_YAML_KEY = re.compile(r"^[ \t]*([A-Z][A-Z0-9_]*)[ \t]*:[ \t]*(.*?)[ \t]*(?:#.*)?$", re.MULTILINE)
_YAML_WORDS = {"true": "True", "false": "False", "null": "None", "~": "None"}
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


def declared_settings(
    python: Iterable[str],
    facts: Callable[[str], ImportFacts | None],
    configs: Iterable[str] = (),
    read: Callable[[str], str | None] = lambda _path: None,
) -> tuple[dict[str, str], dict[str, tuple[tuple[str, ...], str]]]:
    """The project's settings, read once from every module's declarations, each with the
    first file (in path order) declaring it:

    - off by default and nowhere on (`use_qlora: bool = False`): a name declared or set
      both ways (two config classes, a YAML config turning it on) settles nothing;
    - with literal values that are no flag (`bits: int = 16`, `POOLER_TYPE =
      "ROIAlignV2"` and `POOLER_TYPE: "ROIAlign"` in a config), with all those values: a
      test comparing one with literals (`if pooler_type == "ROIPool":`) that none of them
      satisfies takes a side no shipped configuration reaches.

    A lower-case config assignment (`model.pooler_type = "ROIPool"`, `OVERRIDE`) adds a
    value to a name declared elsewhere and declares nothing itself."""
    defaults: dict[str, set[str]] = {}
    overrides: dict[str, set[str]] = {}
    first: dict[str, str] = {}
    for path in sorted(python):
        fact = facts(path)
        for name, default in fact.options if fact is not None else ():
            if name.startswith(OVERRIDE):
                overrides.setdefault(name[len(OVERRIDE) :], set()).add(default)
                continue
            defaults.setdefault(name, set()).add(default)
            first.setdefault(name, path)
    for name, found in overrides.items():
        if name in defaults:
            defaults[name] |= found
    keys = {name for name in defaults if name.isupper()}
    if keys:
        for path in sorted(p for p in configs if p.lower().endswith(_YAML_SUFFIXES)):
            for key, value in _yaml_values(read(path) or "", keys):
                defaults[key].add(value)
                if key.lower() in defaults:
                    defaults[key.lower()].add(value)
    flags = {"True", "False", "None"}
    off = {name: first[name] for name, found in sorted(defaults.items()) if found <= {"False", "None"}}
    values = {name: (tuple(sorted(found)), first[name]) for name, found in sorted(defaults.items()) if not found & flags and UNKNOWN not in found}
    return off, values


def _yaml_values(text: str, keys: set[str]) -> Iterable[tuple[str, str]]:
    """`  MORE_POS: True` -> ("MORE_POS", "True") for the declared keys, each value as
    `options.literal_code` writes it; a key opening a block or holding no literal reads as
    `UNKNOWN`."""
    if not any(key in text for key in keys):
        return
    for m in _YAML_KEY.finditer(text):
        key, value = m.group(1), m.group(2)
        if key in keys:
            yield key, _yaml_literal(value)


def _yaml_literal(value: str) -> str:
    if value.lower() in _YAML_WORDS:
        return _YAML_WORDS[value.lower()]
    if _NUMBER.match(value):
        return value
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return repr(value[1:-1])
    if value and re.fullmatch(r"[A-Za-z_][\w.-]*", value):
        return repr(value)
    return UNKNOWN
