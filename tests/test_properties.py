"""Properties that must hold for every input, checked on generated ones.

* `analyze_text` never raises, whatever the text and whatever kind of file it claims to
  be: it returns matches, or an error entry with a one-line reason, and never an
  `internal-error` (that kind means an analyzer raised: a bug the catch-all hid).
* A CUDA call wrapped in any nesting of statement forms (`match`, `except*`, PEP 695,
  parenthesized `with`, walrus, async, global/nonlocal, arbitrary decorators) is found
  exactly once, where it is.
* A scan's JSON is the same bytes whatever the number of workers and whatever order the
  file system lists directories in.

Every test runs with `derandomize=True`: the examples are derived from the test itself,
so CI sees the same inputs on every run and a failure reproduces locally; the example
database is off so nothing is written into the repository. Budgets are set so the whole
module stays well under a minute.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import hypothesmith
import libcst
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tpucheck import engine
from tpucheck.analyze import AnalysisContext, analyze_text, build_context
from tpucheck.engine import ScanOptions, scan
from tpucheck.findings import FileResult
from tpucheck.report import json_report
from tpucheck.ruleset import load_ruleset
from tpucheck.ruleset.model import Ruleset

RULESET: Ruleset = load_ruleset()
CONTEXT: AnalysisContext = build_context(RULESET, prefilter=False)
"""The real rules with the prefilter off, so the parser and the walker really run."""


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


KINDS: list[tuple[str, tuple[str, ...]]] = [
    ("mod.py", ("python",)),
    ("nb.ipynb", ("notebook",)),
    ("requirements.txt", ("manifest",)),
    ("pyproject.toml", ("manifest",)),
    ("setup.py", ("python", "manifest")),
    ("setup.cfg", ("manifest",)),
    ("environment.yml", ("manifest",)),
    ("kernel.cu", ("native",)),
    ("Dockerfile", ("other",)),
]


def _assert_well_formed(result: FileResult, path: str) -> None:
    """Matches or an error, never a hidden exception, and all of it writable by a report."""
    assert result.path == path
    if result.error is not None:
        assert result.error.kind != "internal-error", result.error
        assert result.error.message and "\n" not in result.error.message, result.error
    for match in result.matches:
        span = match.span
        assert span.line >= 1 and span.column >= 1 and (span.end_line, span.end_column) >= (span.line, span.column), match
    # What every report does with it last: encode as UTF-8 (a lone surrogate would fail here).
    json.dumps([m.snippet for m in result.matches] + [result.error.message if result.error else ""], ensure_ascii=False).encode("utf-8")


@given(st.text(), st.sampled_from(KINDS))
@_settings(500)
def test_any_text_as_any_kind(text: str, kind: tuple[str, tuple[str, ...]]) -> None:
    path, kinds = kind
    _assert_well_formed(analyze_text(path, kinds, text, CONTEXT), path)


SNIPPETS = [
    "import torch\n",
    "torch.cuda.synchronize()\n",
    "x.cuda()\n",
    "import flash_attn\n",
    'model.to("cuda")\n',
    "for b in loader:\n    loss.item()\n",
    "(",
    ")",
    "lambda: ",
    "-",
    "\f",
    "\r\n",
    "\0",
    "print 'x'\n",
    "# tpucheck: ignore[CA001]\n",
    '"""',
    "\\\n",
    "    ",
    "f'{x[\"a\"]}'\n",
]


@given(st.lists(st.sampled_from(SNIPPETS), max_size=40).map("".join))
@example("import torch\nx = " + "lambda: " * 5000 + "1\n")  # crashed the process (SIGSEGV in libcst's parser)
@example("import torch\nx = 1" + " + 1" * 5000 + "\n")  # took 40 s to parse, then too deep to walk
@_settings(200)
def test_python_made_of_hostile_pieces(text: str) -> None:
    """Random text rarely reaches the walker; these pieces are what real and broken code is made of."""
    _assert_well_formed(analyze_text("mod.py", ("python",), text, CONTEXT), "mod.py")


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles what it generates
@given(st.deferred(hypothesmith.from_grammar))  # deferred: building the grammar costs seconds at collection
@_settings(100)
def test_grammar_generated_python(source: str) -> None:
    _assert_well_formed(analyze_text("mod.py", ("python",), source, CONTEXT), "mod.py")


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@given(st.deferred(hypothesmith.from_node))
@_settings(40)
def test_libcst_generated_modules_parse_back(source: str) -> None:
    """Code libcst itself printed is never refused as too deep or a syntax error by our nesting limits."""
    libcst.parse_module(source)  # the generator's own promise
    result = analyze_text("mod.py", ("python",), source, CONTEXT)
    _assert_well_formed(result, "mod.py")
    assert result.error is None, result.error


