"""The Markdown report: exact lines for a small scanned tree, escaping of hostile input,
the size cap that keeps a step summary under GitHub's 1 MiB, and determinism."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from conftest import SYNC_NOTEBOOK, fixture_ruleset, write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.judge.score import PHASE_TITLES
from tpucheck.report import markdown
from tpucheck.report.judgement import hours
from tpucheck.report.options import STEP_SUMMARY_LIMIT, ReportOptions
from tpucheck.result import Inventory, KernelEntry, PackageEntry, ScanResult
from tpucheck.ruleset import load_ruleset

HELP = "https://github.com/tpucheck/tpucheck/blob/main/docs/rules.md"

FILES = {
    "pkg/train.py": (
        "import torch\n"
        "import torch.distributed as dist\n"
        'dist.init_process_group("nccl")\n'
        "for batch in loader:\n"
        "    loss.item()\n"
        "torch.cuda.empty_cache()  # tpucheck: ignore[T014] -- harmless | really\n"
        'torch.cuda.synchronize("</details><script>alert(1)</script> @someone #123 `x`")\n'
    ),
    "pkg/a|b.py": "import torch\ntorch.cuda.synchronize()\n",
    "pkg/broken.py": "import torch\ntorch.cuda.synchronize(\n",
    "csrc/k.cu": "__global__ void add_kernel(float* x) {}\n",
    "notebooks/look.ipynb": SYNC_NOTEBOOK,
}


@pytest.fixture()
def result(tmp_path: Path) -> ScanResult:
    return scan(str(write_tree(tmp_path / "repo", FILES)), fixture_ruleset(), ScanOptions(jobs=1))


def lines_of(result: ScanResult) -> list[str]:
    return markdown.render(result).splitlines()


def test_headline_and_sections(result: ScanResult) -> None:
    lines = lines_of(result)
    score = result.score
    assert lines[0] == (
        f"**TPU readiness {score.score:.1f}/100 ({score.grade}: {score.grade_meaning})** · target TorchTPU"
        f" · effort {hours(score.effort)} (+ {hours(score.supporting_effort)} tests, examples, benchmarks)"
        f" · training {score.training:.1f} · inference {score.inference:.1f}"
        f" · {result.coverage.files_analyzed} files, {result.coverage.lines_scanned} lines scanned"
    )
    headings = [line for line in lines if line.startswith("### ")]
    assert headings == ["### Inventory", "### Findings by category", "### Migration plan", "### Top files"]
    assert lines[-1].startswith("Coverage: ")


def test_inventory_lists_kernels_and_packages(result: ScanResult) -> None:
    # The fixture rules carry no `inventory` tag, so the inventory is set here directly.
    result.inventory = Inventory(
        kernels=(KernelEntry("csrc/k.cu", 1, "add_kernel", "T015"), KernelEntry("csrc/<x>.cu", 4, None, "T015")),
        packages=(PackageEntry("flash-attn", "T017", 2, ("requirements.txt",), "Use @torch sdpa | see #12"),),
        training_findings=3,
        inference_findings=1,
    )
    lines = lines_of(result)
    assert "**Custom kernels:** 2" in lines
    assert "- <code>csrc/k.cu:1</code> <code>add\\_kernel</code>" in lines
    assert "- <code>csrc/&lt;x&gt;.cu:4</code> (unnamed)" in lines
    assert "- <code>flash-attn</code> (2 uses): Use <code>&#64;</code>torch sdpa \\| see <code>&#35;</code>12" in lines
    assert "**Work by workload:** training 3 findings · inference 1 findings" in lines


def test_category_plan_and_finding_rows(result: ScanResult) -> None:
    lines = lines_of(result)
    counts = {s: sum(f.severity == s and f.category == "cuda-api" for f in result.findings) for s in ("blocker", "major", "minor", "info")}
    total = sum(counts.values())
    assert f"| cuda-api | {counts['blocker']} | {counts['major']} | {counts['minor']} | {counts['info']} | {total} |" in lines

    item = result.score.plan[0]
    expected = (
        f"| 1 | {PHASE_TITLES[item.phase]} | [{item.rule}]({HELP}#{item.rule.lower()}) {item.title.replace('_', chr(92) + '_')} | {item.severity}"
        f" | {item.score_after:.1f} (+{item.score_gain:.1f}) | {item.effort.low:.1f}–{item.effort.high:.1f} | tpu fix |"
    )
    assert expected in lines

    assert (
        f"| minor | [T001]({HELP}#t001) | <code>notebooks/look.ipynb:2:1</code> [cell 3] | sync-call message | <code>torch.cuda.synchronize()</code> |"
        in lines
    )
    assert any(line.startswith("<details><summary>All ") and line.endswith(" findings</summary>") for line in lines)
    assert "<details><summary>1 file could not be analyzed</summary>" in lines
    assert "<details><summary>1 finding suppressed</summary>" in lines
    assert f"| [T014]({HELP}#t014) | <code>pkg/train.py:6:1</code> | harmless \\| really |" in lines


def test_hostile_text_is_escaped(result: ScanResult) -> None:
    text = markdown.render(result)
    assert "<script>" not in text and "</script>" not in text
    assert text.count("</details>") == text.count("<details>")
    assert "@someone" not in text and "#123" not in text
    assert "&lt;/details&gt;&lt;script&gt;alert(1)&lt;/script&gt; &#64;someone &#35;123 \\`x\\`" in text
    assert "| <code>pkg/a\\|b.py</code> | library |" in text
    # every table row keeps its column count: no unescaped pipe splits a cell
    for line in text.splitlines():
        if line.startswith("| major |"):
            assert line.replace("\\|", "").count("|") == 6, line


def test_mentions_outside_code_are_wrapped() -> None:
    assert markdown._escape("ask @bob about #42, a@ b") == "ask <code>&#64;</code>bob about <code>&#35;</code>42, a&#64; b"
    assert markdown._escape("a\nb | c", None) == "a b \\| c"
    assert markdown._code("a `b` <i>") == "<code>a \\`b\\` &lt;i&gt;</code>"


def test_size_cap_leaves_rows_out(result: ScanResult, monkeypatch: pytest.MonkeyPatch) -> None:
    full = markdown.render(result)
    monkeypatch.setattr(markdown, "SIZE_LIMIT", len(full.encode()) - 200)
    capped = markdown.render(result)
    assert len(capped.encode()) < len(full.encode())
    left = [line for line in capped.splitlines() if "left out to stay under GitHub's size limit" in line]
    assert left and left[0].split()[0].isdigit()
    assert capped.count("<details>") == capped.count("</details>")
    assert capped.splitlines()[-1].startswith("Coverage: ")


def test_default_cap_is_a_pull_request_comment() -> None:
    assert markdown.SIZE_LIMIT == 65_536


def _many_findings(tmp_path: Path, files: int) -> ScanResult:
    """A generated tree whose report runs far past a PR comment's limit."""
    for n in range(files):
        body = "import torch\n" + "".join(f"x{i} = torch.zeros(3).cuda()  # long line {'y' * 40}\n" for i in range(40))
        (tmp_path / f"m{n:03d}.py").write_text(body)
    return scan(str(tmp_path), load_ruleset(), ScanOptions(jobs=1, use_cache=False))


