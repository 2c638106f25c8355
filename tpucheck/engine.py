"""scan(): discovery, parallel per-file analysis, then findings, suppressions and score.

Workers are forked with the compiled rules already in memory, files go out largest
first in small batches so two cores stay busy to the end, and results are sorted
before anything is derived from them, so the output never depends on the worker count
or on which worker finished first.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import multiprocessing
import os
import posixpath
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

from tpucheck.analyze import AnalysisContext, analyze_text, build_context
from tpucheck.analyze.bindings import kernel_bindings
from tpucheck.analyze.budget import BudgetExceeded, time_limit
from tpucheck.analyze.cache import CacheStats, ResultCache
from tpucheck.analyze.chosen import chosen_kernel_modules
from tpucheck.analyze.cmake import is_cmake_file
from tpucheck.analyze.dead_code import dead_code
from tpucheck.analyze.declared import declared_settings
from tpucheck.analyze.headers import unincluded_headers
from tpucheck.analyze.imports import facts_of_bytes, import_facts
from tpucheck.analyze.opt_in import OPT_IN, opt_in_components
from tpucheck.analyze.option_components import OPTION_COMPONENT, option_components
from tpucheck.analyze.option_imports import option_imports
from tpucheck.analyze.reachability import import_resolver, imported_by, reachability_of
from tpucheck.analyze.registry import CONFIG_SUFFIXES, unreached_components
from tpucheck.analyze.submodule_code import submodules_apart
from tpucheck.analyze.training_reach import untrained_modules
from tpucheck.analyze.treefacts import TreeFacts, tree_from_json, tree_to_json
from tpucheck.analyze.unbuilt import folder_lister, unbuilt_sources
from tpucheck.analyze.uncalled import UNCALLED, uncalled_definitions
from tpucheck.analyze.unimported import UNIMPORTED, unimported_modules
from tpucheck.analyze.unpassed import UNGIVEN, ungiven_values
from tpucheck.analyze.variants import VARIANT, variant_options
from tpucheck.analyze.vendored import vendored_packages
from tpucheck.config.settings import ScanOptions, Settings, default_jobs
from tpucheck.discover.first_party import first_party_packages
from tpucheck.discover.readme import readme_text
from tpucheck.discover.sourcetext import SourceTextError, decode
from tpucheck.discover.submodules import gitmodules_text, parse_submodules
from tpucheck.discover.walk import (
    Discovery,
    SourceFile,
    discover_paths,
)
from tpucheck.findings import FileResult, Finding, ImportFacts, ScanError, Skipped
from tpucheck.gates.finish import Assembled, finish
from tpucheck.judge.entrypoints import (
    command_line_helper,
    dead_launch_lines,
    documented_paths,
    entry_point_paths,
    launched_paths,
    nested_projects,
    options_launched,
    sole_code,
    test_named_scripts,
)
from tpucheck.judge.place import OPTION_IMPORT, UNREACHED, Placement, place
from tpucheck.judge.roles import Roles
from tpucheck.judge.verdict import build_result
from tpucheck.judge.versions import older_versions
from tpucheck.result import Coverage, ScanResult, is_cuda_source
from tpucheck.ruleset.judgement import Judgement
from tpucheck.ruleset.model import Ruleset

__all__ = ["ScanOptions", "Settings", "assemble", "build_result", "default_jobs", "scan"]

Progress = Callable[[int, int], None]
INLINE_BELOW = 40
"""Fewer files than this are analyzed in-process: a pool costs more than it saves."""

GC_THRESHOLD = 50_000
"""Allocations between two young-generation collections while files are analyzed
(CPython's default is 700). Parsers allocate millions of small objects that reference
counting frees, so the default collects for nothing every few hundred nodes: about 10 %
of a cold scan. Cycles still get collected, just less often."""


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """The analysis loop's collection threshold, restored after (a library caller's process
    keeps its own settings)."""
    saved = gc.get_threshold()
    gc.set_threshold(GC_THRESHOLD, saved[1], saved[2])
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def analyze_file(
    source: SourceFile,
    context: AnalysisContext,
    cache: ResultCache | None = None,
    budget: float | None = None,
    *,
    lookup: bool = True,
) -> FileResult:
    """Read, decode and analyze one file; every failure becomes an error entry.

    The file is read once: its bytes give the cache key and are what gets analyzed, so an
    entry is always stored under the hash of the bytes it describes, even if the file
    changed since a lookup made elsewhere (`lookup=False`: the parent already missed).
    """
    try:
        with open(source.abspath, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        if cache is not None and lookup:
            cache.stats.misses += 1
        reason = exc.strerror or type(exc).__name__
        return FileResult(source.path, source.kinds[0], error=ScanError(source.path, "unreadable", f"cannot read: {reason}"))
    key = cache.key(source.path, source.kinds, data) if cache is not None else None
    if cache is not None and key is not None and lookup:
        cached = cache.load(key)
        if cached is not None:
            return cached
    text: str | None = None
    try:
        with time_limit(budget):
            try:
                text = decode(data, python="python" in source.kinds)
            except SourceTextError as exc:
                result = FileResult(source.path, source.kinds[0], error=ScanError(source.path, exc.kind, str(exc)))
            else:
                result = analyze_text(source.path, source.kinds, text, context)
    except BudgetExceeded:
        message = f"analysis took longer than the {budget:g} s budget; skipped"
        return FileResult(source.path, source.kinds[0], error=ScanError(source.path, "timeout", message))
    if in_import_graph(source):
        # The import graph reads even a file the analysis could not decode, as best it can.
        markers = context.ruleset.judgement.training_markers
        queries = context.ruleset.judgement.guards.availability_calls
        versions = context.ruleset.judgement.guards.torch_versions
        reports = context.ruleset.judgement.guards.quiet
        models = context.ruleset.judgement.model_markers
        result.imports = import_facts(text, markers, queries, versions, reports, models) if text is not None else facts_of_bytes(data, markers, queries, versions, reports, models)
    if cache is not None and key is not None:
        cache.store(key, result)
    return result


def in_import_graph(source: SourceFile) -> bool:
    """A Python module (not a notebook): its imports are edges of the whole-tree graph."""
    return "python" in source.kinds and source.path.endswith((".py", ".pyi"))


_WORKER_CONTEXT: AnalysisContext | None = None
_WORKER_CACHE: ResultCache | None = None
_WORKER_BUDGET: float | None = None


def _init_worker(context: AnalysisContext, cache: ResultCache | None = None, budget: float | None = None) -> None:
    global _WORKER_CONTEXT, _WORKER_CACHE, _WORKER_BUDGET
    # What the parent built (rules, tables, modules) lives as long as the worker: the
    # collector need not walk it again, and it collects less often (GC_THRESHOLD).
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    if cache is not None:
        cache.stats = CacheStats(enabled=True, directory=cache.directory)  # a forked copy starts with the parent's counts
    _WORKER_CONTEXT, _WORKER_CACHE, _WORKER_BUDGET = context, cache, budget


def _analyze_batch(batch: list[SourceFile]) -> tuple[list[FileResult], CacheStats | None]:
    """A batch's results, and the cache counts this worker gathered meanwhile (the parent
    sums them: a forked worker's counters are its own copy)."""
    assert _WORKER_CONTEXT is not None
    cache = _WORKER_CACHE
    results = [analyze_file(source, _WORKER_CONTEXT, cache, _WORKER_BUDGET, lookup=False) for source in batch]
    return results, cache.stats.take() if cache is not None else None


