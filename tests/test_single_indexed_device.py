"""One indexed GPU and no other device in a module is a device pick, not model
parallelism (analyze/python/device_indices.py; blind set 76: tab-ddpm's `cuda:1`
defaults priced as a 10-31 h split). Two devices in play keep DP008."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.analyze.python.device_indices import one_indexed_device
from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()


def rows(root: Path, code: str) -> list[tuple[str, int, int, str]]:
    write_tree(root, {"train.py": code})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.rule, f.span.line, f.span.column, f.severity) for f in result.findings if f.rule in ("DP008", "CA003"))


ONE = (
    "import torch\n\n\n"
    "def train(model, data, device=torch.device('cuda:1')):\n"
    "    return model.to(device)(data.to(device))\n\n\n"
    "if __name__ == '__main__':\n"
    "    device = torch.device('cuda:1')\n"
    "    train(torch.nn.Linear(2, 2), torch.ones(2), device)\n"
)


def test_one_indexed_gpu_is_a_hard_coded_device(tmp_path: Path) -> None:
    assert rows(tmp_path, ONE) == [("CA003", 4, 44, "minor"), ("CA003", 9, 27, "major")]


def test_two_indices_are_a_split(tmp_path: Path) -> None:
    """Adversarial: the second stage's device beside the first's."""
    code = ONE.replace("device = torch.device('cuda:1')\n", "device = torch.device('cuda:1')\n    first = torch.device('cuda:0')\n")
    assert [r[:2] for r in rows(tmp_path, code)] == [("CA003", 10), ("DP008", 4), ("DP008", 9)]


def test_the_default_device_beside_an_index_is_a_split(tmp_path: Path) -> None:
    """Adversarial: `.cuda()` puts the body on GPU 0, `.cuda(1)` the head on GPU 1."""
    code = "def place(model):\n    model.body.cuda()\n    model.head.cuda(1)\n"
    assert [r[0] for r in rows(tmp_path, code)] == ["CA003", "DP008"]


def test_the_reading_of_indices() -> None:
    assert one_indexed_device("d = torch.device('cuda', 2)\nx.to(d)\n")
    assert not one_indexed_device("d = torch.device('cuda', 2)\ny = x.cuda()\n")
    assert not one_indexed_device("a = 'cuda:0'\nb = 'cuda:1'\n")
    assert not one_indexed_device("a = 'cuda:0'\n")  # GPU 0 alone: no rule of a split anyway
    assert not one_indexed_device("x = 1\n")
    assert not one_indexed_device("if torch.cuda.device_count() > 1:\n    x = x.to('cuda:1')\n")  # a second GPU when there is one
