"""`torch.cuda.X` -> `torch.accelerator.Y`: the same call on whichever accelerator runs the
code, so the GPU path keeps working and a TPU (or any other accelerator) gets one too.

Only names `torch.accelerator.__all__` has (surface.py), with the same arguments and the
same result on CUDA; the torch version each needs is reported, and the fix is refused when
the file's manifest pins an older torch. torch.accelerator's functions take their device
positionally, so `synchronize(device=0)` becomes `synchronize(0)`.

Safe only where nothing changes on the machines the code runs on today:
- An availability check (`is_available()`, `device_count()`) is True on any accelerator,
  so it is rewritten only where every use of its value selects device-agnostic code
  (checks.py); elsewhere the fix is unsafe, with the reason.
- `empty_cache()` and the memory counters do nothing (or return 0) on a CPU-only torch,
  where torch.accelerator's raise: they are rewritten behind a guard, `if
  torch.accelerator.is_available(): torch.accelerator.empty_cache()` for a statement,
  `(torch.accelerator.memory_allocated() if torch.accelerator.is_available() else 0)` for
  a value, or not at all where neither fits (a reference: unsafe).
"""

from __future__ import annotations

import libcst as cst

from tpucheck.fix.base import Codemod, Edit, FileFix, Target
from tpucheck.fix.checks import uses_reason
from tpucheck.fix.device import typed_cuda_call
from tpucheck.fix.surface import CPU_NOOP, counterpart

_PREFIX = "torch.cuda."
_CHECKS = ("is_available", "device_count")
"""Calls whose value says whether (or how many) accelerators there are."""


class TorchAccelerator(Codemod):
    name = "torch-accelerator"

    def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        if isinstance(original, cst.SimpleStatementLine) and isinstance(updated, cst.SimpleStatementLine):
            return self._statement(original, updated, fix)
        if isinstance(original, cst.Call) and isinstance(updated, cst.Call):
            if not fix.carries(self.name, original) or _guarded_statement(original, fix) is not None:
                return None
            target = fix.take(self.name, original)
            assert target is not None
            return self._call(original, updated, fix, target)
        if isinstance(original, (cst.Attribute, cst.Name)) and isinstance(updated, (cst.Attribute, cst.Name)):
            target = fix.take(self.name, original)
            if target is None:
                return None
            parent = fix.parent(original)
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
            unsafe: str | None = None
            if name in CPU_NOOP:
                unsafe = f"torch.cuda.{cuda_name} does nothing without CUDA, and torch.accelerator.{name} raises where there is no accelerator; passed on, it cannot be guarded"
            elif name in _CHECKS:
                unsafe = unsafe or "passed on, this check's uses are not followed: True on any accelerator, it may select CUDA-only code there"
            return Edit(fix.torch(f"accelerator.{name}"), (target,), f"torch.cuda.{cuda_name} -> torch.accelerator.{name}", needs, f"torch.accelerator.{name}", unsafe)
        return None

    def _cuda_name(self, node: cst.CSTNode, fix: FileFix) -> str | None:
        for qualified in sorted(fix.qualified(node)):
            if qualified.startswith(_PREFIX):
                return qualified[len(_PREFIX) :]
        return None

    def _call(self, original: cst.Call, updated: cst.Call, fix: FileFix, target: Target) -> Edit | None:
        cuda_name = self._cuda_name(original.func, fix)
        found = counterpart(cuda_name) if cuda_name else None
        if found is None:
            fix.skip(target, f"torch.accelerator has no counterpart of torch.cuda.{cuda_name or '?'}; fix it by hand")
            return None
        name, needs = found
        if not fix.allows(needs):
            fix.skip_pinned(target, needs, f"torch.accelerator.{name}")
            return None
        args = _arguments(updated, name, fix, target)
        if args is None:
            return None
        unsafe: str | None = None
        new: cst.BaseExpression = updated.with_changes(func=fix.torch(f"accelerator.{name}"), args=args)
        note = f"torch.cuda.{cuda_name}() -> torch.accelerator.{name}()"
        if name in _CHECKS:
            why = uses_reason(original, fix, typed_cuda_call(fix))
            unsafe = f"True on any accelerator, and {why}" if why else None
            if unsafe is None and fix.other_accelerator is not None:
                unsafe = f"True on any accelerator, and the project also runs on {fix.other_accelerator}, where this check would now change what it selects"
        elif name in CPU_NOOP and not fix.under_cuda_check(original):
            default = CPU_NOOP[name]
            if default is None:
                unsafe = unsafe or f"torch.accelerator.{name} raises where there is no accelerator (torch.cuda.{cuda_name} did nothing), and the call does not stand alone on its line to be guarded"
            else:
                new = cst.IfExp(
                    test=fix.expression("torch.accelerator.is_available()"),
                    body=new,
                    orelse=cst.parse_expression(default),
                    lpar=[cst.LeftParen()] if _needs_parentheses(original, fix) else [],
                    rpar=[cst.RightParen()] if _needs_parentheses(original, fix) else [],
                )
                note += f" where an accelerator is there, else {default} (what torch.cuda.{cuda_name} gives without CUDA)"
        return Edit(new, (target,), note, needs, f"torch.accelerator.{name}", unsafe)

    def _statement(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine, fix: FileFix) -> Edit | None:
        """`torch.cuda.empty_cache()` alone on its line -> the same call behind an
        availability check, as an `if` block."""
        call = _guarded_statement_call(original)
        if call is None or _guarded_statement(call, fix) is None:
            return None
        target = fix.take(self.name, call)
        if target is None:
            return None
        cuda_name = self._cuda_name(call.func, fix)
        found = counterpart(cuda_name) if cuda_name else None
        assert found is not None
        name, needs = found
        if not fix.allows(needs):
            fix.skip_pinned(target, needs, f"torch.accelerator.{name}")
            return None
        inner = updated.body[0]
        assert isinstance(inner, cst.Expr) and isinstance(inner.value, cst.Call)
        args = _arguments(inner.value, name, fix, target)
        if args is None:
            return None
        new_call = inner.value.with_changes(func=fix.torch(f"accelerator.{name}"), args=args)
        body = updated.with_changes(body=[inner.with_changes(value=new_call)], leading_lines=())
        block = cst.If(test=fix.expression("torch.accelerator.is_available()"), body=cst.IndentedBlock([body]), leading_lines=updated.leading_lines)
        note = f"torch.cuda.{cuda_name}() -> torch.accelerator.{name}() where an accelerator is there (torch.cuda.{cuda_name} did nothing without CUDA)"
        return Edit(block, (target,), note, needs, f"torch.accelerator.{name}")


