"""Which CUDA sources a module compiles only when the tensor is on a CUDA device.

Why: NVlabs' StyleGAN plugins (and the many repositories that copy their `torch_utils/ops`)
compile their kernels at run time in a small function that the op calls only as the last
test of `if impl == 'cuda' and x.device.type == 'cuda' and _init():`, and run a PyTorch
reference after it. On a TPU host the device test is false, the build never starts and the
reference does the work: the kernels keep a fallback the host takes by itself, as a C++
dispatcher's CPU twin does (`reachability._wired_twins`). A generic JIT loader
(`get_plugin(sources=...)`) builds only what its callers pass, so it is as optional as
they all are.

The facts are a pure function of the text, cached with the file's entry like its imports.
`ast`, not libcst: only the shape of a few calls and conditions is needed, and only in the
rare files that name a CUDA source or a `cpp_extension` loader.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from tpucheck.analyze.pyparse import last_name, parse_or_none
from tpucheck.discover.walk import NATIVE_EXTENSIONS
from tpucheck.findings import JitBuild

__all__ = ["host_only_loads", "jit_facts"]

_KERNEL = (".cu", ".cuh")
_LOADERS = frozenset({"load", "load_inline"})
"""`torch.utils.cpp_extension`'s JIT builders."""
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_NAMES_SOURCE = re.compile(r"""\.cuh?["']""")
"""The screen: a string ending in `.cu`/`.cuh` (not `.cuda()`, which nearly every file has)."""


def jit_facts(text: str) -> tuple[tuple[JitBuild, ...], tuple[str, ...]]:
    """The JIT builds a module writes (each with the device test every call of its building
    function sits under, or "" when one call does not), and its loaders: module-level
    functions that hand `cpp_extension.load` sources they did not write themselves."""
    if "cpp_extension" not in text and _NAMES_SOURCE.search(text) is None:
        return (), ()
    tree = parse_or_none(text)
    if tree is None:  # CPython's parser gives up on deep nesting
        return (), ()
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    functions = {node.name: node for node in tree.body if isinstance(node, _FUNCTIONS)}
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    builds = []
    named = {call: sorted({s for arg in _arguments(call) for s in _argument_sources(arg, call, parents, tree)}) for call in calls}
    naming = [call for call in calls if any(s.endswith(_KERNEL) for s in named[call])]
    environment = _environment_names(tree)
    for call in naming:
        if any(_within(call, other, parents) for other in naming if other is not call):
            continue  # `join(here, "src", "op.cu")` inside `load(...)`: the outer call builds
        sources = named[call]
        owner = _enclosing_function(call, parents)
        guard = ""
        if owner is not None and owner is functions.get(owner.name):
            guard = _gate(owner.name, calls, parents, text)
        elif owner is None:
            guard = _module_gate(call, tree, parents, text)
        bound = parents.get(call)
        target = ""
        if isinstance(bound, ast.Assign) and len(bound.targets) == 1 and isinstance(bound.targets[0], ast.Name):
            target = bound.targets[0].id
        opt_in = _opt_in(call, parents, environment, text)
        twin = _cpu_twin(target, tree, parents, text) if target and bound is not None and parents.get(bound) is tree else ""
        builds.append(JitBuild(last_name(call.func), tuple(sources), guard, call.lineno, target, _written_name(call), opt_in, twin))
    loaders = tuple(name for name, fn in sorted(functions.items()) if _is_loader(fn))
    return tuple(builds), loaders


