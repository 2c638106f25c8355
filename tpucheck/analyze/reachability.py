"""Which of the project's own modules and CUDA sources are optional: reached only through
imports that may not run.

Why: DESIGN.md calls a CUDA kernel a blocker when it sits "on the main path with no
fallback". A kernel whose extension module is imported only inside `try/except
ImportError`, under an `if`, or in a function body (as fairseq loads its dynamicconv and
libnat kernels, or litgpt its Thunder-only Triton kernels) is not on the main path: the
product runs without it, so its findings are "fallback kept" like any other guarded CUDA
path. Deciding that needs the whole project's import graph, which no single file's
analysis sees, so it is computed here, once per scan, over every Python file discovered
(not only those a shard analyzes: a merged set of shards must judge as one scan does).

It is built from each file's import facts (`analyze/imports.py`: a pure function of the
file's text, cached with the file's entry), so a rescan rebuilds it without reading the
files again; what is optional is judged here, over the whole graph.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from tpucheck.analyze.cmake import cmake_builds
from tpucheck.analyze.copies import copy_of, in_unimported_copy, vendored_copies
from tpucheck.analyze.cpu_twins import wired_twins
from tpucheck.analyze.deploy import ENGINE_DEPLOY, deploy_scripts
from tpucheck.analyze.excepted import EXCEPT_TWIN, excepted_extensions
from tpucheck.analyze.headers import ENGINE_PLUGIN, engine_plugins
from tpucheck.analyze.import_graph import ImportGraph, bound_names, by_dotted_path, module_name
from tpucheck.analyze.imports import Build, Import, ImportFacts, import_facts, scan_imports
from tpucheck.analyze.packages import GUARDED_MODULE, build_paths, own_packages, placeholder_evidence
from tpucheck.analyze.packages import NATIVE as _NATIVE
from tpucheck.analyze.twin_packages import TWIN_PACKAGE, twin_packages
from tpucheck.analyze.unloaded import unloaded_extensions
from tpucheck.findings import JitBuild, Reason
from tpucheck.ruleset.judgement import VENDORED_COPY, Judgement

__all__ = ["Import", "ImportFacts", "Reachability", "import_resolver", "imported_by", "reachability", "reachability_of", "scan_imports"]


@dataclass(frozen=True, slots=True)
class Reachability:
    """The verdict: project files only reached through imports that may not run, and
    files that only run on another accelerator, each with its evidence."""

    optional_files: frozenset[str]
    optional_extensions: frozenset[str]
    """Compiled extension modules (last name component) only imported optionally; their
    build rules (CUDAExtension(name=...)) are fallback kept too."""
    evidence: dict[str, Reason] = field(default_factory=dict)
    """Path (or extension name) -> why it is optional."""
    other_accelerator: dict[str, Reason] = field(default_factory=dict)
    """Path -> the import that ties it to another accelerator."""
    built: dict[str, str] = field(default_factory=dict)
    """Extension (last name component) -> the file whose build compiles it: the project's own."""
    engines: dict[str, Reason] = field(default_factory=dict)
    """Path -> the top-level import of a CUDA-only inference engine that makes the module
    that engine's integration (rules/judgement.yaml `cuda_engines`)."""
    own_packages: dict[str, str] = field(default_factory=dict)
    """Package name -> the file that makes it the project's own compiled library: a build
    of one of its modules (`CUDAExtension("pkg._ext", ...)`) or a CUDA source inside it.
    An import of that name is the project's code, whatever package it shares a name with."""

    def optional(self, path: str) -> bool:
        return path in self.optional_files

    def why(self, key: str) -> Reason | None:
        return self.evidence.get(key)


def import_resolver(python_files: Iterable[str]) -> Callable[[str, Import], str | None]:
    """The project path an import in a given file names (the target module, not its
    packages), or None for a module from outside the project."""
    graph = ImportGraph({module_name(p): p for p in sorted(python_files)})
    dotted_of = {path: dotted for dotted, path in graph.modules.items()}

    def resolve(importer: str, imp: Import) -> str | None:
        targets = graph.resolve(dotted_of.get(importer, ""), imp)
        return graph.modules[targets[0]] if targets else None

    return resolve


