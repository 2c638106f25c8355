"""Where a match sits, and so what it weighs: the role of its code, whether it keeps a
fallback, the severity that place allows, and the findings a more specific one covers.

The one place that turns an analyzer's raw matches into findings: the engine calls
`place` once per file result. Every discount a finding gets here, and every finding set
aside rather than scored, carries its reason (`Finding.because`): the judgement rule that
fired (rules/judgement.yaml) and the evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase

from tpucheck.analyze.bindings import KERNEL_BINDING, binding_at
from tpucheck.analyze.dead_code import DEAD_VERSION
from tpucheck.analyze.deploy import ENGINE_DEPLOY
from tpucheck.analyze.off_tests import OTHER
from tpucheck.analyze.opt_in import OPT_IN
from tpucheck.analyze.option_components import OPTION_COMPONENT
from tpucheck.analyze.reachability import GUARDED_MODULE, Reachability
from tpucheck.analyze.registry import Unreached
from tpucheck.analyze.uncalled import UNCALLED
from tpucheck.analyze.unimported import UNIMPORTED
from tpucheck.analyze.variants import VARIANT
from tpucheck.discover.manifest_names import is_manifest
from tpucheck.findings import PENDING, SEVERITIES, FileResult, Finding, RawMatch, Reason, fingerprints, suppression_key
from tpucheck.judge.known_ops import KNOWN_OP, known_op
from tpucheck.judge.roles import PRODUCT_ROLES, SUPPORTING_ROLES, Roles
from tpucheck.judge.settings import compared_setting
from tpucheck.ruleset.judgement import CONFIG_SWITCH, DROP_IN, KNOWN_CALL, Scoring
from tpucheck.ruleset.model import Rule

__all__ = ["OPTION_IMPORT", "UNREACHED", "Placed", "Placement", "place", "placed_severity"]

BRANCH = "alternative.other-accelerator-branch"
"""The why-rule of code under a test that holds only on another accelerator."""

OWN_EXTENSION = "kernel.own-extension"
UNUSED_PACKAGE = "severity.unused-package"
"""The why-rule of a call into a library the project builds itself: priced as a copy."""

OWN_PACKAGE = "set-aside.own-package"
"""The why-rule of an import of the project's own kernel package named like a CUDA-only one."""

UNREACHED = "severity.unreached-component"
"""The why-rule of a blocker only a registered component that no config names meets."""

OPTION_IMPORT = "severity.option-only-import"
"""The why-rule of a package imported at load and used only behind an option off by default."""

EXPERIMENTAL = "experimental"
"""The role of opt-in experimental code: priced apart, at most minor."""


