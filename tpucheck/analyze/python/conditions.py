"""What a condition says about the code it guards: whether a test holds only with CUDA
(or only without), names a TPU path, skips a test, leaves a branch, or marks a test,
benchmark, entry point or periodic step. The walker uses these to tell fallback-kept
CUDA paths and test-only code from the product's main path.

(The parser's nesting limits, once also called guards, live in nesting.py.)"""

from __future__ import annotations

import re
from collections.abc import Callable
from fnmatch import fnmatchcase

import libcst as cst

from tpucheck.analyze.python.context import Names
from tpucheck.analyze.python.excepts import quiet_call
from tpucheck.analyze.python.index import PythonIndex
from tpucheck.analyze.python.scope import dotted, node_code


def is_device_operand(names: Names, node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Attribute):
        return node.attr.value == "type" or names.is_device_name(node.attr.value)
    if isinstance(node, cst.Name):
        return names.is_device_name(node.value)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "str" and node.args:
        return is_device_operand(names, node.args[0].value)
    return False


def availability_test(names: Names, node: cst.BaseExpression) -> bool:
    """Whether an expression asks if CUDA or a package is there: a call of an availability
    API (`torch.cuda.is_available()`, `importlib.util.find_spec("apex")`), a flag this module
    sets from an import attempt or such a call (`HAS_FLASH`), or, for checks and flags
    defined in another module, the convention every project follows for them
    (`is_flash_attn_available()`, `APEX_AVAILABLE`), whole names only."""
    guards = names.index.guards
    pattern = guards.availability_names
    if isinstance(node, cst.Call):
        qualified = names.qualified(node.func)
        if _asks_other_accelerator(names, node.func, qualified):
            return False  # `torch.xpu.is_available()` asks for another accelerator, not CUDA
        if qualified is not None and any(fnmatchcase(qualified, p) for p in guards.availability_calls):
            return True
        root = (qualified or "").partition(".")[0]
        if root == "builtins" or root in guards.listed_roots:
            return False  # `torch.distributed.is_available()`: not a CUDA check
        parts = dotted(node.func)
        # the naming convention names a question about the environment: it takes nothing,
        # or a package's name (`is_package_available("apex")`); `has_batchnorms(model)`
        # asks about its argument, not whether CUDA is there (audit AH: esvit)
        return parts is not None and pattern is not None and pattern.fullmatch(parts[-1]) is not None and _asks_the_environment(node)
    if isinstance(node, (cst.Name, cst.Attribute)) and guards.availability_values:
        qualified = names.qualified(node)
        if qualified is not None and qualified in guards.availability_values:
            return True
    if isinstance(node, cst.Name):
        return node.value in names.flags or (pattern is not None and pattern.fullmatch(node.value) is not None and node.value.isupper())
    if isinstance(node, cst.Attribute):
        name = node.attr.value
        if pattern is not None and pattern.fullmatch(name) is not None and name.isupper():
            return True
        parts = dotted(node)
        return parts is not None and ".".join(parts) in names.flags
    return False


def _asks_the_environment(call: cst.Call) -> bool:
    """A call whose arguments are all literals (or none): a question about the machine or
    an installed package, not about an object the code holds."""
    return all(
        isinstance(arg.value, (cst.SimpleString, cst.ConcatenatedString, cst.Integer)) or (isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False", "None"))
        for arg in call.args
    )


def implies_availability(names: Names, value: cst.BaseExpression) -> bool:
    """Whether a value is true only where CUDA (or the package) is there: an availability
    test, or an `and` with one (`use_gpu = torch.cuda.is_available() and not args.cpu`).
    A name or field bound to it is a flag the module tests later (`if self.use_gpu:`);
    an `or` or a `not` says nothing of the sort (audit S: torchreid's `use_gpu`)."""
    if availability_test(names, value):
        return True
    if isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.And):
        return implies_availability(names, value.left) or implies_availability(names, value.right)
    return False


def flag_key(target: cst.BaseExpression) -> str | None:
    """How a flag's name is kept: `use_gpu`, `self.use_gpu`, `cfg.use_gpu`."""
    parts = dotted(target)
    return ".".join(parts) if parts is not None else None