def imported_by(python_files: Iterable[str], facts: Callable[[str], ImportFacts | None], importers: Callable[[str], bool]) -> dict[str, str]:
    """Project modules that a module `importers` accepts imports (at its top, in a function
    or under a choice: any import runs the target on some path), each with its first such
    importer, in path order."""
    graph = ImportGraph({module_name(p): p for p in sorted(python_files)})
    out: dict[str, str] = {}
    for dotted, path in graph.modules.items():
        if not importers(path) or (known := facts(path)) is None:
            continue
        for imp in known.imports:
            for target in graph.resolve(dotted, imp):
                if target != dotted:
                    out.setdefault(graph.modules[target], path)
    return out


def reachability(
    python_files: Iterable[str],
    native_files: Iterable[str],
    read: Callable[[str], str | None],
    supporting: Callable[[str], bool],
    judgement: Judgement,
) -> Reachability:
    """`reachability_of` with each file's facts taken from its text (`read`)."""

    def facts(path: str) -> ImportFacts | None:
        text = read(path)
        return None if text is None else import_facts(text, (), judgement.guards.availability_calls, judgement.guards.torch_versions, judgement.guards.quiet)

    return reachability_of(python_files, native_files, facts, supporting, judgement, read)


def reachability_of(
    python_files: Iterable[str],
    native_files: Iterable[str],
    facts: Callable[[str], ImportFacts | None],
    supporting: Callable[[str], bool],
    judgement: Judgement,
    read_native: Callable[[str], str | None],
    cmake_files: Iterable[str] = (),
) -> Reachability:
    """Optional modules and CUDA sources of a project, from its files' import facts
    (None: a file that could not be read, which imports nothing).

    A module is required when it has no importer in the product (an entry point, or
    loaded by name at run time) or when a required module imports it unconditionally;
    one with importers, none of them required and unconditional, is optional. Importers
    in tests, examples, benchmarks and docs (`supporting`, the judgement's roles) do not
    count either way.
    """
    product = sorted(p for p in python_files if not supporting(p))
    graph = ImportGraph({module_name(p): p for p in product}, bound_names(product, facts))
    edges: dict[str, list[tuple[str, bool]]] = {m: [] for m in graph.modules}
    imported: set[str] = set()
    external: dict[str, list[tuple[str, bool]]] = {}  # last component -> (importer, conditional)
    tested: set[str] = set()  # extensions some product import loads under a CUDA availability test
    untested: set[str] = set()  # ... and outside one
    from_python: set[str] = set()  # extensions a Python build (setup.py) declares
    declared: dict[str, set[str]] = {}  # extension (last component) -> CUDA sources its build lists
    built: dict[str, str] = {}
    built_packages: dict[str, tuple[str, Build]] = {}  # top package of a dotted extension name -> its build
    placeholder_into: set[str] = set()  # modules some product module imports under a placeholder try
    fallback_into: set[str] = set()  # modules some product module imports by choice with a real fallback
    lazy_into: set[str] = set()  # modules some product module imports lazily with no choice around it
    by_path: set[str] = set()  # modules imported by their full dotted path from the top
    frameworks = judgement.frameworks
    elsewhere = frozenset(judgement.other_accelerator_modules)
    other_accelerator: dict[str, Reason] = {}
    engines: dict[str, Reason] = {}
    # Modules that import a CUDA-only inference engine at their top: one that the product
    # imports only on one side of an if (`if not opt.engine: model = create_model(opt)
    # else: from run_engine import run_trt_engine`) is the engine's alternative path, chosen
    # by the test (blind set 25: pix2pixHD's TensorRT runner read as required).
    chosen_engines: set[str] = set()  # engine modules imported on a side of an if
    for dotted, path in graph.modules.items():
        known = facts(path)
        engine = next((imp for imp in known.imports if imp.top and not imp.level and _engine(imp.module, judgement.cuda_engines) and not graph.resolve(dotted, imp)), None) if known else None
        if engine is not None:
            engines[path] = Reason("set-aside.cuda-engine", f"`{engine.module}` imported at the top of {path}: the module drives a CUDA-only engine and is replaced with it")
    engine_modules = {dotted for dotted, path in graph.modules.items() if path in engines}
    for dotted, path in graph.modules.items():
        known = facts(path)
        if known is None:
            continue
        _note_builds(declared, path, known.builds)
        from_python.update(build.name for build in known.builds)  # the module's last name already
        for build in known.builds:
            built.setdefault(build.name.rpartition(".")[2], path)
            if build.package:
                built_packages.setdefault(build.package, (path, build))
        # The same module imported two ways under a try or an if (`try: from networks.ops
        # import f / except: from .networks.ops import f`): one of them runs, so it is no
        # choice (blind set 22: flownet2's kernels read as optional). Two spellings, not two
        # names: `from .ops import (a, b)` under a try is one import of one module, a choice
        # (blind set 24: BasicSR's deformable-conv package read as required).
        resolved = [graph.resolve(dotted, imp) for imp in known.imports]
        spellings = {(targets[0], imp.level, imp.module.rpartition(".")[0]) for imp, targets in zip(known.imports, resolved, strict=True) if targets and imp.guarded}
        seen = Counter(target for target, _, _ in spellings)
        either = {target for target, count in seen.items() if count > 1}
        for imp, targets in zip(known.imports, resolved, strict=True):
            if imp.guarded and targets and targets[0] in either:
                imp = replace(imp, conditional=False, guarded=False)
            elif imp.branch and targets and targets[0] in engine_modules and targets[0] != dotted:
                imp = replace(imp, conditional=True, guarded=True)
                chosen_engines.add(targets[0])
            if imp.top and not imp.level and imp.module.partition(".")[0] in elsewhere and path not in other_accelerator:
                other_accelerator[path] = Reason("alternative.other-accelerator", f"`import {imp.module}` at the top of {path}")
            # a module never imports itself: `from fftconv import fwd` in `src/ops/fftconv.py`
            # names the compiled `fftconv` its build makes (blind set 32: H3)
            others = [target for target in targets if target != dotted]
            _note_extension(external, imp, others, dotted, imp.conditional, frameworks)
            (tested if imp.cuda_test else untested).update(_extension_names(imp, others, frameworks))
            if not targets:
                continue
            for target in targets:
                if target != dotted:
                    edges[dotted].append((target, imp.conditional))
                    # a package holding the importer is loaded already: a lazy import of
                    # a sibling (`from .worker import Worker` in a function) loads only it
                    if imp.conditional and not imp.guarded and not dotted.startswith(target + "."):
                        lazy_into.add(target)
                    if imp.conditional and not dotted.startswith(target + "."):
                        # every choice of it leaves an untested None in its place, or not
                        (placeholder_into if imp.placeholder else fallback_into).add(target)
            # Only the named module counts as imported, and not by its own submodules
            # (`from pkg import utils` inside pkg): else a package and its children import
            # each other and none of them would ever be an entry point.
            # The packages an import loads on the way (`from pkg.ops import f` runs
            # `pkg/ops/__init__.py` too) are imported by it as well, from outside them
            # (blind set 24: BasicSR's `ops/upfirdn2d/__init__.py`, reached only through
            # its submodule under a try, was read as an entry point).
            for target in targets:
                if not dotted.startswith(target + ".") and dotted != target:
                    imported.add(target)
                    if not imp.level and "." in target and by_dotted_path(imp.module, target):
                        by_path.add(target)
                    elif imp.level:
                        # a relative import makes its folder a package where it runs, with or
                        # without an `__init__.py` (a Hugging Face remote-code folder: audit
                        # BE, Sa2VA's `from .flash_attention import ...` under a bare except)
                        by_path.add(target)
    copies = vendored_copies(graph, facts, edges, imported) if judgement.vendored_copies else {}
    for path in sorted(cmake_files):
        # a CMake-built extension (`cuda_add_library(vptq ...)`, loaded as `vptq.libvptq`)
        if supporting(path):
            continue
        for build in cmake_builds(read_native(path) or ""):
            _note_builds(declared, path, (build,))
            built.setdefault(build.name, path)
    for path in sorted(set(python_files) - set(product)):
        # An extension only tests or examples import is theirs: never required.
        for imp in (known.imports if (known := facts(path)) is not None else ()):
            _note_extension(external, imp, graph.resolve("", imp), "", True, frameworks)
    # An extension is named like one (`*_cuda`, `*_C`: an underscore) or declared by a build.
    external = {name: sites for name, sites in external.items() if "_" in name or name in declared}
    packages = {path.rpartition("/")[0] for path in graph.modules.values() if path.endswith(("/__init__.py", "/__init__.pyi"))}
    # A module in a folder with no `__init__.py` is a script, unless the project imports it
    # by its dotted path (`from extensions.kernels.cauchy import ...`: a namespace package).
    # A module of a copied package (`copies`) is no entry point: it runs when imported.
    deploy = deploy_scripts(graph.modules, engines, edges, lambda path: _top_level(path, packages)) if ENGINE_DEPLOY in judgement.rationale else {}
    required = {
        m
        for m, path in graph.modules.items()
        if m not in deploy and ((m not in imported and copy_of(m, copies) is None) or (_top_level(path, packages) and m not in by_path and m not in chosen_engines))
    }
    stack = list(required)
    while stack:
        for target, conditional in edges[stack.pop()]:
            if not conditional and target not in required:
                required.add(target)
                stack.append(target)
    optional_files = frozenset(path for dotted, path in graph.modules.items() if dotted not in required)
    evidence: dict[str, Reason] = {graph.modules[m]: why for m, why in deploy.items()}
    first_importer: dict[str, str] = {}  # module -> the first module importing it conditionally
    for importer_module, sites in edges.items():
        for target, conditional in sites:
            if conditional:
                first_importer.setdefault(target, importer_module)
    for dotted, path in graph.modules.items():
        if dotted not in required:
            importer = graph.modules[first_importer[dotted]] if dotted in first_importer else None
            if importer is not None and dotted not in lazy_into:
                # every import of it sits under a try or an if: a path the code chooses, so a
                # CUDA-only package it imports is optional too (place._fallback)
                evidence[path] = Reason(GUARDED_MODULE, f"{path} is only imported under a try or an if (by {importer})")
            elif importer is not None:
                evidence[path] = Reason("fallback.optional-module", f"{path} is only imported inside a try, a function or TYPE_CHECKING (by {importer})")
    for dotted, path in graph.modules.items():
        copy = copy_of(dotted, copies)
        if dotted not in required and path not in evidence and copy is not None:
            evidence[path] = copy
    _inherit_evidence(graph.modules, edges, required, evidence)
    twin_modules = twin_packages(graph, facts, edges) if TWIN_PACKAGE in judgement.rationale else {}
    for path, reason in twin_modules.items():
        evidence.setdefault(path, reason)
    optional_files |= frozenset(twin_modules)
    # an extension every call of whose binding falls back in an `except` (analyze/excepted.py)
    excepted = excepted_extensions(product, facts, read_native, import_resolver(product), frozenset(declared), frameworks) if EXCEPT_TWIN in judgement.rationale else {}
    ext_required = {name for name, sites in external.items() if name not in excepted and any(m in required and not c for m, c in sites)}
    ext_optional = frozenset(name for name in external if name not in ext_required)
    evidence.update(excepted)
    for name in ext_optional - excepted.keys():
        if name in tested and name not in untested:
            # a host without CUDA never imports it: the path it takes is the other side
            evidence[name] = Reason("guard.test", f"the extension `{name}` is only imported where a CUDA availability test passes (`if torch.cuda.is_available():`)")
        else:
            evidence[name] = Reason("fallback.optional-module", f"the extension `{name}` is only imported inside a try, a function or TYPE_CHECKING")
    native_files = list(native_files)
    placeholder_paths = {graph.modules[m] for m in placeholder_into - fallback_into}
    twins = wired_twins(native_files, read_native, judgement)
    optional_modules = {path: evidence[path] for path in optional_files if path in evidence}
    dispatched, loaders, built_optionally = _device_dispatched(
        product, native_files, facts, {name: evidence[name] for name in ext_optional}, frozenset(ext_required), optional_modules
    )
    for path, reason in (*loaders.items(), *built_optionally.items()):
        evidence.setdefault(path, reason)
    native_optional = set(loaders)
    for path in native_files:
        if not path.endswith(_NATIVE) or supporting(path):
            continue
        extension = next((e for e in sorted(ext_optional) if _links(path, (e,), declared)), None)
        if extension is not None and not _links(path, ext_required, declared):
            native_optional.add(path)
            evidence[path] = evidence[extension]
        elif path in twins:
            native_optional.add(path)
            evidence[path] = twins[path]
        elif (copy := in_unimported_copy(path, packages, evidence, (VENDORED_COPY, GUARDED_MODULE))) is not None and not _links(path, ext_required, declared):
            # a copied package nothing imports, or one the product imports only under a
            # try or an if (blind set 24: BasicSR's `ops/dcn/src/*.cu`, built by a setup
            # helper the build scan cannot name): its sources go with it; where every
            # such try leaves an untested None or `object` in its place, a known edit
            native_optional.add(path)
            evidence[path] = placeholder_evidence(copy, path, packages, placeholder_paths)
    unloaded = unloaded_extensions({name: declared[name] for name in from_python if name in declared}, frozenset(external), built, python_files, read_native)
    for path in native_files:
        if path in native_optional or not path.endswith(_NATIVE) or supporting(path):
            continue
        never = next((e for e in sorted(unloaded) if _links(path, (e,), declared)), None)
        if never is not None and not _links(path, ext_required, declared):
            native_optional.add(path)
            evidence[path] = unloaded[never]
    plugins = engine_plugins([p for p in native_files if not supporting(p)], read_native, judgement.cuda_engine_headers) if ENGINE_PLUGIN in judgement.rationale else {}
    for path, reason in plugins.items():  # a TensorRT plugin: part of the engine's deployment
        native_optional.add(path)
        evidence.setdefault(path, reason)
    for path, reason in dispatched.items():
        # A source a required extension's build lists (`CUDAExtension` in setup.py) stays
        # on the main path whatever else builds it.
        if not supporting(path) and path not in native_optional and not _links(path, ext_required, declared):
            native_optional.add(path)
            evidence[path] = reason
    # The names optional JIT builds write judge the build calls' own findings, after the
    # sources are linked: a short name (`load("fused", ...)`) must not claim other files.
    twinned = _twinned_builds(declared, twins, native_files)
    for name, reason in twinned.items():
        evidence.setdefault(name, reason)
    own = own_packages(packages, built_packages, native_files, supporting)
    return Reachability(
        optional_files | frozenset(native_optional), ext_optional | frozenset(built_optionally) | frozenset(twinned), evidence, other_accelerator, built, engines, own
    )


