"""A file's import facts: what the whole-tree import graph (`reachability.py`) needs to know
of one Python file, as a pure function of its text.

Because the facts depend on nothing but the text, they are computed where the file is
analyzed (in a worker, beside its findings) and cached with the file's entry
(`analyze/cache.py`): a rescan rebuilds the graph from cached facts without reading a
single unchanged file again.

The scan of imports is line-based on purpose: it reads each file once, costs a regular
expression per line, and errs towards "required" (an import at column 0 always counts,
even in a docstring), which only ever keeps a finding at its full weight.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from fnmatch import fnmatchcase

from tpucheck.analyze.checks import availability_checks
from tpucheck.analyze.dispatch import jit_facts
from tpucheck.analyze.registry import registered_components
from tpucheck.analyze.version_tests import version_test
from tpucheck.discover.sourcetext import SourceTextError, decode
from tpucheck.findings import Build, Import, ImportFacts

__all__ = ["Build", "Import", "ImportFacts", "declared_options", "facts_of_bytes", "import_facts", "scan_imports"]

_IMPORT = re.compile(r"^([ \t]*)(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(.*)|import[ \t]+(.*))$")
_NAME = re.compile(r"[A-Za-z_][\w.]*")


def import_facts(
    text: str,
    training_markers: tuple[str, ...] = (),
    availability_calls: tuple[str, ...] = (),
    torch_versions: tuple[str, ...] = (),
    quiet_calls: tuple[str, ...] = (),
    model_markers: tuple[str, ...] = ("torch",),
) -> ImportFacts:
    workloads: tuple[str, ...] = ()
    if any(marker in text for marker in model_markers):
        workloads = ("training", "inference") if any(marker in text for marker in training_markers) else ("inference",)
    jit_builds, jit_loaders = jit_facts(text)
    builds = tuple(extension_builds(text)) if "Extension" in text else ()
    found = scan_imports(text, torch_versions, quiet_calls)
    live = tuple(i for i in found if not i.dead)
    dead = tuple(i for i in found if i.dead)
    return ImportFacts(live, builds, workloads, declared_options(text), jit_builds, jit_loaders, availability_checks(text, availability_calls), dead, registered_components(text))


_DEFAULT = r"""(True|False|None|-?\d+(?:\.\d+)?|"[^"\n]*"|'[^'\n]*')"""
_FIELD = re.compile(r"^[ \t]+([A-Za-z_]\w*)[ \t]*:[^=\n]*=[ \t]*(?:field\(\s*default\s*=\s*)?" + _DEFAULT + r"[ \t]*(?=[,)#\n]|$)", re.MULTILINE)
_FLAG = re.compile(r"add_argument\(\s*(?:[\"'][^\"']*[\"']\s*,\s*)?[\"']--([\w-]+)[\"'][^)]*?\baction\s*=\s*[\"']store_(true|false)[\"']")
_ARGUMENT = re.compile(r"add_argument\(\s*(?:[\"'][^\"']*[\"']\s*,\s*)?[\"']--([\w-]+)[\"'](?:(?!\baction\s*=)[^)])*?\bdefault\s*=\s*" + _DEFAULT + r"\s*[,)]")
_CONSTANT = re.compile(r"^([A-Za-z_]\w*)[ \t]*=[ \t]*(True|False|None)[ \t]*(?:#.*)?$", re.MULTILINE)
_CONFIG_KEY = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\.([A-Za-z_]\w*)[ \t]*=[ \t]*" + _DEFAULT + r"[ \t]*(?:#.*)?$", re.MULTILINE)
"""A module-level assignment of a literal to a node of a config tree (`_C.MODEL.MORE_POS =
False`, `model.box_pooler.pooler_type = "ROIPool"`)."""
_CLICK = re.compile(r"click\.option\(\s*(?:[\"']-\w[\"']\s*,\s*)?[\"']--([\w-]+)(/--[\w-]+)?[\"']")
_CLICK_DEFAULT = re.compile(r"\bdefault\s*=\s*" + _DEFAULT + r"\s*[,)]")
OVERRIDE = "="
"""Marks a name `declared_options` read from a lower-case config assignment: a value the
project sets, which joins a declared setting's values but declares nothing by itself
(`torch.backends.cudnn.enabled = False` is no option of the project's)."""


def declared_options(text: str) -> tuple[tuple[str, str], ...]:
    """The settings a module declares, each with its default as literal code (`False`,
    `16`, `'nf4'`), in order: annotated fields of a config class (`use_qlora: bool = False`,
    `bits: int = 16`, also through `field(default=...)`), argparse `store_true`/`store_false`
    flags and options with a literal `default=`, click options (`is_flag=True`, `default=`),
    module-level `USE_X = False` constants, and the keys of a config tree set at module
    level (`_C.MODEL.MORE_POS = False`, also as `more_pos`; a lower-case key only as an
    `OVERRIDE`). Line-based like the imports: a declaration the patterns miss only leaves a
    test of it undecided, which keeps its findings at full weight."""
    found: list[tuple[str, str]] = []
    if ":" in text:
        found.extend((m.group(1), canonical_literal(m.group(2))) for m in _FIELD.finditer(text))
    if "add_argument" in text:
        found.extend((m.group(1).replace("-", "_"), "True" if m.group(2) == "false" else "False") for m in _FLAG.finditer(text))
        found.extend((m.group(1).replace("-", "_"), canonical_literal(m.group(2))) for m in _ARGUMENT.finditer(text))
    found.extend((m.group(1), m.group(2)) for m in _CONSTANT.finditer(text))
    if "click" in text:
        found.extend(_click_options(text))
    if "." in text:
        for m in _CONFIG_KEY.finditer(text):
            key, default = m.group(1), canonical_literal(m.group(2))
            if key.isupper():  # yacs: `_C.MODEL.MORE_POS` is read as `cfg...MORE_POS` or `more_pos`
                found.extend(((key, default), (key.lower(), default)))
            else:
                found.append((OVERRIDE + key, default))
    return tuple(found)


def _click_options(text: str) -> Iterator[tuple[str, str]]:
    """`@click.option("--sync-bn", is_flag=True, default=False)`: a flag is off unless its
    default says otherwise; an option with a literal `default=` has that default. The
    arguments are read up to the next decorator or `def`."""
    for m in _CLICK.finditer(text):
        rest = text[m.end() : m.end() + 600]
        stop = min((i for i in (rest.find("\n@"), rest.find("\ndef "), rest.find("click.option(")) if i >= 0), default=len(rest))
        rest = rest[:stop]
        default = _CLICK_DEFAULT.search(rest)
        name = m.group(1).replace("-", "_")
        if default is not None:
            yield name, canonical_literal(default.group(1))
        elif re.search(r"\bis_flag\s*=\s*True\b", rest) or m.group(2):
            yield name, "False"


def canonical_literal(code: str) -> str:
    """A literal as `options.literal_code` writes it: strings by their repr, so `"nf4"`
    and `'nf4'` are one default."""
    return repr(code[1:-1]) if code[:1] in ("'", '"') else code


def facts_of_bytes(
    data: bytes,
    training_markers: tuple[str, ...] = (),
    availability_calls: tuple[str, ...] = (),
    torch_versions: tuple[str, ...] = (),
    quiet_calls: tuple[str, ...] = (),
    model_markers: tuple[str, ...] = ("torch",),
) -> ImportFacts:
    """The facts of a file's bytes: decoded as the analysis decodes Python, or, where that
    fails (a bad encoding, a NUL byte), as UTF-8 with replacement: the graph reads what it can."""
    try:
        text = decode(data, python=True)
    except SourceTextError:
        text = data.decode("utf-8", "replace")
    return import_facts(text, training_markers, availability_calls, torch_versions, quiet_calls, model_markers)


_BLOCK = re.compile(r"^(async[ \t]+def|def|class|try|except|if|elif|else|for|while|with|async[ \t]+with|async[ \t]+for|finally|match|case)\b")
_OPTIONAL_BLOCKS = frozenset({"def", "async def", "try", "except", "cuda-if"})
"""Imports in these may not run when the module loads: a function body runs when called,
a `try` is there because the import may fail. `if`/`else` are not among them: a platform
branch (`if torch.version.hip: ... else: import ext_cuda`) is the main path on its
platform. `if TYPE_CHECKING:` is, since its imports never run, and so is the CUDA side of
a test that asks whether CUDA is there (`cuda-if`: a host without CUDA never runs it)."""


_CHOICE_BLOCKS = frozenset({"try", "except", "if", "elif", "else", "cuda-if"})
_CUDA_TEST = re.compile(r"^(?:el)?if[ \t(]+(?P<not>not[ \t(]+)?(?:[\w.]*\.)?cuda\.is_available\(\)[ \t)]*(?:and\b.*)?:$")
"""An `if`/`elif` whose condition is a CUDA availability query, alone or first in an
`and` (`if torch.cuda.is_available():`, `if not torch.cuda.is_available():`). An `or`
lets a host without CUDA in, so it is no such test."""
"""Blocks that choose whether an import runs: a conditional import under one of them is a
path picked where the code runs (`Import.guarded`)."""
_IMPORT_BY_NAME = re.compile(r"\b(?:importlib\.)?import_module\(\s*['\"]([A-Za-z_][\w.]*)['\"]\s*[,)]")
_REBIND = re.compile(r"^([A-Za-z_]\w*)\s*=\s*(?!None\b)[A-Za-z_][\w.]*\s*\(")
_PLACEHOLDER = re.compile(r"^([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=\s*(?:None|object)(?:\s*,\s*(?:None|object))*\s*$")
"""A handler statement binding imported names to None or `object` (`A, b = None, None`)."""

_GIVES_UP = re.compile(r"^(?:raise\b|(?:sys\.)?exit\s*\(|quit\s*\()")
"""A handler statement that stops the module (`raise ImportError("install it")`,
`sys.exit(1)`): the import is required, the handler only says so."""


_CALLEE = re.compile(r"^([A-Za-z_][\w.]*)\s*\(")


def _reports(statement: str, quiet: tuple[str, ...]) -> bool:
    """A statement that only reports or does nothing: `pass`, or a call `guards.quiet_calls`
    names (`print`, `logging.*`), or of one of `guards.quiet_methods` (given as `.warning`:
    `logger.warning(...)`). An except clause of only these puts nothing in the failed
    import's place, as the Python analyzer reads it (excepts.quiet_call)."""
    if statement == "pass" or statement.startswith("pass "):
        return True
    found = _CALLEE.match(statement)
    if found is None:
        return False
    callee = found.group(1)
    return any(callee.endswith(p) and "." in callee if p.startswith(".") else fnmatchcase(callee, p) for p in quiet)


def _bound_names(names: str | None, plain: str | None) -> set[str]:
    """The names an import statement binds: `as` names, else the last (from) or first
    (plain) component."""
    bound = set()
    for piece in (names if names is not None else plain or "").strip("() \\").split(","):
        target, _, alias = piece.partition(" as ")
        target, alias = target.strip(" ()\\"), alias.strip(" ()\\")
        if alias:
            bound.add(alias)
        elif target:
            bound.add(target.split(".")[0] if names is None else target)
    return bound


def scan_imports(text: str, torch_versions: tuple[str, ...] = (), quiet_calls: tuple[str, ...] = ()) -> list[Import]:
    """Every `import` statement's targets; `from m import a, b` gives `m.a`, `m.b` (a
    name that is not a module falls back to `m` when resolved).

    An import made optional only by its `try` is required after all when the `except`
    clause binds the same name to something a call makes (`_C = build_and_load()`, a
    just-in-time build of the same extension): the handler provides the module another
    way, not a path without it; or when the handler raises or exits (audit Q:
    `except ImportError: logging.warning(...); raise ImportError(...)`). A handler that
    warns, or binds the name to None, keeps the import optional."""
    out: list[Import] = []
    placeholders: list[tuple[list[int], set[str]]] = []  # a try's imports and the names its handler binds to None
    tries: dict[int, tuple[list[int], set[str]]] = {}  # try indent -> (imports only it makes optional, names they bind)
    handler: tuple[int, list[int], set[str]] | None = None  # the except clause being read
    blocks: list[tuple[int, str]] = []  # (indent, kind) of the enclosing block headers
    depth = 0  # open brackets carried over from earlier lines
    in_string: str | None = None
    pending: list[str] | None = None  # an import whose names continue on the next lines
    pending_conditional = pending_top = pending_guarded = pending_tested = False
    pending_try: int | None = None
    pending_branch = False
    cuda_else: set[int] = set()  # indents of an `if not <CUDA query>:` whose `else` is the CUDA side
    reports_only = False  # the except clause being read has only reported so far
    chains: dict[int, bool] = {}  # indent -> whether an if-chain's decided version test was taken
    dead: dict[int, str] = {}  # indent of a block no target torch enters -> "line\ttest\twhy"
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].rstrip() if "#" in raw and in_string is None else raw.rstrip()
        if in_string is not None:
            if line.count(in_string) % 2:
                in_string = None
            continue
        stripped = line.lstrip()
        if not stripped:
            continue
        starts_statement = depth == 0
        depth = max(0, depth + stripped.count("(") + stripped.count("[") + stripped.count("{") - stripped.count(")") - stripped.count("]") - stripped.count("}"))
        for quote in ('"""', "'''"):
            if stripped.count(quote) % 2:
                in_string = quote
                break
        if not starts_statement:
            if pending is not None:
                pending[2] += " " + stripped
                if depth == 0:
                    made = _targets(
                        pending[0], pending[1], pending[2], None, conditional=pending_conditional, top=pending_top, guarded=pending_guarded, branch=pending_branch, cuda_test=pending_tested
                    )
                    _in_try(tries, pending_try, made, len(out), _bound_names(pending[2], None))
                    out.extend(made)
                    pending = None
            continue
        indent = len(line) - len(stripped)
        while blocks and blocks[-1][0] >= indent:
            blocks.pop()
        for closed in [i for i in dead if i >= indent]:
            del dead[closed]
        for closed in [i for i in chains if i > indent]:
            del chains[closed]
        if handler is not None:
            if indent <= handler[0]:
                if reports_only:  # `except ImportError: print("... not compiled")`: nothing in its place
                    placeholders.append((handler[1], set(handler[2])))
                handler = None
            elif not _reports(stripped, quiet_calls):
                reports_only = False
            if handler is None:
                pass
            elif ((rebound := _REBIND.match(stripped)) is not None and rebound.group(1) in handler[2]) or (
                _GIVES_UP.match(stripped) is not None and blocks and blocks[-1] == (handler[0], "except")
            ):
                for index in handler[1]:
                    if not out[index].cuda_test:  # a host without CUDA never gets to the try
                        out[index] = Import(out[index].level, out[index].module, False, out[index].top)  # required: guarded no more
            elif (held := _PLACEHOLDER.match(stripped)) is not None and (nulled := {n.strip() for n in held.group(1).split(",")} & handler[2]):
                placeholders.append((handler[1], nulled))
        header = _BLOCK.match(stripped)
        if header is not None:
            kind = " ".join(header.group(1).split())
            if kind == "if" and "TYPE_CHECKING" in stripped:
                kind = "try"
            if torch_versions and (evidence := _version_side(kind, stripped, indent, chains, torch_versions)):
                dead[indent] = f"{number}\t{evidence}"
            elif kind not in ("if", "elif", "else"):
                chains.pop(indent, None)
            kind = _cuda_side(kind, stripped, indent, cuda_else)
            if kind == "try":
                tries[indent] = ([], set())
            elif kind == "except" and indent in tries and ("ImportError" in stripped or "ModuleNotFoundError" in stripped or stripped.rstrip(":").strip() == "except"):
                handler = (indent, *tries[indent])
                reports_only = True
            blocks.append((indent, kind))
            continue
        chains.pop(indent, None)  # a statement at this indent ends an if-chain there
        if "import" not in stripped:
            continue
        if dead:
            out.extend(Import(i.level, i.module, False, dead=dead[min(dead)]) for i in scan_imports(stripped))
            continue
        match = _IMPORT.match(stripped)
        if match is None:
            # `importlib.import_module("fused_layer_norm_cuda")`: an import by name (audit S:
            # apex loads two of its extensions so, inside functions and a `try`)
            conditional = any(kind in _OPTIONAL_BLOCKS for _, kind in blocks)
            guarded = conditional and any(kind in _CHOICE_BLOCKS for _, kind in blocks)
            tested = any(kind == "cuda-if" for _, kind in blocks)
            made = [Import(0, name, conditional, not blocks, guarded, _branch(blocks, conditional), cuda_test=tested) for name in _IMPORT_BY_NAME.findall(stripped)]
            # `ext = importlib.import_module("ext")` in a try: the handler may bind `ext`
            # again (build it from its CUDA sources), which makes the import required
            bound = _REBIND.match(stripped)
            in_try = blocks[-1][0] if blocks and blocks[-1][1] == "try" and not any(kind in _OPTIONAL_BLOCKS for _, kind in blocks[:-1]) else None
            _in_try(tries, in_try, made, len(out), {bound.group(1)} if bound is not None else set())
            out.extend(made)
            continue
        _, dots, base, names, plain = match.groups()
        conditional = any(kind in _OPTIONAL_BLOCKS for _, kind in blocks)
        guarded = conditional and any(kind in _CHOICE_BLOCKS for _, kind in blocks)
        branch = _branch(blocks, conditional)
        tested = any(kind == "cuda-if" for _, kind in blocks)
        # the try whose handler decides this import, if it sits directly in one
        in_try = blocks[-1][0] if blocks and blocks[-1][1] == "try" and not any(kind in _OPTIONAL_BLOCKS for _, kind in blocks[:-1]) else None
        if depth and names is not None:
            pending, pending_conditional, pending_top, pending_guarded, pending_try, pending_branch = [dots, base, names], conditional, not blocks, guarded, in_try, branch
            pending_tested = tested
            continue
        made = _targets(dots, base, names, plain, conditional=conditional, top=not blocks, guarded=guarded, branch=branch, cuda_test=tested)
        _in_try(tries, in_try, made, len(out), _bound_names(names, plain))
        out.extend(made)
    if handler is not None and reports_only:
        placeholders.append((handler[1], set(handler[2])))
    return _placeholders(out, placeholders, text)


