"""`torch.cuda.X` -> `torch.accelerator.Y`: the same call on whichever accelerator runs the
code, so the GPU path keeps working and a TPU (or any other accelerator) gets one too.

Only names `torch.accelerator.__all__` has (surface.py), with the same arguments and the
same result on CUDA; the torch version each needs is reported, and the fix is refused when
the project pins an older torch. torch.accelerator's functions take their device
positionally, so `synchronize(device=0)` becomes `synchronize(0)`.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ParentNodeProvider

from tpucheck.fix.base import Codemod, Edit, FileFix, Target
from tpucheck.fix.surface import counterpart

_PREFIX = "torch.cuda."


class TorchAccelerator(Codemod):
    name = "torch-accelerator"

    def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        if isinstance(original, cst.Call) and isinstance(updated, cst.Call):
            if not fix.carries(self.name, original):
                return None
            target = fix.take(self.name, original)
            assert target is not None
            return self._call(original, updated, fix, target)
        if isinstance(original, (cst.Attribute, cst.Name)) and isinstance(updated, (cst.Attribute, cst.Name)):
            target = fix.take(self.name, original)
            if target is None:
                return None
            parent = fix.metadata(ParentNodeProvider, original) if fix.metadata is not None else None
            if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and parent.target is original:
                fix.skip(target, "assigned to (a patch of torch.cuda): fix it by hand")
                return None
            cuda_name = self._cuda_name(original, fix)
            found = counterpart(cuda_name) if cuda_name else None
            if found is None or cuda_name == "device":
                fix.skip(target, f"torch.accelerator has no counterpart of torch.cuda.{cuda_name or '?'}; fix it by hand")
                return None
            name, needs = found
            if not fix.allows(needs):
                fix.skip_pinned(target, needs, f"torch.accelerator.{name}")
                return None
            return Edit(fix.torch(f"accelerator.{name}"), (target,), f"torch.cuda.{cuda_name} -> torch.accelerator.{name}", needs, f"torch.accelerator.{name}")
        return None

    def _cuda_name(self, node: cst.CSTNode, fix: FileFix) -> str | None:
        for qualified in sorted(fix.qualified(node)):
            if qualified.startswith(_PREFIX):
                return qualified[len(_PREFIX) :]
        return None

    @staticmethod
    def _guards_cuda(original: cst.Call, fix: FileFix) -> bool:
        """`torch.cuda.is_available() and torch.cuda.is_bf16_supported()`: the check keeps
        the CUDA call beside it from running without CUDA, so it must stay CUDA's."""
        parent = fix.metadata(ParentNodeProvider, original) if fix.metadata is not None else None
        if not (isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And)):
            return False
        other = parent.right if parent.left is original else parent.left
        return "cuda." in cst.Module(body=[]).code_for_node(other)

    def _call(self, original: cst.Call, updated: cst.Call, fix: FileFix, target: Target) -> Edit | None:
        cuda_name = self._cuda_name(original.func, fix)
        found = counterpart(cuda_name) if cuda_name else None
        if found is None:
            fix.skip(target, f"torch.accelerator has no counterpart of torch.cuda.{cuda_name or '?'}; fix it by hand")
            return None
        name, needs = found
        if cuda_name == "is_available" and self._guards_cuda(original, fix):
            fix.skip(target, "a torch.cuda call follows this check in the same condition; rewritten, that call would run on a TPU: fix both by hand")
            return None
        if not fix.allows(needs):
            fix.skip_pinned(target, needs, f"torch.accelerator.{name}")
            return None
        args = list(updated.args)
        if any(arg.star for arg in args) or len(args) > 1:
            fix.skip(target, "unexpected arguments for the torch.accelerator counterpart; fix it by hand")
            return None
        if args and args[0].keyword is not None:
            if args[0].keyword.value not in ("device", "device_index"):
                fix.skip(target, f"torch.accelerator.{name} takes no `{args[0].keyword.value}=`; fix it by hand")
                return None
            args[0] = args[0].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
        return Edit(
            updated.with_changes(func=fix.torch(f"accelerator.{name}"), args=args),
            (target,),
            f"torch.cuda.{cuda_name}() -> torch.accelerator.{name}()",
            needs,
            f"torch.accelerator.{name}",
        )
