"""What the walk learns from bindings: imports (and the dependency rules they trip),
assignments that make aliases (`sync = torch.cuda.synchronize`), and values known to live
on the host. Apart from the walk so that walker.py stays about traversal and matching.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import libcst as cst

from tpucheck.analyze.python.conditions import host_annotation
from tpucheck.analyze.python.scope import dotted, import_from_module, target_names

if TYPE_CHECKING:
    from tpucheck.analyze.python.walker import Walker

ASSIGNMENT = "assignment"
"""The device context of a value bound to a device-like name (walker.py's ARGUMENT,
ASSIGNMENT and COMPARISON; this one is bound here)."""
BACKEND = "backend"
"""A string bound to a name that holds a distributed backend (`contexts.backend`)."""
OTHER_DEVICE_MODULES = ("torch.npu.", "torch.xpu.", "torch.mps.", "torch.tpu.", "torch_npu.", "torch_xla.", "intel_extension_for_pytorch.")
"""Modules of accelerators other than CUDA: what their objects do is not a CUDA-ism."""


def bind_module_imports(walker: Walker, statements: object) -> None:
    """Module-level imports, and aliases assigned from them (`sync =
    torch.cuda.synchronize`), apply to function bodies written above them."""
    for statement in statements:  # type: ignore[attr-defined]
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    walker.scope.bind_import(small)
                elif isinstance(small, cst.Assign):
                    bind_targets(walker, [t.target for t in small.targets], small.value)
                elif isinstance(small, cst.AnnAssign) and small.value is not None:
                    bind_targets(walker, [small.target], small.value)
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            walker.scope.unbind(statement.name.value)  # `def sync(): ...` replaces an alias
        elif isinstance(statement, cst.Match):
            for case in statement.cases:
                if isinstance(case.body, cst.IndentedBlock):
                    bind_module_imports(walker, case.body.body)
        elif isinstance(statement, (cst.If, cst.Try, cst.With, cst.TryStar)):
            blocks = [statement.body, *(h.body for h in getattr(statement, "handlers", ()))]
            orelse = getattr(statement, "orelse", None)
            while isinstance(orelse, cst.If):
                blocks.append(orelse.body)
                orelse = orelse.orelse
            if orelse is not None:
                blocks.append(orelse.body)
            for block in blocks:
                if isinstance(block, cst.IndentedBlock):
                    bind_module_imports(walker, block.body)


def on_import(walker: Walker, node: cst.Import, ctx: str | None) -> None:
    _lazily(walker, import_hits, node)


def _lazily(walker: Walker, hits: Callable[[Walker, Any], None], node: cst.Import | cst.ImportFrom) -> None:
    """An import inside a function is lazy: the module loads without the package, and
    only the path that calls the function needs it (an optional integration)."""
    lazy = bool(walker.functions)
    walker.guard_depth += lazy
    try:
        hits(walker, node)
    finally:
        walker.guard_depth -= lazy


def import_hits(walker: Walker, node: cst.Import) -> None:
    walker.scope.bind_import(node)
    if walker.type_checking:
        return
    if not walker.index.imports:
        return
    for alias in node.names:
        parts = dotted(alias.name)
        if parts is None:
            continue
        if not walker.foreign(parts[0]):
            continue
        seen: set[str] = set()
        for rule_matcher in walker.index.imports.lookup(".".join(parts)):
            if rule_matcher[0].id not in seen:
                seen.add(rule_matcher[0].id)
                walker.hit(rule_matcher, alias.name, detail=".".join(parts))


def on_import_from(walker: Walker, node: cst.ImportFrom, ctx: str | None) -> None:
    _lazily(walker, import_from_hits, node)


def import_from_hits(walker: Walker, node: cst.ImportFrom) -> None:
    walker.scope.bind_import(node)
    if walker.type_checking:
        return
    module = import_from_module(node)
    if module is None or not walker.index.imports or not walker.foreign(module):
        return
    seen: set[str] = set()
    assert node.module is not None
    for rule_matcher in walker.index.imports.lookup(module):
        if rule_matcher[0].id not in seen:
            seen.add(rule_matcher[0].id)
            walker.hit(rule_matcher, node.module, detail=module)
    if isinstance(node.names, cst.ImportStar):
        return
    for alias in node.names:
        if isinstance(alias.name, cst.Name):
            qualified = f"{module}.{alias.name.value}"
            for rule_matcher in walker.index.imports.lookup(qualified):
                if rule_matcher[0].id not in seen:
                    seen.add(rule_matcher[0].id)
                    walker.hit(rule_matcher, alias.name, detail=qualified)


def on_assign(walker: Walker, node: cst.Assign, ctx: str | None) -> None:
    context: str | None = None
    for target in node.targets:
        walk_target(walker, target.target)
        context = context or assignment_context(walker, target.target)
    walker.walk(node.value, context)
    bind_targets(walker, [t.target for t in node.targets], node.value)
    for target in node.targets:
        bind_host(walker, target.target, node.value)


def bind_host(walker: Walker, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
    """`values, indices = probs.cpu().topk(5)`: every name unpacked from host data is host
    data; `ref, tt = a.cpu(), b.squeeze()` pairs each name with its own value."""
    pairs = (
        isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) and len(target.elements) == len(value.elements)
        and all(isinstance(e, cst.Element) for e in (*target.elements, *value.elements))
    )  # fmt: skip
    if pairs:
        for name_element, value_element in zip(target.elements, value.elements, strict=True):  # type: ignore[attr-defined]
            bind_host(walker, name_element.value, value_element.value)
        return
    host = on_host(walker, value)
    field = _self_field(target)  # `self.sigmas = sigmas.to("cpu")`: read as host data below
    for name in target_names(target) if field is None else (f"self.{field}",):
        if host:
            walker.host_names.add(name)
        else:
            walker.host_names.discard(name)


def on_ann_assign(walker: Walker, node: cst.AnnAssign, ctx: str | None) -> None:
    walk_target(walker, node.target)
    walk_annotation(walker, node.annotation)
    if node.value is not None:
        walker.walk(node.value, assignment_context(walker, node.target))
        bind_targets(walker, [node.target], node.value)


def bind_targets(walker: Walker, targets: list[cst.BaseExpression], value: cst.BaseExpression) -> None:
    """`name = <resolved name>` makes `name` an alias as the walk proceeds; any other
    value clears one, except `None` (`except ImportError: fn = None`): a name bound
    to None is never called, so its uses all mean the other binding."""
    resolved = alias_of(walker, value)
    if resolved is not None and len(resolved) > 1:
        walker.conditional_aliases = True
    for target in targets:
        if isinstance(target, cst.Name) and resolved is not None:
            walker.scope.bind_alias(target.value, resolved)
            if not walker.alias_names:
                walker.alias_names = set()
            walker.alias_names.add(target.value)  # type: ignore[union-attr]
        elif not (isinstance(value, cst.Name) and value.value == "None"):
            for name in target_names(target):
                walker.scope.unbind(name)


def alias_of(walker: Walker, value: cst.BaseExpression) -> tuple[str, ...] | None:
    """The qualified names a value stands for: a resolved dotted name, or each
    resolved arm of a conditional expression."""
    if isinstance(value, (cst.Name, cst.Attribute)):
        qualified = walker.qualified(value)
        if qualified is None or qualified.startswith("builtins."):
            return None
        return walker.alternatives(value, qualified)
    if isinstance(value, cst.IfExp):
        arms = (alias_of(walker, value.body) or ()) + (alias_of(walker, value.orelse) or ())
        return tuple(dict.fromkeys(arms)) or None
    return None


def walk_target(walker: Walker, target: cst.BaseExpression) -> None:
    if isinstance(target, cst.Name):
        return  # binding a name is no use of what it named before
    walker.storing = isinstance(target, cst.Attribute)
    try:
        walker.walk(target)
    finally:
        walker.storing = False


_HOST_LITERALS = frozenset({cst.Integer, cst.Float, cst.Dict, cst.ListComp, cst.DictComp, cst.SimpleString})
_SEQUENCES = frozenset({cst.List, cst.Tuple, cst.Set})


def on_host(walker: Walker, node: cst.BaseExpression) -> bool:
    """Whether a value certainly lives on the host: a Python literal, a NumPy call,
    a `.cpu()`/`.numpy()`/`.tolist()`/`.item()` result, a tensor made without a device,
    a processor's `return_tensors=` output, what arithmetic or a place-keeping call
    (`x.clone()`, `torch.sigmoid(x)`) makes of host data only, or a name last bound to one.
    (Dispatched on the exact node type: `isinstance` on libcst's ABCs is the walk's cost.)"""
    kind = type(node)
    if kind is cst.Name:
        return node.value in walker.host_names or node.value in ("None", "True", "False")  # type: ignore[attr-defined]
    if kind is cst.Call:
        return _call_on_host(walker, node)  # type: ignore[arg-type]
    if kind is cst.Attribute:
        base = node.value  # type: ignore[attr-defined]
        base_kind = type(base)
        if base_kind is cst.Name and base.value == "self":
            field = node.attr.value  # type: ignore[attr-defined]  # a field its class only sets to host data, or just set to some
            if field in walker.host_attributes or f"self.{field}" in walker.host_names:
                return True
        return base_kind in (cst.Name, cst.Attribute, cst.Subscript) and on_host(walker, base)  # a field of host data
    if kind is cst.Subscript:
        return on_host(walker, node.value)  # type: ignore[attr-defined]  # an item of host data (`state["step"]`)
    if kind in _HOST_LITERALS:
        return True
    if kind in _SEQUENCES:  # `(ref.squeeze(), tt)` holds what its items hold
        return all(type(e) is cst.Element and on_host(walker, e.value) for e in node.elements)  # type: ignore[attr-defined]
    if kind is cst.IfExp:  # `v.cpu().numpy() if v.ndim else None`
        return on_host(walker, node.body) and on_host(walker, node.orelse)  # type: ignore[attr-defined]
    if kind is cst.BinaryOperation:
        return on_host(walker, node.left) and on_host(walker, node.right)  # type: ignore[attr-defined]  # `1 - sigmas`
    if kind is cst.Comparison:
        # `(betas > 0)`, `(counts == self.limit)`: NumPy's comparison gives NumPy (it
        # cannot compare with a device tensor at all); a literal on the left decides nothing.
        if _literal(node.left):  # type: ignore[attr-defined]
            return all(on_host(walker, c.comparator) for c in node.comparisons)  # type: ignore[attr-defined]
        return on_host(walker, node.left)  # type: ignore[attr-defined]
    if kind is cst.UnaryOperation:
        return on_host(walker, node.expression)  # type: ignore[attr-defined]
    return False


def _call_on_host(walker: Walker, node: cst.Call) -> bool:
    if any(arg.keyword is not None and arg.keyword.value == "return_tensors" for arg in node.args):
        return True  # a tokenizer's or processor's tensors are made on the CPU
    func = node.func
    if type(func) is cst.Attribute:
        parts = dotted(func)
        if parts is None or not walker.scope.is_module(parts[0]):
            method = func.attr.value
            if method in walker.index.host_keeps or (method.endswith("_") and not method.startswith("_")):
                return on_host(walker, func.value)  # in place (`x.clamp_()`) returns x itself
            return method in walker.index.host_results or (method == "to" and _to_cpu(node))
    qualified = walker.qualified(func)
    if qualified is None:
        # `_stats_array(stats)`, a helper above that only returns NumPy data
        return type(func) is cst.Name and func.value in walker.host_functions
    if qualified in walker.index.host_constructors:
        return _made_on_host(qualified, node)
    if qualified in walker.index.host_keeps:
        return inputs_on_host(walker, node)
    return qualified.split(".", 1)[0] in walker.index.host_modules


def inputs_on_host(walker: Walker, call: cst.Call) -> bool:
    """Every positional input (and each item of a list or tuple of them) is host data, and
    no `device=` sends the result elsewhere."""
    values: list[cst.BaseExpression] = []
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == "device":
                return False
            continue
        if isinstance(arg.value, (cst.List, cst.Tuple)):
            values.extend(element.value for element in arg.value.elements)
        else:
            values.append(arg.value)
    # Literal settings alone (`nn.EmbeddingBag(50000, 64)`, `GradScaler("cuda")`) are no
    # data: at least one input must be a value that can be a tensor.
    return any(not _literal(value) for value in values) and all(on_host(walker, value) for value in values)


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        return _literal(node.expression)
    return isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)) or (
        isinstance(node, cst.Name) and node.value in ("True", "False", "None")
    )


def bound_name(target: cst.BaseExpression) -> str | None:
    """The name an assignment binds: `device`, `self.device`, `cfg["device"]`."""
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Attribute):
        return target.attr.value
    if isinstance(target, cst.Subscript):
        index = target.slice[0].slice if len(target.slice) == 1 else None
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            return index.value.value.strip("'\"")
    return None


def assignment_context(walker: Walker, target: cst.BaseExpression) -> str | None:
    """The string context a value bound to `target` is in: a device (`device = ...`), a
    distributed backend (`self.dist_backend = ...`), or none."""
    name = bound_name(target)
    if name is None:
        return None
    if walker._is_device_name(name):
        return ASSIGNMENT
    backends = walker.index.device.backend_names
    return BACKEND if backends is not None and backends.search(name) else None


def other_device_receiver(walker: Walker, receiver: cst.BaseExpression) -> bool:
    """Whether a method's receiver comes from another accelerator's module (a call or
    attribute chain rooted at `torch.npu`, `torch.xpu`, `torch.mps`, `torch.tpu`...): a
    stream or event of that device, which a rule about CUDA's must leave alone."""
    while isinstance(receiver, (cst.Call, cst.Subscript)):
        receiver = receiver.func if isinstance(receiver, cst.Call) else receiver.value
    if not isinstance(receiver, (cst.Attribute, cst.Name)):
        return False
    qualified = walker.qualified(receiver)
    return qualified is not None and qualified.startswith(OTHER_DEVICE_MODULES)


