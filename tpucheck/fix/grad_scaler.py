"""GradScaler: the deprecated CUDA name (safe), or no scaler at all with bf16 (unsafe).

Safe: `torch.cuda.amp.GradScaler(args)` -> `torch.amp.GradScaler("cuda", args)`, which
PyTorch documents as the same object (torch 2.3 and later: refused where the file's
manifest pins an older torch). The finding stays (a scaler is still a host sync per step):
the edit is reported as rewritten, not fixed; the rest is the unsafe fix.

Unsafe (`--unsafe-fixes`): bf16 needs no loss scaling, so the scaler goes: its assignment
and `scaler.update()` / `scaler.unscale_(opt)` statements are removed, `scaler.scale(loss)`
becomes `loss` and `scaler.step(opt)` becomes `opt.step()`. Only when every use of the
scaler is one of those, no comment sits on a line that goes, and the module has no fp16
left once the autocast fix has made its autocasts bf16: removing the scaler under fp16
would let gradients underflow.
"""

from __future__ import annotations

import re

import libcst as cst

from tpucheck.fix.base import Codemod, Edit, FileFix, Target
from tpucheck.fix.surface import GRAD_SCALER_SINCE
from tpucheck.fix.versions import Version

_CUDA_SCALER = ("torch.cuda.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler")
_SCALERS = (*_CUDA_SCALER, "torch.amp.GradScaler", "torch.amp.grad_scaler.GradScaler", "torch.GradScaler")
_FP16 = re.compile(r"float16|\bhalf\b|fp16")
_REMOVED_CALLS = ("update", "unscale_")
NEEDS = Version(GRAD_SCALER_SINCE)


class GradScaler(Codemod):
    name = "grad-scaler"

    def __init__(self) -> None:
        self.removal: _Removal | None = None
        self.refusal: str | None = None

    def begin(self, module: cst.Module, fix: FileFix) -> None:
        if fix.unsafe:
            self.removal, self.refusal = _plan_removal(module, fix, self.name)

    def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        removal = self.removal
        if removal is not None:
            edit = removal.edit(original, updated, fix)
            if edit is not None:
                return edit
        if not (isinstance(original, cst.Call) and isinstance(updated, cst.Call) and fix.carries(self.name, original)):
            return None
        if removal is not None and original is removal.value:
            return None  # the whole assignment goes
        target = fix.take(self.name, original)
        assert target is not None
        names = fix.qualified(original.func)
        if names & set(_CUDA_SCALER):
            if any(arg.star for arg in updated.args):
                fix.skip(target, "GradScaler(*args): fix it by hand")
                return None
            if not fix.allows(NEEDS):
                fix.skip_pinned(target, NEEDS, "torch.amp.GradScaler")
                return None
            device = cst.Arg(cst.SimpleString('"cuda"'), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if updated.args else cst.MaybeSentinel.DEFAULT)
            new = updated.with_changes(func=fix.torch("amp.GradScaler"), args=[device, *updated.args])
            why = f"it stays because {self.refusal}" if fix.unsafe and self.refusal else "dropping it for bf16 is an unsafe fix (--unsafe-fixes)"
            note = f'renamed to torch.amp.GradScaler("cuda", ...), the same object; the scaler is still a host sync per step: {why}'
            return Edit(new, (target,), note, NEEDS, "torch.amp.GradScaler", keeps_finding=True)
        fix.skip(target, self.refusal or "already torch.amp.GradScaler; dropping the scaler for bf16 is an unsafe fix (--unsafe-fixes)")
        return None


