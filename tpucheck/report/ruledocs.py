"""Rule knowledge as people read it: `tpucheck rules`, `tpucheck explain` and docs/rules.md.

The rules' YAML already holds everything a user needs to act on a finding (why it matters
on a TPU, the fix per target, what is matched, examples both ways, sources). This module
only renders it — as a compact table, a terminal page per rule, JSON, and one Markdown
page — so all of them say the same thing, and every finding's help link (`help_uri`)
lands on a section that exists. Rendering is deterministic (no dates, no versions, no
machine paths), so docs/rules.md can be checked against the rules by a test.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from fnmatch import fnmatch
from typing import Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from tpucheck.findings import CATEGORIES
from tpucheck.report.phrases import Segment, describe_matcher, describe_where, plain
from tpucheck.report.prose import first_sentence
from tpucheck.ruleset.examples import example_path
from tpucheck.ruleset.judgement import Scoring
from tpucheck.ruleset.model import (
    HELP_BASE,
    TARGETS,
    Example,
    Rule,
    Ruleset,
    Where,
)

REGENERATE_COMMAND = "python -m tpucheck rules --format markdown -o docs/rules.md"
"""How docs/rules.md is made; printed in the page itself and by the test that guards it."""

SEVERITY_MEANING = {
    "blocker": "the product cannot run on the target until it is replaced: a CUDA kernel on the main path with no fallback, a CUDA-only package imported unconditionally, an op registered only for CUDA",
    "major": "fails or runs wrong on the target until edited, and the edit is known",
    "minor": "a mechanical rename",
    "info": "a performance note; not scored",
}

SEVERITY_STYLE = {"blocker": "bold red", "major": "yellow", "minor": "cyan", "info": "dim"}
CODE_STYLE = "cyan"

_EFFORT_PER = {"occurrence": "per occurrence", "file": "per file", "project": "once per project"}
_INVENTORY = {
    "kernel": "inventory of custom kernels",
    "package": "inventory of CUDA-only packages",
    "reference": "inventory of PyTorch reference paths (kernels of the same op cost half)",
    "tpu-support": "inventory of TPU support the code already has",
}
TARGET_NAMES = {"torchtpu": "TorchTPU", "xla": "PyTorch/XLA"}


def anchor(rule: Rule) -> str:
    """The rule's fragment in docs/rules.md: its id lowercased, stable across renames."""
    return rule.anchor


def help_uri(rule: Rule) -> str:
    """The page a finding of this rule links to (JSON report, SARIF `helpUri`)."""
    return rule.help_uri


def effort_text(rule: Rule) -> str:
    return f"{rule.effort_low:g}–{rule.effort_high:g} h {_EFFORT_PER.get(rule.effort_per, 'per ' + rule.effort_per)}"


def summary_line(rule: Rule) -> str:
    """The message's first sentence: what the compact table shows."""
    return first_sentence(rule.message)


# --- Examples ------------------------------------------------------------------------------

_LANGUAGES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("*.py", "*.pyi"), "python"),
    (("*.ipynb",), "json"),
    (("*.cu", "*.cuh"), "cuda"),
    (("*.c", "*.cc", "*.cpp", "*.cxx", "*.h", "*.hh", "*.hpp", "*.hxx"), "cpp"),
    (("Dockerfile", "Dockerfile.*", "*.Dockerfile", "*.dockerfile", "Containerfile"), "dockerfile"),
    (("CMakeLists.txt", "*.cmake"), "cmake"),
    (("*.sh", "*.bash", "*.slurm", "*.sbatch"), "bash"),
    (("*.yaml", "*.yml"), "yaml"),
    (("*.toml",), "toml"),
    (("*.cfg", "*.ini"), "ini"),
)


def example_language(path: str) -> str:
    """The highlighting language for an example file (a Pygments and a GitHub name)."""
    name = path.rsplit("/", 1)[-1]
    for globs, language in _LANGUAGES:
        if any(fnmatch(name, glob) for glob in globs):
            return language
    return "text"


