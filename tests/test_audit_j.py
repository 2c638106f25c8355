"""What the independent audit J (docs/audits/audit-j.md) found, each fixed by structure and
held by a probe that must still be reported.

- A compiled extension built by a name bound to the build class (`extension =
  CUDAExtension`) from sources globbed out of a folder the build file joins is still that
  extension: its CUDA sources are optional when every import of it is.
- The launches and includes of such a source weigh what its kernels weigh.
- `CUDA_HOME is not None` asks whether CUDA is there, like `torch.cuda.is_available()`.
- A device test whose branch only adds words to a message reports; it loses no path.
- `install_torch` in a build script is a verb, not an op's reference implementation.
"""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from test_judgement import scanned

from tpucheck.analyze.imports import extension_builds
from tpucheck.engine import ScanOptions, scan
from tpucheck.findings import Build
from tpucheck.result import ScanResult
from tpucheck.ruleset import load_ruleset

SETUP = """\
    import glob
    import os
    from setuptools import setup
    from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension


    def get_extensions():
        here = os.path.dirname(os.path.abspath(__file__))
        extensions_dir = os.path.join(here, "detkit", "csrc")
        sources = glob.glob(os.path.join(extensions_dir, "*.cpp"))
        extension = CppExtension
        if CUDA_HOME is not None:
            extension = CUDAExtension
            sources += glob.glob(os.path.join(extensions_dir, "*.cu"))
        else:
            return None
        return [extension("detkit._C", sources)]


    setup(name="detkit", ext_modules=get_extensions())
    """

KERNEL = """\
    #include <cuda_runtime.h>

    __global__ void shift_kernel(const float* x, float* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = x[i] + 1.0f;
    }

    void shift_cuda(const float* x, float* y, int n) {
        shift_kernel<<<(n + 255) / 256, 256>>>(x, y, n);
    }
    """

OPTIONAL_IMPORT = """\
    import torch

    try:
        from detkit import _C
    except ImportError:
        _C = None


    def shift(x):
        if _C is not None and x.is_cuda:
            return _C.shift(x)
        return x + 1
    """

REQUIRED_IMPORT = """\
    import torch
    from detkit import _C


    def shift(x):
        return _C.shift(x)
    """


def rows(result: ScanResult, rules: tuple[str, ...]) -> list[tuple[str, str, int, str]]:
    return sorted((f.rule, f.path, f.span.line, f.severity) for f in result.findings if f.rule in rules)


def test_a_build_through_a_bound_class_takes_the_folders_its_file_joins() -> None:
    assert extension_builds(dedent(SETUP)) == [Build("_C", ("detkit/csrc/",), "detkit")]
    # a build that lists its sources keeps them; a glob's pattern is no source
    listed = 'CUDAExtension("fast_ops", ["csrc/a.cu", "csrc/b.cu"])\nglob("*.cu")\n'
    assert extension_builds(listed) == [Build("fast_ops", ("csrc/a.cu", "csrc/b.cu"))]


def test_a_joined_folder_written_as_one_path_is_the_builds_too() -> None:
    """In sample (blind set 31: ODISE's Mask2Former): `os.path.join(this_dir,
    "mask2former/modeling/pixel_decoder/ops/src")` names the folder in one literal, so the
    extension's globbed kernels were no source of its build, and its PyTorch fallback
    (`fallback.except-twin`) never reached them. A file name stays no folder."""
    text = (
        'extensions_dir = os.path.join(this_dir, "pkg/ops/src")\n'
        'sources = glob.glob(os.path.join(extensions_dir, "cuda", "*.cu"))\n'
        'CUDAExtension("MSDA", sources)\n'
    )
    assert extension_builds(text) == [Build("MSDA", ("pkg/ops/src/",))]
    assert extension_builds(text.replace('"pkg/ops/src"', '"pkg/ops/README.md"')) == [Build("MSDA", ())]


def test_an_optional_extensions_globbed_sources_are_fallback_kept(tmp_path: Path) -> None:
    result = scanned(tmp_path, {"setup.py": SETUP, "detkit/__init__.py": "", "detkit/ops.py": OPTIONAL_IMPORT, "detkit/csrc/shift_cuda.cu": KERNEL})
    native = [f for f in result.findings if f.path == "detkit/csrc/shift_cuda.cu"]
    assert {(f.rule, f.severity) for f in native} >= {("CK003", "minor"), ("CK012", "minor")}
    assert all(f.severity in ("minor", "info") and f.guarded for f in native)
    kernel = next(f for f in native if f.rule == "CK003")
    assert [r.rule for r in kernel.because][:1] == ["fallback.optional-module"]
    assert "`_C` is only imported inside a try" in kernel.because[0].evidence
    # `CUDA_HOME is not None` is a CUDA test whose other side builds nothing: no BLD007,
    # and the CUDA build under it is fallback kept
    assert rows(result, ("BLD007",)) == []
    assert [(f.span.line, f.guarded) for f in result.findings if f.rule == "CK001"] == [(13, True), (17, True)]


def test_a_required_extensions_globbed_sources_still_block(tmp_path: Path) -> None:
    result = scanned(tmp_path, {"setup.py": SETUP, "detkit/__init__.py": "", "detkit/ops.py": REQUIRED_IMPORT, "detkit/csrc/shift_cuda.cu": KERNEL})
    assert rows(result, ("CK003",)) == [("CK003", "detkit/csrc/shift_cuda.cu", 3, "blocker")]
    assert ("CK012", "detkit/csrc/shift_cuda.cu", 9, "major") in rows(result, ("CK012",))


