"""What a `try`/`except` keeps: whether an except clause keeps a fallback (an import's
failure caught around an import attempt, a missing CUDA's around a CUDA call with an
alternative in the handler), which packages a `try` attempts to import, and the flags an
import attempt sets. The walker guards the `try` body with the answer.

Split from conditions.py (what an `if` test says): a handler is read by what it catches
and what its body does, a test by what it asks."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase
from typing import NamedTuple

import libcst as cst

from tpucheck.analyze.pyparse import parse_or_none
from tpucheck.analyze.python import torch_names
from tpucheck.analyze.python.context import Names
from tpucheck.analyze.python.scope import dotted


def handler_keeps_fallback(handler: cst.ExceptHandler | cst.ExceptStarHandler, body: Sequence[cst.CSTNode], names: Names) -> bool:
    """An except clause keeps a fallback when it catches an import failure around an
    import (the module is written to load without the package: `except ImportError: pass`
    is that idiom), or a failure a missing CUDA raises (AttributeError, RuntimeError)
    around a CUDA call and its body provides the alternative: more than `pass` or a report
    (print, a warning, a log line). A handler that raises, or imports the same package
    under another name, keeps nothing optional; `except Exception:` or a bare `except:`
    around a training loop is error handling, not a fallback. Around a try of imports
    alone, a broad catch is an import's (what else can fail?) and reads as one: `try:
    import xformers / except: pass` is a module written to load without the package,
    exactly as with `except ImportError: pass` (audit O: mosaicml/diffusion's layers.py,
    whose caller selects SDPA when xformers is absent)."""
    guards = names.index.guards
    imports = tried_packages(body)
    if imports and (_catches(handler, guards.import_exceptions) or _broad_import_catch(handler, body, guards.broad_exceptions, names)):
        return not _reraises(handler.body.body, imports)
    if _calls_cuda(body, names) and _catches(handler, guards.call_exceptions):
        return _provides_alternative(handler.body.body, imports, names)
    return False


def placeholders(handler: cst.ExceptHandler | cst.ExceptStarHandler, names: Names) -> frozenset[str]:
    """The names an except clause binds to None when that is all it does (beside `pass`
    and reports): `except ImportError: RMSNorm, rms_norm_fn = None, None`. Such a handler
    keeps a fallback only if the module asks whether the name is there (`if rms_norm_fn is
    None:`); a placeholder no code tests is called as if the import had worked (audits O and
    Q: VideoMamba's Triton RMSNorm, FoundationPose's `common = None`). Empty when the
    handler does anything else."""
    bound: set[str] = set()
    for line in handler.body.body:
        if not isinstance(line, cst.SimpleStatementLine):
            return frozenset()
        for small in line.body:
            if _passes_or_reports(small, names):
                continue
            if not (isinstance(small, cst.Assign) and _all_none(small.value)):
                return frozenset()
            for target in small.targets:
                elements = target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else (target.target,)
                for element in elements:
                    value = element.value if isinstance(element, cst.BaseElement) else element
                    if not isinstance(value, cst.Name):
                        return frozenset()
                    bound.add(value.value)
    return frozenset(bound)


def _all_none(value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.Tuple, cst.List)):
        return all(_all_none(element.value) for element in value.elements)
    return isinstance(value, cst.Name) and value.value == "None"


class NameUses(NamedTuple):
    tested: frozenset[str]
    """Names whose presence the module tests on a path that goes on."""
    loaded: frozenset[str]
    """Names the module reads anywhere (a call, an argument, a return)."""
    type_only: frozenset[str] = frozenset()
    """Names the module reads only as the class of an `isinstance`/`issubclass` check
    (`isinstance(m, RoIPool)`): it never calls them."""


def name_uses(source: str) -> NameUses:
    """How the module uses names, for `placeholders`: `tested` holds the test of an `if`,
    `while` or conditional expression (`if fn is None:`, `fn if fn else ref`), an operand of
    `and`/`or`, a comparison with None, `callable(fn)`. An `assert fn is not None` and an
    `if fn is None: raise ...` only demand the import, so they are no test.

    Read with `ast` from the whole source: the walk's tree may have function bodies
    hollowed by the screen, and CPython's parser is the fast one."""
    tree = parse_or_none(source)
    if tree is None:
        return NameUses(frozenset(), frozenset())
    tested: set[str] = set()
    loaded: set[str] = set()
    reads: dict[str, int] = {}  # name -> how often the module reads it
    checks: dict[str, int] = {}  # name -> how often as an isinstance/issubclass class
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loaded.add(node.id)
                reads[node.id] = reads.get(node.id, 0) + 1
            continue
        demand = node.test if isinstance(node, ast.Assert) or (isinstance(node, ast.If) and node.body and isinstance(node.body[0], ast.Raise)) else None
        if demand is not None:  # read, never tested
            for inner in ast.walk(demand):
                if isinstance(inner, ast.Name):
                    loaded.add(inner.id)
                    reads[inner.id] = reads.get(inner.id, 0) + 1
                _count_checks(inner, checks)
            stack.extend(c for c in ast.iter_child_nodes(node) if c is not demand)
            continue
        _count_checks(node, checks)
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            _truth_names(node.test, tested)
        elif isinstance(node, ast.BoolOp):
            for value in node.values:
                _truth_names(value, tested)
        elif isinstance(node, ast.Compare):
            _truth_names(node, tested)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "callable" and node.args:
            _truth_names(node.args[0], tested)
        stack.extend(ast.iter_child_nodes(node))
    return NameUses(frozenset(tested), frozenset(loaded), frozenset(n for n, count in checks.items() if reads.get(n) == count))


def _count_checks(node: ast.AST, checks: dict[str, int]) -> None:
    """Count the names an `isinstance`/`issubclass` call reads as its classes."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
        classes = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        for name in (c.id for c in classes if isinstance(c, ast.Name)):
            checks[name] = checks.get(name, 0) + 1


def _truth_names(test: ast.expr, found: set[str]) -> None:
    if isinstance(test, ast.Name):
        found.add(test.id)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        _truth_names(test.operand, found)
    elif isinstance(test, ast.BoolOp):
        for value in test.values:
            _truth_names(value, found)
    elif isinstance(test, ast.Compare) and any(isinstance(c, ast.Constant) and c.value is None for c in test.comparators):
        _truth_names(test.left, found)


def _reraises(statements: Sequence[cst.CSTNode], imported: frozenset[str]) -> bool:
    """A handler that raises, or imports a package the `try` imported under another name
    (`from flash_attn import flash_attn_varlen_func as flash_attn_unpadded_func`), when
    that leaves nothing the try imported out: `try: import xformers.ops; from transformers
    import LlamaForCausalLM / except ImportError: from transformers import LlamaForCausalLM`
    imports transformers again but does without xformers, which is the fallback (audit
    AO: Otter in Multi-Modality-Arena). The standard library is never what fails."""
    again: set[str] = set()
    for statement in statements:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Raise):
                return True
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                again |= top_packages([small]) & imported
    return bool(again) and not (imported - again - _STDLIB)


_STDLIB = frozenset(sys.stdlib_module_names)


def _broad_import_catch(handler: cst.ExceptHandler | cst.ExceptStarHandler, body: Sequence[cst.CSTNode], broad: frozenset[str], names: Names) -> bool:
    """A bare `except:` or `except Exception:` around imports, flag assignments and reports
    only (`print('xformers is installed')`: a report fails nothing an import would not)."""
    if handler.type is not None and not _catches(handler, broad):
        return False
    for statement in body:
        if isinstance(statement, cst.Try) and _swallows(statement, broad, names):
            continue  # a probe of its own (`try: HAS_X = xformers._has_cpp_library / except: pass`)
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)) or _passes_or_reports(small, names):
                continue
            if isinstance(small, cst.Assign) and _bound_plainly(small.value):
                continue  # a flag (`HAS_X = True`), a constant, or what was just imported rebound
            return False
    return True


_PLAIN = (cst.Name, cst.SimpleString, cst.Integer)


def _bound_plainly(value: cst.BaseExpression) -> bool:
    """A name or a constant, or a tuple of them (`flash_attn_func, pad_input =
    _flash_attn_func, _pad_input`: the names just imported, rebound; audit BE: Sa2VA's
    InternLM2): binding fails nothing an import would not."""
    if isinstance(value, cst.Tuple):
        return bool(value.elements) and all(isinstance(e, cst.Element) and isinstance(e.value, _PLAIN) for e in value.elements)
    return isinstance(value, _PLAIN)


def swallows(statement: cst.Try | cst.TryStar, names: Names) -> bool:
    """A try whose handler catches everything and only passes or reports: a `raise` in its
    body ends there, as a `return` would (`try: if device != "cuda": raise ValueError(...)
    ... except Exception as e: print(e)`: audit AY, VoxCPM's `optimize()`)."""
    return isinstance(statement, cst.Try) and _swallows(statement, names.index.guards.broad_exceptions, names)


def _swallows(statement: cst.Try, broad: frozenset[str], names: Names) -> bool:
    """A nested try that catches everything (a bare `except:` or `except Exception:`) and
    only passes or reports: nothing in it reaches the outer handler, so it is a probe (of
    the package's version, of its compiled library), not code the outer catch guards."""
    return any(
        (handler.type is None or _catches(handler, broad))
        and all(isinstance(line, cst.SimpleStatementLine) and all(_passes_or_reports(small, names) for small in line.body) for line in handler.body.body)
        for handler in statement.handlers
    )


def _passes_or_reports(small: cst.BaseSmallStatement, names: Names) -> bool:
    """`pass`, or a report (print, a warning, a log line): a statement that fails nothing."""
    return isinstance(small, cst.Pass) or (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and quiet_call(small.value, names))


def _catches(handler: cst.ExceptHandler | cst.ExceptStarHandler, exceptions: frozenset[str]) -> bool:
    if handler.type is None:
        return False  # a bare except catches everything: no evidence of what it guards
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    for item in types:
        expression = item.value if isinstance(item, cst.BaseElement) else item
        parts = dotted(expression)
        if parts is not None and parts[-1] in exceptions:
            return True
    return False


def _calls_cuda(body: Sequence[cst.CSTNode], names: Names) -> bool:
    """Whether the statements call into CUDA: `torch.cuda.*` or a CUDA-only package's API."""
    stack: list[cst.CSTNode] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            qualified = names.qualified(node.func) or ""
            if qualified.startswith("torch.cuda.") or (qualified and any(True for _ in names.index.imports.lookup(qualified.split(".", 1)[0]))):
                return True
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        stack.extend(node.children)
    return False


def _provides_alternative(statements: Sequence[cst.CSTNode], imported: frozenset[str], names: Names) -> bool:
    for statement in statements:
        smalls = statement.body if isinstance(statement, cst.SimpleStatementLine) else (statement,)
        for small in smalls:
            if isinstance(small, (cst.Pass, cst.Raise)):
                continue
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)):
                continue
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and quiet_call(small.value, names):
                continue
            # the same package again, under another name, is no other way on
            return not (isinstance(small, (cst.Import, cst.ImportFrom)) and top_packages([small]) & imported)
    return False


def quiet_call(call: cst.Call, names: Names) -> bool:
    """print, warnings.warn, logging.*, logger.warning(...): a report, no alternative."""
    guards = names.index.guards
    qualified = names.qualified(call.func)
    if qualified is not None and any(fnmatchcase(qualified.removeprefix("builtins."), p) for p in guards.quiet_calls):
        return True
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in guards.quiet_methods


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


def tried_packages(body: Sequence[cst.CSTNode]) -> frozenset[str]:
    """The packages a `try` body imports, those under an `if` in it included: DINOv2's
    `try: if XFORMERS_ENABLED: from xformers.ops import ... / else: raise ImportError /
    except ImportError: XFORMERS_AVAILABLE = False` (copied into many repositories) is an
    import attempt with a switch in front of it. A loop, a `with` or a definition in the
    body is other code, not part of the attempt."""
    found = set(top_packages(body))
    for statement in body:
        branch: cst.CSTNode | None = statement
        while isinstance(branch, cst.If):
            found |= tried_packages(branch.body.body)
            if isinstance(branch.orelse, cst.Else):
                found |= tried_packages(branch.orelse.body.body)
            branch = branch.orelse
    return frozenset(found)


def import_flags(statement: cst.Try | cst.TryStar, names: Names) -> set[str]:
    """Names a try/except sets from an import attempt: `HAS_APEX = True` in the body and
    `= False` in an import handler, or `flash_fn = None` in the handler (the fallback symbol
    a later `if flash_fn is not None:` tests)."""
    guards = names.index.guards
    if not tried_packages(statement.body.body):
        return set()
    found: set[str] = set()
    for handler in statement.handlers:
        if not (_catches(handler, guards.import_exceptions) or _broad_import_catch(handler, statement.body.body, guards.broad_exceptions, names)):
            continue
        for line in handler.body.body:
            for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign) and isinstance(small.value, cst.Name) and small.value.value in ("False", "None"):
                    found.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
    return found


_PROBE_EXCEPTIONS = frozenset({"AttributeError", "ImportError", "ModuleNotFoundError"})


def version_probe(statement: cst.Try | cst.TryStar, names: Names) -> cst.ExceptHandler | cst.ExceptStarHandler | None:
    """The handler of a try that only reads PyTorch names (`nan_to_num =
    torch.nan_to_num`, `from torch.amp import autocast`, `import torch.linalg`), when it
    catches their absence (AttributeError, ImportError) and every name exists in the
    supported torch (torch_names.py): that handler is an old torch's stand-in and never
    runs (audit BE: DiffMemorize's `nansum` nan_to_num, copied from StyleGAN2-ADA). A name
    the table lacks (`torch._six`, gone since 2.0) keeps the handler live."""
    probed: list[str] = []
    for line in statement.body.body:
        if not isinstance(line, cst.SimpleStatementLine):
            return None
        for small in line.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, (cst.Attribute, cst.Name)):
                qualified = names.qualified(small.value)
                if qualified is None or not qualified.startswith("torch."):
                    return None
                probed.append(qualified)
            elif isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None and not isinstance(small.names, cst.ImportStar):
                module = ".".join(dotted(small.module) or ())
                if module != "torch" and not module.startswith("torch."):
                    return None
                probed.extend(f"{module}.{alias.name.value}" for alias in small.names if isinstance(alias.name, cst.Name))
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    module = ".".join(dotted(alias.name) or ())
                    if not module.startswith("torch."):
                        return None
                    probed.append(module)
            else:
                return None
    handler = next((h for h in statement.handlers if _catches(h, _PROBE_EXCEPTIONS)), None)
    if handler is None or not probed:
        return None
    known = torch_names.known()
    return handler if all(name in known for name in probed) else None