class _Removal:
    """The nodes that go or change when the scaler named `name` is removed."""

    def __init__(self, target: Target, assignment: cst.SimpleStatementLine, name: str, statements: set[cst.SimpleStatementLine], scales: set[cst.Call], steps: set[cst.Call]) -> None:
        self.target = target
        self.assignment = assignment
        small = assignment.body[0]
        self.value = small.value if isinstance(small, cst.Assign) else None
        self.name = name
        self.statements = statements
        self.scales = scales
        self.steps = steps

    def edit(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        if original is self.assignment:
            fix.taken.add(self.target)
            return Edit(cst.RemovalSentinel.REMOVE, (self.target,), f"removed the GradScaler `{self.name}` (bf16 needs no loss scaling)")
        if original in self.statements:
            return Edit(cst.RemovalSentinel.REMOVE, (), "")
        if isinstance(updated, cst.Call) and original in self.scales:
            return Edit(updated.args[0].value, (), "")
        if isinstance(updated, cst.Call) and original in self.steps:
            optimizer = updated.args[0].value
            return Edit(cst.Call(cst.Attribute(optimizer, cst.Name("step"))), (), "")
        return None


def _plan_removal(module: cst.Module, fix: FileFix, codemod: str) -> tuple[_Removal | None, str | None]:
    """The removal of the one scaler assigned from a GradScaler finding, or why not."""
    found: list[tuple[Target, cst.SimpleStatementLine, str]] = []

    class _Assignments(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
            if len(node.body) != 1 or not isinstance(node.body[0], cst.Assign):
                return
            assign = node.body[0]
            if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) or not isinstance(assign.value, cst.Call):
                return
            if fix.qualified(assign.value.func) & set(_SCALERS) and fix.carries(codemod, assign.value):
                target = next(t for t in fix.targets if t.codemod == codemod and t.end == fix.end_of(assign.value))
                found.append((target, node, assign.targets[0].target.value))

    module.visit(_Assignments())
    if len(found) != 1:
        return None, "the GradScaler is not one `scaler = GradScaler(...)` assignment" if found else None
    target, assignment, name = found[0]
    assigned = assignment.body[0]
    assert isinstance(assigned, cst.Assign)
    uses: list[cst.Name] = []
    parents: dict[cst.CSTNode, cst.CSTNode] = {}

    class _Uses(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            for child in node.children:
                parents[child] = node
            if isinstance(node, cst.Name) and node.value == name:
                uses.append(node)
            return True

    module.visit(_Uses())
    statements: set[cst.SimpleStatementLine] = set()
    scales: set[cst.Call] = set()
    steps: set[cst.Call] = set()
    for use in uses:
        attribute = parents.get(use)
        if attribute is assigned.targets[0]:
            continue
        call = parents.get(attribute) if isinstance(attribute, cst.Attribute) and attribute.value is use else None
        if not isinstance(call, cst.Call) or call.func is not attribute or not isinstance(attribute, cst.Attribute):
            return None, f"`{name}` is used other than scale/step/update/unscale_"
        method = attribute.attr.value
        expression = parents.get(call)
        line = parents.get(expression) if isinstance(expression, cst.Expr) else None
        if method in _REMOVED_CALLS and isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
            if _commented(line):
                return None, f"a comment sits on `{name}.{method}()`"
            statements.add(line)
        elif method == "scale" and len(call.args) == 1 and call.args[0].keyword is None:
            scales.add(call)
        elif method == "step" and len(call.args) == 1 and call.args[0].keyword is None:
            steps.add(call)
        else:
            return None, f"`{name}.{method}(...)` has no plain replacement"
    if _commented(assignment):
        return None, f"a comment sits on the `{name} = ...` line"
    if _fp16_left(module, fix):
        return None, "the module still mentions fp16 outside the autocast calls this fix makes bf16, and without a scaler fp16 gradients underflow"
    return _Removal(target, assignment, name, statements, scales, steps), None


def _commented(line: cst.SimpleStatementLine) -> bool:
    return line.trailing_whitespace.comment is not None or any(empty.comment is not None for empty in line.leading_lines)


def _fp16_left(module: cst.Module, fix: FileFix) -> bool:
    """fp16 anywhere in the module but inside the autocast calls being fixed to bf16."""
    spans = [(t.start, t.end) for t in fix.targets if t.codemod == "autocast"]
    for number, line in enumerate(module.code.splitlines(), 1):
        code = line.split("#", 1)[0]
        for found in _FP16.finditer(code):
            at = (number, found.start())
            if not any(start <= at < end for start, end in spans):
                return True
    return False