@dataclass(frozen=True, slots=True)
class Placement:
    """What the whole tree says about each file, gathered once per scan."""

    roles: Roles
    reach: Reachability | None = None
    host_categories: frozenset[str] = frozenset()
    older: dict[str, Reason] = field(default_factory=dict)
    """Folder -> why it is an older version of the product (judge/versions.py)."""
    scoring: Scoring = field(default_factory=Scoring)
    options_off: dict[str, str] = field(default_factory=dict)
    """Settings the project declares off by default, and where (TreeFacts.options_off)."""
    options_launched: dict[str, str] = field(default_factory=dict)
    """Settings off by default that the project's launch scripts turn on (TreeFacts)."""
    dead_lines: dict[str, dict[int, str]] = field(default_factory=dict)
    """Launch script -> lines that run a Python file the tree does not have -> that file."""
    checks: dict[str, str] = field(default_factory=dict)
    """The project's availability checks, `name()` -> where defined (TreeFacts.checks)."""
    trains: bool | None = None
    """Whether the product shows a training step (TreeFacts.workloads over the whole tree,
    so every shard agrees); None when the tree was not read."""
    bindings: dict[str, tuple[tuple[int, int, str, str], ...]] = field(default_factory=dict)
    """Path -> its kernel bindings (TreeFacts.bindings): CUDA-isms inside are the kernel's."""
    binding_categories: frozenset[str] = frozenset()
    """Which findings inside a binding are the kernel's (judgement `kernels.binding_categories`)."""
    untrained: dict[str, str] = field(default_factory=dict)
    """Product modules only scripts that train nothing reach -> those scripts (TreeFacts.untrained)."""
    imported: frozenset[str] | None = None
    """Module names the product imports (TreeFacts.imported); None when the tree was not read."""
    option_values: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)
    """Settings with literal values that are no flag -> (their values, where) (TreeFacts)."""
    unreached: dict[str, Unreached] = field(default_factory=dict)
    """Path -> its registered components no config names (TreeFacts.unreached)."""
    option_imports: dict[str, dict[str, str]] = field(default_factory=dict)
    """Path -> names imported at load, used only behind an off option -> it (TreeFacts)."""
    opt_in: dict[str, str] = field(default_factory=dict)
    """Path -> the opt-in subpackage holding it (TreeFacts.opt_in)."""
    option_components: dict[str, tuple[tuple[str, int, int, str], ...]] = field(default_factory=dict)
    """Path -> its definitions used only behind an off option (TreeFacts.option_components)."""
    unimported: dict[str, str] = field(default_factory=dict)
    """Package module -> its dotted name, when nothing the product runs reaches it (TreeFacts.unimported)."""
    uncalled: dict[str, Unreached] = field(default_factory=dict)
    """Path -> its top-level definitions nothing the product runs uses (TreeFacts.uncalled)."""
    torch_product: bool = False
    """Whether a product module imports torch: another framework's code is then a backend
    beside the product (a rule's `unless: torch-product`)."""

    def older_version(self, path: str) -> Reason | None:
        """Why the file is set aside whole: it, or a folder holding it, is an older version
        of the product or code no target torch runs."""
        exact = self.older.get(path)
        if exact is not None:
            return exact
        folder = path
        while "/" in folder:
            folder = folder.rpartition("/")[0]
            found = self.older.get(folder)
            if found is not None:
                return found
        return None


@dataclass(slots=True)
class Placed:
    findings: list[Finding] = field(default_factory=list)
    set_aside: list[Finding] = field(default_factory=list)
    """Findings reported apart and not scored, each with its reason: another accelerator's
    code, an older version of the product, a test's own performance."""


def placed_severity(severity: str, role: str, fallback_kept: bool) -> str:
    """Where code sits bounds what it can block: supporting and experimental code never
    stops the product (at most minor), and a CUDA path with a fallback never stops
    anything (at most major)."""
    return SEVERITIES[max(SEVERITIES.index(severity), SEVERITIES.index(_cap(role, fallback_kept)))]


def _cap(role: str, fallback_kept: bool) -> str:
    return "minor" if role in SUPPORTING_ROLES or role == EXPERIMENTAL else ("major" if fallback_kept else "blocker")


def _cap_reason(role: str, fallback_kept: bool) -> Reason:
    if role in SUPPORTING_ROLES:
        return Reason("severity.supporting", f"{role} code: at most minor")
    if role == EXPERIMENTAL:
        return Reason("severity.optional", "experimental code: at most minor")
    return Reason("severity.fallback", "a fallback is kept: at most major")


def _role(found: str | None, file_role: str, path: str, launched: bool) -> str:
    """Supporting code found inside a product file (a `__main__` block, a benchmark or
    test function) takes its own role; a file already supporting keeps its path's role.
    The `__main__` block of an entry-point script (a file at the root, a script, a
    command the project exposes, a file the project's launch scripts run) is the
    product's way in, not an example of it."""
    if found == "example" and (file_role == "script" or "/" not in path or launched):
        return file_role
    return found if found is not None and file_role in PRODUCT_ROLES else file_role


