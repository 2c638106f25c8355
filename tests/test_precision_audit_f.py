"""False alarms and wrong severities of precision audit F (docs/calibration.md), each
asserted gone next to the true positive that must stay."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from tpucheck.engine import ScanOptions, scan
from tpucheck.judge.roles import role_of
from tpucheck.ruleset import load_ruleset

XLA = load_ruleset().for_target("xla")
TORCHTPU = load_ruleset()

Row = tuple[str, int, int, str, bool]


def found(root: Path, files: dict[str, str], rules: tuple[str, ...], target: str = "xla") -> list[Row]:
    """PyTorch/XLA keeps host syncs at their weight, so what is dropped shows."""
    for path, code in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(dedent(code), encoding="utf-8")
    result = scan(str(root), XLA if target == "xla" else TORCHTPU, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.rule, f.span.line, f.span.column, f.severity, f.guarded) for f in result.findings if f.rule in rules)


def test_a_comparison_of_numpy_data_is_numpy_data(tmp_path: Path) -> None:
    code = """\
        import numpy as np

        def check(betas, x):
            betas = np.array(betas, dtype=np.float64)
            assert (betas > 0).all() and (betas <= 1).all()
            return (x > 0).all() or (0 < x).all()
        """
    assert found(tmp_path, {"pkg/diffusion.py": code}, ("HS004",)) == [("HS004", 6, 20, "info", False), ("HS004", 6, 37, "info", False)]


def test_a_field_its_class_only_sets_to_numpy_is_numpy(tmp_path: Path) -> None:
    code = """\
        import numpy as np
        import torch

        class Resampler:
            def __init__(self, n):
                self._counts = np.zeros([n], dtype=np.int64)
                self.weights = torch.ones(n, device="cuda")
                if n > 3:
                    self.history = np.zeros([n, 2])

            def warmed_up(self):
                return (self._counts == self.limit).all() and self.history.any()

            def ready(self):
                return (self.weights > 0).all()

        class Mixed:
            def __init__(self, n):
                self.mask = np.zeros(n)

            def reset(self, n):
                for _ in range(2):
                    self.mask = torch.zeros(n, device="cuda")

            def ready(self):
                return self.mask.any()
        """
    # the CUDA field and the field a loop rebinds to a device tensor stay reported
    assert found(tmp_path, {"pkg/resample.py": code}, ("HS004",)) == [("HS004", 15, 35, "info", False), ("HS004", 26, 26, "info", False)]


def test_pandas_null_checks_are_host_data(tmp_path: Path) -> None:
    code = """\
        def report(configs, scores):
            if configs["num_samples"].isnull().any():
                return None
            return scores.isnan().any()
        """
    assert found(tmp_path, {"pkg/report.py": code}, ("HS004",)) == [("HS004", 4, 27, "info", False)]


def test_a_datasets_methods_run_on_the_host(tmp_path: Path) -> None:
    code = """\
        import torch
        from torch.utils.data import Dataset, Sampler

        class Clips(Dataset):
            def __getitem__(self, idx):
                if isinstance(idx, torch.Tensor):
                    idx = idx.item()
                return idx

        class Weighted(Sampler):
            def __iter__(self):
                yield from torch.multinomial(self.w, 4).tolist()

        class Head(torch.nn.Module):
            def forward(self, x):
                return x.sum().item()
        """
    assert found(tmp_path, {"pkg/clips.py": code}, ("HS001", "HS002")) == [("HS001", 16, 24, "major", False)]


def test_a_folder_name_decides_nothing_about_host_code(tmp_path: Path) -> None:
    # Issue 23: `data/` vs `dataset/` decided host code. Only structure does now (a
    # Dataset's methods, host data followed through a function), so the same function
    # is judged the same in both folders.
    code = """\
        def flip(grid, img):
            if grid[0, 0].item():
                return img.flip(-1)
            return img
        """
    files = {"training/dataset/transforms.py": code, "training/model/flip.py": code}
    assert found(tmp_path, files, ("HS001",)) == [("HS001", 2, 19, "info", False)] * 2


def test_an_except_that_imports_the_same_package_or_raises_keeps_nothing_optional(tmp_path: Path) -> None:
    code = """\
        try:
            from flash_attn.flash_attn_interface import flash_attn_unpadded_func
        except ImportError:
            from flash_attn.flash_attn_interface import flash_attn_varlen_func as flash_attn_unpadded_func

        try:
            import apex
        except ImportError:
            raise ImportError("pip install apex")

        try:
            import xformers.ops as xops
        except ImportError:
            xops = None
        """
    assert found(tmp_path, {"pkg/attention.py": code}, ("DEP001", "DEP002", "DEP003"), target="torchtpu") == [
        ("DEP001", 7, 12, "major", False),  # a drop-in module: an edit, but nothing optional
        ("DEP002", 2, 10, "blocker", False),
        ("DEP002", 4, 10, "blocker", False),
        ("DEP003", 12, 12, "info", True),  # a CUDA-only package a TPU host falls back from by itself
    ]


def test_an_except_that_imports_the_other_packages_again_without_the_optional_one_is_a_fallback(tmp_path: Path) -> None:
    """Audit AO (Otter in Multi-Modality-Arena): the try imports xformers and the model
    classes built on it with a tokenizer from transformers; the handler takes the model
    classes from transformers. transformers again is no "same package": xformers is left
    out, which is the fallback. Adversarial: a try whose other import is the standard
    library's, and a handler that imports every package the try did, keep nothing."""
    code = """\
        try:
            import xformers.ops as xops
            from transformers import LlamaTokenizer
        except ImportError:
            from transformers import LlamaForCausalLM, LlamaTokenizer
            print("no xformers")

        try:
            import os
            from flash_attn import flash_attn_func
        except ImportError:
            from flash_attn import flash_attn_varlen_func as flash_attn_func

        try:
            import xformers.ops as xo
            from transformers import LlamaTokenizer
        except ImportError:
            import xformers as xo
            from transformers import LlamaTokenizer
        """
    assert found(tmp_path, {"pkg/attention.py": code}, ("DEP002", "DEP003"), target="torchtpu") == [
        ("DEP002", 10, 10, "blocker", False),
        ("DEP002", 12, 10, "blocker", False),
        ("DEP003", 2, 12, "info", True),
        ("DEP003", 15, 12, "blocker", False),
        ("DEP003", 18, 12, "blocker", False),
    ]


