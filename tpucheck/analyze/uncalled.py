"""Top-level definitions nothing the product runs calls or names: off its path.

Why: research code keeps the helpers it no longer calls. 4K4D's `mesh_utils.merge_faces`
(a `torch.median(dim=)` that raises on TorchTPU) is called by nothing in the tree, which
has another `merge_faces` in use; sparseml's SSD box decoder is called only by tests. A
blocker there stops who calls the helper by hand, not the product: audits AV and AZ
judged such blockers major. `registry.py` reads the same for registered components,
`unimported.py` for whole modules.

Read from the text as a reference graph, never from names: the definitions are the
top-level `def`s and `class`es of product modules; a definition is used when its name
occurs as a word in product Python outside every top-level definition (module code: a
main block, an assignment, a table), inside a used definition, in a package
`__init__`'s imports or any `__all__` (a package's public API), in a product config or
launch script, or when a decorator other than a transparent one (`rules/judgement.yaml`
`uncalled.transparent_decorators`) registers it, or when Python calls it by its dunder
name (a module's `__getattr__`). Strings count (`getattr(m, "name")`),
comments do not. Tests, examples and docs are no product: what only they call is not
used. A module that reads its own namespace (`globals()`, `vars()`, `eval`) keeps all its
definitions, and so does the module of a folder some module loads by computed name. A
project where most definitions are used by nothing is a library of functions its users
call one by one: nothing of it is set apart.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence

from tpucheck.analyze.opt_in import COMPUTED_IMPORT
from tpucheck.analyze.registry import Unreached, only_used_there
from tpucheck.analyze.top_names import DEFINITION, IMPORT_LINE, definition_end, statement_lines

__all__ = ["UNCALLED", "definitions", "uncalled_definitions"]

UNCALLED = "severity.uncalled-definition"

_DECORATOR = re.compile(r"^@[ \t]*([A-Za-z_][\w.]*)")
_NAMESPACE = re.compile(r"\b(?:globals|vars|locals)\(\s*\)|\beval\(|\bexec\(|\bsys\.modules\b")
"""A module that reads its own namespace by computed name: any definition may be used."""
_WORD = re.compile(r"[A-Za-z_]\w*")
_COMMENT = re.compile(r"""#[^'"\n]*$""")
_SHARE = 0.5
"""Definitions used by nothing in this share or more: a library of functions its users
call one by one, not dead helpers beside a core."""


def definitions(text: str) -> list[tuple[str, int, int, tuple[str, ...]]]:
    """(name, first line, last line, decorators) of each top-level `def` or `class`; the
    first line is its first decorator's."""
    lines = text.splitlines()
    out: list[tuple[str, int, int, tuple[str, ...]]] = []
    decorators: list[str] = []
    start: int | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        if (decorated := _DECORATOR.match(line)) is not None:
            start = index if start is None else start
            decorators.append(decorated.group(1))
        elif (header := DEFINITION.match(line)) is not None:
            end = definition_end(lines, index)
            out.append((header.group(1), (index if start is None else start) + 1, end + 1, tuple(decorators)))
            decorators, start = [], None
            index = end + 1
            continue
        elif line and not line[0].isspace() and not line.startswith("#"):
            decorators, start = [], None
        index += 1
    return out


def uncalled_definitions(
    product_python: Sequence[str],
    texts: Iterable[str],
    read: Callable[[str], str | None],
    transparent: frozenset[str],
) -> dict[str, Unreached]:
    """Product module -> its top-level definitions nothing the product runs uses, with the
    names its imports bind that only they use. `texts`: the product's config and launch
    files."""
    defined: dict[str, list[tuple[str, int, int, tuple[str, ...]]]] = {}
    kept: set[str] = set()  # names a module reading its namespace, or loaded by computed name, defines
    computed = {posixpath.dirname(p) for p in product_python if COMPUTED_IMPORT.search(read(p) or "")}
    for path in sorted(product_python):
        text = read(path) or ""
        found = definitions(text)
        if not found:
            continue
        if _NAMESPACE.search(text) or posixpath.dirname(path) in computed:
            kept.update(name for name, *_ in found)
        defined[path] = found
    names = {name for found in defined.values() for name, *_ in found}
    if not names:
        return {}
    # a module's `__getattr__`/`__dir__` (PEP 562) is called by the import system, never by name
    roots = set(kept) | {name for name in names if name.startswith("__") and name.endswith("__")}
    uses: dict[str, set[str]] = {}  # definition name -> the names its bodies use
    for found in defined.values():
        for name, _, _, decorators in found:
            if any(d not in transparent and d.rpartition(".")[2] not in transparent for d in decorators):
                roots.add(name)  # a registering decorator: `@app.route`, `@torch.library.custom_op`
    for path in sorted(product_python):
        text = read(path) or ""
        own = defined.get(path, [])
        public = posixpath.basename(path) == "__init__.py"
        listing = False  # inside an `__all__` list
        for number, line, skip in statement_lines(text):
            listing = skip and (line.lstrip().startswith("__all__") or (listing and IMPORT_LINE.match(line) is None))
            if skip and not public and not listing:
                continue  # an import names what the module then uses (or not)
            found_here = names.intersection(_WORD.findall(_COMMENT.sub("", line)))
            if not found_here:
                continue
            owner = next((name for name, start, end, _ in own if start <= number <= end), None)
            if owner is None:
                roots |= found_here
            else:  # not its own header, recursion or `super(Name, self)`
                uses.setdefault(owner, set()).update(found_here - {owner})
    for path in sorted(texts):
        roots.update(names.intersection(_WORD.findall(read(path) or "")))
    live = set(roots)
    stack = sorted(roots)
    while stack:
        for used in sorted(uses.get(stack.pop(), ())):
            if used not in live:
                live.add(used)
                stack.append(used)
    dead = names - live
    if not dead or len(dead) >= _SHARE * len(names):
        return {}
    out: dict[str, Unreached] = {}
    for path, found in defined.items():
        spans = tuple((name, start, end) for name, start, end, _ in found if name in dead)
        if spans:
            out[path] = Unreached(spans, only_used_there(read(path) or "", spans))
    return out
