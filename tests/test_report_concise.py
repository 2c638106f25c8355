"""The concise report: exact lines for a small scanned tree, one line per finding whatever
the data holds, colour only on request, baselined findings counted but not listed."""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path

import pytest
from conftest import SYNC_NOTEBOOK, fixture_ruleset, write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.findings import ScanError, Skipped
from tpucheck.report import FORMATS, concise
from tpucheck.report.prose import brief
from tpucheck.result import ScanResult
from tpucheck.ruleset import load_ruleset

FILES = {
    "pkg/train.py": (
        "import torch\n"
        "import torch.distributed as dist\n"
        'dist.init_process_group("nccl")\n'
        "torch.cuda.empty_cache()  # tpucheck: ignore[T014] -- harmless\n"
        "for batch in loader:\n"
        "    loss.item()\n"
    ),
    "pkg/evil\nname.py": "import torch\ntorch.cuda.synchronize()\n",
    "pkg/broken.py": "import torch\ntorch.cuda.synchronize(\n",
    "csrc/k.cu": "__global__ void add_kernel(float* x) {}\n",
    "notebooks/look.ipynb": SYNC_NOTEBOOK,
    "README.md": "nothing to see\n",
}

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture()
def result(tmp_path: Path) -> ScanResult:
    # The engine tests' fixture rules: their messages do not move when the built-in rules do.
    return scan(str(write_tree(tmp_path / "repo", FILES)), fixture_ruleset(), ScanOptions(jobs=1))


def score_text(result: ScanResult) -> str:
    return f"score {result.score.score:.1f} (grade {result.score.grade}, target {result.target})"


def test_exact_lines(result: ScanResult) -> None:
    lines = concise.render(result).splitlines()
    assert lines[:-2] == [
        "csrc/k.cu:1:1: T015 [blocker] kernel",
        # a notebook under notebooks/ is supporting code: at most minor
        "notebooks/look.ipynb:cell 3:2:1: T001 [minor] sync-call message",
        "pkg/evil\\nname.py:2:1: T001 [major] sync-call message",
        "pkg/train.py:3:1: T009 [major] nccl message",
        "pkg/train.py:6:10: T005 [major] item-method message",
    ]
    assert lines[-2].startswith("pkg/broken.py: could not analyze (syntax-error): syntax error at line 2")
    # README.md is not analyzed, broken.py could not be: four files.
    assert lines[-1] == f"5 findings (1 blocker, 3 major, 1 minor) in 4 files; 1 file could not be analyzed; {score_text(result)}"
    assert not any("T014" in line for line in lines), "suppressed findings are not listed"


def test_write_matches_render_and_is_registered(result: ScanResult) -> None:
    stream = io.StringIO()
    FORMATS["concise"](result, stream)
    assert stream.getvalue() == concise.render(result)
    assert stream.getvalue().endswith("\n")


def test_empty_result_is_just_the_summary(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "clean", {"pkg/model.py": "import torch\nx = torch.zeros(3)\n", "a.py": "print(1)\n"})
    result = scan(str(root), fixture_ruleset(), ScanOptions(jobs=1))
    assert concise.render(result) == f"0 findings in 2 files; {score_text(result)}\n"
    # nothing to edit, but a model to validate on the target: an inference run, not 0 h
    assert score_text(result) == "score 99.1 (grade A, target torchtpu)"


def test_one_line_per_finding_whatever_the_data(result: ScanResult) -> None:
    # Every character str.splitlines breaks on, terminal escapes, NUL, DEL and C1 controls.
    breakers = "\r\n|\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
    hostile_path = f"a{breakers}b\x1b]0;title\x07\x00\t\x7f\x9b.py"
    hostile_message = "first\x1b[31mred\x00\x07\x9b2J end\\n"
    finding = dataclasses.replace(result.findings[0], message=hostile_message, path=hostile_path)
    text = concise.render(dataclasses.replace(result, findings=[finding], errors=[], skipped=[]))
    lines = text.splitlines()
    assert len(lines) == 2 and text.count("\n") == 2
    assert lines[0] == (
        "a\\r\\n|\\x0b\\x0c\\x1c\\x1d\\x1e\\x85\\u2028\\u2029b\\x1b]0;title\\x07\\x00\\t\\x7f\\x9b.py:1:1: T015 [blocker] "
        "first\\x1b[31mred\\x00\\x07\\x9b2J end\\n"
    )
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", text.replace("\n", ""))


def test_message_whitespace_is_folded(result: ScanResult) -> None:
    finding = dataclasses.replace(result.findings[0], message="one\r\ntwo\u2028three\tfour")
    assert concise.finding_line(finding) == "csrc/k.cu:1:1: T015 [blocker] one two three four"


def test_error_lines_are_escaped(result: ScanResult) -> None:
    error = dataclasses.replace(result.errors[0], path="x\ny.py", message="bad\r\nthing")
    text = concise.render(dataclasses.replace(result, findings=[], errors=[error]))
    assert text.splitlines()[0] == "x\\ny.py: could not analyze (syntax-error): bad\\r\\nthing"