SETUP = """\
    from setuptools import setup

    srcs = ["pkg/csrc/components.cu"]
    try:
        from torch.utils.cpp_extension import BuildExtension, CUDAExtension
        ext_modules = [CUDAExtension("pkg._C", srcs)]
    except Exception:
        ext_modules = []
    setup(name="pkg", ext_modules=ext_modules)
    """
KERNEL = """\
    __global__ void label(int* out, int n) {
      out[threadIdx.x] = n;
    }
    """


def test_a_kernel_listed_by_a_variable_of_an_optional_build_is_fallback_kept(tmp_path: Path) -> None:
    lazy = """\
        def components(mask):
            from pkg import _C
            return _C.components(mask)
        """
    files = {"setup.py": SETUP, "pkg/__init__.py": "", "pkg/misc.py": lazy, "pkg/csrc/components.cu": KERNEL}
    assert found(tmp_path, files, ("CK003",), target="torchtpu") == [("CK003", 1, 1, "minor", True)]


def test_a_kernel_of_an_extension_imported_unconditionally_stays_a_blocker(tmp_path: Path) -> None:
    eager = """\
        from pkg import _C

        def components(mask):
            return _C.components(mask)
        """
    files = {"setup.py": SETUP, "pkg/__init__.py": "", "pkg/misc.py": eager, "pkg/csrc/components.cu": KERNEL}
    assert found(tmp_path, files, ("CK003",), target="torchtpu") == [("CK003", 1, 1, "blocker", False)]


