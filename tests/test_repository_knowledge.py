"""Knowledge of the whole repository (issue 24, points 1-3): kernel languages beside CUDA C
and `@triton.jit`, configs and launch lines beyond Python, Dockerfiles and manifests,
pins and CUDA-bound stacks. Each probe is a small tree written here, scanned whole, and
asserted finding by finding: rule, path, line, column, severity and role."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import write_tree

from tpucheck.analyze.configs import read_config
from tpucheck.analyze.launch import command_lines, launch_words, options
from tpucheck.engine import ScanOptions, scan
from tpucheck.result import ScanResult
from tpucheck.ruleset import load_ruleset
from tpucheck.ruleset.versions import VersionRange, interval_of

RULESET = load_ruleset()
SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "torchtpu"

Row = tuple[str, str, int, int, str, str]


def scan_tree(tmp_path: Path, files: dict[str, str], target: str = "torchtpu") -> ScanResult:
    root = write_tree(tmp_path / "repo", files)
    return scan(str(root), RULESET.for_target(target), ScanOptions(jobs=1, use_cache=False))


def rows(result: ScanResult, *rules: str) -> list[Row]:
    return sorted(
        (f.rule, f.path, f.span.line, f.span.column, f.severity, f.role) for f in result.findings if not rules or f.rule in rules
    )


# -- point 1: kernel languages ----------------------------------------------------------


CUTE_KERNEL = """\
    import cutlass
    import cutlass.cute as cute


    class RowScale:
        @cute.jit
        def __call__(self, mX: cute.Tensor, stream):
            self.kernel(mX).launch(grid=[1, 1, 1], block=[128, 1, 1], stream=stream)

        @cute.kernel
        def kernel(self, mX: cute.Tensor):
            tidx, _, _ = cute.arch.thread_idx()
            mX[tidx] = mX[tidx] * 2
    """


def test_cute_dsl_kernels_are_inventoried_with_their_language(tmp_path: Path) -> None:
    result = scan_tree(tmp_path, {"ops/__init__.py": "from ops.scale import RowScale\n", "ops/scale.py": CUTE_KERNEL, "requirements.txt": "nvidia-cutlass-dsl==4.2.0\n"})
    assert rows(result) == [
        ("CK017", "ops/scale.py", 10, 6, "blocker", "library"),
        ("CK018", "ops/scale.py", 6, 6, "minor", "library"),
        ("DEP019", "ops/scale.py", 1, 8, "blocker", "library"),
        ("DEP019", "ops/scale.py", 2, 8, "blocker", "library"),
        ("DEP019", "requirements.txt", 1, 1, "blocker", "library"),
    ]
    kernels = [(k.name, k.kind) for k in result.inventory.kernels]
    assert kernels == [("__call__", "device-helper"), ("kernel", "cute-dsl")]
    assert [(p.name, p.occurrences) for p in result.inventory.packages] == [("cutlass-dsl", 3)]


def test_a_cute_attention_package_on_the_main_path_is_a_kernel_library(tmp_path: Path) -> None:
    """A forward and a backward CuTe kernel module, as an attention library lays them out:
    kernels to replace, at D's cap; and since the kernels are nearly all its work, in every
    file that needs any, its core is custom CUDA: grade F (as blind engineers grade
    FlashMLA)."""
    backward = CUTE_KERNEL.replace("RowScale", "RowScaleBackward").replace("* 2", "* 0.5")
    result = scan_tree(
        tmp_path,
        {
            "attn/__init__.py": "from attn.fwd import RowScale\nfrom attn.bwd import RowScaleBackward\n",
            "attn/fwd.py": CUTE_KERNEL,
            "attn/bwd.py": backward,
            "requirements.txt": "nvidia-cutlass-dsl==4.2.0\n",
        },
    )
    assert (result.score.score, result.score.grade) == (59.9, "F"), result.score
    assert result.score.grade_meaning.startswith("the core is custom CUDA with no fallback: kernels with no fallback are"), result.score


def test_one_cute_kernel_file_is_no_longer_grade_a(tmp_path: Path) -> None:
    result = scan_tree(tmp_path, {"ops/__init__.py": "from ops.scale import RowScale\n", "ops/scale.py": CUTE_KERNEL, "requirements.txt": "nvidia-cutlass-dsl==4.2.0\n"})
    assert result.score.grade not in ("A", "B"), result.score


TILELANG = """\
    import tilelang
    import tilelang.language as T


    @tilelang.jit(out_idx=[-1])
    def scale(M, N, block_M=64):
        @T.prim_func
        def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
            with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
                for i, j in T.Parallel(block_M, N):
                    B[bx * block_M + i, j] = A[bx * block_M + i, j] * 2
        return main


    @T.prim_func
    def add_one(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(128):
                A[i] = A[i] + 1
    """


def test_tilelang_kernels_count_once_per_factory(tmp_path: Path) -> None:
    result = scan_tree(tmp_path, {"kern/__init__.py": "from kern.scale import scale\n", "kern/scale.py": TILELANG})
    assert rows(result, "CK019") == [
        ("CK019", "kern/scale.py", 5, 2, "blocker", "library"),
        ("CK019", "kern/scale.py", 15, 2, "blocker", "library"),
    ]
    assert [(k.name, k.kind) for k in result.inventory.kernels] == [("scale", "tilelang"), ("add_one", "tilelang")]
    assert rows(result, "DEP020") == [("DEP020", "kern/scale.py", 1, 8, "blocker", "library"), ("DEP020", "kern/scale.py", 2, 8, "blocker", "library")]


def test_triton_kernels_made_by_a_call(tmp_path: Path) -> None:
    code = """\
        import triton
        import triton.language as tl


        def _loss_fwd(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


        _loss_fwd = triton.jit(_loss_fwd)
        _loss_fwd = triton.heuristics({"BLOCK": lambda args: 128})(_loss_fwd)


        @triton.autotune(configs=[triton.Config({"BLOCK": 64})], key=["n"])
        @triton.jit(do_not_specialize=["n"])
        def _loss_bwd(x_ptr, n, BLOCK: tl.constexpr):
            pass


        _tuned = triton.autotune(configs=[triton.Config({"BLOCK": 64})], key=["n"])(triton.jit(_loss_fwd))
        """
    result = scan_tree(tmp_path, {"kern/loss.py": code})
    assert rows(result, "CK004") == [
        ("CK004", "kern/loss.py", 10, 13, "blocker", "library"),
        ("CK004", "kern/loss.py", 15, 2, "blocker", "library"),
        ("CK004", "kern/loss.py", 20, 77, "blocker", "library"),
    ]
    assert [k.name for k in result.inventory.kernels] == ["_loss_fwd", "_loss_bwd", "_loss_fwd"]


def test_other_kernel_languages_and_inline_ptx(tmp_path: Path) -> None:
    files = {
        "k/cudapy.py": """\
            from cuda.core.experimental import Program, ProgramOptions

            def build(code):
                return Program(code, code_type="c++", options=ProgramOptions(arch="sm_90")).compile("cubin")
            """,
        "k/physics.py": """\
            import warp as wp

            @wp.kernel
            def step(x: wp.array(dtype=float)):
                x[wp.tid()] = x[wp.tid()] * 2.0
            """,
        "k/fastmath.py": """\
            import triton
            import triton.language as tl

            @triton.jit
            def fast_cos(x):
                return tl.inline_asm_elementwise("cos.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1)
            """,
        "csrc/tk.cu": '#include "kittens.cuh"\n__device__ unsigned lane() { unsigned id; asm volatile("mov.u32 %0, %%laneid;" : "=r"(id)); return id; }\n',
    }
    result = scan_tree(tmp_path, files)
    assert rows(result, "CK020", "CK021", "CK022", "CK013", "DEP021", "DEP022") == [
        ("CK013", "csrc/tk.cu", 1, 1, "major", "library"),
        ("CK020", "k/cudapy.py", 4, 12, "blocker", "library"),
        ("CK021", "k/physics.py", 3, 2, "major", "library"),
        ("CK022", "csrc/tk.cu", 2, 43, "minor", "library"),
        ("CK022", "k/fastmath.py", 6, 12, "minor", "library"),
        ("DEP021", "k/cudapy.py", 1, 6, "blocker", "library"),
        ("DEP022", "k/physics.py", 1, 8, "major", "library"),
    ]


# -- point 2: files beyond Python -------------------------------------------------------


CONFIG_TREE = {
    "configs/train.yaml": """\
        defaults:
          - _self_
        device: cuda
        trainer:
          accelerator: gpu
          strategy: deepspeed_stage_2
          precision: 16-mixed
        dist_backend: nccl
        """,
    "configs/ds_zero2.json": '{"fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}\n',
    "configs/run.toml": '[run]\ndevice = "cuda:0"\n',
    "scripts/train.sh": """\
        #!/bin/bash
        # python train.py --accelerator gpu   (the old cluster)
        export CUDA_VISIBLE_DEVICES=0,1,2,3
        GPUS=$(nvidia-smi -L | wc -l)
        python train.py \\
            --accelerator gpu --strategy deepspeed_stage_2
        """,
    "Makefile": "train:\n\tpython train.py trainer.precision=16 device=cuda\n",
    "examples/finetune.yaml": "device: cuda\n",
    "train.py": "print('the launchers run this file')\n",
}


def test_configs_and_launch_lines(tmp_path: Path) -> None:
    result = scan_tree(tmp_path, CONFIG_TREE)
    assert rows(result) == [
        ("BLD005", "scripts/train.sh", 3, 8, "minor", "script"),
        ("BLD008", "scripts/train.sh", 4, 8, "minor", "script"),
        ("DI001", "configs/train.yaml", 8, 1, "major", "library"),
        ("DI011", "configs/ds_zero2.json", 1, 29, "major", "library"),
        ("DI011", "configs/train.yaml", 6, 3, "major", "library"),
        ("DI011", "scripts/train.sh", 6, 23, "major", "script"),
        ("DP015", "Makefile", 2, 39, "minor", "library"),
        ("DP015", "configs/run.toml", 2, 1, "minor", "library"),
        ("DP015", "configs/train.yaml", 3, 1, "minor", "library"),
        ("DP015", "configs/train.yaml", 5, 3, "minor", "library"),
        ("DP015", "examples/finetune.yaml", 1, 1, "minor", "example"),
        ("DP015", "scripts/train.sh", 6, 5, "minor", "script"),
        ("PR004", "Makefile", 2, 18, "major", "library"),
        ("PR004", "configs/ds_zero2.json", 1, 11, "major", "library"),
        ("PR004", "configs/train.yaml", 7, 3, "major", "library"),
    ]


def test_containers_and_cluster_manifests(tmp_path: Path) -> None:
    files = {
        "Dockerfile": "FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\nENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nCMD [\"python\", \"serve.py\", \"--device\", \"cuda\"]\n",
        "docker-compose.yml": """\
            services:
              train:
                image: nvcr.io/nvidia/pytorch:24.05-py3
                deploy:
                  resources:
                    reservations:
                      devices:
                        - driver: nvidia
                          capabilities: [gpu]
            """,
        "k8s/job.yaml": """\
            spec:
              template:
                spec:
                  nodeSelector:
                    cloud.google.com/gke-accelerator: nvidia-tesla-a100
                  containers:
                    - name: train
                      image: pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime
                      command: ["python", "train.py", "--accelerator", "gpu"]
                      env:
                        - name: CUDA_VISIBLE_DEVICES
                          value: "0"
                      resources:
                        limits:
                          nvidia.com/gpu: 8
            """,
        "helm/templates/job.yaml": """\
            {{- if .Values.gpu }}
            resources:
              limits:
                nvidia.com/gpu: {{ .Values.gpus }}
            {{- end }}
            """,
    }
    result = scan_tree(tmp_path, files)
    assert rows(result) == [
        ("BLD003", "Dockerfile", 1, 1, "major", "library"),
        ("BLD003", "docker-compose.yml", 3, 5, "major", "library"),
        ("BLD003", "k8s/job.yaml", 8, 11, "major", "library"),
        ("BLD004", "docker-compose.yml", 8, 15, "major", "library"),
        ("BLD004", "docker-compose.yml", 9, 15, "major", "library"),
        ("BLD004", "helm/templates/job.yaml", 4, 5, "major", "library"),
        ("BLD004", "k8s/job.yaml", 5, 9, "major", "library"),
        ("BLD004", "k8s/job.yaml", 15, 15, "major", "library"),
        ("BLD005", "Dockerfile", 2, 5, "minor", "library"),
        ("BLD005", "k8s/job.yaml", 11, 15, "minor", "library"),
        ("DP015", "Dockerfile", 3, 28, "minor", "library"),
        ("DP015", "k8s/job.yaml", 9, 43, "minor", "library"),
    ]


def test_a_readme_and_a_cuda_dockerfile_are_reported(tmp_path: Path) -> None:
    result = scan_tree(tmp_path, {"README.md": "# demo\n", "Dockerfile": "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"})
    assert rows(result) == [("BLD003", "Dockerfile", 1, 1, "major", "library")]


def test_setup_py_that_needs_cuda_to_install(tmp_path: Path) -> None:
    setup = """\
        import os
        import sys
        import torch
        from setuptools import setup

        BUILD_CUDA_EXT = int(os.environ.get("BUILD_CUDA_EXT", "1")) == 1
        if BUILD_CUDA_EXT and not torch.cuda.is_available():
            print("CUDA is required")
            sys.exit(1)
        setup(name="quantkit", install_requires=["torch==2.4.0"])
        """
    result = scan_tree(tmp_path, {"setup.py": setup})
    assert rows(result) == [
        ("BLD007", "setup.py", 6, 22, "blocker", "library"),
        ("BLD007", "setup.py", 7, 27, "blocker", "library"),
        ("DEP025", "setup.py", 10, 43, "blocker", "library"),
    ]


def test_an_optional_cuda_build_installs_anywhere(tmp_path: Path) -> None:
    setup = """\
        import torch
        from setuptools import setup
        from torch.utils.cpp_extension import CUDAExtension

        ext_modules = []
        if torch.cuda.is_available():
            ext_modules.append(CUDAExtension("k_cuda", ["k.cu"]))
        setup(name="k", ext_modules=ext_modules)
        """
    assert rows(scan_tree(tmp_path, {"setup.py": setup}), "BLD007", "CA002") == []


# -- point 3: pins and stacks -----------------------------------------------------------


def test_torch_pins_outside_torchtpu_range(tmp_path: Path) -> None:
    files = {
        "requirements.txt": "torch==2.4.0\n",
        "requirements-dev.txt": "torch>=2.1\n",
        "pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch>=2.1,<2.6"]\n',
        "environment.yml": "dependencies:\n  - pytorch=2.13\n",
    }
    result = scan_tree(tmp_path, files)
    assert rows(result, "DEP025") == [
        ("DEP025", "pyproject.toml", 3, 18, "blocker", "library"),
        ("DEP025", "requirements.txt", 1, 1, "blocker", "library"),
    ]
    assert rows(scan_tree(tmp_path / "x", files, target="xla"), "DEP025") == []


def test_the_pin_range_is_torchtpus() -> None:
    surface = SHARED / "api_surface.json"
    if not surface.is_file():
        pytest.skip("../shared/data/torchtpu/api_surface.json is not here")
    required = json.loads(surface.read_text(encoding="utf-8"))["torch_tpu"]["requires_torch"]
    rule = RULESET.by_id()["DEP025"]
    (matcher,) = rule.matchers
    assert matcher.outside is not None and matcher.outside.text == required
    assert required in rule.message


def test_stacks_and_apis_bound_to_cuda(tmp_path: Path) -> None:
    code = """\
        import ray
        import torch
        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh
        from torch.multiprocessing.reductions import reduce_tensor
        from vllm.distributed.device_communicators.pynccl import PyNcclCommunicator
        from colossalai.nn.optimizer import HybridAdam


        def train_step(model, x, args):
            with torch.cuda.amp.autocast(args.fp16 and not args.bf16):
                return model(x).mean()


        mesh = init_device_mesh("cuda", (2, 4))


        @ray.remote(num_gpus=1)
        class Rollout:
            def export(self, model):
                return {n: reduce_tensor(p) for n, p in model.named_parameters()}


        class Launcher:
            def __init__(self):
                self.dist_backend = "nccl"

            def start(self, group, device):
                dist.init_process_group(backend=self.dist_backend)
                self.comm = PyNcclCommunicator(group, device=device)
        """
    result = scan_tree(tmp_path, {"rl/loop.py": code})
    assert rows(result) == [
        ("CA003", "rl/loop.py", 15, 25, "major", "library"),
        ("CA014", "rl/loop.py", 11, 10, "major", "library"),
        ("DEP007", "rl/loop.py", 6, 6, "blocker", "library"),
        ("DEP023", "rl/loop.py", 7, 6, "blocker", "library"),
        ("DI001", "rl/loop.py", 26, 29, "major", "library"),
        ("DI008", "rl/loop.py", 18, 13, "major", "library"),
        ("DI009", "rl/loop.py", 21, 20, "blocker", "library"),
        ("DI010", "rl/loop.py", 30, 21, "blocker", "library"),
    ]


# -- the readers ---------------------------------------------------------------------------


def test_yaml_reader_keys_values_and_positions() -> None:
    text = "a:\n  b: true\n  list: [x, 'y']\nitems:\n  - name: n\n    device: cuda:0\nbase: &b {k: 1}\nother: *b\n"
    got = [(e.keys, e.value, e.span.line, e.span.column) for e in read_config("c.yaml", text)]
    assert got == [
        (("a",), None, 1, 1),
        (("a", "b"), "true", 2, 3),
        (("a", "list"), None, 3, 3),
        (("a", "list"), "x", 3, 3),
        (("a", "list"), "y", 3, 3),
        (("items",), None, 4, 1),
        (("items", "name"), "n", 5, 5),
        (("items", "device"), "cuda:0", 6, 5),
        (("base",), None, 7, 1),
        (("base", "k"), "1", 7, 11),
    ]


def test_yaml_reader_never_builds_objects_and_survives_bombs() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(20))
    assert len(read_config("bomb.yaml", bomb)) < 100
    tagged = "x: !!python/object/apply:os.system ['echo pwned']\ndevice: cuda\n"
    assert [(e.keys, e.value) for e in read_config("t.yaml", tagged)][-1] == (("device",), "cuda")


def test_json_reader_with_comments_and_broken_tails() -> None:
    text = '{\n  // hand-written\n  "fp16": {"enabled": true},\n  "devices": [{"driver": "nvidia"}],\n  "x": [1, "two"'
    got = [(e.keys, e.value, e.span.line, e.span.column) for e in read_config("c.json", text)]
    assert got == [
        (("fp16",), None, 3, 3),
        (("fp16", "enabled"), "true", 3, 12),
        (("devices",), None, 4, 3),
        (("devices", "driver"), "nvidia", 4, 16),
        (("x",), None, 5, 3),
        (("x",), "1", 5, 3),
        (("x",), "two", 5, 3),
    ]


def test_toml_reader_tables_and_dotted_keys() -> None:
    text = '[trainer]\naccelerator = "gpu"\n[tool.x]\nfp16.enabled = true\n'
    got = [(e.keys, e.value, e.span.line) for e in read_config("c.toml", text) if e.value is not None]
    assert got == [(("trainer", "accelerator"), "gpu", 2), (("tool", "x", "fp16", "enabled"), "true", 4)]
    assert read_config("bad.toml", "[unclosed\n") == []


def test_launch_reader_joins_lines_and_skips_heredocs_and_comments() -> None:
    text = 'python a.py \\\n  --accelerator gpu # --device cuda\ncat <<EOF\n--strategy deepspeed\nEOF\nCMD ["python", "b.py", "--fp16"]\necho "x # y" +trainer.devices=8\npip install deepspeed==0.7.7\n'
    got = [(o.name, o.value, text[o.start : o.end]) for line in command_lines(text) for o in options(launch_words(line))]
    assert got == [
        ("accelerator", "gpu", "--accelerator gpu"),
        ("fp16", None, '"--fp16"'),
        ("trainer.devices", "8", "+trainer.devices=8"),
    ]


@pytest.mark.parametrize(
    ("spec", "missed"),
    [
        ("==2.4.0", True),
        ("==2.13.0+cu121", False),
        ("<2.6", True),
        (">=2.1,<2.6", True),
        (">=2.1", False),
        ("~=2.4.0", True),
        ("~=2.4", False),
        ("==2.15.*", False),
        (">2.15.0", True),
        (">= 2.16", True),
        ("=2.3", True),
        ("=2.13.0=py3.11_cpu_0", False),
        ("2.4.*", True),
        ("", False),
        ("@ https://example.com/torch-2.4.0.whl", False),
        ("[cuda]>=2.1; python_version > '3.9'", False),
    ],
)
def test_torchtpu_range_against_specs(spec: str, missed: bool) -> None:
    assert VersionRange.parse(">=2.11.0,<=2.15.0").missed_by(spec) is missed


def test_a_range_must_bound_something() -> None:
    with pytest.raises(ValueError, match="not a version range"):
        VersionRange.parse("torch")
    assert interval_of("!=2.4.0") is not None