def _environment_names(tree: ast.Module) -> dict[str, str | None]:
    """Names bound to an environment read (`JIT = os.getenv("OPS_JIT")`), with its default."""
    found: dict[str, str | None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            read = _environment_read(node.value)
            if read is not None:
                found[node.targets[0].id] = read[0]
    return found


def _environment_read(node: ast.expr) -> tuple[str | None] | None:
    """`os.getenv("X")`, `os.environ.get("X", "0")`: (its default,), or None for anything else."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    func = node.func
    reads = func.attr == "getenv" or (func.attr == "get" and isinstance(func.value, ast.Attribute) and func.value.attr == "environ")
    if not reads or not node.args:
        return None
    default = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "default"), None)
    if default is None:
        return (None,)
    return (default.value,) if isinstance(default, ast.Constant) and isinstance(default.value, str) else None


def _opt_in(call: ast.Call, parents: dict[ast.AST, ast.AST], environment: dict[str, str | None], text: str) -> str:
    """The `if` around the build whose test holds only when the user sets an environment
    variable (its default is not the value the test asks for), as evidence, or ""."""
    child: ast.AST = call
    while child in parents:
        node = parents[child]
        if isinstance(node, ast.If) and child in node.body:
            for conjunct in _conjuncts(node.test):
                if _off_by_default(conjunct, environment):
                    return f"`{ast.get_source_segment(text, conjunct) or ast.unparse(conjunct)}` (line {node.lineno})"
        child = node
    return ""


def _off_by_default(test: ast.expr, environment: dict[str, str | None]) -> bool:
    """`os.getenv("X") == "1"`, `FLAG == "True"` with `FLAG = os.getenv("FLAG")`,
    `os.environ.get("X", "0") in ("1", "true")`, `os.getenv("X")`: false while X is unset."""
    def default_of(node: ast.expr) -> tuple[str | None] | None:
        if isinstance(node, ast.Name) and node.id in environment:
            return (environment[node.id],)
        return _environment_read(node)

    read = default_of(test)
    if read is not None:
        return read[0] in (None, "", "0")  # a bare test of the variable: unset is false
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq | ast.In)):
        return False
    read = default_of(test.left)
    wanted = test.comparators[0]
    values = [wanted] if isinstance(wanted, ast.Constant) else list(wanted.elts) if isinstance(wanted, ast.Tuple | ast.List | ast.Set) else []
    if read is None or not values or not all(isinstance(v, ast.Constant) for v in values):
        return False
    return read[0] not in [v.value for v in values if isinstance(v, ast.Constant)]


def _written_name(call: ast.Call) -> str:
    """The extension's name as the build writes it: `name=` or the first argument."""
    value = next((k.value for k in call.keywords if k.arg in ("name", "module_name")), call.args[0] if call.args else None)
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else ""


def _arguments(call: ast.Call) -> Iterator[ast.expr]:
    yield from call.args
    yield from (k.value for k in call.keywords)


def _argument_sources(arg: ast.expr, call: ast.Call, parents: dict[ast.AST, ast.AST], tree: ast.Module) -> Iterator[str]:
    """The native sources an argument names: its literals, or, for a name, the literals of
    what the enclosing function (or the module) assigns to it (`sources = ["op.cpp",
    "op.cu"]` then `load(..., sources=sources)`: blind set 14's stylegan2-ada)."""
    yield from _sources(arg)
    if isinstance(arg, ast.Name):
        scope: ast.AST = _enclosing_function(call, parents) or tree
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == arg.id for t in node.targets):
                yield from _sources(node.value)


def _sources(node: ast.AST) -> Iterator[str]:
    for inner in ast.walk(node):
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str) and inner.value.endswith(NATIVE_EXTENSIONS):
            yield inner.value



