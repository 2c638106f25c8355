"""Facts about values and bindings, read from the code the walk is at: which values
certainly live on the host (NumPy data, `.cpu()` results, literals, tensors made without a
device), which names an assignment makes aliases of, which classes are datasets or test
classes, and which `self` fields a class only ever sets to host data.

Every function here is a question about a node, answered from the walk's read-only view
(`Names`); none changes the walk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Set
from typing import Any

import libcst as cst

from tpucheck.analyze.python.conditions import host_annotation
from tpucheck.analyze.python.context import Names
from tpucheck.analyze.python.index import PythonIndex
from tpucheck.analyze.python.scope import dotted, target_names

_HOST_LITERALS = frozenset({cst.Integer, cst.Float, cst.Dict, cst.SimpleString})



class _MethodFlow:
    """The walk's view with the host names of one method being read ahead of the walk
    (`class_host_attributes`): the method's own bindings, nothing else changed."""

    __slots__ = ("_names", "host_names")

    def __init__(self, names: Names) -> None:
        self._names = names
        self.host_names: set[str] = set()

    @property
    def index(self) -> PythonIndex:
        return self._names.index

    @property
    def host_fields(self) -> frozenset[str]:
        return self._names.host_fields

    @property
    def host_functions(self) -> Set[str]:
        return self._names.host_functions

    @property
    def flags(self) -> Set[str]:
        return self._names.flags

    @property
    def counts(self) -> Set[str]:
        return self._names.counts

    @property
    def options(self) -> Mapping[str, str]:
        return self._names.options

    def qualified(self, node: cst.BaseExpression) -> str | None:
        return self._names.qualified(node)

    def alternatives(self, node: cst.BaseExpression, qualified: str | None) -> tuple[str, ...]:
        return self._names.alternatives(node, qualified)

    def is_module(self, name: str) -> bool:
        return self._names.is_module(name)

    def is_device_name(self, name: str) -> bool:
        return self._names.is_device_name(name)


def alias_of(names: Names, value: cst.BaseExpression) -> tuple[str, ...] | None:
    """The qualified names a value stands for: a resolved dotted name, or each
    resolved arm of a conditional expression."""
    if isinstance(value, (cst.Name, cst.Attribute)):
        qualified = names.qualified(value)
        if qualified is None or qualified.startswith("builtins."):
            return None
        return names.alternatives(value, qualified)
    if isinstance(value, cst.IfExp):
        arms = (alias_of(names, value.body) or ()) + (alias_of(names, value.orelse) or ())
        return tuple(dict.fromkeys(arms)) or None
    return None


def on_host(names: Names, node: cst.BaseExpression) -> bool:
    """Whether a value certainly lives on the host: a Python literal, a NumPy call,
    a `.cpu()`/`.numpy()`/`.tolist()`/`.item()` result, a tensor made without a device,
    a processor's `return_tensors=` output, what arithmetic or a place-keeping call
    (`x.clone()`, `torch.sigmoid(x)`) makes of host data only, or a name last bound to one.
    (Dispatched on the exact node type: `isinstance` on libcst's ABCs is the walk's cost.)"""
    kind = type(node)
    if kind in _HOST_LITERALS:
        return True
    answer = _ON_HOST.get(kind)
    return answer is not None and answer(names, node)


def _name_on_host(names: Names, node: cst.Name) -> bool:
    return node.value in names.host_names or node.value in ("None", "True", "False")


def _attribute_on_host(names: Names, node: cst.Attribute) -> bool:
    base = node.value
    if type(base) is cst.Name and base.value == "self":
        field = node.attr.value  # a field its class only sets to host data, or just set to some
        if field in names.host_fields or f"self.{field}" in names.host_names:
            return True
    return type(base) in (cst.Name, cst.Attribute, cst.Subscript) and on_host(names, base)  # a field of host data


def _subscript_on_host(names: Names, node: cst.Subscript) -> bool:
    if on_host(names, node.value):
        return True  # an item of host data (`state["step"]`)
    host = names.host_names
    return any("[" in key for key in host) and host_key(node) in host  # `if isinstance(d[k], np.ndarray):`