def _in_try(tries: dict[int, tuple[list[int], set[str]]], indent: int | None, made: list[Import], at: int, bound: set[str]) -> None:
    """Note the imports a `try` at `indent` makes optional (they start at `at` in the
    output), and the names they bind, for its handler to read."""
    if indent is None or not made:
        return
    indices, names = tries.setdefault(indent, ([], set()))
    indices.extend(range(at, at + len(made)))
    names.update(bound)


def _placeholders(out: list[Import], placeholders: list[tuple[list[int], set[str]]], text: str) -> list[Import]:
    """Mark the guarded imports of a try whose handler binds their names to None or
    `object` when the module never tests one of those names (`if fused is None:`, `if not
    fused:`, `callable(fused)`: CamLiFlow's `if cpp_impl and callable(_knn_cuda) and
    x.is_cuda:`, audit AS): a tested placeholder is a fallback the module takes, an untested one a call
    that fails where it stands (the Python analyzer's `guard.placeholder`, read here from
    the text alone)."""
    for indices, names in placeholders:
        if any(re.search(rf"\bif\s+(?:not\s+)?{re.escape(name)}\b|\b{re.escape(name)}\s+is\s+(?:not\s+)?None\b|\bcallable\(\s*{re.escape(name)}\s*\)", text) for name in names):
            continue
        for index in indices:
            if out[index].guarded:
                out[index] = replace(out[index], placeholder=True)
    return out


