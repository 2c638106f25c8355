"""What audit W (docs/audits/audit-w.md) and blind set 16 found wrong, each with a probe
that fails on the commit audit W judged (32b6712) or on the model blind set 16 measured
(61c72f9), and a look-alike that must keep its judgement."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

VOCODER = """\
import torch
from torch import nn


class Vocoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.utils.weight_norm(nn.Conv1d(80, 256, 7, padding=3))

    def forward(self, mel):
        return torch.tanh(self.conv(mel))
"""

TRAIN = """\
import torch
from voc.model import Vocoder


def step(model: Vocoder, mel, target, opt):
    loss = torch.nn.functional.l1_loss(model(mel), target)
    loss.backward()
    opt.step()
"""


def weight_norm_rows(root: Path, files: dict[str, str]) -> set[tuple[str, int, str, str]]:
    for path, text in {"voc/__init__.py": "", "voc/model.py": VOCODER, **files}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return {(f.path, f.span.line, f.severity, f.because[-1].rule if f.because else "") for f in result.findings if f.rule == "UO008"}


def test_a_backward_only_failure_in_a_product_that_never_trains_is_info(tmp_path: Path) -> None:
    """Audit W (tortoise-tts): weight_norm's forward runs on TorchTPU, only its backward
    raises, and the repository has no training step: twelve blockers judged false."""
    assert weight_norm_rows(tmp_path, {}) == {("voc/model.py", 8, "info", "severity.no-training")}


def test_the_same_layer_in_a_product_that_trains_stays_a_blocker(tmp_path: Path) -> None:
    """Adversarial: a training step anywhere in the product (a backward and an optimizer
    step) puts the backward on its path."""
    assert weight_norm_rows(tmp_path, {"voc/train.py": TRAIN}) == {("voc/model.py", 8, "blocker", "")}


def test_a_step_whose_backward_a_loss_scaler_does_is_training(tmp_path: Path) -> None:
    """Audit AA (xcit): `optimizer.zero_grad()` then `loss_scaler(loss, optimizer)` (timm's
    scaler does the backward and the step), and mmdet's `train_detector(...)`, train."""
    scaler = "import torch\n\n\ndef step(model, mel, opt, loss_scaler):\n    opt.zero_grad()\n    loss_scaler(model(mel).mean(), opt)\n"
    assert weight_norm_rows(tmp_path / "a", {"voc/train.py": scaler}) == {("voc/model.py", 8, "blocker", "")}
    mm = "import torch\nfrom mmdet.apis import train_detector\n\ndef main(model, data, cfg):\n    train_detector(model, data, cfg)\n"
    assert weight_norm_rows(tmp_path / "b", {"voc/train.py": mm}) == {("voc/model.py", 8, "blocker", "")}


def test_a_training_step_only_in_tests_does_not_make_the_product_train(tmp_path: Path) -> None:
    """Adversarial in the other direction: a test that runs a backward through the layer
    is no training workload of the product's."""
    rows = weight_norm_rows(tmp_path, {"tests/test_grad.py": TRAIN})
    assert ("voc/model.py", 8, "info", "severity.no-training") in rows


def data_parallel_rows(root: Path, text: str) -> set[tuple[int, str, str]]:
    step = "\n\ndef step(model, x, opt):\n    model(x).mean().backward()\n    opt.step()\n"
    (root / "train.py").write_text(text + step, encoding="utf-8")  # the product trains
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return {(f.span.line, f.severity, f.because[-1].rule if f.because else "") for f in result.findings if f.rule == "CA019"}


def test_data_parallel_behind_a_cuda_device_count_is_a_note(tmp_path: Path) -> None:
    """Audit W (CodeT5), and K, L, U, V before it: `if n_gpu > 1: DataParallel(model)` with
    the count from CUDA stays off on a TPU host, which runs the single-device path it
    wants: nothing to rename."""
    text = "import torch\n\n\ndef wrap(model):\n    if torch.cuda.device_count() > 1:\n        model = torch.nn.DataParallel(model)\n    return model\n"
    assert data_parallel_rows(tmp_path, text) == {(6, "info", "severity.guarded")}


def test_data_parallel_on_the_main_path_stays_major(tmp_path: Path) -> None:
    """Adversarial: DataParallel with no CUDA test around it runs on every host."""
    text = "import torch\n\n\ndef wrap(model):\n    return torch.nn.DataParallel(model)\n"
    assert data_parallel_rows(tmp_path, text) == {(5, "major", "")}