def _to_cpu(call: cst.Call) -> bool:
    """`.to("cpu")`, `.to(torch.device("cpu"))`, `.to(self._cpu_device)`: a copy to the host
    (a device named for the CPU is one, as `cpu_device = torch.device("cpu")` always is)."""
    target = next((arg.value for arg in call.args if arg.keyword is None or arg.keyword.value == "device"), None)
    if isinstance(target, cst.Call) and target.args and dotted(target.func) in (["torch", "device"], ["device"]):
        target = target.args[0].value
    if isinstance(target, cst.SimpleString):
        return target.evaluated_value == "cpu"
    parts = dotted(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
    return parts is not None and "cpu" in parts[-1].lower().split("_")


def _made_on_host(qualified: str, call: cst.Call) -> bool:
    """A constructor call with no `device=` makes its tensor on the host; `torch.load`
    only when told `map_location="cpu"` (else tensors go back where they were saved)."""
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if "device" in keywords:
        return False
    if qualified == "torch.load":
        where = keywords.get("map_location")
        return isinstance(where, cst.SimpleString) and where.evaluated_value == "cpu"
    return True


def walk_annotation(walker: Walker, node: cst.Annotation) -> None:
    """A type annotation names types: `stream: torch.cuda.Stream | None` runs nothing a
    TPU lacks (CPU builds of torch have `torch.cuda.Stream` too), so only the calls in
    it (which run when the function is defined) are uses."""
    walker.annotation_depth += 1
    try:
        walker.walk(node)
    finally:
        walker.annotation_depth -= 1


def comprehension_host_names(walker: Walker, node: cst.CSTNode) -> set[str]:
    """The host names inside a comprehension: those it binds from host data (`for x in
    np.arange(4)`) join the outer ones; a name any of its clauses binds from other data
    (`for x in batch` ... `for x in x.tolist()`) is not host data anywhere in it."""
    host: set[str] = set()
    other: set[str] = set()
    clause = getattr(node, "for_in", None)
    while isinstance(clause, cst.CompFor):
        bound = set(target_names(clause.target))
        # `for x in x.tolist()` reads the outer `x` before it binds the new one: that read
        # must not see the host `x` it makes, so such a name counts as other data
        reads_itself = bool(bound & _names_in(clause.iter))
        (host if on_host(walker, clause.iter) and not reads_itself else other).update(bound)
        clause = clause.inner_for_in
    return (walker.host_names | host) - other


def _names_in(node: cst.CSTNode) -> set[str]:
    names: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, cst.Name):
            names.add(item.value)
        stack.extend(item.children)
    return names


