"""The rule model: what a YAML rule becomes once it has been validated.

Rules are data. These types only hold what the YAML said, already compiled (regexes)
and normalized (pattern lists), so that analyzers never re-interpret YAML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from tpucheck.ruleset.judgement import Judgement
from tpucheck.ruleset.versions import VersionRange

HELP_BASE = "https://github.com/tpucheck/tpucheck/blob/main/docs/rules.md"
"""Where docs/rules.md is published; the one place to change when the project moves."""

TARGETS: tuple[str, ...] = ("torchtpu", "xla")
"""What a scan judges against: PyTorch's native TorchTPU device (eager, the default) or
PyTorch/XLA (lazy graphs, where host syncs and dynamic shapes cost far more)."""
DEFAULT_TARGET = "torchtpu"
_SEVERITY_ORDER = ("blocker", "major", "minor", "info")
SKIP = "skip"
"""A target override's severity that leaves the rule out on that target."""

PYTHON_KINDS = ("call", "reference", "import", "decorator", "method", "attribute", "keyword", "string", "define")
MATCHER_KINDS = (*PYTHON_KINDS, "native", "dependency", "file", "config", "option", "runtime")
"""`runtime`: what `tpucheck trace` saw when the model ran; a static scan never matches it."""
CONFIG_FILES: tuple[str, ...] = ("*.yaml", "*.yml", "*.json", "*.toml")
"""What a `config` matcher reads when it names no `files`: structured configs, whose key
paths and values (not their lines) are what a rule can judge."""
LAUNCH_FILES: tuple[str, ...] = (
    "*.sh", "*.bash", "*.slurm", "*.sbatch", "Makefile", "makefile", "GNUmakefile", "*.mk",
    "Dockerfile", "*.Dockerfile", "Dockerfile.*", "*.dockerfile", "*.yaml", "*.yml",
)  # fmt: skip
"""What an `option` matcher reads when it names no `files`: the files that hold command
lines (shell and batch scripts, Makefile recipes, Dockerfile RUN/CMD lines, and the
`command:`/`args:`/`run:` lines of compose, Kubernetes and CI YAML)."""


@dataclass(frozen=True, slots=True)
class ArgConstraint:
    """A constraint on one argument of a call, found by keyword name or by position."""

    name: str | None
    position: int | None
    value: re.Pattern[str] | None
    """Fullmatched against the literal value (or the resolved dotted name); None: any value."""
    missing: bool = False
    """The argument must be absent."""
    any_expression: bool = False
    """With `value`: an argument that is an expression no literal can be read from
    (`autocast(args.fp16 and not args.bf16)`) holds too; for patterns that exclude a few
    literals (`(?!False$).*`), where an unreadable value is one of the many it allows."""


