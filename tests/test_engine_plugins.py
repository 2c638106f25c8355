"""A native source that includes a CUDA-only engine's plugin API (`NvInfer.h`), directly or
through the project's own headers, is a plugin of that engine: it runs inside TensorRT,
never in PyTorch, so it is part of a deployment the port leaves behind (blind set 61:
wenet's LayerNorm plugin for its GPU runtime, a blocker). Look-alikes keep the blocker: a
kernel beside the plugin that includes no engine header, a header named like one that is
not the engine's."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.analyze.headers import engine_plugins
from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

KERNEL = '#include "{header}"\n\n__global__ void norm_kernel(float* x, int n) {{\n  x[threadIdx.x] = 0.f;\n}}\n'
PLUGIN_HEADER = "#pragma once\n#include <NvInfer.h>\n#include <cuda_fp16.h>\n\nclass NormPlugin {};\n"
PLAIN_HEADER = "#pragma once\n#include <cuda_fp16.h>\n#include \"MyNvInferHelpers.h\"\n"

TREE = {
    "pkg/__init__.py": "import torch\n",
    "pkg/model.py": "import torch\n\n\nclass Net(torch.nn.Module):\n    pass\n",
    "deploy/trt/NormPlugin.h": PLUGIN_HEADER,
    "deploy/trt/NormPlugin.cu": KERNEL.format(header="NormPlugin.h"),
    "deploy/trt/MyNvInferHelpers.h": "#pragma once\n",
    "csrc/plain.h": PLAIN_HEADER,
    "csrc/fused.cu": KERNEL.format(header="plain.h"),
}


def test_a_tensorrt_plugin_is_part_of_the_engines_deployment(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", TREE)
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    rows = {(f.path, f.severity, tuple(r.rule for r in f.because)) for f in result.findings if f.rule == "CK003"}
    assert rows == {
        ("deploy/trt/NormPlugin.cu", "minor", ("alternative.engine-plugin", "severity.kernel-fallback")),
        # adversarial: includes no engine header (a helper merely named like one)
        ("csrc/fused.cu", "blocker", ()),
    }
    (plugin,) = [f for f in result.findings if f.rule == "CK003" and f.path.startswith("deploy/")]
    assert plugin.because[0].evidence.startswith("deploy/trt/NormPlugin.cu includes `NvInfer.h` (through deploy/trt/NormPlugin.h): a plugin of a CUDA-only engine")


def test_engine_plugins_follow_includes_and_stop_at_cycles() -> None:
    texts = {"a.cu": '#include "b.h"\n', "b.h": '#include "c.h"\n#include "a.cuh"\n', "c.h": "#include <NvInferPlugin.h>\n", "a.cuh": '#include "b.h"\n', "d.cu": "#include <cuda.h>\n"}
    found = engine_plugins(texts, texts.get, ["NvInferPlugin.h"])
    assert sorted(found) == ["a.cu", "a.cuh", "b.h", "c.h"]