def place(result: FileResult, rules: dict[str, Rule], placement: Placement) -> Placed:
    roles, reach = placement.roles, placement.reach
    file_role, role_reason = roles.placed(result.path)
    experimental = roles.optional(result.path) if file_role in PRODUCT_ROLES else None
    if experimental is not None:
        file_role, role_reason = EXPERIMENTAL, experimental
    elsewhere = reach.other_accelerator.get(result.path) if reach is not None else None
    engine = reach.engines.get(result.path) if reach is not None else None
    older = placement.older_version(result.path)
    optional_file = reach is not None and reach.optional(result.path)
    manifest = result.kind == "manifest" or is_manifest(result.path)  # setup.py is read as Python too
    matches = sorted(
        (m for m in result.matches if m.rule_id in rules),
        key=lambda m: (m.cell or 0, m.span.line, m.span.column, m.rule_id),
    )
    prints = fingerprints([(m.rule_id, result.path, m.snippet) for m in matches])
    placed = Placed()
    for match, fingerprint in zip(matches, prints, strict=True):
        rule = rules[match.rule_id]
        reasons, guarded = _settle_pending(match, placement, result.path)
        reasons, guarded = _launched(reasons, guarded, placement.options_launched)
        because = [reason.located(result.path) for reason in reasons]
        fallback = _fallback(match, rule, result, reach) if not guarded and (optional_file or rule.inventory == "kernel") else None
        if fallback is not None:
            guarded = True
            because.append(fallback)
        # a file or a branch that runs only on another accelerator: that one's path
        other = elsewhere if elsewhere is not None else next((r for r in because if r.rule == BRANCH), None)
        if other is not None and rule.inventory == "kernel":
            guarded = True  # another accelerator's kernel: an alternative to the CUDA one, kept
            if other is elsewhere:
                because.append(elsewhere)
        own = _own_extension(match, rule, reach, placement.scoring)
        if own is not None:
            because.append(own)
        drop_in = _drop_in(match, rule, placement.scoring)
        if drop_in is not None:
            because.append(drop_in)
        if (rule.inventory == "kernel" or rule.id in placement.scoring.known_op_imports) and (op := _known_op(match.detail, placement.scoring)) is not None:
            because.append(Reason(KNOWN_OP, f"`{match.detail}` computes `{op}`, a standard op: {placement.scoring.known_ops[op]}"))
            if rule.inventory != "kernel" and op in placement.scoring.known_op_calls:
                because.append(Reason(KNOWN_CALL, f"a public function computes `{op}` already: replacing the import is an edit"))
        place_role = _role(match.role, file_role, result.path, result.path in roles.launched)
        if match.role is not None and place_role != match.role:  # the block's mark did not apply: no reason of it
            because = [r for r in because if not r.rule.startswith("role.")]
        if role_reason is not None and place_role == file_role:
            because.insert(0, role_reason)
        wanted = match.severity or rule.severity
        if wanted == "blocker" and any(r.rule in (DROP_IN, CONFIG_SWITCH, KNOWN_CALL) for r in because):
            # a known edit (a drop-in module, a config value, a public function): the
            # severity table's major (audits AX and AW: R1-V's zero2.yaml, verl's FusedAdam)
            wanted = "major"
        if guarded and (rule.inventory in placement.scoring.capped_inventories or (optional_file and result.kind == "native")):
            # A kernel or a CUDA-only package that keeps a fallback; the launches and
            # includes of an optional extension's source go with its kernels.
            wanted = _kernel_fallback(wanted, because, placement.scoring)
        elif guarded:
            wanted = _guarded(wanted, because, placement.scoring, rule.id)
        if wanted == "blocker" and not guarded and (unreached := _unused(match, placement.unreached.get(result.path), UNREACHED)) is not None:
            because.append(unreached)  # audit AR: AdaMixer's unused mmdet heads
            wanted = "major"
        elif wanted == "blocker" and not guarded and rule.inventory == "package" and (behind := _behind_option(match, placement.option_imports.get(result.path), placement.options_off)) is not None:
            because.append(behind)  # blind set 55: LESS's eval scripts and `--use_vllm`
            wanted = "major"
        elif wanted == "blocker" and not guarded and (chosen := _option_component(match, placement.option_components.get(result.path))) is not None:
            because.append(chosen)  # audit AX: MACE's Chebyshev basis under `--radial_type`
            wanted = "major"
        elif wanted == "blocker" and not guarded and (component := placement.opt_in.get(result.path)) is not None:
            # blind set 60: NNI's TensorRT speed-up, AllenNLP's vision region detector
            because.append(Reason(OPT_IN, f"in `{component}`, a subpackage nothing else in the product imports or names: an opt-in component, its blocker stops only its users"))
            wanted = "major"
        elif wanted == "blocker" and not guarded and (module := placement.unimported.get(result.path)) is not None:
            # audits AV and AX: sparseml's SSD helpers and verl's cupy rendezvous, which only tests import
            because.append(Reason(UNIMPORTED, f"in `{module}`, a module no script, entry point or package `__init__` of the product reaches by imports and no text names: its blocker stops only who imports it by hand"))
            wanted = "major"
        elif wanted == "blocker" and not guarded and (uncalled := _unused(match, placement.uncalled.get(result.path), UNCALLED)) is not None:
            because.append(uncalled)  # audits AV and AZ: sparseml's SSD decoder, 4K4D's merge_faces
            wanted = "major"
        if rule.installs_on_tpu and manifest:
            # audits M and R: a pin nothing imports is no work; the imports are reported where they are
            because.append(Reason("severity.install", f"`{match.detail or rule.name}` installs and imports on a TPU host: only its use in code is work"))
            wanted = SEVERITIES[max(SEVERITIES.index(wanted), SEVERITIES.index("info"))]
        if manifest and (unused := _unused_package(match, rule, placement.imported)) is not None and SEVERITIES.index(wanted) < SEVERITIES.index("minor"):
            because.append(unused)  # blind set 41: STTN's conda export lists CuPy and PyCUDA
            wanted = "minor"
        if placement.trains is False and rule.id in placement.scoring.training_only and wanted != "info":
            # audits V and W: weight_norm's missing backward in a vocoder nothing trains
            because.append(Reason("severity.no-training", "the product shows no training step (no backward, optimizer step or trainer): what only training meets is not on its path"))
            wanted = "info"
        elif rule.id in placement.scoring.training_only and wanted != "info" and (scripts := placement.untrained.get(result.path)) is not None:
            # audit AK: weight_norm in Bert-VITS2's older copies, which only the web UI loads
            because.append(Reason("severity.no-training-reach", f"only {scripts}, which run no training step, reach this module: what only training meets is not on their path"))
            wanted = "info"
        severity = placed_severity(wanted, place_role, guarded)
        if severity != wanted:
            because.append(_cap_reason(place_role, guarded))
        suppression = result.suppressions.get(suppression_key(match.span.line, match.cell))
        if suppression is None and match.span.end_line != match.span.line:
            suppression = result.suppressions.get(suppression_key(match.span.end_line, match.cell))
        silenced = suppression is not None and suppression.covers(rule.id, rule.name)
        aside: Reason | None = None
        if other is not None and rule.inventory != "kernel":
            aside = other
        elif older is not None:
            aside = older
        elif (dead_side := next((r for r in because if r.rule == DEAD_VERSION), None)) is not None:
            aside = dead_side  # the side of a torch-version test no target takes (statements.py)
        elif (dead := placement.dead_lines.get(result.path, {}).get(match.span.line)) is not None:
            aside = Reason("set-aside.dead-launch", f"the command runs `{dead}`, which is not in the tree")
        elif engine is not None and rule.inventory not in ("kernel", "package") and rule.category != "dependency":
            aside = engine  # the engine's own finding prices the module's replacement
        elif rule.unless == "torch-product" and placement.torch_product:
            aside = Reason("set-aside.torch-product", "the product's modules use PyTorch: this other framework's code is a backend beside it, not the product to port")
        elif severity == "info" and place_role == "test":
            aside = Reason("set-aside.test-performance", "a performance note about a test")
        elif rule.inventory == "package" and (own_package := _own_package(match, reach, roles)) is not None:
            aside = own_package  # the package's own kernels, in the inventory, price its port
        elif rule.category in placement.binding_categories and (binding := binding_at(placement.bindings.get(result.path, ()), match.span.line)) is not None:
            aside = Reason(KERNEL_BINDING, f"inside `{binding[2]}`, which calls {binding[3]}: rewritten with its kernel")
        finding = Finding(
            rule=rule.id,
            name=rule.name,
            category=rule.category,
            severity=severity,
            confidence=rule.confidence,
            path=result.path,
            span=match.span,
            cell=match.cell,
            message=rule.message,
            fix=rule.fix,
            affects=rule.affects,
            snippet=match.snippet,
            role=place_role,
            guarded=guarded,
            fingerprint=fingerprint,
            detail=match.detail,
            suppressed=silenced,
            suppression_reason=suppression.reason if silenced and suppression else None,
            inventory=rule.inventory,
            help_uri=rule.help_uri,
            because=tuple(because) if aside is None or aside in because else (*because, aside),
        )
        (placed.findings if aside is None else placed.set_aside).append(finding)
    placed.findings, same_edit = _drop_superseded(placed.findings, rules)
    placed.set_aside.extend(same_edit)
    return placed