def _inherit_evidence(modules: dict[str, str], edges: dict[str, list[tuple[str, bool]]], required: set[str], evidence: dict[str, Reason]) -> None:
    """A module only optional modules import (unconditionally) is optional for their reason:
    `flash_llama`, loaded under `if flash_attn_is_installed():`, imports `tensor_ops` at its
    top. A module reached both through a guarded and an unguarded lazy import takes the
    weaker reason (fallback.optional-module)."""
    into: dict[str, list[str]] = {}
    for importer, sites in edges.items():
        for target, _ in sites:
            into.setdefault(target, []).append(importer)
    changed = True
    while changed:
        changed = False
        for dotted, path in modules.items():
            if dotted in required or path in evidence:
                continue
            reasons = [evidence.get(modules[i]) for i in into.get(dotted, ()) if i not in required]
            if not reasons or any(r is None for r in reasons):
                continue  # an importer whose own reason is not known yet (or never)
            weak = next((r for r in reasons if r is not None and r.rule != GUARDED_MODULE), None)
            first = weak or reasons[0]
            assert first is not None
            evidence[path] = Reason(first.rule, f"{path} is only imported by optional modules ({first.evidence})")
            changed = True
    # A lazy import inside a module the product loads only by choice runs only after that
    # choice (audit V: ChatTTS's vLLM worker, imported in a function of the engine module
    # that `if use_vllm:` loads): the choice is its reason too.
    changed = True
    while changed:
        changed = False
        for dotted, path in modules.items():
            reason = evidence.get(path)
            if dotted in required or reason is None or reason.rule == GUARDED_MODULE:
                continue
            importers = into.get(dotted, ())
            reasons = [None if i in required else evidence.get(modules[i]) for i in importers]
            if importers and all(r is not None and r.rule == GUARDED_MODULE for r in reasons):
                first = reasons[0]
                assert first is not None
                evidence[path] = Reason(GUARDED_MODULE, f"{path} is only imported by modules the product loads by choice ({first.evidence})")
                changed = True


