"""Whether an expression is a tensor or a module, as far as the code shows.

`.cuda()` means "move to the GPU" on a tensor or an `nn.Module`; on any other object it is
that object's own method (a metric meter, a wrapper, a CUDA-graph helper), which `.to()`
may not have. The fix rewrites `.cuda()` safely only on receivers typed here:
- a call of a torch function or class (`torch.zeros(2)`, `nn.Linear(2, 2)`,
  `torch.nn.DataParallel(m)`), but not `torch.load`, which returns whatever was saved;
- an instance of a class of this file that derives from `torch.nn.Module` (directly or
  through classes of this file) and defines no `cuda` method of its own;
- a tensor method's result (`x.float()`, `x.view(...)`, `x.to(...)`) on a typed receiver;
- a name bound once in its scope to one of these, or a parameter annotated `torch.Tensor`
  or `nn.Module`.
Anything else (a name from a data loader, a function's result, `self.model`) is not typed.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import Assignment

from tpucheck.fix.base import FileFix

__all__ = ["typed_receiver"]

_TENSOR_METHODS = frozenset(
    {"float", "half", "double", "long", "int", "bool", "bfloat16", "to", "view", "reshape", "detach", "contiguous", "clone", "permute", "unsqueeze", "squeeze", "t", "transpose", "flatten", "expand", "repeat", "train", "eval", "requires_grad_", "type"}
)
_TYPES = ("torch.Tensor", "torch.nn.Module", "torch.nn.modules.module.Module", "torch.FloatTensor", "torch.LongTensor", "torch.nn.Parameter")
_DEPTH = 4


def typed_receiver(node: cst.BaseExpression, fix: FileFix, depth: int = 0) -> bool:
    """Whether `node` (an original or rebuilt expression whose names resolve in the
    original module) is a tensor or an nn.Module."""
    if depth > _DEPTH:
        return False
    if isinstance(node, cst.Call):
        names = fix.qualified(node.func)
        if any(n.startswith("torch.") and not n.startswith(("torch.cuda.", "torch.load", "torch.hub.load")) for n in names):
            return True  # not torch.load: it returns whatever was saved
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _TENSOR_METHODS:
            return typed_receiver(node.func.value, fix, depth + 1)
        if isinstance(node.func, cst.Name):
            return _module_class(node.func.value, fix)
        return False
    if isinstance(node, cst.Name):
        return _typed_name(node, fix, depth)
    return False


def _typed_name(name: cst.Name, fix: FileFix, depth: int) -> bool:
    scope = fix.scope(name)
    if scope is None or name.value not in scope:
        return False
    assignments = [a for a in scope[name.value] if isinstance(a, Assignment)]
    if len(assignments) != 1:
        return False
    bound = assignments[0].node
    parent = fix.parent(bound)
    if isinstance(bound, cst.Param):
        annotation = bound.annotation.annotation if bound.annotation is not None else None
        return annotation is not None and bool(fix.qualified(annotation) & set(_TYPES))
    if isinstance(parent, cst.AssignTarget):
        assign = fix.parent(parent)
        return isinstance(assign, cst.Assign) and len(assign.targets) == 1 and typed_receiver(assign.value, fix, depth + 1)
    if isinstance(parent, cst.AnnAssign) and parent.value is not None:
        return typed_receiver(parent.value, fix, depth + 1)
    return False


def _module_class(name: str, fix: FileFix, seen: frozenset[str] = frozenset()) -> bool:
    """A class of this module, an nn.Module by its bases, that defines no `cuda` itself."""
    if fix.module is None or name in seen:
        return False
    for statement in fix.module.body:
        if not (isinstance(statement, cst.ClassDef) and statement.name.value == name):
            continue
        if _defines(statement, "cuda"):
            return False
        for base in statement.bases:
            if fix.qualified(base.value) & {"torch.nn.Module", "torch.nn.modules.module.Module"}:
                return True
            if isinstance(base.value, cst.Name) and _module_class(base.value.value, fix, seen | {name}):
                return True
        return False
    return False


def _defines(cls: cst.ClassDef, method: str) -> bool:
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    return any(isinstance(s, cst.FunctionDef) and s.name.value == method for s in body)
