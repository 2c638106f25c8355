"""The judgement as data: roles, guards, other accelerators, kernel twins, versions and the
scoring constants, read from `rules/judgement.yaml`, each entry with the reason it exists.

Why data: a heuristic that lives in Python is a heuristic nobody reviews. Each entry here
names what it recognises (a call, an exception, a path convention), says why in one line,
and is the `rule` a finding's `because` cites when it fires.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tpucheck.ruleset.problems import Problems

__all__ = ["CONFIG_SWITCH", "DROP_IN", "KNOWN_CALL", "KNOWN_OP", "VENDORED_COPY", "Guards", "Judgement", "PathRole", "Scoring", "build_judgement"]

DROP_IN = "cap.drop-in"
CONFIG_SWITCH = "cap.config-switch"
"""The reason a CUDA-only package picked by a configuration key alone weighs as an edit."""
KNOWN_OP = "kernel.known-op"
KNOWN_CALL = "cap.known-call"
"""The reason a CUDA-only package's module with a drop-in PyTorch module weighs as an edit."""
VENDORED_COPY = "fallback.vendored-copy"
"""The evidence rule of a module of a copied package that nothing imports."""


@dataclass(frozen=True, slots=True)
class PathRole:
    """A role given to files by their path: a convention every Python project shares
    (pytest's `tests/` and `test_*.py`), never one repository's folder."""

    id: str
    role: str
    paths: tuple[re.Pattern[str], ...]
    why: str


@dataclass(frozen=True, slots=True)
class Guards:
    """What a condition or an except clause must test for the code under it to keep a
    fallback: structure first (what is called, what is caught, what the handler does)."""

    availability_calls: tuple[str, ...] = ()
    """Qualified-name globs whose call asks whether CUDA or a package is there."""
    availability_values: tuple[str, ...] = ()
    """Names that are None when CUDA is absent (`CUDA_HOME`): a test against None asks for it."""
    availability_names: re.Pattern[str] | None = None
    listed_roots: frozenset[str] = frozenset()
    """Top packages whose CUDA availability checks are all in `availability_calls`: the
    naming convention says nothing of their other names (`torch.distributed.is_available`)."""
    """The naming convention of availability checks and flags (`is_apex_available()`,
    `HAS_TRITON`), whole names only, for those defined in other modules."""
    import_exceptions: frozenset[str] = frozenset()
    broad_exceptions: frozenset[str] = frozenset()
    """Catches that take any failure: a fallback only around a try of imports alone."""
    call_exceptions: frozenset[str] = frozenset()
    quiet_calls: tuple[str, ...] = ()
    """Calls that only report (print, warnings, logging): a handler made of these and
    `pass` provides no alternative."""
    quiet_methods: frozenset[str] = frozenset()
    output_calls: tuple[str, ...] = ()
    """Calls that turn device values into an image, a plot, audio or a log entry
    (`Image.fromarray`, `ToPILImage()(x)`, `cv2.imwrite`): a copy to the host among their
    arguments is how a result leaves the device, not a step's sync."""
    output_methods: frozenset[str] = frozenset()
    cuda_words: frozenset[str] = frozenset()
    device_words: frozenset[str] = frozenset()
    dtype_names: frozenset[str] = frozenset()
    """Qualified names of tensor dtypes: a CUDA test choosing between them picks a precision."""
    tpu_dtype_names: frozenset[str] = frozenset()
    """The dtypes of `dtype_names` a TPU computes in: the side such a choice gives a TPU host."""
    """Words of a keyword that takes a device (`device`, `map_location`): set by a CUDA test,
    it picks the device, not a feature."""
    """Words of a skip condition that make the test a CUDA path (as opposed to a skip on
    any missing feature)."""
    tpu_names: re.Pattern[str] | None = None
    tpu_modules: tuple[str, ...] = ()
    accelerator_tests: frozenset[str] = frozenset()
    knobs: tuple[str, ...] = ()
    placement_methods: frozenset[str] = frozenset()
    placement_calls: frozenset[str] = frozenset()
    """Methods and calls that only place a value on a device: a device test whose two sides
    do nothing else picks where things go (conditions.placement_only)."""
    skip_decorators: frozenset[str] = frozenset()
    skip_calls: frozenset[str] = frozenset()
    exit_calls: tuple[str, ...] = ()
    """Calls that end the process (`sys.exit`): a side ending in one stops the program."""
    skip_raises: frozenset[str] = frozenset()
    option_defaults: frozenset[str] = frozenset()
    """Literal defaults that make an option off unless asked for (`use_triton=False`)."""
    known_options: dict[str, str] = field(default_factory=dict)
    """Options of public APIs, off unless asked for, by name: their documented defaults."""
    known_counts: frozenset[str] = frozenset()
    """Fields of public APIs that hold the number of CUDA devices (`TrainingArguments.n_gpu`)."""
    half_dtypes: frozenset[str] = frozenset()
    """Half-precision dtypes: a cast under a test that an operand already has one follows
    that operand's dtype (`unless: copy`)."""
    switch_keys: frozenset[str] = frozenset()
    """A config block's own on/off keys (`enabled`): false, the block is never read."""
    report_calls: frozenset[str] = frozenset()
    """Calls whose arguments only report a value: a count passed to one is not used."""
    test_frameworks: frozenset[str] = frozenset()
    """Packages whose import makes a module a test module."""
    numerics_checks: frozenset[str] = frozenset()
    """Calls that compare results (`allclose`, `gradcheck`): what a test does."""
    command_line_packages: frozenset[str] = frozenset()
    """Packages that read a program's command line (`argparse`)."""
    torch_versions: tuple[str, ...] = ()
    """The torch releases the targets run: a version test false on them all marks dead code."""

    @property
    def quiet(self) -> tuple[str, ...]:
        """`quiet_calls` and `quiet_methods` as one tuple for the line-based import scan,
        methods as `.warning`: what an except clause may do and still put nothing in place."""
        return (*self.quiet_calls, *(f".{m}" for m in sorted(self.quiet_methods)))


