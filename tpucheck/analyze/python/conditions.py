"""What a condition says about the code it guards: whether a test holds only with CUDA
(or only without), names a TPU path, skips a test, leaves a branch, or marks a test,
benchmark, entry point or periodic step. The walker uses these to tell fallback-kept
CUDA paths and test-only code from the product's main path.

(The parser's nesting limits, once also called guards, live in nesting.py.)"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatchcase

import libcst as cst

from tpucheck.analyze.python.context import Names
from tpucheck.analyze.python.index import PythonIndex
from tpucheck.analyze.python.scope import dotted


def is_device_operand(names: Names, node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Attribute):
        return node.attr.value == "type" or names.is_device_name(node.attr.value)
    if isinstance(node, cst.Name):
        return names.is_device_name(node.value)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "str" and node.args:
        return is_device_operand(names, node.args[0].value)
    return False


def catches(handler: cst.ExceptHandler | cst.ExceptStarHandler, names: frozenset[str]) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    for item in types:
        expression = item.value if isinstance(item, cst.BaseElement) else item
        parts = dotted(expression)
        if parts is not None and parts[-1] in names:
            return True
    return False


def falls_back(handler: cst.ExceptHandler | cst.ExceptStarHandler, imported: frozenset[str]) -> bool:
    """Whether the handler gives the code another way on: one that raises (`except
    ImportError: raise ImportError("pip install flash-attn")`) or imports a package the
    `try` imported, under another name (`from flash_attn import flash_attn_varlen_func as
    flash_attn_unpadded_func`), keeps nothing optional."""
    for statement in handler.body.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Raise) or (isinstance(small, (cst.Import, cst.ImportFrom)) and top_packages([small]) & imported):
                return False
    return True


def top_packages(statements: Iterable[cst.CSTNode]) -> frozenset[str]:
    """The top-level packages these import statements (or statement lines) import."""
    out: set[str] = set()
    for statement in statements:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else (statement,):
            if isinstance(small, cst.Import):
                out.update(parts[0] for parts in (dotted(alias.name) for alias in small.names) if parts)
            elif isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
                parts = dotted(small.module)
                if parts:
                    out.add(parts[0])
    return frozenset(out)


def mentions_guard(test: cst.BaseExpression, index: PythonIndex) -> bool:
    """An availability check: `if torch.cuda.is_available()`, `if HAS_APEX`, `if find_spec(...)`."""
    if index.guard_tests is None:
        return False
    stack: list[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            if index.guard_tests.search(node.value):
                return True
        elif isinstance(node, cst.Attribute):
            if index.guard_tests.search(node.attr.value):
                return True
            stack.append(node.value)
        elif isinstance(node, cst.Call):
            stack.append(node.func)
        elif isinstance(node, cst.UnaryOperation):
            stack.append(node.expression)
        elif isinstance(node, cst.BooleanOperation):
            stack.extend((node.left, node.right))
        elif isinstance(node, cst.Comparison):
            stack.append(node.left)
    return False


_CUDA_STRING = re.compile(r"cuda(:\d+)?")


_SKIP_DECORATORS = frozenset({"skipif", "skipIf", "skipUnless"})
"""`pytest.mark.skipif`, `unittest.skipIf` / `skipUnless`: a CUDA condition there makes the
test a CUDA path that is skipped without CUDA."""


_SKIP_CALLS = frozenset({"skip", "skipTest", "exit", "SkipTest"})


_BENCHMARK_FUNCTIONS = ("bench*", "benchmark*", "*_benchmark", "*_bench")


def _names_device(node: cst.BaseExpression, device: re.Pattern[str]) -> bool:
    """A string literal (or a tuple, list or set of them) naming this device."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return isinstance(value, str) and device.fullmatch(value) is not None
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return any(_names_device(e.value, device) for e in node.elements)
    return False


def _cuda_string(node: cst.BaseExpression) -> bool:
    return _names_device(node, _CUDA_STRING)


