"""Safe YAML loading that remembers where each value came from.

`yaml.safe_load` throws line numbers away, but every error in a rule file must name
its line. This composes the node graph with PyYAML's SafeLoader (so tags that would
construct Python objects are refused exactly as `safe_load` refuses them), builds the
plain data from it, and keeps a map from each value's path to its 1-based line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

Path = tuple[str | int, ...]


class YamlSourceError(Exception):
    """Invalid YAML: a one-line message and the 1-based line where the parser stopped."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True, slots=True)
class LocatedYaml:
    data: Any
    lines: dict[Path, int]
    """Line of the value at each path; for mapping keys, also `path + ("<key>",)`."""

    def line_of(self, path: Path) -> int | None:
        """The line of the deepest recorded prefix of `path`: errors point as close as known."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:end]))
            if line is not None:
                return line
        return None


_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser when PyYAML was built with it: the pure-Python one took most of a
second per scan to read the built-in rules. Both refuse tags that construct objects."""


def load_located(text: str) -> LocatedYaml:
    loader = _SAFE_LOADER(text)
    lines: dict[Path, int] = {}
    try:
        node = loader.get_single_node()
        if node is not None:
            # Before construction: merge keys (`<<: *anchor`) are flattened into the node
            # then, and an explicit override of a merged key is not a duplicate.
            _record(node, (), lines)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        raise YamlSourceError(f"invalid YAML: {problem}", mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise YamlSourceError(f"invalid YAML: {exc}", None) from None
    finally:
        loader.dispose()
    return LocatedYaml(data=data, lines=lines)


def _record(node: yaml.Node, path: Path, lines: dict[Path, int]) -> None:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: dict[object, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            if key in seen:
                raise YamlSourceError(
                    f"duplicate key {key!r} (first at line {seen[key]})", key_node.start_mark.line + 1
                )
            seen[key] = key_node.start_mark.line + 1
            _record(value_node, (*path, key), lines)
            key_path = (*path, key, "<key>")
            lines[key_path] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _record(item, (*path, index), lines)
