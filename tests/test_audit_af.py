"""What audit AF (docs/audits/audit-af.md) found wrong that this round fixes, each with a
probe that failed at `2ec8124` and an adversarial look-alike that keeps its reading.

- A shell function that forwards its arguments to a runner (`function trun () { torchrun
  ... $@; }`) runs what it is given: `trun examples/zero_shot.py` launches that example,
  which is then product code (RADIO's `tools/*.sh`, six items judged too low).
- A `test_*` function nothing in its module calls is a hand-run check, not the module's
  evaluation loop (CogView's `test_sparse_attention`, two items judged too high)."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

RUN = """#!/bin/bash
export PYTHONPATH=.:examples
function trun () {
    LOGLEVEL=WARNING torchrun --nproc_per_node=$SUBMIT_GPUS --master_port=${PORT} $@
}
quiet() { echo "$@"; }

trun examples/zero_shot.py --resolution 224
quiet examples/other.py
"""
EXAMPLE = "import torch\n\n\ndef main(local_rank):\n    torch.cuda.set_device(local_rank)\n"


def _found(tmp_path: Path, files: dict[str, str], rule: str) -> list[tuple[str, int, int, str, str | None, tuple[str, ...]]]:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.path, f.span.line, f.span.column, f.severity, f.role, tuple(r.rule for r in f.because)) for f in result.findings if f.rule == rule)


def test_a_shell_function_that_forwards_to_a_runner_launches_its_argument(tmp_path: Path) -> None:
    files = {"tools/run.sh": RUN, "examples/zero_shot.py": EXAMPLE, "examples/other.py": EXAMPLE, "model.py": "import torch\n"}
    assert _found(tmp_path, files, "CA004") == [
        # `quiet` forwards its arguments to echo, not to a runner: the example stays one
        ("examples/other.py", 5, 5, "minor", "example", ("role.example", "severity.supporting")),
        ("examples/zero_shot.py", 5, 5, "major", "script", ("role.launched",)),
    ]


LIBRARY = """import torch


def sparse_attention(q):
    return q.softmax(-1)


def test_sparse_attention():
    q = torch.randn(4, 4, device="cuda")
    torch.cuda.synchronize()
    return sparse_attention(q)


def test_dense(q):
    return q.to("cuda")


def evaluate(q):
    return test_dense(q)
"""


def test_an_uncalled_test_function_in_a_library_module_is_a_test(tmp_path: Path) -> None:
    found = _found(tmp_path, {"mpu/attention.py": LIBRARY, "mpu/__init__.py": ""}, "CA003")
    assert found == [
        ("mpu/attention.py", 9, 34, "minor", "test", ("role.test-function", "severity.supporting")),
        # called by the module's own code: its evaluation path, product
        ("mpu/attention.py", 15, 17, "major", "library", ()),
    ]