def _sequence_on_host(names: Names, node: cst.List | cst.Tuple | cst.Set) -> bool:
    """`(ref.squeeze(), tt)` holds what its items hold."""
    return all(type(e) is cst.Element and on_host(names, e.value) for e in node.elements)


def _conditional_on_host(names: Names, node: cst.IfExp) -> bool:
    return on_host(names, node.body) and on_host(names, node.orelse)  # `v.cpu().numpy() if v.ndim else None`


def _arithmetic_on_host(names: Names, node: cst.BinaryOperation) -> bool:
    return on_host(names, node.left) and on_host(names, node.right)  # `1 - sigmas`


def _comparison_on_host(names: Names, node: cst.Comparison) -> bool:
    """`(betas > 0)`, `(counts == self.limit)`: NumPy's comparison gives NumPy (it cannot
    compare with a device tensor at all); a literal on the left decides nothing."""
    if _literal(node.left):
        return all(on_host(names, c.comparator) for c in node.comparisons)
    return on_host(names, node.left)


def _unary_on_host(names: Names, node: cst.UnaryOperation) -> bool:
    return on_host(names, node.expression)


def _call_on_host(names: Names, node: cst.Call) -> bool:
    if any(arg.keyword is not None and arg.keyword.value == "return_tensors" for arg in node.args):
        return True  # a tokenizer's or processor's tensors are made on the CPU
    func = node.func
    if type(func) is cst.Attribute:
        parts = dotted(func)
        if parts is None or not names.is_module(parts[0]):
            method = func.attr.value
            if method in names.index.host_keeps or (method.endswith("_") and not method.startswith("_")):
                return on_host(names, func.value)  # in place (`x.clamp_()`) returns x itself
            return method in names.index.host_results or (method == "to" and _to_cpu(node))
    qualified = names.qualified(func)
    if qualified in names.index.host_values:
        return True  # `len(x)`, `int(n)`: a Python value
    if qualified is None:
        # `_stats_array(stats)`, a helper above that only returns NumPy data
        return type(func) is cst.Name and func.value in names.host_functions
    if qualified in names.index.host_constructors:
        return made_on_host(qualified, node)
    if qualified in names.index.host_keeps:
        return inputs_on_host(names, node)
    return qualified.split(".", 1)[0] in names.index.host_modules


def inputs_on_host(names: Names, call: cst.Call) -> bool:
    """Every positional input (and each item of a list or tuple of them) is host data, and
    no `device=` sends the result elsewhere."""
    values: list[cst.BaseExpression] = []
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == "device" and not names_cpu(arg.value):
                return False
            continue
        if isinstance(arg.value, (cst.List, cst.Tuple)):
            values.extend(element.value for element in arg.value.elements)
        else:
            values.append(arg.value)
    # Literal settings alone (`nn.EmbeddingBag(50000, 64)`, `GradScaler("cuda")`) are no
    # data: at least one input must be a value that can be a tensor.
    return any(not _literal(value) for value in values) and all(on_host(names, value) for value in values)


def first_input_on_host(names: Names, call: cst.Call) -> bool:
    """The first positional input is sent to the host, and no `device=` sends the result elsewhere:
    `torch.kthvalue(scores.flatten().cpu(), n - self.k + 1)` runs on the host whatever its
    other arguments are (audit AR: scene_graph_benchmark), since an op never mixes a host
    tensor with a device one; the others are its settings."""
    first: cst.BaseExpression | None = None
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == "device":
                return False
            continue
        if first is None and not arg.star:
            first = arg.value
    return first is not None and _moved_to_host(first)


