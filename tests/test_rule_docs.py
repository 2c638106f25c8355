"""The rule knowledge as users read it: `tpucheck rules`, `tpucheck explain`, docs/rules.md.

docs/rules.md is generated; the first test fails whenever it and the rules disagree, so
every finding's help link (`help_uri`) lands on a section that exists and says what the
rule says today.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tpucheck.report import ruledocs
from tpucheck.ruleset import load_ruleset
from tpucheck.ruleset.loader import parse_rule_file
from tpucheck.ruleset.model import Rule

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "rules.md"
RULESET = load_ruleset()
FIXTURE_RULES = str(ROOT / "tests" / "fixtures" / "test_rules.yaml")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("FORCE_COLOR", None)
    return subprocess.run([sys.executable, "-m", "tpucheck", *args], capture_output=True, text=True, env=env, cwd=ROOT)


def flat(text: str) -> str:
    """Whitespace collapsed: terminal output wraps long lines at spaces."""
    return " ".join(text.split())


def rule(rule_id: str) -> Rule:
    return RULESET.by_id()[rule_id]


# --- docs/rules.md -------------------------------------------------------------------------


def test_docs_page_is_generated_from_the_rules() -> None:
    expected = ruledocs.markdown_page(RULESET.rules, RULESET.judgement.scoring, ruledocs.judged_by_target(RULESET))
    actual = DOCS.read_text(encoding="utf-8") if DOCS.exists() else ""
    if actual != expected:
        diff = "".join(list(difflib.unified_diff(actual.splitlines(True), expected.splitlines(True), "docs/rules.md", "generated"))[:40])
        pytest.fail(f"docs/rules.md is out of date with rules/*.yaml; regenerate it with\n    {ruledocs.REGENERATE_COMMAND}\n{diff}")


def test_the_regeneration_command_writes_that_page(tmp_path: Path) -> None:
    target = tmp_path / "rules.md"
    command = ruledocs.REGENERATE_COMMAND.split()
    assert command[:3] == ["python", "-m", "tpucheck"] and command[-2:] == ["-o", "docs/rules.md"]
    done = run_cli(*command[3:-1], str(target))
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == ruledocs.markdown_page(RULESET.rules, RULESET.judgement.scoring, ruledocs.judged_by_target(RULESET)).encode("utf-8")


def test_every_rule_has_one_anchored_section_and_a_contents_entry() -> None:
    page = DOCS.read_text(encoding="utf-8")
    for r in RULESET.rules:
        anchor = f'<a id="{r.id.lower()}"></a>'
        assert page.count(anchor) == 1, f"{r.id}: anchor missing or repeated"
        assert f"{anchor}\n\n### {r.id} {r.name}\n" in page, f"{r.id}: anchor not right before its heading"
        assert f"](#{r.id.lower()})" in page, f"{r.id}: not in the contents"
    anchors = re.findall(r'<a id="([^"]+)"></a>', page)
    assert sorted(anchors) == sorted(r.id.lower() for r in RULESET.rules)


def test_help_uri_points_at_the_rule_anchor_in_this_repository() -> None:
    ck001 = rule("CK001")
    assert ruledocs.help_uri(ck001) == "https://github.com/tpucheck/tpucheck/blob/main/docs/rules.md#ck001"
    assert ruledocs.help_uri(ck001) == f"{ruledocs.HELP_BASE}#ck001"
    in_repo = ruledocs.HELP_BASE.split("/blob/main/", 1)[1]
    assert (ROOT / in_repo).resolve() == DOCS.resolve() and DOCS.exists()


def test_page_sections_follow_category_order_and_are_deterministic() -> None:
    page = ruledocs.markdown_page(RULESET.rules, RULESET.judgement.scoring, ruledocs.judged_by_target(RULESET))
    assert ruledocs.markdown_page(tuple(reversed(RULESET.rules)), RULESET.judgement.scoring, ruledocs.judged_by_target(RULESET)) == page
    headings = re.findall(r"^## (\S+)$", page, flags=re.M)
    from tpucheck.findings import CATEGORIES

    assert [h for h in headings if h in CATEGORIES] == [c for c in CATEGORIES if any(r.category == c for r in RULESET.rules)]
    for r in RULESET.rules:
        assert ruledocs.markdown_rule(r, ruledocs.judged_by_target(RULESET)[r.id]) in page
    assert "# tpucheck: ignore[" in page and "-- " in page
    assert all(f"| {s} |" in page for s in ("blocker", "major", "minor", "info"))


def test_markdown_section_content() -> None:
    section = ruledocs.markdown_rule(rule("HS001"))
    assert section.startswith('<a id="hs001"></a>\n\n### HS001 tensor-item\n')
    assert f"**Fix on TorchTPU:** {rule('HS001').fix_tpu}" in section
    assert "**Fix on PyTorch/XLA:** " in section
    assert "- method `.item()` with 0 arguments" in section
    assert "**When it applies:** major inside a loop" in section and "info elsewhere." in section
    assert "```python\ndef train_step(model, batch, opt):\n" in section
    assert "Defined in [`rules/host-sync.yaml`](../rules/host-sync.yaml)." in section


# --- Matcher phrases, example languages, fences --------------------------------------------

PHRASE_RULES = r"""
rules:
  - id: X001
    name: phrase-test
    category: cuda-api
    severity: major
    affects: [training]
    effort: {low: 1, high: 2, per: file}
    message: "m"
    fix: {tpu: "t"}
    docs: ["https://example.org"]
    match:
      - call: torch.cuda.synchronize
      - method: item
        arity: 0
      - string: 'cuda(:.*)?'
      - dependency: flash-attn
      - call: torch.where
        args: [{position: 1, missing: true}, {name: input, missing: true}]
      - keyword: device_map
        value: 'auto'
        in_call: [.from_pretrained]
      - file: Dockerfile
        pattern: '^FROM\s+nvidia'
      - import: flash_attn
      - decorator: triton.jit
    examples:
      flag:
        - "import torch\ntorch.cuda.synchronize()\n"
        - code: "FROM nvidia/cuda\n"
          path: Dockerfile
      pass:
        - "x = '''\n```\n'''\n"