# Statement forms the grammar generators above rarely or never produce (they predate
# `match`, `except*`, PEP 695 and parenthesized `with`): a CUDA call wrapped in them,
# nested to any depth. Every call placed must come back as exactly one finding.
CUDA_CALL = "torch.cuda.synchronize()"
INDENT = "    "
EXPRESSION_FORMS = [
    "{e}",
    "type Alias[T: int] = list[{e}]",
    "values = [z for z in xs if (w := {e})]",
    "match {e}:\n    case _:\n        pass",
    "@registry[{e}].register\ndef decorated(): pass",
    "handler = lambda s=None: {e}",
    'label = f"{{{e}!r:>10}}"',
    'label = (f"on {{{e}}} " "and " f"{{x}}")',
    "assert {e}, 'message'",
    "del cache[{e}]",
]
CASE_PATTERNS = ["_", "[a, *rest] if a", '{"k": v, **kw}', "Point(x=0) | Point(y=0)", '("a" | "b") as tag', "str() as s if s", "[1, [2, *_], {**others}]"]
BLOCK_FORMS = [
    "match subject:\n    case {pattern}:\n{body2}\n    case _:\n        pass",
    "try:\n{body}\nexcept* ValueError:\n    pass",
    "try:\n    pass\nexcept* (TypeError, KeyError) as group:\n{body}\nelse:\n{body}\nfinally:\n{body}",
    "with (\n    open(path) as f,\n    lock as held,\n):\n{body}",
    "async def run[T](x: T) -> T:\n    async for item in source:\n{body2}\n    async with guard() as g:\n{body2}",
    "class Box[T: int, *Ts, **P]:\n{body}",
    "def first[T](x: T) -> T:\n    global COUNT\n{body}",
    "def outer():\n    level = 0\n    def inner():\n        nonlocal level\n{body2}",
    "if (n := len(xs)) > 1:\n{body}\nelif n:\n{body}",
    "@(decorators[0] if flag else other)\ndef wrapped():\n{body}",
    "for i in range(3):\n{body}\nelse:\n{body}",
]


def _wrap(form: str, pattern: str, body: str) -> str:
    return form.format(pattern=pattern, body=textwrap.indent(body, INDENT), body2=textwrap.indent(body, INDENT * 2))


FORM_CODE: st.SearchStrategy[str] = st.recursive(
    st.sampled_from(EXPRESSION_FORMS).map(lambda form: form.format(e=CUDA_CALL)),
    lambda inner: st.builds(_wrap, st.sampled_from(BLOCK_FORMS), st.sampled_from(CASE_PATTERNS), st.lists(inner, min_size=1, max_size=3).map("\n".join)),
    max_leaves=8,
)


@given(st.lists(FORM_CODE, min_size=1, max_size=4).map(lambda parts: "import torch\n" + "\n".join(parts) + "\n"))
@_settings(150)
def test_every_statement_form_is_walked(source: str) -> None:
    libcst.parse_module(source)  # what the strategy builds is valid Python
    result = analyze_text("mod.py", ("python",), source, CONTEXT)
    _assert_well_formed(result, "mod.py")
    assert result.error is None, result.error
    lines = source.splitlines()
    found = sorted((m.span.line, m.span.column) for m in result.matches if m.rule_id == "CA001")
    placed = sorted(
        (number, column + 1)
        for number, line in enumerate(lines, start=1)
        for column in _occurrences(line, CUDA_CALL)
    )
    assert found == placed, source