def autocast_rules(root: Path, dtype: str) -> list[str]:
    text = f"import torch\n\n\ndef detect(model, image):\n    with torch.autocast('cuda', dtype={dtype}):\n        return model(image)\n"
    (root / "detect.py").write_text(text, encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [f.rule for f in result.findings if f.rule == "CA014"]


def test_a_cuda_autocast_that_asks_for_fp32_is_no_finding(tmp_path: Path) -> None:
    """Audit W (T2I-Adapter): an fp32 island is what a TPU region computes anyway."""
    assert autocast_rules(tmp_path, "torch.float32") == []


def test_a_cuda_autocast_that_asks_for_half_precision_is_reported(tmp_path: Path) -> None:
    """Adversarial: the same call asking for fp16 (or a dtype held in a variable)."""
    assert autocast_rules(tmp_path, "torch.float16") == ["CA014"]
    assert autocast_rules(tmp_path, "self.dtype") == ["CA014"]


LOADER = """\
import pathlib

from torch.utils import cpp_extension


def load():
    here = pathlib.Path(__file__).parent.absolute()
    sources = [here / "act.cpp", here / "act_cuda.cu"]
    return cpp_extension.load(name="act_ext", sources=sources)
"""

KERNEL = """\
#include <cuda_runtime.h>

__global__ void act_kernel(float* out, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] > 0.f ? x[i] : 0.f;
}

void act_forward(float* out, const float* x, int n) {
    act_kernel<<<(n + 255) / 256, 256>>>(out, x, n);
}
"""


def kernel_rows(root: Path, model: str) -> set[tuple[str, str, bool]]:
    files = {
        "voc/__init__.py": "",
        "voc/model.py": model,
        "voc/ops/__init__.py": "",
        "voc/ops/load.py": LOADER,
        "voc/ops/act.py": "from voc.ops import load\n\next = load.load()\n",
        "voc/ops/act.cpp": "#include <torch/extension.h>\n",
        "voc/ops/act_cuda.cu": KERNEL,
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return {(f.rule, f.severity, f.guarded) for f in result.findings if f.path == "voc/ops/act_cuda.cu" and f.rule == "CK003"}


def test_a_jit_build_in_a_module_loaded_by_choice_keeps_its_kernel_optional(tmp_path: Path) -> None:
    """Blind set 16 (BigVGAN, in sample): the loader builds `here / "act_cuda.cu"`; its
    module is imported only under `if use_kernel:`, so the kernel is not the main path."""
    model = "def build(use_kernel=False):\n    if use_kernel:\n        from voc.ops.act import ext\n\n        return ext\n    return None\n"
    assert kernel_rows(tmp_path, model) == {("CK003", "minor", True)}


def test_a_jit_build_the_product_always_loads_keeps_its_kernel_a_blocker(tmp_path: Path) -> None:
    """Adversarial: the same build imported unconditionally is the main path."""
    assert kernel_rows(tmp_path, "from voc.ops.act import ext\n") == {("CK003", "blocker", False)}


def test_an_import_whose_module_not_found_handler_raises_is_required() -> None:
    """Blind set 16 (MaskDINO, in sample): `except ModuleNotFoundError: raise
    ModuleNotFoundError(how_to_build)` keeps no path without the extension; the import
    graph read it as optional because only `ImportError` handlers were read."""
    from tpucheck.analyze.imports import scan_imports

    raising = "try:\n    import ext_cuda as E\nexcept ModuleNotFoundError as e:\n    msg = (\n        'build it'\n    )\n    raise ModuleNotFoundError(msg)\n"
    assert [(i.module, i.conditional) for i in scan_imports(raising)] == [("ext_cuda", False)]


def test_an_import_whose_module_not_found_handler_binds_none_stays_optional() -> None:
    """Adversarial: the same handler binding a placeholder leaves a path without it."""
    from tpucheck.analyze.imports import scan_imports

    placeholder = "try:\n    import ext_cuda as E\nexcept ModuleNotFoundError:\n    E = None\n"
    assert [(i.module, i.conditional) for i in scan_imports(placeholder)] == [("ext_cuda", True)]


def archive_rows(root: Path, body: str) -> set[tuple[int, str]]:
    (root / "load.py").write_text("import torch\n\n\ndef load(path, device):\n" + body, encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return {(f.span.line, f.severity) for f in result.findings if f.rule == "DP017"}


def test_an_archive_read_for_its_weights_is_no_torchscript_finding(tmp_path: Path) -> None:
    """Blind set 17 (AudioLDM's vendored CLIP loader): the archive gives its state_dict to
    an eager model unless a flag asks for the scripted graph."""
    body = "    model = torch.jit.load(path, map_location='cpu').eval()\n    return build(model.state_dict()).to(device)\n"
    assert archive_rows(tmp_path, body) == set()


def test_an_archive_that_runs_is_a_torchscript_finding(tmp_path: Path) -> None:
    """Adversarial: the loaded graph itself is moved to the device and run (chai-lab), and
    a `state_dict()` of another name does not count."""
    body = "    trunk = torch.jit.load(path, map_location='cpu').to(device)\n    other.state_dict()\n    return trunk(x)\n"
    assert archive_rows(tmp_path, body) == {(5, "major")}


def test_a_placeholder_the_module_tests_with_callable_keeps_the_import_optional() -> None:
    """Audit AS (CamLiFlow's wrapper): the handler binds the kernels to None and every op
    asks `callable(_knn_cuda)` before calling it, with a PyTorch path otherwise.
    Adversarial: the same handler in a module that calls the name untested."""
    from tpucheck.analyze.imports import scan_imports

    tried = "try:\n    from ._knn_cuda import _knn_cuda\nexcept ImportError:\n    _knn_cuda = None\n\n\n"
    tested = tried + "def knn(x, k, cpp=True):\n    if cpp and callable(_knn_cuda) and x.is_cuda:\n        return _knn_cuda(x, k)\n    return x.topk(k).indices\n"
    untested = tried + "def knn(x, k):\n    return _knn_cuda(x, k)\n"
    assert [(i.module, i.placeholder) for i in scan_imports(tested)] == [("_knn_cuda._knn_cuda", False)]
    assert [(i.module, i.placeholder) for i in scan_imports(untested)] == [("_knn_cuda._knn_cuda", True)]
