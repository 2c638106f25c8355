"""A rule says in YAML which codemod fixes it and whether the fix is safe (issue 15); the
loader checks the name, and `tpucheck rules --long` and `explain` show it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tpucheck.fix.registry import CODEMOD_CLASSES, TEXT_CODEMODS
from tpucheck.ruleset import RuleFileError, load_ruleset
from tpucheck.ruleset.codemods import CODEMODS

ROOT = Path(__file__).resolve().parent.parent

RULE = """\
rules:
  - id: TEAM001
    name: team-sync
    category: cuda-api
    severity: minor
    message: our sync helper
    codemod: {codemod}
    match:
      call: torch.cuda.synchronize
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160"}
    return subprocess.run([sys.executable, "-m", "tpucheck", *args], env=env, capture_output=True, text=True, check=False, timeout=300)


def test_every_codemod_is_described_and_every_description_has_a_codemod() -> None:
    assert sorted([*(cls.name for cls in CODEMOD_CLASSES), *TEXT_CODEMODS]) == sorted(CODEMODS)


def test_built_in_rules_name_known_codemods() -> None:
    ruleset = load_ruleset()
    named = {rule.id: (rule.codemod.name, rule.codemod.safe) for rule in ruleset.rules if rule.codemod is not None}
    assert named == {
        "CA001": ("torch-accelerator", True),
        "CA002": ("torch-accelerator", True),
        "CA003": ("current-accelerator", True),
        "CA004": ("torch-accelerator", True),
        "CA005": ("manual-seed", True),
        "CA006": ("torch-accelerator", True),
        "CA007": ("torch-accelerator", True),
        "CA014": ("autocast", True),
        "CA015": ("grad-scaler", True),
        "CA021": ("legacy-tensor", True),
        "DI001": ("default-backend", False),
        "DP010": ("current-accelerator", True),
        "DP014": ("current-accelerator", True),
        "HF001": ("hf-sdpa", False),
        "HF003": ("hf-device-map", True),
        "HF004": ("hf-bf16", False),
        "HF011": ("hf-bf16", False),
    }


def test_a_team_rule_may_name_a_codemod(tmp_path: Path) -> None:
    (tmp_path / "team.yaml").write_text(RULE.format(codemod="{name: torch-accelerator, safe: true}"))
    rule = next(r for r in load_ruleset([tmp_path / "team.yaml"]).rules if r.id == "TEAM001")
    assert rule.codemod is not None and (rule.codemod.name, rule.codemod.safe) == ("torch-accelerator", True)


@pytest.mark.parametrize(
    ("codemod", "problem"),
    [
        ("{name: sed-everything, safe: true}", "rule TEAM001 codemod.name: unknown codemod 'sed-everything'"),
        ("{name: torch-accelerator}", "'safe' is a required property"),
        ("{name: torch-accelerator, safe: yes-please}", "'yes-please' is not of type 'boolean'"),
    ],
)
def test_a_bad_codemod_key_is_a_rule_file_problem(tmp_path: Path, codemod: str, problem: str) -> None:
    (tmp_path / "team.yaml").write_text(RULE.format(codemod=codemod))
    with pytest.raises(RuleFileError) as raised:
        load_ruleset([tmp_path / "team.yaml"])
    assert problem in str(raised.value)


def test_rules_long_and_explain_show_the_autofix() -> None:
    listing = run("rules", "--long").stdout
    assert "autofix: torch-accelerator (safe)" in listing and "autofix: hf-sdpa (unsafe: --unsafe-fixes)" in listing
    explained = run("explain", "CA005").stdout
    assert "Autofix: manual-seed (safe: applied by `tpucheck fix`, each edit it cannot prove safe only with --unsafe-fixes). `torch.cuda.manual_seed(s)`" in " ".join(explained.split())
    assert "With --unsafe-fixes: Elsewhere it becomes `torch.manual_seed(s)`" in " ".join(explained.split())
    assert "Autofix" not in run("explain", "CA008").stdout


def test_the_rules_page_is_current() -> None:
    page = run("rules", "--format", "markdown").stdout
    assert page == (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert "**Autofix:** current-accelerator (safe: applied by `tpucheck fix`, each edit it cannot prove safe only with --unsafe-fixes)." in page
