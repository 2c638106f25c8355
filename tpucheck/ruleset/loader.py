"""Load rule files: safe YAML, JSON Schema validation, then checks a schema cannot express.

Every problem names the file, the line and the field, because rule files are written
by hand (ours and our users') and a validation error without a place is useless.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from tpucheck.findings import CATEGORIES
from tpucheck.ruleset.judgement import Judgement, build_judgement
from tpucheck.ruleset.matchers import GLOB_CHARS, as_patterns, build_matcher, derive_needles
from tpucheck.ruleset.model import (
    PYTHON_KINDS,
    CodemodRef,
    DeviceContext,
    Example,
    HostData,
    Rule,
    Ruleset,
    TargetOverride,
    Where,
)
from tpucheck.ruleset.problems import Problems, RuleProblem, schema_problems
from tpucheck.ruleset.store import fetch, keep, store_key
from tpucheck.ruleset.yamlsource import LocatedYaml, YamlSourceError, load_located


class RuleFileError(Exception):
    """One or more invalid rule files; str() is the first problem on one line."""

    def __init__(self, problems: list[RuleProblem]) -> None:
        super().__init__(str(problems[0]))
        self.problems = problems


def builtin_rules_dir() -> Path:
    """Rules ship inside the wheel as `tpucheck/rules`; a source checkout keeps them at `rules/`."""
    packaged = Path(__file__).resolve().parent.parent / "rules"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent.parent / "rules"


@lru_cache(maxsize=1)
def rule_schema() -> dict[str, Any]:
    text = resources.files("tpucheck").joinpath("schema/rules.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def rule_files(extra: Iterable[str | Path] = (), *, builtin: bool = True) -> list[Path]:
    files: list[Path] = sorted(builtin_rules_dir().glob("*.yaml")) if builtin else []
    for item in extra:
        path = Path(item)
        if path.is_dir():
            files.extend(sorted(path.glob("*.yaml")) + sorted(path.glob("*.yml")))
        else:
            files.append(path)
    return files


def load_ruleset(extra: Iterable[str | Path] = (), *, builtin: bool = True) -> Ruleset:
    """Load the built-in rules and any extra rule files; raise RuleFileError on any problem."""
    extra = tuple(extra)
    if builtin and not extra:
        return _builtin_ruleset()
    ruleset, problems = _load(rule_files(extra, builtin=builtin))
    if problems:
        raise RuleFileError(problems)
    return ruleset


@lru_cache(maxsize=1)
def _builtin_ruleset() -> Ruleset:
    """The built-in rules alone, loaded once per process: they ship with the package and
    cannot change under it, and validating them is most of a test session's start-up."""
    ruleset, problems = _load(rule_files((), builtin=True))
    if problems:
        raise RuleFileError(problems)
    return ruleset


def load_ruleset_lenient(extra: Iterable[str | Path] = ()) -> tuple[Ruleset, list[RuleProblem]]:
    """The built-in rules plus every extra rule file that has no problem, and the problems of
    the others: a broken rule file of the user's must not stop the scan (its rules are left
    out and the problems reported). A problem in the built-in rules is a bug and raises."""
    files = rule_files(extra)
    builtin = {_display(path) for path in rule_files(builtin=True)}
    reported: list[RuleProblem] = []
    while True:
        ruleset, problems = _load(files)
        if not problems:
            return ruleset, reported
        bad = {problem.file for problem in problems} - builtin
        if not bad:
            raise RuleFileError(problems)
        reported += [problem for problem in problems if problem.file in bad]
        files = [path for path in files if _display(path) not in bad]


def _load(files: list[Path]) -> tuple[Ruleset, list[RuleProblem]]:
    """The rule set these files make and its problems: from the store (store.py) when they
    are unchanged since a run built it, else built and stored."""
    key = store_key(files, also=(builtin_rules_dir() / "judgement.yaml",))
    stored = fetch(key) if key is not None else None
    if stored is not None:
        return stored
    ruleset, problems = _build(files)
    if key is not None:
        keep(key, ruleset, problems)
    return ruleset, problems


