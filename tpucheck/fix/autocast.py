"""CUDA-bound autocast -> `torch.autocast(<the current accelerator's type>, ...)`.

`torch.cuda.amp.autocast(args)` is `torch.autocast("cuda", args)` (PyTorch's own
deprecation note); the device type becomes the current accelerator's, "cuda" on a GPU and
where there is none (where the CUDA autocast warned and disabled itself, as it still
does). `torch.autocast("cuda", ...)`, `torch.amp.autocast(device_type="cuda")` and
`torch.amp.custom_fwd/custom_bwd(device_type="cuda")` get the same device type, and the
deprecated `@torch.cuda.amp.custom_fwd` becomes `@torch.amp.custom_fwd(device_type=...)`.
fp16 stays fp16: the safe fix changes no numerics on a GPU.

With `--unsafe-fixes`, fp16 autocast becomes bf16 (`dtype=torch.float16` -> `torch.bfloat16`,
and an explicit bf16 where fp16 was the default), the dtype TPUs compute in.
"""

from __future__ import annotations

import libcst as cst

from tpucheck.fix.base import Codemod, Edit, FileFix, Target
from tpucheck.fix.device import GUARDED_TYPE, NEEDS, TYPE_OR_CUDA, USES

_CUDA_AUTOCAST = ("torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast")
_AUTOCAST = ("torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast")
_CUSTOM = ("torch.amp.custom_fwd", "torch.amp.custom_bwd")
_CUDA_CUSTOM = ("torch.cuda.amp.custom_fwd", "torch.cuda.amp.custom_bwd")
_CUDA_AUTOCAST_POSITIONS = ("enabled", "dtype", "cache_enabled")
_FP16 = ("torch.float16", "torch.half")