def _guarded_statement_call(statement: cst.SimpleStatementLine) -> cst.Call | None:
    if len(statement.body) == 1 and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.Call):
        return statement.body[0].value
    return None


def _guarded_statement(call: cst.Call, fix: FileFix) -> cst.SimpleStatementLine | None:
    """The statement line `call` stands alone on, when the call is one that does nothing
    without CUDA and nothing already checks for CUDA around it: that line becomes an `if`."""
    expr = fix.parent(call)
    line = fix.parent(expr) if isinstance(expr, cst.Expr) else None
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1 or fix.under_cuda_check(call):
        return None
    names = [n[len(_PREFIX) :] for n in fix.qualified(call.func) if n.startswith(_PREFIX)]
    found = counterpart(names[0]) if names else None
    return line if found is not None and found[0] in CPU_NOOP else None


def _needs_parentheses(node: cst.CSTNode, fix: FileFix) -> bool:
    parent = fix.parent(node)
    return not isinstance(parent, (cst.Assign, cst.AnnAssign, cst.Arg, cst.Return, cst.Expr, cst.FormattedStringExpression))


def _arguments(call: cst.Call, name: str, fix: FileFix, target: Target) -> list[cst.Arg] | None:
    args = list(call.args)
    if any(arg.star for arg in args) or len(args) > 1:
        fix.skip(target, "unexpected arguments for the torch.accelerator counterpart; fix it by hand")
        return None
    if args and args[0].keyword is not None:
        if args[0].keyword.value not in ("device", "device_index"):
            fix.skip(target, f"torch.accelerator.{name} takes no `{args[0].keyword.value}=`; fix it by hand")
            return None
        args[0] = args[0].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
    return args