def cuda_polarity(names: Names, test: cst.BaseExpression) -> int:
    """+1 when the test holds only with CUDA (`x.is_cuda`, `device.type == "cuda"`, an
    availability check), -1 when it holds only without (`not ...`, `!= "cuda"`), else 0."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return -cuda_polarity(names, test.expression)
    if isinstance(test, cst.BooleanOperation):
        left, right = cuda_polarity(names, test.left), cuda_polarity(names, test.right)
        if isinstance(test.operator, cst.And):
            return 1 if 1 in (left, right) else 0
        return -1 if -1 in (left, right) and 1 not in (left, right) else 0
    if isinstance(test, cst.Attribute):
        return 1 if test.attr.value == "is_cuda" else 0
    if _counts_cuda_devices(names, test):
        return 1  # `if torch.cuda.device_count():`
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        operands = (test.left, comparison.comparator)
        count = _device_count_polarity(names, test.left, comparison)
        if count:
            return count
        if not any(_cuda_string(o) for o in operands):
            return 0
        if not any(is_device_operand(names, o) for o in operands):
            return 0
        if isinstance(comparison.operator, (cst.Equal, cst.In, cst.Is)):
            return 1
        if isinstance(comparison.operator, (cst.NotEqual, cst.NotIn, cst.IsNot)):
            return -1
        return 0
    return 1 if mentions_guard(test, names.index) else 0


def _counts_cuda_devices(names: Names, node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and names.qualified(node.func) == "torch.cuda.device_count"


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


_TPU_STRING = re.compile(r"(xla|tpu)(:\d+)?")


_TPU_NAME = re.compile(r"(?i)xla|tpu")


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
    if names.qualified(test) in _ACCELERATOR_TESTS:
        return True  # `... if torch.accelerator.is_available() else "cuda"`: CUDA is the fallback
    return any(_TPU_NAME.search(part) for part in parts)


_ACCELERATOR_TESTS = frozenset({"torch.accelerator.is_available", "torch.accelerator.current_accelerator", "torch.accelerator.device_count"})
"""Device-agnostic tests: the side they guard runs on TorchTPU, so the other is a fallback."""


def _asks_for_accelerator_api(names: Names, call: cst.Call) -> bool:
    """`hasattr(torch, "accelerator")`: the same test for torch versions before 2.6."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "hasattr" and len(call.args) == 2):
        return False
    owner, name = call.args[0].value, call.args[1].value
    return names.qualified(owner) == "torch" and isinstance(name, cst.SimpleString) and name.evaluated_value == "accelerator"


def _tpu_string(node: cst.BaseExpression) -> bool:
    return _names_device(node, _TPU_STRING)


def is_exit(body: cst.BaseSuite) -> bool:
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
            if parts is not None and parts[-1] in _SKIP_CALLS:
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
            if named is None or not any(fnmatchcase(named, pattern) for pattern in names.index.cuda_knobs):
                return False
    return True


def fails(body: cst.BaseSuite | cst.CSTNode | None) -> bool:
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
            return not (parts is not None and parts[-1] in ("SkipTest", "Skipped", "skip"))
    return False


def exits_without_cuda(names: Names, statement: cst.CSTNode) -> bool:
    """`if not torch.cuda.is_available(): return ...` or `pytest.importorskip(...)`; not
    `... : raise RuntimeError("needs CUDA")`, which leaves no other way."""
    if isinstance(statement, cst.If):
        if statement.orelse is not None or not is_exit(statement.body) or fails(statement.body):
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
    if parts is None or parts[-1] not in _SKIP_DECORATORS:
        return False
    condition = expression.args[0].value
    if cuda_polarity(names, condition) == 0:
        return False
    # A skip on any missing feature (`skipif(not _HAS_WEIGHTS_ONLY)`) is not a CUDA path.
    return _CUDA_CONDITION.search(_CODE.code_for_node(condition)) is not None


_CODE = cst.Module(body=[])


_CUDA_CONDITION = re.compile(r"(?i)cuda|gpu|nvidia|triton|apex|flash|xformers|bitsandbytes|nccl|cudnn|cutlass|deepspeed")


def module_skip_mark(names: Names, statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == "pytestmark" for t in small.targets):
            values = [e.value for e in small.value.elements] if isinstance(small.value, (cst.List, cst.Tuple)) else [small.value]
            return any(is_cuda_skip_decorator(names, v) for v in values)
    return False


def role_of_function(name: str, decorators: tuple[str, ...], class_kind: str | None = None) -> str | None:
    """A benchmark or a test function inside a product file. A `test_*` method of a class
    that is not a test class (`Trainer.test_step`, a GUI's `test_step`) is product code."""
    if any(fnmatchcase(name, p) for p in _BENCHMARK_FUNCTIONS) or any("benchmark" in d for d in decorators):
        return "benchmark"
    if name.startswith("test_") and class_kind != "plain":
        return "test"
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
