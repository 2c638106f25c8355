"""`init_process_group("nccl")` -> the device's default backend: the `backend` argument
goes, and PyTorch picks per device (NCCL for CUDA tensors, as before; gloo for CPU tensors,
where NCCL raised; the TPU's own backend on a TPU). `new_group(..., backend="nccl")` loses
it too, and then takes the default group's backend.

Only a backend that is exactly NCCL (`"nccl"`, `Backend.NCCL`) is removed: a mixed spec
(`"cpu:gloo,cuda:nccl"`) or one read from a variable is left to a person.
"""

from __future__ import annotations

import libcst as cst

from tpucheck.fix.base import Codemod, Edit, FileFix, arg_has_comment

_CALLS = {"torch.distributed.init_process_group": 0, "torch.distributed.new_group": 2}
"""The call and the position of its `backend` parameter."""


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
            return Edit(updated.with_changes(args=args), (target,), "backend \"nccl\" -> each device's default backend (NCCL on CUDA)")
        fix.skip(target, "no backend argument found; set it by hand")
        return None


def _is_nccl(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.SimpleString):
        return str(value.evaluated_value).lower() == "nccl"
    return isinstance(value, cst.Attribute) and value.attr.value == "NCCL"