def _cuda_side(kind: str, header: str, indent: int, cuda_else: set[int]) -> str:
    """`cuda-if` for the side of a test taken only where CUDA is there: the body of `if
    <CUDA query>:`, or the `else` of `if not <CUDA query>:`; else the kind unchanged."""
    if kind == "else":
        return "cuda-if" if indent in cuda_else else kind
    if kind != "elif":
        cuda_else.discard(indent)  # a new statement at this indent: no `else` of ours follows
    if kind not in ("if", "elif"):
        return kind
    test = _CUDA_TEST.match(" ".join(header.split()))
    if test is None or " or " in header:
        cuda_else.discard(indent)
        return kind
    if test.group("not"):
        if kind == "if":
            cuda_else.add(indent)
        return kind
    return "cuda-if"


def _version_side(kind: str, header: str, indent: int, chains: dict[int, bool], versions: tuple[str, ...]) -> str:
    """The evidence when this side of an if-chain is one no target torch takes: an `if` or
    `elif` whose version test is false on them all, or an `elif`/`else` after one that is
    true; "" otherwise. `chains` keeps, per indent, whether a decided test was taken."""
    if kind == "else" or (kind == "elif" and chains.get(indent)):
        return "the side after a torch version test\tevery target release passes" if chains.get(indent) else ""
    if kind not in ("if", "elif"):
        return ""
    if kind == "if":
        chains.pop(indent, None)
    elif indent not in chains:
        return ""  # an undecided test came before: this side may run
    test = header[len(kind) :].strip().rstrip(":").strip()
    value = version_test(test, versions)
    if value is None:
        chains.pop(indent, None)
        return ""
    chains[indent] = value
    return "" if value else f"`{test}`\tfalse on torch {', '.join(versions)}"


