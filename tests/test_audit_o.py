"""What audit O (docs/audits/audit-o.md) judged wrong, each with a probe that fails on the
commit it audited (c353b3b) and a look-alike that must keep its finding."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
XLA = RULESET.for_target("xla")  # PyTorch/XLA keeps host syncs at their weight


def found(root: Path, path: str, code: str, rules: tuple[str, ...], target: str = "torchtpu") -> list[tuple[str, int, int, str]]:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(dedent(code), encoding="utf-8")
    result = scan(str(root), XLA if target == "xla" else RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.rule, f.span.line, f.span.column, f.severity) for f in result.findings if f.rule in rules)


def test_isinstance_ndarray_makes_the_value_host_data(tmp_path: Path) -> None:
    code = """\
        import numpy as np
        import torch


        def dumpable(d):
            if isinstance(d, np.ndarray):
                return d.tolist()
            for k in d:
                if isinstance(d[k], np.ndarray) and k:
                    d[k] = d[k].tolist()
            return d


        def either(t, x):
            if isinstance(t, torch.Tensor) or isinstance(t, np.ndarray):
                return t.tolist()
            if isinstance(t, (np.ndarray, torch.Tensor)):
                return t.tolist()
            return x.tolist()
        """
    # adversarial: an `or`, a tuple with a tensor type, and code outside the test keep theirs
    assert found(tmp_path, "pkg/io.py", code, ("HS002",), target="xla") == [
        ("HS002", 16, 18, "info"),
        ("HS002", 18, 18, "info"),
        ("HS002", 19, 14, "info"),
    ]


def test_a_bare_except_pass_around_an_import_is_an_optional_import(tmp_path: Path) -> None:
    code = """\
        import torch

        try:
            import xformers
        except:
            pass


        def attend(q, k, v):
            return xformers.ops.memory_efficient_attention(q, k, v)
        """
    loop = """\
        try:
            import xformers
            xformers.ops.memory_efficient_attention(1, 2, 3)
        except:
            pass
        """
    # adversarial: a bare except around a call into the package is error handling
    assert found(tmp_path / "a", "pkg/layers.py", code, ("DEP003",)) == [("DEP003", 4, 12, "info")]
    assert found(tmp_path / "b", "pkg/layers.py", loop, ("DEP003",)) == [("DEP003", 2, 12, "blocker")]


def test_an_import_attempt_behind_a_switch_inside_the_try_keeps_a_fallback(tmp_path: Path) -> None:
    code = """\
        import os

        ENABLED = os.environ.get("NO_XFORMERS") is None
        try:
            if ENABLED:
                from xformers.ops import memory_efficient_attention
                HAVE_XFORMERS = True
            else:
                raise ImportError
        except ImportError:
            HAVE_XFORMERS = False


        def attend(q, k, v):
            if HAVE_XFORMERS:
                return memory_efficient_attention(q, k, v)
            return (q @ k.transpose(-1, -2)).softmax(-1) @ v
        """
    loop = """\
        try:
            for name in ("a", "b"):
                from xformers.ops import memory_efficient_attention
        except ImportError:
            pass
        """
    # blind set 9 (MoGe's copy of DINOv2's layers): the import under the switch is optional;
    # adversarial: an import inside a loop in the try is not an import attempt
    assert found(tmp_path / "a", "pkg/attention.py", code, ("DEP003",)) == [("DEP003", 6, 14, "info")]
    assert found(tmp_path / "b", "pkg/attention.py", loop, ("DEP003",)) == [("DEP003", 3, 14, "blocker")]


RENDERER = """\
    import torch
    from diff_gaussian_rasterization import GaussianRasterizationSettings, GaussianRasterizer


    def render(camera, means, colors):
        settings = GaussianRasterizationSettings(image_height=camera.h, image_width=camera.w)
        return GaussianRasterizer(settings)(means, colors)
    """


def test_a_renderer_built_on_a_cuda_rasteriser_is_custom_cuda_at_its_core(tmp_path: Path) -> None:
    """Blind set 9 (4DGaussians, as mip-splatting in set 1): every render goes through a
    CUDA-only rasteriser with no TPU alternative; written anew, it is the core (grade F)."""
    root = tmp_path / "splat"
    (root / "render").mkdir(parents=True)
    (root / "render" / "__init__.py").write_text(dedent(RENDERER))
    (root / "train.py").write_text("import torch\nfrom render import render\nmodel = torch.nn.Linear(2, 2).cuda()\n")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert result.score.grade == "F", result.score
    assert "CUDA-only subsystems with no TPU alternative" in result.score.grade_meaning


def test_a_rasteriser_that_is_a_small_part_of_the_work_stays_d(tmp_path: Path) -> None:
    # adversarial: the same rasteriser beside a large port (flash-attn, DeepSpeed, many
    # files of device code) is one dependency to replace among others: D, not F
    root = tmp_path / "model"
    (root / "render").mkdir(parents=True)
    (root / "render" / "__init__.py").write_text(dedent(RENDERER))
    (root / "requirements.txt").write_text("flash-attn==2.6.3\ndeepspeed==0.14.0\nxformers==0.0.28\n")
    for n in range(4):
        (root / f"stage{n}.py").write_text(
            "import torch\nfrom flash_attn import flash_attn_func\nimport deepspeed\nimport xformers.ops\n"
            "def step(q, k, v):\n    return flash_attn_func(q, k, v), xformers.ops.memory_efficient_attention(q, k, v)\n"
        )
    (root / "train.py").write_text("import torch\nfrom render import render\nimport stage0, stage1, stage2, stage3\n")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert result.score.grade == "D", result.score


def test_a_cuda_check_or_a_switch_only_a_user_sets_guards_the_cuda_build(tmp_path: Path) -> None:
    code = """\
        import os
        import torch
        from torch.utils.cpp_extension import CUDAExtension, CppExtension


        def forced(name, sources):
            if torch.cuda.is_available() or os.getenv("FORCE_CUDA", "0") == "1":
                return CUDAExtension(name, sources + ["op_kernel.cu"])
            return CppExtension(name, sources)


        def on_by_default(name, sources):
            if torch.cuda.is_available() or os.getenv("USE_CUDA", "1") == "1":
                return CUDAExtension(name, sources + ["op_kernel.cu"])
            return CppExtension(name, sources)
        """
    # blind set 9 (BasicSR's setup.py): without CUDA and without the user's FORCE_CUDA a TPU
    # host builds the C++ extension; adversarial: a switch on by default forces CUDA anyway
    assert found(tmp_path, "setup.py", code, ("BLD007", "CK001")) == [
        ("BLD007", 13, 8, "blocker"),
        ("BLD007", 13, 37, "blocker"),
        ("CK001", 8, 16, "info"),
        ("CK001", 14, 16, "blocker"),
    ]


def test_one_value_repeated_across_recipe_configs_is_one_edit() -> None:
    from tpucheck.findings import Finding, Span
    from tpucheck.judge.score import Model

    model = Model({r.id: r for r in RULESET.rules}, RULESET.judgement)

    def nccl(path: str, snippet: str = "'nccl'") -> Finding:
        return Finding(
            "DI001", "nccl-backend", "distributed", "major", "high", path, Span(3, 5, 3, 11), None, "m", "f",
            ("training",), snippet, "library", False, f"fp-{path}-{snippet}",
        )

    def hours(findings: list[Finding]) -> float:
        return round(sum(s.high for s in model.shares(findings)), 6)

    one = hours([nccl("options/a.yml")])
    # blind set 9 (BasicSR: `backend: nccl` in 37 training recipes): further configs are copies
    assert hours([nccl(f"options/r{n}.yml") for n in range(10)]) == round(one * (1 + 9 * 0.1), 6)
    # adversarial: code files, and other values, are separate edits
    assert hours([nccl(f"pkg/m{n}.py") for n in range(3)]) == round(3 * one, 6)
    assert hours([nccl("options/a.yml"), nccl("options/b.yml", "'NCCL'")]) == round(2 * one, 6)


def test_a_report_beside_the_import_in_the_try_is_still_an_import_attempt(tmp_path: Path) -> None:
    code = """\
        try:
            from xformers.ops import memory_efficient_attention as xformers_attn
            print("xformers is installed")
        except:
            print("xformers is not installed")
            xformers_attn = None
        """
    work = """\
        import torch
        try:
            from xformers.ops import memory_efficient_attention as xformers_attn
            torch.cuda.synchronize()
        except:
            xformers_attn = None
        """
    # blind set 10 (FramePack): the optional attention imports print whether they loaded;
    # adversarial: a try doing work beside the import is error handling
    assert found(tmp_path / "a", "pkg/attn.py", code, ("DEP003",)) == [("DEP003", 2, 10, "info")]
    assert found(tmp_path / "b", "pkg/attn.py", work, ("DEP003",)) == [("DEP003", 3, 10, "blocker")]


def test_a_copy_made_to_draw_or_save_a_result_is_output_not_a_step(tmp_path: Path) -> None:
    code = """\
        import torch
        from PIL import Image
        from torchvision.transforms import ToPILImage


        def save_frames(frames, writer):
            for n, frame in enumerate(frames):
                ToPILImage()(frame.cpu()).save(f"{n}.png")
                Image.fromarray(frame.cpu().numpy()).save(f"{n}.jpg")
                writer.add_image("frame", frame.cpu(), n)
                kept = frame.cpu()
                torch.save(kept, f"{n}.pt")
        """
    # audit P (VideoMAE's visualisation frames, Hunyuan3D-2's PIL conversion); adversarial:
    # a copy bound to a name in the loop stays a per-step copy
    assert found(tmp_path, "pkg/vis.py", code, ("HS010",)) == [("HS010", 11, 22, "info")]


def test_an_option_the_launch_scripts_turn_on_is_the_main_path(tmp_path: Path) -> None:
    code = """\
        import argparse

        import torch

        parser = argparse.ArgumentParser()
        parser.add_argument("--fp16", action="store_true")
        args = parser.parse_args()
        if args.fp16:
            scaler = torch.cuda.amp.GradScaler()
        """

    def scaler(root: Path, script: str | None) -> list[tuple[str, int, bool, str]]:
        root.mkdir()
        (root / "train.py").write_text(dedent(code))
        if script is not None:
            (root / "scripts").mkdir()
            (root / "scripts" / "run.sh").write_text(script)
        result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
        return [(f.rule, f.span.line, f.guarded, f.because[0].rule) for f in result.findings if f.rule == "CA015"]

    # audit P (VideoMAE: every shipped finetune script passes --enable_deepspeed);
    # adversarial: scripts that leave the option alone, or none, keep it optional
    assert scaler(tmp_path / "a", "python train.py --fp16 --lr 1e-4\n") == [("CA015", 9, False, "option.launched")]
    assert scaler(tmp_path / "b", "# python train.py --fp16 was slower\npython train.py --lr 1e-4\n") == [("CA015", 9, True, "guard.option")]
    assert scaler(tmp_path / "c", None) == [("CA015", 9, True, "guard.option")]


def test_an_import_whose_handler_raises_or_exits_is_required() -> None:
    from tpucheck.analyze.imports import scan_imports

    code = dedent(
        """\
        try:
            from texture_baker import TextureBaker
        except ImportError:
            import logging
            logging.warning("install texture-baker")
            raise ImportError("texture_baker not found")
        try:
            import unwrap_ext
        except ImportError:
            sys.exit(1)
        try:
            import fused_ext
        except ImportError:
            if strict:
                raise
            fused_ext = None
        """
    )
    # audit Q (stable-fast-3d): the handler only says the package is needed; adversarial:
    # a raise under a further test keeps the import optional
    found_imports = {i.module: i.conditional for i in scan_imports(code)}
    assert found_imports["texture_baker.TextureBaker"] is False
    assert found_imports["unwrap_ext"] is False
    assert found_imports["fused_ext"] is True