def walk_class(walker: Walker, node: cst.ClassDef) -> None:
    """A class body, with what its methods share: the fields it only sets to host data,
    and whether it is a Dataset."""
    walker.walk_all(node.bases)
    walker.walk_all(node.keywords)
    outer = (walker.host_attributes, walker.data_class, walker.class_kind)
    walker.host_attributes = class_host_attributes(walker, node)
    walker.data_class = walker.data_class or dataset_class(walker, node)
    walker.class_kind = "test" if _test_class(node) else "plain"
    try:
        walker.walk(node.body)
    finally:
        walker.host_attributes, walker.data_class, walker.class_kind = outer


def _test_class(node: cst.ClassDef) -> bool:
    """`class TestCameras(unittest.TestCase)`, `class TestModel:` (pytest): its `test_*`
    methods are tests; a model's or trainer's `test_step` is its evaluation loop."""
    name = node.name.value
    bases = {parts[-1] for parts in (dotted(base.value) for base in node.bases) if parts}
    return name.startswith("Test") or name.endswith(("Test", "Tests")) or any(b.endswith("TestCase") for b in bases)


def class_host_attributes(walker: Walker, node: cst.ClassDef) -> frozenset[str]:
    """The `self.<name>` fields a class only ever sets to host data (`self._counts =
    np.zeros(n)` in `__init__`): its methods read them as host data too. The statements
    at the top of each method, and of its `if` blocks, are followed; a field also set in a
    block not followed (a loop, a `with`, a nested function) may hold anything."""
    host: set[str] = set()
    other: set[str] = set()
    deeper: list[cst.CSTNode] = []
    outer = walker.host_names
    try:
        for method in node.body.body:
            if isinstance(method, cst.SimpleStatementLine):  # a dataclass field: `verts: np.ndarray`
                for declared in method.body:
                    if isinstance(declared, cst.AnnAssign) and isinstance(declared.target, cst.Name) and _host_type(walker, declared.annotation.annotation):
                        host.add(declared.target.value)
                continue
            if not isinstance(method, cst.FunctionDef):
                continue
            statements = _top_statements(method.body)
            if not any(isinstance(small, (cst.Assign, cst.AnnAssign)) and _sets_field(small) for small in statements):
                deeper.extend(small for small in statements if isinstance(small, cst.BaseCompoundStatement))
                continue  # most methods set no field at their top: no flow to follow
            walker.host_names = set()
            for small in statements:
                if isinstance(small, cst.Assign):
                    targets, value = [t.target for t in small.targets], small.value
                elif isinstance(small, cst.AnnAssign) and small.value is not None:
                    targets, value = [small.target], small.value
                else:
                    if isinstance(small, cst.BaseCompoundStatement):
                        deeper.append(small)
                    continue  # `self.count += 1` keeps the field where it is
                if _literal(value):
                    continue  # `self.cache = None`, `self.count = 0`: no data yet, either way
                is_host = on_host(walker, value)
                for target in targets:
                    field = _self_field(target)
                    if field is not None:
                        (host if is_host else other).add(field)
                        continue
                    for name in target_names(target):
                        (walker.host_names.add if is_host else walker.host_names.discard)(name)
    finally:
        walker.host_names = outer
    host -= other
    if host and deeper:
        host -= _fields_set(deeper)
    return frozenset(host)