def _branch(blocks: list[tuple[int, str]], conditional: bool) -> bool:
    """Under an `if`/`elif`/`else` and nothing that makes the import conditional."""
    return not conditional and any(kind in ("if", "elif", "else") for _, kind in blocks)


def _targets(
    dots: str, base: str, names: str | None, plain: str | None, *, conditional: bool, top: bool = False, guarded: bool = False, branch: bool = False, cuda_test: bool = False
) -> list[Import]:
    rest = names if names is not None else plain or ""
    out: list[Import] = []
    for piece in rest.strip("() \\").split(","):
        target = piece.split(" as ")[0].strip(" ()\\")
        if target == "*" and base and plain is None:
            # `from .dense_heads import *`: the module itself is imported (mmdet's
            # `models/__init__.py` loads every head package so)
            out.append(Import(len(dots), base, conditional, top, guarded, branch, cuda_test=cuda_test))
            continue
        if not _NAME.fullmatch(target):
            continue  # a name continued on a line this scan does not join
        if plain is not None:
            out.append(Import(0, target, conditional, top, guarded, branch, cuda_test=cuda_test))
        else:
            out.append(Import(len(dots), f"{base}.{target}" if base else target, conditional, top, guarded, branch, cuda_test=cuda_test))
    return out


_EXTENSION_KINDS = ("CUDAExtension", "CppExtension", "Extension")
_EXTENSION_ALIAS = re.compile(r"^\s*(\w+)\s*=\s*(?:[\w.]*\.)?(?:CUDAExtension|CppExtension)\s*$", re.MULTILINE)
_SOURCE = re.compile(r"['\"]([^'\"\n]+\.(?:cu|cuh))['\"]")
_JOIN = r"\b(?:os\.path|osp|path)\.join\("
"""`os.path.join(`, however spelt (`from os import path`, `import os.path as osp`)."""
_PATH_JOIN = re.compile(r"(?:\b(\w+)\s*=\s*)?" + _JOIN + r"([^()]*)\)")
_LISTED_HEAD = re.compile(r"\s*(?:" + _JOIN + r"\s*)?(\w+)")
_LISTING = re.compile(r"\b(?:glob|iglob|rglob|listdir|scandir|walk)\s*\(")
"""A call that lists a folder's files: a build that globs its sources takes them so."""
_LITERAL = re.compile(r"\s*['\"]([\w.\-]+(?:/[\w.\-]+)*)/?['\"]\s*")