class Autocast(Codemod):
    name = "autocast"

    def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        if isinstance(original, cst.Decorator) and isinstance(updated, cst.Decorator):
            return self._bare_decorator(original, updated, fix)
        if not (isinstance(original, cst.Call) and isinstance(updated, cst.Call)):
            return None
        target = fix.take(self.name, original)
        if target is None and fix.carries(self.name, original.func):
            target = fix.take(self.name, original.func)
        if target is None:
            return None
        if not fix.allows(NEEDS):
            fix.skip_pinned(target, NEEDS, "torch.accelerator.current_accelerator")
            return None
        names = fix.qualified(original.func)
        kind = fix.expression(GUARDED_TYPE if target.finding.guarded and fix.under_cuda_check(original) else TYPE_OR_CUDA)
        if names & set(_CUDA_AUTOCAST):
            return self._cuda_autocast(updated, fix, target, kind)
        if names & set(_AUTOCAST):
            return self._device_type(updated, fix, target, kind, position=0, bf16=True)
        if names & set(_CUSTOM):
            return self._device_type(updated, fix, target, kind, position=None, bf16=False)
        if names & set(_CUDA_CUSTOM):
            if any(arg.keyword is None for arg in updated.args):
                fix.skip(target, "torch.cuda.amp.custom_fwd with positional arguments; fix it by hand")
                return None
            func = fix.torch("amp." + sorted(names & set(_CUDA_CUSTOM))[0].rsplit(".", 1)[1])
            args = [cst.Arg(kind, keyword=cst.Name("device_type"), equal=_EQUAL), *updated.args]
            return Edit(updated.with_changes(func=func, args=_commas(args)), (target,), "torch.cuda.amp.custom_fwd -> torch.amp.custom_fwd(device_type=...)", NEEDS, USES, _elsewhere(fix, kind))
        fix.skip(target, "not an autocast call this fix knows; fix it by hand")
        return None

    def _bare_decorator(self, original: cst.Decorator, updated: cst.Decorator, fix: FileFix) -> Edit | None:
        if not isinstance(original.decorator, (cst.Attribute, cst.Name)):
            return None
        target = fix.take(self.name, original.decorator)
        if target is None:
            return None
        names = fix.qualified(original.decorator) & set(_CUDA_CUSTOM)
        if not names or not fix.allows(NEEDS):
            fix.skip(target, "not torch.cuda.amp.custom_fwd/custom_bwd, or the project's torch is too old; fix it by hand")
            return None
        func = fix.torch("amp." + sorted(names)[0].rsplit(".", 1)[1])
        kind = fix.expression(GUARDED_TYPE if target.finding.guarded and fix.under_cuda_check(original) else TYPE_OR_CUDA)
        call = cst.Call(func, [cst.Arg(kind, keyword=cst.Name("device_type"), equal=_EQUAL)])
        return Edit(updated.with_changes(decorator=call), (target,), "@torch.cuda.amp.custom_fwd -> @torch.amp.custom_fwd(device_type=...)", NEEDS, USES, _elsewhere(fix, kind))

    def _cuda_autocast(self, updated: cst.Call, fix: FileFix, target: Target, kind: cst.BaseExpression) -> Edit | None:
        args: list[cst.Arg] = []
        for index, arg in enumerate(updated.args):
            if arg.star:
                fix.skip(target, "autocast(*args) or (**kwargs): fix it by hand")
                return None
            if arg.keyword is None:
                if index >= len(_CUDA_AUTOCAST_POSITIONS):
                    fix.skip(target, "unexpected positional arguments to autocast; fix it by hand")
                    return None
                arg = arg.with_changes(keyword=cst.Name(_CUDA_AUTOCAST_POSITIONS[index]), equal=_EQUAL)
            args.append(arg)
        note = 'torch.cuda.amp.autocast(...) -> torch.autocast(<accelerator type>, ...)'
        if fix.unsafe:
            args, changed = _bf16(args, fix)
            note += ", fp16 -> bf16" if changed else ""
        new = updated.with_changes(func=fix.torch("autocast"), args=_commas([cst.Arg(kind), *args]))
        return Edit(new, (target,), note, NEEDS, USES, _elsewhere(fix, kind))

    def _device_type(self, updated: cst.Call, fix: FileFix, target: Target, kind: cst.BaseExpression, *, position: int | None, bf16: bool) -> Edit | None:
        args = list(updated.args)
        for index, arg in enumerate(args):
            is_device = (arg.keyword is not None and arg.keyword.value == "device_type") or (arg.keyword is None and index == position)
            if not is_device:
                continue
            value = arg.value
            if not (isinstance(value, cst.SimpleString) and value.evaluated_value == "cuda"):
                fix.skip(target, "the device type is not the plain string \"cuda\"; fix it by hand")
                return None
            args[index] = arg.with_changes(value=kind)
            note = '"cuda" autocast -> the current accelerator\'s type'
            if fix.unsafe and bf16:
                args, changed = _bf16(args, fix)
                note += ", fp16 -> bf16" if changed else ""
            return Edit(updated.with_changes(args=args), (target,), note, NEEDS, USES, _elsewhere(fix, kind))
        fix.skip(target, "no device type argument to rewrite; fix it by hand")
        return None


def _elsewhere(fix: FileFix, kind: cst.BaseExpression) -> str | None:
    """Why the edit changes what the code does on another accelerator it runs on: CUDA's
    autocast does nothing there, the accelerator's casts (fp16 on an Apple GPU). None where
    the autocast runs only with CUDA (the short form under a CUDA check) or the project
    names no other accelerator."""
    if fix.other_accelerator is None or fix.code(kind) == fix.code(fix.expression(GUARDED_TYPE)):
        return None
    return f"the project also runs on {fix.other_accelerator}, where CUDA's autocast did nothing and the accelerator's casts"


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _commas(args: list[cst.Arg]) -> list[cst.Arg]:
    """Each argument but the last followed by `, ` unless it already has its comma."""
    out = []
    for index, arg in enumerate(args):
        last = index == len(args) - 1
        if not last and arg.comma is cst.MaybeSentinel.DEFAULT:
            arg = arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        out.append(arg)
    return out


def _bf16(args: list[cst.Arg], fix: FileFix) -> tuple[list[cst.Arg], bool]:
    """`dtype=torch.float16` -> `torch.bfloat16`; no dtype (fp16 by default) -> an explicit bf16.
    A dtype held in a variable is left as it is."""
    for index, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == "dtype":
            code = cst.Module([]).code_for_node(arg.value)
            if code in _FP16 or code.endswith((".float16", ".half")):
                prefix = code.rsplit(".", 1)[0]
                args[index] = arg.with_changes(value=cst.parse_expression(f"{prefix}.bfloat16"))
                return args, True
            return args, False
    return _commas([*args, cst.Arg(fix.torch("bfloat16"), keyword=cst.Name("dtype"), equal=_EQUAL)]), True