def _occurrences(line: str, needle: str) -> list[int]:
    found, start = [], line.find(needle)
    while start >= 0:
        found.append(start)
        start = line.find(needle, start + 1)
    return found


JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(exclude_categories=()), max_size=30)  # lone surrogates (Cs) included
)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)
NOTEBOOK_PIECES = [*SNIPPETS, "!pip install flash-attn", "%pip install -U ", "\ud800", "\udcff", "%%bash\n"]
"""JSON spells lone surrogates (`json.dumps` escapes them), which no decoded file holds."""
SOURCES = st.lists(st.sampled_from(NOTEBOOK_PIECES) | st.text(max_size=20), max_size=6)
CELLS = st.fixed_dictionaries(
    {"cell_type": st.sampled_from(["code", "markdown", "raw", "heading", 3]), "source": SOURCES | SOURCES.map("".join) | JSON_VALUES},
    optional={"metadata": JSON_VALUES, "outputs": JSON_VALUES, "input": SOURCES},
)
NOTEBOOKS = (
    st.fixed_dictionaries({"cells": st.lists(CELLS, max_size=5)}, optional={"nbformat": JSON_VALUES, "metadata": JSON_VALUES})
    | st.fixed_dictionaries({"worksheets": st.lists(st.fixed_dictionaries({"cells": st.lists(CELLS, max_size=3)}) | JSON_VALUES, max_size=2)})
    | JSON_VALUES
)


@given(NOTEBOOKS.map(json.dumps))
# Found by hand before these properties existed; pinned so they stay found.
@example('{"cells": [], "metadata": {"n": ' + "7" * 5000 + "}}")  # json.loads: ValueError, not JSONDecodeError
@example(json.dumps({"cells": [{"cell_type": "code", "source": ["!pip install flash-attn\ud800\n"]}]}))
@_settings(300)
def test_notebooks_of_any_shape(text: str) -> None:
    _assert_well_formed(analyze_text("nb.ipynb", ("notebook",), text, CONTEXT), "nb.ipynb")


# --------------------------------------------------------------------------- determinism

TREE_FILES = {
    "pkg/__init__.py": ["", "from .core import *\n"],
    "pkg/core.py": ["import torch\ntorch.cuda.synchronize()\n", "import torch\nx = torch.zeros(3).cuda()\n", "def f(:\n"],
    "pkg/sub/train.py": ["import torch\nfor b in loader:\n    loss.item()\n    torch.cuda.synchronize()\n", 'import torch\nmodel.to("cuda")\n'],
    "pkg/sub/attn.py": ["import flash_attn\n", "try:\n    import flash_attn\nexcept ImportError:\n    flash_attn = None\n"],
    "scripts/run.py": ["import torch\ntorch.cuda.empty_cache()  # tpucheck: ignore[CA007] -- measured\n", "print 'py2'\n"],
    "tests/test_core.py": ["import torch\ntorch.cuda.synchronize()\n"],
    "nb/explore.ipynb": [
        json.dumps({"cells": [{"cell_type": "code", "source": ["import torch\n", "torch.cuda.synchronize()\n"]}]}),
        json.dumps({"cells": [{"cell_type": "code", "source": "!pip install flash-attn\nx.cuda()\n"}]}),
        "{not json",
    ],
    "requirements.txt": ["flash-attn==2.5.6\n", "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch\n"],
    "csrc/kernel.cu": ["__global__ void add(float* x) { x[0] = 1; }\n"],
    "Dockerfile": ["FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n"],
    "bad.py": [b"\xff\xfe\x00binary"],
}
TREE_FILES[".gitignore"] = ["scripts/\n", "*.ipynb\n!nb/explore.ipynb\n", "# nothing\n"]
TREE_FILES["pkg/sub/.gitignore"] = ["attn.py\n", "!attn.py\n"]
TREE_FILES["build/gen.py"] = ["import torch\ntorch.cuda.synchronize()\n"]
LINKS = {"a_link.py": "build/gen.py", "b_link.py": "build/gen.py", "vendor_a": "build", "vendor_b": "build", "c_link.py": "pkg/core.py"}
"""Routes into `build/` (never walked itself) and a second route to a walked file: which
path is analyzed and which is "duplicate of" must not depend on listing order."""
Tree = tuple[dict[str, str | bytes], frozenset[str]]
TREES: st.SearchStrategy[Tree] = st.tuples(
    st.dictionaries(st.sampled_from(sorted(TREE_FILES)), st.integers(min_value=0, max_value=2), min_size=1).map(
        lambda picks: {path: TREE_FILES[path][index % len(TREE_FILES[path])] for path, index in picks.items()}
    ),
    st.frozensets(st.sampled_from(sorted(LINKS))),
)