def _batches(files: Sequence[SourceFile], jobs: int) -> list[list[SourceFile]]:
    ordered = sorted(files, key=lambda f: (-f.size, f.path))
    size = max(1, min(64, len(ordered) // (jobs * 8) or 1))
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]


def analyze_files(
    files: Sequence[SourceFile],
    context: AnalysisContext,
    jobs: int,
    progress: Progress | None = None,
    *,
    cache: ResultCache | None = None,
    budget: float | None = None,
) -> list[FileResult]:
    """Results in no particular order (the caller sorts).

    With a cache and a pool, the parent looks every file up first: a warm rescan then
    never starts a pool, and only the misses are sent out (in-process when few).
    """
    results: list[FileResult] = []
    total = len(files)
    if jobs <= 1 or total < INLINE_BELOW:
        with _fewer_collections():
            for done, source in enumerate(files, start=1):
                results.append(analyze_file(source, context, cache, budget))
                if progress:
                    progress(done, total)
        return results
    todo: Sequence[SourceFile] = files
    if cache is not None:
        todo = []
        for source in files:
            hit = cache.lookup(source.path, source.kinds, source.abspath)
            if hit is None:
                todo.append(source)
            else:
                results.append(hit)
        if progress and results:
            progress(len(results), total)
    if not todo or len(todo) < INLINE_BELOW:
        with _fewer_collections():
            for source in todo:
                results.append(analyze_file(source, context, cache, budget, lookup=False))
                if progress:
                    progress(len(results), total)
        return results
    def collect(batch_results: list[FileResult], counts: CacheStats | None) -> None:
        results.extend(batch_results)
        if cache is not None and counts is not None:
            cache.stats.add(counts)
        if progress:
            progress(len(results), total)

    lost = _run_pool(_batches(todo, jobs), context, jobs, cache, budget, collect)
    while lost:
        # A worker died (a crash in native code takes the whole pool down with it). Rerun
        # what was lost one file per task; the first tasks that never finished are the
        # suspects: each runs alone, so a crash costs exactly the file that caused it.
        lost = _run_pool([[source] for source in lost], context, jobs, cache, budget, collect)
        suspects, lost = lost[: jobs + 1], lost[jobs + 1 :]
        for source in suspects:
            if not _run_pool([[source]], context, 1, cache, budget, collect):
                continue
            reason = "the analyzer's process died on this file (a crash in native code); skipped"
            collect([FileResult(source.path, source.kinds[0], error=ScanError(source.path, "crash", reason))], None)
    return results


def _pool_context() -> multiprocessing.context.BaseContext:
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")


def _run_pool(
    batches: list[list[SourceFile]],
    context: AnalysisContext,
    jobs: int,
    cache: ResultCache | None,
    budget: float | None,
    collect: Callable[[list[FileResult], CacheStats | None], None],
) -> list[SourceFile]:
    """Analyze the batches in a pool; the files of batches lost to a dead worker, in the
    order they were submitted."""
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=_pool_context(), initializer=_init_worker, initargs=(context, cache, budget))
    lost: dict[int, list[SourceFile]] = {}
    with pool:
        futures: dict[Future[tuple[list[FileResult], CacheStats | None]], int] = {}
        for number, batch in enumerate(batches):
            try:
                futures[pool.submit(_analyze_batch, batch)] = number
            except BrokenProcessPool:  # a worker died while the rest were still being submitted
                lost.update((later, batches[later]) for later in range(number, len(batches)))
                break
        for future in as_completed(futures):
            try:
                collect(*future.result())
            except BrokenProcessPool:
                lost[futures[future]] = batches[futures[future]]
    return [source for number in sorted(lost) for source in lost[number]]


