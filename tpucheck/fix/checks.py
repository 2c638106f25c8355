"""Whether the value of a CUDA availability check may become any accelerator's.

`torch.cuda.is_available()` (or `device_count()`) rewritten to `torch.accelerator`'s is
True on a TPU, an Apple GPU or an Intel GPU where it was False. That is the point where
what it selects is device-agnostic (`"cuda" if ... else "cpu"` once the string is the
accelerator's type); it is a crash where it selects CUDA itself: NCCL, a `torch.cuda`
call, `.cuda()` on an object the fix cannot type, a CUDA flag handed to a library
(`cuda=...`). So a check is rewritten only where every use of its value, followed through
`and`/`or`/`not`, conditional expressions, `if` statements and names it is assigned to,
selects device-agnostic code; `uses_reason` says why not otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst
from libcst.metadata import Assignment, GlobalScope

from tpucheck.fix.base import FileFix

__all__ = ["cuda_only_reason", "uses_reason"]

_CUDA_FLAG = re.compile(r"(?i)(^|_)(cuda|gpu|gpus|nccl)($|_)|^(use|with|on|has)_?(cuda|gpu)")
"""A keyword or a name that says CUDA (`cuda=`, `use_gpu`, `args.cuda`): a library or the
code reading it asks for CUDA."""
_PROSE = ("print", "logging", "logger", "log", "warn", "info", "debug", "format")
_DEPTH = 3

TypesCuda = Callable[[cst.Call], bool]
"""Whether a `.cuda()` call in the selected code will itself become the accelerator's."""


def uses_reason(node: cst.CSTNode, fix: FileFix, typed_cuda: TypesCuda, depth: int = 0) -> str | None:
    """Why the value of the check `node` (an original node) may not become any
    accelerator's, or None when every use selects device-agnostic code."""
    if depth > _DEPTH:
        return "its value is passed through too many names to follow"
    child, parent = node, fix.parent(node)
    while parent is not None:
        if isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)) or (isinstance(parent, cst.Comparison) and child is parent.left):
            if isinstance(parent, cst.BooleanOperation):
                other = parent.right if child is parent.left else parent.left
                if (why := cuda_only_reason(other, fix, typed_cuda)) is not None:
                    return f"the same condition {why}"
            child, parent = parent, fix.parent(parent)
            continue
        if isinstance(parent, cst.IfExp) and child is parent.test:
            for branch in (parent.body, parent.orelse):
                if (why := cuda_only_reason(branch, fix, typed_cuda)) is not None:
                    return f"the code it selects {why}"
            return uses_reason(parent, fix, typed_cuda, depth + 1) if _value_used(parent, fix) else None
        if isinstance(parent, (cst.If, cst.While)) and child is parent.test:
            branches: list[cst.CSTNode] = [parent.body, *([parent.orelse] if parent.orelse is not None else [])]
            for block in branches:
                if (why := cuda_only_reason(block, fix, typed_cuda)) is not None:
                    return f"the code it selects {why}"
            return None
        if isinstance(parent, cst.Assert):
            return None
        if isinstance(parent, (cst.Expr, cst.ParenthesizedWhitespace)):
            return None
        if isinstance(parent, cst.Arg):
            return _argument_reason(parent, fix)
        if isinstance(parent, (cst.Assign, cst.AnnAssign)) and child is parent.value:
            return _assigned_reason(parent, fix, typed_cuda, depth)
        if isinstance(parent, cst.Return):
            return "it is returned, and what its callers do with it is not followed"
        if isinstance(parent, (cst.Tuple, cst.List, cst.Dict, cst.DictElement, cst.Element, cst.Comparison)):
            return "its value goes where the fix does not follow it"
        if isinstance(parent, cst.Call) and child is parent.func:
            child, parent = parent, fix.parent(parent)  # the check called: its result is the value
            continue
        if isinstance(parent, (cst.BaseStatement, cst.BaseSmallStatement)):
            return "its value goes where the fix does not follow it"
        child, parent = parent, fix.parent(parent)
    return None


def _value_used(node: cst.CSTNode, fix: FileFix) -> bool:
    parent = fix.parent(node)
    return not isinstance(parent, cst.Expr)


