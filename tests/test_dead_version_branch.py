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


PROBES = """\
import torch

try:
    nan_to_num = torch.nan_to_num
except AttributeError:
    def nan_to_num(x, nan=0.0):
        return x.unsqueeze(0).nansum(0)

try:
    from torch.amp import autocast
except ImportError:
    def autocast(device):
        return torch.nansum(device)

try:
    from torch._six import inf
except ImportError:
    inf = torch.nansum(torch.ones(1).cuda())

try:
    gone = torch.no_such_function
except AttributeError:
    def gone(x):
        return torch.nansum(x)

try:
    also = torch.nan_to_num
except Exception:
    def also(x):
        return torch.nansum(x)
"""


def test_an_old_torch_s_stand_in_is_set_aside(tmp_path: Path) -> None:
    """`try: nan_to_num = torch.nan_to_num / except AttributeError: def nan_to_num(...)`
    (StyleGAN2-ADA's misc.py, copied widely; audits M, V, BE: its `nansum` judged false as
    a blocker): every torch the targets run has the name, so the handler never runs.
    Adversarial: a name the supported torch lacks (`torch._six`, one it never had) keeps
    the handler live, and so does a broad catch, which says nothing of what failed."""
    (tmp_path / "misc.py").write_text(PROBES)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.span.line, f.severity) for f in result.findings if f.rule == "UO963"] == [
        ("UO963", 18, "blocker"),
        ("UO963", 24, "blocker"),
        ("UO963", 30, "blocker"),
    ]
    assert [(f.rule, f.span.line, f.because[0].rule, f.because[0].evidence) for f in result.set_aside if f.rule == "UO963"] == [
        ("UO963", 7, "set-aside.dead-version", "`except AttributeError:` at misc.py:5"),
        ("UO963", 13, "set-aside.dead-version", "`except ImportError:` at misc.py:11"),
    ]
    assert result.set_aside_counts() == {"set-aside.dead-version": 2}