def test_a_benchmark_module_is_a_benchmark() -> None:
    assert role_of("sam2/benchmark.py") == "benchmark"
    assert role_of("timm/bench.py") == "benchmark"
    assert role_of("pkg/benchmarks_util.py") == "benchmark"
    assert role_of("pkg/benchmarking.py") == "library"


def test_a_reference_path_is_reported_only_where_there_are_kernels(tmp_path: Path) -> None:
    recording = """\
        def audio_reference(path):
            return open(path, "rb").read()
        """
    kernel = """\
        import torch
        import triton

        @triton.jit
        def _softmax_kernel(x_ptr, n):
            pass

        def softmax_ref(x):
            return torch.softmax(x, -1)
        """
    assert found(tmp_path / "a", {"pkg/samples.py": recording}, ("CK015",), target="torchtpu") == []
    files = {"pkg/samples.py": recording, "pkg/ops/softmax.py": kernel}
    # `audio_*` names a recording, not an op, even where there are kernels
    assert found(tmp_path / "b", files, ("CK015",), target="torchtpu") == [("CK015", 8, 5, "info", False)]


def test_names_unpacked_from_a_tuple_take_their_own_values(tmp_path: Path) -> None:
    code = """\
        import numpy as np

        def compare(ref_logits, tt_logits):
            ref, tt = ref_logits.squeeze(), tt_logits.squeeze()
            top1 = (ref.argmax() == tt.argmax()).item()
            a, b = np.zeros(3), ref_logits
            return top1, a.any(), b.any()
        """
    assert found(tmp_path, {"pkg/compare.py": code}, ("HS001", "HS004")) == [("HS001", 5, 42, "info", False), ("HS004", 7, 29, "info", False)]


def test_a_cuda_check_whose_other_side_raises_keeps_no_fallback(tmp_path: Path) -> None:
    code = """\
        import unittest

        import torch

        def init():
            if torch.cuda.is_available():
                torch.cuda.set_device(0)
            else:
                raise NotImplementedError("CUDA was not found")

        def init_early():
            if not torch.cuda.is_available():
                raise RuntimeError("needs CUDA")
            torch.cuda.set_device(0)

        def init_optional():
            if torch.cuda.is_available():
                torch.cuda.set_device(0)

        class Case(unittest.TestCase):
            def test_device(self):
                if not torch.cuda.is_available():
                    raise unittest.SkipTest("no CUDA")
                torch.cuda.set_device(0)
        """
    # the checks that raise are where a TPU fails, so they are reported too; a skip is a skip
    assert found(tmp_path, {"pkg/dist.py": code}, ("CA002", "CA004"), target="torchtpu") == [
        ("CA002", 6, 8, "major", False),
        ("CA002", 12, 12, "major", False),
        ("CA004", 7, 9, "major", False),
        ("CA004", 14, 5, "major", False),
        ("CA004", 18, 9, "minor", True),
        ("CA004", 24, 9, "minor", True),
    ]


def test_a_device_test_in_front_of_the_portable_path_or_of_cuda_knobs_is_a_guard(tmp_path: Path) -> None:
    code = """\
        import torch

        def build(device, kwargs):
            if device != "cuda":
                kwargs["device_map"] = {"": device}
            if device.type == "cuda":
                if torch.cuda.get_device_properties(0).major >= 8:
                    torch.backends.cuda.matmul.allow_tf32 = True
            elif device.type == "mps":
                kwargs["warn"] = True
            return kwargs

        def autocast(device):
            if device.type == "cuda":
                return torch.autocast("cuda", dtype=torch.bfloat16)
            return None

        def forward(self, x):
            if not x.is_cuda:
                return super().forward(x)
            if x.is_cuda:
                return fused(x)
            return x
        """
    # the bf16 autocast a TPU loses and the fused path are reported; the guards are not
    assert found(tmp_path, {"pkg/build.py": code}, ("DP010", "DP013"), target="torchtpu") == [
        ("DP010", 14, 23, "minor", False),
        ("DP013", 21, 8, "minor", True),
    ]