@dataclass(frozen=True, slots=True)
class Matcher:
    """One way a rule can match. `kind` says which of the optional fields apply."""

    kind: str
    patterns: tuple[str, ...] = ()
    """Globs: qualified names (call/reference/decorator/import), method or keyword names,
    package names (dependency), path globs (file)."""
    args: tuple[ArgConstraint, ...] = ()
    arity: int | None = None
    max_args: int | None = None
    """method: at most this many positional arguments, the tensor method's own; a call with
    more is another object's function of the same name (`xp.logaddexp(a, b)` on NumPy)."""
    value: re.Pattern[str] | None = None
    """keyword, config, option: the value regex (fullmatch)."""
    in_call: tuple[str, ...] = ()
    """keyword: callee globs (qualified names, or `.method` for method calls)."""
    not_in_call: tuple[str, ...] = ()
    """keyword: callee globs it never matches in (`*Tokenizer*.from_pretrained`: a
    tokenizer has no weights to place)."""
    exclude: tuple[str, ...] = ()
    """define: name globs it never matches (`predict_*`: an API, not a reference path)."""
    regex: re.Pattern[str] | None = None
    """string: fullmatch on the literal; native/file: searched per file or line; dependency: spec."""
    contexts: tuple[str, ...] = ()
    """string: argument, assignment, comparison."""
    files: tuple[str, ...] = ()
    """Path globs the matcher applies to: native (default: every native file), config
    (default CONFIG_FILES), option (default LAUNCH_FILES), and any Python kind (default:
    every Python file; `setup.py` for what only an install runs)."""
    macro_body: re.Pattern[str] | None = None
    """native: also match where a function-like macro defined in the same file, whose
    body this regex finds, defines something: `DEFINE_KERNEL(name, ...) {`; the macro's
    first argument is the name (CUTLASS-style kernels declared through a macro)."""
    keep_comments: bool = False
    """file: search `#` comment lines too."""
    label: ArgConstraint | None = None
    """call: the argument whose literal value names the finding in the inventory."""
    exact: bool = False
    """reference: the name itself only, not the longer names below it (`torch.cuda` used
    as a value, while `torch.cuda.synchronize` is left to the rule that knows it)."""
    each: bool = False
    """import: one finding per name imported (`from mmcv.ops import nms, RoIAlign`: two ops
    to replace), each named by its qualified name, instead of one per statement."""
    uncalled: bool = False
    """reference: only where the name is a value, not called (`amp_autocast =
    torch.cuda.amp.autocast`, entered later through the alias): its calls are left to the
    rule's call matchers, which read their arguments."""
    residual: bool = False
    """reference: the name and every name below it that no other rule's matcher claims
    (see `claims`): a module rule that flags what the specific rules leave over."""
    fatal: bool = False
    """call: only in a check that stops the program without CUDA: the condition of an if
    whose side taken without CUDA raises or exits, or an assert (`setup.py` that refuses
    to install without a GPU; a check that only leaves the extension out is no finding)."""
    in_class: tuple[str, ...] = ()
    """define: only a method of a class whose base resolves to one of these globs."""
    not_static: bool = False
    """define: only a method not decorated `@staticmethod`."""
    programs: tuple[str, ...] = ()
    """option: only in a command whose program (its first word after environment
    assignments and wrappers such as `sudo`, `exec`, a Dockerfile's `RUN`) is one of these
    globs: a scheduler's or container runtime's own `--gpus`, not an application's
    argument of the same name (audit AC: `python main.py --gpus 0,1`)."""
    not_inside: tuple[str, ...] = ()
    """decorator, call: qualified-name globs of decorators that already count what this
    matcher would (`T.prim_func` inside a `@tilelang.jit` factory is that one kernel): no
    match in a function decorated with one of them, or beside one."""
    outside: VersionRange | None = None
    """dependency: matches when the requirement's version specifiers allow no version in
    this range (`torch==2.4.0` or `torch<2.6` against TorchTPU's `>=2.11,<=2.15`)."""
    claims: tuple[tuple[str, str], ...] = ()
    """residual: (kind, glob) of every other call, reference and decorator pattern that
    can match at or below the name, resolved once all rule files are loaded, so that what
    a residual matcher leaves to others does not depend on which rules are selected.
    kind is "reference" (claims a name and the names below it), "exact" (the name only)
    or "call" (the name where it is called or used as a decorator)."""


@dataclass(frozen=True, slots=True)
class Where:
    """Where a Python rule's severity holds; `otherwise` applies elsewhere ("skip": drop)."""

    loop: bool
    functions: tuple[str, ...]
    decorated: tuple[str, ...]
    otherwise: str
    name: str | None = None
    """A named place from `contexts.places`; unresolved until every rule file is loaded."""
    module: bool = False
    """At a module's top level or in a class body: code that runs when the module is imported."""
    fatal: bool = False
    """In a check whose side taken without CUDA raises or exits (`Frame.fatal`): a TPU
    stops there instead of losing a path."""

    @property
    def resolved(self) -> bool:
        return bool(self.otherwise)


@dataclass(frozen=True, slots=True)
class TargetOverride:
    """How a rule is judged on one target; None keeps the rule's own value."""

    severity: str | None = None
    """A severity, or "skip": the rule does not apply on this target (TorchTPU's torch
    range means nothing to PyTorch/XLA; an op one target runs natively is no finding)."""
    cap: str | None = None
    """At most this severity (a lower one is kept)."""
    where: Where | None = None
    confidence: str | None = None
    effort: tuple[float, float, str] | None = None

    def apply(self, rule: Rule) -> Rule:
        severity = self.severity or rule.severity
        if self.cap is not None and _SEVERITY_ORDER.index(severity) < _SEVERITY_ORDER.index(self.cap):
            severity = self.cap
        changes: dict[str, object] = {"severity": severity}
        if self.where is not None:
            changes["where"] = self.where
        if self.confidence is not None:
            changes["confidence"] = self.confidence
        if self.effort is not None:
            changes["effort_low"], changes["effort_high"], changes["effort_per"] = self.effort
        return replace(rule, **changes)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Example:
    code: str
    path: str | None = None
    """File name the example is analyzed as; derived from the matcher kind when None."""


