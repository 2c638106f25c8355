"""Classes and functions the product uses only behind an option its default leaves off.

Why: a library builds one of several implementations by a setting (`if radial_type ==
"bessel": ... elif radial_type == "chebyshev": self.basis = ChebychevBasis(...)`, with
`--radial_type` defaulting to "bessel"; a guidance potential built only under
`--use_tfg_guidance`). A missing op inside the chosen-by-option class is reached only by
users who change the setting: the main path never builds it (audit AX: MACE's Chebyshev
basis and Protenix's guidance potentials, both blockers judged major). The same reading as
`option_imports.py` for imports (analyze/off_tests.py), applied to the project's own top-level definitions, across
its modules.

Read line by line: a top-level `class`/`def` (to the next statement at column 0); every
line outside it, in any product module, where its name is used as a whole word (imports,
`__all__`, comments and one-line strings aside) must sit on the true side of an `if`/`elif`
that tests a setting the project declares off by default (`if cfg.use_x:`), or compares a
setting with literals none of its declared values satisfies (`elif radial_type ==
"chebyshev":`); at least one use, and none on an `else` side. A name defined twice, or used
nowhere, settles nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from tpucheck.analyze.off_tests import tests_around
from tpucheck.analyze.top_names import code_lines, definition_end

__all__ = ["OPTION_COMPONENT", "option_components"]

OPTION_COMPONENT = "severity.option-only-component"
Component = tuple[str, int, int, str]
"""(name, first line, last line, the test and the setting's declared values, as evidence)."""

_DEFINITION = re.compile(r"^(?:async[ \t]+def|def|class)[ \t]+([A-Za-z_]\w*)")


def option_components(
    product: Iterable[str],
    read: Callable[[str], str | None],
    off: Mapping[str, str],
    values: Mapping[str, tuple[tuple[str, ...], str]],
) -> dict[str, tuple[Component, ...]]:
    """Product module -> its top-level definitions that every use sits behind an option
    its default leaves off. Linear in the product's text: each module's lines are read
    once for the tests around them, and names are looked up in one index of words."""
    if not off and not values:
        return {}
    lines: dict[str, list[str]] = {}
    behind: dict[str, list[str | None]] = {}
    words: dict[str, dict[str, list[int]]] = {}  # path -> word -> the code lines using it
    behind_words: set[str] = set()
    for path in sorted(product):
        text = read(path) or ""
        lines[path] = text.splitlines()
        behind[path] = [b[1] if b is not None else None for b in tests_around(lines[path], off, values)]
        found: dict[str, list[int]] = {}
        for number, code in code_lines(text):
            for word in _WORD.findall(code):
                found.setdefault(word, []).append(number)
                if behind[path][number - 1] is not None:
                    behind_words.add(word)
        words[path] = found
    if not behind_words:
        return {}
    defined: dict[str, list[tuple[str, int, int]]] = {}
    for path, text_lines in lines.items():
        for name, start, end in _definitions(text_lines):
            if name in behind_words:
                defined.setdefault(name, []).append((path, start, end))
    out: dict[str, list[Component]] = {}
    for name, places in sorted(defined.items()):
        if len(places) != 1:
            continue
        home, start, end = places[0]
        evidence: list[str] = []
        settled = True
        for path, found in words.items():
            for number in sorted(set(found.get(name, ()))):
                if path == home and start <= number <= end:
                    continue  # its own body (a recursive call, its `class` line)
                why = behind[path][number - 1]
                if why is None:
                    settled = False
                    break
                evidence.append(f"{why} at {path}:{number}")
            if not settled:
                break
        if settled and evidence:
            out.setdefault(home, []).append((name, start, end, evidence[0]))
    return {path: tuple(found) for path, found in sorted(out.items())}


_WORD = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
"""A name used as a whole word, not an attribute (`x.name`)."""


def _definitions(lines: list[str]) -> Iterable[tuple[str, int, int]]:
    """(name, first line, last line) of each top-level class or function (decorators
    included above it)."""
    index = 0
    while index < len(lines):
        found = _DEFINITION.match(lines[index])
        if found is None:
            index += 1
            continue
        start = index
        while start > 0 and lines[start - 1].startswith("@"):
            start -= 1
        end = definition_end(lines, index)
        yield found.group(1), start + 1, end + 1
        index = end + 1

