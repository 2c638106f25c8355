"""`init_process_group("nccl")` -> the device's default backend: the `backend` argument
goes, and PyTorch picks per device (NCCL for CUDA tensors, as before; gloo for CPU tensors,
where NCCL raised; the TPU's own backend on a TPU). `new_group(..., backend="nccl")` loses
it too, and then takes the default group's backend.

Only a backend that is exactly NCCL (`"nccl"`, `Backend.NCCL`) is removed: a mixed spec
(`"cpu:gloo,cuda:nccl"`) or one read from a variable is left to a person.

Always unsafe: without a backend `dist.get_backend()` no longer says "nccl", the default
timeout is the generic 30 minutes instead of NCCL's 10 (unless the call passes `timeout=`),
and torch before 2.6 opens a gloo group beside NCCL. The edit says which of these hold
here, and needs torch 2.6.
"""

from __future__ import annotations

import libcst as cst

from tpucheck.fix.base import Codemod, Edit, FileFix, arg_has_comment
from tpucheck.fix.surface import DEFAULT_BACKEND_SINCE
from tpucheck.fix.versions import Version

_CALLS = {"torch.distributed.init_process_group": 0, "torch.distributed.new_group": 2}
"""The call and the position of its `backend` parameter."""
NEEDS = Version(DEFAULT_BACKEND_SINCE)


class DefaultBackend(Codemod):
    name = "default-backend"

    def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        if not (isinstance(original, cst.Call) and isinstance(updated, cst.Call)):
            return None
        target = fix.take(self.name, original)
        if target is None:
            return None
        names = fix.qualified(original.func) & set(_CALLS)
        if not names:
            fix.skip(target, "not torch.distributed.init_process_group/new_group; set the backend by hand")
            return None
        position = _CALLS[sorted(names)[0]]
        args = list(updated.args)
        for index, arg in enumerate(args):
            is_backend = (arg.keyword is not None and arg.keyword.value == "backend") or (arg.keyword is None and index == position)
            if not is_backend:
                continue
            if not _is_nccl(arg.value):
                fix.skip(target, "the backend is not plainly NCCL; set it by hand")
                return None
            if arg_has_comment(arg):
                fix.skip(target, "a comment sits on the backend argument; remove it by hand")
                return None
            later_positional = any(a.keyword is None and not a.star for a in args[index + 1 :])
            if later_positional:
                args[index] = arg.with_changes(value=cst.Name("None"))
            else:
                del args[index]
                if args and index == len(args):  # the removed one was last: no trailing comma on the new last
                    args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return Edit(
                updated.with_changes(args=args), (target,), "backend \"nccl\" -> each device's default backend (NCCL on CUDA)", NEEDS, "init_process_group() without a backend", _why_unsafe(original, fix)
            )
        fix.skip(target, "no backend argument found; set it by hand")
        return None


def _why_unsafe(call: cst.Call, fix: FileFix) -> str:
    """What changes on a GPU when NCCL is no longer named."""
    reasons = []
    code = fix.module.code if fix.module is not None else ""
    if "get_backend" in code:
        reasons.append("the code reads dist.get_backend(), which no longer says nccl")
    if not any(arg.keyword is not None and arg.keyword.value == "timeout" for arg in call.args):
        reasons.append("the default timeout becomes 30 minutes instead of NCCL's 10")
    if fix.torch_floor is None or fix.torch_floor < NEEDS:
        reasons.append("before torch 2.6 a gloo group opens beside NCCL")
    return "; ".join(reasons) or "the backend name changes for code elsewhere that reads it"


def _is_nccl(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.SimpleString):
        return str(value.evaluated_value).lower() == "nccl"
    return isinstance(value, cst.Attribute) and value.attr.value == "NCCL"