def test_large_report_fits_a_comment_and_a_step_summary(tmp_path: Path) -> None:
    big = _many_findings(tmp_path, 60)
    comment = markdown.render(big)
    assert len(comment) <= 65_536 and len(comment.encode()) <= 65_536
    assert "left out to stay under GitHub's size limit" in comment
    assert comment.splitlines()[-1].startswith("Coverage: ")
    summary = io.StringIO()
    markdown.write(big, summary, ReportOptions(size_limit=STEP_SUMMARY_LIMIT))
    assert 65_536 < len(summary.getvalue().encode()) <= STEP_SUMMARY_LIMIT


def test_rule_text_renders_inline_code_as_code() -> None:
    assert markdown._prose("Use `torch.tpu.synchronize()` or `x<y`.") == (
        "Use <code>torch.tpu.synchronize()</code> or <code>x&lt;y</code>."
    )
    # cut at a word, never inside a code span
    cut = markdown._prose("Call `torch.accelerator.synchronize()` before timing the step loop", 30)
    assert cut == "Call…"


def test_deterministic(result: ScanResult) -> None:
    first, second = io.StringIO(), io.StringIO()
    markdown.write(result, first, ReportOptions(colour=True))
    markdown.write(result, second, ReportOptions(colour=False))
    assert first.getvalue() == second.getvalue() == markdown.render(result)
    assert str(result.root) not in first.getvalue()


def test_hours_priced_apart_are_named_in_the_headline(tmp_path: Path) -> None:
    # Experimental code (and submodules) is priced apart like supporting code: the headline
    # says how much and for what, so the split "where the work is" adds up.
    files = {"pkg/train.py": "import torch\ntorch.cuda.synchronize()\n", "experimental/fast.py": "import torch\ntorch.cuda.synchronize()\n"}
    result = scan(str(write_tree(tmp_path / "repo", files)), load_ruleset(), ScanOptions(jobs=1))
    score = result.score
    assert score.optional_effort.high > 0 and score.supporting_effort.high == 0
    assert f" · effort {hours(score.effort)} (+ {hours(score.optional_effort)} experimental code and submodules) · " in lines_of(result)[0]
