"""A team's own rule is light (issue 13 point 4): id, name, category, severity, message and
match are enough; the rest has documented defaults; a user file may bring its own category.
Built-in rules stay strict."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset
from tpucheck.ruleset.loader import parse_rule_file

MINIMAL = dedent("""\
    rules:
      - id: ACME001
        name: acme-cuda-wrapper
        category: acme-internal
        severity: major
        message: Our `acme.gpu.launch` wrapper only runs on CUDA.
        match:
          call: acme.gpu.launch
    """)


def test_minimal_rule_loads_with_defaults() -> None:
    rules, _, problems = parse_rule_file(MINIMAL, "team/acme.yaml")
    assert problems == []
    [rule] = rules
    assert (rule.category, rule.affects, rule.effort_low, rule.effort_high, rule.effort_per) == (
        "acme-internal", ("training", "inference"), 1.0, 4.0, "occurrence",
    )  # fmt: skip
    assert (rule.fix_tpu, rule.docs, rule.flag_examples, rule.pass_examples) == ("", (), (), ())


def test_minimal_rule_finds_and_reports_its_category(tmp_path: Path) -> None:
    (tmp_path / "acme.yaml").write_text(MINIMAL)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("import acme.gpu\n\nacme.gpu.launch(kernel)\n")
    ruleset = load_ruleset([tmp_path / "acme.yaml"])
    result = scan(str(tmp_path / "src"), ruleset, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.path, f.span.line, f.span.column, f.severity, f.category) for f in result.findings] == [
        ("ACME001", "a.py", 3, 1, "major", "acme-internal")
    ]
    assert result.counts_by_category()["acme-internal"] == 1


def test_built_in_rules_stay_strict() -> None:
    _, _, problems = parse_rule_file(MINIMAL, "rules/acme.yaml")
    assert sorted((p.line, p.message) for p in problems) == [
        (2, "a built-in rule needs `fix.tpu`"),
        (2, "a built-in rule needs `flag` examples"),
        (2, "a built-in rule needs `pass` examples"),
        (4, "a built-in rule's category is one of custom-kernel, cuda-api, device-placement, unsupported-op, "
            "dynamic-shape, host-sync, precision, distributed, dependency, hf-transformers, build"),
    ]  # fmt: skip


def test_a_category_must_still_look_like_one() -> None:
    _, _, problems = parse_rule_file(MINIMAL.replace("acme-internal", "Acme Internal"), "team/acme.yaml")
    assert [(p.line, p.field) for p in problems] == [(4, "rule ACME001 category")]


def test_flag_examples_may_mark_the_expected_line(tmp_path: Path) -> None:
    marked = MINIMAL + (
        "    examples:\n"
        "      flag:\n"
        "        - |\n"
        "          import acme.gpu\n"
        "          x = 1\n"
        "          acme.gpu.launch(kernel)  # expect\n"
        "        - |\n"
        "          import acme.gpu\n"
        "          acme.gpu.launch(kernel)\n"
        "          y = 2  # expect\n"
    )
    rules, _, problems = parse_rule_file(marked, "team/acme.yaml")
    assert problems == []
    from tpucheck.analyze.rule_examples import rule_examples, run_example

    ruleset = load_ruleset().with_rules(tuple(rules))
    outcomes = [run_example(ruleset, rules[0], example, expect, number) for expect, number, example in rule_examples(rules[0])]
    assert [o.problem for o in outcomes] == [None, "not flagged on line 3 marked `# expect` (flagged on 2)"]


def test_a_team_rule_can_lower_a_tensor_of_a_few_scalars(tmp_path: Path) -> None:
    """`scalars_at_most`: a tensor built from a literal of a few scalars (a counter) weighs
    at most that; data of the same dtype keeps the rule's severity."""
    rule = dedent("""\
        rules:
          - id: ACME002
            name: acme-no-int64-on-device
            category: acme-internal
            severity: major
            scalars_at_most: info
            message: Our accelerator has no fast int64 path for device tensors.
            match:
              keyword: dtype
              value: 'torch\\.int64'
        """)
    (tmp_path / "acme.yaml").write_text(rule)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(
        "import torch\n\n\ndef f(count, total, values):\n"
        "    c = torch.tensor([count, total], dtype=torch.int64)\n"
        "    d = torch.tensor(values, dtype=torch.int64)\n"
        "    return c, d\n"
    )
    result = scan(str(tmp_path / "src"), load_ruleset([tmp_path / "acme.yaml"]), ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.span.line, f.severity, tuple(r.rule for r in f.because)) for f in result.findings if f.rule == "ACME002"] == [
        ("ACME002", 5, "info", ("place.scalars",)),
        ("ACME002", 6, "major", ()),
    ]
