"""What only the whole tree tells (the import graph's verdict, the commands the project
exposes, older versions kept beside the newest, each file's workloads), and its JSON form.

Why a JSON form: these facts are a pure function of every discovered file's path, kinds
and bytes and of the loaded rules, and computing them walks the whole import graph (0.2 s
on PyTorch's 2,285 files). The result cache keeps them under a key made of all those
inputs, so a rescan of an unchanged tree reads them back instead. The cache directory may
sit in a hostile tree, so reading back checks every field's type, as per-file entries do;
anything else is a miss.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tpucheck.analyze.reachability import Reachability
from tpucheck.analyze.registry import Unreached
from tpucheck.findings import Reason
from tpucheck.jsontypes import expect_bool, expect_int, expect_list, expect_str

__all__ = ["TreeFacts", "tree_from_json", "tree_to_json"]


@dataclass(frozen=True, slots=True)
class TreeFacts:
    """What only the whole tree tells: the import graph, the commands the project exposes,
    older versions kept beside the newest, and the workloads the product has."""

    reach: Reachability | None = None
    entry_points: frozenset[str] = frozenset()
    older: dict[str, Reason] = field(default_factory=dict)
    workloads: dict[str, frozenset[str]] = field(default_factory=dict)
    """Product file -> the workloads it shows (a model: inference; a training step:
    training). A run validates the workloads of the files it analyzed, so shards merge
    to a full scan's answer."""
    options_off: dict[str, str] = field(default_factory=dict)
    """Settings the project declares off by default, and nowhere on (`ImportFacts.options`),
    each with the first file declaring it: code a test of one of them turns on is optional."""
    submodules: dict[str, tuple[str, bool, frozenset[str]]] = field(default_factory=dict)
    """Git submodules priced apart (`discover/submodules.py`, `analyze/submodule_code.py`):
    path -> (URL, whether the product imports it at load, the files in it that are the
    product's: the modules its imports reach, the sources its own build compiles). The
    tree's key covers `.gitmodules`."""
    options_launched: dict[str, str] = field(default_factory=dict)
    """Settings off by default that the project's launch scripts turn on, each with the
    first script passing it: not optional (and not in `options_off`)."""
    launched_files: dict[str, str] = field(default_factory=dict)
    """Python files the project's own launch scripts run, each with the first script that
    runs it: product code (judge/roles.py)."""
    nested: dict[str, str] = field(default_factory=dict)
    """Folders holding another project the product neither imports nor runs, each with its
    manifest: priced apart (judge/roles.py)."""
    dead_lines: dict[str, dict[int, str]] = field(default_factory=dict)
    """Launch script -> its lines whose command runs a Python file the tree does not have
    -> that file as written (judge/entrypoints.py `dead_launch_lines`): set aside."""
    imported_files: dict[str, str] = field(default_factory=dict)
    """Python files the product imports, each with its first importer: product code even
    when their name alone says test or demo (judge/roles.py)."""
    checks: dict[str, str] = field(default_factory=dict)
    """Availability checks the project defines (`name()` or an import flag's `NAME` -> the
    first module defining it, `ImportFacts.checks`): a test of one elsewhere is a CUDA or
    package test."""
    scripts: dict[str, str] = field(default_factory=dict)
    """`test.py` files that hold no test, each with the evidence: scripts, product code
    (judge/entrypoints.py `test_named_scripts`)."""
    bindings: dict[str, tuple[tuple[int, int, str, str], ...]] = field(default_factory=dict)
    """Path -> its autograd Functions that call an extension the project builds (first
    line, last line, class, extension: analyze/bindings.py): their CUDA-isms are the kernel's."""
    sole: dict[str, str] = field(default_factory=dict)
    """Example files of a project whose Python is all examples, tests and docs -> the
    evidence: the examples are its product (judge/roles.py `sole`)."""
    imported: frozenset[str] = frozenset()
    """Every module name the product's Python files import without a fallback (as
    written; an import under a try or an if that picks a path does not count, unless its
    handler only binds placeholders): a package a manifest lists and no product module
    needs is an entry to drop."""
    untrained: dict[str, str] = field(default_factory=dict)
    """Product modules that only scripts training nothing reach, each with those scripts
    (analyze/training_reach.py): what only a backward pass meets is not on their path."""
    option_values: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)
    """Settings declared with literal values that are no flag (`bits: int = 16`, a yacs
    key's default and the values its YAML configs set), each with all those values and the
    first file declaring it, and none a launch script passes: a comparison of one with
    literals that none of them satisfies guards its side (analyze/declared.py)."""
    unreached: dict[str, Unreached] = field(default_factory=dict)
    """Product modules -> their registered components that no config or code of the
    project names, with the imports only those use (analyze/registry.py)."""
    uncalled: dict[str, Unreached] = field(default_factory=dict)
    """Product modules -> their top-level definitions nothing the product runs uses, with
    the imports only those use (analyze/uncalled.py)."""
    option_imports: dict[str, dict[str, str]] = field(default_factory=dict)
    """Product modules -> names they import at load and use only behind an option off by
    default -> that option (analyze/option_imports.py)."""
    option_components: dict[str, tuple[tuple[str, int, int, str], ...]] = field(default_factory=dict)
    """Product modules -> their top-level classes and functions every use of which sits
    behind an option its default leaves off (name, first line, last line, the test as
    evidence: analyze/option_components.py)."""
    opt_in: dict[str, str] = field(default_factory=dict)
    """Files under a subpackage nothing else in the product loads -> its dotted name: an
    opt-in component of a library (analyze/opt_in.py)."""
    unimported: dict[str, str] = field(default_factory=dict)
    """Package modules nothing the product runs reaches -> their dotted names
    (analyze/unimported.py)."""

    @property
    def trains(self) -> bool | None:
        """Whether any product file shows a training step; None when no workload was read
        (the tree was not read, or the product has no model)."""
        return any("training" in kinds for kinds in self.workloads.values()) if self.workloads else None

    def workloads_of(self, paths: Iterable[str]) -> tuple[str, ...]:
        found = set().union(*(self.workloads.get(p, frozenset()) for p in paths))
        return tuple(w for w in ("training", "inference") if w in found)