def _enclosing_function(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    while node in parents:
        node = parents[node]
        if isinstance(node, _FUNCTIONS):
            return node
    return None


def _is_loader(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A function that calls `load`/`load_inline` and writes no CUDA source of its own: it
    compiles what it is given."""
    if any(True for _ in _sources(fn)):
        return False
    return any(isinstance(n, ast.Call) and last_name(n.func) in _LOADERS for n in ast.walk(fn))


def _gate(name: str, calls: list[ast.Call], parents: dict[ast.AST, ast.AST], text: str) -> str:
    """The device test that every call of `name` in the module sits under, as evidence, or
    "" when one call does not (or nothing calls it)."""
    evidence = ""
    for call in calls:
        if not (isinstance(call.func, ast.Name) and call.func.id == name):
            continue
        found = _gated(call, parents)
        if found is None:
            return ""
        test, line = found
        evidence = evidence or f"`{ast.get_source_segment(text, test) or ast.unparse(test)}` (line {line})"
    return evidence


def _module_gate(call: ast.Call, tree: ast.Module, parents: dict[ast.AST, ast.AST], text: str) -> str:
    """A build at the module's top under a CUDA test (`if platform.system() == 'Linux' and
    torch.cuda.is_available(): fused = load(...)`, GPEN's StyleGAN2 ops), in a module whose
    functions choose by the same kind of test between the op and a PyTorch path (`if ...
    torch.cuda.is_available() ...: return Fused.apply(x) / else: return F.leaky_relu(x)`):
    a host without CUDA neither builds nor calls it. "" when the build is not under such a
    test, or no function of the module offers the other way."""
    child: ast.AST = call
    test: ast.expr | None = None
    line = 0
    while child in parents:
        node = parents[child]
        if isinstance(node, (*_FUNCTIONS, ast.Lambda, ast.ClassDef)):
            return ""
        if isinstance(node, ast.If) and not _within(call, node.test, parents) and child in node.body:
            found = _device_test(node.test, False, call, parents)
            if found is not None:
                test, line = found, node.lineno
        child = node
    if test is None:
        return ""
    dispatches = any(
        isinstance(node, ast.If) and node.orelse and any(_asks_cuda(c) for c in _conjuncts(node.test))
        for function in tree.body
        if isinstance(function, _FUNCTIONS)
        for node in ast.walk(function)
    )
    return f"`{ast.get_source_segment(text, test) or ast.unparse(test)}` (line {line})" if dispatches else ""


def _gated(call: ast.Call, parents: dict[ast.AST, ast.AST]) -> tuple[ast.expr, int] | None:
    """The device test that guards this call, when an `if` around it tests the device and
    leaves another way on (an `else`, or a return with code after the `if`)."""
    child: ast.AST = call
    while child in parents:
        node = parents[child]
        if isinstance(node, (*_FUNCTIONS, ast.Lambda, ast.ClassDef, ast.Module)):
            return None
        if isinstance(node, ast.If):
            test = _device_test(node.test, _within(call, node.test, parents), call, parents)
            if test is not None and _has_other_way(node, parents):
                return test, node.lineno
        child = node
    return None


def _within(node: ast.AST, root: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        if node is root:
            return True
        node = parents[node]
    return node is root


def _device_test(test: ast.expr, in_test: bool, call: ast.Call, parents: dict[ast.AST, ast.AST]) -> ast.expr | None:
    """The conjunct of the `if`'s test that asks for a CUDA device. A call inside the test
    must come after it in the `and` chain (short-circuit: it runs only once the device test
    passed); a call in the body needs the test anywhere in the chain."""
    conjuncts = _conjuncts(test)
    for index, conjunct in enumerate(conjuncts):
        if not _asks_cuda(conjunct):
            continue
        if not in_test:
            return conjunct
        if any(_within(call, later, parents) for later in conjuncts[index + 1 :]):
            return conjunct
    return None


def _conjuncts(test: ast.expr) -> list[ast.expr]:
    """The tests an `and` chains, in order; a single test otherwise."""
    return list(test.values) if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]


def _tests_cpu(test: ast.expr) -> bool | None:
    """`x.device.type == "cpu"`: True; `!= "cpu"`: False; any other test: None."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq))):
        return None
    sides = (test.left, test.comparators[0])
    if any(isinstance(s, ast.Constant) and s.value == "cpu" for s in sides) and any(_is_device_type(s) for s in sides):
        return isinstance(test.ops[0], ast.Eq)
    return None


def _is_device_type(node: ast.expr) -> bool:
    """`x.device.type`."""
    return isinstance(node, ast.Attribute) and node.attr == "type" and isinstance(node.value, ast.Attribute) and node.value.attr == "device"


def _asks_cuda(node: ast.expr) -> bool:
    """`x.device.type == "cuda"`, `x.is_cuda`, `torch.cuda.is_available()`."""
    if isinstance(node, ast.Attribute):
        return node.attr == "is_cuda"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        owner = node.func.value
        return node.func.attr == "is_available" and isinstance(owner, ast.Attribute) and owner.attr == "cuda"
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
        sides = (node.left, node.comparators[0])
        names_cuda = any(isinstance(s, ast.Constant) and s.value == "cuda" for s in sides)
        return names_cuda and any(_is_device_type(s) for s in sides)
    return False


def _has_other_way(node: ast.If, parents: dict[ast.AST, ast.AST]) -> bool:
    """Another path for other devices: an `else`, or a body that returns with statements
    after the `if` in its block."""
    if node.orelse:
        return True
    if not isinstance(node.body[-1], ast.Return | ast.Raise):
        return False
    block = parents.get(node)
    for field in ("body", "orelse", "finalbody"):
        statements = getattr(block, field, None)
        if isinstance(statements, list) and node in statements:
            return statements.index(node) < len(statements) - 1
    return False


def _cpu_twin(target: str, tree: ast.Module, parents: dict[ast.AST, ast.AST], text: str) -> str:
    """Evidence that the module reaches the extension bound to `target` only through autograd
    Functions whose every `.apply` call sits on the non-CPU side of a device test whose CPU
    side calls a plain-PyTorch twin (StyleGAN2's `if input.device.type == "cpu": out =
    upfirdn2d_native(...) else: out = UpFirDn2d.apply(...)`), or "". A TPU tensor is not a
    CPU one, so it takes the extension until the test is turned round: a known edit, with
    the twin already written (blind set 26: denoising-diffusion-gan)."""
    classes: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == target and isinstance(node.ctx, ast.Load):
            owner = _enclosing_class(node, parents)
            if owner is None or not any(last_name(base) == "Function" for base in owner.bases):
                return ""
            classes.add(owner.name)
    if not classes:
        return ""
    applies = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "apply" and isinstance(node.func.value, ast.Name) and node.func.value.id in classes
    ]  # fmt: skip
    evidence = ""
    for call in applies:
        owner = _enclosing_class(call, parents)
        if owner is not None and owner.name in classes:
            continue  # one such Function calling another (its backward): reached through it
        found = _cpu_side_twin(call, parents, text)
        if not found:
            return ""
        evidence = evidence or found
    return evidence


def _enclosing_class(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.ClassDef | None:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.ClassDef):
            return node
    return None


def _cpu_side_twin(call: ast.Call, parents: dict[ast.AST, ast.AST], text: str) -> str:
    """The `if` around the call whose test is `x.device.type == "cpu"` (the call in its
    `else`) or `!= "cpu"` (the call in its body), when the other side calls something."""
    child: ast.AST = call
    while child in parents:
        node = parents[child]
        if isinstance(node, (*_FUNCTIONS, ast.Lambda, ast.ClassDef, ast.Module)):
            return ""
        cpu = _tests_cpu(node.test) if isinstance(node, ast.If) else None
        if isinstance(node, ast.If) and cpu is not None:
            mine, other = (node.orelse, node.body) if cpu else (node.body, node.orelse)
            calls_twin = any(isinstance(n, ast.Call) for s in other for n in ast.walk(s)) and not any(isinstance(s, ast.Raise) for s in other)
            if calls_twin and any(_within(call, statement, parents) for statement in mine):
                return f"`{ast.get_source_segment(text, node.test) or ast.unparse(node.test)}` (line {node.lineno}) sends CPU tensors to a PyTorch twin"
        child = node
    return ""


_HOST_SOURCES = (".cpp", ".cc", ".cxx", ".c")
_CUDA_KEYWORDS = frozenset({"extra_cuda_cflags", "cuda_sources", "with_cuda"})


def host_only_loads(text: str) -> frozenset[int]:
    """Lines of `cpp_extension.load(...)` calls that compile C/C++ for the host alone: every
    source they name (as literals, or through a name the enclosing function or the module
    assigns) is a C/C++ file, none is CUDA, and no keyword asks for CUDA
    (`extra_cuda_cflags`, `with_cuda`). Such a build runs the host's compiler, not nvcc,
    and its ops take CPU tensors: on a TPU host they are a detour to the host, not a
    kernel to write (pyro's `cpp_spanning_tree`). A source the reading cannot name (a
    computed list) leaves the call out."""
    if "load" not in text:
        return frozenset()
    tree = parse_or_none(text)
    if tree is None:
        return frozenset()
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    lines: set[int] = set()
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or last_name(call.func) != "load":
            continue
        if any(k.arg in _CUDA_KEYWORDS for k in call.keywords):
            continue
        given = [k.value for k in call.keywords if k.arg == "sources"] or call.args[1:2]
        # `sources=[path]` with `path = os.path.join(here, "tree.cpp")` above: each name in
        # the argument is read as `_argument_sources` reads a bare one
        parts = [part for arg in given for part in (arg, *(n for n in ast.walk(arg) if isinstance(n, ast.Name) and n is not arg))]
        named = {source for part in parts for source in _argument_sources(part, call, parents, tree)}
        # a bare suffix (`n + ".cpp"`) names no file: sources built in code are not read
        if named and all(source.endswith(_HOST_SOURCES) and not source.rpartition("/")[2].startswith(".") for source in named):
            lines.add(call.lineno)
    return frozenset(lines)