def _top_statements(suite: cst.CSTNode) -> list[cst.CSTNode]:
    """The small statements of a body, of its `if`/`elif`/`else` blocks, and the other
    compound statements themselves."""
    out: list[cst.CSTNode] = []
    for statement in getattr(suite, "body", ()):
        if isinstance(statement, cst.SimpleStatementLine):
            out.extend(statement.body)
        elif isinstance(statement, cst.If):
            branch: cst.CSTNode | None = statement
            while isinstance(branch, cst.If):
                out.extend(_top_statements(branch.body))
                branch = branch.orelse
            if isinstance(branch, cst.Else):
                out.extend(_top_statements(branch.body))
        else:
            out.append(statement)
    return out


def _self_field(target: cst.BaseExpression) -> str | None:
    if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self":
        return target.attr.value
    return None


def _fields_set(blocks: list[cst.CSTNode]) -> set[str]:
    """The `self.<name>` fields assigned anywhere in these statements, read statement by
    statement (an assignment is a statement: no expression needs walking)."""
    fields: set[str] = set()
    stack = list(blocks)
    while stack:
        item = stack.pop()
        if isinstance(item, (cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.IndentedBlock, cst.Else, cst.Finally, cst.ExceptHandler)):
            stack.extend(item.body.body if isinstance(item, (cst.Else, cst.Finally, cst.ExceptHandler)) else item.body)
        elif isinstance(item, cst.Assign):
            fields.update(f for f in (_self_field(t.target) for t in item.targets) if f)
        elif isinstance(item, cst.AnnAssign):
            field = _self_field(item.target)
            if field:
                fields.add(field)
        elif isinstance(item, cst.BaseCompoundStatement):
            for part in ("body", "orelse", "finalbody"):
                sub = getattr(item, part, None)
                if sub is not None:
                    stack.append(sub)
            stack.extend(getattr(item, "handlers", ()))
    return fields