def _argument_reason(arg: cst.Arg, fix: FileFix) -> str | None:
    call = fix.parent(arg)
    callee = fix.code(call.func) if isinstance(call, cst.Call) else ""
    if arg.keyword is not None and _CUDA_FLAG.search(arg.keyword.value):
        return f"it is passed as `{arg.keyword.value}=` to {callee or 'a call'}, which then asks for CUDA"
    if callee.split(".")[0] in _PROSE or callee.rsplit(".", 1)[-1] in _PROSE:
        return None
    names = fix.qualified(call.func) if isinstance(call, cst.Call) else set()
    if any(n.startswith("torch.") and not n.startswith(("torch.cuda", "torch.backends.cuda")) for n in names):
        return None  # torch's own device-generic API (autocast, device, zeros, ...) takes any accelerator's
    return f"it is passed to {callee or 'a call'}, whose use of it is not followed"


def _assigned_reason(assign: cst.Assign | cst.AnnAssign, fix: FileFix, typed_cuda: TypesCuda, depth: int) -> str | None:
    targets = [t.target for t in assign.targets] if isinstance(assign, cst.Assign) else [assign.target]
    if len(targets) != 1 or not isinstance(targets[0], cst.Name):
        spelled = fix.code(targets[0]) if targets else "?"
        return f"it is stored in `{spelled}`, whose uses are not followed"
    name = targets[0]
    scope = fix.scope(name)
    if scope is None:
        return "its uses cannot be found"
    if isinstance(scope, GlobalScope) and not name.value.startswith("_") and _CUDA_FLAG.search(name.value):
        return f"it is stored in `{name.value}`, a module-level CUDA flag other modules may import"
    uses = [access.node for assignment in scope[name.value] if isinstance(assignment, Assignment) and assignment.node is name for access in assignment.references]
    for use in uses:
        if (why := uses_reason(use, fix, typed_cuda, depth + 1)) is not None:
            return f"`{name.value}`: {why}"
    return None


def cuda_only_reason(node: cst.CSTNode, fix: FileFix, typed_cuda: TypesCuda) -> str | None:
    """Why the code under `node` works only on CUDA (an original node), or None. A
    `torch.cuda` name or a `.cuda()` call that the fix rewrites in the same run counts as
    device-agnostic; a "cuda" string that the fix rewrites likewise."""
    found: list[str] = []

    class _Look(cst.CSTVisitor):
        def visit_SimpleString(self, string: cst.SimpleString) -> bool:
            value = string.evaluated_value
            if isinstance(value, str) and "nccl" in value.lower():
                found.append(f"uses NCCL ({string.value})")
            elif isinstance(value, str) and re.fullmatch(r"cuda(:\d+)?", value) and not _rewritten_string(string, fix):
                found.append(f"names the CUDA device ({string.value})")
            return False

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            names = fix.qualified(attribute)
            cuda = sorted(n for n in names if n.startswith(("torch.cuda.", "torch.backends.cuda", "torch.backends.cudnn")))
            if cuda and not _rewritten_name(attribute, fix):
                found.append(f"calls {cuda[0]}")
                return False
            return True

        def visit_Call(self, call: cst.Call) -> bool:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "cuda" and not typed_cuda(call):
                found.append(f"calls `{fix.code(func)}()` on an object the fix cannot type")
            for arg in call.args:
                if arg.keyword is not None and _CUDA_FLAG.search(arg.keyword.value):
                    found.append(f"passes `{arg.keyword.value}=` to {fix.code(func)}")
            return True

    node.visit(_Look())
    return found[0] if found else None


def _rewritten_string(string: cst.SimpleString, fix: FileFix) -> bool:
    end = fix.end_of(string)
    return end is not None and any(t.codemod == "current-accelerator" and t.end == end and t.safe for t in fix.targets)


def _rewritten_name(node: cst.CSTNode, fix: FileFix) -> bool:
    """A `torch.cuda.X` the torch-accelerator codemod rewrites (its call or reference is a
    finding, and torch.accelerator has X)."""
    from tpucheck.fix.surface import counterpart

    names = [n for n in fix.qualified(node) if n.startswith("torch.cuda.")]
    if not names or counterpart(names[0][len("torch.cuda.") :]) is None:
        return False
    parent = fix.parent(node)
    ends = {fix.end_of(node), fix.end_of(parent) if isinstance(parent, cst.Call) else None}
    return any(t.codemod == "torch-accelerator" and t.end in ends for t in fix.targets)