def shard_of(path: str, count: int) -> int:
    """The 1-based shard a path belongs to: a hash of the path alone, so every machine of a
    CI matrix agrees without talking to the others."""
    return int.from_bytes(hashlib.blake2b(path.encode("utf-8", "surrogateescape"), digest_size=8).digest(), "big") % count + 1


def _take_shard(found: Discovery, shard: tuple[int, int]) -> Discovery:
    mine, count = shard
    return Discovery(
        files=[f for f in found.files if shard_of(f.path, count) == mine],
        skipped=[s for s in found.skipped if shard_of(s.path, count) == mine],
        errors=[e for e in found.errors if shard_of(e.path, count) == mine],
    )


def scan(
    root: str,
    ruleset: Ruleset,
    options: Settings | None = None,
    progress: Progress | None = None,
    *,
    paths: Sequence[str] = (),
) -> ScanResult:
    """Scan the tree at `root`, or only `paths` (files or directories inside it, as
    pre-commit passes them); findings' paths are relative to `root` either way."""
    options = options or Settings()
    ruleset = ruleset.for_target(ruleset.target)  # idempotent: a library caller's plain ruleset is judged as the CLI's
    context = build_context(ruleset, prefilter=options.prefilter)
    found = discover_paths(
        root,
        paths or None,
        exclude=options.exclude,
        respect_gitignore=options.respect_gitignore,
        max_file_size=options.max_file_size,
        extra_globs=context.other_globs,
    )
    context.python.first_party = first_party_packages(root if os.path.isdir(root) else os.path.dirname(os.path.abspath(root)))
    whole = found if not paths else None
    if options.shard is not None:
        found = _take_shard(found, options.shard)
    jobs = options.jobs or default_jobs()
    cache = (
        ResultCache.for_scan(
            root,
            ruleset,
            prefilter=context.prefilter,
            first_party=context.python.first_party,
            directory=options.cache_dir,
            stats=options.cache_stats,
        )
        if options.use_cache
        else None
    )
    results = sorted(analyze_files(found.files, context, jobs, progress, cache=cache, budget=options.file_time_budget), key=lambda r: r.path)
    tree = _tree_facts(root, whole, results, options, cache, ruleset.judgement)
    assembled = assemble(
        root,
        ruleset,
        results,
        found.skipped,
        found.errors,
        files_found=len(found.files) + len(found.skipped) + len(found.errors),
        shard=options.shard,
        tree=tree,
    )
    return finish(assembled, options)