@dataclass(frozen=True, slots=True)
class CodemodRef:
    """The codemod `tpucheck fix` applies to a rule's findings, and whether the fix keeps
    behaviour on CUDA (safe) or may change numerics or behaviour (run only with
    `--unsafe-fixes`)."""

    name: str
    safe: bool
    values: tuple[tuple[str, str], ...] = ()
    """For `config-value`: the config values it replaces and their replacements."""


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    name: str
    category: str
    severity: str
    confidence: str
    affects: tuple[str, ...]
    effort_low: float
    effort_high: float
    effort_per: str
    message: str
    fix_tpu: str
    fix_xla: str | None
    docs: tuple[str, ...]
    matchers: tuple[Matcher, ...]
    needles: tuple[tuple[str, ...], ...]
    """A Python file that contains every string of none of these groups cannot match."""
    flag_examples: tuple[Example, ...]
    pass_examples: tuple[Example, ...]
    source: str
    """The rule file and line, for messages."""
    inventory: str | None = None
    """"kernel", "package" or "tpu-support" (TPU/XLA support the code already has): the
    report's inventory lists this rule's findings."""
    kernel_kind: str | None = None
    """For `inventory: kernel`: what sort of kernel work a finding is (launched, device-helper,
    triton, extension ...), so effort can price kernels by kind."""
    supersedes: tuple[str, ...] = ()
    """Rule ids whose findings within this rule's findings are dropped."""
    supersedes_line: tuple[str, ...] = ()
    """Rule ids (its own included) whose findings on the same line as one of this rule's
    are dropped: one expression is one edit (`"cuda" if torch.cuda.is_available() else
    "cpu"`, `sdpa_kernel([FLASH, EFFICIENT])`)."""
    where: Where | None = None
    targets: tuple[tuple[str, TargetOverride], ...] = ()
    """Per-target judgement from the rule's own `targets:`; it beats category defaults."""
    target: str = DEFAULT_TARGET
    """The target this rule is judged for (set by `Ruleset.for_target`)."""
    codemod: CodemodRef | None = None
    """The codemod that fixes this rule's findings (`tpucheck fix`), if any."""
    ops: tuple[str, ...] = ()
    """ATen operators every match of this rule reaches (`median`, `_amp_update_scale_`):
    what its per-target severity was judged from, against the targets' dispatcher tables
    (rules/op-status.json); tests hold the two together."""
    unless: str | None = None
    """"guard": not reported inside the condition of a CUDA guard or test skip (the
    availability check that keeps a fallback is not itself work to do); "host", "copy",
    "weights": see rules.schema.json."""
    scalars_at_most: str | None = None
    """A keyword match in a tensor built from a literal of a few scalars
    (`torch.tensor([count, total], dtype=torch.float64)`) is at most this severity: a
    counter of two numbers costs nothing in fp64 wherever it lives."""
    tolerated_build_at_most: str | None = None
    """In a file that catches a failed extension build and goes on (`try:
    CUDAExtension(...) except Exception: ext_modules = []`), a match is at most this
    severity: `pip install` succeeds on a host without CUDA, without the extension."""
    host_build_at_most: str | None = None
    """A JIT build whose sources are all C/C++ and that asks for no CUDA compiles for the
    host (analyze/dispatch.py `host_only_loads`): at most this severity."""
    installs_on_tpu: bool = False
    """For a package rule: the package installs and imports on a TPU host (DeepSpeed,
    bitsandbytes, Triton), so a manifest that lists it blocks nothing; its use in code is
    the work."""
    stack: str | None = None
    """For a package rule: the CUDA-only stack it is ("training", "inference"): priced by how
    much of the product is built on it, not once (judge/score.py)."""

    @property
    def anchor(self) -> str:
        """The rule's fragment in docs/rules.md: its id lowercased, stable across renames."""
        return self.id.lower()

    @property
    def help_uri(self) -> str:
        """The page a finding of this rule links to (JSON report, SARIF `helpUri`)."""
        return f"{HELP_BASE}#{self.anchor}"

    @property
    def fix(self) -> str:
        """The advice for the judged target: TorchTPU's, or PyTorch/XLA's where it differs."""
        if self.target == "xla" and self.fix_xla:
            return self.fix_xla
        return self.fix_tpu

    def override_for(self, target: str) -> TargetOverride | None:
        return next((o for t, o in self.targets if t == target), None)

    def kinds(self) -> frozenset[str]:
        return frozenset(m.kind for m in self.matchers)


