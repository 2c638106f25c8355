"""Hard-coded CUDA devices -> the current accelerator, keeping the GPU path.

- A `"cuda"` string (or `"cuda:0"`, `f"cuda:{rank}"`, `"cuda:" + ...`) becomes the
  current accelerator's type, a string as before. Where it runs only when CUDA is there
  (the true branch of `"cuda" if torch.cuda.is_available() else "cpu"`) that is
  `torch.accelerator.current_accelerator().type`, "cuda" on a GPU. Elsewhere the code may
  run with no accelerator at all (a default argument, a config value overridden later),
  so it is `getattr(torch.accelerator.current_accelerator(), "type", "cuda")`: the
  accelerator's type where there is one, and "cuda" as before where there is none, so a
  CPU-only run sees exactly what it saw.
- `x.cuda()` / `x.cuda(non_blocking=True)` becomes `x.to(torch.accelerator.current_accelerator())`:
  the same device on a GPU; with no accelerator `.to(None)` leaves the tensor where it is
  (the original raised there), a CPU fallback that changes no numerics. `.cuda(i)` picks a
  device by index and is left to a person.
  `.cuda(0)` becomes `.to(torch.device(<type>, 0))`; an index the fix cannot read as an
  int (`.cuda(args.gpu)`, which may hold a torch.device) is an unsafe fix. `.cuda()` is safe
  only on a receiver the fix can type as a tensor or module (a torch call, a module class of
  this file, a name bound to one, a parameter annotated so): another object's own `cuda()`
  method (a meter, a wrapper) means something else, so elsewhere the fix is unsafe.
- A comparison with "cuda" (`'cuda' in device`, `x.device.type == "cuda"`) compares with
  the accelerator's type, so the TPU takes the branch the GPU takes; safe only where every
  use of the comparison selects device-agnostic code (checks.py) and the file names no
  other accelerator (on an Apple or Intel GPU the branch changes too).
- `init_device_mesh("cuda", ...)` gets the accelerator's type.
- With `--unsafe-fixes`, a `device` variable in scope is used instead (`x.to(device)`,
  `torch.zeros(2, device=device)`): what people write, but it is only as right as the
  value the variable holds.

torch.accelerator.current_accelerator needs torch 2.6.
"""

from __future__ import annotations

import re

import libcst as cst

from tpucheck.fix.base import Codemod, Edit, FileFix, Target
from tpucheck.fix.checks import TypesCuda, uses_reason
from tpucheck.fix.receivers import typed_receiver
from tpucheck.fix.surface import ACCELERATOR_SINCE
from tpucheck.fix.versions import Version

NEEDS = Version(ACCELERATOR_SINCE["current_accelerator"])
USES = "torch.accelerator.current_accelerator"
_CUDA = re.compile(r"cuda(:.*)?", re.DOTALL)
GUARDED_TYPE = "torch.accelerator.current_accelerator().type"
TYPE_OR_CUDA = 'getattr(torch.accelerator.current_accelerator(), "type", "cuda")'
CURRENT = "torch.accelerator.current_accelerator()"
DEVICE_VARIABLE = "device"