def _extension_call(kinds: Iterable[str]) -> re.Pattern[str]:
    names = "|".join(re.escape(k) for k in kinds)
    return re.compile(rf"\b(?:{names})\s*\(\s*(?:name\s*=\s*)?['\"]([\w.]+)['\"]")


def _source_folders(text: str) -> list[str]:
    """Folders a build file names with `os.path.join(here, "pkg", "csrc")` (or one literal
    holding the path, `os.path.join(here, "pkg/ops/src")`: ODISE's Mask2Former): where a
    build that globs its sources (`glob(os.path.join(extensions_dir, "*.cu"))`) takes them.
    A folder is written `pkg/csrc/`, the trailing slash saying "every source under it"."""
    folders = []
    listed = _listed_names(text)
    for join in _PATH_JOIN.finditer(text):
        parts = join.group(2).split(",")
        literals: list[str] = []
        for part in parts[1:]:
            found = _LITERAL.fullmatch(part)
            if found is None or "*" in found.group(1) or "." in found.group(1).strip("."):
                break
            literals.append(found.group(1))
        if not literals or len(literals) != len(parts) - 1:
            continue
        # only a folder some listing reads (`glob(os.path.join(extensions_dir, "*.cu"))`):
        # an include root joined for `include_dirs` (a CUTLASS checkout) holds no sources
        line_start = text.rfind("\n", 0, join.start()) + 1
        if join.group(1) in listed or _LISTING.search(text, line_start, join.start()):
            folders.append("/".join(literals) + "/")
    return sorted(set(folders))


