"""What audit AB (docs/audits/audit-ab.md) and blind sets 19-23 found wrong, each with a
probe that fails on the model audit AB judged (3fbbc18), and a look-alike that must keep
its judgement."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

Row = tuple[str, int, int, str, str]


def rows(root: Path, files: dict[str, str], rules: tuple[str, ...]) -> list[Row]:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted(
        (f.rule, f.span.line, f.span.column, f.severity, f.because[-1].rule if f.because else "") for f in result.findings if f.rule in rules
    )


AMP_MAIN = """\
import torch
from contextlib import suppress

from engine import train_one_epoch


def main(args, model, loader, optimizer):
    amp_autocast = suppress
    if args.amp:
        amp_autocast = torch.cuda.amp.autocast
    train_one_epoch(model, loader, optimizer, amp_autocast=amp_autocast)
"""

AMP_ENGINE = """\
def train_one_epoch(model, loader, optimizer, amp_autocast):
    for x in loader:
        with amp_autocast():
            loss = model(x).mean()
        loss.backward()
        optimizer.step()
"""


def test_cuda_autocast_chosen_as_a_value_is_the_amp_path(tmp_path: Path) -> None:
    """Audit AB (volo, T2T-ViT): `amp_autocast = torch.cuda.amp.autocast`, entered in the
    training loop it is passed to, was reported only as a minor `torch.cuda.amp` mention."""
    assert rows(tmp_path, {"main.py": AMP_MAIN, "engine.py": AMP_ENGINE}, ("CA014", "CA107")) == [("CA014", 10, 24, "major", "")]


def test_cuda_autocast_turned_off_is_still_no_amp_path(tmp_path: Path) -> None:
    """Adversarial: a call of the same name that turns autocast off is no request for fp16;
    the value matcher leaves calls to the call matchers, which read the arguments."""
    code = "import torch\n\n\ndef f(model, x):\n    with torch.cuda.amp.autocast(enabled=False):\n        return model(x.float())\n"
    assert rows(tmp_path, {"pkg/f.py": code}, ("CA014",)) == []


COUNTER = """\
import torch
import torch.distributed as dist


class SmoothedValue:
    def __init__(self):
        self.count = 0
        self.total = 0.0

    def synchronize_between_processes(self):
        t = torch.tensor([self.count, self.total], dtype=torch.float64, device="cuda")
        dist.all_reduce(t)
        return t
"""


def test_an_fp64_counter_of_two_scalars_is_minor(tmp_path: Path) -> None:
    """Audits K, M, Q, Z, AA and AB: the metric logger's [count, total] in fp64 is judged
    minor every time (PR002 is minor since audit AF); its device="cuda" stays a finding of
    its own."""
    assert rows(tmp_path, {"pkg/utils.py": COUNTER}, ("PR002", "CA003")) == [
        ("CA003", 11, 80, "major", ""),
        ("PR002", 11, 52, "minor", ""),
    ]


def test_fp64_data_on_the_device_is_reported(tmp_path: Path) -> None:
    """Adversarial: a tensor of data (a variable, a comprehension, five values, a
    constructor) in fp64 on the device is reported, at the rule's severity (minor: fp64
    runs emulated on a TPU, it does not fail; audits J-AF)."""
    code = """\
import torch


def features(x, values, a, b, c, d, e):
    p = torch.tensor(values, dtype=torch.float64, device=x.device)
    q = torch.tensor([v * 2 for v in values], dtype=torch.float64, device=x.device)
    r = torch.tensor([a, b, c, d, e], dtype=torch.float64, device=x.device)
    s = torch.zeros(4, dtype=torch.float64, device=x.device)
    t = torch.tensor([a.sum(), b], dtype=torch.float64, device=x.device)
    return p, q, r, s, t
"""
    assert [(rule, line, severity) for rule, line, _, severity, _ in rows(tmp_path, {"pkg/f.py": code}, ("PR002",))] == [
        ("PR002", line, "minor") for line in (5, 6, 7, 8, 9)
    ]