def mentions_availability(names: Names, test: cst.BaseExpression) -> bool:
    """Whether any part of a condition is an availability check (`if args.fp16 and
    HAS_APEX:`): the check is what keeps the fallback, not work of its own."""
    stack: list[cst.BaseExpression] = [test]
    while stack:
        node = stack.pop()
        if availability_test(names, node):
            return True
        if isinstance(node, cst.UnaryOperation):
            stack.append(node.expression)
        elif isinstance(node, cst.BooleanOperation):
            stack.extend((node.left, node.right))
        elif isinstance(node, cst.Comparison):
            stack.append(node.left)
            stack.extend(c.comparator for c in node.comparisons)
        elif isinstance(node, cst.IfExp):  # `is_available() if flag is None else flag != "0"`
            stack.extend((node.body, node.orelse))
    return False


def _availability_polarity(names: Names, test: cst.BaseExpression) -> int:
    """+1 when the test holds when the thing is there, -1 when it holds when it is not."""
    if availability_test(names, test):
        return 1
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        operands = (test.left, comparison.comparator)
        subject = next((o for o in operands if availability_test(names, o)), None)
        other = operands[1] if subject is operands[0] else operands[0]
        if subject is None:
            return 0
        if isinstance(other, cst.Name) and other.value in ("None", "False"):
            return 1 if isinstance(comparison.operator, (cst.IsNot, cst.NotEqual)) else -1 if isinstance(comparison.operator, (cst.Is, cst.Equal)) else 0
        return 1 if isinstance(comparison.operator, (cst.Is, cst.Equal)) and isinstance(other, cst.Name) and other.value == "True" else 0
    return 0


CUDA_STRING = re.compile(r"cuda(:\d+)?")


def names_device(node: cst.BaseExpression, device: re.Pattern[str]) -> bool:
    """A string literal (or a tuple, list or set of them) naming this device."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return isinstance(value, str) and device.fullmatch(value) is not None
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return any(names_device(e.value, device) for e in node.elements)
    return False


def _cuda_string(node: cst.BaseExpression) -> bool:
    return names_device(node, CUDA_STRING)


def cuda_polarity(names: Names, test: cst.BaseExpression) -> int:
    """+1 when the test holds only with CUDA (`x.is_cuda`, `device.type == "cuda"`, an
    availability check), -1 when it holds only without (`not ...`, `!= "cuda"`), else 0."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return -cuda_polarity(names, test.expression)
    if isinstance(test, cst.BooleanOperation):
        left, right = cuda_polarity(names, test.left), cuda_polarity(names, test.right)
        if isinstance(test.operator, cst.And):
            return 1 if 1 in (left, right) else 0
        if 1 in (left, right) and forced_by_environment(names, test.right if left == 1 else test.left):
            return 1  # `torch.cuda.is_available() or os.getenv("FORCE_CUDA", "0") == "1"`
        return -1 if -1 in (left, right) and 1 not in (left, right) else 0
    if isinstance(test, cst.Attribute):
        return 1 if test.attr.value == "is_cuda" or availability_test(names, test) else 0  # `if self.use_gpu:`
    if _counts_cuda_devices(names, test):
        return 1  # `if torch.cuda.device_count():`
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        operands = (test.left, comparison.comparator)
        count = _device_count_polarity(names, test.left, comparison)
        if count:
            return count
        if not any(_cuda_string(o) for o in operands):
            return _availability_polarity(names, test)  # `CUDA_HOME is not None`
        if not any(is_device_operand(names, o) for o in operands):
            return 0
        if isinstance(comparison.operator, (cst.Equal, cst.In, cst.Is)):
            return 1
        if isinstance(comparison.operator, (cst.NotEqual, cst.NotIn, cst.IsNot)):
            return -1
        return 0
    return _availability_polarity(names, test)