def _listed_names(text: str) -> set[str]:
    """Names a listing call reads first (`glob.glob(os.path.join(extensions_dir, "*.cu"))`,
    `os.listdir(src_dir)`): the folders a build globs its sources from."""
    names = set()
    for call in _LISTING.finditer(text):
        head = text[call.end() : call.end() + 200]
        found = _LISTED_HEAD.match(head)
        if found is not None:
            names.add(found.group(1))
    return names


def extension_builds(text: str) -> list[Build]:
    """The extensions this file builds and the CUDA sources each lists, as written. A build
    class bound to a name (`extension = CUDAExtension if cuda else CppExtension` written as
    `extension = CUDAExtension`) builds too; a build that lists no source takes the folders
    the file joins (it globs them)."""
    kinds = (*_EXTENSION_KINDS, *_EXTENSION_ALIAS.findall(text))
    calls = list(_extension_call(kinds).finditer(text))
    builds = []
    for call in calls:
        depth, end = 0, text.rfind("(", call.start(), call.end())
        while end < len(text):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                break
            end += 1
        written = call.group(1)
        name = written.rpartition(".")[2]
        # `CUDAExtension("sam2._C", srcs)`: the one build of the file takes the sources the
        # file lists elsewhere (`srcs = ["sam2/csrc/connected_components.cu"]`).
        sources = _SOURCE.findall(text, call.end(), end) or (_SOURCE.findall(text) if len(calls) == 1 else [])
        sources = [source for source in sources if "*" not in source]  # a glob's pattern, not a source
        if not sources and len(calls) == 1:
            sources = _source_folders(text)
        builds.append(Build(name, tuple(sources), written.partition(".")[0] if "." in written else ""))
    return builds