# --- JSON ----------------------------------------------------------------------------------


def _where_dict(where: Where | None) -> dict[str, Any] | None:
    if where is None:
        return None
    return {"loop": where.loop, "module": where.module, "fatal": where.fatal, "functions": list(where.functions), "decorated": list(where.decorated), "otherwise": where.otherwise}


def _examples(rule: Rule, examples: Iterable[Example]) -> list[dict[str, str]]:
    return [{"code": e.code, "path": example_path(rule, e), "language": example_language(example_path(rule, e))} for e in examples]


def autofix_text(rule: Rule) -> str | None:
    """What `tpucheck fix` does for this rule, one line; None when it has no codemod."""
    if rule.codemod is None:
        return None
    from tpucheck.ruleset.codemods import CODEMODS

    info = CODEMODS.get(rule.codemod.name)
    how = "safe: applied by `tpucheck fix`, each edit it cannot prove safe only with --unsafe-fixes" if rule.codemod.safe else "unsafe: applied by `tpucheck fix --unsafe-fixes`"
    text = f"{rule.codemod.name} ({how})"
    if info is not None:
        text += f". {info.does}"
        if info.unsafe and rule.codemod.safe:
            text += f" With --unsafe-fixes: {info.unsafe}"
    return text


def rule_to_dict(rule: Rule) -> dict[str, Any]:
    """Every fact of a rule, for `rules --format json` and `explain --format json`."""
    return {
        "id": rule.id,
        "name": rule.name,
        "category": rule.category,
        "severity": rule.severity,
        "confidence": rule.confidence,
        "affects": list(rule.affects),
        "effort": {"low": rule.effort_low, "high": rule.effort_high, "per": rule.effort_per},
        "message": rule.message,
        "fix": {"tpu": rule.fix_tpu, "xla": rule.fix_xla},
        "docs": list(rule.docs),
        "inventory": rule.inventory,
        "where": _where_dict(rule.where),
        "supersedes": list(rule.supersedes),
        "ops": list(rule.ops),
        "codemod": None if rule.codemod is None else {"name": rule.codemod.name, "safe": rule.codemod.safe},
        "match": [plain(describe_matcher(m)) for m in rule.matchers],
        "examples": {"flag": _examples(rule, rule.flag_examples), "pass": _examples(rule, rule.pass_examples)},
        "source": rule.source,
        "help_uri": help_uri(rule),
    }


# --- Markdown ------------------------------------------------------------------------------


