"""The Python walker: expression handlers (names, attributes, calls, decorators, strings in
a device context, comparisons) on top of the statement handlers, and the table that
dispatches each node type to its handler. One pass over a libcst tree runs every Python
rule at once.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

import libcst as cst

from tpucheck.analyze.python import choices, conditions, hostdata, options
from tpucheck.analyze.python.constraints import args_hold, call_label, conditional_arm, constrained_arm, keyword_holds, static_string
from tpucheck.analyze.python.context import Guard
from tpucheck.analyze.python.core import Hit
from tpucheck.analyze.python.index import RuleMatcher
from tpucheck.analyze.python.scope import dotted
from tpucheck.analyze.python.statements import ASSIGNMENT, StatementWalker
from tpucheck.ruleset.model import Matcher

__all__ = ["ARGUMENT", "ASSIGNMENT", "COMPARISON", "Hit", "Walker"]

ARGUMENT, COMPARISON = "argument", "comparison"
_CASTS = frozenset({"half", "float", "to", "type"})
"""Methods whose call may cast a copy or undo a cast (`note_copy`)."""


class Walker(StatementWalker):
    # -- names ---------------------------------------------------------------------------

    def on_name(self, node: cst.Name, ctx: str | None) -> None:
        if self.index.reference:
            qualified = self.frame.scope.resolve(node.value)
            # An alias used bare refers to what its assignment already reported.
            if qualified is not None and self.foreign(qualified) and self.alias_of_name(node.value) is None:
                # `from torch.cuda.nvtx import range_push`: a rule on the module sees the name
                parts = qualified.split(".")
                names = [".".join(parts[:end]) for end in range(1, len(parts) + 1)]
                self.reference_hits(node, names, (qualified,))

    def on_attribute(self, node: cst.Attribute, ctx: str | None) -> None:
        chain: list[cst.Attribute] = []
        base: cst.BaseExpression = node
        while isinstance(base, cst.Attribute):
            chain.append(base)
            base = base.value
        resolved = self.frame.scope.resolve(base.value) if isinstance(base, cst.Name) else None
        if resolved is not None and not self.foreign(resolved):
            resolved = None
        if self.index.attribute and not (isinstance(base, cst.Name) and self.is_module(base.value)):
            for attribute in chain[1:] if self.frame.storing else chain:
                for rule_matcher in self.index.attribute.lookup(attribute.attr.value):
                    self.hit(rule_matcher, attribute)
        if not isinstance(base, cst.Name):
            self.walk(base)
            return
        if resolved is None or not self.index.reference:
            return
        # A rule on a prefix (`torch.backends.cudnn`) matches every longer chain; the
        # finding spans the whole chain (`torch.backends.cudnn.benchmark`), which is what
        # a reader needs to see. One finding per rule per chain.
        names: list[str] = []
        alias = self.alias_of_name(base.value)
        for qualified in alias or (resolved,):
            if not alias:  # through an alias, the alias itself was its assignment's finding
                names.append(qualified)
            for attribute in reversed(chain):
                qualified = f"{qualified}.{attribute.attr.value}"
                names.append(qualified)
        fulls = (names[-1],) if not alias or len(alias) == 1 else tuple(f"{target}{_suffix(chain)}" for target in alias)
        self.reference_hits(node, names, fulls)

    def reference_hits(self, node: cst.BaseExpression, names: list[str], fulls: tuple[str, ...]) -> None:
        """Reference rules on a name and on every shorter name it starts with (`names`,
        shortest first), one finding per rule. An `exact` matcher holds on the whole name
        only (`fulls`); a `residual` one only where no other rule claims the name, and
        then only the longest residual."""
        seen: set[str] = set()
        residual: list[tuple[str, RuleMatcher]] = []
        for name in reversed(names):
            for rule_matcher in self.index.reference.lookup(name):
                matcher = rule_matcher[1]
                if matcher.exact and name not in fulls:
                    continue
                if matcher.uncalled and node is self.callee:
                    continue
                if matcher.residual:
                    residual.append((name, rule_matcher))
                elif rule_matcher[0].id not in seen:
                    seen.add(rule_matcher[0].id)
                    self.hit(rule_matcher, node)
        if residual:
            longest = residual[0][0]
            called = node is self.callee
            for name, rule_matcher in residual:
                if name == longest and rule_matcher[0].id not in seen and not _claimed(rule_matcher[1], names, fulls, called):
                    seen.add(rule_matcher[0].id)
                    self.hit(rule_matcher, node)

    # -- calls ---------------------------------------------------------------------------

    def on_call(self, node: cst.Call, ctx: str | None) -> None:
        index = self.index
        func = node.func
        if type(func) is cst.Attribute and func.attr.value == "add_argument":
            self.note_argument(node)
        qualified = self.qualified(func)
        method: str | None = None
        if qualified is not None and not (qualified in index.host_calls and hostdata.inputs_on_host(self, node)):
            on_host: bool | None = None  # asked once, and only when a rule of such a category matches
            for rule_matcher in self.lookup(index.call, func, qualified):
                if rule_matcher[0].category in index.host_categories:
                    # a factory without `device=` (`torch.triu_indices(n, n, 1)`) runs on the host
                    on_host = (
                        hostdata.inputs_on_host(self, node) or hostdata.first_input_on_host(self, node) or (qualified in index.host_constructors and hostdata.made_on_host(qualified, node))
                    ) if on_host is None else on_host
                    if on_host:
                        continue
                if args_hold(self, rule_matcher[1], node):
                    label = call_label(self, rule_matcher[1], node)
                    if label is None and rule_matcher[0].inventory == "tpu-support":
                        label = qualified  # the inventory names what was found
                    with self.enter(guard=self.arm_guard(constrained_arm(self, rule_matcher[1], node, self.chosen))):
                        self.hit(rule_matcher, node, detail=label)
        if isinstance(func, cst.Attribute):
            parts = dotted(func)
            if parts is None or not self.is_module(parts[0]):
                method = func.attr.value
                if method in _CASTS:
                    self.note_copy(node, func)
                elif method in index.host_results and not node.args and isinstance(func.value, cst.Call):
                    self.leaving.add(id(func.value))  # `x.double().cpu()`: widened on the way out
                elif method == "state_dict" and isinstance(func.value, cst.Name) and self.archives:
                    # `model.state_dict()` of an archive loaded above: its weights, not its graph
                    for loaded in self.archives.get((self.frame.functions, func.value.value), ()):
                        loaded.weights = True
                rule_matchers = index.method.lookup(method)
                if rule_matchers and hostdata.other_device_receiver(self, func.value):
                    rule_matchers = ()  # `torch.npu.current_stream().wait_stream(s)`: not CUDA's
                if rule_matchers:
                    on_host = hostdata.receiver_on_host(self, rule_matchers, node)
                    for rule_matcher in rule_matchers:
                        if args_hold(self, rule_matcher[1], node):
                            # `x.to(dtype)` with `dtype = torch.float16 if x.is_cuda else
                            # torch.float32`: the fp16 arm's guard (audits BC, BE: EDM's Precond)
                            with self.enter(guard=self.arm_guard(constrained_arm(self, rule_matcher[1], node, self.chosen))):
                                self.hit(rule_matcher, node, start=func.attr, receiver_on_host=on_host)
        if index.keyword:
            callees = self.alternatives(func, qualified)
            scalars = qualified in _LITERAL_TENSORS and _few_scalars(node)
            for arg in node.args:
                if arg.keyword is not None:
                    for rule_matcher in index.keyword.lookup(arg.keyword.value):
                        # `torch.linspace(..., dtype=torch.float64)` is made on the host; so is
                        # a test's `torch.ones(1, dtype=torch.half)`, its CPU subject (`copy`)
                        unless = rule_matcher[0].unless
                        host_only = unless == "host" or (unless == "copy" and self.frame.role is not None and self.frame.role.role == "test")
                        if host_only and qualified in index.host_constructors and hostdata.made_on_host(qualified, node):
                            continue
                        if keyword_holds(self, rule_matcher[1], arg, callees, method):
                            with self.enter(guard=self.arm_guard(conditional_arm(self, rule_matcher[1].value, self.chosen(arg.value)))):
                                self.hit(rule_matcher, arg, scalars=scalars)
        self.callee = func
        self.walk(func)
        device = index.device
        positions: tuple[int, ...] = ()
        keywords = device.keywords
        if qualified is not None:
            positions = device.calls.get(qualified, ())
            off = device.disabled_by.get(qualified)
            if off is not None and any(a.keyword is not None and a.keyword.value == off and isinstance(a.value, cst.Name) and a.value.value == "False" for a in node.args):
                positions, keywords = (), frozenset()  # turned off: its device names nothing that runs
        elif method is not None:
            positions = device.methods.get(method, ())
        quiet = (method is not None and method in index.guards.quiet_methods) or (qualified is not None and self.quiet(qualified))
        output = not self.frame.output and self.makes_output(func, qualified, method)
        with self.enter(report=True) if quiet else self.enter(output=True) if output else self.enter():
            position = 0
            for arg in node.args:
                if arg.keyword is not None:
                    with self.enter(guard_test=True) if choices.switches_feature(self, arg) else self.enter():
                        self.walk(arg.value, ARGUMENT if arg.keyword.value in keywords else None)
                else:
                    self.walk(arg.value, ARGUMENT if position in positions and not arg.star else None)
                    position += 1

    def makes_output(self, func: cst.BaseExpression, qualified: str | None, method: str | None) -> bool:
        """Whether a call turns its arguments into an image, a plot or audio (`guards.
        output_calls` / `output_methods`), or is a call of such a call's result
        (`ToPILImage()(x)`), memoised by name."""
        guards = self.index.guards
        if method is not None and method in guards.output_methods:
            return True
        if qualified is None and isinstance(func, cst.Call):
            qualified = self.qualified(func.func)
        if qualified is None:
            return False
        found = self._output.get(qualified)
        if found is None:
            found = self._output[qualified] = any(fnmatchcase(qualified, p) for p in guards.output_calls)
        return found

    def quiet(self, qualified: str) -> bool:
        """Whether a callee only reports (print, warnings.warn, logging.*), memoised: the
        walk asks at every call."""
        found = self._quiet.get(qualified)
        if found is None:
            bare = qualified.removeprefix("builtins.")
            found = self._quiet[qualified] = any(fnmatchcase(bare, p) for p in self.index.guards.quiet_calls)
        return found

    def note_argument(self, node: cst.Call) -> None:
        """`parser.add_argument("--use-liger", action="store_true")`: an option, off by
        default (`args.use_liger`)."""
        flag = next((a.value for a in node.args if a.keyword is None and isinstance(a.value, cst.SimpleString)), None)
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        name = flag.evaluated_value if isinstance(flag, cst.SimpleString) else None
        dest = keywords.get("dest")
        if isinstance(dest, cst.SimpleString):
            name = dest.evaluated_value
        if not isinstance(name, str) or (not name.startswith("-") and dest is None):
            return
        action = keywords.get("action")
        default: str | None = "None"
        if isinstance(action, cst.SimpleString) and action.evaluated_value in ("store_true", "store_false"):
            default = "False" if action.evaluated_value == "store_true" else "True"
        elif "default" in keywords:
            default = options.literal_code(keywords["default"])
        if default is not None:
            self.options[name.lstrip("-").replace("-", "_")] = default

    def on_decorator(self, node: cst.Decorator, ctx: str | None) -> None:
        expression = node.decorator
        target = expression.func if isinstance(expression, cst.Call) else expression
        qualified = self.qualified(target)
        if qualified is not None:
            for rule_matcher in self.lookup(self.index.decorator, target, qualified):
                matcher = rule_matcher[1]
                if isinstance(expression, cst.Call):
                    holds = args_hold(self, matcher, expression)
                else:  # a bare decorator passes no argument: only `missing` constraints hold
                    holds = all(c.missing for c in matcher.args)
                if holds:
                    self.hit(rule_matcher, node.decorator, detail=self.frame.decorated)
        self.callee = target
        self.walk(expression)

    # -- device contexts -----------------------------------------------------------------

    def on_comparison(self, node: cst.Comparison, ctx: str | None) -> None:
        operands = [node.left, *(c.comparator for c in node.comparisons)]
        relevant = any(
            isinstance(c.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)) for c in node.comparisons
        )
        device = relevant and any(conditions.is_device_operand(self, o) for o in operands)
        for operand in operands:
            self.walk(operand, COMPARISON if device else None)

    def on_string(self, node: cst.BaseString, ctx: str | None) -> None:
        if ctx is not None and self.index.strings:
            value = static_string(node)
            if value is not None:
                for rule_matcher in self.index.strings:
                    matcher = rule_matcher[1]
                    if ctx in matcher.contexts and matcher.regex is not None and matcher.regex.fullmatch(value):
                        self.hit(rule_matcher, node, detail=value if rule_matcher[0].inventory == "tpu-support" else None)
        if isinstance(node, cst.FormattedString):
            self.walk_fields(node)

    def on_concatenated_string(self, node: cst.ConcatenatedString, ctx: str | None) -> None:
        """`f"on {torch.cuda.get_device_name()}" "..."`: the whole literal is matched once,
        and the code inside its f-string parts is walked like any other code."""
        self.on_string(node, ctx)
        self.walk(node.left)
        self.walk(node.right)

    def note_copy(self, node: cst.Call, func: cst.Attribute) -> None:
        """`m.half().float()`: the inner cast is undone at once; `deepcopy(m).half()`: the
        cast makes a copy (what a checkpoint stores), the model keeps its dtype; and
        `w.to("cpu").to(torch.float16)`, `w.detach().cpu().half()`: a host copy cast for
        the file it is saved to, no fp16 on the device (audit AN: LoRA weights saved)."""
        inner = func.value
        if func.attr.value == "float" and not node.args and isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute):
            self.copies.add(id(inner))
        elif isinstance(inner, cst.Call) and (self.qualified(inner.func) == "copy.deepcopy" or hostdata.on_host(self, inner)):
            self.copies.add(id(node))

    def on_if_expression(self, node: cst.IfExp, ctx: str | None) -> None:
        """`"cuda" if torch.cuda.is_available() else "cpu"`: both branches are optional
        paths, as under an `if` with the same test; a device context reaches both. As there,
        the CUDA side of a TPU or device-agnostic test (`... if hasattr(torch, "accelerator")
        else "cuda"`) has a sibling that runs on the TPU. A choice on a setting is an option
        as an `if` on it is (`"flash_attention_2" if use_flash else None`, with `use_flash`
        off by default), and its two values are always alternatives: the CUDA one keeps the
        plain one as its fallback. A CUDA test choosing between two names that are not
        devices (`"xformers" if torch.cuda.is_available() else "sdpa"`) picks a feature, not
        the device: the check is no finding of its own (`unless: guard`), what it picks is."""
        with self.enter(guard_test=self.frame.guard_test or choices.picks_feature(self, node) or self._stays_put(node)):
            self.walk(node.test)
        body, orelse, plain = self._arms(node)
        start = len(self.hits)
        with self.enter(guard=body):
            self.walk(node.body, ctx)
        middle = len(self.hits)
        with self.enter(guard=orelse):
            self.walk(node.orelse, ctx)
        if plain:
            self._settle_sides(node.test, node.body, node.orelse, start, middle)

    def _stays_put(self, node: cst.IfExp) -> bool:
        """`x.cpu() if x.is_cuda else x`: the CUDA side brings the value home, the other
        leaves it as it is; a TPU value stays on the TPU, and the check needs no edit."""
        polarity = conditions.cuda_polarity(self, node.test)
        home, other = (node.body, node.orelse) if polarity > 0 else (node.orelse, node.body)
        return polarity != 0 and conditions.brings_home(home) and isinstance(other, (cst.Name, cst.Attribute))

    def _arms(self, node: cst.IfExp) -> tuple[Guard | None, Guard | None, bool]:
        """The guards of a conditional's body and other arm, and whether its test is a plain
        setting (neither a device test nor an option with a known default)."""
        polarity = conditions.cuda_polarity(self, node.test)
        tpu = conditions.tpu_test(self, node.test)
        option = options.option_polarity(self, node.test) if polarity == 0 and not tpu else 0
        outer = self.frame.guard
        guard = Guard("guard.test", node.test)
        body = guard if polarity > 0 else outer
        if polarity == 0 and conditions.other_accelerator_test(self, node.test):
            body = Guard("alternative.other-accelerator-branch", node.test)
        elif option > 0:
            body = Guard("guard.option", node.test)
        orelse = guard if polarity < 0 or tpu else Guard("guard.option", node.test) if option < 0 else outer
        return body, orelse, polarity == 0 and option == 0 and not tpu and options.plain_flag(node.test)

    def arm_guard(self, arm: tuple[cst.IfExp, bool] | None) -> Guard | None:
        """The guard of a match that holds on one arm of a conditional alone (the keyword
        `attn_implementation="flash_attention_2" if use_flash else None`), as a finding
        inside that arm would have it; the frame's own guard otherwise."""
        if arm is None:
            return self.frame.guard
        node, in_body = arm
        body, orelse, plain = self._arms(node)
        guard = body if in_body else orelse
        if guard is self.frame.guard and plain and not conditions.uses_other_accelerator(self, node.orelse if in_body else node.body):
            return Guard("guard.option-else", node.test)
        return guard

    def on_boolean(self, node: cst.BooleanOperation, ctx: str | None) -> None:
        """`torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8`,
        `not x.is_cuda or torch.cuda.is_current_stream_capturing()`: the right side runs only
        with CUDA, as the body of an `if` with the left side's test would."""
        self.walk(node.left, ctx)
        polarity = conditions.cuda_polarity(self, node.left)
        guarded = polarity > 0 if isinstance(node.operator, cst.And) else polarity < 0
        with self.enter(guard=Guard("guard.short-circuit", node.left) if guarded else self.frame.guard):
            self.walk(node.right, ctx)

    def on_transparent(self, node: cst.CSTNode, ctx: str | None) -> None:
        """Containers and conditionals pass a device context on to their values."""
        if ctx is None:
            self.walk_fields(node)
            return
        if isinstance(node, cst.BinaryOperation):
            self.walk(node.left, ctx if isinstance(node.operator, (cst.Add, cst.Modulo)) else None)
            self.walk(node.right)
        elif isinstance(node, cst.Dict):
            for element in node.elements:
                if isinstance(element, cst.DictElement):
                    self.walk(element.key)
                    self.walk(element.value, ctx)
                else:
                    self.walk(element)
        elif isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            for item in node.elements:
                self.walk(item.value, ctx)