def _moved_to_host(node: cst.BaseExpression) -> bool:
    """`x.cpu()`, `x.flatten().cpu()`, `x.to("cpu")`: a value the code itself sends to the
    host (a tensor merely made without `device=` follows the default device)."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return False
    name = node.func.attr.value
    return (name == "cpu" and not node.args) or (name == "to" and _to_cpu(node))


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        return _literal(node.expression)
    return isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)) or (
        isinstance(node, cst.Name) and node.value in ("True", "False", "None")
    )


ASSIGNMENT = "assignment"
"""The device context of a value bound to a device-like name (walker.py has ARGUMENT and
COMPARISON)."""
BACKEND = "backend"
"""A string bound to a name that holds a distributed backend (`contexts.backend`)."""


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


def assignment_context(names: Names, target: cst.BaseExpression) -> str | None:
    """The string context a value bound to `target` is in: a device (`device = ...`), a
    distributed backend (`self.dist_backend = ...`), or none."""
    name = bound_name(target)
    if name is None:
        return None
    if names.is_device_name(name):
        return ASSIGNMENT
    backends = names.index.device.backend_names
    return BACKEND if backends is not None and backends.search(name) else None


def other_device_receiver(names: Names, receiver: cst.BaseExpression) -> bool:
    """Whether a method's receiver comes from another accelerator's module (a call or
    attribute chain rooted at `torch.npu`, `torch.xpu`, `torch.mps`, `torch.tpu`...): a
    stream or event of that device, which a rule about CUDA's must leave alone."""
    while isinstance(receiver, (cst.Call, cst.Subscript)):
        receiver = receiver.func if isinstance(receiver, cst.Call) else receiver.value
    if not isinstance(receiver, (cst.Attribute, cst.Name)):
        return False
    qualified = names.qualified(receiver)
    return qualified is not None and qualified.startswith(names.index.other_accelerator_apis)


def _to_cpu(call: cst.Call) -> bool:
    """`.to("cpu")`, `.to(torch.device("cpu"))`, `.to(self._cpu_device)`: a copy to the host
    (a device named for the CPU is one, as `cpu_device = torch.device("cpu")` always is)."""
    return names_cpu(next((arg.value for arg in call.args if arg.keyword is None or arg.keyword.value == "device"), None))


def names_cpu(target: cst.BaseExpression | None) -> bool:
    """A device argument that names the host: `"cpu"`, `torch.device("cpu")`, a
    `cpu_device` name (audit BD: curobo's `torch.zeros(..., device="cpu")` covariance)."""
    if isinstance(target, cst.Call) and target.args and dotted(target.func) in (["torch", "device"], ["device"]):
        target = target.args[0].value
    if isinstance(target, cst.SimpleString):
        return target.evaluated_value == "cpu"
    parts = dotted(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
    return parts is not None and "cpu" in parts[-1].lower().split("_")


def made_on_host(qualified: str, call: cst.Call) -> bool:
    """A constructor call with no `device=` makes its tensor on the host; `torch.load`
    only when told `map_location="cpu"` (else tensors go back where they were saved)."""
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if "device" in keywords:
        return names_cpu(keywords["device"])
    if qualified == "torch.load":
        where = keywords.get("map_location")
        return isinstance(where, cst.SimpleString) and where.evaluated_value == "cpu"
    return True


def comprehension_host_names(names: Names, node: cst.CSTNode) -> set[str]:
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
        (host if on_host(names, clause.iter) and not reads_itself else other).update(bound)
        clause = clause.inner_for_in
    return (set(names.host_names) | host) - other


def _names_in(node: cst.CSTNode) -> set[str]:
    names: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, cst.Name):
            names.add(item.value)
        stack.extend(item.children)
    return names


def test_class(node: cst.ClassDef) -> bool:
    """`class TestCameras(unittest.TestCase)`, `class TestModel:` (pytest): its `test_*`
    methods are tests; a model's or trainer's `test_step` is its evaluation loop."""
    name = node.name.value
    bases = {parts[-1] for parts in (dotted(base.value) for base in node.bases) if parts}
    return name.startswith("Test") or name.endswith(("Test", "Tests")) or any(b.endswith("TestCase") for b in bases)


