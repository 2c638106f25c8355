"""The terminal report fits the terminal (issue 14 point 2): width from the terminal or
COLUMNS, 80 when unknown; no line longer than the width, no word cut; the verdict last."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tpucheck.engine import ScanOptions, scan
from tpucheck.report import terminal
from tpucheck.report.options import ReportOptions, terminal_width
from tpucheck.result import ScanResult
from tpucheck.ruleset import load_ruleset

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "gpu-trainer"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def result() -> ScanResult:
    return scan(str(EXAMPLE), load_ruleset(), ScanOptions(jobs=1, use_cache=False))


def render(result: ScanResult, **options: object) -> str:
    stream = io.StringIO()
    terminal.write(result, stream, ReportOptions(**options))  # type: ignore[arg-type]
    return ANSI.sub("", stream.getvalue())


def words(text: str) -> set[str]:
    """Identifier-like words, leaving out the one a crop cut (`__restrict_…`)."""
    return set(re.findall(r"[A-Za-z_][\w-]{2,}", re.sub(r"\S*…", " ", text)))


@pytest.mark.parametrize("width", [80, 100, 120])
@pytest.mark.parametrize("colour", [False, True])
def test_fits_the_width_and_cuts_no_word(result: ScanResult, width: int, colour: bool) -> None:
    text = render(result, width=width, colour=colour, max_findings=None)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    assert [line for line in lines if line != line.rstrip()] == []
    # a word broken across lines leaves fragments the wide layout never prints
    assert words(text) <= words(render(result, width=400, max_findings=None))


def test_ends_with_the_verdict(result: ScanResult) -> None:
    tail = render(result, width=80).rstrip().splitlines()[-6:]
    text = "\n".join(tail)
    assert "TPU readiness 59.9/100" in text
    assert "grade D" in text
    assert "effort " in text
    assert re.search(r"\d+ blocker, \d+ major, \d+ minor, \d+ info · target TorchTPU", text)


def test_show_all_and_max_findings(result: ScanResult) -> None:
    total = len(result.findings)
    assert total > 40
    assert f"… and {total - 40} more" in render(result, width=120)
    assert "more: --show-all" not in render(result, width=120, max_findings=None)
    assert f"… and {total - 3} more" in render(result, width=120, max_findings=3)


def test_one_line_per_finding_and_each_rules_text_once(result: ScanResult) -> None:
    """As ruff prints them (issue 28): `path:line:col: RULE [severity] name`, then each
    rule's first sentence once, not the rule's text under every finding."""
    text = render(result, width=80)
    section = text.split("\nFindings\n", 1)[1].split("\nCoverage:", 1)[0]
    lines = section.splitlines()
    # the extension's kernels block: its `except ImportError:` builds the same sources
    assert lines[:3] == [
        "csrc/bindings.cpp:16:1: CK009 [blocker] cuda-only-custom-op",
        "csrc/fused_gelu.cu:21:1: CK003 [blocker] cuda-kernel",
        "csrc/fused_gelu.cu:31:1: CK003 [blocker] cuda-kernel",
    ]
    assert lines[40] == f"… and {len(result.findings) - 40} more: --show-all lists them, --format json -o FILE keeps them"
    assert lines[41] == "Rules above (`tpucheck explain RULE` for more, --verbose for each finding)"
    legend = lines[42:]
    shown = sorted({line.split()[1] for line in lines[:40]})
    assert [line.split()[0] for line in legend] == shown
    assert "CA003 cuda-device: A hard-coded CUDA device (`.cuda()`, `\"cuda\"`, `\"cuda:0\"`,…" in legend
    # the rule's text is printed once, however many findings it has
    assert text.count("A hard-coded CUDA device") == 1
    verbose = render(result, width=200, verbose=True, max_findings=None)
    assert verbose.count("A hard-coded CUDA device") == sum(f.rule == "CA003" for f in result.findings) > 1
    assert "Rules above" not in verbose


def test_a_long_path_is_never_split(tmp_path: Path) -> None:
    """A path longer than the width runs past it whole (click-to-open needs it), in the
    findings and the top files, rather than breaking inside a name."""
    deep = tmp_path / "models" / "mamba3_mimo_rotary_step_with_a_rather_long_name"
    deep.mkdir(parents=True)
    (deep / "mamba3_mimo_rotary_step.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    text = render(scan(str(tmp_path), load_ruleset(), ScanOptions(jobs=1, use_cache=False)), width=60)
    path = "models/mamba3_mimo_rotary_step_with_a_rather_long_name/mamba3_mimo_rotary_step.py"
    assert f"{path}:2:1: CA001 [major]" in text.splitlines()
    assert any(line.endswith(f" {path}") for line in text.splitlines())
    assert "mamba3_mimo_rotary_s\n" not in text


def test_statistics_replace_the_findings(result: ScanResult) -> None:
    text = render(result, width=120, statistics=True)
    assert "\nFindings\n" not in text and "Rules above" not in text
    section = text.split("Statistics (findings per rule)\n", 1)[1]
    counted = {rule: n for n, rule in re.findall(r"^\s+(\d+)  (\w+)\s", section, re.MULTILINE)}
    expected: dict[str, int] = {}
    for finding in result.findings:
        expected[finding.rule] = expected.get(finding.rule, 0) + 1
    assert {rule: int(n) for rule, n in counted.items()} == expected


def test_show_source_marks_the_line(result: ScanResult) -> None:
    text = render(result, width=120, show_source=True, max_findings=None)
    synchronize = next(f for f in result.findings if f.rule == "CA001" and f.role == "library")
    line = (EXAMPLE / synchronize.path).read_text().splitlines()[synchronize.span.line - 1]
    assert f"{synchronize.span.line} > {line}".rstrip() in text


def test_width_follows_columns_when_piped(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "93", "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "tpucheck", "scan", str(EXAMPLE), "--no-cache", "-q"],
        capture_output=True, text=True, env=env, check=False, timeout=300,
    )  # fmt: skip
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) == 93  # the inventory panel fills the width


def test_width_is_80_when_nothing_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    assert terminal_width() == 80
