"""What audit AE (docs/audits/audit-ae.md) and its neighbours found that this round fixes,
each with a probe that failed at `138cda2` and an adversarial look-alike that keeps its
finding.

A `test_*` function is a test by what it does, not by its name: `def test_net(...)` in a
script that pytest never collects and that imports no test framework is the script's
evaluation loop (CRAFT's README command runs it), product code."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

SCRIPT = """import argparse

import torch


def test_net(net, image):
    x = image.cuda()
    return net(x)


def test_kernel():
    x = torch.randn(4, device="cuda")
    assert x.sum() == x.sum()


def test_matches():
    y = torch.ones(2, device="cuda")
    return torch.allclose(y, y)


class Runner:
    def test_step(self, batch):
        return batch.cuda()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    test_net(None, torch.zeros(1))
"""


def _found(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, int, str, str | None, tuple[str, ...]]]:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.path, f.span.line, f.span.column, f.severity, f.role, tuple(r.rule for r in f.because)) for f in result.findings if f.rule == "CA003")


def test_a_test_named_evaluation_loop_in_a_script_is_product(tmp_path: Path) -> None:
    found = _found(tmp_path, {"infer.py": SCRIPT})
    assert found == [
        # the evaluation loop: no assert, no numerics check, no test framework: product
        ("infer.py", 7, 15, "major", "library", ()),
        # a self-check that asserts, and one that compares numerics: tests
        ("infer.py", 12, 31, "minor", "test", ("role.test-function", "severity.supporting")),
        ("infer.py", 17, 30, "minor", "test", ("role.test-function", "severity.supporting")),
        # a plain class's `test_step` was product before and stays so
        ("infer.py", 23, 22, "major", "library", ()),
    ]


def test_a_module_that_imports_a_test_framework_keeps_its_test_functions(tmp_path: Path) -> None:
    text = "import pytest\n\n\ndef test_net(image):\n    return image.cuda()\n"
    found = _found(tmp_path, {"checks.py": text})
    assert found == [("checks.py", 5, 18, "minor", "test", ("role.test-function", "severity.supporting"))]


COUNTS = """import torch
import torch.nn as nn


class Trainer:
    def build(self, model):
        device_count = torch.cuda.device_count()
        if device_count > 1:
            print(f"Detected {device_count} GPUs")
            model = nn.DataParallel(model)
        return model


def batches(batch_size):
    n_gpu = torch.cuda.device_count()
    if n_gpu > 1:
        model = nn.DataParallel(None)
    return batch_size * n_gpu


def workers(n_workers):
    if n_workers > 1:
        return nn.DataParallel(None)


def report():
    gpus = torch.cuda.device_count()
    print(f"{gpus} GPUs")
"""


def test_a_device_count_kept_in_a_name_and_only_compared_is_the_guard(tmp_path: Path) -> None:
    (tmp_path / "trainer.py").write_text(COUNTS)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    found = sorted((f.rule, f.span.line, f.span.column, f.severity, tuple(r.rule for r in f.because)) for f in result.findings)
    assert found == [
        # the count is also a number (a batch size): it does work, and keeps its finding
        ("CA004", 15, 13, "major", ()),
        # a count only printed guards nothing: it is the count's own edit
        ("CA004", 27, 12, "major", ()),
        ("CA019", 10, 21, "info", ("guard.test", "severity.guarded")),
        ("CA019", 17, 17, "info", ("guard.test", "severity.guarded")),
        # a count of something else guards nothing
        ("CA019", 23, 16, "major", ()),
    ]


AMP_OFF = """trainer:
  amp:
    enabled: False
    amp_dtype: float16
  eval_amp:
    enabled: true
    amp_dtype: float16
  enabled: false
"""


def test_a_setting_in_a_config_block_switched_off_is_a_note(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "base.yaml").write_text(AMP_OFF)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    found = sorted((f.rule, f.span.line, f.span.column, f.severity, f.guarded, tuple(r.rule for r in f.because)) for f in result.findings)
    assert found == [
        ("PR004", 4, 5, "info", True, ("guard.switched-off", "severity.guarded")),
        # the block beside it is on; and a parent's switch is not the block's own
        ("PR004", 7, 5, "major", False, ()),
    ]


TWIN = {
    "palm/__init__.py": "from palm.model import PaLM\n",
    "palm/model.py": "import torch\n\n\nclass PaLM(torch.nn.Module):\n    def forward(self, x):\n        return x.softmax(-1)\n",
    "palm/triton/__init__.py": "from palm.triton.model import PaLM\n",
    "palm/triton/model.py": "import torch\nfrom palm.triton.softmax import softmax\n\n\nclass PaLM(torch.nn.Module):\n    def forward(self, x):\n        return softmax(x)\n",
    "palm/triton/softmax.py": (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef _softmax_kernel(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n"
        "\n\ndef softmax(x):\n    _softmax_kernel[(1,)](x, x.numel(), BLOCK=1024)\n    return x\n"
    ),
    "train.py": "from palm import PaLM\n\nmodel = PaLM()\n",
}


def _kernels(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, int, str, tuple[str, ...]]]:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.path, f.span.line, f.span.column, f.severity, tuple(r.rule for r in f.because)) for f in result.findings if f.rule == "CK004")


def test_a_subpackage_twin_of_the_packages_own_model_is_an_alternative_build(tmp_path: Path) -> None:
    assert _kernels(tmp_path, TWIN) == [("palm/triton/softmax.py", 5, 2, "major", ("alternative.twin-package", "severity.kernel-fallback"))]


def test_a_twin_a_script_picks_is_still_an_alternative_build(tmp_path: Path) -> None:
    # PaLM's enwik8 `train.py` imports the Triton build: one import line, as a user's
    files = {**TWIN, "train.py": "from palm.triton import PaLM\n\nmodel = PaLM()\n"}
    assert _kernels(tmp_path, files) == [("palm/triton/softmax.py", 5, 2, "major", ("alternative.twin-package", "severity.kernel-fallback"))]


def test_a_twin_the_library_itself_imports_is_its_main_path(tmp_path: Path) -> None:
    # a module of the package runs on the Triton build: its kernels are the product's
    files = {**TWIN, "palm/generate.py": "from palm.triton import PaLM\n\n\ndef sample():\n    return PaLM()\n"}
    assert _kernels(tmp_path, files) == [("palm/triton/softmax.py", 5, 2, "blocker", ())]


def test_a_subpackage_exporting_a_name_of_its_own_is_no_twin(tmp_path: Path) -> None:
    files = {**TWIN, "palm/triton/__init__.py": "from palm.triton.model import PaLM as FastPaLM\nfrom palm.triton.softmax import softmax\n"}
    files["palm/triton/model.py"] = files["palm/triton/model.py"].replace("class PaLM", "class FastPaLM")
    files["palm/triton/__init__.py"] = "from palm.triton.model import FastPaLM\n"
    assert _kernels(tmp_path, files) == [("palm/triton/softmax.py", 5, 2, "blocker", ())]


def test_a_root_that_re_exports_the_subpackages_name_uses_it(tmp_path: Path) -> None:
    # the package root's PaLM is the Triton one: no twin, the main path
    files = {**TWIN, "palm/__init__.py": "from palm.triton.model import PaLM\n"}
    assert _kernels(tmp_path, files) == [("palm/triton/softmax.py", 5, 2, "blocker", ())]