def _twinned_builds(declared: dict[str, set[str]], twins: dict[str, Reason], native_files: list[str]) -> dict[str, Reason]:
    """Extension builds whose every CUDA source keeps a CPU twin: the build itself (CK001
    in setup.py) keeps the same fallback, reached by leaving the `.cu` out."""
    present = set(native_files)
    out: dict[str, Reason] = {}
    for name, sources in declared.items():
        cuda = sorted(p for p in sources if p in present and p.endswith(_NATIVE))
        if cuda and all(p in twins for p in cuda):
            out[name] = twins[cuda[0]]
    return out


def _engine(module: str, engines: tuple[str, ...]) -> bool:
    return any(module == e or module.startswith(e + ".") for e in engines)


def _device_dispatched(
    product: list[str],
    native_files: list[str],
    facts: Callable[[str], ImportFacts | None],
    optional_extensions: dict[str, Reason],
    required_extensions: frozenset[str],
    optional_modules: dict[str, Reason] | None = None,
) -> tuple[dict[str, Reason], dict[str, Reason], dict[str, Reason]]:
    """Native sources that the product builds only under a device test (`analyze/dispatch.py`)
    or only into an extension the product imports optionally (`try: from . import ext_cuda /
    except ImportError: ext_cuda = load(...)`), and the product's JIT loaders that every
    caller reaches only under a device test; and the names of such optional builds (the
    build call's own finding is judged by them). A source some other build names plainly,
    or a loader one caller reaches without the test, keeps its weight. A build in a module
    the product only imports optionally (`optional_modules`, the import graph's evidence)
    compiles its sources only on that path (blind set 16: BigVGAN's `load.py`, imported
    through a module loaded under `if use_cuda_kernel:`, builds from `srcpath / "op.cu"`)."""
    optional_modules = optional_modules or {}
    natives = sorted(native_files)
    native_set = frozenset(natives)
    gated: dict[str, Reason] = {}
    plain: set[str] = set()
    by_callee: dict[str, list[tuple[str, JitBuild]]] = {}
    loaders: list[tuple[str, str]] = []
    built_optionally: dict[str, Reason] = {}
    for path in product:
        known = facts(path)
        if known is None:
            continue
        loaders.extend((path, name) for name in known.jit_loaders)
        folder = path.rpartition("/")[0]
        for build in known.jit_builds:
            by_callee.setdefault(build.callee, []).append((path, build))
            why: Reason | None
            if build.guard:
                why = Reason("fallback.device-dispatch", f"{path}:{build.line} builds it only under {build.guard}; other devices run the code after it")
            elif build.twin:
                why = Reason("fallback.device-twin", f"{path}: {build.twin}; every other device takes the extension built at line {build.line}")
            elif build.target in optional_extensions:
                why = optional_extensions[build.target]
            elif build.opt_in and build.target not in required_extensions:
                why = Reason("fallback.opt-in-build", f"{path}:{build.line} builds it only under {build.opt_in}, off unless the environment sets it")
            else:
                why = optional_modules.get(path)
            if why is not None and build.name and not build.guard:
                built_optionally.setdefault(build.name, why)
            for source in build.sources:
                for candidate in _sources_named(source, folder, natives, native_set):
                    if why is None:
                        plain.add(candidate)
                    else:
                        gated.setdefault(candidate, why)
    dispatched = {path: reason for path, reason in gated.items() if path not in plain}
    optional_loaders: dict[str, Reason] = {}
    for path, name in loaders:
        callers = by_callee.get(name, [])
        if callers and all(build.guard for _, build in callers):
            first, build = callers[0]
            optional_loaders.setdefault(path, Reason("fallback.device-dispatch", f"`{name}` compiles only what its callers pass; all {len(callers)} build under a device test (first: {first}:{build.line}, {build.guard})"))
    return dispatched, optional_loaders, {name: why for name, why in built_optionally.items() if name not in required_extensions}


