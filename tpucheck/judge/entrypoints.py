"""The modules a project exposes as commands: product code, whatever folder holds them.

A team runs its product through its console scripts (`[project.scripts]`, setup.py's or
setup.cfg's `console_scripts`, poetry's scripts) or `python -m pkg` (a package's
`__main__.py`). A folder name such as `recipes/` or `cli/` says nothing about that; the
manifest does. Read with tomllib, configparser and `ast` (never run).
"""

from __future__ import annotations

import ast
import configparser
import posixpath
import sys
from collections.abc import Callable, Iterable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["entry_point_paths"]

_SCRIPT_GROUPS = ("console_scripts", "gui_scripts")


def entry_point_paths(files: Iterable[str], read: Callable[[str], str | None]) -> frozenset[str]:
    """Paths (relative to the root, as `files` are) of the modules named as commands by
    any manifest among `files`, and every `__main__.py`."""
    paths = sorted(files)
    known = frozenset(paths)
    found: set[str] = {p for p in paths if posixpath.basename(p) == "__main__.py"}
    for path in paths:
        name = posixpath.basename(path)
        if name not in ("pyproject.toml", "setup.cfg", "setup.py"):
            continue
        text = read(path)
        if text is None:
            continue
        base = posixpath.dirname(path)
        for module in _modules(name, text):
            found.update(_module_files(base, module, known))
    return frozenset(found)


def _modules(name: str, text: str) -> list[str]:
    """The modules of `module:function` targets a manifest names as commands."""
    targets: list[str] = []
    try:
        if name == "pyproject.toml":
            targets = _pyproject(text)
        elif name == "setup.cfg":
            targets = _setup_cfg(text)
        else:
            targets = _setup_py(text)
    except (ValueError, SyntaxError, RecursionError, configparser.Error, tomllib.TOMLDecodeError):
        return []  # a broken manifest is reported by its own analyzer
    return [t.split(":", 1)[0].strip() for t in targets if t.split(":", 1)[0].strip()]


def _pyproject(text: str) -> list[str]:
    data = tomllib.loads(text)
    project = data.get("project", {})
    tables = [project.get("scripts", {}), project.get("gui-scripts", {})]
    entry_points = project.get("entry-points", {})
    tables += [entry_points.get(group, {}) for group in _SCRIPT_GROUPS]
    tables.append(data.get("tool", {}).get("poetry", {}).get("scripts", {}))
    out: list[str] = []
    for table in tables:
        if isinstance(table, dict):
            for value in table.values():
                target = value.get("reference", value.get("callable")) if isinstance(value, dict) else value
                if isinstance(target, str):
                    out.append(target)
    return out


def _setup_cfg(text: str) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    out: list[str] = []
    for group in _SCRIPT_GROUPS:
        value = parser.get("options.entry_points", group, fallback="")
        out += [line.split("=", 1)[1] for line in value.splitlines() if "=" in line]
    return out


def _setup_py(text: str) -> list[str]:
    out: list[str] = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.keyword) and node.arg == "entry_points" and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values):
                if isinstance(key, ast.Constant) and key.value in _SCRIPT_GROUPS and isinstance(value, (ast.List, ast.Tuple)):
                    out += [e.value.split("=", 1)[1] for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str) and "=" in e.value]
    return out


def _module_files(base: str, module: str, known: frozenset[str]) -> list[str]:
    parts = module.split(".")
    stems = ["/".join(parts)]
    candidates = []
    for root in (base, posixpath.join(base, "src") if base else "src"):
        for stem in stems:
            for suffix in (".py", "/__init__.py", "/__main__.py"):
                candidates.append(posixpath.normpath(posixpath.join(root, stem + suffix)) if root else stem + suffix)
    return [c for c in candidates if c in known]