def _build(files: list[Path]) -> tuple[Ruleset, list[RuleProblem]]:
    problems: list[RuleProblem] = []
    rules: list[Rule] = []
    device: DeviceContext | None = None
    places: dict[str, Where] = {}
    target_defaults: dict[tuple[str, str], TargetOverride] = {}
    host = HostData()
    judgement: Judgement | None = None
    backend_names = None
    for path in files:
        display = _display(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(RuleProblem(display, None, "", f"cannot read rule file: {exc}"))
            continue
        file_rules, contexts, file_problems = parse_rule_file(text, display)
        problems.extend(file_problems)
        rules.extend(file_rules)
        if contexts.device is not None:
            device = contexts.device
        places.update(contexts.places or {})
        target_defaults.update(contexts.targets or {})
        if contexts.host is not None:
            host = contexts.host
        if contexts.judgement is not None:
            judgement = contexts.judgement
        if contexts.backend_names is not None:
            backend_names = contexts.backend_names
    problems.extend(_duplicates(rules))
    problems.extend(_unknown_superseded(rules))
    rules = resolve_claims(rules)
    rules, place_problems = resolve_places(rules, places)
    problems.extend(place_problems)
    defaults, default_problems = _resolve_target_defaults(target_defaults, places)
    problems.extend(default_problems)
    ruleset = Ruleset(
        rules=tuple(sorted(rules, key=lambda r: r.id)),
        device=replace(device or DeviceContext(), backend_names=backend_names),
        sources=tuple(_display(p) for p in files),
        target_defaults=defaults,
        host=host,
        judgement=judgement or load_judgement(),
    )
    return ruleset, problems


def _display(path: Path) -> str:
    builtin = builtin_rules_dir()
    try:
        return "rules/" + path.resolve().relative_to(builtin.resolve()).as_posix()
    except ValueError:
        return str(path)


@dataclass(frozen=True, slots=True)
class FileContexts:
    """The `contexts:` section of a rule file."""

    device: DeviceContext | None = None
    places: dict[str, Where] | None = None
    targets: dict[tuple[str, str], TargetOverride] | None = None
    """(target, category) -> override, from `contexts.targets`."""
    host: HostData | None = None
    judgement: Judgement | None = None
    backend_names: re.Pattern[str] | None = None
    """`contexts.backend.names`: names that hold a distributed backend."""


def parse_rule_file(text: str, display: str) -> tuple[list[Rule], FileContexts, list[RuleProblem]]:
    try:
        doc = load_located(text)
    except YamlSourceError as exc:
        return [], FileContexts(), [RuleProblem(display, exc.line, "", str(exc))]
    if doc.data is None:
        return [], FileContexts(), []
    problems = schema_problems(doc, display, rule_schema())
    if problems:
        return [], FileContexts(), problems
    rules: list[Rule] = []
    for index, raw in enumerate(doc.data.get("rules", [])):
        rule, rule_problems = _build_rule(raw, ("rules", index), doc, display)
        problems.extend(rule_problems)
        if rule is not None:
            rules.append(rule)
    device = None
    contexts = doc.data.get("contexts", {})
    if "device" in contexts:
        device, device_problems = _build_device_context(contexts["device"], doc, display)
        problems.extend(device_problems)
    places = {name: where for name, raw in contexts.get("places", {}).items() if (where := _where(raw)) is not None}
    targets = {
        (target, category): _target_override(raw)
        for target, section in contexts.get("targets", {}).items()
        for category, raw in section.get("categories", {}).items()
    }
    backend_names = None
    if "backend" in contexts:
        names = Problems(doc, display)
        backend_names = names.regex(contexts["backend"]["names"], ("contexts", "backend", "names"))
        problems.extend(names.items)
    host = None
    if "host" in contexts:
        raw_host = contexts["host"]
        host = HostData(*(frozenset(raw_host.get(key, ())) for key in ("results", "modules", "annotations", "calls", "constructors", "keeps", "categories", "dim_first", "values")))
    judgement = None
    if "judgement" in doc.data:
        data_problems = Problems(doc, display)
        judgement = build_judgement(doc.data["judgement"], data_problems)
        problems.extend(data_problems.items)
    return rules, FileContexts(device, places or None, targets or None, host, judgement, backend_names), problems


DEFAULT_AFFECTS = ("training", "inference")
"""A rule that does not say which workload it touches touches both."""
DEFAULT_EFFORT: dict[str, dict[str, Any]] = {
    "blocker": {"low": 8, "high": 24},
    "major": {"low": 1, "high": 4},
    "minor": {"low": 0.25, "high": 1},
    "info": {"low": 0, "high": 0},
}
"""Hours per occurrence when a rule gives none: what the built-in rules of each severity
typically carry (a kernel to replace, an edit to make and check, a rename, a note)."""


def _build_rule(raw: dict[str, Any], path: tuple[str | int, ...], doc: LocatedYaml, display: str) -> tuple[Rule | None, list[RuleProblem]]:
    problems = Problems(doc, display)
    raw_matchers = raw["match"] if isinstance(raw["match"], list) else [raw["match"]]
    match_path: tuple[str | int, ...] = (*path, "match")
    matchers = []
    for index, raw_matcher in enumerate(raw_matchers):
        mpath = (*match_path, index) if isinstance(raw["match"], list) else match_path
        matcher = build_matcher(raw_matcher, mpath, problems)
        if matcher is not None:
            matchers.append(matcher)
    needles: list[tuple[str, ...]] = [(n,) if isinstance(n, str) else tuple(n) for n in raw.get("needles", [])]
    if "needles" not in raw:
        for index, matcher in enumerate(matchers):
            if matcher.kind not in PYTHON_KINDS or (matcher.kind == "string" and matcher.regex is None):
                continue
            derived = derive_needles(matcher)
            if derived is None:
                mpath = (*match_path, index) if isinstance(raw["match"], list) else match_path
                problems.add(mpath, "cannot derive a prefilter string from this pattern: declare `needles`")
            else:
                needles.extend(derived)
    examples = raw.get("examples", {})
    effort = raw.get("effort") or DEFAULT_EFFORT[raw["severity"]]
    fix = raw.get("fix", {})
    if display.startswith("rules/"):
        # The built-in rules are the product's knowledge: each names a category of the
        # report and proves itself on code it must and must not flag.
        if raw["category"] not in CATEGORIES:
            problems.add((*path, "category"), f"a built-in rule's category is one of {', '.join(CATEGORIES)}")
        for kind in ("flag", "pass"):
            if not examples.get(kind):
                problems.add((*path, "examples"), f"a built-in rule needs `{kind}` examples")
        if not fix.get("tpu"):
            problems.add((*path, "fix"), "a built-in rule needs `fix.tpu`")
    elif any(m.kind == "runtime" for m in matchers):
        problems.add(match_path, "`runtime` matchers are tpucheck's own (the findings of `tpucheck trace`)")
    if "kernel_kind" in raw and _inventory(raw) != "kernel":
        problems.add((*path, "kernel_kind"), "kernel_kind is only for rules with `inventory: kernel`")
    codemod = raw.get("codemod")
    if codemod is not None:
        from tpucheck.ruleset.codemods import CODEMODS

        if codemod["name"] not in CODEMODS:
            problems.add((*path, "codemod", "name"), f"unknown codemod {codemod['name']!r}: choose one of {', '.join(sorted(CODEMODS))}")
        if codemod["name"] == "config-value" and not codemod.get("values"):
            problems.add((*path, "codemod", "values"), "the config-value codemod needs `values` ({old: new})")
    if effort["low"] > effort["high"]:
        problems.add((*path, "effort", "low"), "effort.low is greater than effort.high")
    rule = Rule(
        id=raw["id"],
        name=raw["name"],
        category=raw["category"],
        severity=raw["severity"],
        confidence=raw.get("confidence", "high"),
        affects=tuple(raw.get("affects", DEFAULT_AFFECTS)),
        effort_low=float(effort["low"]),
        effort_high=float(effort["high"]),
        effort_per=effort.get("per", "occurrence"),
        message=raw["message"].strip(),
        fix_tpu=fix.get("tpu", "").strip(),
        fix_xla=fix["xla"].strip() if "xla" in fix else None,
        docs=tuple(raw.get("docs", ())),
        matchers=tuple(matchers),
        needles=tuple(dict.fromkeys(needles)),
        flag_examples=tuple(_example(e) for e in examples.get("flag", ())),
        pass_examples=tuple(_example(e) for e in examples.get("pass", ())),
        source=f"{display}:{doc.line_of(path) or 0}",
        inventory=_inventory(raw),
        kernel_kind=raw.get("kernel_kind"),
        installs_on_tpu=bool(raw.get("installs_on_tpu", False)),
        stack=raw.get("stack"),
        supersedes=tuple(raw.get("supersedes", ())),
        supersedes_line=tuple(raw.get("supersedes_line", ())),
        where=_where(raw.get("where")),
        targets=tuple((target, _target_override(override)) for target, override in sorted(raw.get("targets", {}).items())),
        unless=raw.get("unless"),
        scalars_at_most=raw.get("scalars_at_most"),
        tolerated_build_at_most=raw.get("tolerated_build_at_most"),
        host_build_at_most=raw.get("host_build_at_most"),
        ops=tuple(raw.get("ops", ())),
        codemod=CodemodRef(codemod["name"], bool(codemod["safe"]), tuple((str(k), str(v)) for k, v in (codemod.get("values") or {}).items())) if codemod is not None else None,
    )
    return (None if problems.items else rule), problems.items


def _target_override(raw: dict[str, Any]) -> TargetOverride:
    effort = raw.get("effort")
    return TargetOverride(
        severity=raw.get("severity"),
        cap=raw.get("cap"),
        where=_where(raw.get("where")),
        confidence=raw.get("confidence"),
        effort=(float(effort["low"]), float(effort["high"]), effort.get("per", "occurrence")) if effort else None,
    )


def _resolve_override(override: TargetOverride, places: dict[str, Where]) -> TargetOverride | str:
    """The override with a named place resolved, or the name when no place has it."""
    where = override.where
    if where is None or where.resolved:
        return override
    place = places.get(where.name or "")
    if place is None:
        return where.name or ""
    return replace(override, where=replace(place, name=where.name))


def _unknown_place(source: str, field: str, name: str, places: dict[str, Where]) -> RuleProblem:
    file, _, line = source.rpartition(":")
    known = ", ".join(sorted(places)) or "none defined"
    return RuleProblem(file or source, int(line) if line.isdigit() and int(line) else None, field, f"unknown place {name!r} (known: {known})")


def _resolve_target_defaults(
    defaults: dict[tuple[str, str], TargetOverride], places: dict[str, Where]
) -> tuple[tuple[tuple[str, str, TargetOverride], ...], list[RuleProblem]]:
    resolved = []
    problems = []
    for (target, category), override in sorted(defaults.items()):
        outcome = _resolve_override(override, places)
        if isinstance(outcome, str):
            problems.append(_unknown_place("rules/contexts.yaml", f"contexts.targets.{target}.categories.{category}.where", outcome, places))
            continue
        resolved.append((target, category, outcome))
    return tuple(resolved), problems


_CLAIMING_KINDS = ("call", "reference", "decorator")


def _may_reach(pattern: str, name: str) -> bool:
    """Whether a glob can match `name` or a name below it: its literal prefix and the name
    agree as far as both go."""
    literal = GLOB_CHARS.split(pattern, 1)[0]
    return literal.startswith(name) or name.startswith(literal)


def resolve_claims(rules: list[Rule]) -> list[Rule]:
    """Give each `residual` reference the patterns of every other matcher, in every rule
    file loaded, that can match at or below its names: what it leaves to them."""
    if not any(m.residual for rule in rules for m in rule.matchers):
        return rules
    others = [
        (m, pattern)
        for rule in rules
        for m in rule.matchers
        if m.kind in _CLAIMING_KINDS and not m.residual
        for pattern in m.patterns
    ]
    resolved = []
    for rule in rules:
        matchers = []
        for matcher in rule.matchers:
            if matcher.residual:
                claims = tuple(
                    dict.fromkeys(
                        ("exact" if m.exact else m.kind if m.kind == "reference" else "call", pattern)
                        for m, pattern in others
                        if any(_may_reach(pattern, name) for name in matcher.patterns)
                    )
                )
                matcher = replace(matcher, claims=claims)
            matchers.append(matcher)
        resolved.append(replace(rule, matchers=tuple(matchers)))
    return resolved


def resolve_places(rules: list[Rule], places: dict[str, Where]) -> tuple[list[Rule], list[RuleProblem]]:
    """`where: hot` names a place defined once in a `contexts.places` section."""
    resolved: list[Rule] = []
    problems = []
    for rule in rules:
        where = rule.where
        if where is not None and not where.resolved:
            place = places.get(where.name or "")
            if place is None:
                file, _, line = rule.source.rpartition(":")
                known = ", ".join(sorted(places)) or "none defined"
                problems.append(RuleProblem(file, int(line) or None, f"rule {rule.id} where", f"unknown place {where.name!r} (known: {known})"))
                continue
            rule = replace(rule, where=replace(place, name=where.name))
        targets = []
        for target, override in rule.targets:
            outcome = _resolve_override(override, places)
            if isinstance(outcome, str):
                problems.append(_unknown_place(rule.source, f"rule {rule.id} targets.{target}.where", outcome, places))
                outcome = replace(override, where=None)
            targets.append((target, outcome))
        resolved.append(replace(rule, targets=tuple(targets)))
    return resolved, problems


def _where(raw: dict[str, Any] | str | None) -> Where | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        return Where(False, (), (), "", name=raw)
    functions: list[str] = []
    decorated: list[str] = []
    for condition in raw["inside"]:
        if isinstance(condition, dict):
            target = functions if "function" in condition else decorated
            target.extend(as_patterns(condition.get("function") or condition.get("decorated") or []))
    return Where("loop" in raw["inside"], tuple(functions), tuple(decorated), raw["otherwise"], module="module" in raw["inside"], fatal="fatal" in raw["inside"])


def _inventory(raw: dict[str, Any]) -> str | None:
    value = raw.get("inventory", "package" if raw["category"] == "dependency" else "none")
    return None if value == "none" else value


def _example(raw: str | dict[str, str]) -> Example:
    if isinstance(raw, str):
        return Example(code=raw)
    return Example(code=raw["code"], path=raw.get("path"))


def _build_device_context(raw: dict[str, Any], doc: LocatedYaml, display: str) -> tuple[DeviceContext, list[RuleProblem]]:
    problems = Problems(doc, display)
    names = problems.regex(raw["names"], ("contexts", "device", "names"))
    context = DeviceContext(
        keywords=frozenset(raw["keywords"]),
        calls={k: tuple(v) for k, v in raw["calls"].items()},
        methods={k: tuple(v) for k, v in raw["methods"].items()},
        disabled_by=dict(raw.get("disabled_by", {})),
        names=names,
    )
    return context, problems.items


def _duplicates(rules: list[Rule]) -> list[RuleProblem]:
    problems = []
    seen_ids: dict[str, Rule] = {}
    seen_names: dict[str, Rule] = {}
    for rule in rules:
        file, _, line = rule.source.rpartition(":")
        for key, seen, label in ((rule.id, seen_ids, "id"), (rule.name, seen_names, "name")):
            if key in seen:
                problems.append(RuleProblem(file, int(line) or None, f"rule {rule.id} {label}", f"duplicate {label} {key!r} (also at {seen[key].source})"))
            else:
                seen[key] = rule
    return problems


def _unknown_superseded(rules: list[Rule]) -> list[RuleProblem]:
    known = {rule.id for rule in rules}
    problems = []
    for rule in rules:
        for other in rule.supersedes:
            if other == rule.id:
                file, _, line = rule.source.rpartition(":")
                problems.append(RuleProblem(file, int(line) or None, f"rule {rule.id} supersedes", "a rule cannot supersede itself"))
            elif other not in known:
                file, _, line = rule.source.rpartition(":")
                problems.append(RuleProblem(file, int(line) or None, f"rule {rule.id} supersedes", f"unknown rule id {other!r}"))
    return problems


def load_judgement() -> Judgement:
    """The built-in judgement alone (rules/judgement.yaml), without loading every rule."""
    path = builtin_rules_dir() / "judgement.yaml"
    _, contexts, problems = parse_rule_file(path.read_text(encoding="utf-8"), _display(path))
    if problems or contexts.judgement is None:
        raise RuleFileError(problems or [RuleProblem(_display(path), None, "", "no judgement section")])
    return contexts.judgement