def _md_code(text: str) -> str:
    """An inline code span that survives backticks inside the text."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md(segments: Iterable[Segment]) -> str:
    return "".join(s.text if s.kind == "text" else _md_code(s.text) for s in segments)


def _md_block(code: str, language: str) -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{code.rstrip(chr(10))}\n{fence}"


def _md_examples(rule: Rule, title: str, examples: Sequence[Example]) -> list[str]:
    if not examples:
        return []
    out = [f"**{title}:**", ""]
    for example in examples:
        path = example_path(rule, example)
        if _labelled(examples):
            out += [f"In {_md_code(path)}:", ""]
        out += [_md_block(example.code, example_language(path)), ""]
    return out


def judged_by_target(ruleset: Ruleset) -> dict[str, dict[str, Rule | None]]:
    """Each rule as every target judges it (its own `targets:` and the category defaults);
    None where the target leaves the rule out (`severity: skip`)."""
    variants = {target: ruleset.for_target(target).by_id() for target in TARGETS}
    return {rule.id: {target: variants[target].get(rule.id) for target in TARGETS} for rule in ruleset.rules}


def target_lines(rule: Rule, judged: dict[str, Rule | None] | None) -> list[str]:
    """`On TorchTPU: info, major inside torch.compile` when the targets judge it apart."""
    if not judged or len({(r.severity, r.where) if r is not None else None for r in judged.values()}) < 2:
        return []
    lines = []
    for target, variant in judged.items():
        if variant is None:
            said = "not reported on this target"
        else:
            where = describe_where(variant)
            said = _md(where) if where is not None else variant.severity
        lines += [f"**On {TARGET_NAMES.get(target, target)}:** {said}", ""]
    return lines


def markdown_rule(rule: Rule, judged: dict[str, Rule | None] | None = None) -> str:
    """One rule's section of docs/rules.md, with its explicit anchor; ends with a newline.
    `judged`: the rule as each target judges it, when the caller knows the defaults."""
    lines = [
        f'<a id="{anchor(rule)}"></a>',
        "",
        f"### {rule.id} {rule.name}",
        "",
        f"**{rule.category}** · **{rule.severity}** · confidence {rule.confidence}"
        f" · affects {', '.join(rule.affects)} · effort {effort_text(rule)}",
        "",
        rule.message,
        "",
        f"**Fix on TorchTPU:** {rule.fix_tpu}",
        "",
    ]
    if rule.fix_xla:
        lines += [f"**Fix on PyTorch/XLA:** {rule.fix_xla}", ""]
    autofix = autofix_text(rule)
    if autofix is not None:
        lines += [f"**Autofix:** {autofix}", ""]
    where = describe_where(rule)
    if where is not None:
        lines += [f"**When it applies:** {_md(where)}", ""]
    lines += target_lines(rule, judged)
    if rule.unless == "guard":
        lines += ["**Not reported** inside the condition of a CUDA guard or test skip (`if torch.cuda.is_available():` over CUDA code, `pytest.mark.skipif(...)`); kept where it picks a device.", ""]
    lines += ["**What it matches:**", ""]
    lines += [f"- {_md(describe_matcher(m))}" for m in rule.matchers]
    lines.append("")
    if rule.ops:
        lines += [f"**ATen operators:** {', '.join(_md_code('aten::' + op) for op in rule.ops)} (what its severity on each target was judged from).", ""]
    if rule.supersedes:
        links = ", ".join(f"[{other}](#{other.lower()})" for other in rule.supersedes)
        lines += [f"**Supersedes:** {links} (their findings inside this rule's findings are dropped).", ""]
    if rule.inventory:
        lines += [f"**Inventory:** each finding is listed in the report's {_INVENTORY[rule.inventory]}.", ""]
    lines += _md_examples(rule, "Flags", rule.flag_examples)
    lines += _md_examples(rule, "Does not flag", rule.pass_examples)
    if rule.docs:
        lines += ["**Sources:**", ""]
        lines += [f"- <{url}>" for url in rule.docs]
        lines.append("")
    file = rule.source.rpartition(":")[0] or rule.source
    defined = f"[{_md_code(file)}](../{file})" if file.startswith("rules/") else _md_code(file)
    lines += [f"Defined in {defined}.", ""]
    return "\n".join(lines)


def _by_category(rules: Iterable[Rule]) -> list[tuple[str, list[Rule]]]:
    """Rules grouped in the report's category order (unknown categories last), ids sorted."""
    groups: dict[str, list[Rule]] = {}
    for rule in sorted(rules, key=lambda r: r.id):
        groups.setdefault(rule.category, []).append(rule)
    order = {category: index for index, category in enumerate(CATEGORIES)}
    return sorted(groups.items(), key=lambda item: (order.get(item[0], len(order)), item[0]))



def _weight_text(scoring: Scoring, severity: str) -> str:
    """A blocker's weight, and the edit blocker's where it differs (no kernel or package)."""
    weight = f"{scoring.severity_weight[severity]:g}"
    if severity == "blocker" and scoring.edit_blocker_weight is not None and scoring.edit_blocker_weight != scoring.severity_weight[severity]:
        weight += f" ({scoring.edit_blocker_weight:g} for an edit: no kernel or CUDA-only package to replace)"
    return weight