def dataset_class(walker: Walker, node: cst.ClassDef) -> bool:
    """A `Dataset` (any base named `*Dataset`, or one from `torch.utils.data`): its methods
    run in the DataLoader's workers, on the host, like the files of a dataset folder."""
    for base in node.bases:
        parts = dotted(base.value)
        if parts is None:
            continue
        qualified = walker.qualified(base.value) or ""
        if parts[-1].endswith("Dataset") or qualified.startswith("torch.utils.data."):
            return True
    return False


def walk_function_body(walker: Walker, node: cst.FunctionDef, *, module_level: bool) -> None:
    """A function's body; a module-level function whose every `return` gives host data
    (`return np.asarray(v)`, `return t.cpu().numpy()`), one of them a value, makes its calls
    further down the module host data too (a generator returns nothing of its own)."""
    outer = walker.returns
    walker.returns = [] if module_level else None
    try:
        walker.walk(node.body)
        returns = walker.returns or []  # per `return`: host data (True), other data (False), nothing (None)
        if any(r is not None for r in returns) and all(r is not False for r in returns):
            walker.host_functions.add(node.name.value)
        else:
            walker.host_functions.discard(node.name.value)  # a redefinition replaces it
    finally:
        walker.returns = outer


def on_return(walker: Walker, node: cst.Return, ctx: str | None) -> None:
    value = node.value
    if value is not None:
        walker.walk(value)
    if walker.returns is not None:
        nothing = value is None or (type(value) is cst.Name and value.value == "None")
        walker.returns.append(None if nothing else on_host(walker, value))  # type: ignore[arg-type]