def forced_by_environment(names: Names, test: cst.BaseExpression) -> bool:
    """`os.getenv("FORCE_CUDA", "0") == "1"`, `os.environ.get("X") == "True"`: a switch
    only a user sets (its default is not the value compared with), so beside a CUDA check
    in an `or` it forces the CUDA side on a machine without one, and a TPU host that
    leaves it alone takes the other side. A switch on by default is no such thing."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Equal)):
        return False
    operands = (test.left, test.comparisons[0].comparator)
    read = next((o for o in operands if isinstance(o, cst.Call)), None)
    value = next((o for o in operands if isinstance(o, cst.SimpleString)), None)
    if read is None or value is None or names.qualified(read.func) not in ("os.getenv", "os.environ.get") or not read.args:
        return False
    default = read.args[1].value if len(read.args) > 1 else None
    return default is None or (isinstance(default, cst.SimpleString) and default.evaluated_value != value.evaluated_value)


def other_accelerator_test(names: Names, test: cst.BaseExpression) -> bool:
    """A test that holds only on another accelerator (`torch.backends.mps.is_available()`,
    `x.is_mps`, `device.type == "xpu"`, rules/judgement.yaml `other_accelerators.tests`):
    what its branch holds is that accelerator's path, never entered on a TPU host."""
    if isinstance(test, cst.BooleanOperation):
        left, right = other_accelerator_test(names, test.left), other_accelerator_test(names, test.right)
        return (left or right) if isinstance(test.operator, cst.And) else (left and right)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        if not isinstance(comparison.operator, (cst.Equal, cst.In, cst.Is)):
            return False
        operands = (test.left, comparison.comparator)
        devices = names.index.other_devices
        strings = [o for o in operands if isinstance(o, (cst.SimpleString, cst.Tuple, cst.List, cst.Set)) and _names_only(o, devices)]
        return bool(strings) and any(is_device_operand(names, o) for o in operands if o not in strings)
    func = test.func if isinstance(test, cst.Call) else test
    return isinstance(func, (cst.Name, cst.Attribute)) and _asks_other_accelerator(names, func, names.qualified(func))


def _asks_other_accelerator(names: Names, func: cst.BaseExpression, qualified: str | None) -> bool:
    index = names.index
    if qualified is not None and index.other_accelerator_calls is not None and index.other_accelerator_calls.match(qualified):
        return True
    # `x.is_mps` on a local tensor or device: no qualified name, the attribute says it
    return isinstance(func, cst.Attribute) and func.attr.value in index.other_accelerator_attrs


def _names_only(node: cst.BaseExpression, devices: frozenset[str]) -> bool:
    """A string literal, or a tuple, list or set of them, each naming one of these devices."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return isinstance(value, str) and value.partition(":")[0] in devices
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return bool(node.elements) and all(_names_only(e.value, devices) for e in node.elements)
    return False


def uses_other_accelerator(names: Names, node: cst.CSTNode) -> bool:
    """Whether code reaches another accelerator's API (`torch.npu.current_stream()`): a
    branch that does is no TPU path either."""
    prefixes = names.index.other_accelerator_apis
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, (cst.Attribute, cst.Name)):
            qualified = names.qualified(item)
            if qualified is not None and (qualified + ".").startswith(prefixes):
                return True
            if isinstance(item, cst.Name):
                continue
        stack.extend(item.children)
    return False


def is_device_count(names: Names, node: cst.BaseExpression) -> bool:
    """`torch.cuda.device_count()` itself."""
    return isinstance(node, cst.Call) and names.qualified(node.func) == "torch.cuda.device_count"


def _counts_cuda_devices(names: Names, node: cst.BaseExpression) -> bool:
    """`torch.cuda.device_count()`, a public API's field that holds it (`args.n_gpu`), or a
    name this module set from it (`n = torch.cuda.device_count()`)."""
    if isinstance(node, (cst.Name, cst.Attribute)) and names.counts and flag_key(node) in names.counts:
        return True
    if isinstance(node, cst.Attribute):
        return node.attr.value in names.index.guards.known_counts
    return is_device_count(names, node)


def counts_cuda_devices(names: Names, test: cst.BaseExpression) -> bool:
    """`if torch.cuda.device_count() > 1:`: the count is the check that keeps a multi-GPU
    path off a TPU host, not itself work (as an availability check is not)."""
    if isinstance(test, cst.UnaryOperation):
        return counts_cuda_devices(names, test.expression)
    if isinstance(test, cst.BooleanOperation):  # `if not ddp and torch.cuda.device_count() > 1:`
        return counts_cuda_devices(names, test.left) or counts_cuda_devices(names, test.right)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        return _device_count_polarity(names, test.left, test.comparisons[0]) != 0
    return _counts_cuda_devices(names, test)


_COMPARE_AT_ZERO = {
    cst.GreaterThan: lambda n: n < 0,
    cst.GreaterThanEqual: lambda n: n <= 0,
    cst.LessThan: lambda n: n > 0,
    cst.LessThanEqual: lambda n: n >= 0,
    cst.Equal: lambda n: n == 0,
    cst.NotEqual: lambda n: n != 0,
}


def _device_count_polarity(names: Names, left: cst.BaseExpression, comparison: cst.ComparisonTarget) -> int:
    """`torch.cuda.device_count() > 1` holds only with CUDA, `< 2` (a skip condition)
    holds without it: what the comparison says on a host that counts no CUDA device."""
    if not (_counts_cuda_devices(names, left) and isinstance(comparison.comparator, cst.Integer)):
        return 0
    at_zero = _COMPARE_AT_ZERO.get(type(comparison.operator))
    if at_zero is None:
        return 0
    return -1 if at_zero(int(comparison.comparator.value)) else 1


TPU_STRING = re.compile(r"(xla|tpu)(:\d+)?")


def tpu_test(names: Names, test: cst.BaseExpression) -> bool:
    """A test for a TPU/XLA path (`device.type == "xla"`, `is_torch_xla_available()`,
    `torch.tpu.is_available()`, `USE_TPU`): code on its other side has a TPU sibling."""
    if isinstance(test, cst.BooleanOperation):
        return tpu_test(names, test.left) or tpu_test(names, test.right)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        operands = (test.left, test.comparisons[0].comparator)
        strings = [o for o in operands if isinstance(o, (cst.SimpleString, cst.Tuple, cst.List, cst.Set))]
        return any(_tpu_string(o) for o in strings) and any(is_device_operand(names, o) for o in operands)
    if isinstance(test, cst.Call):
        if _asks_for_accelerator_api(names, test):
            return True
        test = test.func
    parts = dotted(test) if isinstance(test, (cst.Name, cst.Attribute)) else None
    if parts is None:
        return False
    guards = names.index.guards
    qualified = names.qualified(test) or ""
    if qualified in guards.accelerator_tests:
        return True  # `... if torch.accelerator.is_available() else "cuda"`: CUDA is the fallback
    if any(qualified == m or qualified.startswith(m + ".") for m in guards.tpu_modules):
        return True
    return guards.tpu_names is not None and any(guards.tpu_names.search(part) for part in parts)


def _asks_for_accelerator_api(names: Names, call: cst.Call) -> bool:
    """`hasattr(torch, "accelerator")`: the same test for torch versions before 2.6."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "hasattr" and len(call.args) == 2):
        return False
    owner, name = call.args[0].value, call.args[1].value
    return names.qualified(owner) == "torch" and isinstance(name, cst.SimpleString) and name.evaluated_value == "accelerator"


