"""Values a branch tests for that nothing in the product gives: options only a caller
outside it picks.

Why: a library dispatches on a string (`elif method == "gmres": x = gmres(A, B)`), and a
missing op inside the chosen implementation stops only the users who ask for it. When the
setting has no declared default (`method=None`, then chosen by the matrix's size), the
declared-settings table (analyze/declared.py) cannot say the branch is off, and the op was
a blocker (audit BC: deepchem's `gmres` solver, judged major; audits AT and AX: options
nothing turns on). What the product can select is what its own text gives: a value no
product module, config or launch script writes anywhere except in the tests that compare
with it is never selected by the product.

Read from the text, never from names: the tests are the `if`/`elif` lines comparing a
parameter of the enclosing function with string literals (`def solve(a, b, method=None):
... elif method == "gmres":`), an option of the function's API. An attribute or a local
(`config.model_type == "llama"`, a value read from a checkpoint or a file's suffix) is
data the product reads where it runs, not an option, and is never read so. A literal counts as given when its quoted form
occurs in product Python outside those test lines (a keyword or positional argument, an
assignment, a dispatch table's key, a list of choices: all kept as given, the safe side;
a docstring or a comment that lists the choices passes nothing), or as a whole word in a product config or launch script. For each compared name
that the project declares nothing for, the values it can have are the given literals plus
an unknown other: a test that holds only at ungiven values holds off the product's path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from tpucheck.analyze.off_tests import OTHER, TEST, compared_items

__all__ = ["UNGIVEN", "ungiven_values"]

UNGIVEN = "option.ungiven-value"
"""The rationale key (rules/judgement.yaml) that turns the reading on."""

_CANDIDATE = re.compile(r"""(?:==|\bin)[ \t]*[(\[]?[ \t]*["']""")
"""Text that may hold a comparison with a string: a module without it has no test to read."""
_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+\w+[ \t]*\(")
_PARAMETER = re.compile(r"(?:^|[(,])[ \t]*\**([A-Za-z_]\w*)")
_STRING = re.compile(r"""^(?:"([\w.+-]+)"|'([\w.+-]+)')$""")


def ungiven_values(
    product_python: Iterable[str],
    others: Iterable[str],
    read: Callable[[str], str | None],
    declared: Mapping[str, object],
) -> dict[str, tuple[tuple[str, ...], str]]:
    """Setting name -> (the literals the product gives it, then `OTHER`; where that was
    read), for each name the project declares nothing for that some test compares with a
    literal nothing gives. Two passes over the product's text: the tests, then the
    literals' occurrences."""
    python = {path: (read(path) or "") for path in sorted(product_python)}
    compared: dict[str, set[str]] = {}  # name -> the literal strings tested
    test_lines: set[tuple[str, int]] = set()
    for path, text in python.items():
        if _CANDIDATE.search(text) is None:
            continue
        lines = text.splitlines()
        for number, parameters in _in_functions(lines):
            found = TEST.match(lines[number - 1])
            parsed = _comparison(found.group(1).strip()) if found is not None else None
            if parsed is None or parsed[0] in declared or parsed[0] not in parameters:
                continue
            name, literals = parsed
            compared.setdefault(name, set()).update(literals)
            test_lines.add((path, number))
    if not compared:
        return {}
    wanted = sorted({literal for literals in compared.values() for literal in literals})
    quoted = re.compile(r"""(["'])(""" + "|".join(re.escape(w) for w in wanted) + r""")\1""")
    given: set[str] = set()
    for path, text in python.items():
        if quoted.search(text) is None:
            continue
        for number, line in enumerate(_code_only(text).splitlines(), 1):
            if (path, number) in test_lines:
                continue
            given.update(m.group(2) for m in quoted.finditer(line))
    bare = re.compile(r"(?<![\w.-])(" + "|".join(re.escape(w) for w in wanted) + r")(?![\w-])")
    for path in sorted(others):
        given.update(bare.findall(read(path) or ""))
    out: dict[str, tuple[tuple[str, ...], str]] = {}
    for name, literals in sorted(compared.items()):
        ungiven = sorted(literals - given)
        if not ungiven:
            continue
        kept = tuple(repr(literal) for literal in sorted(literals & given))
        shown = ", ".join(f"`{literal!r}`" for literal in ungiven)
        out[name] = ((*kept, OTHER), f"no product module, config or launch script gives {shown} outside the tests that compare with it")
    return out


_TRIPLE = re.compile(r"""(?s)(\"\"\"|\'\'\')(.*?)\1""")
_COMMENT = re.compile(r"""(?m)^[ \t]*#[^\n]*""")


def _code_only(text: str) -> str:
    """The text with triple-quoted strings (docstrings) and whole-line comments blanked,
    lines kept: `algorithm: 'unbiased' / 'biased'` in a docstring documents a choice, it
    passes nothing. A comment after code stays (it may only keep a value given)."""
    text = _TRIPLE.sub(lambda m: m.group(1) + "\n" * m.group(2).count("\n") + m.group(1), text)
    return _COMMENT.sub("", text)


def _in_functions(lines: list[str]) -> Iterable[tuple[int, frozenset[str]]]:
    """(line number, the parameters of the function enclosing it) for each line inside a
    `def` (the innermost one), read line by line: a signature runs to its `):`."""
    stack: list[tuple[int, frozenset[str]]] = []  # (the def's indent, its parameters)
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            indent = len(line) - len(line.lstrip(" \t"))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            header = _DEF.match(line)
            if header is not None:
                signature = line[header.end() :]
                end = index
                while "):" not in signature and ") ->" not in signature and end + 1 < len(lines) and end - index < 40:
                    end += 1
                    signature += " " + lines[end].strip()
                body = signature.split(")", 1)[0]
                names = frozenset(m.group(1) for m in _PARAMETER.finditer("(" + re.sub(r"=[^,]*", "", re.sub(r":[^,=]*", "", body))))
                stack.append((indent, names))
                index = end + 1
                continue
            if stack:
                yield index + 1, stack[-1][1]
        index += 1


def _comparison(test: str) -> tuple[str, set[str]] | None:
    """`method == "gmres"`, `mode in ("a", "b")`: a bare name (no attribute: data, not an
    option) compared for equality with string literals; its name and the strings."""
    compared = compared_items(test)
    if compared is None or compared[0] != compared[1] or compared[2] not in ("==", "in"):
        return None
    strings = [_STRING.match(item) for item in compared[3]]
    if not all(strings):
        return None
    return compared[1], {m.group(1) or m.group(2) for m in strings if m is not None}
