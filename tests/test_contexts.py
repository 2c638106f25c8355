"""Context lowers what deserves lowering, read from the code (issue 11, point 3).

Each case is code that was a false alarm (or too severe) before and is now absent,
marked fallback kept (`guarded`) or given a supporting role, next to a true positive
that must stay as it was. Findings are (rule, line, column, severity, guarded, role),
as the engine reports them for a file at `path`.
"""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

# Judged for PyTorch/XLA, where hot-code host syncs keep their weight: the contexts under
# test (periodic branches, host data) are visible in the severities there.
RULESET = load_ruleset().for_target("xla")

Row = tuple[str, int, int, str, bool, str]


def found(tmp_path: Path, code: str, path: str = "pkg/mod.py", rules: tuple[str, ...] = ()) -> list[Row]:
    target = tmp_path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(dedent(code), encoding="utf-8")
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1))
    rows = [
        (f.rule, f.span.line, f.span.column, f.severity, f.guarded, f.role)
        for f in result.findings
        if not rules or f.rule in rules
    ]
    return sorted(rows)


# -- guards: fallback kept ---------------------------------------------------------------

DEVICE_BRANCHES = """\
import torch
import torch.nn.functional as F

def attn(q, k, v):
    if q.is_cuda:
        torch.cuda.synchronize()
    return F.softmax(q, -1)

def attn2(x, device):
    if device.type == "cuda":
        torch.cuda.synchronize()
    elif device.type == "xla":
        pass
    else:
        pass
    if "cuda" in str(device):
        torch.cuda.empty_cache()
    if device.type != "cuda":
        return x
    torch.cuda.synchronize()
    return x

def early(x):
    if not torch.cuda.is_available():
        return x.float()
    torch.cuda.synchronize()
    return x

def plain(x):
    torch.cuda.synchronize()
    y = x.cuda() if x.is_cuda else x
    return y

device = "cuda" if torch.cuda.is_available() else "cpu"
"""


def test_cuda_branches_and_early_exits_are_fallback_kept(tmp_path: Path) -> None:
    rows = found(tmp_path, DEVICE_BRANCHES, rules=("CA001", "CA002", "CA003", "CA007"))
    assert rows == [
        ("CA001", 6, 9, "minor", True, "library"),  # if q.is_cuda
        ("CA001", 11, 9, "minor", True, "library"),  # device.type == "cuda" with an xla sibling
        ("CA001", 20, 5, "minor", True, "library"),  # after `if device.type != "cuda": return`
        ("CA001", 26, 5, "minor", True, "library"),  # after `if not is_available(): return`
        ("CA001", 30, 5, "major", False, "library"),  # true positive: unconditional
        # The check that picks a device is kept; the ones that only guard are dropped.
        # One expression, one edit: `"cuda" if torch.cuda.is_available() else "cpu"` is the
        # device pick (CA002), its "cuda" no second finding (issue 23).
        ("CA002", 34, 20, "major", False, "library"),
        ("CA003", 31, 11, "minor", True, "library"),  # ternary on x.is_cuda
        ("CA007", 17, 9, "info", True, "library"),  # "cuda" in str(device)
    ]


def test_cuda_branch_with_xla_or_tpu_sibling_is_fallback_kept(tmp_path: Path) -> None:
    code = """\
    import torch
    import torch_xla.core.xla_model as xm
    from transformers.utils import is_torch_xla_available

    def pick():
        if is_torch_xla_available():
            return xm.xla_device()
        if torch.tpu.is_available():
            return torch.device("tpu")
        return torch.device("cuda")

    def f(x):
        if x.device.type == "xla":
            y = x
        else:
            torch.cuda.synchronize()

    def g():
        return torch.device("cuda")
    """
    assert found(tmp_path, code, rules=("CA001", "CA003")) == [
        ("CA001", 16, 9, "minor", True, "library"),
        ("CA003", 10, 25, "minor", True, "library"),
        ("CA003", 19, 25, "major", False, "library"),  # true positive: no sibling
    ]


# -- tests that skip without CUDA ---------------------------------------------------------