def _behind_option(match: RawMatch, names: dict[str, str] | None, declared: dict[str, str]) -> Reason | None:
    """A package the module imports at load and uses only behind an option off by default:
    the import is an edit (moved under the option), the default path needs no package."""
    if not names or not match.detail:
        return None
    option = names.get(match.detail) or names.get(match.detail.partition(".")[0])
    if option is None:
        return None
    where = declared.get(option, "")
    return Reason(OPTION_IMPORT, f"`{match.detail}` is imported at load but used only under a test of `{option}`, off by default ({where}): the import moves under the option, the default path needs no package")


def _option_component(match: RawMatch, found: tuple[tuple[str, int, int, str], ...] | None) -> Reason | None:
    """A blocker inside a class or function the product uses only behind an option its
    default leaves off: the main path never builds it."""
    for name, start, end, why in found or ():
        if start <= match.span.line <= end:
            return Reason(OPTION_COMPONENT, f"inside `{name}`, which the product uses only behind {why}: the default path never reaches it")
    return None


_UNUSED = {
    UNREACHED: ("a registered component no config or code of the project names: built by nothing it runs", "registered and named by no config or code of the project"),
    UNCALLED: ("which nothing the product runs calls or names (only unused code, tests or examples, if anything): its blocker stops only who calls it by hand", "which nothing the product runs calls or names"),
}
"""What each reading of unused definitions says of a definition, and of those that alone
use an import, for the reason."""