def class_host_attributes(names: Names, node: cst.ClassDef) -> frozenset[str]:
    """The `self.<name>` fields a class only ever sets to host data (`self._counts =
    np.zeros(n)` in `__init__`): its methods read them as host data too. The statements
    at the top of each method, and of its `if` blocks, are followed; a field also set in a
    block not followed (a loop, a `with`, a nested function) may hold anything."""
    host: set[str] = set()
    other: set[str] = set()
    deeper: list[cst.CSTNode] = []
    for method in node.body.body:
        if isinstance(method, cst.SimpleStatementLine):  # a dataclass field: `verts: np.ndarray`
            for declared in method.body:
                if isinstance(declared, cst.AnnAssign) and isinstance(declared.target, cst.Name) and _host_type(names, declared.annotation.annotation):
                    host.add(declared.target.value)
            continue
        if not isinstance(method, cst.FunctionDef):
            continue
        statements = _top_statements(method.body)
        if not any(isinstance(small, (cst.Assign, cst.AnnAssign)) and _sets_field(small) for small in statements):
            deeper.extend(small for small in statements if isinstance(small, cst.BaseCompoundStatement))
            continue  # most methods set no field at their top: no flow to follow
        flow = _MethodFlow(names)
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
            is_host = on_host(flow, value)
            for target in targets:
                field = self_field(target)
                if field is not None:
                    (host if is_host else other).add(field)
                    continue
                for name in target_names(target):
                    (flow.host_names.add if is_host else flow.host_names.discard)(name)
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


def self_field(target: cst.BaseExpression) -> str | None:
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
            fields.update(f for f in (self_field(t.target) for t in item.targets) if f)
        elif isinstance(item, cst.AnnAssign):
            field = self_field(item.target)
            if field:
                fields.add(field)
        elif isinstance(item, cst.BaseCompoundStatement):
            for part in ("body", "orelse", "finalbody"):
                sub = getattr(item, part, None)
                if sub is not None:
                    stack.append(sub)
            stack.extend(getattr(item, "handlers", ()))
    return fields


def dataset_class(names: Names, node: cst.ClassDef) -> bool:
    """A `Dataset` (any base named `*Dataset`, or one from `torch.utils.data`): its methods
    run in the DataLoader's workers, on the host, like the files of a dataset folder."""
    for base in node.bases:
        parts = dotted(base.value)
        if parts is None:
            continue
        qualified = names.qualified(base.value) or ""
        if parts[-1].endswith("Dataset") or qualified.startswith("torch.utils.data."):
            return True
    return False


def _host_type(names: Names, annotation: cst.BaseExpression) -> bool:
    """`np.ndarray`, `NDArray[np.float32]`, `Optional[np.ndarray]`, `np.ndarray | None`."""
    if isinstance(annotation, cst.BinaryOperation):  # `np.ndarray | None`
        sides = [annotation.left, annotation.right]
        return any(_host_type(names, side) for side in sides) and all(
            _host_type(names, side) or (isinstance(side, cst.Name) and side.value == "None") for side in sides
        )
    if isinstance(annotation, cst.Subscript) and (names.qualified(annotation.value) or "").rpartition(".")[2] == "Optional":
        element = annotation.slice[0].slice if len(annotation.slice) == 1 else None
        return isinstance(element, cst.Index) and _host_type(names, element.value)
    return host_annotation(names, annotation)


def receiver_on_host(names: Names, rule_matchers: Any, call: cst.Call) -> bool:
    """Whether a method rule about syncs, shapes or op lowering, or one that host data
    makes harmless (`unless: host`: `x.cpu().double()`), meets host data (asked only
    when one of the method's rules is of such a kind: `.random_(generator=g)` of a CPU
    scalar runs on the CPU), or no tensor at all (`history.median(20)`: `window_argument`)."""
    categories = names.index.host_categories
    if not any(matcher[0].category in categories or matcher[0].unless == "host" for matcher in rule_matchers):
        return False
    func = call.func
    assert isinstance(func, cst.Attribute)
    return window_argument(names, call) or on_host(names, func.value)


