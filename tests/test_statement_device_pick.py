"""A CUDA test written as statements whose other side sends the host to the CPU picks the
device, as its conditional-expression form does (analyze/python/cpu_pick.py; audit BC:
deepchem's TorchModel, cuda then mps then cpu, went unreported). A test whose other side
is what a TPU needs stays a guard."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()


def rows(root: Path, code: str) -> list[tuple[str, int, int, str, tuple[str, ...]]]:
    write_tree(root, {"pkg/__init__.py": "", "pkg/model.py": "import torch\n\n\n" + code})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.rule, f.span.line, f.span.column, f.severity, tuple(r.rule for r in f.because)) for f in result.findings if f.rule in ("CA002", "CA003"))


GUARDED = ("guard.test", "severity.guarded")


def test_a_cuda_mps_cpu_chain_is_a_device_pick(tmp_path: Path) -> None:
    code = (
        "def pick():\n"
        "    if torch.cuda.is_available():\n"
        "        device = torch.device('cuda')\n"
        "    elif torch.backends.mps.is_available():\n"
        "        device = torch.device('mps')\n"
        "    else:\n"
        "        device = torch.device('cpu')\n"
        "    return device\n"
    )
    assert rows(tmp_path, code) == [("CA002", 5, 8, "major", ()), ("CA003", 6, 31, "minor", GUARDED)]


def test_a_negated_test_whose_body_is_the_cpu_is_a_pick(tmp_path: Path) -> None:
    code = "def pick(model):\n    if not torch.cuda.is_available():\n        model = model.cpu()\n    else:\n        model = model.cuda()\n    return model\n"
    assert rows(tmp_path, code) == [("CA002", 5, 12, "major", ()), ("CA003", 8, 23, "minor", GUARDED)]


def test_a_sibling_that_places_on_a_given_device_stays_a_guard(tmp_path: Path) -> None:
    """Adversarial (audit T): the other side is what a TPU needs."""
    code = "def place(x, gpu, device):\n    if torch.cuda.is_available():\n        x = x.cuda(gpu)\n    else:\n        x = x.to(device)\n    return x\n"
    assert rows(tmp_path, code) == [("CA003", 6, 15, "minor", GUARDED)]


def test_a_test_with_no_other_side_stays_a_guard(tmp_path: Path) -> None:
    """Adversarial: nothing names the CPU; the CUDA side is reported, marked guarded."""
    code = "def place(model):\n    if torch.cuda.is_available():\n        model = model.cuda()\n    return model\n"
    assert rows(tmp_path, code) == [("CA003", 6, 23, "minor", GUARDED)]


def test_an_other_side_that_computes_stays_a_guard(tmp_path: Path) -> None:
    """Adversarial: the CPU side does work of its own (a slow reference), not a placement."""
    code = "def run(x):\n    if torch.cuda.is_available():\n        y = x.cuda()\n    else:\n        y = reference_cpu(x.cpu())\n    return y\n"
    assert rows(tmp_path, code) == [("CA003", 6, 15, "minor", GUARDED)]
