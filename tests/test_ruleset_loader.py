"""Invalid rule files: every problem names the file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpucheck.ruleset import RuleFileError, SelectionError, load_ruleset, select_rules
from tpucheck.ruleset.loader import parse_rule_file

GOOD = """\
rules:
  - id: X001
    name: sync
    category: cuda-api
    severity: major
    affects: [training]
    effort: {low: 0.1, high: 0.2}
    message: m
    fix: {tpu: t}
    docs: ["https://example.org"]
    match:
      call: torch.cuda.synchronize
    examples: {flag: ["a"], pass: ["b"]}
"""


def problems(text: str) -> list[str]:
    return [str(p) for p in parse_rule_file(text, "r.yaml")[2]]


def test_good_rule_loads_with_derived_needles() -> None:
    rules, _, found = parse_rule_file(GOOD, "r.yaml")
    assert found == []
    assert rules[0].needles == (("torch", "synchronize"),)
    assert rules[0].source == "r.yaml:2"


def test_yaml_syntax_error_has_line() -> None:
    assert problems(GOOD.replace("severity: major", "severity: [major")) == [problems(GOOD.replace("severity: major", "severity: [major"))[0]]
    [message] = problems(GOOD.replace("severity: major", "severity: [major"))
    assert message.startswith(("r.yaml:6: invalid YAML", "r.yaml:7: invalid YAML"))


def test_unknown_matcher_names_rule_and_line() -> None:
    assert problems(GOOD.replace("      call: torch", "      calls: torch")) == [
        "r.yaml:12: rule X001 match: unknown matcher: expected one of call, reference, import, decorator, method, keyword, attribute, string, native, dependency, file, define, config, option, runtime"
    ]


def test_bad_regex_names_field() -> None:
    text = GOOD.replace("      call: torch.cuda.synchronize", "      string: 'cuda(('")
    [message] = problems(text)
    assert message.startswith("r.yaml:12: rule X001 match.string: invalid regex 'cuda(('")


def test_missing_field_and_wrong_enum() -> None:
    assert problems(GOOD.replace("    message: m\n", "")) == ["r.yaml:2: rule X001: 'message' is a required property"]
    assert problems(GOOD.replace("severity: major", "severity: fatal")) == [
        "r.yaml:5: rule X001 severity: 'fatal' is not one of ['blocker', 'major', 'minor', 'info']"
    ]


def test_unknown_key_points_at_the_key() -> None:
    [message] = problems(GOOD.replace("    message: m\n", "    message: m\n    mesage: typo\n"))
    assert message.startswith("r.yaml:9: rule X001 mesage: Additional properties are not allowed ('mesage'")


def test_duplicate_key_and_python_tags_are_refused() -> None:
    [duplicate] = problems(GOOD.replace("    message: m\n", "    message: m\n    message: n\n"))
    assert duplicate == "r.yaml:9: invalid YAML: duplicate key 'message' (first at line 8)" or "duplicate key 'message'" in duplicate
    [tag] = problems(GOOD.replace("message: m", "message: !!python/object/apply:os.system ['touch /tmp/pwned']"))
    assert "invalid YAML" in tag and "python/object" in tag


def test_duplicate_ids_across_files(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "b.yaml").write_text(GOOD.replace("name: sync", "name: sync-two"))
    with pytest.raises(RuleFileError) as caught:
        load_ruleset([tmp_path], builtin=False)
    assert "duplicate id 'X001'" in str(caught.value)
    assert str(caught.value).startswith(str(tmp_path / "b.yaml") + ":2:")


def test_selection_by_id_prefix_name_category_and_unknown() -> None:
    text = GOOD + GOOD.split("rules:\n", 1)[1].replace("X001", "Y002").replace("name: sync", "name: other").replace("cuda-api", "precision")
    rules, _device, found = parse_rule_file(text, "r.yaml")
    assert found == []
    from tpucheck.ruleset.model import DeviceContext, Ruleset

    ruleset = Ruleset(tuple(rules), DeviceContext())
    assert [r.id for r in select_rules(ruleset, ["X"]).rules] == ["X001"]
    assert [r.id for r in select_rules(ruleset, ["other"]).rules] == ["Y002"]
    assert [r.id for r in select_rules(ruleset, ["precision"]).rules] == ["Y002"]
    assert [r.id for r in select_rules(ruleset, [], ["cuda-api"]).rules] == ["Y002"]
    with pytest.raises(SelectionError):
        select_rules(ruleset, ["Z9"])


def test_named_places_resolve_across_files_and_unknown_names_fail(tmp_path: Path) -> None:
    (tmp_path / "contexts.yaml").write_text("contexts:\n  places:\n    hot:\n      inside: [loop]\n      otherwise: info\n")
    (tmp_path / "a.yaml").write_text(GOOD.replace("    message: m\n", "    message: m\n    where: hot\n"))
    [rule] = load_ruleset([tmp_path], builtin=False).rules
    assert rule.where is not None and (rule.where.loop, rule.where.otherwise, rule.where.name) == (True, "info", "hot")
    (tmp_path / "a.yaml").write_text(GOOD.replace("    message: m\n", "    message: m\n    where: warm\n"))
    with pytest.raises(RuleFileError) as caught:
        load_ruleset([tmp_path], builtin=False)
    assert "unknown place 'warm' (known: hot)" in str(caught.value)


def test_exact_and_residual_references_are_checked() -> None:
    both = GOOD.replace("      call: torch.cuda.synchronize", "      reference: torch.cuda\n      exact: true\n      residual: true")
    assert problems(both) == ["r.yaml:14: rule X001 match.residual: a reference cannot be both `exact` and `residual`"]
    glob = GOOD.replace("      call: torch.cuda.synchronize", "      reference: torch.cuda.*\n      residual: true")
    assert problems(glob) == ["r.yaml:12: rule X001 match.reference: a `residual` reference names plain qualified names, not globs"]
    flag = GOOD.replace("      call: torch.cuda.synchronize", "      reference: torch.cuda\n      exact: 'on the name'")
    assert problems(flag) == ["r.yaml:13: rule X001 match.exact: 'on the name' is not of type 'boolean'"]


def test_a_residual_reference_learns_what_other_rule_files_claim(tmp_path: Path) -> None:
    """Claims are resolved across every loaded file, once: selecting rules later does not
    change what a residual matcher leaves to the others."""
    module = GOOD.replace("X001", "X002").replace("name: sync", "name: cuda-other").replace(
        "      call: torch.cuda.synchronize", "      reference: torch.cuda\n      residual: true"
    )
    (tmp_path / "a.yaml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(module, encoding="utf-8")
    ruleset = load_ruleset([tmp_path], builtin=False)
    residual = ruleset.by_id()["X002"].matchers[0]
    assert residual.claims == (("call", "torch.cuda.synchronize"),)
    assert select_rules(ruleset, select=["X002"]).rules[0].matchers[0].claims == residual.claims