def _tree_facts(
    root: str, found: Discovery | None, results: Sequence[FileResult], options: Settings, cache: ResultCache | None, judgement: Judgement
) -> TreeFacts:
    """The whole tree's facts, from the cache when every file's bytes are known and
    unchanged since they were computed (a rescan), else computed and kept there."""
    gitmodules = gitmodules_text(root) if os.path.isdir(root) else ""
    readme = readme_text(root) if os.path.isdir(root) else ("", "")
    key = cache.tree_key(((f.path, f.kinds) for f in found.files), gitmodules + "\0readme\0" + "\0".join(readme)) if cache is not None and found is not None else None
    if key is not None and cache is not None:
        kept = cache.load_tree(key)
        if kept is not None:
            try:
                return tree_from_json(kept)
            except (TypeError, ValueError):
                pass
    tree = _compute_tree_facts(root, found, results, options, cache, judgement, gitmodules, readme)
    if key is not None and cache is not None:
        cache.store_tree(key, tree_to_json(tree))
    return tree


def _compute_tree_facts(
    root: str,
    found: Discovery | None,
    results: Sequence[FileResult],
    options: Settings,
    cache: ResultCache | None,
    judgement: Judgement,
    gitmodules: str = "",
    readme: tuple[str, str] = ("", ""),
) -> TreeFacts:
    """What the whole tree says, whatever part of it this run analyzes (a shard, or the
    files pre-commit names), so every run judges a file as a full scan does.

    The import graph is built from each module's import facts: those of the files analyzed
    come with their results (from the cache, on a rescan); a module this run did not
    analyze, or whose analysis timed out, is looked up in the cache, else read and scanned
    here. Manifests (for entry points) and C++ sources beside a CUDA kernel (for its CPU
    twin) are few, and read as they are needed."""
    if not os.path.isdir(root):
        return TreeFacts()
    if found is None:
        found = discover_paths(root, None, exclude=options.exclude, respect_gitignore=options.respect_gitignore, max_file_size=options.max_file_size)
    known = {r.path: r.imports for r in results if r.imports is not None}
    by_path = {f.path: f for f in found.files}
    markers = judgement.training_markers

    def facts(path: str) -> ImportFacts | None:
        fact = known.get(path)
        if fact is not None:
            return fact
        source = by_path[path]
        if cache is not None:
            hit = cache.peek(source.path, source.kinds, source.abspath)
            if hit is not None and hit.imports is not None:
                return hit.imports
        try:
            with open(source.abspath, "rb") as handle:
                return facts_of_bytes(handle.read(), markers, judgement.guards.availability_calls, judgement.guards.torch_versions, judgement.guards.quiet, judgement.model_markers)
        except OSError:
            return None

    def read(path: str) -> str | None:
        try:
            with open(by_path[path].abspath, encoding="utf-8", errors="replace") as handle:
                return handle.read()
        except OSError:
            return None

    python = [f.path for f in found.files if in_import_graph(f)]
    native = [f.path for f in found.files if "native" in f.kinds]
    entry_points = entry_point_paths([f.path for f in found.files], read)
    by_folder = Roles(judgement, entry_points)
    launched_files = launched_paths([f.path for f in found.files], read, lambda path: not by_folder.supporting(path))
    readme_name, readme_body = readme
    for path, name in documented_paths(readme_body, readme_name, [f.path for f in found.files]).items():
        if not by_folder.supporting(path) or by_folder.named_only(path):  # `examples/x.py` stays an example
            launched_files.setdefault(path, name)
    nested = nested_projects([f.path for f in found.files], lambda path: facts(path) if path in by_path else None, launched_files)
    scripts = test_named_scripts(python, read, by_folder.named_only, judgement.guards, command_line_helper(python, facts, judgement.guards.command_line_packages))
    imported_files = {
        path: importer
        for path, importer in imported_by(python, facts, lambda path: not by_folder.supporting(path) or path in launched_files or path in scripts).items()
        if by_folder.supporting(path)
    }
    roles = Roles(judgement, entry_points, launched=launched_files, nested=nested, imported=imported_files, scripts=scripts)
    sole = sole_code(python, roles)
    if sole:
        roles = Roles(judgement, entry_points, launched=launched_files, nested=nested, imported=imported_files, scripts=scripts, sole=sole)
    cmake = [f.path for f in found.files if is_cmake_file(f.path)]
    reach = reachability_of(python, native, facts, roles.supporting, judgement, read, cmake)
    product_python = [p for p in python if not roles.supporting(p)]
    resolver = import_resolver(product_python)
    chosen = chosen_kernel_modules(product_python, facts, read, resolver, judgement.chosen_packages, judgement.chosen_markers)
    if chosen:  # Triton kernel modules the product calls only on one side of a choice
        reach = dataclasses.replace(
            reach, optional_files=reach.optional_files | frozenset(chosen), evidence={**chosen, **reach.evidence}
        )
    if VARIANT in judgement.rationale and (variants := variant_options(product_python, facts, read, resolver, launched_files)):
        # what only a variant entry point imports (`train_mem.py`'s flash-attn patch)
        reach = dataclasses.replace(reach, optional_files=reach.optional_files | frozenset(variants), evidence={**variants, **reach.evidence})
    workloads = {path: frozenset(fact.workloads) for path in python if not roles.supporting(path) and (fact := facts(path)) is not None and fact.workloads}
    apart = submodules_apart(parse_submodules(gitmodules), python, facts, native, read)
    vendored = vendored_packages((f.path for f in found.files), judgement.vendored_packages)
    if vendored:  # its imports are the dependency again, priced by the package's rules
        names = {name for name, _ in vendored.values()}
        reach = dataclasses.replace(reach, own_packages={k: v for k, v in reach.own_packages.items() if k not in names})
    others = [f.path for f in found.files if "native" not in f.kinds]
    options_off, values = declared_settings(python, facts, [f.path for f in found.files], read)
    launched = options_launched([f.path for f in found.files], read, {*options_off, *values})
    options_off = {name: path for name, path in options_off.items() if name not in launched}
    values = {name: value for name, value in values.items() if name not in launched}
    if UNGIVEN in judgement.rationale:  # `elif method == "gmres":` with "gmres" given nowhere
        product_others = [path for path in others if not path.endswith((".py", ".pyi", ".ipynb")) and not roles.supporting(path)]
        values = {**ungiven_values(product_python, product_others, read, {**values, **options_off}), **values}
    dead = dead_launch_lines([f.path for f in found.files], read)
    checks = _checks(python, facts)
    loaded = frozenset(f"{posixpath.basename(path)[: -len('.py')]}.{b.target}" for path in python if (fact := facts(path)) is not None for b in fact.jit_builds if b.target)
    bindings = kernel_bindings(python, facts, read, frozenset(reach.built), judgement.frameworks, loaded) if judgement.binding_categories else {}
    untrained = untrained_modules(product_python, facts, read, set(launched_files) | entry_points)
    # what the product needs: an import with a fallback (`try: import flash_attn / except
    # ImportError: ...` that the code tests) leaves the package optional
    # (a module the product loads only optionally, or an engine's deployment script, is a
    # fallback of its own: its imports are not the product's)
    # (nor are the imports of code priced apart: a nested project's, an experimental
    # folder's; blind set 87: X-Mobility's ROS 2 node importing TensorRT)
    imported = frozenset(
        imp.module
        for path in product_python
        if path not in reach.optional_files and roles.optional(path) is None and (fact := facts(path)) is not None
        for imp in fact.imports
        if not imp.level and (not imp.guarded or imp.placeholder)
    )
    unreached = {}
    if UNREACHED in judgement.rationale:  # components a registry holds and no config names
        texts = [*python, *(f.path for f in found.files if f.path.lower().endswith(CONFIG_SUFFIXES))]
        unreached = unreached_components(product_python, facts, texts, read)
    return TreeFacts(
        reach,
        entry_points,
        {**older_versions(by_path, judgement), **{root: why for root, (_, why) in vendored.items()}, **dead_code(python, facts), **unbuilt_sources(python, facts, native, others, read, folder_lister(root)), **unincluded_headers(native, others, python, read)},
        workloads,
        options_off,
        apart,
        launched,
        launched_files,
        nested,
        dead,
        imported_files,
        checks,
        scripts=scripts,
        bindings=bindings,
        untrained=untrained,
        imported=imported,
        sole=sole,
        option_values=values,
        unreached=unreached,
        option_imports=option_imports(product_python, facts, read, options_off) if OPTION_IMPORT in judgement.rationale else {},
        opt_in=_opt_in(product_python, facts, found, read, roles, {*entry_points, *launched_files}) if OPT_IN in judgement.rationale else {},
        unimported=unimported_modules(product_python, facts, [*product_python, *_configs(found, roles)], read, {*entry_points, *launched_files}) if UNIMPORTED in judgement.rationale else {},
        option_components=option_components(product_python, read, options_off, values) if OPTION_COMPONENT in judgement.rationale else {},
        uncalled=uncalled_definitions(product_python, _configs(found, roles), read, judgement.transparent_decorators) if UNCALLED in judgement.rationale else {},
    )