def tree_to_json(tree: TreeFacts) -> dict[str, Any]:
    """Sorted throughout: the same facts always write the same bytes."""
    reach = tree.reach
    return {
        "reach": None
        if reach is None
        else {
            "optional_files": sorted(reach.optional_files),
            "optional_extensions": sorted(reach.optional_extensions),
            "evidence": _reasons(reach.evidence),
            "other_accelerator": _reasons(reach.other_accelerator),
            "engines": _reasons(reach.engines),
            "built": [[name, path] for name, path in sorted(reach.built.items())],
            "own_packages": [[name, path] for name, path in sorted(reach.own_packages.items())],
        },
        "entry_points": sorted(tree.entry_points),
        "older": _reasons(tree.older),
        "workloads": [[path, sorted(kinds)] for path, kinds in sorted(tree.workloads.items())],
        "options_off": [[name, path] for name, path in sorted(tree.options_off.items())],
        "submodules": [[path, url, native_only, sorted(built)] for path, (url, native_only, built) in sorted(tree.submodules.items())],
        "options_launched": [[name, path] for name, path in sorted(tree.options_launched.items())],
        "launched_files": [[path, launcher] for path, launcher in sorted(tree.launched_files.items())],
        "nested": [[folder, manifest] for folder, manifest in sorted(tree.nested.items())],
        "imported_files": [[path, importer] for path, importer in sorted(tree.imported_files.items())],
        "dead_lines": [[path, [[line, script] for line, script in sorted(lines.items())]] for path, lines in sorted(tree.dead_lines.items())],
        "checks": [[name, path] for name, path in sorted(tree.checks.items())],
        "bindings": [[path, [list(b) for b in spans]] for path, spans in sorted(tree.bindings.items())],
        "scripts": [[path, why] for path, why in sorted(tree.scripts.items())],
        "untrained": [[path, why] for path, why in sorted(tree.untrained.items())],
        "imported": sorted(tree.imported),
        "sole": [[path, why] for path, why in sorted(tree.sole.items())],
        "option_values": [[name, list(found), path] for name, (found, path) in sorted(tree.option_values.items())],
        "unreached": [[path, [list(s) for s in u.spans], [list(n) for n in u.names]] for path, u in sorted(tree.unreached.items())],
        "uncalled": [[path, [list(s) for s in u.spans], [list(n) for n in u.names]] for path, u in sorted(tree.uncalled.items())],
        "option_imports": [[path, [[name, option] for name, option in sorted(names.items())]] for path, names in sorted(tree.option_imports.items())],
        "opt_in": [[path, name] for path, name in sorted(tree.opt_in.items())],
        "unimported": [[path, name] for path, name in sorted(tree.unimported.items())],
        "option_components": [[path, [list(c) for c in found]] for path, found in sorted(tree.option_components.items())],
    }