class CurrentAccelerator(Codemod):
    name = "current-accelerator"

    def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        if isinstance(original, cst.Call) and isinstance(updated, cst.Call):
            if fix.carries(self.name, original) and "torch.distributed.device_mesh.init_device_mesh" in fix.qualified(original.func):
                return self._mesh(original, updated, fix)
            return self._method(original, updated, fix)
        if isinstance(original, cst.Arg) and isinstance(updated, cst.Arg) and isinstance(original.value, cst.SimpleString):
            # `add_argument("--device", default="cuda")`: the finding is the keyword argument
            target = fix.take(self.name, original)
            if target is None:
                return None
            if not fix.allows(NEEDS):
                fix.skip_pinned(target, NEEDS, "torch.accelerator.current_accelerator")
                return None
            edit = self._string(original.value, fix, target)
            return None if edit is None else Edit(updated.with_changes(value=edit.node), edit.targets, edit.note, edit.needs, edit.uses)
        if isinstance(original, (cst.SimpleString, cst.FormattedString)):
            target = fix.take(self.name, original)
            if target is None:
                return None
            if not fix.allows(NEEDS):
                fix.skip_pinned(target, NEEDS, "torch.accelerator.current_accelerator")
                return None
            if isinstance(original, cst.SimpleString):
                return self._string(original, fix, target)
            if isinstance(updated, cst.FormattedString):
                return self._fstring(original, updated, fix, target)
        return None

    # ------------------------------------------------------------------ x.cuda()

    def _method(self, original: cst.Call, updated: cst.Call, fix: FileFix) -> Edit | None:
        func = updated.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "cuda" and fix.carries(self.name, original)):
            return None
        target = fix.take(self.name, original)
        assert target is not None
        rest = [arg for arg in updated.args if arg.keyword is not None and arg.keyword.value == "non_blocking"]
        index = [arg for arg in updated.args if arg not in rest]
        if len(index) > 1 or any(arg.star or (arg.keyword is not None and arg.keyword.value != "device") for arg in index):
            fix.skip(target, "`.cuda(...)` with arguments this fix does not know; use `.to(device)` with the device you mean")
            return None
        unsafe = None if isinstance(original.func, cst.Attribute) and typed_receiver(original.func.value, fix) else f"`{fix.code(original.func.value) if isinstance(original.func, cst.Attribute) else '?'}` is not known to be a tensor or module: an object with its own .cuda() would do something else"
        variable = self._variable(original, fix) if not index else None
        if variable is None and not fix.allows(NEEDS):
            fix.skip_pinned(target, NEEDS, "torch.accelerator.current_accelerator")
            return None
        if index:
            value = index[0].value
            if not (isinstance(value, cst.Integer) or (isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Integer))):
                unsafe = unsafe or f"the device index `{fix.code(original.args[0].value)}` is not known to be an int (a torch.device there would raise)"
            kind = GUARDED_TYPE if target.finding.guarded and fix.under_cuda_check(original) else TYPE_OR_CUDA
            device: cst.BaseExpression = cst.Call(fix.torch("device"), [cst.Arg(fix.expression(kind), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), cst.Arg(value)])
            shown = f"torch.device({kind}, {fix.code(value)})"
            args = [cst.Arg(device, comma=cst.MaybeSentinel.DEFAULT if not rest else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), *rest]
        else:
            device = cst.Name(variable) if variable else fix.expression(CURRENT)
            shown = variable or CURRENT
            args = [cst.Arg(device, comma=cst.MaybeSentinel.DEFAULT if not rest else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), *rest]
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        new = updated.with_changes(func=func.with_changes(attr=cst.Name("to")), args=args)
        needs = None if variable else NEEDS
        return Edit(new, (target,), f".cuda() -> .to({shown})", needs, None if variable else USES, unsafe)

    # ------------------------------------------------------------------ init_device_mesh("cuda", ...)

    def _mesh(self, original: cst.Call, updated: cst.Call, fix: FileFix) -> Edit | None:
        target = fix.take(self.name, original)
        assert target is not None
        args = list(updated.args)
        for index, arg in enumerate(args):
            if (arg.keyword is None and index == 0) or (arg.keyword is not None and arg.keyword.value == "device_type"):
                if not (isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == "cuda"):
                    break
                if not fix.allows(NEEDS):
                    fix.skip_pinned(target, NEEDS, USES)
                    return None
                args[index] = arg.with_changes(value=fix.expression(TYPE_OR_CUDA))
                return Edit(updated.with_changes(args=args), (target,), f'init_device_mesh("cuda", ...) -> init_device_mesh({TYPE_OR_CUDA}, ...)', NEEDS, USES)
        fix.skip(target, "the mesh's device type is not the plain string \"cuda\"; fix it by hand")
        return None

    # ------------------------------------------------------------------ "cuda" strings

    def _string(self, node: cst.SimpleString, fix: FileFix, target: Target) -> Edit | None:
        prefix = node.prefix.lower()
        value = node.evaluated_value
        if "b" in prefix or not isinstance(value, str) or not _CUDA.fullmatch(value):
            fix.skip(target, "not a plain \"cuda\" device string; fix it by hand")
            return None
        rest = value[4:]
        comparison = _comparison(node, fix)
        if comparison is not None:
            return self._comparison(node, comparison, fix, target)
        if not rest and (variable := self._argument_variable(node, fix)):
            return Edit(cst.Name(variable), (target,), f'"cuda" -> {variable}')
        kind = GUARDED_TYPE if target.finding.guarded and fix.under_cuda_check(node) else TYPE_OR_CUDA
        if not rest:
            return Edit(fix.expression(kind), (target,), f'"{value}" -> {kind}', NEEDS, USES, _dead_arm(node, fix))
        quote = node.quote
        inner = kind.replace('"', "'") if '"' in quote else kind
        expression = fix.expression(inner)
        code = (fix.module or cst.Module([])).code_for_node(expression)
        text = "f" + quote + "{" + code + "}" + _escape(rest, quote) + quote
        try:
            new = cst.parse_expression(text)
        except cst.ParserSyntaxError:
            fix.skip(target, "cannot spell this device string as an f-string; fix it by hand")
            return None
        return Edit(new, (target,), f'"{value}" -> f"{{{kind}}}{rest}"', NEEDS, USES, _dead_arm(node, fix))

    def _fstring(self, original: cst.FormattedString, updated: cst.FormattedString, fix: FileFix, target: Target) -> Edit | None:
        parts = list(updated.parts)
        first = parts[0] if parts else None
        if "b" in updated.prefix.lower() or not isinstance(first, cst.FormattedStringText) or not first.value.startswith("cuda"):
            fix.skip(target, "not an f-string that starts with \"cuda\"; fix it by hand")
            return None
        kind = GUARDED_TYPE if target.finding.guarded and fix.under_cuda_check(original) else TYPE_OR_CUDA
        quote = updated.end
        inner = kind.replace('"', "'") if '"' in quote else kind
        expression = cst.FormattedStringExpression(fix.expression(inner))
        rest = first.value[4:]
        new_parts = [expression, *([first.with_changes(value=rest)] if rest else []), *parts[1:]]
        return Edit(updated.with_changes(parts=new_parts), (target,), f'f"cuda..." -> f"{{{kind}}}..."', NEEDS, USES)

    def _comparison(self, node: cst.SimpleString, comparison: cst.Comparison, fix: FileFix, target: Target) -> Edit | None:
        """`'cuda' in device`, `x.device.type == "cuda"`: the accelerator's type in place of
        "cuda", so the branch the GPU takes is the one a TPU takes."""
        value = node.evaluated_value
        if value != "cuda":
            fix.skip(target, f"a comparison with {node.value}: compare the device type with the accelerator's by hand")
            return None
        kind = TYPE_OR_CUDA.replace('"', "'") if node.quote.startswith("'") else TYPE_OR_CUDA
        return Edit(fix.expression(kind), (target,), f"{node.value} in a device comparison -> {kind}", NEEDS, USES, _comparison_unsafe(comparison, fix))

    # ------------------------------------------------------------------ a `device` in scope

    def _variable(self, node: cst.CSTNode, fix: FileFix) -> str | None:
        """`device`, when unsafe fixes are on and that name is bound where `node` is."""
        if not fix.unsafe:
            return None
        scope = fix.scope(node)
        if scope is None or DEVICE_VARIABLE not in scope:
            return None
        line = fix.start_line(node)
        assignments = scope[DEVICE_VARIABLE]
        for assignment in assignments:
            bound = getattr(assignment, "node", None)
            where = fix.start_line(bound) if isinstance(bound, cst.CSTNode) else None
            if where is not None and line is not None and where < line:
                return DEVICE_VARIABLE
        return None

    def _argument_variable(self, node: cst.SimpleString, fix: FileFix) -> str | None:
        """The `device` variable for a string passed as a call's argument (`.to("cuda")`,
        `device="cuda"`): never for the value an assignment binds."""
        if not fix.unsafe or not fix.in_call_argument(node):
            return None
        return self._variable(node, fix)