def _sources_named(source: str, folder: str, natives: list[str], native_set: frozenset[str]) -> list[str]:
    """The project's native files a build's source names: beside the build file, from the
    project's top, or (a name joined from folder parts, `join(here, "src", "op.cu")`) the
    files of that name under the build file's folder."""
    exact = sorted({posixpath.normpath(posixpath.join(folder, source)), posixpath.normpath(source)} & native_set)
    if exact or "/" in source:
        return exact
    prefix = f"{folder}/" if folder else ""
    return [p for p in natives if p.startswith(prefix) and p.rpartition("/")[2] == source]


def _note_extension(
    external: dict[str, list[tuple[str, bool]]], imp: Import, targets: list[str], importer: str, conditional: bool, frameworks: frozenset[str]
) -> None:
    """Record an import that may name a compiled extension."""
    for name in _extension_names(imp, targets, frameworks):
        external.setdefault(name, []).append((importer, conditional))


def _extension_names(imp: Import, targets: list[str], frameworks: frozenset[str]) -> list[str]:
    """The names an import may load a compiled extension by: not a project module of that
    name (`from fairseq import libnat_cuda` resolves only to the package), absolute, and
    never a framework's own. `from ext import fn` arrives as `ext.fn`: the extension may be
    either of the last two. Names without an underscore are kept too: a build may declare
    one (`CUDAExtension("dcn")`), which `reachability` checks once every build is read. A
    relative import names one only where it resolves to no module of the project (`from
    ._knn_cuda import knn` beside an in-place build: CamLiFlow, audit AS)."""
    if (imp.level and targets) or (not imp.level and imp.module.partition(".")[0] in frameworks):
        return []
    resolved = targets[0].rpartition(".")[2] if targets else None
    return [name for name in imp.module.split(".")[-2:] if name != resolved and not (targets and name in targets[0].split("."))]