def _unused(match: RawMatch, unused: Unreached | None, rule: str) -> Reason | None:
    """A blocker inside a definition the product never uses (a registered component no
    config names, a top-level definition nothing calls), or at the import of a name only
    such definitions use: the module loads, the failure is off the product's path
    (rules/judgement.yaml)."""
    if unused is None:
        return None
    owner = unused.component_at(match.span.line)
    if owner is not None:
        return Reason(rule, f"inside `{owner}`, {_UNUSED[rule][0]}")
    name = (match.detail or "").rpartition(".")[2]
    owners = dict(unused.names).get(name) if name else None
    if owners is None:
        return None
    return Reason(rule, f"`{name}` is used only by `{owners}`, {_UNUSED[rule][1]}: the import runs at load, the op on no path the product runs")


def _kernel_fallback(severity: str, because: list[Reason], scoring: Scoring) -> str:
    """A kernel (or a CUDA-only package) that keeps a working fallback: info when a TPU
    host takes the fallback by itself, major when a TPU tensor reaches it only after a
    known edit, else at most a small check (rules/judgement.yaml `score.kernel_fallback`)."""
    kept = next((r.rule for r in because if r.rule.startswith(("guard.", "fallback.", "alternative."))), None)
    cap = "info" if kept in scoring.kernel_info_guards else "major" if kept in scoring.kernel_edit_guards else scoring.kernel_fallback
    lowered = SEVERITIES[max(SEVERITIES.index(severity), SEVERITIES.index(cap))]
    if lowered != severity:
        because.append(Reason("severity.kernel-fallback", f"a kernel or CUDA-only package with a working fallback: {lowered}"))
    return lowered