def _tpu_string(node: cst.BaseExpression) -> bool:
    return names_device(node, TPU_STRING)


def names_a_value(test: cst.BaseExpression) -> bool:
    """`act_fn == "mish"`: a setting compared with one literal value (one choice of many)."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Equal)):
        return False
    return any(isinstance(o, (cst.SimpleString, cst.Integer)) for o in (test.left, test.comparisons[0].comparator))


def is_exit(body: cst.BaseSuite, skip_calls: frozenset[str]) -> bool:
    """A branch that leaves: return, raise, continue, break, or a test skip / exit call."""
    statements = body.body
    if not statements:
        return False
    last = statements[-1]
    smalls = last.body if isinstance(last, cst.SimpleStatementLine) else (last,) if isinstance(last, cst.BaseSmallStatement) else ()
    for small in smalls:
        if isinstance(small, (cst.Return, cst.Raise, cst.Continue, cst.Break)):
            return True
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            parts = dotted(small.value.func)
            if parts is not None and parts[-1] in skip_calls:
                return True
    return False


def cuda_settings_only(names: Names, suite: cst.BaseSuite) -> bool:
    """A branch that only sets or calls CUDA's own knobs (`torch.backends.cuda.matmul.
    allow_tf32 = True`, `torch.cuda.set_sync_debug_mode("warn")`, under `if
    torch.cuda.get_device_properties(0).major >= 8:`): nothing in it carries over to a TPU,
    so the device test in front of it is a guard, not a path a TPU loses."""
    statements = getattr(suite, "body", ())
    if not statements:
        return False
    for statement in statements:
        if isinstance(statement, cst.If):
            if statement.orelse is not None or not cuda_settings_only(names, statement.body):
                return False
            continue
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                named = names.qualified(small.value.func)
            elif isinstance(small, cst.Assign) and len(small.targets) == 1:
                named = names.qualified(small.targets[0].target)
            else:
                return False
            if named is None or not any(fnmatchcase(named, pattern) for pattern in names.index.guards.knobs):
                return False
    return True


def every_statement(suite: cst.BaseSuite | None, keep: Callable[[cst.BaseSmallStatement], bool]) -> bool:
    """Whether a branch is simple statements only, each of them one `keep` accepts."""
    statements = getattr(suite, "body", ())
    if not statements:
        return False
    return all(isinstance(statement, cst.SimpleStatementLine) and all(keep(small) for small in statement.body) for statement in statements)


def placement_only(names: Names, suite: cst.BaseSuite) -> bool:
    """A branch that only places values or sets a literal (`x = x.cuda(gpu_id)`, `model.to(
    device)`, `gpu_id = -1`, `pin = True`): beside a sibling of the same kind, the device test
    picks where things go, and the sibling is already what a TPU needs (rules/judgement.yaml
    `guards.placement_methods` / `placement_calls`)."""

    def places(small: cst.BaseSmallStatement) -> bool:
        value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
        return value is not None and (_literal_value(value) or _placement_call(names, value))

    return every_statement(suite, places)


def _literal_value(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.UnaryOperation):
        value = value.expression
    return isinstance(value, (cst.Integer, cst.SimpleString)) or (isinstance(value, cst.Name) and value.value in ("True", "False", "None"))


def _placement_call(names: Names, value: cst.BaseExpression) -> bool:
    """`x.cuda(...)`, `x.to(...)`, `torch.device(...)`, chained (`x.float().to(d)` is not:
    its other calls compute)."""
    if not isinstance(value, cst.Call):
        return False
    guards = names.index.guards
    if isinstance(value.func, cst.Attribute) and value.func.attr.value in guards.placement_methods:
        receiver = value.func.value
        return not isinstance(receiver, cst.Call) or _placement_call(names, receiver)
    return names.qualified(value.func) in guards.placement_calls


def brings_home(value: cst.BaseExpression) -> bool:
    """`x.cpu()`, `x.detach().cpu()`: a value brought back to the host, nothing computed."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "cpu" and not value.args):
        return False
    receiver = value.func.value
    while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and receiver.func.attr.value == "detach" and not receiver.args:
        receiver = receiver.func.value
    return isinstance(receiver, (cst.Name, cst.Attribute))


def to_host_only(suite: cst.BaseSuite | None) -> bool:
    """A CUDA side that only brings values back to the host (`if t.is_cuda: t = t.cpu()`,
    with no other side): a TPU value stays where it is, as a CPU one does, and nothing
    needs an edit (audits AB and AC: gather helpers that move results home)."""
    return every_statement(suite, lambda small: isinstance(small, cst.Assign) and brings_home(small.value))


def reports_only(names: Names, suite: cst.BaseSuite | None) -> bool:
    """A branch that only reports (`print`, a log call, or text added to a message:
    `DESCRIPTION += "Running on CPU"`): the device test in front of it picks words, not a
    path, so a TPU loses nothing there. Any other statement, an assignment of text too
    (`device = "cuda"`), is a path."""

    def reports(small: cst.BaseSmallStatement) -> bool:
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and quiet_call(small.value, names):
            return True
        # text added to a message; `device = "cuda"` (an Assign) is a choice
        return isinstance(small, cst.AugAssign) and isinstance(small.value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString))

    return every_statement(suite, reports)


def fails(body: cst.BaseSuite | cst.CSTNode | None, skip_raises: frozenset[str]) -> bool:
    """A branch that ends by raising (not a test skip: `raise unittest.SkipTest(...)`):
    `if torch.cuda.is_available(): ... else: raise RuntimeError("CUDA required")` keeps
    no fallback, so the CUDA side is the only path."""
    if isinstance(body, cst.Else):
        body = body.body
    if not isinstance(body, cst.BaseSuite) or not body.body:
        return False  # none, or an `elif` (its own test decides)
    last = body.body[-1]
    smalls = last.body if isinstance(last, cst.SimpleStatementLine) else (last,) if isinstance(last, cst.BaseSmallStatement) else ()
    for small in smalls:
        if isinstance(small, cst.Raise):
            exc = small.exc.func if isinstance(small.exc, cst.Call) else small.exc
            parts = dotted(exc) if exc is not None else None
            return not (parts is not None and parts[-1] in skip_raises)
    return False


def exits_without_cuda(names: Names, statement: cst.CSTNode, *, raise_caught: bool = False) -> bool:
    """`if not torch.cuda.is_available(): return ...` or `pytest.importorskip(...)`; not
    `... : raise RuntimeError("needs CUDA")`, which leaves no other way, unless a handler
    around swallows the raise (`raise_caught`)."""
    if isinstance(statement, cst.If):
        guards = names.index.guards
        if statement.orelse is not None or not is_exit(statement.body, guards.skip_calls) or (fails(statement.body, guards.skip_raises) and not raise_caught):
            return False
        return cuda_polarity(names, statement.test) < 0 or tpu_test(names, statement.test)
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
            if isinstance(value, cst.Call):
                parts = dotted(value.func)
                if parts is not None and parts[-1] == "importorskip":
                    return True
    return False


def is_cuda_skip_decorator(names: Names, expression: cst.BaseExpression) -> bool:
    if not isinstance(expression, cst.Call) or not expression.args:
        return False
    parts = dotted(expression.func)
    if parts is None or parts[-1] not in names.index.guards.skip_decorators:
        return False
    condition = expression.args[0].value
    if cuda_polarity(names, condition) == 0:
        return False
    # A skip on any missing feature (`skipif(not _HAS_WEIGHTS_ONLY)`) is not a CUDA path:
    # a word of the condition must name CUDA or a CUDA-only package.
    words = {w.lower() for w in _WORD.findall(node_code(condition))}
    return bool(words & names.index.guards.cuda_words)


_WORD = re.compile(r"[A-Za-z0-9]+")


def module_skip_mark(names: Names, statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == "pytestmark" for t in small.targets):
            values = [e.value for e in small.value.elements] if isinstance(small.value, (cst.List, cst.Tuple)) else [small.value]
            return any(is_cuda_skip_decorator(names, v) for v in values)
    return False


def role_of_function(index: PythonIndex, name: str, decorators: tuple[str, ...], class_kind: str | None = None) -> str | None:
    """A benchmark or a test function inside a product file (rules/judgement.yaml
    `function_roles`). A `test_*` method of a class that is not a test class
    (`Trainer.test_step`, a GUI's `test_step`) is product code."""
    for role, patterns in index.function_roles:
        if role == "test" and class_kind == "plain":
            continue
        if any(fnmatchcase(name, p) for p in patterns) or (role == "benchmark" and any("benchmark" in d for d in decorators)):
            return role
    return None


def is_main_test(test: cst.BaseExpression) -> bool:
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    operands = (test.left, test.comparisons[0].comparator)
    names = {o.value for o in operands if isinstance(o, cst.Name)}
    strings = {o.evaluated_value for o in operands if isinstance(o, cst.SimpleString)}
    return names == {"__name__"} and strings == {"__main__"}


def is_periodic(test: cst.BaseExpression) -> bool:
    """`step % N == 0`, `(i + 1) % every == 0`, possibly `and`-ed with more conditions."""
    if isinstance(test, cst.BooleanOperation):
        return isinstance(test.operator, cst.And) and (is_periodic(test.left) or is_periodic(test.right))
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    comparison = test.comparisons[0]
    if not isinstance(comparison.operator, cst.Equal):
        return False
    for left, right in ((test.left, comparison.comparator), (comparison.comparator, test.left)):
        if isinstance(left, cst.BinaryOperation) and isinstance(left.operator, cst.Modulo) and isinstance(right, cst.Integer) and right.value == "0":
            return True
    return False


def host_annotation(names: Names, annotation: cst.BaseExpression) -> bool:
    if isinstance(annotation, cst.Subscript):
        annotation = annotation.value
    qualified = names.qualified(annotation)
    return qualified is not None and qualified in names.index.host_annotations


def tests_half_dtype(names: Names, test: cst.BaseExpression) -> bool:
    """`if x.dtype == torch.float16:` (`is`, `in (torch.float16, ...)`, either side, or one
    side of an `and`): the branch runs only where an operand is already half precision, so a
    cast to fp16 in it follows that operand's dtype instead of choosing fp16."""
    if isinstance(test, cst.BooleanOperation):
        return isinstance(test.operator, cst.And) and (tests_half_dtype(names, test.left) or tests_half_dtype(names, test.right))
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    comparison = test.comparisons[0]
    if not isinstance(comparison.operator, (cst.Equal, cst.Is, cst.In)):
        return False
    half = names.index.guards.half_dtypes

    def is_half(node: cst.BaseExpression) -> bool:
        if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
            return any(is_half(element.value) for element in node.elements)
        return names.qualified(node) in half

    def is_dtype(node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Attribute) and node.attr.value == "dtype"

    left, right = test.left, comparison.comparator
    return (is_dtype(left) and is_half(right)) or (not isinstance(comparison.operator, cst.In) and is_dtype(right) and is_half(left))