def markdown_page(rules: Iterable[Rule], scoring: Scoring, judged: dict[str, dict[str, Rule | None]] | None = None) -> str:
    """docs/rules.md: intro, severities, suppression, contents by category, one section per rule."""
    groups = _by_category(rules)
    count = sum(len(members) for _, members in groups)
    lines = [
        "# tpucheck rules",
        "",
        f"<!-- Generated from rules/*.yaml by `{REGENERATE_COMMAND}`; do not edit by hand."
        " tests/test_rule_docs.py fails when this page and the rules disagree. -->",
        "",
        f"The {count} rules tpucheck applies, one section each: why the pattern matters on a TPU,",
        "the fix on TorchTPU and on PyTorch/XLA, what exactly is matched, and code the rule",
        "flags and does not flag. Every finding links here: the JSON report's `help_uri` is",
        f"`{HELP_BASE}#<rule id in lower case>`, e.g. `#ck001`.",
        "`tpucheck explain ID-or-NAME` prints the same section in a terminal.",
        "",
        "## Severities",
        "",
        "| severity | meaning | weight per hour of work |",
        "|---|---|---|",
    ]
    lines += [f"| {severity} | {meaning} | {_weight_text(scoring, severity)} |" for severity, meaning in SEVERITY_MEANING.items()]
    confidences = ", ".join(f"{name} {factor:g}" for name, factor in scoring.confidence_factor.items())
    lines += [
        "",
        f"Confidence says how sure a match is a real problem and scales the weight ({confidences}).",
        "A rule with a *When it applies* line has its severity only in those places (a host sync",
        "in the training step) and a lower one elsewhere (the same sync once at set-up).",
        "",
        "## Suppressing a finding",
        "",
        "    torch.cuda.empty_cache()  # tpucheck: ignore[CA007] -- measured: harmless on TPU",
        "",
        "`# tpucheck: ignore[ID, name, ...] -- reason` on the first or last line of a finding",
        "silences those rules there; a bare `# tpucheck: ignore` silences all. Suppressed",
        "findings are counted and listed in the JSON report, not scored. To leave a rule out of",
        "a whole scan, use `tpucheck scan --ignore ID`.",
        "",
        "## Contents",
        "",
    ]
    for category, members in groups:
        lines.append(f"- [{category}](#{category}) ({len(members)})")
        lines += [f"  - [{rule.id} {rule.name}](#{anchor(rule)}) · {rule.severity}" for rule in members]
    lines.append("")
    for category, members in groups:
        lines += [f"## {category}", ""]
        for rule in members:
            lines.append(markdown_rule(rule, (judged or {}).get(rule.id)))
    return "\n".join(lines).rstrip("\n") + "\n"


# --- Terminal (rich) ----------------------------------------------------------------------


def _inline(text: str, style: str = "") -> Text:
    """Prose with its `code` spans highlighted (backticks kept, so no-colour output reads the same)."""
    out = Text(style=style)
    for index, part in enumerate(re.split(r"(`[^`]+`)", text)):
        out.append(part, style=CODE_STYLE if index % 2 else None)
    return out


def _rich(segments: Iterable[Segment]) -> Text:
    out = Text()
    for segment in segments:
        if segment.kind == "text":
            out.append(segment.text)
        elif segment.kind == "regex":
            out.append(f'"{segment.text}"', style=CODE_STYLE)
        else:
            out.append(segment.text, style=CODE_STYLE)
    return out


def _heading(text: str) -> Text:
    return Text(text, style="bold")


def _bullets(items: Iterable[Text]) -> Padding:
    """A bulleted list whose wrapped lines stay indented under their text."""
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column()
    for item in items:
        grid.add_row("•", item)
    return Padding(grid, (0, 0, 0, 2))


def _labelled(examples: Sequence[Example]) -> bool:
    """Name every example's file once any has its own: an unnamed one then reads as a new file."""
    return any(example.path for example in examples)


def _examples_block(rule: Rule, title: str, examples: Sequence[Example]) -> list[RenderableType]:
    if not examples:
        return []
    out: list[RenderableType] = [Text(), _heading(title)]
    for index, example in enumerate(examples):
        path = example_path(rule, example)
        if index:
            out.append(Text())
        if _labelled(examples):
            out.append(Padding(Text(path, style="dim"), (0, 0, 0, 2)))
        code = Syntax(example.code.rstrip("\n"), example_language(path), theme="ansi_dark", background_color="default", word_wrap=True)
        out.append(Padding(code, (0, 0, 0, 4)))
    return out


