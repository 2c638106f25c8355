"""One pass over a libcst tree that runs every Python rule at once.

libcst's own visitor dispatch rebuilds and re-dispatches every node and costs about as
much as the parse; this walker reads dataclass fields directly (about 15x faster),
handles the dozen node types rules care about, and carries the little context rules
need: the import table, whether a string sits where a device goes, and whether code
sits on an optional path (try/except ImportError, an availability check).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase

import libcst as cst

from tpucheck.analyze.python import bindings, flow
from tpucheck.analyze.python.conditions import (
    exits_without_cuda,
    host_annotation,
    is_cuda_skip_decorator,
    is_device_operand,
    module_skip_mark,
    role_of_function,
)
from tpucheck.analyze.python.constraints import args_hold, call_label, keyword_holds, static_string
from tpucheck.analyze.python.index import PythonIndex, RuleMatcher
from tpucheck.analyze.python.scope import Scope, dotted
from tpucheck.ruleset.model import Matcher
from tpucheck.ruleset.names import GlobTable

ARGUMENT, COMPARISON = "argument", "comparison"

_SKIPPED_FIELDS = (
    "whitespace",
    "lpar",
    "rpar",
    "comma",
    "semicolon",
    "leading_lines",
    "lines_after_decorators",
    "footer",
    "header",
    "newline",
    "equal",
    "colon",
    "dot",
    "trailing",
    "asynchronous",
    "default_indent",
    "default_newline",
    "encoding",
    "star",
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    fields = _FIELDS.get(node_type)
    if fields is None:
        fields = tuple(
            f.name for f in dataclasses.fields(node_type) if not any(skip in f.name for skip in _SKIPPED_FIELDS)
        )
        _FIELDS[node_type] = fields
    return fields


@dataclass(slots=True)
class Hit:
    rule_matcher: RuleMatcher
    node: cst.CSTNode
    guarded: bool
    detail: str | None = None
    start: cst.CSTNode | None = None
    """Where the span starts when not at `node`: a method call is reported from its name
    (`.cuda()`), not from the start of a long receiver expression."""
    in_loop: bool = False
    functions: tuple[str, ...] = ()
    """Enclosing function names, outermost first."""
    decorators: tuple[str, ...] = ()
    """Resolved decorators of the enclosing functions."""
    guard_test: bool = False
    """Inside the condition of a CUDA guard or test skip (`if torch.cuda.is_available():`
    over CUDA code, `skipif(not torch.cuda.is_available())`): a rule with `unless: guard`
    is not reported there, since the check is what keeps the fallback."""
    periodic: bool = False
    """Under `if step % N == 0:`: runs every N steps, not per step, so not a hot place."""
    role: str | None = None
    on_host: bool = False
    """A method call whose receiver is known to live on the host (NumPy, `.cpu()`, literals)."""



class Walker:
    conditional_aliases = False
    """Whether any alias stands for more than one name yet: until then no lookup pays
    for alternatives."""
    alias_names: frozenset[str] | set[str] = frozenset()
    """Every name bound as an alias so far, in any scope: names outside it (nearly all)
    skip the scope walk that asks whether they are one."""

    def alias_of_name(self, name: str) -> tuple[str, ...] | None:
        return self.scope.alias_targets(name) if name in self.alias_names else None

    def __init__(self, index: PythonIndex) -> None:
        self.index = index
        self.hits: list[Hit] = []
        self.scope = Scope()
        self.guard_depth = 0
        self.type_checking = 0  # inside `if TYPE_CHECKING:`: imports there never run, no dependency
        self.loop_depth = 0
        self.storing = False  # walking an assignment target: attribute matchers look for reads only
        self.decorated: str | None = None
        """The function or class whose decorators are being walked: it names kernels."""
        self.functions: tuple[str, ...] = ()
        self.decorators: tuple[str, ...] = ()
        self._device_names = index.device.names
        self.guard_test = False
        self.periodic_depth = 0
        self.role: str | None = None
        self.host_names: set[str] = set()
        """Simple names of the current function known to hold host data (last assignment wins)."""
        self.host_attributes: frozenset[str] = frozenset()
        self.host_functions: set[str] = set()  # module-level functions that only return host data
        self.returns: list[bool | None] | None = None  # per `return` of the module-level function walked: host data?
        self.class_kind: str | None = None  # inside a class: "test" (a test class) or "plain"
        self.data_class = False  # in a Dataset's methods: host data all through (dataset_class)
        self.receiver_on_host = False
        self.annotation_depth = 0  # inside a type annotation: only calls are uses there
        self.failure_depth = 0
        """In an assert's message or a raise: runs only on failure, so no step pays its sync."""
        self.callee: cst.CSTNode | None = None
        """The callee (or decorator) being walked: a name there is claimed by call rules."""

    # -- entry -------------------------------------------------------------------------

    def run(self, module: cst.Module) -> list[Hit]:
        bindings.bind_module_imports(self, module.body)
        # `pytestmark = pytest.mark.skipif(<no CUDA>)` skips every test of the module.
        marked = any(module_skip_mark(self, statement) for statement in module.body)
        self.guard_depth += marked
        self.walk_block(module.body)
        self.guard_depth -= marked
        return self.hits

    def walk_block(self, statements: object) -> None:
        """Statements in order; after an early exit on "no CUDA" (`if not
        torch.cuda.is_available(): return fallback(x)`, `pytest.skip(...)`,
        `pytest.importorskip("flash_attn")`) the rest of the block is the CUDA path."""
        raised = 0
        try:
            for statement in statements:  # type: ignore[attr-defined]
                self.guard_test = module_skip_mark(self, statement)
                try:
                    self.walk(statement)
                finally:
                    self.guard_test = False
                if not raised and exits_without_cuda(self, statement):
                    raised = 1
                    self.guard_depth += 1
        finally:
            self.guard_depth -= raised

    def on_indented_block(self, node: cst.IndentedBlock, ctx: str | None) -> None:
        self.walk_block(node.body)

    # -- traversal ---------------------------------------------------------------------

    def walk(self, node: cst.CSTNode, ctx: str | None = None) -> None:
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node, ctx)
        else:
            self.walk_fields(node)

    def walk_fields(self, node: cst.CSTNode) -> None:
        walk = self.walk
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                walk(value)
            elif type(value) is tuple or type(value) is list:
                for child in value:
                    if isinstance(child, cst.CSTNode):
                        walk(child)

    def walk_all(self, nodes: object, ctx: str | None = None) -> None:
        for child in nodes:  # type: ignore[attr-defined]
            self.walk(child, ctx)

    def hit(self, rule_matcher: RuleMatcher, node: cst.CSTNode, detail: str | None = None, start: cst.CSTNode | None = None) -> None:
        if (self.annotation_depth and rule_matcher[1].kind != "call") or (self.failure_depth and rule_matcher[0].category == "host-sync"):
            return
        on_host = rule_matcher[0].category in self.index.host_categories and ((self.receiver_on_host and rule_matcher[1].kind == "method") or self.data_class)
        self.hits.append(
            Hit(
                rule_matcher, node, self.guard_depth > 0, detail, start, self.loop_depth > 0, self.functions, self.decorators,
                self.guard_test, self.periodic_depth > 0, self.role, on_host,
            )
        )

    # -- names -------------------------------------------------------------------------

    def foreign(self, qualified: str) -> bool:
        """Rules look at other projects' names, never at the scanned project's own."""
        first_party = self.index.first_party
        return not first_party or qualified.split(".", 1)[0] not in first_party

    def qualified(self, node: cst.BaseExpression) -> str | None:
        parts = dotted(node)
        if parts is None:
            return None
        base = self.scope.resolve(parts[0])
        if base is None or not self.foreign(base):
            return None
        return ".".join((base, *parts[1:])) if len(parts) > 1 else base

    def alternatives(self, node: cst.BaseExpression, qualified: str | None) -> tuple[str, ...]:
        """Every qualified name `node` may stand for: more than one only through an alias
        bound to a conditional (`amp = torch.cuda.amp if c else torch.amp`)."""
        if qualified is None:
            return ()
        if not self.conditional_aliases:
            return (qualified,)
        parts = dotted(node)
        alias = self.alias_of_name(parts[0]) if parts is not None else None
        if alias is None or len(alias) == 1:
            return (qualified,)
        assert parts is not None
        return tuple(".".join((target, *parts[1:])) for target in alias)

    def lookup(self, table: GlobTable[RuleMatcher], node: cst.BaseExpression, qualified: str) -> list[RuleMatcher]:
        found = list(table.lookup(qualified))
        names = self.alternatives(node, qualified)
        if len(names) == 1:
            return found
        merged = list(found)
        for name in names[1:]:
            merged.extend(m for m in table.lookup(name) if m not in merged)
        return merged

    def on_name(self, node: cst.Name, ctx: str | None) -> None:
        if self.index.reference:
            qualified = self.scope.resolve(node.value)
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
        resolved = self.scope.resolve(base.value) if isinstance(base, cst.Name) else None
        if resolved is not None and not self.foreign(resolved):
            resolved = None
        if self.index.attribute and not (isinstance(base, cst.Name) and self.scope.is_module(base.value)):
            for attribute in chain[1:] if self.storing else chain:
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

    # -- calls -------------------------------------------------------------------------

    def on_call(self, node: cst.Call, ctx: str | None) -> None:
        index = self.index
        func = node.func
        qualified = self.qualified(func)
        method: str | None = None
        if qualified is not None and not (qualified in index.host_calls and bindings.inputs_on_host(self, node)):
            on_host: bool | None = None  # asked once, and only when a rule of such a category matches
            for rule_matcher in self.lookup(index.call, func, qualified):
                if rule_matcher[0].category in index.host_categories:
                    on_host = bindings.inputs_on_host(self, node) if on_host is None else on_host
                    if on_host:
                        continue
                if args_hold(self, rule_matcher[1], node):
                    label = call_label(self, rule_matcher[1], node)
                    if label is None and rule_matcher[0].inventory == "tpu-support":
                        label = qualified  # the inventory names what was found
                    self.hit(rule_matcher, node, detail=label)
        if isinstance(func, cst.Attribute):
            parts = dotted(func)
            if parts is None or not self.scope.is_module(parts[0]):
                method = func.attr.value
                rule_matchers = index.method.lookup(method)
                if rule_matchers and bindings.other_device_receiver(self, func.value):
                    rule_matchers = ()  # `torch.npu.current_stream().wait_stream(s)`: not CUDA's
                if rule_matchers:
                    self.receiver_on_host = bindings.receiver_on_host(self, rule_matchers, func.value)
                    try:
                        for rule_matcher in rule_matchers:
                            if args_hold(self, rule_matcher[1], node):
                                self.hit(rule_matcher, node, start=func.attr)
                    finally:
                        self.receiver_on_host = False
        if index.keyword:
            callees = self.alternatives(func, qualified)
            for arg in node.args:
                if arg.keyword is not None:
                    for rule_matcher in index.keyword.lookup(arg.keyword.value):
                        if keyword_holds(self, rule_matcher[1], arg, callees, method):
                            self.hit(rule_matcher, arg)
        self.callee = func
        self.walk(func)
        device = index.device
        positions: tuple[int, ...] = ()
        if qualified is not None:
            positions = device.calls.get(qualified, ())
        elif method is not None:
            positions = device.methods.get(method, ())
        position = 0
        for arg in node.args:
            if arg.keyword is not None:
                self.walk(arg.value, ARGUMENT if arg.keyword.value in device.keywords else None)
            else:
                self.walk(arg.value, ARGUMENT if position in positions and not arg.star else None)
                position += 1

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
                    self.hit(rule_matcher, node.decorator, detail=self.decorated)
        self.callee = target
        self.walk(expression)

    # -- scopes, loops, optional paths ---------------------------------------------------

    def on_function(self, node: cst.FunctionDef | cst.ClassDef, ctx: str | None) -> None:
        if node.type_parameters is not None:  # `def f[T: torch.cuda.Stream]()` (PEP 695)
            self.walk(node.type_parameters)
        self.scope.unbind(node.name.value)  # `def sync(): ...` replaces an alias of that name
        outer_decorators = self.decorators
        resolved = tuple(
            q for q in (self.qualified(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) for d in node.decorators) if q
        )
        # A decorator stacked on the function sees its siblings (`@torch.compile` over
        # `@torch.inference_mode()`), as code in the body does.
        self.decorated, self.decorators = node.name.value, (*outer_decorators, *resolved)
        skipped = False
        try:
            for decorator in node.decorators:
                if is_cuda_skip_decorator(self, decorator.decorator):
                    skipped = True
                    self.guard_test = True
                try:
                    self.walk(decorator)
                finally:
                    self.guard_test = False
        finally:
            self.decorated, self.decorators = None, outer_decorators
        outer_role = self.role
        if outer_role is None:
            self.role = role_of_function(node.name.value, resolved, self.class_kind)
        self.guard_depth += skipped
        try:
            if isinstance(node, cst.ClassDef):
                bindings.walk_class(self, node)
                return
            if self.index.define:
                for rule_matcher in self.index.define.lookup(node.name.value):
                    if not any(fnmatchcase(node.name.value, p) for p in rule_matcher[1].exclude):
                        self.hit(rule_matcher, node.name, detail=node.name.value)
            self._walk_params(node.params)
            if node.returns is not None:
                bindings.walk_annotation(self, node.returns)
            outer, outer_loops, outer_functions, outer_host = self.scope, self.loop_depth, self.functions, self.host_names
            self.scope, self.loop_depth = Scope(outer, node), 0
            self.host_names = {p.name.value for p in node.params.params if p.annotation is not None and host_annotation(self, p.annotation.annotation)}
            self.functions, self.decorators = (*outer_functions, node.name.value), (*outer_decorators, *resolved)
            try:
                bindings.walk_function_body(self, node, module_level=not outer_functions and self.class_kind is None)
            finally:
                self.scope, self.loop_depth, self.host_names = outer, outer_loops, outer_host
                self.functions, self.decorators = outer_functions, outer_decorators
        finally:
            self.guard_depth -= skipped
            self.role = outer_role

    def on_lambda(self, node: cst.Lambda, ctx: str | None) -> None:
        self._walk_params(node.params)
        outer = self.scope
        self.scope = Scope(outer, node)
        try:
            self.walk(node.body)
        finally:
            self.scope = outer

    def _walk_params(self, params: cst.Parameters) -> None:
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.annotation is not None:
                bindings.walk_annotation(self, param.annotation)
            if param.default is not None:
                self.walk(param.default, bindings.assignment_context(self, param.name))
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param) and star.annotation is not None:
                bindings.walk_annotation(self, star.annotation)

    def on_comprehension(self, node: cst.CSTNode, ctx: str | None) -> None:
        """`[t.item() for t in ts]` runs its element once per item: a loop (whose names are
        host data when what they iterate over is: `[x.item() for x in torch.linspace(0, 1, 4)]`)."""
        outer_host, self.host_names = self.host_names, bindings.comprehension_host_names(self, node)
        self.loop_depth += 1
        try:
            self.walk_fields(node)
        finally:
            self.loop_depth, self.host_names = self.loop_depth - 1, outer_host

    # -- device contexts -----------------------------------------------------------------

    def _is_device_name(self, name: str) -> bool:
        return self._device_names is not None and self._device_names.search(name) is not None

    def on_named_expr(self, node: cst.NamedExpr, ctx: str | None) -> None:
        """`(sync := torch.cuda.synchronize)` binds as an assignment does."""
        self.walk(node.value, ctx)
        bindings.bind_targets(self, [node.target], node.value)

    def on_declaration(self, node: cst.Global | cst.Nonlocal, ctx: str | None) -> None:
        """`global cuda` names a variable; it uses nothing."""

    def on_match_as(self, node: cst.MatchAs | cst.MatchStar, ctx: str | None) -> None:
        """A capture pattern binds its name (a store, not a use of what it named)."""
        if isinstance(node, cst.MatchAs) and node.pattern is not None:
            self.walk(node.pattern)
        if node.name is not None:
            self.scope.unbind(node.name.value)

    def on_comparison(self, node: cst.Comparison, ctx: str | None) -> None:
        operands = [node.left, *(c.comparator for c in node.comparisons)]
        relevant = any(
            isinstance(c.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)) for c in node.comparisons
        )
        device = relevant and any(is_device_operand(self, o) for o in operands)
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

    def on_transparent(self, node: cst.CSTNode, ctx: str | None) -> None:
        """Containers and conditionals pass a device context on to their values."""
        if isinstance(node, cst.IfExp):
            flow.on_if_expression(self, node, ctx)
            return
        if isinstance(node, cst.BooleanOperation):
            flow.on_boolean(self, node, ctx)
            return
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


