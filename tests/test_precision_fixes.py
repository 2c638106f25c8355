"""False alarms the precision audits found on real code, each asserted absent (or lowered)
next to the true positive that must stay (issue 11 point 7)."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

Row = tuple[str, int, int, str, bool]


def found(tmp_path: Path, code: str, path: str = "pkg/mod.py", rules: tuple[str, ...] = ()) -> list[Row]:
    target = tmp_path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(dedent(code), encoding="utf-8")
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1))
    return sorted((f.rule, f.span.line, f.span.column, f.severity, f.guarded) for f in result.findings if not rules or f.rule in rules)


def test_another_accelerators_stream_is_not_cuda(tmp_path: Path) -> None:
    code = """\
        import torch

        def sync(stream, on_cuda):
            if on_cuda:
                torch.cuda.current_stream().wait_stream(stream)
            else:
                torch.npu.current_stream().wait_stream(stream)
        """
    # one finding for the CUDA line (not one per call in it), none for the NPU line
    assert found(tmp_path, code, rules=("CA008",)) == [("CA008", 5, 9, "major", False)]
