"""Components a registry holds that nothing in the project names: built by no config.

Why: config-driven codebases (mmdet, detectron2 and the many products forked from them)
register every head, sampler and backbone they ship (`@HEADS.register_module()`,
`@ROI_HEADS_REGISTRY.register()`) and build only those a config names (`dict(type=
'QueryRoIHead')`, `NAME: "StandardROIHeads"`). A fork keeps the whole zoo; its configs
name a few. A CUDA op that only an unnamed component calls never runs as the project is
configured: the module still imports it at load (so the package must install, which
mmcv-full's CPU build does), but the failure on a device tensor is not on the product's
path (audit AR: AdaMixer's vendored RPN, Cascade RPN and CornerNet heads and PISA's sampler,
five `mmcv.ops` blockers judged major).

Recognised by structure, line by line as `imports.py` reads: a top-level `class`/`def`
decorated by a call or attribute ending in `.register_module` or `.register`. A component
is named when its name (or a key its decorator gives, `register_module(name='X')`) occurs
as a word anywhere else in the project's Python or config text, other than in an import
statement, an `__all__` list or its own body. Only in a project whose configs name its
components at all (one name quoted in Python or written in a YAML/JSON config): a library
that registers components for its users' configs is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tpucheck.analyze.top_names import DEFINITION, code_lines, definition_end, statement_lines, top_level_bindings, use_lines
from tpucheck.findings import ImportFacts

__all__ = ["CONFIG_SUFFIXES", "Unreached", "only_used_there", "registered_components", "unreached_components"]

CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".cfg", ".toml", ".ini", ".sh")
"""Text files whose words can name a registered component (besides Python)."""

_DECORATOR = re.compile(r'''^@[A-Za-z_][\w.]*\.(?:register_module\b(.*)|register[ \t]*(\([ \t]*(?:\)|['"]|[A-Za-z_]\w*[ \t]*=|$).*))$''')
"""A registry's decorator: `@X.register_module` (any arguments), or `@X.register(...)`
with no argument, a string key or keywords. A bare `@x.register` (atexit) or one given a
type (`@to_device.register(Tensor)`: functools.singledispatch) registers no component."""
_KEY = re.compile(r"""(?:\bname\s*=\s*)?['"]([A-Za-z_][\w.-]*)['"]""")


@dataclass(frozen=True, slots=True)
class Unreached:
    """One module's registered components that nothing names, and the names it imports
    that only they use."""

    spans: tuple[tuple[str, int, int], ...]
    """(component, first line, last line): the decorator through the end of the body."""
    names: tuple[tuple[str, str], ...]
    """(imported name, the components that alone use it)."""

    def component_at(self, line: int) -> str | None:
        return next((name for name, start, end in self.spans if start <= line <= end), None)


def registered_components(text: str) -> tuple[tuple[str, int, int, tuple[str, ...]], ...]:
    """(name, first line, last line, keys) of each top-level class or function a registry
    decorator registers; keys are the string names its decorator gives."""
    if ".register" not in text:
        return ()
    lines = text.splitlines()
    out: list[tuple[str, int, int, tuple[str, ...]]] = []
    index = 0
    while index < len(lines):
        found = _DECORATOR.match(lines[index])
        if found is None:
            index += 1
            continue
        start, keys = index, [m.group(1) for m in _KEY.finditer(found.group(1) or found.group(2) or "")]
        header = None
        probe = index + 1
        while probe < len(lines) and probe - index < 30:
            line = lines[probe]
            if (named := DEFINITION.match(line)) is not None:
                header = named
                break
            if line[:1] not in ("@", " ", "\t", ")", "") and not line.startswith("#"):
                break  # a statement at the top level: the decorator was not one of a definition
            keys.extend(m.group(1) for m in _KEY.finditer(line) if line[:1] != "@")
            probe += 1
        if header is None:
            index += 1
            continue
        end = definition_end(lines, probe)
        out.append((header.group(1), start + 1, end + 1, tuple(dict.fromkeys(k for k in keys if k != header.group(1)))))
        index = end + 1
    return tuple(out)


def unreached_components(
    product: Iterable[str],
    facts: Callable[[str], ImportFacts | None],
    texts: Iterable[str],
    read: Callable[[str], str | None],
) -> dict[str, Unreached]:
    """Product module -> its registered components that no Python or config text of the
    project names (`texts`: every such file), when the project's configs name components
    at all; with the imported names only those components use."""
    defined: dict[str, list[tuple[str, int, int, tuple[str, ...]]]] = {}
    for path in sorted(product):
        fact = facts(path)
        if fact is not None and fact.registered:
            defined[path] = list(fact.registered)
    if not defined:
        return {}
    words = {word for found in defined.values() for name, _, _, keys in found for word in (name, *keys)}
    pattern = re.compile(r"(?<![\w.])(" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + r")(?!\w)")
    named: set[str] = set()
    configured = False
    for path in sorted(texts):
        text = read(path)
        if not text:
            continue
        python = path.endswith(".py")
        own = defined.get(path, [])
        for number, line, skip in statement_lines(text, python):
            if skip:
                continue
            for match in pattern.finditer(line):
                word = match.group(1)
                if python and any(start <= number <= end and word in (name, *keys) for name, start, end, keys in own):
                    continue  # its own body: `super(Head, self)`, its header, its decorator's key
                named.add(word)
                quoted = match.start() > 0 and line[match.start() - 1] in "'\""
                configured = configured or not python or quoted
    if not configured:
        return {}
    out: dict[str, Unreached] = {}
    for path, components in defined.items():
        spans = tuple((name, start, end) for name, start, end, keys in components if name not in named and not named.intersection(keys))
        if spans:
            out[path] = Unreached(spans, only_used_there(read(path) or "", spans))
    return out


def only_used_there(text: str, spans: tuple[tuple[str, int, int], ...]) -> tuple[tuple[str, str], ...]:
    """Names a top-level `from x import ...` binds whose every use in the module lies
    inside the unnamed components (at least one use), with those components."""
    lines = code_lines(text)
    out: list[tuple[str, str]] = []
    for name, (imported, from_import) in sorted(top_level_bindings(text).items()):
        if not from_import:
            continue
        uses = use_lines(lines, name)
        owners = [next((c for c, start, end in spans if start <= n <= end), None) for n in uses]
        if uses and None not in owners:
            components = ", ".join(sorted({o for o in owners if o is not None}))
            original = imported.rpartition(".")[2]
            out.append((original, components))
            if name != original:
                out.append((name, components))
    return tuple(out)
