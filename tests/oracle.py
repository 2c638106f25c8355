"""An independent oracle: CUDA code in a tree, listed by a plain `ast` walk.

Written apart from the analyzer and sharing nothing with it (no libcst, no rules, no
import table), so that comparing the two measures the analyzer's recall rather than
agreeing with itself. It is deliberately simple; what it lists is what any reader would
call CUDA code:

* `torch.cuda` references: each longest attribute chain `T.cuda...` where `T` is bound by
  `import torch` / `import torch as T` / `import torch.x` (no shadowing analysis).
* `.cuda()` calls: a call of an attribute named `cuda` on anything but the torch module.
* CUDA device strings in a device argument: `"cuda"` / `"cuda:N"` / `f"cuda:{i}"` as the
  `device=` keyword of any call, the first argument of `.to(...)`, or the first argument
  of `torch.device(...)`, directly or as an arm of a conditional expression.
* `init_process_group` with NCCL: a call of a name or attribute `init_process_group` whose
  `backend=` (or first positional argument) is the string "nccl", directly or as an arm
  of a conditional expression.
* CUDA source files: `.cu` and `.cuh` files.

Positions are 1-based lines and 1-based character columns (ast counts UTF-8 bytes).
"""

from __future__ import annotations

import ast
import os
import re
import warnings
from dataclasses import dataclass, field

REFERENCES = "torch.cuda reference"
CUDA_CALLS = ".cuda() call"
DEVICE_STRINGS = "CUDA device string"
NCCL = "init_process_group nccl"
SOURCES = "CUDA source file"
LISTS = (REFERENCES, CUDA_CALLS, DEVICE_STRINGS, NCCL, SOURCES)

_DEVICE = re.compile(r"cuda(:\d+)?")
_SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".tox", ".venv", "venv", "node_modules"})


@dataclass(frozen=True, order=True)
class Item:
    path: str
    line: int
    column: int
    text: str = field(compare=False)
    called: bool = field(default=False, compare=False)
    """A reference that is the callee of a call (`torch.cuda.synchronize()`)."""


@dataclass
class OracleResult:
    items: dict[str, list[Item]] = field(default_factory=lambda: {name: [] for name in LISTS})
    unparsed: list[str] = field(default_factory=list)
    """Python files `ast` (this interpreter's grammar) cannot read: nothing listed from them."""


def oracle(root: str) -> OracleResult:
    result = OracleResult()
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in sorted(files):
            full = os.path.join(directory, name)
            path = os.path.relpath(full, root).replace(os.sep, "/")
            if name.endswith((".cu", ".cuh")):
                result.items[SOURCES].append(Item(path, 1, 1, name))
            elif name.endswith(".py") and not os.path.islink(full):
                _python_file(full, path, result)
    return result


def _python_file(full: str, path: str, result: OracleResult) -> None:
    try:
        with open(full, encoding="utf-8") as handle:
            text = handle.read()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, UnicodeDecodeError, ValueError, RecursionError, MemoryError):
        result.unparsed.append(path)
        return
    _FileOracle(path, text, result).visit(tree)


class _FileOracle(ast.NodeVisitor):
    def __init__(self, path: str, text: str, result: OracleResult) -> None:
        self.path = path
        self.lines = text.splitlines()
        self.result = result
        self.torch_names: set[str] = set()
        self.parents: dict[int, ast.AST] = {}

    def visit(self, node: ast.AST) -> None:
        # Every `import torch` anywhere in the file counts, wherever it is used.
        for child in ast.walk(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name == "torch":
                        self.torch_names.add(alias.asname or "torch")
                    elif alias.name.startswith("torch.") and alias.asname is None:
                        self.torch_names.add("torch")  # `import torch.distributed` binds `torch`
            for inner in ast.iter_child_nodes(child):
                self.parents[id(inner)] = child
        super().visit(node)

    def add(self, name: str, line: int, byte_column: int, text: str, called: bool = False) -> None:
        source = self.lines[line - 1] if line - 1 < len(self.lines) else ""
        column = len(source.encode("utf-8")[:byte_column].decode("utf-8", errors="replace")) + 1
        self.result.items[name].append(Item(self.path, line, column, text, called))

    def _chain(self, node: ast.expr) -> list[str] | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(node.id)
            return parts[::-1]
        return None

    def _is_torch(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id in self.torch_names

    def visit_Attribute(self, node: ast.Attribute) -> None:
        parent = self.parents.get(id(node))
        longest = not (isinstance(parent, ast.Attribute) and parent.value is node)
        chain = self._chain(node)
        if longest and chain is not None and len(chain) >= 2 and chain[0] in self.torch_names and chain[1] == "cuda":
            called = isinstance(parent, ast.Call) and parent.func is node
            self.add(REFERENCES, node.lineno, node.col_offset, ".".join(chain), called)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr == "cuda" and not self._is_torch(func.value) and func.end_lineno is not None and func.end_col_offset is not None:
                self.add(CUDA_CALLS, func.end_lineno, func.end_col_offset - len("cuda"), "cuda")
            if func.attr == "to" and node.args:
                self._device_string(node.args[0])
            if func.attr == "device" and self._is_torch(func.value) and node.args:
                self._device_string(node.args[0])
        for keyword in node.keywords:
            if keyword.arg == "device":
                self._device_string(keyword.value)
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name == "init_process_group":
            backend = next((k.value for k in node.keywords if k.arg == "backend"), node.args[0] if node.args else None)
            if backend is not None and any(_string(arm) is not None and _string(arm).lower() == "nccl" for arm in _arms(backend)):  # type: ignore[union-attr]
                self.add(NCCL, node.lineno, node.col_offset, "init_process_group")
        self.generic_visit(node)

    def _device_string(self, node: ast.expr) -> None:
        for arm in _arms(node):
            value = _string(arm)
            if value is not None and (_DEVICE.fullmatch(value) or (isinstance(arm, ast.JoinedStr) and value.startswith("cuda:"))):
                self.add(DEVICE_STRINGS, arm.lineno, arm.col_offset, value)


def _arms(node: ast.expr) -> list[ast.expr]:
    return [node.body, node.orelse] if isinstance(node, ast.IfExp) else [node]


def _string(node: ast.expr) -> str | None:
    """A string constant's value; an f-string's leading literal text."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None