def _own_extension(match: RawMatch, rule: Rule, reach: Reachability | None, scoring: Scoring) -> Reason | None:
    """A call into a compiled library the project builds itself (rules/judgement.yaml
    `score.own_extension_bindings`): the Python side of its kernels, priced with them."""
    if reach is None or rule.id not in scoring.own_extension_bindings or not match.detail:
        return None
    name = next((part for part in reversed(match.detail.split(".")) if part in reach.built), None)
    return Reason(OWN_EXTENSION, f"`{name}` is built by {reach.built[name]}: ported with its kernels") if name is not None else None


def _known_op(detail: str | None, scoring: Scoring) -> str | None:
    """The standard op a kernel's name, or an imported op's last name, spells."""
    return known_op(detail.rpartition(".")[2] if detail else None, scoring.known_ops)


def _drop_in(match: RawMatch, rule: Rule, scoring: Scoring) -> Reason | None:
    """A CUDA-only package's module that has a drop-in PyTorch module (rules/judgement.yaml
    `score.caps.drop_in`: `from apex import amp`), or a configuration key whose value alone
    picks the package (`score.caps.config_switch`: `distributed_type: DEEPSPEED`):
    replaced by an edit."""
    if match.detail and match.detail in scoring.config_switch.get(rule.id, ()):
        return Reason(CONFIG_SWITCH, f"`{match.snippet or match.detail}` picks it in a launch config: switching the value is an edit, not a stack to port")
    globs = scoring.drop_in.get(rule.id)
    if not globs or not match.detail or not any(fnmatchcase(match.detail, glob) for glob in globs):
        return None
    return Reason(DROP_IN, f"`{match.detail}` has a drop-in PyTorch module: replacing it is an edit, not a dependency to port")


def _own_package(match: RawMatch, reach: Reachability | None, roles: Roles) -> Reason | None:
    """An import of a CUDA-only package's name that is the project's own package holding
    its own compiled code (`pointnet2_ops`, built from the repository by its setup.py): the
    code is in the tree and its kernels are in the inventory, so the import is no external
    dependency to replace. Not when that code is a submodule or other code priced apart:
    there the import carries the product's cost."""
    if reach is None or not reach.own_packages or not match.detail:
        return None
    name = match.detail.partition(".")[0]
    source = reach.own_packages.get(name)
    if source is None or roles.placed(source)[0] not in PRODUCT_ROLES or roles.optional(source) is not None:
        return None
    return Reason(OWN_PACKAGE, f"`{name}` is the project's own package, its compiled code in {source}: its kernels are priced in the inventory")


def _settle_pending(match: RawMatch, placement: Placement, path: str) -> tuple[tuple[Reason, ...], bool]:
    """A match under a test of a setting its file does not declare (`if model_args.use_qlora:`)
    is optional when the project declares that setting off by default and nowhere on: the
    test becomes a `guard.option`, with where the setting is declared. A test of a call of
    one of the project's availability checks (`if model_management.xformers_enabled():`)
    becomes a `guard.test`. Otherwise the pending mark goes, and the match keeps its full
    weight."""
    pending = [r for r in match.reasons if r.rule == PENDING]
    if not pending:
        return match.reasons, match.guarded
    rest = tuple(r for r in match.reasons if r.rule != PENDING)
    for test in pending:  # the innermost test first
        name = _setting_name(test.evidence)
        check = placement.checks.get(name)
        if check is not None:
            return (Reason("guard.test", f"{test.located(path).evidence}; `{name}` is true only where the package or CUDA is there ({check})"), *rest), True
        declared = placement.options_off.get(name)
        if declared is not None:
            return (Reason("guard.option", f"{test.located(path).evidence}; `{name}` is off by default ({declared})"), *rest), True
        compared = compared_setting(test.evidence)
        value = placement.option_values.get(compared[0]) if compared is not None else None
        if compared is not None and value is not None and not any(compared[1](v) for v in value[0]):
            if value[0][-1] == OTHER:  # a value nothing in the product gives (analyze/unpassed.py)
                return (Reason("guard.option", f"{test.located(path).evidence}; {value[1]}"), *rest), True
            said = value[0][0] if len(value[0]) == 1 else " or ".join(value[0])
            return (Reason("guard.option", f"{test.located(path).evidence}; `{compared[0]}` is {said} {'by default' if len(value[0]) == 1 else 'wherever the project sets it'} ({value[1]})"), *rest), True
    return rest, match.guarded


