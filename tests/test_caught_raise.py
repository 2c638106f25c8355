"""A `raise` under a CUDA-absent test, inside a try whose handler swallows everything, ends
there as a `return` would (audit AY: VoxCPM's `optimize()` raises "only on CUDA" into its own
`except Exception: print(...)`): what follows in the try runs only with CUDA, and the test
stops nothing. Adversarial: an uncaught raise, a handler that re-raises, a narrow handler
and a function defined inside the try keep the CUDA path the main one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

CAUGHT = """\
import torch


def optimize(model, device):
    try:
        if device != "cuda":
            raise ValueError("optimizing needs a CUDA device")
        torch.cuda.synchronize()
    except Exception as err:
        print(f"not optimized: {err}")
"""


def _rows(tmp_path: Path, code: str) -> list[tuple[str, int, str, tuple[str, ...]]]:
    (tmp_path / "model.py").write_text(code)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.rule, f.span.line, f.severity, tuple(r.rule for r in f.because)) for f in result.findings)


def test_a_raise_the_try_swallows_is_an_early_exit(tmp_path: Path) -> None:
    assert _rows(tmp_path, CAUGHT) == [
        ("CA001", 8, "minor", ("guard.early-exit", "severity.guarded")),
        ("DP010", 6, "minor", ("where.rule",)),
    ]


@pytest.mark.parametrize(
    ("code", "why"),
    [
        (CAUGHT.replace("    try:\n", "    if True:\n").replace("    except Exception as err:\n        print(f\"not optimized: {err}\")\n", ""), "no try: the raise stops the program"),
        (CAUGHT.replace('        print(f"not optimized: {err}")\n', '        print(f"not optimized: {err}")\n        raise\n'), "the handler re-raises"),
        (CAUGHT.replace("except Exception as err", "except KeyError as err"), "the handler catches another error"),
    ],
)
def test_a_raise_that_escapes_keeps_the_cuda_path_main(tmp_path: Path, code: str, why: str) -> None:
    rows = _rows(tmp_path, code)
    assert ("CA001", 8, "major", ()) in rows, why


def test_a_function_defined_in_the_try_raises_on_its_own(tmp_path: Path) -> None:
    """Its body runs where it is called (here after the try): the try's handler is no
    evidence it catches that raise."""
    code = """\
import torch


def optimize(model, device):
    try:
        def run():
            if device != "cuda":
                raise ValueError("needs CUDA")
            torch.cuda.synchronize()
    except Exception as err:
        print(f"not defined: {err}")
    run()
"""
    assert ("CA001", 9, "major", ()) in _rows(tmp_path, code)