def test_cuda_skip_conditions_mark_tests_and_drop_the_check(tmp_path: Path) -> None:
    code = """\
    import pytest
    import torch
    import unittest

    @pytest.mark.skipif(not torch.cuda.is_available(), reason="cuda")
    def test_a():
        torch.cuda.synchronize()

    class T(unittest.TestCase):
        @unittest.skipUnless(torch.cuda.is_available(), "cuda")
        def test_b(self):
            torch.cuda.synchronize()

        def test_c(self):
            if not torch.cuda.is_available():
                self.skipTest("cuda")
            torch.cuda.synchronize()

    def test_d():
        torch.cuda.synchronize()
    """
    assert found(tmp_path, code, "tests/test_x.py", rules=("CA001", "CA002")) == [
        ("CA001", 7, 5, "minor", True, "test"),  # supporting code: at most minor
        ("CA001", 12, 9, "minor", True, "test"),  # supporting code: at most minor
        ("CA001", 17, 9, "minor", True, "test"),  # supporting code: at most minor
        ("CA001", 20, 5, "minor", False, "test"),  # supporting code: at most minor (true positive: never skipped)
    ]


def test_module_skip_mark_and_importorskip(tmp_path: Path) -> None:
    marked = """\
    import pytest
    import torch
    pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="cuda")

    def test_a():
        torch.cuda.synchronize()
    """
    assert found(tmp_path / "a", marked, "tests/test_m.py", rules=("CA001", "CA002")) == [("CA001", 6, 5, "minor", True, "test")]  # supporting code: at most minor
    skipped = """\
    import pytest
    import torch

    def test_a():
        flash_attn = pytest.importorskip("flash_attn")
        torch.cuda.synchronize()

    def test_b():
        torch.cuda.synchronize()
    """
    assert found(tmp_path / "b", skipped, "tests/test_i.py", rules=("CA001",)) == [
        ("CA001", 6, 5, "minor", True, "test"),  # supporting code: at most minor
        ("CA001", 9, 5, "minor", False, "test"),  # supporting code: at most minor
    ]


# -- supporting code inside library files ------------------------------------------------

ROLES = """\
import torch

def step(x):
    return x.item()

def bench_matmul(x):
    torch.cuda.synchronize()

def test_smoke():
    assert torch.cuda.synchronize() is None

if __name__ == "__main__":
    torch.cuda.synchronize()
"""


def test_main_blocks_benchmarks_and_test_functions_take_their_role(tmp_path: Path) -> None:
    assert found(tmp_path, ROLES, rules=("CA001", "HS001")) == [
        ("CA001", 7, 5, "minor", False, "benchmark"),  # supporting code: at most minor
        ("CA001", 10, 12, "minor", False, "test"),  # supporting code: at most minor
        ("CA001", 13, 5, "minor", False, "example"),  # supporting code: at most minor
        ("HS001", 4, 14, "major", False, "library"),  # true positive: product code
    ]


def test_a_file_already_supporting_keeps_its_path_role(tmp_path: Path) -> None:
    assert {row[5] for row in found(tmp_path / "t", ROLES, "tests/test_r.py", rules=("CA001", "HS001"))} == {"test"}


# -- host data and periodic branches -----------------------------------------------------

HOST = """\
import numpy as np
import torch

def train(model, loader, log_every):
    for step, batch in enumerate(loader):
        loss = model(batch)
        ids = np.asarray(batch["ids"])
        if ids.any():
            pass
        host = loss.detach().cpu()
        v = host.item()
        flags = [True, False]
        ok = np.array(flags).all()
        if step % log_every == 0:
            print(loss.item())
        if (step + 1) % 10 == 0 and log_every:
            print(loss.item())
        print(loss.item())
        host = model(batch)
        host.item()

def stats(a: np.ndarray):
    for i in range(3):
        a.tolist()

def window_median(values, x):
    for i in range(3):
        d = torch.tensor(list(values))
        d.median().item()           # a CPU tensor's reduction stays on the CPU
        (d > 0).any().item()
        (x * 2).median().item()     # x is the caller's: maybe on the device
"""


