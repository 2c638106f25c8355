"""What audit AC (docs/audits/audit-ac.md) found wrong that this round fixes, each with a
probe that failed at `20d1f9c` and an adversarial look-alike that keeps its finding.

BLD004: `--gpus` is a scheduler's or container runtime's request only when that program
runs it; `python main.py tracking --gpus 0,1` is the application's own GPU list, read by
its code (where the device pick is reported). Audit AC judged twelve such lines too high."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

LAUNCHERS = {
    "experiments/mot17_half.sh": "cd src\npython main.py tracking --exp_id mot17_half --dataset mot --gpus 0,1 --batch_size 32\ncd ..\n",
    "experiments/nu_3d.sh": "cd src && CUDA_VISIBLE_DEVICES=0,1 python main.py tracking,ddd --gpus 0,1 --lr 2.5e-4\n",
    # the scheduler's and the container runtime's own requests
    "cluster/train.sh": "srun --gpus=8 --ntasks=8 python main.py --gpus 0,1,2,3,4,5,6,7\n",
    "cluster/docker.sh": "sudo docker run --rm --gpus all tracker:latest python main.py\n",
    "cluster/alloc.sh": "export OUT=/runs; salloc --gpus 4 bash run.sh\n",
    "main.py": "import sys\n\nprint(sys.argv)\n",
}


def test_an_applications_gpus_argument_is_no_scheduler_request(tmp_path: Path) -> None:
    for path, text in LAUNCHERS.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    found = sorted((f.path, f.span.line, f.span.column, f.severity, f.detail) for f in result.findings if f.rule == "BLD004")
    assert found == [
        ("cluster/alloc.sh", 1, 26, "major", "gpus"),
        ("cluster/docker.sh", 1, 22, "major", "gpus"),
        # srun's own `--gpus=8`; the command it launches is the application's, whose
        # `--gpus` list is its own argument
        ("cluster/train.sh", 1, 6, "major", "gpus"),
    ]


HOME = """\
import torch


def to_normal(tensor, orig_device):
    if tensor.is_cuda and orig_device == "cpu":
        tensor = tensor.cpu()
    return tensor


def home(predicted):
    return predicted.cpu() if predicted.is_cuda else predicted


def token_for(enc_state, token):
    if enc_state.is_cuda:
        token = token.cuda()
    return token


def stats(x):
    if x.is_cuda:
        x = x.cpu()
        print(x.sum())
    return x
"""


def test_an_is_cuda_test_whose_cuda_side_only_brings_values_home_needs_no_edit(tmp_path: Path) -> None:
    """Audits AB and AC: `if t.is_cuda: t = t.cpu()` and `x.cpu() if x.is_cuda else x` leave
    a TPU value where it is, as a CPU one; judged false. Adversarial: a CUDA side that moves
    a value to CUDA, or that computes besides, keeps its finding."""
    (tmp_path / "gather.py").write_text(HOME)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert sorted((f.span.line, f.span.column, f.severity) for f in result.findings if f.rule == "DP013") == [(15, 8, "minor"), (21, 8, "minor")]