def test_an_elif_or_a_one_line_branch_is_read_for_a_raise(tmp_path: Path) -> None:
    code = """\
        import torch

        def pick(name):
            if torch.cuda.is_available(): torch.cuda.set_device(0)
            elif name == "mps":
                torch.mps.synchronize()
            if not torch.cuda.is_available(): raise RuntimeError("needs CUDA")
            torch.cuda.synchronize()
        """
    assert found(tmp_path, {"pkg/pick.py": code}, ("CA001", "CA002", "CA004"), target="torchtpu") == [
        ("CA001", 8, 5, "major", False),
        ("CA002", 7, 12, "major", False),
        ("CA004", 4, 35, "minor", True),
    ]


def test_a_helper_that_only_returns_numpy_makes_numpy(tmp_path: Path) -> None:
    code = """\
        import numpy as np
        import torch

        def _stats_array(value):
            if isinstance(value, torch.Tensor):
                return value.detach().cpu().numpy() if value.ndim > 0 else None
            return np.asarray(value)

        def _doubled(x):
            return x * 2

        def check(stats, x):
            low = _stats_array(stats["min"])
            if (low < -1.0).any():
                return None
            frames = (np.asarray(stats["task"]) == 3).nonzero()[0]
            return _doubled(x).any(), frames.tolist()

        class Holder:
            def make(self):
                return np.zeros(3)

        def use(make, y):
            return make(y).any()
        """
    # a device helper and a method's name stay device data
    assert found(tmp_path, {"pkg/stats.py": code}, ("HS002", "HS004")) == [("HS004", 17, 24, "info", False), ("HS004", 24, 20, "info", False)]


def test_cuda_capability_checks_behind_an_availability_check_are_the_guard(tmp_path: Path) -> None:
    code = """\
        import torch

        if torch.cuda.is_available() and hasattr(torch.cuda, "amp") and torch.cuda.is_bf16_supported():
            autocast = torch.cuda.amp.autocast
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        """
    # CUDA's autocast chosen as a value is CA014's (the AMP path), under the guard: minor
    assert found(tmp_path, {"pkg/amp.py": code}, ("CA014", "CA016", "CA022", "CA107"), target="torchtpu") == [
        ("CA014", 4, 16, "minor", True),
        ("CA016", 5, 27, "minor", False),
    ]


def test_another_accelerators_shim_is_no_tpu_work(tmp_path: Path) -> None:
    # The module imports Intel's extension at its top: it runs only on an XPU, and its
    # CUDA aliases are set aside as an alternative, with that import as the evidence.
    shim = """\
        import torch
        import intel_extension_for_pytorch as ipex

        def ipex_init():
            if hasattr(torch.cuda, "is_xpu_hijacked") and torch.cuda.is_xpu_hijacked:
                return True
            torch.cuda.current_device = torch.xpu.current_device
            torch.cuda.Event = torch.xpu.Event
            torch.cuda.synchronize()
        """
    files = {"library/ipex/__init__.py": shim, "library/device.py": "import torch\ntorch.cuda.synchronize()\n"}
    assert found(tmp_path, files, ("CA001", "CA004", "CA009", "CA022", "CA100"), target="torchtpu") == [("CA001", 2, 1, "major", False)]


def test_a_dataclass_numpy_field_is_host_data(tmp_path: Path) -> None:
    code = """\
        from dataclasses import dataclass
        from typing import Optional

        import numpy as np
        import torch

        @dataclass
        class TriMesh:
            verts: np.ndarray
            normals: Optional[np.ndarray] = None
            colors: "torch.Tensor | None" = None
            weights: torch.Tensor = None

            def save(self):
                return self.verts.tolist(), self.normals.tolist(), self.weights.tolist()
        """
    assert found(tmp_path, {"pkg/mesh.py": code}, ("HS002",)) == [("HS002", 15, 73, "info", False)]