@contextmanager
def _tree(files: dict[str, str | bytes], links: frozenset[str] = frozenset()) -> Iterator[str]:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "repo"
        for name, content in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        for name in sorted(links):
            if (root / LINKS[name]).exists():
                (root / name).symlink_to(LINKS[name])
        yield str(root)


def _json(root: str, jobs: int) -> str:
    return json_report.render(scan(root, RULESET, ScanOptions(jobs=jobs)))


@given(TREES)
@_settings(20)
def test_same_json_whatever_the_worker_count(tree: Tree) -> None:
    pools: list[object] = []
    real_pool = engine.ProcessPoolExecutor

    def counted_pool(*args: Any, **kwargs: Any) -> Any:
        pools.append(args)
        return real_pool(*args, **kwargs)

    with _tree(*tree) as root, mock.patch.object(engine, "INLINE_BELOW", 0), mock.patch.object(engine, "ProcessPoolExecutor", counted_pool):
        one = _json(root, 1)
        assert pools == []
        assert one == _json(root, 2)
    coverage = json.loads(one)["coverage"]
    # The two-worker scan really ran in a pool, whenever there was anything to analyze.
    assert len(pools) == (1 if coverage["files_analyzed"] + coverage["files_errored"] else 0)


class _Listing:
    """`os.scandir` as a context manager over a list, so the order can be chosen."""

    def __init__(self, entries: list[os.DirEntry[str]]) -> None:
        self.entries = entries

    def __enter__(self) -> Iterator[os.DirEntry[str]]:
        return iter(self.entries)

    def __exit__(self, *exc: object) -> None:
        return None

    def __iter__(self) -> Iterator[os.DirEntry[str]]:
        return iter(self.entries)

    def close(self) -> None:
        return None


@given(TREES, st.sampled_from(["reversed", "shuffled"]), st.randoms(use_true_random=False))
# Two links, no real route: only the path tie-break decides which one is analyzed.
@example(({"build/gen.py": TREE_FILES["build/gen.py"][0]}, frozenset({"a_link.py", "b_link.py"})), "reversed", random.Random(0))
@_settings(40)
def test_same_json_whatever_the_listing_order(tree: Tree, order: str, rng: random.Random) -> None:
    real_scandir, real_listdir = os.scandir, os.listdir

    def arrange(items: list[Any]) -> list[Any]:
        if order == "reversed":
            items.reverse()  # of the file system's own order, whatever that is
        else:
            rng.shuffle(items)
        return items

    def listed_scandir(path: Any = ".") -> _Listing:
        with real_scandir(path) as iterator:
            return _Listing(arrange(list(iterator)))

    def listed_listdir(path: Any = ".") -> list[str]:
        return arrange(real_listdir(path))

    with _tree(*tree) as root:
        plain = _json(root, 1)
        with mock.patch.object(os, "scandir", listed_scandir), mock.patch.object(os, "listdir", listed_listdir):
            assert _json(root, 1) == plain


def test_the_listing_patch_reaches_discovery() -> None:
    """Guard for the test above: the walk must list directories through `os.scandir`."""
    calls: list[str] = []
    real_scandir = os.scandir

    def counting(path: Any = ".") -> Any:
        calls.append(os.fspath(path))
        return real_scandir(path)

    with _tree({"a/b.py": "x = 1\n", "c.py": "y = 2\n"}) as root, mock.patch.object(os, "scandir", counting):
        scan(root, RULESET, ScanOptions(jobs=1))
    assert sorted(os.path.relpath(p, root) for p in calls) == [".", "a"]