_HANDLERS: dict[type, Callable[[Walker, cst.CSTNode, str | None], None]] = {
    cst.Name: Walker.on_name,  # type: ignore[dict-item]
    cst.Attribute: Walker.on_attribute,  # type: ignore[dict-item]
    cst.Import: bindings.on_import,  # type: ignore[dict-item]
    cst.ImportFrom: bindings.on_import_from,  # type: ignore[dict-item]
    cst.Call: Walker.on_call,  # type: ignore[dict-item]
    cst.Decorator: Walker.on_decorator,  # type: ignore[dict-item]
    cst.FunctionDef: Walker.on_function,  # type: ignore[dict-item]
    cst.ClassDef: Walker.on_function,  # type: ignore[dict-item]
    cst.Lambda: Walker.on_lambda,  # type: ignore[dict-item]
    cst.For: flow.on_loop,  # type: ignore[dict-item]
    cst.While: flow.on_loop,  # type: ignore[dict-item]
    cst.Try: flow.on_try,  # type: ignore[dict-item]
    cst.TryStar: flow.on_try,  # type: ignore[dict-item]
    cst.NamedExpr: Walker.on_named_expr,  # type: ignore[dict-item]
    cst.Global: Walker.on_declaration,  # type: ignore[dict-item]
    cst.Nonlocal: Walker.on_declaration,  # type: ignore[dict-item]
    cst.MatchAs: Walker.on_match_as,  # type: ignore[dict-item]
    cst.MatchStar: Walker.on_match_as,  # type: ignore[dict-item]
    cst.ListComp: Walker.on_comprehension,
    cst.SetComp: Walker.on_comprehension,
    cst.DictComp: Walker.on_comprehension,
    cst.GeneratorExp: Walker.on_comprehension,
    cst.If: flow.on_if,  # type: ignore[dict-item]
    cst.Assert: flow.on_failure,  # type: ignore[dict-item]
    cst.Raise: flow.on_failure,  # type: ignore[dict-item]
    cst.Return: bindings.on_return,  # type: ignore[dict-item]
    cst.IndentedBlock: Walker.on_indented_block,  # type: ignore[dict-item]
    cst.Assign: bindings.on_assign,  # type: ignore[dict-item]
    cst.AnnAssign: bindings.on_ann_assign,  # type: ignore[dict-item]
    cst.Comparison: Walker.on_comparison,  # type: ignore[dict-item]
    cst.SimpleString: Walker.on_string,  # type: ignore[dict-item]
    cst.ConcatenatedString: Walker.on_concatenated_string,  # type: ignore[dict-item]
    cst.FormattedString: Walker.on_string,  # type: ignore[dict-item]
    cst.IfExp: Walker.on_transparent,
    cst.BooleanOperation: Walker.on_transparent,
    cst.BinaryOperation: Walker.on_transparent,
    cst.Dict: Walker.on_transparent,
    cst.List: Walker.on_transparent,
    cst.Tuple: Walker.on_transparent,
    cst.Set: Walker.on_transparent,
}