_LITERAL_TENSORS = frozenset({"torch.tensor", "torch.as_tensor"})
_FEW = 4
_SCALAR_NODES = (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.UnaryOperation, cst.Subscript)


def _few_scalars(node: cst.Call) -> bool:
    """`torch.tensor([self.count, self.total], ...)`: data given as a literal list or tuple of
    at most four plain values (names, attributes, numbers), no comprehension, star or call."""
    first = next((a for a in node.args if a.keyword is None), None)
    if first is None or first.star or not isinstance(first.value, (cst.List, cst.Tuple)):
        return False
    elements = first.value.elements
    return 0 < len(elements) <= _FEW and all(isinstance(e, cst.Element) and isinstance(e.value, _SCALAR_NODES) for e in elements)


def _suffix(chain: list[cst.Attribute]) -> str:
    """`.a.b` for the attribute chain of `x.a.b` (collected outermost first)."""
    return "".join(f".{attribute.attr.value}" for attribute in reversed(chain))


def _claimed(matcher: Matcher, names: list[str], fulls: tuple[str, ...], called: bool) -> bool:
    """Whether another rule's pattern (a residual matcher's `claims`) judges this name: a
    reference on it or on a shorter name, an exact reference on it, or a call or
    decorator rule where it is called."""

    for kind, pattern in matcher.claims:
        if kind == "reference":
            if any(fnmatchcase(name, pattern) for name in names):
                return True
        elif (kind == "exact" or called) and any(fnmatchcase(full, pattern) for full in fulls):
            return True
    return False


