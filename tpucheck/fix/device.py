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
- With `--unsafe-fixes`, a `device` variable in scope is used instead (`x.to(device)`,
  `torch.zeros(2, device=device)`): what people write, but it is only as right as the
  value the variable holds.

torch.accelerator.current_accelerator needs torch 2.6.
"""

from __future__ import annotations

import re

import libcst as cst
from libcst.metadata import Scope, ScopeProvider

from tpucheck.fix.base import Codemod, Edit, FileFix, Target
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
            return self._fstring(original, updated, fix, target)  # type: ignore[arg-type]
        return None

    # ------------------------------------------------------------------ x.cuda()

    def _method(self, original: cst.Call, updated: cst.Call, fix: FileFix) -> Edit | None:
        func = updated.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "cuda" and fix.carries(self.name, original)):
            return None
        target = fix.take(self.name, original)
        assert target is not None
        if any(arg.keyword is None or arg.keyword.value != "non_blocking" for arg in updated.args):
            fix.skip(target, "`.cuda(...)` with a device index: use `.to(device)` with the device you mean")
            return None
        variable = self._variable(original, fix)
        if variable is None and not fix.allows(NEEDS):
            fix.skip_pinned(target, NEEDS, "torch.accelerator.current_accelerator")
            return None
        device = cst.Name(variable) if variable else fix.expression(CURRENT)
        first = cst.Arg(device, comma=cst.MaybeSentinel.DEFAULT if not updated.args else cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        new = updated.with_changes(func=func.with_changes(attr=cst.Name("to")), args=[first, *updated.args])
        shown = variable or CURRENT
        return Edit(new, (target,), f".cuda() -> .to({shown})", None if variable else NEEDS, None if variable else USES)

    # ------------------------------------------------------------------ "cuda" strings

    def _string(self, node: cst.SimpleString, fix: FileFix, target: Target) -> Edit | None:
        prefix = node.prefix.lower()
        value = node.evaluated_value
        if "b" in prefix or not isinstance(value, str) or not _CUDA.fullmatch(value):
            fix.skip(target, "not a plain \"cuda\" device string; fix it by hand")
            return None
        rest = value[4:]
        if not rest and (variable := self._argument_variable(node, fix)):
            return Edit(cst.Name(variable), (target,), f'"cuda" -> {variable}')
        kind = GUARDED_TYPE if target.finding.guarded and fix.under_cuda_check(node) else TYPE_OR_CUDA
        if not rest:
            return Edit(fix.expression(kind), (target,), f'"{value}" -> {kind}', NEEDS, USES)
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
        return Edit(new, (target,), f'"{value}" -> f"{{{kind}}}{rest}"', NEEDS, USES)

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

    # ------------------------------------------------------------------ a `device` in scope

    def _variable(self, node: cst.CSTNode, fix: FileFix) -> str | None:
        """`device`, when unsafe fixes are on and that name is bound where `node` is."""
        if not fix.unsafe or fix.metadata is None:
            return None
        scope = fix.metadata(ScopeProvider, node)
        if not isinstance(scope, Scope) or DEVICE_VARIABLE not in scope:
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
