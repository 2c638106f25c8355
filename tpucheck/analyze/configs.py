"""Structured configs (YAML, JSON, TOML): key paths and values with their positions, and
the `config` matchers run over them.

A recipe that says `device: cuda`, a Lightning config with `trainer: {accelerator: gpu}`,
a DeepSpeed JSON with `"fp16": {"enabled": true}`, a compose file reserving NVIDIA devices:
what ties them to CUDA is a key and its value, wherever the format puts them. One small
reader per format turns a file into `Entry`s (the key path, the scalar value as text, and
where both were written); matchers test the path's last keys and the value, so one rule
reads every format alike.

Readers never execute anything: YAML is composed by PyYAML's safe loader (nodes only, no
objects built, so `!!python/...` tags are inert), JSON is tokenized here (the standard
library gives no positions), TOML is read by tomllib and placed by `TomlLocator`. A file a
reader cannot read yields what it could (YAML that is a Helm or Jinja template is read
line by line instead); it is never an error of the scan, since the same file is often not
a config at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase

import yaml

from tpucheck.discover.textpos import YAML_LINE_BREAKS, LineIndex, TomlLocator, tomllib
from tpucheck.findings import RawMatch, Reason, Span, normalize_snippet
from tpucheck.ruleset.matchers import GLOB_CHARS
from tpucheck.ruleset.model import Matcher, Rule
from tpucheck.ruleset.names import path_matches

__all__ = ["MAX_CONFIG_SIZE", "Entry", "analyze_config", "config_needle", "read_config"]

_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MAX_NODES = 200_000
"""A YAML document with more nodes than this (aliases expanded) is read no further: a
config is small, and anchors can make a short text expand without bound."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One key of a config and its value."""

    keys: tuple[str, ...]
    """The key path from the document's root; list items add no key."""
    value: str | None
    """The scalar value as text (`true`/`false`/`null` as YAML and JSON spell them), one
    entry per item of a list of scalars; None for a mapping or a list of mappings."""
    span: Span
    """From the key to the end of the value (or of the key, for a mapping)."""


def read_config(path: str, text: str) -> list[Entry]:
    """Every key of a config file, by the file's format; [] for what is not one."""
    lower = path.lower()
    if lower.endswith(".json"):
        return list(_JsonReader(text).entries())
    if lower.endswith(".toml"):
        return _toml_entries(text)
    return _yaml_entries(text)


# -- YAML ----------------------------------------------------------------------------


def _yaml_entries(text: str) -> list[Entry]:
    try:
        documents = list(yaml.compose_all(text, Loader=_SAFE_LOADER))
    except (yaml.YAMLError, ValueError):
        return _yaml_lines(text)
    except RecursionError:
        return []
    entries: list[Entry] = []
    seen: set[int] = set()
    try:
        for document in documents:
            if document is not None:
                _yaml_node(document, (), None, entries, seen)
    except RecursionError:
        pass  # nested deeper than any config: what was read stands
    return entries


def _scalar_text(node: yaml.ScalarNode) -> str:
    if node.tag == "tag:yaml.org,2002:bool":
        return "true" if node.value.lower() in ("true", "yes", "on", "y") else "false"
    if node.tag == "tag:yaml.org,2002:null":
        return "null"
    return str(node.value)


def _yaml_node(node: yaml.Node, keys: tuple[str, ...], key: yaml.Node | None, out: list[Entry], seen: set[int]) -> None:
    if id(node) in seen or len(seen) > _MAX_NODES:
        return  # an alias already read where its anchor is
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        if key is not None:
            out.append(Entry(keys, None, _span(key, key)))
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value != "<<":
                _yaml_node(value_node, (*keys, str(key_node.value)), key_node, out, seen)
            elif isinstance(value_node, yaml.MappingNode):  # `<<: *defaults` merges its keys here
                _yaml_node(value_node, keys, None, out, seen)
    elif isinstance(node, yaml.SequenceNode):
        if key is not None:
            out.append(Entry(keys, None, _span(key, key)))
        for item in node.value:
            if isinstance(item, yaml.ScalarNode):
                if key is not None:
                    out.append(Entry(keys, _scalar_text(item), _span(key, item)))
            else:
                _yaml_node(item, keys, None, out, seen)
    elif isinstance(node, yaml.ScalarNode) and key is not None:
        out.append(Entry(keys, _scalar_text(node), _span(key, node)))


