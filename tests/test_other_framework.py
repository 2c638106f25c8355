"""A product written in a framework with no TPU backend (MegEngine, PaddlePaddle, MXNet...)
is rewritten in PyTorch to run on TorchTPU (DEP044; blind set 79: RepLKNet's MegEngine
release scored 100 with 0 h). Beside a PyTorch product, such code is a second backend and
is set aside."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

MODEL = "import megengine.module as M\nimport megengine.functional as F\n\n\nclass Net(M.Module):\n    def forward(self, x):\n        return F.relu(x)\n"
TRAIN = "import megengine as mge\nfrom model import Net\n\nnet = Net()\ngm = mge.autodiff.GradManager()\ngm.backward(net(mge.tensor([1.0])).sum())\n"


def test_a_megengine_product_is_a_rewrite(tmp_path: Path) -> None:
    write_tree(tmp_path, {"model.py": MODEL, "train.py": TRAIN})
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    found = sorted((f.rule, f.path, f.span.line, f.severity) for f in result.findings)
    assert found == [
        ("DEP044", "model.py", 1, "blocker"), ("DEP044", "model.py", 2, "blocker"), ("DEP044", "train.py", 1, "blocker"),
    ]
    assert result.score.effort.low >= 16 and result.score.grade in ("B", "C")  # no kernel: never capped at D
    assert sorted(item.name for item in result.score.plan if item.phase == "validation") == ["validate-inference", "validate-training"]


def test_a_second_backend_beside_a_pytorch_product_is_set_aside(tmp_path: Path) -> None:
    """Adversarial: GluonTS-like, `pkg/mx/` beside `pkg/torch_model.py`."""
    files = {
        "pkg/__init__.py": "from pkg.torch_model import Model\n",
        "pkg/torch_model.py": "import torch\n\n\nclass Model(torch.nn.Module):\n    pass\n",
        "pkg/mx/__init__.py": "",
        "pkg/mx/model.py": "import mxnet as mx\n\nblock = mx.gluon.nn.Dense(3)\n",
    }
    write_tree(tmp_path, files)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert [f.rule for f in result.findings if f.rule == "DEP044"] == []
    assert [(f.path, f.because[-1].rule) for f in result.set_aside if f.rule == "DEP044"] == [("pkg/mx/model.py", "set-aside.torch-product")]
