"""A CUDA availability test whose other side sends the host to the CPU: a device pick.

Why: `device = "cuda" if torch.cuda.is_available() else "cpu"` is reported as the place to
edit (CA002, major): on a TPU host the test is false and everything lands on the CPU
without a word. The same pick written as statements (`if torch.cuda.is_available(): device =
torch.device("cuda")`, `elif torch.backends.mps.is_available(): ...`, `else: device =
torch.device("cpu")`) was read as a guard around its CUDA side, and the pick went
unreported (audit BC: deepchem's `TorchModel`, how every one of its PyTorch models picks
its device). A test whose non-CUDA side only places values is still a guard when that side
is what a TPU needs (`x.to(device)`, audit T); it is a pick when that side names the CPU.

Read from the branch's statements: every branch of the non-CUDA side (an `elif` chain and
its `else`) only places values or sets literals, and its last `else` names the CPU (a
`"cpu"` string, `torch.device("cpu")`, `.cpu()`).
"""

from __future__ import annotations

import libcst as cst

from tpucheck.analyze.python.conditions import placement_only
from tpucheck.analyze.python.context import Names

__all__ = ["picks_cpu"]


def picks_cpu(names: Names, side: cst.BaseSuite | cst.If | cst.Else | None) -> bool:
    """Whether this side of a CUDA test (an `else`, an `elif` chain, or an `if` body) only
    places values, ending on the CPU."""
    while isinstance(side, cst.If):
        if not placement_only(names, side.body):
            return False
        side = side.orelse
    suite = side.body if isinstance(side, cst.Else) else side
    if not isinstance(suite, cst.BaseSuite) or not placement_only(names, suite):
        return False
    return any(_names_cpu(node) for node in _expressions(suite))


def _expressions(suite: cst.BaseSuite) -> list[cst.CSTNode]:
    out: list[cst.CSTNode] = []
    for statement in getattr(suite, "body", ()):
        for small in getattr(statement, "body", ()):
            value = getattr(small, "value", None)
            if isinstance(value, cst.BaseExpression):
                out.append(value)
    return out


def _names_cpu(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        return isinstance(text, str) and (text == "cpu" or text.startswith("cpu:"))
    if isinstance(node, cst.Call):
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "cpu":
            return True
        return _names_cpu(node.func) or any(_names_cpu(arg.value) for arg in node.args)
    if isinstance(node, cst.Attribute):
        return _names_cpu(node.value)
    return False
