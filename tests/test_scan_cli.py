"""End to end: a fixture repository written here, scanned through the CLI and the engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, fixture_ruleset, notebook_json, write_tree

from tpucheck import engine
from tpucheck.engine import ScanOptions, scan
from tpucheck.reports.json_report import render

RULES = str(FIXTURES / "test_rules.yaml")


NOTEBOOK = notebook_json(
    ("markdown", ["# title\n"]),
    ("code", ["%matplotlib inline\n", "import torch\n"]),
    ("code", ["!pip install x\n", "x = 1\n", "torch.cuda.synchronize()\n"]),
)


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "repo",
        {
            "pkg/train.py": """
                import torch
                import torch.distributed as dist
                dist.init_process_group("nccl")
                for batch in loader:
                    loss.item()
                torch.cuda.empty_cache()  # tpucheck: ignore[T014] -- harmless
            """,
            "pkg/broken.py": "import torch\ntorch.cuda.synchronize(\n",
            "pkg/legacy.py": "import torch\nprint 'synchronize', torch\n",
            "pkg/latin.py": b"# -*- coding: latin-1 -*-\nimport torch\nname = '\xe9t\xe9'; torch.cuda.synchronize()\n",
            "pkg/bad_utf8.py": b"import torch\nx = '\xff\xfe'\n",
            "pkg/blob.py": b"\x00\x01binary torch.cuda.synchronize",
            "pkg/clean.py": "def add(a, b):\n    return a + b\n",
            "notebooks/look.ipynb": NOTEBOOK,
            "tests/test_x.py": "import torch\ntorch.cuda.synchronize()\n",
            "ignored/gen.py": "import torch\ntorch.cuda.synchronize()\n",
            ".gitignore": "ignored/\n",
        },
    )


SOURCE_ROOT = str(Path(__file__).resolve().parent.parent)


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SOURCE_ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "tpucheck", *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_json_report_exact_findings_errors_and_coverage(repo: Path) -> None:
    done = run_cli("scan", str(repo), "--rules", RULES, "--select", "T", "-f", "json", "-q")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["schema_version"] == "1.3"
    assert report["tool"]["name"] == "tpucheck"
    got = [(f["rule"], f["path"], f["line"], f["column"], f["cell"]) for f in report["findings"]]
    assert got == [
        ("T001", "notebooks/look.ipynb", 3, 1, 3),
        ("T001", "pkg/latin.py", 3, 15, None),
        ("T009", "pkg/train.py", 3, 1, None),
        ("T005", "pkg/train.py", 5, 10, None),
        ("T001", "tests/test_x.py", 2, 1, None),
    ]
    first = report["findings"][0]
    for key in ("rule", "name", "category", "severity", "confidence", "path", "line", "column", "end_line", "end_column", "cell", "message", "fix", "affects", "fingerprint", "help_uri"):
        assert key in first
    assert first["help_uri"].endswith("/docs/rules.md#t001")
    assert [(s["rule"], s["path"], s["line"], s["suppression_reason"]) for s in report["suppressed"]] == [("T014", "pkg/train.py", 6, "harmless")]
    assert [(e["path"], e["kind"]) for e in report["errors"]] == [
        ("pkg/bad_utf8.py", "encoding"),
        ("pkg/blob.py", "binary"),
        ("pkg/broken.py", "syntax-error"),
        ("pkg/legacy.py", "python2"),
    ]
    coverage = report["coverage"]
    assert coverage["files_found"] == 9
    assert coverage["files_found"] == coverage["files_analyzed"] + coverage["files_errored"] + coverage["files_skipped"]
    assert coverage["files_parsed"] == 4
    summary = report["summary"]
    for key in ("score", "grade", "effort_hours", "training_score", "inference_score", "files_scanned", "lines_scanned", "by_severity", "by_category"):
        assert key in summary
    # the notebook under notebooks/ and tests/test_x.py are supporting code: at most minor
    assert (summary["by_severity"]["major"], summary["by_severity"]["minor"]) == (3, 2)


def test_findings_sorted_by_path_then_position(repo: Path) -> None:
    result = scan(str(repo), fixture_ruleset(), ScanOptions(jobs=1))
    keys = [f.sort_key() for f in result.findings]
    assert keys == sorted(keys)
    assert [f.path for f in result.findings] == ["notebooks/look.ipynb", "pkg/latin.py", "pkg/train.py", "pkg/train.py", "tests/test_x.py"]


def test_same_json_whatever_the_worker_count(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for index in range(30):
        write_tree(repo, {f"more/m{index}.py": f"import torch\nx = {index}\ntorch.cuda.synchronize()\n" * (index % 3 + 1)})
    monkeypatch.setattr(engine, "INLINE_BELOW", 0)
    one = render(scan(str(repo), fixture_ruleset(), ScanOptions(jobs=1)))
    two = render(scan(str(repo), fixture_ruleset(), ScanOptions(jobs=2)))
    assert one == two
    assert json.loads(one)["summary"]["findings"] > 30


def test_gate_exit_codes(repo: Path) -> None:
    base = ("scan", str(repo), "--rules", RULES, "--select", "T", "-q", "-f", "json")
    assert run_cli(*base).returncode == 0
    assert run_cli(*base, "--fail-under", "100").returncode == 1
    assert run_cli(*base, "--fail-under", "1").returncode == 0
    tripped = run_cli(*base, "--fail-on", "major")
    assert tripped.returncode == 1
    assert "gate failed" in tripped.stderr
    assert run_cli(*base, "--fail-on", "blocker").returncode == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("scan", "/no/such/dir"), "no such file or directory"),
        (("scan", ".", "--format", "xml"), "unknown format"),
        (("scan", ".", "--fail-on", "fatal"), "unknown severity"),
        (("scan", ".", "--select", "NOPE999"), "unknown rule selector"),
        (("scan", ".", "--no-such-flag"), "No such option"),
        (("scan", ".", "--fail-under", "120"), "0 to 100"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args: tuple[str, ...], message: str, tmp_path: Path) -> None:
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_invalid_rule_file_names_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        (FIXTURES / "test_rules.yaml").read_text().replace("match:\n      call: torch.cuda.synchronize", "match:\n      calls: torch.cuda.synchronize", 1)
    )
    done = run_cli("scan", str(tmp_path), "--rules", str(bad))
    assert done.returncode == 2
    line = done.stderr.strip().splitlines()[0]
    assert f"{bad}:" in line and "rule T001 match" in line and "unknown matcher" in line
    assert "Traceback" not in done.stderr


def test_terminal_report_sections(repo: Path) -> None:
    done = run_cli("scan", str(repo), "--rules", RULES, "--select", "T", "-q")
    assert done.returncode == 0
    out = done.stdout
    for needle in ("Inventory", "TPU readiness", "Findings by category", "Migration plan", "Top files", "could not be analyzed", "Coverage: 9 files found"):
        assert needle in out
    assert "\x1b[" not in out  # no colour codes when stdout is not a terminal


def test_output_file_and_rules_command(repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    assert run_cli("scan", str(repo), "--rules", RULES, "-f", "json", "-o", str(target), "-q").returncode == 0
    assert json.loads(target.read_text())["tool"]["name"] == "tpucheck"
    listed = run_cli("rules", "--rules", RULES, "--format", "json")
    assert listed.returncode == 0
    assert "T001" in {r["id"] for r in json.loads(listed.stdout)}


def test_the_scanned_projects_own_packages_are_not_dependencies(tmp_path: Path) -> None:
    code = "import torch\nimport flash_attn\nfrom flash_attn.ops import fused\ntorch.cuda.synchronize()\n"
    own = write_tree(tmp_path / "own", {"src/flash_attn/__init__.py": "", "src/flash_attn/ops.py": code})
    user = write_tree(tmp_path / "user", {"app/main.py": code})
    own_rules = {(f.rule, f.span.line) for f in scan(str(own), fixture_ruleset(), ScanOptions(jobs=1)).findings}
    user_rules = {(f.rule, f.span.line) for f in scan(str(user), fixture_ruleset(), ScanOptions(jobs=1)).findings}
    assert ("T001", 4) in own_rules and not any(rule in ("T003", "T017") for rule, _ in own_rules)
    assert {("T003", 2), ("T003", 3), ("T001", 4)} <= user_rules