def test_a_setup_that_exits_without_cuda_is_still_reported(tmp_path: Path) -> None:
    code = """\
        import os
        import sys
        import torch
        from setuptools import setup
        from torch.utils.cpp_extension import CUDA_HOME

        if os.environ.get("FORCE_CUDA", "1") == "1" and not torch.cuda.is_available():
            sys.exit("CUDA is required")
        if CUDA_HOME is None:
            raise RuntimeError("CUDA toolkit not found")
        setup(name="detkit")
        """
    assert rows(scanned(tmp_path, {"setup.py": code}), ("BLD007",)) == [("BLD007", "setup.py", 7, "blocker"), ("BLD007", "setup.py", 7, "blocker")]


def test_a_device_test_that_only_adds_words_to_a_message_is_no_lost_path(tmp_path: Path) -> None:
    code = """\
        import torch

        DESCRIPTION = "Image demo."
        if not torch.cuda.is_available():
            DESCRIPTION += " Running on CPU: slow."
        if not torch.cuda.is_available():
            DESCRIPTION += " Running on CPU."
            SIZE = 256
        """
    # the second test also sets a size for the CPU: a path of its own, reported
    assert rows(scanned(tmp_path, {"app.py": code}), ("CA002",)) == [("CA002", "app.py", 6, "major")]


def test_a_build_scripts_install_verb_is_no_reference(tmp_path: Path) -> None:
    code = """\
        import subprocess
        import torch

        def install_torch():
            subprocess.check_call(["pip", "install", "torch"])

        def gelu_torch(x):
            return torch.nn.functional.gelu(x)
        """
    files = {"pkg/build_util.py": code, "pkg/csrc/gelu_cuda.cu": KERNEL}
    assert [(f.rule, f.span.line) for f in scanned(tmp_path, files).findings if f.rule == "CK015"] == [("CK015", 7)]


def test_a_cuda_only_package_behind_a_device_test_with_a_fallback_is_a_note(tmp_path: Path) -> None:
    code = """\
        import torch
        import torch.nn.functional as F

        def attend(q, k, v):
            if q.device.type == "cuda":
                from flash_attn import flash_attn_func
                return flash_attn_func(q, k, v)
            return F.scaled_dot_product_attention(q, k, v)
        """
    result = scanned(tmp_path, {"pkg/attn.py": code})
    found = next(f for f in result.findings if f.rule == "DEP002")
    # a lazy import under the test: presumed to fall back, so a small check (minor)
    assert (found.span.line, found.severity, found.guarded) == (6, "minor", True)
    assert [r.rule for r in found.because] == ["guard.lazy-import", "severity.kernel-fallback"]
    # the same import on the main path blocks
    plain = scanned(tmp_path / "plain", {"pkg/attn.py": "from flash_attn import flash_attn_func\n"})
    assert [(f.rule, f.severity) for f in plain.findings if f.rule == "DEP002"] == [("DEP002", "blocker")]


def test_an_except_that_builds_the_same_extension_keeps_its_kernels_required(tmp_path: Path) -> None:
    # The handler binds the name again, to a just-in-time build of the same CUDA code:
    # another way to get the extension, not a path without it (blind set 1's gsplat).
    jit = """\
        _C = None
        try:
            from detkit import _C
        except ImportError:
            if toolkit_found():
                _C = build_and_load_detkit()
            else:
                print("detkit: no CUDA toolkit, disabled")


        def shift(x):
            return _C.shift(x)
        """
    result = scanned(tmp_path, {"setup.py": SETUP, "detkit/__init__.py": "", "detkit/ops.py": jit, "detkit/csrc/shift_cuda.cu": KERNEL})
    assert rows(result, ("CK003",)) == [("CK003", "detkit/csrc/shift_cuda.cu", 3, "blocker")]
    # binding the name to None is the path without it: optional, as above
    none = jit.replace("_C = build_and_load_detkit()", "_C = None")
    kept = scanned(tmp_path / "none", {"setup.py": SETUP, "detkit/__init__.py": "", "detkit/ops.py": none, "detkit/csrc/shift_cuda.cu": KERNEL})
    assert rows(kept, ("CK003",)) == [("CK003", "detkit/csrc/shift_cuda.cu", 3, "minor")]


def test_a_copy_to_the_host_is_reported_only_in_per_step_code(tmp_path: Path) -> None:
    # Audits J and K judged 15 of 24 one-off `.cpu()` notes false: a final output, a
    # checkpoint, a plot. In a loop or a forward it still is reported.
    code = """\
        import torch

        def export(model, path):
            torch.save(model.head.weight.detach().cpu(), path)

        def evaluate(model, batches):
            outs = []
            for x in batches:
                outs.append(model(x).cpu())
            return outs

        class Head(torch.nn.Module):
            def forward(self, x):
                return self.proj(x).cpu()
        """
    # on PyTorch/XLA, where a copy ends the lazy graph (on TorchTPU only compiled code counts:
    # tests/test_audit_o.py)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "run.py").write_text(dedent(code), encoding="utf-8")
    result = scan(str(tmp_path), load_ruleset().for_target("xla"), ScanOptions(jobs=1, use_cache=False))
    assert [(f.rule, f.span.line) for f in result.findings if f.rule == "HS010"] == [("HS010", 9), ("HS010", 14)]