Walker.HANDLERS = {
    cst.Name: Walker.on_name,
    cst.Attribute: Walker.on_attribute,
    cst.Import: Walker.on_import,
    cst.ImportFrom: Walker.on_import,
    cst.Call: Walker.on_call,
    cst.Decorator: Walker.on_decorator,
    cst.FunctionDef: Walker.on_function,
    cst.ClassDef: Walker.on_function,
    cst.Lambda: Walker.on_lambda,
    cst.For: Walker.on_loop,
    cst.While: Walker.on_loop,
    cst.Try: Walker.on_try,
    cst.TryStar: Walker.on_try,
    cst.NamedExpr: Walker.on_named_expr,
    cst.Global: Walker.on_declaration,
    cst.Nonlocal: Walker.on_declaration,
    cst.MatchAs: Walker.on_match_as,
    cst.MatchStar: Walker.on_match_as,
    cst.ListComp: Walker.on_comprehension,
    cst.SetComp: Walker.on_comprehension,
    cst.DictComp: Walker.on_comprehension,
    cst.GeneratorExp: Walker.on_comprehension,
    cst.If: Walker.on_if,
    cst.Assert: Walker.on_failure,
    cst.Raise: Walker.on_failure,
    cst.Return: Walker.on_return,
    cst.IndentedBlock: Walker.on_indented_block,
    cst.Assign: Walker.on_assign,
    cst.AnnAssign: Walker.on_ann_assign,
    cst.Comparison: Walker.on_comparison,
    cst.SimpleString: Walker.on_string,
    cst.ConcatenatedString: Walker.on_concatenated_string,
    cst.FormattedString: Walker.on_string,
    cst.IfExp: Walker.on_if_expression,
    cst.BooleanOperation: Walker.on_boolean,
    cst.BinaryOperation: Walker.on_transparent,
    cst.Dict: Walker.on_transparent,
    cst.List: Walker.on_transparent,
    cst.Tuple: Walker.on_transparent,
    cst.Set: Walker.on_transparent,
}