def test_only_the_first_sentence_of_a_message(result: ScanResult) -> None:
    finding = dataclasses.replace(result.findings[0], message="One thing  breaks.\nAnother sentence follows.")
    line = concise.finding_line(finding)
    assert line == "csrc/k.cu:1:1: T015 [blocker] One thing breaks"


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        # asides in parentheses go, backquoted code stays whole, clauses follow while they fit
        ("This CMake build enables CUDA (`LANGUAGES CUDA`, `enable_language(CUDA)`); it cannot configure on a TPU host. More.",
         "This CMake build enables CUDA; it cannot configure on a TPU host"),
        # a first clause too short to say much takes the next one, shortened
        ("Direct use of Triton (`import triton`): Triton does not target TPUs, so the package and the kernels written with it are unavailable there.",
         "Direct use of Triton: Triton does not target TPUs, so the package and…"),
        ("`torch.where(cond)` (one argument) returns a tensor whose size depends on the data, which on a TPU falls back to the host every step.",
         "`torch.where(cond)` returns a tensor whose size depends on the data…"),
        ("`f(a; b)` is fine: short.", "`f(a; b)` is fine: short"),
    ],
)
def test_a_message_is_cut_to_its_gist(result: ScanResult, message: str, shown: str) -> None:
    finding = dataclasses.replace(result.findings[0], message=message)
    assert concise.finding_line(finding) == f"csrc/k.cu:1:1: T015 [blocker] {shown}"
    assert len(shown) <= 72


def test_colour_only_on_request(result: ScanResult) -> None:
    plain = concise.render(result)
    coloured = concise.render(result, colour=True)
    assert "\x1b" not in plain
    assert "\x1b[1;31m[blocker]\x1b[0m" in coloured and "\x1b[33m[major]\x1b[0m" in coloured
    assert ANSI.sub("", coloured) == plain


def test_baselined_and_outside_diff_are_counted_not_listed(result: ScanResult) -> None:
    marks = {"T015": {"baselined": True}, "T009": {"baselined": True, "outside_diff": True}, "T005": {"outside_diff": True}}
    findings = [dataclasses.replace(f, **marks.get(f.rule, {})) for f in result.findings]
    lines = concise.render(dataclasses.replace(result, findings=findings, errors=[])).splitlines()
    assert lines == [
        # a notebook under notebooks/ is supporting code: at most minor
        "notebooks/look.ipynb:cell 3:2:1: T001 [minor] sync-call message",
        "pkg/evil\\nname.py:2:1: T001 [major] sync-call message",
        f"2 findings (1 major, 1 minor) in 4 files (not listed: 2 baselined, 1 outside the diff); {score_text(result)}",
    ]
    everything_baselined = dataclasses.replace(result, findings=[dataclasses.replace(f, baselined=True) for f in result.findings], errors=[])
    assert concise.render(everything_baselined) == f"0 findings in 4 files (not listed: 5 baselined); {score_text(result)}\n"


def test_configuration_errors_are_listed(result: ScanResult) -> None:
    problem = ScanError("tpucheck.toml", "config", "unknown key 'fail_under'\n(did you mean fail-under?)")
    text = concise.render(dataclasses.replace(result, findings=[], errors=[], configuration_errors=[problem]))
    assert text.splitlines() == [
        "tpucheck.toml: configuration error (config): unknown key 'fail_under'\\n(did you mean fail-under?)",
        f"0 findings in 4 files; 1 configuration error; {score_text(result)}",
    ]


def test_skipped_files_are_counted(result: ScanResult) -> None:
    text = concise.render(dataclasses.replace(result, findings=[], errors=[], skipped=[Skipped("big.py", "too big")]))
    assert text == f"0 findings in 4 files; 1 file skipped; {score_text(result)}\n"


def test_built_in_rules(tmp_path: Path) -> None:
    """With the shipped rules a line names the real rule and the gist of its message, and
    stays as short as a linter's."""
    ruleset = load_ruleset()
    root = write_tree(tmp_path / "repo", {"pkg/a.py": "import torch\ntorch.cuda.synchronize()\n"})
    result = scan(str(root), ruleset, ScanOptions(jobs=1))
    (finding,) = result.findings
    rule = next(r for r in ruleset.rules if r.id == finding.rule)
    assert rule.name == "cuda-synchronize"
    assert concise.render(result).splitlines() == [
        'pkg/a.py:2:1: CA001 [major] `torch.cuda.synchronize()` raises "Torch not compiled with CUDA…',
        f"1 finding (1 {rule.severity}) in 1 file; {score_text(result)}",
    ]


def test_every_built_in_rule_gives_a_short_line() -> None:
    for rule in load_ruleset().rules:
        gist = brief(rule.message)
        assert 30 <= len(gist) <= 72, (rule.id, gist)
        assert "\n" not in gist and not gist.endswith(".")


def test_a_path_cannot_start_a_workflow_command(tmp_path: Path) -> None:
    """A file named like a GitHub Actions command must not become one in a CI log, which
    reads any line that starts (after spaces) with `::` as a command."""
    from tpucheck.report import terminal

    root = write_tree(tmp_path / "repo", {"::error::x.py": "import torch\ntorch.cuda.synchronize()\n"})
    result = scan(str(root), load_ruleset(), ScanOptions(jobs=1))
    assert concise.render(result).splitlines()[0].startswith("./::error::x.py:2:1: CA001 ")
    buffer = io.StringIO()
    terminal.write(result, buffer)
    assert not [line for line in buffer.getvalue().splitlines() if line.lstrip().startswith("::")]