def tree_from_json(data: Any) -> TreeFacts:
    """The facts `tree_to_json` wrote; TypeError for anything else."""
    if type(data) is not dict or set(data) != {"reach", "entry_points", "older", "workloads", "options_off", "submodules", "options_launched", "launched_files", "nested", "imported_files", "dead_lines", "checks", "bindings", "scripts", "untrained", "imported", "sole", "option_values", "unreached", "uncalled", "option_imports", "opt_in", "option_components", "unimported"}:
        raise TypeError("tree facts must be an object with exactly their twenty-three fields")
    reach = None
    if data["reach"] is not None:
        raw = data["reach"]
        if type(raw) is not dict or set(raw) != {"optional_files", "optional_extensions", "evidence", "other_accelerator", "built", "engines", "own_packages"}:
            raise TypeError("reach must be an object with exactly its seven fields")
        built = _pairs(raw["built"])
        reach = Reachability(
            _strings(raw["optional_files"]),
            _strings(raw["optional_extensions"]),
            _reasons_from(raw["evidence"]),
            _reasons_from(raw["other_accelerator"]),
            built,
            _reasons_from(raw["engines"]),
            _pairs(raw["own_packages"]),
        )
    workloads = {}
    for item in expect_list(data["workloads"]):
        path, kinds = expect_list(item, length=2)
        workloads[expect_str(path)] = _strings(kinds)
    options_off = _pairs(data["options_off"])
    submodules = {}
    for item in expect_list(data["submodules"]):
        path, url, native_only, built = expect_list(item, length=4)
        submodules[expect_str(path)] = (expect_str(url), expect_bool(native_only), _strings(built))
    return TreeFacts(
        reach,
        _strings(data["entry_points"]),
        _reasons_from(data["older"]),
        workloads,
        options_off,
        submodules,
        _pairs(data["options_launched"]),
        _pairs(data["launched_files"]),
        _pairs(data["nested"]),
        _dead_lines(data["dead_lines"]),
        _pairs(data["imported_files"]),
        _pairs(data["checks"]),
        scripts=_pairs(data["scripts"]),
        bindings=_bindings(data["bindings"]),
        untrained=_pairs(data["untrained"]),
        imported=_strings(data["imported"]),
        sole=_pairs(data["sole"]),
        option_values=_values(data["option_values"]),
        unreached=_unreached(data["unreached"]),
        uncalled=_unreached(data["uncalled"]),
        option_imports={expect_str(path): _pairs(names) for path, names in (expect_list(item, length=2) for item in expect_list(data["option_imports"]))},
        opt_in=_pairs(data["opt_in"]),
        unimported=_pairs(data["unimported"]),
        option_components=_components(data["option_components"]),
    )


def _components(data: Any) -> dict[str, tuple[tuple[str, int, int, str], ...]]:
    out: dict[str, tuple[tuple[str, int, int, str], ...]] = {}
    for item in expect_list(data):
        path, found = expect_list(item, length=2)
        out[expect_str(path)] = tuple(
            (expect_str(n), expect_int(a), expect_int(b), expect_str(w)) for n, a, b, w in (expect_list(c, length=4) for c in expect_list(found))
        )
    return out


def _unreached(data: Any) -> dict[str, Unreached]:
    out: dict[str, Unreached] = {}
    for item in expect_list(data):
        path, spans, names = expect_list(item, length=3)
        found = tuple((expect_str(n), expect_int(a), expect_int(b)) for n, a, b in (expect_list(s, length=3) for s in expect_list(spans)))
        used = tuple((expect_str(n), expect_str(o)) for n, o in (expect_list(x, length=2) for x in expect_list(names)))
        out[expect_str(path)] = Unreached(found, used)
    return out


def _values(data: Any) -> dict[str, tuple[tuple[str, ...], str]]:
    out: dict[str, tuple[tuple[str, ...], str]] = {}
    for item in expect_list(data):
        name, found, path = expect_list(item, length=3)
        out[expect_str(name)] = (tuple(expect_str(v) for v in expect_list(found)), expect_str(path))
    return out


def _bindings(data: Any) -> dict[str, tuple[tuple[int, int, str, str], ...]]:
    out: dict[str, tuple[tuple[int, int, str, str], ...]] = {}
    for item in expect_list(data):
        path, spans = expect_list(item, length=2)
        found = []
        for span in expect_list(spans):
            first, last, name, extension = expect_list(span, length=4)
            found.append((expect_int(first), expect_int(last), expect_str(name), expect_str(extension)))
        out[expect_str(path)] = tuple(found)
    return out


def _dead_lines(data: Any) -> dict[str, dict[int, str]]:
    out: dict[str, dict[int, str]] = {}
    for item in expect_list(data):
        path, lines = expect_list(item, length=2)
        out[expect_str(path)] = {expect_int(line): expect_str(script) for line, script in (expect_list(pair, length=2) for pair in expect_list(lines))}
    return out


def _pairs(data: Any) -> dict[str, str]:
    """A `[[key, value], ...]` list of strings, as `tree_to_json` writes a str -> str map."""
    out = {}
    for item in expect_list(data):
        key, value = expect_list(item, length=2)
        out[expect_str(key)] = expect_str(value)
    return out


def _reasons(reasons: dict[str, Reason]) -> list[list[Any]]:
    return [[key, r.rule, r.evidence, r.line, r.cell] for key, r in sorted(reasons.items())]


def _reasons_from(data: Any) -> dict[str, Reason]:
    found = {}
    for item in expect_list(data):
        key, rule, evidence, line, cell = expect_list(item, length=5)
        found[expect_str(key)] = Reason(expect_str(rule), expect_str(evidence), None if line is None else expect_int(line), None if cell is None else expect_int(cell))
    return found


def _strings(data: Any) -> frozenset[str]:
    return frozenset(expect_str(item) for item in expect_list(data))
