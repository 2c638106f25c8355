"""What blind set 25 showed after its first scan (in sample from then on), each with a probe
that failed at `64421c8` and an adversarial look-alike that keeps its verdict.

- `scripts/test_512p.sh` running `python test.py` is how an ML project runs inference:
  pytest collects `test_*.py`, never a shell script, so the launcher is product code and
  the file it runs is the product's.
- A module that drives a CUDA-only inference engine, imported by the product only on one
  side of an if (`else: from run_engine import run_trt_engine`), is the engine's path,
  chosen by the test: its engine import is a fallback kept, not a blocker.
- `from apex import amp` has a drop-in PyTorch module (`torch.autocast`): a blocker that is
  an edit (`cap.drop-in`), never a cap at grade D; apex.contrib's fused kernels keep it."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()


def _scan(root: Path, files: dict[str, str]):
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))


TEST_PY = """\
import torch
from options import parse

opt = parse()
if not opt.engine:
    model = torch.load(opt.checkpoint).cuda()
else:
    from run_engine import run_trt_engine
"""
RUN_ENGINE = "import numpy as np\nimport tensorrt\n\n\ndef run_trt_engine(path, batch):\n    return np.zeros(1)\n"
OPTIONS = "import argparse\n\n\ndef parse():\n    p = argparse.ArgumentParser()\n    p.add_argument('--engine', type=str)\n    p.add_argument('--checkpoint', type=str)\n    return p.parse_args()\n"


def test_a_test_shell_script_that_runs_inference_is_a_launcher(tmp_path: Path) -> None:
    result = _scan(tmp_path, {"test.py": TEST_PY, "options.py": OPTIONS, "run_engine.py": RUN_ENGINE, "scripts/test_512p.sh": "python test.py --checkpoint ckpt.pth\n"})
    (cuda,) = [f for f in result.findings if f.rule == "CA003"]
    assert (cuda.path, cuda.span.line, cuda.span.column, cuda.role, cuda.severity, cuda.because[0].rule) == ("test.py", 6, 40, "script", "major", "role.launched")
    # the engine module is imported on one side of the test only: the engine's own path
    (trt,) = [f for f in result.findings if f.rule == "DEP008"]
    assert (trt.path, trt.span.line, trt.severity, [r.rule for r in trt.because]) == (
        "run_engine.py",
        2,
        "minor",
        ["fallback.guarded-module", "severity.kernel-fallback"],
    )


def test_a_pytest_file_stays_a_test_and_an_engine_imported_everywhere_blocks(tmp_path: Path) -> None:
    result = _scan(
        tmp_path,
        {
            "infer.py": "import torch\nfrom run_engine import run_trt_engine\n\nmodel = torch.load('m.pth').cuda()\n",
            "run_engine.py": RUN_ENGINE,
            "scripts/test_models.py": "import torch\n\n\ndef test_cuda():\n    assert torch.zeros(1).cuda().is_cuda\n",
        },
    )
    assert {f.role for f in result.findings if f.path == "scripts/test_models.py"} == {"test"}
    (trt,) = [f for f in result.findings if f.rule == "DEP008"]
    assert (trt.path, trt.severity, trt.because) == ("run_engine.py", "blocker", ())


TRAIN = """\
import torch
{imports}

model = torch.nn.Linear(4, 4).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
loss = model(torch.randn(2, 4).cuda()).sum()
loss.backward()
optimizer.step()
"""


def test_apex_amp_is_an_edit_not_a_dependency_to_replace(tmp_path: Path) -> None:
    result = _scan(tmp_path, {"train.py": TRAIN.format(imports="from apex import amp")})
    (apex,) = [f for f in result.findings if f.rule == "DEP001"]
    assert (apex.span.line, apex.severity, apex.because[-1].rule) == (2, "major", "cap.drop-in")
    assert apex.because[-1].evidence == "`apex` has drop-in PyTorch module: replacing it is an edit, not a dependency to port".replace("drop-in PyTorch", "a drop-in PyTorch")
    assert result.score is not None and result.score.score > 59.9 and result.score.grade != "D"


def test_apex_contrib_kernels_keep_the_cap(tmp_path: Path) -> None:
    imports = "from apex import amp\nfrom apex.contrib.multihead_attn import SelfMultiheadAttn"
    result = _scan(tmp_path, {"train.py": TRAIN.format(imports=imports)})
    rules = sorted((f.span.line, [r.rule for r in f.because]) for f in result.findings if f.rule == "DEP001")
    assert rules == [(2, ["cap.drop-in"]), (3, [])]
    assert result.score is not None and result.score.score <= 59.9


EVAL = """\
import argparse

import torch


def test_net(net, image):
    return net(image.cuda())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--trained_model", default="weights/model.pth")
    net = torch.load(parser.parse_args().trained_model).cuda()
"""


def test_a_test_py_that_holds_no_test_is_a_script(tmp_path: Path) -> None:
    """Audit AE (CRAFT): `test.py` is the README's only command, an evaluation script that
    pytest never collects; its `def test_net` is an evaluation loop. Adversarial: a
    `test.py` with a TestCase, one that checks a kernel's numerics (`gradcheck`), and one
    under `tests/` stay tests. The role is the same in a sharded scan (tree facts round-trip)."""
    files = {
        "test.py": EVAL,
        "units/test.py": "import unittest\n\nimport torch\n\n\nclass T(unittest.TestCase):\n    def test_cuda(self):\n        torch.zeros(1).cuda()\n",
        "ops/test.py": "import torch\nfrom torch.autograd import gradcheck\n\nx = torch.randn(3, dtype=torch.double).cuda()\nprint(gradcheck(torch.sin, (x.requires_grad_(),)))\n",
        "tests/test.py": "import torch\n\nprint(torch.zeros(1).cuda())\n",
    }
    result = _scan(tmp_path, files)
    roles = {f.path: (f.role, f.because[0].rule) for f in result.findings if f.rule == "CA003" and (f.path, f.span.line) != ("test.py", 7)}
    assert roles == {
        "test.py": ("script", "role.script"),
        "units/test.py": ("test", "role.test"),
        "ops/test.py": ("test", "role.test"),
        "tests/test.py": ("test", "role.test"),
    }
    (cuda,) = [f for f in result.findings if f.path == "test.py" and f.span.line == 13]
    assert (cuda.rule, cuda.severity, cuda.role) == ("CA003", "major", "script")