def _top_level(path: str, packages: set[str]) -> bool:
    """The top of a package chain (or a module beside no package): what users import.
    Its own submodules importing it (`from pkg import utils`) does not make it optional."""
    folder = path.rpartition("/")[0]
    if path.endswith(("/__init__.py", "/__init__.pyi")) or path in ("__init__.py", "__init__.pyi"):
        folder = folder.rpartition("/")[0] if "/" in folder else ""
    return folder not in packages


def _links(path: str, extensions: Iterable[str], declared: dict[str, set[str]] | None = None) -> bool:
    """Whether a CUDA source belongs to one of these extension modules: its build lists it
    (`CUDAExtension("structured_kernels", ["cauchy_cuda.cu"])`), or by the naming every
    build we have seen follows: the module's name is the source's stem or its prefix
    (`ngram_repeat_block_cuda` -> `ngram_repeat_block_cuda_kernel.cu`), or the name of a
    folder holding it (`libnat_cuda/edit_dist.cu`)."""
    parts = path.split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    folders = set(parts[:-1])
    listed = declared or {}
    return any(
        stem == e or stem.startswith(e + "_") or e in folders or path in listed.get(e, ())
        or any(source.endswith("/") and path.startswith(source) for source in listed.get(e, ()))
        for e in extensions
    )


def _note_builds(declared: dict[str, set[str]], path: str, builds: Iterable[Build]) -> None:
    """The CUDA sources each extension build in this file lists, as project paths."""
    for build in builds:
        declared.setdefault(build.name, set()).update(build_paths(path, build))