def _span(first: yaml.Node, last: yaml.Node) -> Span:
    """PyYAML's marks are 0-based lines and character columns, under YAML's line breaks."""
    return Span(first.start_mark.line + 1, first.start_mark.column + 1, last.end_mark.line + 1, last.end_mark.column + 1)


_YAML_KEY = re.compile(r"""^(?P<indent>[ \t]*)(?P<dash>(?:-[ \t]+)*)(?P<key>"[^"]*"|'[^']*'|[^\s#'"{\[][^:#]*?)[ \t]*:(?:[ \t]+(?P<value>[^#]*?))?[ \t]*(?:#.*)?$""")


def _yaml_lines(text: str) -> list[Entry]:
    """YAML that PyYAML rejects (a Helm or Jinja template: `{{ .Values.x }}`, `{% if %}`):
    block keys by indentation, one line at a time, template lines skipped."""
    entries: list[Entry] = []
    stack: list[tuple[int, str]] = []
    for number, line in enumerate(YAML_LINE_BREAKS.split(text), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "{{", "{%", "---", "...")):
            continue
        found = _YAML_KEY.match(line)
        if found is None:
            continue
        column = len(found.group("indent")) + len(found.group("dash"))
        while stack and stack[-1][0] >= column:
            stack.pop()
        key = found.group("key").strip().strip("'\"")
        stack.append((column, key))
        value = (found.group("value") or "").strip()
        scalar = value.strip("'\"") if value and value[0] not in "|>&*{[" else None
        end = found.end("value") if found.group("value") else found.end("key")
        entries.append(Entry(tuple(k for _, k in stack), scalar, Span(number, column + 1, number, end + 1)))
    return entries


# -- JSON ----------------------------------------------------------------------------


_JSON_TOKEN = re.compile(
    r"""\s+|//[^\n]*|/\*.*?\*/|(?P<string>"(?:\\.|[^"\\\n])*")|(?P<literal>-?\d[\d.eE+-]*|true|false|null)|(?P<punct>[{}\[\]:,])""",
    re.S,
)


class _JsonReader:
    """A JSON tokenizer that keeps offsets (comments tolerated, as in `.jsonc` and
    DeepSpeed configs written by hand); it stops at the first lexeme it cannot read."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.index = LineIndex(text)

    def _tokens(self) -> Iterator[tuple[str, str, int, int]]:
        pos = 0
        while pos < len(self.text):
            found = _JSON_TOKEN.match(self.text, pos)
            if found is None:
                return
            pos = found.end()
            kind = found.lastgroup
            if kind is not None:
                yield kind, found.group(), found.start(), found.end()

    def entries(self) -> Iterator[Entry]:
        stack: list[_Frame] = []
        keys: tuple[str, ...] = ()
        pending: tuple[str, int] | None = None  # a key read, and where it starts
        expect_key = False
        for kind, lexeme, start, end in self._tokens():
            if kind == "punct":
                if lexeme in "{[":
                    if pending is not None:
                        yield Entry((*keys, pending[0]), None, self.index.span(pending[1], end))
                        keys = (*keys, pending[0])
                    stack.append(_Frame(lexeme, pending is not None, pending[1] if pending is not None else start))
                    pending, expect_key = None, lexeme == "{"
                elif lexeme in "}]":
                    if not stack:
                        return
                    if stack.pop().keyed:
                        keys = keys[:-1]
                    pending, expect_key = None, False
                elif lexeme == ",":
                    pending, expect_key = None, bool(stack) and stack[-1].bracket == "{"
                continue
            value = _json_text(lexeme) if kind == "string" else lexeme
            if expect_key:
                pending, expect_key = (value, start), False
            elif pending is not None:
                yield Entry((*keys, pending[0]), value, self.index.span(pending[1], end))
            elif stack and stack[-1].bracket == "[" and stack[-1].keyed:
                yield Entry(keys, value, self.index.span(stack[-1].start, end))


@dataclass(frozen=True, slots=True)
class _Frame:
    bracket: str
    keyed: bool
    """Opened as a key's value: closing it leaves the key."""
    start: int
    """Where its key starts: a list item's span starts there, as in YAML."""


def _json_text(token: str) -> str:
    try:
        return str(json.loads(token))
    except ValueError:
        return token[1:-1]


# -- TOML ----------------------------------------------------------------------------