def _setting_name(evidence: str) -> str:
    """The setting a guard's test reads: `not cfg.use_qlora` -> `use_qlora`."""
    return evidence.strip("`").removeprefix("not ").strip().rstrip(":").split(";")[0].strip("`").rpartition(".")[2].strip()


def _launched(reasons: tuple[Reason, ...], guarded: bool, launched: dict[str, str]) -> tuple[tuple[Reason, ...], bool]:
    """An option guard (`if args.enable_deepspeed:`) on a setting the project's own launch
    scripts turn on is no guard: the product is run with it on. The finding keeps its full
    weight and says which script turns it on."""
    if not launched or not guarded:
        return reasons, guarded
    first = next((r for r in reasons if r.rule.startswith(("guard.", "fallback.", "alternative."))), None)
    if first is None or first.rule != "guard.option":
        return reasons, guarded
    name = _setting_name(first.evidence)
    script = launched.get(name)
    if script is None:
        return reasons, guarded
    rest = tuple(r for r in reasons if r is not first)
    still = any(r.rule.startswith(("guard.", "fallback.", "alternative.")) for r in rest)
    return (*rest, Reason("option.launched", f"`{name}` is turned on by {script}: the product runs with it")), still


def _guarded(severity: str, because: list[Reason], scoring: Scoring, rule_id: str) -> str:
    """Any other finding on a branch entered only with CUDA present (rules/judgement.yaml
    `score.guarded`): the TPU's branch exists, the edit is small. The first guard that
    fired decides: an option's guard (off unless asked for) keeps its weight."""
    kept = next((r.rule for r in because if r.rule.startswith("guard.")), None)
    if kept not in scoring.guarded_guards:
        return severity
    cap = "info" if rule_id in scoring.guarded_info_rules or kept in scoring.guarded_info_guards else scoring.guarded_cap
    lowered = SEVERITIES[max(SEVERITIES.index(severity), SEVERITIES.index(cap))]
    if lowered != severity:
        where = "in a block switched off" if kept in scoring.guarded_info_guards else "on a branch entered only with CUDA present"
        because.append(Reason("severity.guarded", f"{where}: {lowered}"))
    return lowered


def _unused_package(match: RawMatch, rule: Rule, imported: frozenset[str] | None) -> Reason | None:
    """A CUDA-only package a manifest lists that no product module imports, or imports only
    with a fallback (audit AQ: Bunny's `flash_attn` in pyproject.toml, every import of it
    under `try`; blind set 70: D-FINE's TensorRT, imported only by its deployment scripts):
    dropping the entry is the edit. Only for a rule whose uses are imports (no launcher,
    or config key matches it), so that a package run from the command line keeps its
    weight; a call matcher (`torch.compile(backend="tensorrt")`) reports its own use."""
    if not imported or rule.inventory != "package":
        return None  # the tree was not read, or the product imports nothing to judge by
    kinds = {m.kind for m in rule.matchers}
    if not kinds <= {"import", "dependency", "call"} or "import" not in kinds:
        return None
    names = [p for m in rule.matchers if m.kind == "import" for p in m.patterns]
    if any(module == name or module.startswith(name + ".") or fnmatchcase(module, name) for module in imported for name in names):
        return None
    return Reason(UNUSED_PACKAGE, f"`{match.detail or rule.name}` is listed, and no product module imports it without a fallback ({', '.join(names[:4])}): an entry to drop from the manifest")