def _host_type(walker: Walker, annotation: cst.BaseExpression) -> bool:
    """`np.ndarray`, `NDArray[np.float32]`, `Optional[np.ndarray]`, `np.ndarray | None`."""
    if isinstance(annotation, cst.BinaryOperation):  # `np.ndarray | None`
        sides = [annotation.left, annotation.right]
        return any(_host_type(walker, side) for side in sides) and all(
            _host_type(walker, side) or (isinstance(side, cst.Name) and side.value == "None") for side in sides
        )
    if isinstance(annotation, cst.Subscript) and (walker.qualified(annotation.value) or "").rpartition(".")[2] == "Optional":
        element = annotation.slice[0].slice if len(annotation.slice) == 1 else None
        return isinstance(element, cst.Index) and _host_type(walker, element.value)
    return host_annotation(walker, annotation)


def receiver_on_host(walker: Walker, rule_matchers: Any, receiver: cst.BaseExpression) -> bool:
    """Whether a method rule about syncs, shapes or op lowering meets host data (asked only
    when one of the method's rules is of such a category: `.random_(generator=g)` of a CPU
    scalar runs on the CPU)."""
    categories = walker.index.host_categories
    return any(matcher[0].category in categories for matcher in rule_matchers) and on_host(walker, receiver)


def _sets_field(statement: cst.Assign | cst.AnnAssign) -> bool:
    if isinstance(statement, cst.AnnAssign):
        return _self_field(statement.target) is not None
    return any(_self_field(target.target) is not None for target in statement.targets)
