"""setup.py, read with `ast` and never run: the requirement strings of `setup(...)`
calls, through names bound to literals."""

from __future__ import annotations

import ast
import re
import warnings

from tpucheck.analyze.manifests.model import ManifestError, Requirement, make_requirement, strip_comment
from tpucheck.analyze.manifests.pip import parse_pip_line
from tpucheck.discover.textpos import LineIndex

_SETUP_KEYWORDS = ("install_requires", "setup_requires", "tests_require")
_MAX_RESOLVE_DEPTH = 16
_MAX_RESOLVE_STEPS = 10_000
"""Names bound to lists of names can fan out: ten lines of `a2 = [*a1, *a1, ...]` ask for
10**10 steps. A real setup.py resolves in well under a hundred; past this budget the rest
of the file's values are left unread rather than hanging the scan."""


class _SetupReader:
    """Static reading of `setup(...)` calls: literals and names bound to literals only.

    Anything computed (file reads, function calls) is skipped on purpose: guessing at
    runtime values would produce positions that point at nothing the user wrote.
    """

    def __init__(self, text: str, tree: ast.Module) -> None:
        self.text = text
        self.t = LineIndex(text)
        self.steps = 0
        self.bindings: dict[str, list[tuple[int, ast.expr]]] = {}
        for statement in tree.body:
            targets: list[ast.expr] = []
            value: ast.expr | None = None
            if isinstance(statement, ast.Assign):
                targets, value = statement.targets, statement.value
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                targets, value = [statement.target], statement.value
            for target in targets:
                if isinstance(target, ast.Name) and value is not None:
                    self.bindings.setdefault(target.id, []).append((statement.lineno, value))

    def lookup(self, name: str, before: int) -> tuple[int, ast.expr] | None:
        """The last module-level binding above `before`; failing that, the last one at
        all (a `setup()` inside a function defined early may run after it)."""
        bound = self.bindings.get(name)
        if not bound:
            return None
        earlier = [b for b in bound if b[0] < before]
        return earlier[-1] if earlier else bound[-1]

    def strings(self, node: ast.expr, before: int, depth: int = 0) -> list[ast.Constant]:
        """String literals a requirements value is built from, as far as it is static."""
        self.steps += 1
        if depth > _MAX_RESOLVE_DEPTH or self.steps > _MAX_RESOLVE_STEPS:
            return []
        if isinstance(node, ast.Constant):
            return [node] if isinstance(node.value, str) else []
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            out: list[ast.Constant] = []
            for element in node.elts:
                inner = element.value if isinstance(element, ast.Starred) else element
                out.extend(self.strings(inner, before, depth + 1))
            return out
        if isinstance(node, ast.Name):
            bound = self.lookup(node.id, before)
            return self.strings(bound[1], bound[0], depth + 1) if bound else []
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.strings(node.left, before, depth + 1) + self.strings(node.right, before, depth + 1)
        return []

    def dict_items(self, node: ast.expr, before: int, depth: int = 0) -> list[tuple[str, ast.expr]]:
        """(extra name, value) of an `extras_require` mapping; a key that is not a string
        literal is named "?" (still an extra: only installed on request)."""
        self.steps += 1
        if depth > _MAX_RESOLVE_DEPTH or self.steps > _MAX_RESOLVE_STEPS:
            return []
        if isinstance(node, ast.Dict):
            out: list[tuple[str, ast.expr]] = []
            for key, value in zip(node.keys, node.values):
                if key is None:  # `**OTHER`: its items are extras too
                    out.extend(self.dict_items(value, before, depth + 1))
                else:
                    out.append((key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else "?", value))
            return out
        if isinstance(node, ast.Name):
            bound = self.lookup(node.id, before)
            return self.dict_items(bound[1], bound[0], depth + 1) if bound else []
        return []

    def offset(self, line: int, byte_column: int) -> int:
        """`ast` columns are UTF-8 byte offsets; reports need character columns."""
        content = self.t.line_text(line)
        prefix = content.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore")
        return self.t.starts[line - 1] + len(prefix)

    def requirements(self, node: ast.Constant, extra: str | None = None) -> list[Requirement]:
        """One entry per requirement line of the string (pkg_resources reads a string
        as newline-separated requirements), each spanning its text inside the quotes."""
        if node.end_lineno is None or node.end_col_offset is None:
            return []
        start = self.offset(node.lineno, node.col_offset)
        end = self.offset(node.end_lineno, node.end_col_offset)
        opening = re.match(r"[rRbBuUfF]*('''|\"\"\"|'|\")", self.text[start:end])
        content_start = start + opening.end() if opening else start
        content_end = end - len(opening.group(1)) if opening else end
        content_end = max(content_end, content_start)
        cursor = content_start
        out: list[Requirement] = []
        value = node.value if isinstance(node.value, str) else ""
        for line in value.splitlines():
            entry = strip_comment(line).strip()
            if not entry:
                continue
            parsed = parse_pip_line(entry, allow_options=False)
            if parsed is None:
                continue
            at = self.text.find(entry, cursor, content_end)
            if at >= 0:
                span = (at, at + len(entry))
                cursor = span[1]
            else:  # escapes or implicit concatenation: fall back to the whole literal
                span = (content_start, content_end)
            out.append(make_requirement(self.t, parsed, entry, "pip", *span, extra=extra))
        return out


def _is_setup_callee(func: ast.expr) -> bool:
    """`setup(...)`, `setuptools.setup(...)`, `distutils.core.setup(...)`: matched by
    name, since resolving imports statically buys nothing for a file this small."""
    return (isinstance(func, ast.Name) and func.id == "setup") or (isinstance(func, ast.Attribute) and func.attr == "setup")


def parse_setup_py(text: str) -> list[Requirement]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes etc. are the project's business
            tree = ast.parse(text, filename="setup.py")
    except SyntaxError as exc:
        raise ManifestError(f"invalid Python: {exc.msg}", exc.lineno) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ManifestError(f"cannot parse setup.py: {exc}") from None
    reader = _SetupReader(text, tree)
    found: list[Requirement] = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or not _is_setup_callee(call.func):
            continue
        for keyword in call.keywords:
            values: list[tuple[str | None, ast.expr]]
            if keyword.arg in _SETUP_KEYWORDS:
                values = [(None, keyword.value)]
            elif keyword.arg == "extras_require":
                values = list(reader.dict_items(keyword.value, call.lineno))
            else:
                continue
            for extra, value in values:
                for string in reader.strings(value, call.lineno):
                    found.extend(reader.requirements(string, extra))
    return found