@dataclass(frozen=True, slots=True)
class DeviceContext:
    """Where a string literal is a device: the knowledge behind `string` matchers."""

    keywords: frozenset[str] = frozenset()
    calls: dict[str, tuple[int, ...]] = field(default_factory=dict)
    methods: dict[str, tuple[int, ...]] = field(default_factory=dict)
    disabled_by: dict[str, str] = field(default_factory=dict)
    """Call -> the keyword whose literal `False` turns it off (`torch.autocast("cuda",
    enabled=False)`): its device argument then names nothing that runs."""
    names: re.Pattern[str] | None = None
    backend_names: re.Pattern[str] | None = None
    """Names that hold a distributed backend (`dist_backend`, `self.backend`,
    `cfg["ddp_backend"]`): a string bound to one is in the `backend` context, so a
    backend kept in a field and passed on later is found where it is chosen."""


@dataclass(frozen=True, slots=True)
class HostData:
    """Values known to live on the host, so that method-name rules (`.item()`, `.all()`)
    on them are no device syncs: a light flow within one function."""

    results: frozenset[str] = frozenset()
    """Methods whose result is host data (`.cpu()`, `.numpy()`, `.tolist()`, `.item()`)."""
    modules: frozenset[str] = frozenset()
    """Top-level modules whose calls return host data (`numpy`)."""
    annotations: frozenset[str] = frozenset()
    """Qualified parameter annotations that mean host data (`numpy.ndarray`)."""
    calls: frozenset[str] = frozenset()
    """Calls whose rules are dropped when every tensor they are given is host data
    (`torch.allclose(expected, got)` on two CPU tensors is no device sync)."""
    constructors: frozenset[str] = frozenset()
    """Calls that make a tensor on the host unless given `device=` (`torch.zeros(3)`);
    `torch.load` counts only with `map_location="cpu"`."""
    keeps: frozenset[str] = frozenset()
    """Methods and qualified functions whose result lives where their inputs do
    (`x.clone()`, `x.float()`, `copy.deepcopy(x)`, `torch.sigmoid(x)`): host data in,
    host data out."""
    categories: frozenset[str] = frozenset()
    """Rule categories not reported on a call whose inputs are all host data: an op the
    TPU lowers badly runs on the CPU when given CPU tensors (`torch.polar` in `__init__`)."""
    dim_first: frozenset[str] = frozenset()
    """Methods whose first positional argument is a dim (`x.median(dim)`): one given an
    integer literal no real tensor's rank reaches (`history.median(20)`) is another
    object's method, and its receiver is no tensor."""
    values: frozenset[str] = frozenset()
    """Qualified calls that return a plain Python value whatever they are given
    (`builtins.len`, `builtins.int`)."""


@dataclass(frozen=True, slots=True)
class Ruleset:
    rules: tuple[Rule, ...]
    device: DeviceContext
    sources: tuple[str, ...] = ()
    """The rule files it was loaded from, for the report."""
    target_defaults: tuple[tuple[str, str, TargetOverride], ...] = ()
    """(target, category, override) from `contexts.targets`: how a category is judged on a
    target unless a rule says otherwise."""
    target: str = DEFAULT_TARGET
    host: HostData = field(default_factory=HostData)
    judgement: Judgement = field(default_factory=Judgement)
    """How matches become a verdict (rules/judgement.yaml)."""

    def by_id(self) -> dict[str, Rule]:
        return {rule.id: rule for rule in self.rules}

    def with_rules(self, rules: tuple[Rule, ...]) -> Ruleset:
        return replace(self, rules=rules)

    def for_target(self, target: str) -> Ruleset:
        """Every rule judged for `target`: its own override, else its category's, else as written."""
        defaults = {category: override for t, category, override in self.target_defaults if t == target}
        rules = []
        for rule in self.rules:
            override = rule.override_for(target) or defaults.get(rule.category)
            if override is not None and override.severity == SKIP:
                continue
            judged = override.apply(rule) if override is not None else rule
            rules.append(replace(judged, target=target))
        return replace(self, rules=tuple(rules), target=target)