def _toml_entries(text: str) -> list[Entry]:
    try:
        document = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    locator = TomlLocator(text)
    entries: list[Entry] = []

    def leaf(keys: tuple[str, ...], value: object) -> None:
        spot = locator.spots.get(keys)
        if spot is None:
            line = locator.line_of(keys) or 1
            start, end = locator.index.line_span(line)
        else:
            start, end = spot[0], _line_end(text, spot[0], spot[1])
        span = locator.index.span(start, end)
        if isinstance(value, dict):
            entries.append(Entry(keys, None, span))
            for key, item in value.items():
                leaf((*keys, str(key)), item)
        elif isinstance(value, list):
            entries.append(Entry(keys, None, span))
            for item in value:
                if isinstance(item, dict):
                    for key, inner in item.items():
                        leaf((*keys, str(key)), inner)
                else:
                    entries.append(Entry(keys, _toml_text(item), span))
        else:
            entries.append(Entry(keys, _toml_text(value), span))

    for key, value in document.items():
        leaf((str(key),), value)
    return entries


def _line_end(text: str, start: int, end: int) -> int:
    """The value's end, or the end of its first line when it spans several."""
    newline = text.find("\n", start, end)
    return (newline if newline >= 0 else end) if end > start else start


def _toml_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# -- matching ------------------------------------------------------------------------


def config_needle(pattern: str) -> str | None:
    """A string every file holding a key this pattern matches must contain: the literal
    start of its last key (`accelerator` of `trainer.accelerator`), if 3+ characters."""
    last = pattern.rsplit(".", 1)[-1] if "/" not in pattern else pattern
    literal = GLOB_CHARS.split(last, 1)[0]
    return literal if len(literal) >= 3 else None


def _key_matches(keys: tuple[str, ...], patterns: tuple[str, ...]) -> bool:
    return any(fnmatchcase(".".join(keys[-n:]), pattern) for pattern in patterns for n in range(1, len(keys) + 1))


def _applies(matcher: Matcher, path: str, text: str) -> bool:
    if not path_matches(path, matcher.files):
        return False
    needles = [config_needle(p) for p in matcher.patterns]
    return any(n is None or n in text for n in needles)


MAX_CONFIG_SIZE = 256 * 1024
"""A YAML, JSON or TOML file larger than this holds data (a tokenizer vocabulary, a
package lock, labels, a dump), not configuration: it is not read. Configs are a few KiB."""


def analyze_config(path: str, text: str, rules: list[Rule], switches: frozenset[str] = frozenset()) -> list[RawMatch]:
    """Config matches; a setting inside a block whose own switch (`switches`, rules/
    judgement.yaml `guards.switch_keys`: `amp: {enabled: false}`) is off is guarded."""
    if len(text) > MAX_CONFIG_SIZE:
        return []
    wanted = [(rule, matcher) for rule in rules for matcher in rule.matchers if matcher.kind == "config" and _applies(matcher, path, text)]
    if not wanted:
        return []
    entries = read_config(path, text)
    if not entries:
        return []
    lines = text.splitlines()
    matches: list[RawMatch] = []
    seen: set[tuple[str, int, int]] = set()
    off = _switched_off(entries, switches)
    for entry in entries:
        for rule, matcher in wanted:
            if not _key_matches(entry.keys, matcher.patterns):
                continue
            if matcher.value is not None and (entry.value is None or matcher.value.fullmatch(entry.value) is None):
                continue
            key = (rule.id, entry.span.line, entry.span.column)
            if key in seen:
                continue
            seen.add(key)
            line = lines[entry.span.line - 1] if entry.span.line <= len(lines) else ""
            switch = off.get(entry.keys[:-1]) if entry.keys[-1] not in switches else None
            reasons = (Reason(SWITCHED_OFF, f"`{switch.keys[-1]}: {switch.value}` beside it", line=switch.span.line),) if switch is not None else ()
            matches.append(RawMatch(rule.id, entry.span, normalize_snippet(line)[:160], detail=".".join(entry.keys), guarded=switch is not None, reasons=reasons))
    return matches


SWITCHED_OFF = "guard.switched-off"
_FALSE = frozenset({"false", "False", "FALSE", "no", "off"})


def _switched_off(entries: list[Entry], switches: frozenset[str]) -> dict[tuple[str, ...], Entry]:
    """Mappings (by key path) whose own switch is off -> that switch's entry."""
    return {entry.keys[:-1]: entry for entry in entries if entry.keys and entry.keys[-1] in switches and entry.value in _FALSE}
