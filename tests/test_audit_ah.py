"""What audit AH (docs/audits/audit-ah.md) found wrong that this round fixes, with a probe
that failed at `0b641e5` and look-alikes that keep their reading.

A project's own check named by the availability convention (`has_*`, `is_*_available`)
asks about the machine only when it takes nothing but literals: `has_batchnorms(model)`
asks about its argument, so the SyncBatchNorm it guards is on the main path (esvit, 4 too
low); `has_apex()` and `is_package_available("apex")` stay guards."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

TRAIN = """import torch
import torch.nn as nn
from utils import has_batchnorms, has_apex, is_package_available


def build(student):
    if has_batchnorms(student):
        student = nn.SyncBatchNorm.convert_sync_batchnorm(student)
    if has_apex():
        student = nn.SyncBatchNorm.convert_sync_batchnorm(student)
    if is_package_available("apex"):
        torch.cuda.synchronize()
    return student


def step(model, x):
    model(x).sum().backward()
"""
UTILS = "def has_batchnorms(m):\n    return True\n\n\ndef has_apex():\n    return False\n\n\ndef is_package_available(name):\n    return False\n"


def test_a_check_that_asks_about_its_argument_guards_nothing(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "utils.py").write_text(UTILS)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    found = sorted((f.rule, f.span.line, f.span.column, f.severity, tuple(r.rule for r in f.because)) for f in result.findings)
    assert found == [
        ("CA001", 12, 9, "minor", ("guard.test", "severity.guarded")),
        ("UO028", 8, 19, "blocker", ()),
        ("UO028", 10, 19, "minor", ("guard.test", "severity.guarded")),
    ]


ENV = "name: byol\nchannels:\n  - pytorch\ndependencies:\n  - python=3.7\n  - pytorch=1.4.0\n  - cudatoolkit=10.1\n"


def test_a_conda_environment_named_env_yml_is_read(tmp_path: Path) -> None:
    """BYOL's README creates its environment with `conda env create --file env.yml`: its
    torch 1.4 pin and CUDA toolkit were never read (the scan knew `environment.yml` only)."""
    (tmp_path / "env.yml").write_text(ENV)
    (tmp_path / "main.py").write_text("import torch\n\nx = torch.ones(2)\n")
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    found = sorted((f.rule, f.path, f.span.line, f.span.column, f.severity) for f in result.findings)
    assert found == [("BLD002", "env.yml", 7, 5, "major"), ("DEP025", "env.yml", 6, 5, "blocker")]


def test_a_yaml_named_like_a_gym_environment_gives_no_requirements(tmp_path: Path) -> None:
    """Read as a conda file only for what it declares: an `env.yaml` of settings with no
    `dependencies:` adds nothing, and its settings are still read as a config's."""
    (tmp_path / "env.yaml").write_text("name: CartPole-v1\nmax_steps: 500\ndevice: cuda\n")
    (tmp_path / "main.py").write_text("import torch\n\nx = torch.ones(2)\n")
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    found = sorted((f.rule, f.path, f.span.line, f.span.column, f.severity) for f in result.findings)
    assert found == [("DP015", "env.yaml", 3, 1, "minor")]
    assert result.errors == []


def test_a_conda_environment_per_platform_is_read(tmp_path: Path) -> None:
    """Audit BC: deepchem's `requirements/torch/env_torch.gpu.yml` pins CUDA wheels through
    the cu118 index and was never read (only `env.yml`-like names were)."""
    gpu = "name: chem\nchannels:\n  - conda-forge\ndependencies:\n  - pip\n  - pip:\n    - --extra-index-url https://download.pytorch.org/whl/cu118\n    - torch==2.2.1+cu118\n"
    (tmp_path / "requirements" / "torch").mkdir(parents=True)
    (tmp_path / "requirements" / "torch" / "env_torch.gpu.yml").write_text(gpu)
    (tmp_path / "main.py").write_text("import torch\n\nx = torch.ones(2)\n")
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    found = sorted((f.rule, f.path, f.span.line, f.severity) for f in result.findings)
    path = "requirements/torch/env_torch.gpu.yml"
    assert found == [("BLD002", path, 7, "major"), ("BLD002", path, 8, "major"), ("DEP025", path, 8, "blocker")]
