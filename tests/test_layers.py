"""The package's shape is the pipeline's (issue 25): stage packages in order, imports going
down the stages only, no import circle, no private name reached across modules, and few
`type: ignore`s. A contract read from the source with `ast`, so a wrong-way import fails
here rather than in a review."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tpucheck"

STAGES: tuple[tuple[str, ...], ...] = (
    # the types that cross every boundary
    ("tpucheck.jsontypes", "tpucheck.findings"),
    # rules as data: model, loading, selection
    ("tpucheck.ruleset",),
    # stage one: which files, and their text
    ("tpucheck.discover",),
    # stage two at run time: `tpucheck trace` runs a model in a sandbox and judges its ops
    # (independent of the static analyzer, whose rule-example runner hands it the runtime
    # rules' examples)
    ("tpucheck.trace",),
    # stage two: one file at a time, and the import graph of the tree
    ("tpucheck.analyze",),
    # configuration, resolved once
    ("tpucheck.config",),
    # stage three: roles, severity, reasons, score, plan, inventory; the result it builds
    ("tpucheck.judge", "tpucheck.result"),
    # stage four: suppressions, baselines, diffs, merged shards
    ("tpucheck.gates",),
    # formatting only
    ("tpucheck.report",),
    # orchestration: the scan, and its Python entry point
    ("tpucheck.engine",),
    ("tpucheck.api",),
    # codemods: applied to a scan's findings, then a rescan
    ("tpucheck.fix",),
    # the command line
    ("tpucheck.cli", "tpucheck.__main__"),
)
TOP_LEVEL_LIMIT = 8
TYPE_IGNORE_LIMIT = 10


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _absolute(module: str, node: ast.ImportFrom, path: Path) -> str | None:
    if node.level == 0:
        return node.module
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def imports(path: Path) -> set[str]:
    """Every tpucheck module the file imports, at any depth (a lazy import inside a
    function counts, and so does one under `if TYPE_CHECKING:`)."""
    name = module_name(path)
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(name, node, path)
            if base:
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)
    return {resolve(target) for target in found if target == "tpucheck" or target.startswith("tpucheck.")}


MODULES = sorted(PACKAGE.rglob("*.py"))
NAMES = {module_name(p) for p in MODULES}


def resolve(target: str) -> str:
    """The module a dotted import names: `tpucheck.findings.Finding` -> `tpucheck.findings`."""
    while target not in NAMES and "." in target:
        target = target.rpartition(".")[0]
    return target


def stage_of(name: str) -> int:
    if name == "tpucheck":
        return -1  # the root holds the version and imports the API lazily (test below)
    best, depth = -1, -1
    for number, prefixes in enumerate(STAGES):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and prefix.count(".") > depth:
                best, depth = number, prefix.count(".")
    assert best >= 0, f"{name} belongs to no stage: add it to STAGES"
    return best


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_imports_go_down_the_stages(path: Path) -> None:
    name = module_name(path)
    if name == "tpucheck":
        return  # its imports are lazy: test_the_root_imports_nothing_eagerly
    mine = stage_of(name)
    wrong = sorted(target for target in imports(path) if stage_of(target) > mine)
    assert wrong == [], f"{name} (stage {STAGES[mine][0]}) imports later stages: {wrong}"


def test_every_stage_exists() -> None:
    for prefixes in STAGES:
        for prefix in prefixes:
            assert any(n == prefix or n.startswith(prefix + ".") for n in NAMES), prefix


def test_the_root_imports_nothing_eagerly() -> None:
    """Every stage reads `tpucheck.__version__`: the root may import the API only lazily
    (inside `__getattr__` or under TYPE_CHECKING), or importing the version would load it all."""
    tree = _tree(PACKAGE / "__init__.py")
    eager = [
        node for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom)) and (getattr(node, "module", "") or "").startswith("tpucheck")
    ]  # fmt: skip
    assert eager == []


def _module_graph() -> dict[str, set[str]]:
    return {module_name(p): {t for t in imports(p) if t != module_name(p) and t != "tpucheck"} for p in MODULES}


def test_no_import_circle_between_modules() -> None:
    """Counting lazy imports and those under TYPE_CHECKING: a circle is a seam in the
    wrong place, whatever hides it at run time (a package importing its own submodules
    in its `__init__` is no circle)."""
    graph = _module_graph()

    def inside(a: str, b: str) -> bool:
        return b.startswith(a + ".")

    edges = {m: {t for t in targets if t in graph and not inside(m, t)} for m, targets in graph.items()}
    seen: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        seen[node] = 1
        for target in sorted(edges[node]):
            if seen.get(target) == 1:
                cycles.append(path[path.index(target):] + [target] if target in path else [node, target])
            elif target not in seen:
                visit(target, [*path, target])
        seen[node] = 2

    for start in sorted(edges):
        if start not in seen:
            visit(start, [start])
    assert cycles == []


def test_no_module_imports_a_private_name_of_another() -> None:
    wrong = []
    for path in MODULES:
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tpucheck"):
                wrong += [f"{module_name(path)}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    assert wrong == []


def test_few_type_ignores() -> None:
    found = [f"{p.relative_to(PACKAGE)}:{n}" for p in MODULES for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if "type: ignore" in line]
    assert len(found) <= TYPE_IGNORE_LIMIT, found


def test_the_top_level_is_the_entry_points_and_the_shared_types() -> None:
    """Stage packages hold the pipeline; at the top only what every stage shares (the
    findings, the result, JSON reading) and the entry points (API, engine, CLI)."""
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= TOP_LEVEL_LIMIT, top