def _escape(text: str, quote: str) -> str:
    """`text` as the literal part of an f-string: braces doubled, backslashes and the quote escaped."""
    text = text.replace("\\", "\\\\").replace("{", "{{").replace("}", "}}")
    return text.replace(quote[0], "\\" + quote[0]) if len(quote) == 1 else text


def typed_cuda_call(fix: FileFix) -> TypesCuda:
    """Whether a `.cuda()` call will become `.to(...)` by a safe fix: its receiver is typed."""

    def typed(call: cst.Call) -> bool:
        return isinstance(call.func, cst.Attribute) and typed_receiver(call.func.value, fix) and fix.carries(CurrentAccelerator.name, call)

    return typed


def _comparison_unsafe(comparison: cst.Comparison, fix: FileFix) -> str | None:
    """Why making a "cuda" comparison the accelerator's may change what the code does."""
    why = uses_reason(comparison, fix, typed_cuda_call(fix))
    if why:
        return f"on any accelerator the comparison now holds, and {why}"
    if fix.other_accelerator:
        return f"the project also runs on {fix.other_accelerator}, where the comparison would now hold"
    return None


def _dead_arm(node: cst.CSTNode, fix: FileFix) -> str | None:
    """Why a "cuda" string in a branch of a test against "cuda" (`'cuda' if 'cuda' in
    device else 'cpu'`) is held with that test: rewritten alone it is dead on a TPU, where
    the test stays false; None when the test's own edit is safe."""
    child, parent = node, fix.parent(node)
    while parent is not None and not isinstance(parent, (cst.BaseStatement, cst.BaseSmallStatement)):
        if isinstance(parent, cst.IfExp) and child is parent.body:
            break
        child, parent = parent, fix.parent(parent)
    if not isinstance(parent, (cst.IfExp, cst.If)) or parent.body is not child:
        return None
    found: list[cst.Comparison] = []

    class _Tests(cst.CSTVisitor):
        def visit_SimpleString(self, string: cst.SimpleString) -> None:
            comparison = _comparison(string, fix)
            if comparison is not None and string.evaluated_value == "cuda" and fix.carries(CurrentAccelerator.name, string):
                found.append(comparison)

    parent.test.visit(_Tests())
    for comparison in found:
        why = _comparison_unsafe(comparison, fix)
        if why:
            return f"rewritten alone it is dead on a TPU, where the test beside it ({fix.code(comparison)}) stays false, and that test's fix is unsafe: {why}"
    return None


def _comparison(node: cst.CSTNode, fix: FileFix) -> cst.Comparison | None:
    parent = fix.parent(node)
    if isinstance(parent, cst.ComparisonTarget):
        parent = fix.parent(parent)
    if isinstance(parent, cst.Comparison) and len(parent.comparisons) == 1:
        return parent
    return None