"""


@pytest.fixture(scope="module")
def phrase_rule() -> Rule:
    rules, _, problems = parse_rule_file(PHRASE_RULES, "phrase.yaml")
    assert not problems, problems
    return rules[0]


def test_matchers_read_as_phrases(phrase_rule: Rule) -> None:
    phrases = [ruledocs.plain(ruledocs.describe_matcher(m)) for m in phrase_rule.matchers]
    assert phrases == [
        "call torch.cuda.synchronize",
        "method .item() with 0 arguments",
        'string "cuda(:.*)?" in argument/assignment contexts',
        "dependency flash-attn",
        "call torch.where without a 2nd argument and without input=",
        'keyword device_map= with a value matching "auto" in calls to .from_pretrained',
        'file Dockerfile with a line matching "^FROM\\s+nvidia"',
        "import of flash_attn (or a submodule)",
        "decorator @triton.jit",
    ]
    assert ruledocs.effort_text(phrase_rule) == "1–2 h per file"


def test_example_languages_and_fences(phrase_rule: Rule) -> None:
    assert [ruledocs.example_language(p) for p in ("setup.py", "kernels.cuh", "ops.cpp", "Dockerfile.gpu", "docker/train.Dockerfile", "requirements.txt", "train.sh")] == [
        "python", "cuda", "cpp", "dockerfile", "dockerfile", "text", "bash",
    ]
    section = ruledocs.markdown_rule(phrase_rule)
    # an example containing ``` gets a longer fence, so the block does not end early
    assert "````python\nx = '''\n```\n'''\n````" in section
    # once one example names its file, every example is labelled with its file
    assert "In `example.py`:" in section and "In `Dockerfile`:\n\n```dockerfile\nFROM nvidia/cuda\n```" in section
    assert "Fix on PyTorch/XLA" not in section


# --- tpucheck explain ------------------------------------------------------------------------


def test_explain_by_id_any_case() -> None:
    done = run_cli("explain", "ca003")
    assert done.returncode == 0, done.stderr
    out, ca003 = done.stdout, rule("CA003")
    assert out.startswith("CA003 cuda-device · device-placement · major · confidence high")
    assert "\x1b[" not in out
    assert flat(f"Fix on TorchTPU: {ca003.fix_tpu}") in flat(out)
    assert flat(f"Fix on PyTorch/XLA: {ca003.fix_xla}") in flat(out)
    assert 'string "cuda(:.*)?" in argument/assignment contexts' in out
    assert 'x = torch.randn(4, 3).to("cuda")' in out  # a flag example
    assert all(url in out for url in ca003.docs)
    assert out.rstrip().splitlines()[-2] == "Help: https://github.com/tpucheck/tpucheck/blob/main/docs/rules.md#ca003"
    assert not any(line.endswith(" ") for line in out.splitlines())


def test_explain_by_name_shows_where_and_both_example_kinds() -> None:
    done = run_cli("explain", "tensor-item")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("HS001 tensor-item")
    assert "When it applies: major inside a loop" in out
    assert "method .item() with 0 arguments" in out
    flags, _, passes = out.partition("Does not flag:")
    assert "return loss.item()" in flags.split("Flags:", 1)[1]
    assert "first = queue.item(0)" in passes


def test_explain_json_and_markdown() -> None:
    as_json = run_cli("explain", "CK001", "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout) == ruledocs.rule_to_dict(rule("CK001"))
    as_md = run_cli("explain", "cuda-extension-build", "-f", "markdown")
    assert as_md.returncode == 0, as_md.stderr
    assert as_md.stdout == ruledocs.markdown_rule(rule("CK001"))


def test_explain_a_rule_from_an_extra_file() -> None:
    done = run_cli("explain", "T001", "--rules", FIXTURE_RULES)
    assert done.returncode == 0, done.stderr
    assert "Fix on TorchTPU: tpu fix" in done.stdout and "Fix on PyTorch/XLA: xla fix" in done.stdout


@pytest.mark.parametrize(
    ("query", "suggested"),
    [("CA01", "did you mean CA001, "), ("tensor-itme", "did you mean tensor-item"), ("xyzzy-nothing-like-it", "`tpucheck rules` lists them")],
)
def test_explain_unknown_rule(query: str, suggested: str) -> None:
    done = run_cli("explain", query)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"tpucheck: error: unknown rule '{query}'")
    assert suggested in lines[0]
    if "did you mean" in lines[0]:
        assert len(lines[0].split("did you mean ", 1)[1].rstrip("?").split(", ")) <= 3


# --- tpucheck rules ------------------------------------------------------------------------

RULE_FIELDS = {
    "id", "name", "category", "severity", "confidence", "affects", "effort", "message", "fix", "docs",
    "inventory", "where", "supersedes", "ops", "codemod", "match", "examples", "source", "help_uri",
}


def test_rules_json_has_every_field() -> None:
    done = run_cli("rules", "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["id"] for r in rows] == [r.id for r in RULESET.rules]
    assert all(set(row) == RULE_FIELDS for row in rows)
    by_id = {row["id"]: row for row in rows}
    hs001 = by_id["HS001"]
    assert hs001["effort"] == {"low": 0.1, "high": 0.25, "per": "occurrence"}
    assert hs001["fix"] == {"tpu": rule("HS001").fix_tpu, "xla": rule("HS001").fix_xla}
    assert hs001["where"]["loop"] is True and hs001["where"]["otherwise"] == "info" and "forward" in hs001["where"]["functions"]
    assert hs001["match"] == ["method .item() with 0 arguments"]
    assert hs001["source"].startswith("rules/host-sync.yaml:")
    assert hs001["help_uri"].endswith("/docs/rules.md#hs001")
    assert hs001["examples"]["flag"][0]["path"] == "example.py" and "loss.item()" in hs001["examples"]["flag"][0]["code"]
    assert len(hs001["examples"]["pass"]) == len(rule("HS001").pass_examples)
    assert by_id["CK001"]["inventory"] == "kernel" and by_id["CK001"]["supersedes"] == ["CK014"]
    assert by_id["CK001"]["where"] is None


def test_rules_filters_and_compact_table() -> None:
    done = run_cli("rules", "--severity", "blocker")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    blockers = [r for r in RULESET.rules if r.severity == "blocker"]
    heads = [line.split() for line in lines if not line.startswith(" ")]  # one entry per rule
    assert [head[:3] for head in heads] == [[r.id, "blocker", r.name] for r in blockers]
    as_json = json.loads(run_cli("rules", "--category", "precision", "-f", "json").stdout)
    assert {row["category"] for row in as_json} == {"precision"}
    assert len(as_json) == sum(r.category == "precision" for r in RULESET.rules)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--category", "nope"), "unknown category 'nope': choose one of custom-kernel,"),
        (("--severity", "fatal"), "unknown severity 'fatal': choose one of blocker, major, minor, info"),
        (("--format", "html"), "unknown format 'html': choose one of terminal, json, markdown"),
    ],
)
def test_rules_bad_values_exit_2(args: tuple[str, ...], message: str) -> None:
    done = run_cli("rules", *args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [done.stderr.strip()]
    assert f"tpucheck: error: {message}" in done.stderr