def _fallback(match: RawMatch, rule: Rule, result: FileResult, reach: Reachability | None) -> Reason | None:
    """Kernels, and all of an optional extension's CUDA source: DESIGN.md's blocker is a
    kernel "on the main path"; other code in a lazily imported Python module (often lazy
    only to break an import cycle) keeps its own guards' verdict, except a CUDA-only
    package's import in a module every importer loads under a try or an if (blind set 12:
    alpaca_farm's flash_models, loaded only when flash-attn is installed)."""
    if reach is None:
        return None
    if reach.optional(result.path) and (rule.inventory == "kernel" or result.kind == "native"):
        return reach.why(result.path) or Reason("fallback.optional-module", f"{result.path} is only imported optionally")
    why = reach.why(result.path) if rule.inventory == "package" and reach.optional(result.path) else None
    if why is not None and why.rule in (GUARDED_MODULE, VARIANT, ENGINE_DEPLOY):
        return why  # a CUDA-only package imported by a module the product loads only by choice
    if rule.inventory == "kernel" and match.detail is not None:
        extension = match.detail.rpartition(".")[2]
        if extension in reach.optional_extensions:
            return reach.why(extension)
    return None


def _inside(inner: Finding, outer: Finding) -> bool:
    return inner.cell == outer.cell and (outer.span.line, outer.span.column) <= (inner.span.line, inner.span.column) and (
        inner.span.end_line,
        inner.span.end_column,
    ) <= (outer.span.end_line, outer.span.end_column)


def _drop_superseded(findings: list[Finding], rules: dict[str, Rule]) -> tuple[list[Finding], list[Finding]]:
    """A finding that a more specific rule's finding already covers is not counted twice,
    nor one of its own rule that is the receiver of another on the same line
    (`torch.cuda.current_stream().wait_stream(s)` is one stream edit, not two). One
    expression that is one edit (`supersedes_line`) keeps one finding; the others are set
    aside with that reason (a codemod still rewrites them with it)."""
    findings = _drop_nested_repeats(findings)
    covering = [f for f in findings if rules[f.rule].supersedes]
    if covering:
        findings = [f for f in findings if not any(f.rule in rules[c.rule].supersedes and _inside(f, c) for c in covering)]
    lines = [f for f in findings if rules[f.rule].supersedes_line]
    if not lines:
        return findings, []
    kept: list[Finding] = []
    aside: list[Finding] = []
    for f in findings:
        by = next(
            (c for c in lines if c is not f and f.rule in rules[c.rule].supersedes_line and (c.cell, c.span.line) == (f.cell, f.span.line)
             and (c.rule != f.rule or c.sort_key() < f.sort_key())),
            None,
        )  # fmt: skip
        if by is None:
            kept.append(f)
        else:
            aside.append(replace(f, because=(*f.because, Reason("set-aside.same-edit", f"one edit with {by.rule} at {by.path}:{by.span.line}"))))
    return kept, aside


def _drop_nested_repeats(findings: list[Finding]) -> list[Finding]:
    by_place: dict[tuple[str, int | None, int], list[Finding]] = {}
    for finding in findings:
        by_place.setdefault((finding.rule, finding.cell, finding.span.line), []).append(finding)
    if all(len(group) == 1 for group in by_place.values()):
        return findings
    dropped: set[int] = set()
    for group in by_place.values():
        for a in group:
            for b in group:
                if a is not b and a.snippet != b.snippet and (b.snippet.startswith(a.snippet) or a.snippet.startswith(b.snippet)):
                    # one is the receiver of the other (`cuda.current_stream().wait_stream(s)`);
                    # keep the one that starts first: it names the CUDA call itself. A call in
                    # another's arguments (`set_device(device_count())`) is a second edit.
                    later = max(a, b, key=lambda f: (f.span.column, -len(f.snippet), f.span.end_column, f.fingerprint))
                    dropped.add(id(later))
    return [f for f in findings if id(f) not in dropped]