def terminal_rule(rule: Rule) -> Group:
    """`tpucheck explain`: everything the rules know about one rule, in reading order."""
    style = SEVERITY_STYLE.get(rule.severity, "")
    parts: list[RenderableType] = [
        Text.assemble(
            (f"{rule.id} {rule.name}", "bold"),
            f" · {rule.category} · ",
            (rule.severity, style),
            f" · confidence {rule.confidence} · {', '.join(rule.affects)} · effort {effort_text(rule)}",
        ),
        Text(),
        _inline(rule.message),
        Text(),
        Text.assemble(("Fix on TorchTPU: ", "bold"), _inline(rule.fix_tpu)),
    ]
    if rule.fix_xla:
        parts.append(Text.assemble(("Fix on PyTorch/XLA: ", "bold"), _inline(rule.fix_xla)))
    autofix = autofix_text(rule)
    if autofix is not None:
        parts.append(Text.assemble(("Autofix: ", "bold"), _inline(autofix)))
    where = describe_where(rule)
    if where is not None:
        parts += [Text(), Text.assemble(("When it applies: ", "bold"), _rich(where))]
    parts += [Text(), _heading("What it matches:")]
    parts.append(_bullets(_rich(describe_matcher(m)) for m in rule.matchers))
    if rule.ops:
        parts.append(Text.assemble(("ATen operators: ", "bold"), ", ".join(f"aten::{op}" for op in rule.ops)))
    if rule.supersedes:
        parts.append(Text.assemble(("Supersedes: ", "bold"), ", ".join(rule.supersedes), " (their findings inside this rule's findings are dropped)"))
    if rule.inventory:
        parts.append(Text.assemble(("Inventory: ", "bold"), f"each finding is listed in the report's {_INVENTORY[rule.inventory]}"))
    parts += _examples_block(rule, "Flags:", rule.flag_examples)
    parts += _examples_block(rule, "Does not flag:", rule.pass_examples)
    if rule.docs:
        parts += [Text(), _heading("Sources:")]
        # a link is never folded: a terminal opens it only whole
        parts.append(Group(*(Text(f"  • {url}", no_wrap=True, overflow="ignore") for url in rule.docs)))
    parts += [Text(), Text.assemble(("Help: ", "bold"), help_uri(rule))]
    parts.append(Text(f"Defined in {rule.source}", style="dim"))
    return Group(*parts)


def _affects_short(affects: Sequence[str]) -> str:
    return "both" if set(affects) >= {"training", "inference"} else ", ".join(affects)


def terminal_table(rules: Sequence[Rule], long: bool = False) -> Group:
    """`tpucheck rules`: a rule per entry, its id, severity and name on one line and its
    summary wrapped under them at spaces, so the message gets the width whatever the
    terminal; `--long` adds category, confidence, workloads and the TorchTPU fix.
    `explain ID` has the rest."""
    entries: list[RenderableType] = []
    for rule in rules:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=7, no_wrap=True)
        grid.add_column(ratio=1)
        head = Text.assemble((rule.severity, SEVERITY_STYLE.get(rule.severity, "")), " ", (rule.name, "bold"))
        if long:
            head.append(f"  {rule.category} · confidence {rule.confidence} · {_affects_short(rule.affects)}", style="dim")
        body = Text(summary_line(rule))
        if long and rule.fix:
            body.append(f"\nfix: {first_sentence(rule.fix)}", style="dim")
        if long and rule.codemod is not None:
            body.append(f"\nautofix: {rule.codemod.name} ({'safe' if rule.codemod.safe else 'unsafe: --unsafe-fixes'})", style="dim")
        grid.add_row(Text(rule.id, style="magenta"), Group(head, body))
        entries.append(grid)
    return Group(*entries)