@dataclass(frozen=True, slots=True)
class Scoring:
    """The score's constants, in one table (README, "The score")."""

    severity_weight: dict[str, float] = field(default_factory=dict)
    edit_blocker_weight: float | None = None
    """The weight of a blocker that is an edit (its inventory is not a kernel or a CUDA-only
    package): its hours once, as any edit's; None weighs it as any blocker."""
    confidence_factor: dict[str, float] = field(default_factory=dict)
    supporting_factor: float = 0.25
    optional_factor: float = 0.25
    fallback_factor: float = 0.2
    fallback_max_hours: float = 2.0
    unused_package_hours: float = 0.5
    """At most these hours a unit for a manifest entry no product module imports: deleting it."""
    repeat_factor: float = 0.1
    kernel_repeat_factor: float = 0.25
    copy_factor: float = 0.1
    config_suffixes: tuple[str, ...] = ()
    """Structured config files, where the same value of the same rule in several files is
    one edit (the first priced, the others copies)."""
    line_copies_at_most: float | None = None
    """The copies of one line of code across files cost at most this many times its
    heaviest file (`line_copies`)."""
    config_copies_at_most: float | None = None
    """The copies of one config value cost at most this many times its first file: one
    search and replace, however many files it touches."""
    command_suffixes: tuple[str, ...] = ()
    """Launch scripts, where the same command (`torch.distributed.launch`) in several
    files is one edit whatever its arguments."""
    shared_fix_categories: frozenset[str] = frozenset()
    """Rule categories whose fix is one helper written once (a missing op rewritten in
    supported ops): the first file priced, every further file a copy."""
    reference_factor: float = 0.5
    hours_unit: float = 8.0
    points_per_doubling: float = 10.0
    max_range_ratio: float = 3.0
    scale_above: float | None = None
    """Hours above which a port's total grows as `scale_exponent` of its items' sum: a
    large port shares its set-up and learning across items (None: plain sums)."""
    scale_exponent: float = 1.0
    grades: tuple[tuple[float, str], ...] = ()
    grade_meaning: dict[str, str] = field(default_factory=dict)
    kernel_cap: float = 59.9
    """The highest score with a kernel or CUDA-only dependency blocking the product's main
    path: grade D says exactly that."""
    blocker_cap: float = 89.9
    """The highest score with any other blocker on the main path: grade A says the product
    runs after mechanical edits, which a blocker contradicts."""
    capped_inventories: frozenset[str] = frozenset()
    capped_rules: frozenset[str] = frozenset()
    """Rules whose blockers cap the score as a kernel's do, whatever their inventory (an op
    of a compiled library that needs a rewrite: torchvision's RoIAlign, UO033)."""
    drop_in: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Rule id -> globs of imported modules with a drop-in PyTorch module: an edit, uncapped."""
    config_switch: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Rule id -> configuration keys whose value alone picks the package (an Accelerate
    config's `distributed_type: DEEPSPEED`): switching the value is an edit, uncapped."""
    """Blockers of these inventories (kernels, CUDA-only packages) cap the score at `kernel_cap`."""
    validation: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Hours per workload to run the port once on the target and check its numerics."""
    validation_weight: float = 0.5
    validation_share: float = 0.0
    """Hours of numerics checks per hour of porting: each replaced kernel, stack or package
    is compared with the CUDA run, so validation grows with what was ported."""
    validation_size: tuple[float, float] = (0.0, 0.0)
    validation_size_exponent: float | None = None
    validation_floor_is_minimum: bool = False
    port_floor: tuple[float, float] = (0.0, 0.0)
    """The least a whole port costs (a TPU environment, a first run per workload, a numerics
    check): product hours below it are topped up in the validation items, with no weight
    in the score."""
    """Whether a workload's floor is the least its validation costs (the size term counts
    only above it) rather than an hours added to the size term."""
    """None: the size term grows with log2(1 + thousands of lines); a number: with the
    thousands of lines to that power (a steeper curve, set from the blind bands)."""
    """Hours per doubling of the product's size, log2(1 + thousands of product Python
    lines), split among its workloads: the run and the check cover what the product does,
    and a larger product does more."""
    stack_file_hours: tuple[float, float] = (2.0, 6.0)
    """Each further product file built on a CUDA-only stack: its part of the rework."""
    kernel_info_guards: frozenset[str] = frozenset()
    """Why-rules of a kept fallback that a TPU host takes by itself: a kernel behind one is info."""
    kernel_edit_guards: frozenset[str] = frozenset()
    """Why-rules of a fallback that a TPU tensor reaches only after a known edit (a C++
    dispatcher's CPU twin takes CPU tensors, and a TPU tensor is not one), or of an
    alternative build a user picks by import: major."""
    kernel_fallback: str = "minor"
    """The most a kernel with any other kept fallback weighs."""
    guarded_guards: frozenset[str] = frozenset()
    """Why-rules of a branch entered only with CUDA present: other findings under one weigh at
    most `guarded_cap` (a TPU host takes the other branch by itself)."""
    guarded_cap: str = "major"
    guarded_info_rules: frozenset[str] = frozenset()
    guarded_info_guards: frozenset[str] = frozenset()
    """Guards whose finding is a note (info) whatever the rule: the guarded setting is
    never read as the code stands (a config block switched off)."""
    training_only: frozenset[str] = frozenset()
    """Rules whose failure only a training step meets: notes where the product never trains."""
    """Rules whose guarded finding is a note (info): the branch needs no TPU side."""
    own_extension_bindings: frozenset[str] = frozenset()
    """Rules whose finding, on a library the project builds itself, is priced with its kernels."""
    known_ops: dict[str, str] = field(default_factory=dict)
    """Standard ops a kernel's name may spell (`roialign`) -> what replaces them: such a
    kernel is re-expressed, not designed (judge/known_ops.py)."""
    known_op_factor: float = 1.0
    """A known op's kernel hours, as a share of a new kernel's."""
    known_op_imports: frozenset[str] = frozenset()
    """Rules whose finding names a compiled library's op the product imports by name."""
    known_op_calls: frozenset[str] = frozenset()
    """Standard ops a public function computes already: imported from a library, replaced
    by a call, an edit (no cap at grade D)."""
    core_hours_share: float = 1.1
    """A kernel-capped product is graded F (its core is custom CUDA) when kernels with no
    fallback are at least this share of its porting hours ... (above 1: never)"""
    core_files_share: float = 1.1
    """... and at least this share of its files that need work."""
    core_kernel_side: frozenset[str] = frozenset()
    """Rule categories whose findings with no fallback are the kernels' host side (CUDA
    includes, launches, inline PTX): counted with the kernels for the core (judge/core.py)."""
    core_subsystem_rules: frozenset[str] = frozenset()
    """Rules whose blocking finding is a CUDA-only subsystem with no TPU alternative (a
    differentiable rasteriser): written anew, as a kernel is, so their hours count with the
    kernels' for the share of the porting hours (not for the files: one import stands for
    the whole subsystem)."""


@dataclass(frozen=True, slots=True)
class Judgement:
    roles: tuple[PathRole, ...] = ()
    optional_paths: tuple[re.Pattern[str], ...] = ()
    """Experimental and development code (`experimental/`): priced apart, like supporting code."""
    function_roles: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(role, name globs) of functions inside product files: benchmark and test functions."""
    guards: Guards = field(default_factory=Guards)
    other_accelerator_modules: tuple[str, ...] = ()
    """Packages of other accelerators: a file that imports one at module level runs only there."""
    other_accelerator_apis: tuple[str, ...] = ()
    """Qualified-name prefixes of other accelerators' objects (`torch.npu.`): not CUDA's."""
    other_accelerator_tests: tuple[str, ...] = ()
    """Globs of calls and attributes whose truth says another accelerator is the device."""
    other_devices: frozenset[str] = frozenset()
    """Device type strings of other accelerators (`"mps"`, `"xpu"`)."""
    chosen_packages: frozenset[str] = frozenset()
    """Kernel packages that import on a TPU host: their kernel modules are judged by where
    the product calls them (analyze/chosen.py)."""
    chosen_markers: tuple[str, ...] = ()
    """Text that marks a kernel of such a package in a module (`triton.jit`)."""
    cuda_engines: tuple[str, ...] = ()
    cuda_engine_headers: tuple[str, ...] = ()
    """Header names of CUDA-only engines' plugin APIs: a native file including one is that
    engine's plugin (analyze/headers.py `engine_plugins`)."""
    """Modules of CUDA-only inference engines: a module importing one at its top is that
    engine's integration, replaced whole with it."""
    cpu_twin: re.Pattern[str] | None = None
    device_dispatch: re.Pattern[str] | None = None
    cuda_macros: re.Pattern[str] | None = None
    """Preprocessor macros only a CUDA build defines (`WITH_CUDA`): what a C++ source
    compiles under `#ifdef` of one is left out of a build without CUDA (analyze/native.py)."""
    frameworks: frozenset[str] = frozenset()
    op_noise: frozenset[str] = frozenset()
    version_folder: re.Pattern[str] | None = None
    version_overlap: float = 0.3
    training_markers: tuple[str, ...] = ()
    model_markers: tuple[str, ...] = ("torch",)
    """Text that makes a module a model of the product (an inference workload to validate):
    PyTorch, or a framework whose code the port rewrites in PyTorch."""
    """Calls and methods that make a product a training product (a validation run of its own)."""
    transparent_decorators: frozenset[str] = frozenset()
    """Decorators that wrap a definition without registering it (`torch.no_grad`,
    `triton.jit`): a definition carrying only these is used only where its name occurs
    (analyze/uncalled.py)."""
    binding_categories: frozenset[str] = frozenset()
    """Rule categories whose findings inside a kernel binding (an autograd Function calling
    the project's extension) are the kernel's own: set aside (analyze/bindings.py)."""
    vendored_packages: frozenset[str] = frozenset()
    """Published CUDA packages whose vendored source trees are priced by the product's imports."""
    vendored_copies: bool = False
    """Whether a package copied from another project (its modules import it by that
    project's name) has no entry points of its own (analyze/reachability.py)."""
    scoring: Scoring = field(default_factory=Scoring)
    rationale: dict[str, str] = field(default_factory=dict)
    """id -> why, for every entry that fires as a `because` rule."""


def _floats(raw: dict[str, Any]) -> dict[str, float]:
    return {key: float(value) for key, value in raw.items()}


def _range(raw: dict[str, Any]) -> tuple[float, float]:
    return float(raw["low"]), float(raw["high"])


def build_judgement(raw: dict[str, Any], problems: Problems) -> Judgement:
    """The `judgement:` section of a rule file (schema-checked already) as a Judgement."""
    base: tuple[str | int, ...] = ("judgement",)
    rationale: dict[str, str] = {}

    def regex(value: str | None, *path: str | int) -> re.Pattern[str] | None:
        return problems.regex(value, (*base, *path)) if value is not None else None

    roles = []
    for index, entry in enumerate(raw.get("roles", [])):
        patterns = tuple(p for i, text in enumerate(entry["paths"]) if (p := regex(text, "roles", index, "paths", i)) is not None)
        roles.append(PathRole(entry["id"], entry["role"], patterns, entry["why"]))
        rationale[entry["id"]] = entry["why"]
    if "entry_points" in raw:
        rationale["role.entry-point"] = raw["entry_points"]["why"]
        if "launched_why" in raw["entry_points"]:
            rationale["role.launched"] = raw["entry_points"]["launched_why"]
        if "dead_launch_why" in raw["entry_points"]:
            rationale["set-aside.dead-launch"] = raw["entry_points"]["dead_launch_why"]
        if "imported_why" in raw["entry_points"]:
            rationale["role.imported"] = raw["entry_points"]["imported_why"]
        if "script_why" in raw["entry_points"]:
            rationale["role.script"] = raw["entry_points"]["script_why"]
    if "uncalled" in raw:
        rationale["severity.uncalled-definition"] = raw["uncalled"]["why"]
    if "submodules" in raw:
        rationale["role.submodule"] = raw["submodules"]["why"]
    if "nested_projects" in raw:
        rationale["role.nested-project"] = raw["nested_projects"]["why"]
    if "vendored_copies" in raw:
        rationale[VENDORED_COPY] = raw["vendored_copies"]["why"]
    optional = raw.get("optional_paths", {})
    optional_paths = tuple(p for i, text in enumerate(optional.get("paths", [])) if (p := regex(text, "optional_paths", "paths", i)) is not None)
    if optional:
        rationale["role.optional"] = optional["why"]
    functions = raw.get("function_roles", {})
    function_roles = tuple((role, tuple(entry["names"])) for role, entry in functions.items())
    rationale.update({f"role.{role}-function": entry["why"] for role, entry in functions.items()})
    guards_raw = raw.get("guards", {})
    for key, entry in guards_raw.get("rules", {}).items():
        rationale[key] = entry
    guards = Guards(
        availability_calls=tuple(guards_raw.get("availability_calls", ())),
        availability_values=tuple(guards_raw.get("availability_values", ())),
        availability_names=regex(guards_raw.get("availability_names"), "guards", "availability_names"),
        listed_roots=frozenset(guards_raw.get("listed_roots", ())),
        import_exceptions=frozenset(guards_raw.get("import_exceptions", ())),
        broad_exceptions=frozenset(guards_raw.get("broad_exceptions", ())),
        call_exceptions=frozenset(guards_raw.get("call_exceptions", ())),
        quiet_calls=tuple(guards_raw.get("quiet_calls", ())),
        quiet_methods=frozenset(guards_raw.get("quiet_methods", ())),
        output_calls=tuple(guards_raw.get("output_calls", ())),
        output_methods=frozenset(guards_raw.get("output_methods", ())),
        cuda_words=frozenset(guards_raw.get("cuda_words", ())),
        device_words=frozenset(guards_raw.get("device_words", ())),
        dtype_names=frozenset(guards_raw.get("dtype_names", ())),
        tpu_dtype_names=frozenset(guards_raw.get("tpu_dtype_names", ())),
        tpu_names=regex(guards_raw.get("tpu_names"), "guards", "tpu_names"),
        tpu_modules=tuple(guards_raw.get("tpu_modules", ())),
        accelerator_tests=frozenset(guards_raw.get("accelerator_tests", ())),
        knobs=tuple(guards_raw.get("knobs", ())),
        placement_methods=frozenset(guards_raw.get("placement_methods", ())),
        placement_calls=frozenset(guards_raw.get("placement_calls", ())),
        skip_decorators=frozenset(guards_raw.get("skip_decorators", ())),
        skip_calls=frozenset(guards_raw.get("skip_calls", ())),
        exit_calls=tuple(guards_raw.get("exit_calls", ())),
        skip_raises=frozenset(guards_raw.get("skip_raises", ())),
        option_defaults=frozenset(guards_raw.get("option_defaults", ())),
        switch_keys=frozenset(guards_raw.get("switch_keys", ())),
        report_calls=frozenset(guards_raw.get("report_calls", ())),
        test_frameworks=frozenset(guards_raw.get("test_frameworks", ())),
        numerics_checks=frozenset(guards_raw.get("numerics_checks", ())),
        command_line_packages=frozenset(guards_raw.get("command_line_packages", ())),
        torch_versions=tuple(guards_raw.get("torch_versions", ())),
        known_options={str(k): str(v) for k, v in guards_raw.get("known_options", {}).items()},
        known_counts=frozenset(guards_raw.get("known_counts", ())),
        half_dtypes=frozenset(guards_raw.get("half_dtypes", ())),
    )
    other = raw.get("other_accelerators", {})
    if other:
        rationale["alternative.other-accelerator"] = other["why"]
        if "branch_why" in other:
            rationale["alternative.other-accelerator-branch"] = other["branch_why"]
    engines = raw.get("cuda_engines", {})
    if engines:
        rationale["set-aside.cuda-engine"] = engines["why"]
    kernels = raw.get("kernels", {})
    for key, code in (("twin_why", "cpu-twin"), ("dispatch_why", "device-dispatch"), ("opt_in_why", "opt-in-build"), ("copy_why", "copy"), ("reference_why", "reference"), ("chosen_why", "chosen-call"), ("except_why", "except-twin"), ("cuda_test_twin_why", "cuda-test-twin"), ("device_twin_why", "device-twin"), ("unloaded_why", "unloaded-extension")):
        if key in kernels:
            rationale[f"fallback.{code}"] = kernels[key]
    if "binding_why" in kernels:
        rationale["set-aside.kernel-binding"] = kernels["binding_why"]
    if "own_package_why" in kernels:
        rationale["set-aside.own-package"] = kernels["own_package_why"]
    if "vendored_why" in kernels:
        rationale["set-aside.vendored-package"] = kernels["vendored_why"]
    if "twin_package_why" in kernels:
        rationale["alternative.twin-package"] = kernels["twin_package_why"]
    if "deploy_why" in raw.get("cuda_engines", {}):
        rationale["alternative.engine-deploy"] = raw["cuda_engines"]["deploy_why"]
    if "plugin_why" in raw.get("cuda_engines", {}):
        rationale["alternative.engine-plugin"] = raw["cuda_engines"]["plugin_why"]
    if "variant_why" in raw.get("entry_points", {}):
        rationale["alternative.entry-variant"] = raw["entry_points"]["variant_why"]
    versions = raw.get("versions", {})
    if versions:
        rationale["version.older"] = versions["why"]
    score_raw = raw.get("score", {})
    scoring = Scoring()
    if score_raw:
        scoring = Scoring(
            severity_weight=_floats(score_raw["severity_weight"]),
            edit_blocker_weight=float(score_raw["edit_blocker_weight"]) if "edit_blocker_weight" in score_raw else None,
            confidence_factor=_floats(score_raw["confidence_factor"]),
            supporting_factor=float(score_raw["supporting_factor"]),
            optional_factor=float(score_raw["optional_factor"]),
            fallback_factor=float(score_raw["fallback_factor"]),
            fallback_max_hours=float(score_raw["fallback_max_hours"]),
            unused_package_hours=float(score_raw.get("unused_package_hours", 0.5)),
            repeat_factor=float(score_raw["repeat_factor"]),
            kernel_repeat_factor=float(score_raw["kernel_repeat_factor"]),
            copy_factor=float(score_raw["copy_factor"]),
            config_suffixes=tuple(str(x).lower() for x in score_raw.get("config_copies", {}).get("suffixes", ())),
            command_suffixes=tuple(str(x).lower() for x in score_raw.get("config_copies", {}).get("command_suffixes", ())),
            line_copies_at_most=float(score_raw["line_copies"]["at_most"]) if "line_copies" in score_raw else None,
            config_copies_at_most=float(score_raw["config_copies"]["at_most"]) if "at_most" in score_raw.get("config_copies", {}) else None,
            shared_fix_categories=frozenset(score_raw.get("shared_fixes", {}).get("categories", ())),
            reference_factor=float(score_raw["reference_factor"]),
            hours_unit=float(score_raw["hours_unit"]),
            points_per_doubling=float(score_raw["points_per_doubling"]),
            max_range_ratio=float(score_raw["max_range_ratio"]),
            scale_above=float(score_raw["scale"]["above"]) if "scale" in score_raw else None,
            scale_exponent=float(score_raw["scale"]["exponent"]) if "scale" in score_raw else 1.0,
            grades=tuple((float(g["from"]), g["grade"]) for g in score_raw["grades"]),
            grade_meaning={g["grade"]: g["means"] for g in score_raw["grades"]},
            kernel_cap=float(score_raw["caps"]["kernel"]),
            blocker_cap=float(score_raw["caps"]["blocker"]),
            capped_inventories=frozenset(score_raw["caps"]["kernel_inventories"]),
            capped_rules=frozenset(score_raw["caps"].get("rules", {}).get("ids", ())),
            drop_in={rule: tuple(globs) for rule, globs in score_raw["caps"].get("drop_in", {}).get("modules", {}).items()},
            config_switch={rule: tuple(keys) for rule, keys in score_raw["caps"].get("config_switch", {}).get("keys", {}).items()},
            validation={workload: _range(hours) for workload, hours in score_raw["validation"]["hours"].items()},
            validation_weight=float(score_raw["validation"]["weight"]),
            validation_share=float(score_raw["validation"].get("share", 0.0)),
            validation_size=_range(score_raw["validation"]["size"]) if "size" in score_raw["validation"] else (0.0, 0.0),
            validation_floor_is_minimum=bool(score_raw["validation"].get("floor_is_minimum", False)),
            port_floor=_range(score_raw["validation"]["port_floor"]) if "port_floor" in score_raw["validation"] else (0.0, 0.0),
            validation_size_exponent=float(score_raw["validation"]["size"]["exponent"]) if "exponent" in score_raw["validation"].get("size", {}) else None,
            core_hours_share=float(score_raw.get("core", {}).get("kernel_hours_share", 1.1)),
            core_files_share=float(score_raw.get("core", {}).get("kernel_files_share", 1.1)),
            core_subsystem_rules=frozenset(score_raw.get("core", {}).get("subsystem_rules", ())),
            core_kernel_side=frozenset(score_raw.get("core", {}).get("kernel_side", ())),
            stack_file_hours=_range(score_raw["stack_file_hours"]),
            kernel_info_guards=frozenset(score_raw["kernel_fallback"]["info"]),
            kernel_edit_guards=frozenset(score_raw["kernel_fallback"].get("edit", ())),
            kernel_fallback=score_raw["kernel_fallback"]["otherwise"],
            guarded_guards=frozenset(score_raw["guarded"]["guards"]),
            guarded_cap=score_raw["guarded"]["at_most"],
            guarded_info_rules=frozenset(score_raw["guarded"].get("info", ())),
            guarded_info_guards=frozenset(score_raw["guarded"].get("info_guards", ())),
            own_extension_bindings=frozenset(score_raw.get("own_extension_bindings", ())),
            training_only=frozenset(score_raw.get("training_only", ())),
            known_ops={str(token): str(use) for token, use in score_raw.get("known_ops", {}).get("ops", {}).items()},
            known_op_factor=float(score_raw.get("known_ops", {}).get("factor", 1.0)),
            known_op_imports=frozenset(score_raw.get("known_ops", {}).get("imports", ())),
            known_op_calls=frozenset(score_raw.get("known_ops", {}).get("calls", ())),
        )
        for key, entry in score_raw.get("rules", {}).items():
            rationale[key] = entry
        if "core" in score_raw:
            rationale["grade.core"] = score_raw["core"]["why"]
        if "drop_in" in score_raw["caps"]:
            rationale[DROP_IN] = score_raw["caps"]["drop_in"]["why"]
        if "config_switch" in score_raw["caps"]:
            rationale[CONFIG_SWITCH] = score_raw["caps"]["config_switch"]["why"]
        if "known_ops" in score_raw:
            rationale[KNOWN_OP] = score_raw["known_ops"]["why"]
            if "calls_why" in score_raw["known_ops"]:
                rationale[KNOWN_CALL] = score_raw["known_ops"]["calls_why"]
    return Judgement(
        roles=tuple(roles),
        optional_paths=optional_paths,
        function_roles=function_roles,
        guards=guards,
        other_accelerator_modules=tuple(other.get("modules", ())),
        other_accelerator_apis=tuple(other.get("apis", ())),
        other_accelerator_tests=tuple(other.get("tests", ())),
        cuda_engines=tuple(engines.get("modules", ())),
        cuda_engine_headers=tuple(engines.get("plugin_headers", ())),
        chosen_packages=frozenset(kernels.get("chosen_packages", ())),
        chosen_markers=tuple(kernels.get("chosen_markers", ())),
        other_devices=frozenset(other.get("devices", ())),
        cpu_twin=regex(kernels.get("cpu_twin"), "kernels", "cpu_twin"),
        device_dispatch=regex(kernels.get("device_dispatch"), "kernels", "device_dispatch"),
        cuda_macros=regex(kernels.get("cuda_macros"), "kernels", "cuda_macros"),
        frameworks=frozenset(kernels.get("frameworks", ())),
        op_noise=frozenset(kernels.get("op_noise", ())),
        version_folder=regex(versions.get("folder"), "versions", "folder"),
        version_overlap=float(versions.get("overlap", 0.3)),
        training_markers=tuple(raw.get("workloads", {}).get("training", ())),
        model_markers=tuple(raw.get("workloads", {}).get("models", ("torch",))),
        transparent_decorators=frozenset(raw.get("uncalled", {}).get("transparent_decorators", ())),
        binding_categories=frozenset(kernels.get("binding_categories", ())),
        vendored_packages=frozenset(kernels.get("vendored_packages", ())),
        vendored_copies="vendored_copies" in raw,
        scoring=scoring,
        rationale=rationale,
    )