MAX_RANK = 8
"""No real tensor has this many dimensions; a dim literal at or beyond it names none."""


def window_argument(names: Names, call: cst.Call) -> bool:
    """`history.median(20)`: a method that takes a dim first (`host.dim_first`) given an
    integer literal of `MAX_RANK` or more: no tensor's dim, so the receiver is another
    object (a HistoryBuffer's window of Python floats)."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in names.index.dim_first or not call.args:
        return False
    first = call.args[0]
    if first.keyword is not None or first.star or not isinstance(first.value, cst.Integer):
        return False
    return int(first.value.evaluated_value) >= MAX_RANK


def _sets_field(statement: cst.Assign | cst.AnnAssign) -> bool:
    if isinstance(statement, cst.AnnAssign):
        return self_field(statement.target) is not None
    return any(self_field(target.target) is not None for target in statement.targets)


def _comprehension_on_host(names: Names, node: cst.ListComp | cst.SetComp | cst.DictComp) -> bool:
    """A comprehension is a Python container, but what it holds is whatever its element
    is: `[x.item() for x in t]` and `[int(v) for v in row]` hold host values, `[to_device(a)
    for a in arrays]` and `[torch.linspace(..., device=d) for n in sizes]` hold tensors that
    may live anywhere (deepmd-kit's test tensors, DKM's device grids)."""
    element = node.value if isinstance(node, cst.DictComp) else node.elt
    if _literal(element) or on_host(names, element):
        return True
    if type(element) is cst.Name:
        clause: cst.CompFor | None = node.for_in
        while isinstance(clause, cst.CompFor):
            if element.value in target_names(clause.target):
                return on_host(names, clause.iter)  # `[x for x in np.arange(4)]`
            clause = clause.inner_for_in
    return False


_ON_HOST: dict[type[cst.CSTNode], Callable[[Names, Any], bool]] = {
    cst.ListComp: _comprehension_on_host,
    cst.SetComp: _comprehension_on_host,
    cst.DictComp: _comprehension_on_host,
    cst.Name: _name_on_host,
    cst.Call: _call_on_host,
    cst.Attribute: _attribute_on_host,
    cst.Subscript: _subscript_on_host,
    cst.List: _sequence_on_host,
    cst.Tuple: _sequence_on_host,
    cst.Set: _sequence_on_host,
    cst.IfExp: _conditional_on_host,
    cst.BinaryOperation: _arithmetic_on_host,
    cst.Comparison: _comparison_on_host,
    cst.UnaryOperation: _unary_on_host,
}
"""The answer for each node type that can hold host data (literals are in _HOST_LITERALS)."""


def host_narrowed(names: Names, test: cst.BaseExpression) -> frozenset[str]:
    """The values an `if` test proves to be host data in its body: `isinstance(x,
    np.ndarray)` (possibly `and`-ed with more tests) makes `x`, `self.x` or `d[k]` NumPy
    data there, whatever it was bound to before (`make_dumpable(d)`: `if isinstance(d,
    np.ndarray): return d.tolist()`). An `or` proves nothing about either side."""
    if isinstance(test, cst.BooleanOperation):
        if not isinstance(test.operator, cst.And):
            return frozenset()
        return host_narrowed(names, test.left) | host_narrowed(names, test.right)
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance" and len(test.args) == 2):
        return frozenset()
    kinds = test.args[1].value
    options = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
    if not options or not all(host_annotation(names, kind) for kind in options):
        return frozenset()
    key = host_key(test.args[0].value)
    return frozenset((key,)) if key is not None else frozenset()


def host_key(node: cst.BaseExpression) -> str | None:
    """The key a host-data fact about this value is kept under: `x`, `self.x`, `d[k]`,
    `d["k"]` (a subscript only by a name or a string, which the test and the use share)."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return f"self.{node.attr.value}"
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 1:
        index = node.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.Name):
            return f"{node.value.value}[{index.value.value}]"
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            return f"{node.value.value}[{index.value.value}]"
    return None
