"""Conda environment files: `dependencies` (conda specs) and their `pip:` list, read
from PyYAML's nodes (safe loader only) so that each entry keeps its position."""

from __future__ import annotations

import re
from collections.abc import Iterable

import yaml

from tpucheck.analyze.manifests.model import ManifestError, Requirement, make_requirement, strip_comment
from tpucheck.analyze.manifests.pip import parse_pip_line
from tpucheck.discover.textpos import YAML_LINE_BREAKS, LineIndex
from tpucheck.ruleset.names import normalize_package

_YAML_STR = "tag:yaml.org,2002:str"
_CONDA_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


def _parse_conda_spec(value: str) -> tuple[str, str, str] | None:
    """`channel::name=1.2=build`, `name>=1`, `name 1.2.*`, `name[version='>=1']`."""
    body = value.strip().rsplit("::", 1)[-1].strip()
    cut = re.search(r"[=<>!~\[\s]", body)
    name = body[: cut.start()] if cut else body
    if not _CONDA_NAME_RE.fullmatch(name):
        return None
    return ("package", normalize_package(name), body[len(name) :].strip())


def _yaml_error_line(exc: yaml.YAMLError, text: str) -> int | None:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        return mark.line + 1 if mark is not None else None
    if isinstance(exc, yaml.reader.ReaderError):
        return LineIndex(text).position(min(exc.position, len(text)))[0]
    return None


def _yaml_error_message(exc: yaml.YAMLError) -> str:
    """PyYAML's str() spans several lines with source excerpts; reports want one line."""
    if isinstance(exc, yaml.MarkedYAMLError):
        parts = [p for p in (exc.context, exc.problem) if p]
        if parts:
            return ": ".join(parts)
    if isinstance(exc, yaml.reader.ReaderError):
        return f"unacceptable character #x{exc.character:04x}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _scalar_span(t: LineIndex, node: yaml.ScalarNode) -> tuple[int, int]:
    """The scalar's text; for a one-line quoted scalar, inside the quotes (as for TOML
    and Python strings)."""
    start = t.offset(node.start_mark.line + 1, node.start_mark.column + 1)
    end = t.offset(node.end_mark.line + 1, node.end_mark.column + 1)
    if node.style in ("'", '"') and node.start_mark.line == node.end_mark.line and end - start >= 2:
        return start + 1, end - 1
    return start, end


def _mapping_get(node: yaml.Node, key: str) -> list[yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        return []
    return [v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key]


def _string_items(node: yaml.Node) -> Iterable[yaml.Node]:
    return node.value if isinstance(node, yaml.SequenceNode) else []


def parse_conda_env(text: str) -> list[Requirement]:
    loader: yaml.SafeLoader | None = None
    try:
        loader = yaml.SafeLoader(text)  # already checks for unprintable characters
        root = loader.get_single_node()
        if root is not None:
            # Construct once with the safe constructor purely to reject tags it does not
            # know (`!!python/object` and friends) the way `yaml.safe_load` would. The
            # result is discarded: positions come from the nodes.
            loader.construct_document(root)
    except yaml.YAMLError as exc:
        raise ManifestError(f"invalid YAML: {_yaml_error_message(exc)}", _yaml_error_line(exc, text)) from None
    except RecursionError:
        raise ManifestError("invalid YAML: nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()
    if root is None:
        return []
    t = LineIndex(text, YAML_LINE_BREAKS)
    found: list[Requirement] = []
    for dependencies in _mapping_get(root, "dependencies"):
        for item in _string_items(dependencies):
            if isinstance(item, yaml.ScalarNode):
                if item.tag != _YAML_STR:
                    continue
                parsed = _parse_conda_spec(strip_comment(item.value))
                if parsed is not None:
                    found.append(make_requirement(t, parsed, item.value, "conda", *_scalar_span(t, item)))
                continue
            for pip_list in _mapping_get(item, "pip"):
                for entry in _string_items(pip_list):
                    if not isinstance(entry, yaml.ScalarNode) or entry.tag != _YAML_STR:
                        continue
                    parsed = parse_pip_line(strip_comment(entry.value), allow_options=True)
                    if parsed is not None:
                        found.append(make_requirement(t, parsed, entry.value, "pip", *_scalar_span(t, entry)))
    return found
