"""SARIF report: schema-valid for GitHub code scanning and carrying the fields it reads."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from textwrap import dedent

import pytest
from conftest import fixture_ruleset, notebook_json

from tpucheck.engine import ScanOptions, scan
from tpucheck.report import sarif
from tpucheck.result import ScanResult

SCHEMA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "sarif" / "sarif-schema-2.1.0.json"

NOTEBOOK = notebook_json(
    ("markdown", ["# title\n"]),
    ("code", ["import torch\n", "x = 1\n", "torch.cuda.synchronize()\n"]),
)

FILES = {
    "pkg/train.py": """
        import torch
        import torch.distributed as dist
        dist.init_process_group("nccl")
        torch.cuda.empty_cache()  # tpucheck: ignore[T014] -- harmless here
    """,
    "pkg/broken.py": "import torch\ntorch.cuda.synchronize(\n",
    "csrc/k.cu": "__global__ void add_kernel(float* x) {}\n",
    "nb/look.ipynb": NOTEBOOK,
}


@pytest.fixture()
def scanned(tmp_path: Path) -> tuple[ScanResult, dict]:
    root = tmp_path / "repo"
    for name, content in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(content).lstrip("\n"), encoding="utf-8")
    ruleset = fixture_ruleset()
    result = scan(str(root), ruleset, ScanOptions(jobs=1))
    return result, ruleset.by_id()


def _results(log: dict) -> list[dict]:
    return log["runs"][0]["results"]


def _by_rule(log: dict, rule_id: str) -> dict:
    return next(r for r in _results(log) if r["ruleId"] == rule_id)


def test_valid_against_official_schema(scanned: tuple[ScanResult, dict]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    if not SCHEMA.is_file():
        pytest.skip(f"SARIF schema not available at {SCHEMA}")
    result, rules = scanned
    log = json.loads(sarif.render(result, rules))
    jsonschema.validate(log, json.loads(SCHEMA.read_text(encoding="utf-8")))


def test_run_header_and_rules(scanned: tuple[ScanResult, dict]) -> None:
    result, rules = scanned
    log = json.loads(sarif.render(result, rules))
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file:///")
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/")
    driver = run["tool"]["driver"]
    assert driver["name"] == "tpucheck"
    assert [d["id"] for d in driver["rules"]] == result.rules
    t009 = driver["rules"][result.rules.index("T009")]
    assert t009["helpUri"] == rules["T009"].help_uri
    assert t009["shortDescription"] == {"text": "nccl message"}
    assert t009["defaultConfiguration"] == {"level": "warning"}
    assert "tpu fix PyTorch/XLA: xla fix" in t009["help"]["text"]
    assert "https://example.org/doc" in t009["help"]["markdown"]
    assert t009["properties"]["tags"] == ["tpu-migration", "cuda-api"]
    assert driver["rules"][result.rules.index("T015")]["defaultConfiguration"] == {"level": "error"}


def test_results_fields(scanned: tuple[ScanResult, dict]) -> None:
    result, rules = scanned
    log = json.loads(sarif.render(result, rules))
    nccl = _by_rule(log, "T009")
    finding = next(f for f in result.findings if f.rule == "T009")
    assert nccl["level"] == "warning"
    assert log["runs"][0]["tool"]["driver"]["rules"][nccl["ruleIndex"]]["id"] == "T009"
    assert nccl["message"]["text"] == "nccl message Fix: tpu fix"
    location = nccl["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "pkg/train.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {
        "startLine": finding.span.line,
        "startColumn": finding.span.column,
        "endLine": finding.span.end_line,
        "endColumn": finding.span.end_column,
    }
    assert location["region"]["startLine"] == 3
    assert nccl["partialFingerprints"] == {"tpucheck/v1": finding.fingerprint}
    assert nccl["properties"] == {"role": finding.role, "guarded": False, "confidence": finding.confidence}
    assert "suppressions" not in nccl
    assert _by_rule(log, "T015")["level"] == "error"


def test_suppressed_and_notebook_and_errors(scanned: tuple[ScanResult, dict]) -> None:
    result, rules = scanned
    log = json.loads(sarif.render(result, rules))
    silenced = _by_rule(log, "T014")
    assert silenced["suppressions"] == [{"kind": "inSource", "justification": "harmless here"}]
    notebook = next(r for r in _results(log) if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "nb/look.ipynb")
    assert notebook["properties"]["cell"] == 2
    assert notebook["message"]["text"].startswith("[notebook cell 2] ")
    assert notebook["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    notifications = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert result.errors and len(notifications) == len(result.errors)
    assert notifications[0]["level"] == "warning"
    assert notifications[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/broken.py"


def test_level_mapping_for_every_severity(scanned: tuple[ScanResult, dict]) -> None:
    result, rules = scanned
    base = next(f for f in result.findings if f.rule == "T009")
    result.findings = [dataclasses.replace(base, severity=s) for s in ("blocker", "major", "minor", "info")]
    result.suppressed = []
    levels = [r["level"] for r in _results(json.loads(sarif.render(result, rules)))]
    assert levels == ["error", "warning", "note", "note"]


def test_deterministic(scanned: tuple[ScanResult, dict]) -> None:
    result, rules = scanned
    text = sarif.render(result, rules)
    assert text.endswith("}\n")
    assert text == sarif.render(result, rules)


def test_unknown_rule_falls_back_to_finding(scanned: tuple[ScanResult, dict]) -> None:
    result, rules = scanned
    log = json.loads(sarif.render(result, {}))
    driver = log["runs"][0]["tool"]["driver"]
    t009 = driver["rules"][result.rules.index("T009")]
    assert t009["fullDescription"] == {"text": "nccl message"}
    assert t009["helpUri"] == rules["T009"].help_uri


def test_result_cap_keeps_most_severe(scanned: tuple[ScanResult, dict], monkeypatch: pytest.MonkeyPatch) -> None:
    result, rules = scanned
    base = next(f for f in result.findings if f.rule == "T009")
    result.findings = [dataclasses.replace(base, severity=s) for s in ("minor", "blocker", "info", "major")]
    result.suppressed = []
    result.errors = []
    monkeypatch.setattr(sarif, "MAX_RESULTS", 2)
    log = json.loads(sarif.render(result, rules))
    assert [r["level"] for r in _results(log)] == ["error", "warning"]
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert len(notes) == 1 and notes[0]["message"]["text"].startswith("2 of 4 results were left out")