def _opt_in(product_python: list[str], facts: Callable[[str], ImportFacts | None], found: Discovery, read: Callable[[str], str | None], roles: Roles, exempt: set[str]) -> dict[str, str]:
    """Opt-in subpackages (analyze/opt_in.py): named by no product module or config."""
    return opt_in_components(product_python, facts, [f.path for f in found.files], [*product_python, *_configs(found, roles)], read, exempt)


def _uses_torch(imported: frozenset[str] | None) -> bool:
    """Whether the product's modules import PyTorch (TreeFacts.imported)."""
    return imported is not None and any(name == "torch" or name.startswith("torch.") for name in imported)


def _configs(found: Discovery, roles: Roles) -> list[str]:
    """The product's config files: text that may name a module by its dotted path."""
    return [f.path for f in found.files if f.path.lower().endswith(CONFIG_SUFFIXES) and not roles.supporting(f.path)]


def _checks(python: Iterable[str], facts: Callable[[str], ImportFacts | None]) -> dict[str, str]:
    """The project's availability checks (`name()` for a check function, `NAME` for an
    import flag -> the first module, in path order, defining one of that name)."""
    found: dict[str, str] = {}
    for path in sorted(python):
        fact = facts(path)
        for name in fact.checks if fact is not None else ():
            found.setdefault(name, path)
    return found