def test_host_data_drops_method_rules_and_periodic_branches_are_not_hot(tmp_path: Path) -> None:
    assert found(tmp_path, HOST, rules=("HS001", "HS002", "HS003", "HS010")) == [
        ("HS001", 15, 24, "info", False, "library"),  # every log_every steps
        ("HS001", 17, 24, "info", False, "library"),
        ("HS001", 18, 20, "major", False, "library"),  # true positive: every step
        ("HS001", 20, 14, "major", False, "library"),  # `host` rebound to a device value
        ("HS001", 31, 26, "major", False, "library"),  # a reduction keeps the device it had
        ("HS010", 10, 30, "major", False, "library"),  # the copy itself is still a sync
    ]


# -- existing TPU support ----------------------------------------------------------------

def test_existing_tpu_support_is_inventoried(tmp_path: Path) -> None:
    code = """\
    import torch
    import torch_xla.core.xla_model as xm
    import torch_tpu

    def pick(x):
        if x.device.type in ("tpu",):
            return x
        return torch.device("xla")
    """
    target = tmp_path / "pkg/mod.py"
    target.parent.mkdir(parents=True)
    target.write_text(dedent(code), encoding="utf-8")
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1))
    support = sorted((f.rule, f.span.line, f.span.column, f.severity, f.detail) for f in result.findings if f.rule.startswith("TS"))
    assert support == [
        ("TS001", 2, 8, "info", "torch_xla.core.xla_model"),
        ("TS001", 8, 25, "info", "xla"),
        ("TS002", 3, 8, "info", "torch_tpu"),
        ("TS002", 6, 26, "info", "tpu"),
    ]
    assert {r.inventory for r in RULESET.rules if r.id in ("TS001", "TS002")} == {"tpu-support"}


@pytest.mark.parametrize("hs", ["HS001"])
def test_device_values_are_not_host_data(tmp_path: Path, hs: str) -> None:
    code = """\
    import torch
    def forward(self, x):
        y = torch.zeros(3, device="cuda")
        return y.item()
    """
    assert found(tmp_path, code, rules=(hs,)) == [(hs, 4, 14, "major", False, "library")]


def test_a_skip_on_a_feature_that_is_not_cuda_is_no_fallback(tmp_path: Path) -> None:
    code = """\
    import pytest
    import torch
    _HAS_WEIGHTS_ONLY = True

    @pytest.mark.skipif(not _HAS_WEIGHTS_ONLY, reason="old torch")
    def test_a():
        torch.cuda.synchronize()
    """
    assert found(tmp_path, code, "tests/test_w.py", rules=("CA001",)) == [("CA001", 7, 5, "minor", False, "test")]  # supporting code: at most minor


def test_on_torchtpu_a_host_sync_is_work_only_in_compiled_code(tmp_path: Path) -> None:
    """Eager TorchTPU syncs as the GPU does: only a compiled step's `.item()` is reported."""
    code = """
        import torch

        def train_step(loss):
            return loss.item()

        @torch.compile
        def compiled_step(loss):
            return loss.item()
    """
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/mod.py").write_text(dedent(code), encoding="utf-8")
    rows = {}
    for target in ("torchtpu", "xla"):
        result = scan(str(tmp_path), load_ruleset().for_target(target), ScanOptions(jobs=1, use_cache=False))
        rows[target] = sorted((f.span.line, f.severity) for f in result.findings if f.rule == "HS001")
    assert rows == {"torchtpu": [(9, "major")], "xla": [(5, "major"), (9, "major")]}


def test_an_import_inside_a_function_is_an_optional_integration(tmp_path: Path) -> None:
    code = """
        import deepspeed

        def setup_deepspeed(model):
            import deepspeed as ds
            return ds.initialize(model=model)
    """
    rows = found(tmp_path, code, rules=("DEP005",))
    # a CUDA-only package with a presumed fallback (a lazy import): a small check, minor
    assert rows == [("DEP005", 2, 8, "blocker", False, "library"), ("DEP005", 5, 12, "minor", True, "library")]


def test_imports_for_type_checking_only_are_no_dependency(tmp_path: Path) -> None:
    code = """
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from deepspeed import DeepSpeedEngine
        else:
            import deepspeed
    """
    assert found(tmp_path, code, rules=("DEP005",)) == [("DEP005", 6, 12, "blocker", False, "library")]
