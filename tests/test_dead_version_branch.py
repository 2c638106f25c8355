"""The side of a torch-version test that every release the targets run skips is dead code:
set aside with the test (`set-aside.dead-version`), as a module only such a test imports
is (audit AM). Adversarial: a test that differs between target releases, and a test of
another package's version, decide nothing."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

CODE = """\
import torch
import transformers


def wait_all():
    if torch.__version__ < "1.6":
        torch.cuda.synchronize(0)
    if torch.__version__ >= "2.0":
        torch.cuda.synchronize()
    else:
        torch.cuda.synchronize(1)
    if torch.__version__ >= "2.13":
        torch.cuda.synchronize(2)
    if transformers.__version__ < "1.6":
        torch.cuda.synchronize(3)
"""


def test_the_side_no_target_torch_takes_is_set_aside(tmp_path: Path) -> None:
    (tmp_path / "sync.py").write_text(CODE)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.span.line) for f in result.findings] == [("CA001", 9), ("CA001", 13), ("CA001", 15)]
    assert [(f.rule, f.span.line, [(r.rule, r.evidence) for r in f.because]) for f in result.set_aside] == [
        ("CA001", 7, [("set-aside.dead-version", '`torch.__version__ < "1.6"` at sync.py:6')]),
        ("CA001", 11, [("set-aside.dead-version", '`torch.__version__ >= "2.0"` at sync.py:8')]),
    ]