def test_a_field_just_moved_to_the_cpu_and_a_cpu_scalar_are_host_data(tmp_path: Path) -> None:
    code = """\
        import torch

        class Scheduler:
            def __init__(self, sigmas):
                self.sigmas = sigmas.to("cpu")
                self.sigma_min = self.sigmas[-1].item()
                self.sigmas = sigmas
                self.sigma_max = self.sigmas[0].item()

        def shared_seed(generator):
            seed = torch.empty((), dtype=torch.int64).random_(generator=generator)
            return seed, torch.ones(3).cuda()
        """
    # the field rebound to device data is device data again; `.cuda()` is no host question
    assert found(tmp_path / "a", {"pkg/sched.py": code}, ("HS001", "UO255", "CA003"), target="torchtpu") == [("CA003", 12, 32, "major", False)]
    # the host question itself, where host syncs are reported (PyTorch/XLA)
    assert found(tmp_path / "b", {"pkg/sched.py": code}, ("HS001", "UO255"), target="xla") == [("HS001", 8, 41, "info", False)]


def test_verbs_are_apis_not_reference_paths(tmp_path: Path) -> None:
    code = """\
        import triton

        @triton.jit
        def _norm_kernel(x):
            pass

        class Predictor:
            def predict_torch(self, points):
                return points

        def load_wav_to_torch(path):
            return path

        def norm_ref(x):
            return x
        """
    assert found(tmp_path, {"pkg/ops.py": code}, ("CK015",), target="torchtpu") == [("CK015", 14, 5, "info", False)]


def test_demos_are_examples_by_name() -> None:
    demos = ("gradio_demo/app.py", "online_demo.py", "apps/dc_ae/demo_diffusion.py", "web-demos/x.py", "demo.py")
    assert [role_of(p) for p in demos] == ["example"] * 5
    assert [role_of(p) for p in ("pkg/demography.py", "pkg/demonstrate.py", "democracy/vote.py")] == ["library"] * 3


def test_a_test_step_method_of_a_model_is_product_code(tmp_path: Path) -> None:
    code = """\
        import torch
        import unittest

        class Gui:
            def test_step(self):
                torch.cuda.synchronize()

        class TestGui(unittest.TestCase):
            def test_render(self):
                torch.cuda.synchronize()

        def test_module_level():
            torch.cuda.synchronize()
        """
    assert found(tmp_path, {"pkg/gui.py": code}, ("CA001",), target="torchtpu") == [
        ("CA001", 6, 9, "major", False),
        ("CA001", 10, 9, "minor", False),
        ("CA001", 13, 5, "minor", False),
    ]


QUANTIZED_LOAD = """\
    from dataclasses import dataclass, field
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    @dataclass
    class TrainingArguments:
        bits: int = field(default=BITS)

    def load(name, training_args):
        kwargs = {}
        if training_args.bits in [4, 8]:
            kwargs["quantization_config"] = BitsAndBytesConfig(load_in_4bit=training_args.bits == 4)
        return AutoModelForCausalLM.from_pretrained(name, quantization_config=BitsAndBytesConfig(load_in_8bit=True))
    """


def test_a_quantization_bits_option_is_an_optional_path(tmp_path: Path) -> None:
    # `bits` defaults to 16: `bits in [4, 8]` is false unless asked for, so the 4-bit path
    # is an opt-in beside the plain one (structure: the field's default, not its name).
    assert found(tmp_path, {"pkg/load.py": QUANTIZED_LOAD.replace("BITS", "16")}, ("HF002",), target="torchtpu") == [
        ("HF002", 11, 41, "info", True),  # a CUDA-only package off the default path
        ("HF002", 12, 75, "blocker", False),
    ]


def test_a_quantization_option_on_by_default_is_the_main_path(tmp_path: Path) -> None:
    # The same code with `bits` defaulting to 4 (as QLoRA ships): the quantized path is the
    # product's main path, and a blocker.
    assert found(tmp_path, {"pkg/load.py": QUANTIZED_LOAD.replace("BITS", "4")}, ("HF002",), target="torchtpu") == [
        ("HF002", 11, 41, "blocker", False),
        ("HF002", 12, 75, "blocker", False),
    ]