def assemble(
    root: str,
    ruleset: Ruleset,
    results: list[FileResult],
    skipped: list[Skipped],
    discovery_errors: list[ScanError],
    *,
    files_found: int,
    shard: tuple[int, int] | None = None,
    tree: TreeFacts | None = None,
) -> Assembled:
    """FileResults to findings: pure, so caches can feed it too; `gates.finish` sets aside
    what the user asked to and scores."""
    tree = tree or TreeFacts()
    rules = ruleset.by_id()
    roles = Roles(ruleset.judgement, tree.entry_points, tree.submodules, tree.launched_files, tree.nested, tree.imported_files, tree.scripts, tree.sole)
    judged = ruleset.judgement
    placement = Placement(roles, tree.reach, ruleset.host.categories, tree.older, judged.scoring, tree.options_off, tree.options_launched, tree.dead_lines, tree.checks, tree.trains, tree.bindings, judged.binding_categories, tree.untrained, tree.imported if tree.reach is not None else None, tree.option_values, tree.unreached, tree.option_imports, tree.opt_in, tree.option_components, tree.unimported, tree.uncalled, _uses_torch(tree.imported))
    findings: list[Finding] = []
    set_aside: list[Finding] = []
    errors = list(discovery_errors)
    for result in results:
        if result.error is not None:
            errors.append(result.error)
        placed = place(result, rules, placement)
        findings.extend(placed.findings)
        set_aside.extend(placed.set_aside)
    coverage = Coverage(
        files_found=files_found,
        files_analyzed=sum(r.error is None for r in results),
        files_parsed=sum(r.parsed and r.error is None for r in results),
        files_errored=len(errors),
        files_skipped=len(skipped),
        lines_scanned=sum(r.lines for r in results if r.error is None),
        product_lines=sum(
            r.lines
            for r in results
            if r.error is None and r.path.endswith(".py") and not roles.supporting(r.path) and roles.optional(r.path) is None and placement.older_version(r.path) is None
            # what the validation run checks is what runs on the device: a module that never
            # names torch (data preparation, a CLI, text processing) runs as on the GPU host
            and (not tree.workloads or r.path in tree.workloads)
        ),
    )
    cuda_files = [(r.path, r.lines) for r in results if r.error is None and is_cuda_source(r.path)]
    return Assembled(root, ruleset, findings, errors, skipped, coverage, shard=shard, cuda_files=cuda_files, set_aside=set_aside, workloads=tree.workloads_of(r.path for r in results if r.error is None))


def findings_in(result: FileResult, ruleset: Ruleset) -> list[Finding]:
    """One file's findings as a scan judges them without the whole tree's import graph:
    what `tpucheck fix` compares before and after its edits (the findings set aside as one
    edit with another included: a fix rewrites them too)."""
    placement = Placement(Roles(ruleset.judgement), None, ruleset.host.categories, {}, ruleset.judgement.scoring)
    placed = place(result, ruleset.by_id(), placement)
    same_edit = [f for f in placed.set_aside if f.because and f.because[-1].rule == "set-aside.same-edit"]
    return sorted([*placed.findings, *same_edit], key=Finding.sort_key)
