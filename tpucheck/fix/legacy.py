"""Legacy CUDA tensor constructors -> `torch.empty` / `torch.tensor` with a dtype and the
accelerator's device.

`torch.cuda.FloatTensor(2, 3)` is an uninitialised 2x3 float32 tensor on the current CUDA
device: `torch.empty(2, 3, dtype=torch.float32, device=<type>)`, where the type is the
accelerator's ("cuda" on a GPU, and where there is none, so a CPU-only torch raises as the
legacy constructor did). `torch.cuda.LongTensor([1, 2])` holds data: `torch.tensor([1, 2],
dtype=torch.int64, device=<type>)`. Sizes must be int literals and data a list or tuple
display: a name could be either, so those calls, `isinstance` checks and the type used as
a value (`Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`) are left to a
person.
"""

from __future__ import annotations

import libcst as cst

from tpucheck.fix.base import Codemod, Edit, FileFix
from tpucheck.fix.device import NEEDS, TYPE_OR_CUDA, USES

_DTYPES = {
    "FloatTensor": "float32",
    "DoubleTensor": "float64",
    "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16",
    "ByteTensor": "uint8",
    "CharTensor": "int8",
    "ShortTensor": "int16",
    "IntTensor": "int32",
    "LongTensor": "int64",
    "BoolTensor": "bool",
}


class LegacyTensor(Codemod):
    name = "legacy-tensor"

    def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        if isinstance(original, (cst.Attribute, cst.Name)):
            parent = fix.parent(original)
            if isinstance(parent, cst.Call) and parent.func is original:
                return None  # the call rewrites it
            target = fix.take(self.name, original)
            if target is not None:
                fix.skip(target, "a legacy CUDA tensor type used as a value (a type check, an alias): test `x.dtype` and `x.device.type` by hand")
            return None
        if not (isinstance(original, cst.Call) and isinstance(updated, cst.Call)):
            return None
        target = fix.take(self.name, original.func)
        if target is None:
            return None
        kind = next((n.rsplit(".", 1)[1] for n in sorted(fix.qualified(original.func)) if n.startswith("torch.cuda.")), "")
        dtype = _DTYPES.get(kind)
        if dtype is None:
            fix.skip(target, f"torch.cuda.{kind or '?'} is a storage or a type this fix does not know; fix it by hand")
            return None
        args = list(updated.args)
        sizes = all(arg.keyword is None and not arg.star and isinstance(arg.value, cst.Integer) for arg in args)
        data = len(args) == 1 and args[0].keyword is None and not args[0].star and isinstance(args[0].value, (cst.List, cst.Tuple))
        if not (sizes or data):
            fix.skip(target, "the arguments could be sizes or data; write torch.empty(sizes, ...) or torch.tensor(data, ...) by hand")
            return None
        if not fix.allows(NEEDS):
            fix.skip_pinned(target, NEEDS, USES)
            return None
        space = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
        new_args = [arg.with_changes(comma=space) for arg in args]
        if not new_args and sizes:
            new_args = [cst.Arg(cst.Integer("0"), comma=space)]
        new_args += [
            cst.Arg(fix.torch(dtype), keyword=cst.Name("dtype"), equal=equal, comma=space),
            cst.Arg(fix.expression(TYPE_OR_CUDA), keyword=cst.Name("device"), equal=equal),
        ]
        function = "tensor" if data else "empty"
        new = updated.with_changes(func=fix.torch(function), args=new_args)
        return Edit(new, (target,), f"torch.cuda.{kind}(...) -> torch.{function}(..., dtype=torch.{dtype}, device=<accelerator type>)", NEEDS, USES)
