#!/usr/bin/env python3
"""Generate the torch.cuda rule pack from TorchTPU's API surface.

    python scripts/generate_cuda_rules.py [--data FILE] [--out FILE] [--check]

Why a generator: `torch.cuda` has 128 public names (torch 2.14.1's `torch.cuda.__all__`)
and which of them TorchTPU mirrors changes with each TorchTPU release. Rules typed by hand
for the well-known names (rules/cuda-api.yaml and others) leave the rest unseen; this
script makes sure every public name is judged, as a call and as a reference, and that the
fix it gives is the one the data supports. `--check` (run in-process by
tests/test_cuda_pack.py) proves that the committed `rules/cuda-api-generated.yaml` is
exactly this script's output.

What comes from where:

- `../shared/data/torchtpu/api_surface.json` (read in place): the names
  (`torch_cuda_all`), and for each whether `torch.tpu` has the same name and whether
  `torch.accelerator` has it (`torch_cuda_map`). That picks the fix: the `torch.tpu`
  name (with the `torch.accelerator` call or `torch.get_device_module(device)` to keep
  the GPU path), only `torch.accelerator`, or neither, in which case the fix says whether
  to remove the call or redesign around it. The versions and wheel hashes it records go
  into the pack's header, with the file's own sha256.
- the hand-written rules (every rules/*.yaml but the generated packs): a name one of them
  already flags as a call and as a reference gets no generated rule (listed under
  `x-covered-by-hand`); a name flagged one way only is an error, since two rules would
  then share one name.
- the tables below: what the data cannot say, namely what each remaining name does and
  what it blocks (its family sets category, severity and effort, as the hand rules do for
  similar names), and how to remove or redesign a name TorchTPU lacks.

Examples are built from templates per kind of name (function, class, context manager,
constant, exception, module) and run through tpucheck's analyzer before the pack is
written, with every other rule loaded, so a wrong template fails here.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a plain script: import tpucheck from this checkout
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # pack_common, also when loaded by a test

from pack_common import Flow, FlowMap, Folded, Literal, dump, number, sha256, shown_path
from pack_common import diff_summary as _diff_summary

from tpucheck.analyze import analyze_text, build_context
from tpucheck.ruleset.loader import (
    RuleFileError,
    load_ruleset,
    parse_rule_file,
    resolve_claims,
    resolve_places,
)
from tpucheck.ruleset.model import DeviceContext, Rule, Ruleset, Where

DEFAULT_DATA = REPO.parent / "shared" / "data" / "torchtpu" / "api_surface.json"
DEFAULT_OUT = REPO / "rules" / "cuda-api-generated.yaml"
HAND_RULES = REPO / "rules"
GENERATED_SUFFIX = "-generated.yaml"
COMMAND = "python scripts/generate_cuda_rules.py"
TORCH_TPU_DOCS = "https://google-pytorch.github.io/torch_tpu"
TORCH_CUDA_DOCS = "https://docs.pytorch.org/docs/stable/cuda.html"
XLA_MIGRATION = "https://github.com/pytorch/xla/blob/master/docs/source/learn/migration-to-xla-on-tpus.md"
UNLISTED_ID = "CA100"

KINDS = ("function", "class", "context", "constant", "exception", "module")
"""function/class/context: matched as a call and as a reference; constant/exception: as a
reference (a call of one is a reference too); module: a residual reference, the module and
whatever below it no other rule claims."""


class GenerationError(Exception):
    """The data, the hand rules and the tables below disagree; the message says what to fix."""


# -- what the data cannot say ------------------------------------------------------------


@dataclass(frozen=True)
class Family:
    """Names that block the same thing: their category, severity and effort follow the hand
    rule for similar names; `consequence` completes every message of the family."""

    category: str
    severity: str
    effort: tuple[float, float]
    consequence: str
    fix_xla: str
    docs: tuple[str, ...] = (TORCH_TPU_DOCS, TORCH_CUDA_DOCS)


FAMILIES: dict[str, Family] = {
    "allocator": Family(
        "cuda-api", "major", (0.5, 2.0),
        "A TPU host's PyTorch has no CUDA caching allocator, so this raises there; TPU device memory is managed by its runtime, and TorchTPU exposes no allocator API of its own.",
        "Remove it: PJRT manages device memory.",
    ),
    "memory-stats": Family(  # as CA006
        "cuda-api", "minor", (0.25, 0.5),
        "It reads counters of the CUDA allocator or the GPU driver, which a TPU host does not have: it raises or reports nothing there.",
        "`xm.get_memory_info(torch_xla.device())` returns `bytes_used`, `bytes_limit` and `peak_bytes_used`.",
    ),
    "telemetry": Family(
        "cuda-api", "minor", (0.1, 0.25),
        "It asks NVIDIA's management library (NVML) about a GPU; a TPU host has neither, so it raises there.",
        "Remove it; read TPU activity from a profile (`torch_xla.debug.profiler`).",
    ),
    "capability": Family(  # as CA016
        "cuda-api", "minor", (0.1, 0.3),
        "A feature gate on CUDA hardware or its build: on a TPU host it raises or answers for a GPU that is not there, so the branch it picks is the wrong one.",
        "Branch on the device instead: `xm.xla_device_hw(device)` is \"TPU\" on a TPU.",
    ),
    "runtime": Family(
        "cuda-api", "minor", (0.1, 0.5),
        "It reaches into the CUDA runtime, which a TPU host's PyTorch does not have: it raises there.",
        "Remove it: PyTorch/XLA has no CUDA runtime to call.",
    ),
    "errors": Family(  # as CA018
        "cuda-api", "info", (0.1, 0.25),
        "Code that catches it never sees a TPU failure, which surfaces as a `RuntimeError`.",
        "Catch `RuntimeError` (a TPU out-of-memory error mentions RESOURCE_EXHAUSTED) and test the handler on TPU.",
    ),
    "cuda-libraries": Family(
        "cuda-api", "major", (1.0, 4.0),
        "Only CUDA code (an extension calling NVIDIA's math libraries) can use the handle, and that code cannot run on a TPU: it goes with the handle.",
        "Remove it with the CUDA code it feeds; write the math in PyTorch ops, which XLA compiles.",
    ),
    "streams": Family(  # as CA008
        "cuda-api", "major", (1.0, 3.0),
        "CUDA streams do not exist on a TPU host, so this raises there. TorchTPU has streams of its own, so the overlap logic can stay once it names a TPU or device-agnostic stream.",
        "Remove the streams; overlap host-to-device copies with `torch_xla.distributed.parallel_loader.MpDeviceLoader(loader, device)`.",
    ),
    "graphs": Family(  # as CA010
        "cuda-api", "major", (1.0, 4.0),
        "CUDA graph capture does not exist on a TPU; it is not needed there either, because the step is compiled (`torch.compile(model, backend=\"tpu\")`).",
        "Remove it; compile with `torch_xla.compile(fn)` or `torch.compile(model, backend=\"openxla\")`.",
        (TORCH_TPU_DOCS, TORCH_CUDA_DOCS, "https://github.com/pytorch/xla/blob/master/docs/source/perf/dynamo.md"),
    ),
    "rng": Family(  # as CA005
        "cuda-api", "minor", (0.1, 0.25),
        "It reaches CUDA's random generators only: on a TPU it does nothing useful (or raises), and runs are no longer reproducible.",
        "`torch_xla.manual_seed(seed)`; save and restore with `xm.get_rng_state()` / `xm.set_rng_state(state)`.",
    ),
    "device": Family(  # as CA004
        "cuda-api", "major", (0.1, 0.25),
        "On a TPU host it raises or selects no device, so code that relies on the device it picks breaks.",
        "Use `torch_xla.device()`; each process of `torch_xla.launch(fn)` has its own device.",
    ),
    "state": Family(  # as CA002, without its device choice
        "cuda-api", "minor", (0.1, 0.25),
        "On a TPU host CUDA is never initialised, so the answer (or the call) is about a device that is not there.",
        "Remove it: PyTorch/XLA initialises its runtime when `torch_xla.device()` is first called.",
    ),
    "debugging": Family(
        "cuda-api", "minor", (0.1, 0.25),
        "A CUDA debugging aid: on a TPU host it raises or has nothing to report.",
        "Remove it; debug on TPU with `torch_xla.debug.metrics` and profiles.",
    ),
    "amp": Family(  # precision, as CA014
        "precision", "minor", (0.1, 0.5),
        "Everything in it is bound to CUDA: its autocast does nothing for TPU tensors, and its usual dtype, fp16, is the wrong one for TPUs.",
        "`torch.autocast(\"xla\", dtype=torch.bfloat16)`; with bf16, drop the gradient scaler.",
        (TORCH_TPU_DOCS, TORCH_CUDA_DOCS, "https://github.com/pytorch/xla/blob/master/docs/source/perf/amp.md"),
    ),
    "legacy-types": Family(  # device-placement, as CA021
        "device-placement", "major", (0.1, 0.25),
        "They create or test for tensors on a CUDA device: they raise on a TPU host, and `isinstance` checks against them are always False there.",
        "Create sparse tensors with a device: `torch.sparse_coo_tensor(indices, values, size, device=torch_xla.device())`.",
    ),
    "tuning": Family(  # as CA012
        "cuda-api", "info", (0.05, 0.1),
        "It tunes CUDA (and ROCm) kernels and has no effect on a TPU, where the compiler picks the kernels.",
        "Remove it: XLA's compiler picks the kernels.",
    ),
    "partitioning": Family(
        "cuda-api", "major", (1.0, 4.0),
        "A TPU has no streaming multiprocessors to partition, so this raises there and the work split it sets up has to be designed anew.",
        "Remove it; run the parts as separate programs or processes.",
    ),
    "unlisted": Family(
        "cuda-api", "minor", (0.25, 1.0),
        "TorchTPU mirrors public `torch.cuda` names only, so nothing stands in for it on a TPU host, and a private helper may change with any torch release even on a GPU.",
        "Remove it, or use the public PyTorch/XLA API that does the same (`torch_xla.device()`, `torch_xla.sync()`, `xm.get_memory_info(device)`).",
    ),
}


@dataclass(frozen=True)
class Name:
    """One public torch.cuda name no hand rule covers: its stable rule id, what it is and does."""

    id: str
    family: str
    kind: str
    does: str
    """A clause after "`torch.cuda.<name>` ": what it does."""
    remedy: str = ""
    """For a name TorchTPU lacks: "Remove it ..." or "Redesign: ...", the choice the issue asks for."""
    args: str = ""
    """Arguments of the example call."""
    child: str | None = None
    """module: a real name below it that no other rule claims, for an example."""
    claimed_child: str | None = None
    """module: a name below it another rule claims, for a pass example."""
    severity: str | None = None
    """When the name blocks less (or more) than its family."""


NAMES: dict[str, Name] = {
    # ids are stable: a new name takes the next free id, a removed one leaves a gap
    "CUDAPluggableAllocator": Name("CA101", "allocator", "class", "loads a custom CUDA memory allocator from a shared library", "Redesign: keep the custom allocator on the CUDA path only (`if device.type == \"cuda\":`); on a TPU, memory is allocated by its runtime.", '"alloc.so", "my_malloc", "my_free"'),
    "CudaError": Name("CA102", "errors", "exception", "is the error `torch.cuda.check_error` raises for a failed CUDA runtime call", "Remove the handler on the TPU path, or catch `RuntimeError`."),
    "DeferredCudaCallError": Name("CA103", "errors", "exception", "is raised when a CUDA call queued before CUDA was initialised fails", "Remove the handler on the TPU path, or catch `RuntimeError`."),
    "GreenContext": Name("CA104", "partitioning", "class", "partitions a GPU's streaming multiprocessors between workloads (green contexts)", "Redesign: run the workloads one after another, or as separate processes, each on its own TPU device."),
    "MemPool": Name("CA105", "allocator", "class", "creates a private pool of CUDA caching-allocator memory", "Redesign: allocate normally on the TPU path and keep the pool behind a CUDA-only branch (`if device.type == \"cuda\":`)."),
    "StreamContext": Name("CA106", "streams", "context", "is the context manager that makes a CUDA stream current", "Redesign: use TorchTPU's stream context manager, `with torch.tpu.stream(s):`, on the TPU path, or `torch.accelerator.set_stream(s)` in device-agnostic code.", "stream"),
    "amp": Name("CA107", "amp", "module", "is CUDA's automatic mixed precision namespace, deprecated in favour of `torch.amp`", "Redesign: name `torch.amp` with a device type, `torch.autocast(device_type=device.type, dtype=torch.bfloat16)`, `torch.amp.GradScaler(device.type)`, `torch.amp.custom_fwd(device_type=device.type)`; on a TPU, with bf16, drop the scaler.", child="grad_scaler.OptState", claimed_child="autocast()"),
    "caching_allocator_alloc": Name("CA108", "allocator", "function", "takes raw memory from the CUDA caching allocator", "Redesign: allocate a tensor instead, `torch.empty(n, dtype=torch.uint8, device=device)`, which works on every device.", "1024"),
    "caching_allocator_delete": Name("CA109", "allocator", "function", "frees memory taken with `torch.cuda.caching_allocator_alloc`", "Remove it with the matching `caching_allocator_alloc` (a tensor frees its memory when it is released).", "ptr"),
    "caching_allocator_disabled": Name("CA110", "allocator", "context", "turns the CUDA caching allocator off for the block it wraps", "Remove it on the TPU path (keep the block's body)."),
    "caching_allocator_enable": Name("CA111", "allocator", "function", "turns the CUDA caching allocator on or off", "Remove it on the TPU path.", "False"),
    "can_device_access_peer": Name("CA112", "capability", "function", "asks whether one GPU can read another's memory directly (peer-to-peer)", "Remove the check: TPU chips exchange data over their interconnect through collectives (`torch.distributed` with the \"tpu\" backend), which need no peer access.", "0, 1"),
    "change_current_allocator": Name("CA113", "allocator", "function", "replaces the CUDA caching allocator with a pluggable one", "Redesign: keep the allocator swap on the CUDA path only; on a TPU, memory is allocated by its runtime.", "allocator"),
    "check_error": Name("CA114", "runtime", "function", "raises `torch.cuda.CudaError` for a failed CUDA runtime call", "Remove it with the CUDA runtime call whose result it checks.", "status"),
    "clock_rate": Name("CA115", "telemetry", "function", "reads a GPU's clock rate", "Remove it on the TPU path (or guard the log line that prints it)."),
    "cudaStatus": Name("CA116", "runtime", "constant", "holds CUDA runtime status codes", "Remove it with the CUDA runtime calls whose results it checks."),
    "cudart": Name("CA117", "runtime", "function", "returns the CUDA runtime module (often to call `cudaProfilerStart` / `cudaProfilerStop` for Nsight)", "Remove it; for profiling use `torch.profiler` (TorchTPU registers a kineto backend), whose ranges also work on the GPU."),
    "current_blas_handle": Name("CA118", "cuda-libraries", "function", "returns the cuBLAS handle of the current stream, for CUDA code that calls cuBLAS itself", "Redesign: replace the CUDA code that takes the handle with PyTorch ops (`torch.matmul` and friends), which run on every device."),
    "current_solver_handle": Name("CA119", "cuda-libraries", "function", "returns the cuSOLVER handle of the current stream, for CUDA code that calls cuSOLVER itself", "Redesign: replace the CUDA code that takes the handle with `torch.linalg` calls, which run on every device."),
    "default_generators": Name("CA120", "rng", "constant", "holds the per-GPU random generators"),
    "device_memory_used": Name("CA121", "memory-stats", "function", "reads a GPU's used memory from the driver (NVML)", "Remove it, or guard the log line: TorchTPU exposes no memory statistics of its own."),
    "device_of": Name("CA122", "device", "context", "makes the device of a tensor the current CUDA device", args="tensor"),
    "export_dot": Name("CA123", "graphs", "function", "returns a CUDA graph capture hook that writes the captured graph as Graphviz DOT", "Remove it with the CUDA graph capture it inspects.", '"graph.dot"', severity="minor"),
    "export_graph_data": Name("CA124", "graphs", "function", "returns a CUDA graph capture hook that exports the captured graph's data", "Remove it with the CUDA graph capture it inspects.", '"graph.json"', severity="minor"),
    "get_allocator_backend": Name("CA125", "memory-stats", "function", "names the CUDA allocator backend in use (native or cudaMallocAsync)", "Remove it: a TPU has no CUDA allocator backend to choose."),
    "get_gencode_flags": Name("CA126", "capability", "function", "lists the CUDA architectures this PyTorch was built for, as nvcc flags", "Remove it: there is no CUDA code to build for a TPU (its kernels are Pallas kernels, `torch.tpu.pallas.jax_op`)."),
    "get_per_process_memory_fraction": Name("CA127", "memory-stats", "function", "reads the cap set on this process's share of CUDA memory", "Remove it: the TPU runtime manages device memory."),
    "get_stream_from_external": Name("CA128", "streams", "function", "wraps a CUDA stream created outside PyTorch", "Remove it with the external CUDA code that owns the stream.", "ptr"),
    "get_sync_debug_mode": Name("CA129", "debugging", "function", "reads the CUDA sync debug mode (warn or fail on device syncs)", "Remove it on the TPU path."),
    "graph_annotations": Name("CA130", "graphs", "module", "annotates kernels captured in CUDA graphs for profiler traces", "Remove it with the CUDA graph capture it annotates.", child="mark_kernels", severity="minor"),
    "graphs": Name("CA131", "graphs", "module", "holds CUDA graph capture and replay", "Redesign: remove the capture and replay and compile the step instead, `torch.compile(model, backend=\"tpu\")`.", claimed_child="make_graphed_callables(model, (x,))"),
    "has_half": Name("CA132", "capability", "constant", "says whether this PyTorch's CUDA supports fp16", "Remove the check; on a TPU compute in bf16, which every TPU supports, and branch on the device type (`x.device.type == \"tpu\"`) where the dtype must differ."),
    "has_magma": Name("CA133", "capability", "constant", "says whether this PyTorch was built with MAGMA, a CUDA linear-algebra library", "Remove the check: `torch.linalg` picks its own implementation on every device."),
    "host_memory_stats": Name("CA134", "memory-stats", "function", "reports the CUDA pinned host memory allocator's statistics", "Remove it, or guard the log line: TorchTPU exposes no memory statistics of its own."),
    "host_memory_stats_as_nested_dict": Name("CA135", "memory-stats", "function", "reports the CUDA pinned host memory allocator's statistics as a nested dict", "Remove it, or guard the log line: TorchTPU exposes no memory statistics of its own."),
    "init": Name("CA136", "state", "function", "initialises PyTorch's CUDA state", "Remove it: TorchTPU is loaded by `import torch`."),
    "is_current_stream_capturing": Name("CA137", "graphs", "function", "says whether the current CUDA stream is capturing a CUDA graph", "Remove the check: nothing is captured on a TPU, so on the TPU path the answer is always no.", severity="minor"),
    "is_initialized": Name("CA138", "state", "function", "says whether PyTorch's CUDA state has been initialised"),
    "is_tf32_supported": Name("CA139", "capability", "function", "says whether the GPU has TF32 tensor cores", "Remove the check: a TPU has no TF32; set float32 matmul precision with `torch.set_float32_matmul_precision(...)`, which TorchTPU honours."),
    "list_gpu_processes": Name("CA140", "memory-stats", "function", "lists the processes using a GPU and their memory, from NVML", "Remove it, or guard the log line: TorchTPU exposes no memory statistics of its own."),
    "memory": Name("CA141", "memory-stats", "module", "holds the CUDA caching allocator's controls and statistics", "Remove what it is used for, or guard it: TorchTPU exposes no memory statistics of its own (`torch.accelerator.memory_allocated()` and friends are device-agnostic where the device implements them).", child="host_memory_stats", claimed_child="memory_allocated()"),
    "memory_usage": Name("CA142", "memory-stats", "function", "reads the percentage of time GPU memory was read or written, from NVML", "Remove it, or guard the log line: TorchTPU exposes no memory statistics of its own."),
    "nccl": Name("CA154", "runtime", "module", "is the Python binding of NCCL, NVIDIA's collective library (its version, and raw collectives that CA019 reports)", "Remove it on the TPU path: report the NCCL version only where CUDA is (`if torch.cuda.is_available():`), and run collectives through `torch.distributed`.", child="version", claimed_child="all_reduce([a, b])"),
    "power_draw": Name("CA143", "telemetry", "function", "reads a GPU's power draw", "Remove it on the TPU path (or guard the log line that prints it)."),
    "random": Name("CA144", "rng", "module", "holds the CUDA random generators' seeding and state functions", "Redesign: seed with `torch.manual_seed(seed)`, which seeds every device, and save state with `torch.get_rng_state()` / `torch.tpu.get_rng_state()`.", claimed_child="manual_seed(0)"),
    "reset_accumulated_host_memory_stats": Name("CA145", "memory-stats", "function", "resets the CUDA pinned host memory allocator's accumulated statistics", "Remove it: TorchTPU exposes no memory statistics of its own."),
    "reset_peak_host_memory_stats": Name("CA146", "memory-stats", "function", "resets the CUDA pinned host memory allocator's peak statistics", "Remove it: TorchTPU exposes no memory statistics of its own."),
    "set_sync_debug_mode": Name("CA147", "debugging", "function", "makes device syncs warn or fail on CUDA", "Remove it on the TPU path.", '"warn"'),
    "sparse": Name("CA148", "legacy-types", "module", "holds the legacy sparse CUDA tensor types (`torch.cuda.sparse.FloatTensor`)", "Redesign: build sparse tensors with a dtype and a device, `torch.sparse_coo_tensor(indices, values, size, device=device)`.", child="FloatTensor"),
    "streams": Name("CA149", "streams", "module", "holds CUDA streams and events", "Redesign: use `torch.Stream` / `torch.Event` (device-agnostic) or `torch.tpu.Stream` / `torch.tpu.Event` on the TPU path.", claimed_child="Stream()"),
    "temperature": Name("CA150", "telemetry", "function", "reads a GPU's temperature", "Remove it on the TPU path (or guard the log line that prints it)."),
    "tunable": Name("CA151", "tuning", "module", "controls TunableOp, which benchmarks GEMM kernels on CUDA and ROCm", "Remove it.", child="enable"),
    "use_mem_pool": Name("CA152", "allocator", "context", "routes allocations in a block to a `torch.cuda.MemPool`", "Redesign: allocate normally on the TPU path and keep the pool behind a CUDA-only branch.", "pool"),
    "utilization": Name("CA153", "telemetry", "function", "reads a GPU's utilisation", "Remove it on the TPU path (or guard the log line that prints it)."),
}

UNLISTED = Name(
    UNLISTED_ID, "unlisted", "module",
    "is not in torch 2.14.1's public `torch.cuda` API (`torch.cuda.__all__`): a private helper such as `torch.cuda._lazy_init()` or `torch.cuda._sleep()`, or a name from another torch version",
    "Remove it, or replace it with the public API that does the same: device-agnostic calls such as `torch.accelerator.synchronize()`, or `torch.tpu` on the TPU path.",
    child="_sleep", claimed_child="synchronize()",
)
"""The catch-all: a residual reference on `torch.cuda` itself, which every rule on a
`torch.cuda` name claims, so it sees only what no rule knows (and not `torch.cuda` alone,
which CA022 judges)."""


# -- inputs ------------------------------------------------------------------------------


@dataclass
class Inputs:
    path: Path
    surface: dict[str, Any]
    digest: str

    @property
    def names(self) -> list[str]:
        return list(self.surface["torch_cuda_all"])

    def has(self, name: str, module: str) -> bool:
        return bool(self.surface["torch_cuda_map"][name][module])


def load_inputs(path: Path) -> Inputs:
    try:
        surface = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GenerationError(f"cannot read {shown_path(path)}: {exc}") from None
    for key in ("torch_cuda_all", "torch_cuda_map", "torch_tpu", "torch", "public_modules", "torch_accelerator_all"):
        if key not in surface:
            raise GenerationError(f"{shown_path(path)} has no {key!r}")
    names, mapping = surface["torch_cuda_all"], surface["torch_cuda_map"]
    if sorted(names) != sorted(mapping):
        raise GenerationError("torch_cuda_all and torch_cuda_map name different sets")
    tpu, accelerator = set(surface["public_modules"]["torch.tpu"]), set(surface["torch_accelerator_all"])
    for name in names:
        # the map and the module tables must agree, or the fix would name an API that does not exist
        if mapping[name]["torch.tpu"] != (name in tpu) or mapping[name]["torch.accelerator"] != (name in accelerator):
            raise GenerationError(f"torch_cuda_map[{name!r}] disagrees with public_modules / torch_accelerator_all")
    return Inputs(path, surface, sha256(path))


@dataclass
class HandRules:
    rules: list[Rule]
    device: DeviceContext
    places: dict[str, Where]


def load_hand_rules() -> HandRules:
    """Every rule file in rules/ except the generated packs, which are data's output."""
    files = [p for p in sorted(HAND_RULES.glob("*.yaml")) if not p.name.endswith(GENERATED_SUFFIX)]
    try:
        ruleset = load_ruleset(files, builtin=False)
    except RuleFileError as exc:
        raise GenerationError(f"hand-written rules do not load: {exc}") from None
    places: dict[str, Where] = {}
    for path in files:
        places.update(parse_rule_file(path.read_text(encoding="utf-8"), f"rules/{path.name}")[1].places or {})
    return HandRules(list(ruleset.rules), ruleset.device, places)


def call_snippet(name: str) -> tuple[str, int, int]:
    """`torch.cuda.<name>(x)`, and where a finding for it starts (line, column)."""
    return f"import torch\ntorch.cuda.{name}(x)\n", 2, 1


def reference_snippet(name: str) -> tuple[str, int, int]:
    """`torch.cuda.<name>` used as a value, and where a finding for it starts."""
    return f"import torch\nvalue = torch.cuda.{name}\n", 2, 9


def flagging(context: Any, snippet: tuple[str, int, int]) -> list[str]:
    """Ids of the rules with a finding where the snippet's use starts."""
    code, line, column = snippet
    result = analyze_text("coverage.py", ("python",), code, context)
    if result.error is not None:
        raise GenerationError(f"coverage snippet does not analyze: {result.error.message}")
    return sorted({m.rule_id for m in result.matches if (m.span.line, m.span.column) == (line, column)})


def hand_coverage(inputs: Inputs, hand: HandRules) -> dict[str, list[str]]:
    """Name -> the hand rules that flag it both as a call and as a reference; a name
    flagged one way only is an error (two rules would share it)."""
    context = build_context(Ruleset(rules=tuple(resolve_claims(hand.rules)), device=hand.device))
    covered: dict[str, list[str]] = {}
    for name in inputs.names:
        calls, references = flagging(context, call_snippet(name)), flagging(context, reference_snippet(name))
        if calls and references:
            covered[name] = sorted(set(calls) | set(references))
        elif calls or references:
            how, ids = ("as a call", calls) if calls else ("as a reference", references)
            raise GenerationError(
                f"torch.cuda.{name} is flagged by {', '.join(ids)} {how} only: give that rule the other matcher "
                "(call and reference), so that one rule owns the name"
            )
    return covered


# -- building rules ----------------------------------------------------------------------


def kebab(name: str) -> str:
    """`MemPool` -> `mem-pool`, `CUDAPluggableAllocator` -> `cuda-pluggable-allocator`."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name)
    return re.sub(r"[-_]+", "-", spaced).lower().strip("-")


def shown(name: str, kind: str, args: str = "") -> str:
    """How a name is written in prose: a call for functions, a bare name otherwise."""
    return f"{name}({args})" if kind == "function" else name


def fix_kind(inputs: Inputs, name: str) -> str:
    tpu, accelerator = inputs.has(name, "torch.tpu"), inputs.has(name, "torch.accelerator")
    return "both" if tpu and accelerator else "tpu" if tpu else "accelerator" if accelerator else "none"


def fix_text(inputs: Inputs, name: str, entry: Name) -> str:
    """The fix the map allows: the TorchTPU name (and a way to keep the GPU path), the
    device-agnostic `torch.accelerator` call, or, where TorchTPU has neither, the table's
    choice between removing the call and redesigning around it."""
    kind = fix_kind(inputs, name)
    use = shown(name, entry.kind)
    if kind == "both":
        return (
            f"Device-agnostic, keeping the GPU path: `torch.accelerator.{use}`; "
            f"or, on the TPU path alone, TorchTPU's `torch.tpu.{use}`."
        )
    if kind == "tpu":
        return (
            f"On the TPU path, TorchTPU has the same name: `torch.tpu.{use}`. To keep the GPU path too, "
            f"take it from the device's module: `torch.get_device_module(device).{use}`."
        )
    if kind == "accelerator":
        return f"Device-agnostic, keeping the GPU path: `torch.accelerator.{use}`; TorchTPU has no `torch.tpu.{name}` of its own."
    if not entry.remedy.startswith(("Remove", "Redesign")):
        raise GenerationError(f"torch.cuda.{name}: TorchTPU has no equivalent, so the remedy must say `Remove ...` or `Redesign: ...`")
    return f"TorchTPU has no equivalent of `torch.cuda.{name}`. {entry.remedy}"


def message_text(name: str, entry: Name, family: Family) -> str:
    subject = "`torch.cuda.<name>`" if entry.id == UNLISTED_ID else f"`torch.cuda.{shown(name, entry.kind)}`"
    return f"{subject} {entry.does}. {family.consequence}"


def matchers(name: str, entry: Name) -> Any:
    qualified = f"torch.cuda.{name}" if name else "torch.cuda"
    if entry.kind == "module":
        # the module and what below it no other rule claims (a call of it is a reference too)
        return {"reference": qualified, "residual": True}
    if entry.kind in ("constant", "exception"):
        return {"reference": qualified}
    # the call spans `(...)` (its fingerprint); the reference finds it passed on or patched
    return [{"call": qualified}, {"reference": qualified}]


def build_rule(inputs: Inputs, name: str, entry: Name) -> dict[str, Any]:
    family = FAMILIES[entry.family]
    severity = entry.severity or family.severity
    fix = {"tpu": fix_text(inputs, name, entry) if entry.id != UNLISTED_ID else entry.remedy, "xla": family.fix_xla}
    return {
        "id": entry.id,
        "name": "torch-cuda-unlisted" if entry.id == UNLISTED_ID else f"torch-cuda-{kebab(name)}",
        "category": family.category,
        "severity": severity,
        "confidence": "medium" if entry.id == UNLISTED_ID else "high",
        "affects": Flow(["training", "inference"]),
        "effort": FlowMap(low=number(family.effort[0]), high=number(family.effort[1])),
        "message": Folded(message_text(name, entry, family)),
        "fix": fix,
        "docs": list(family.docs),
        "match": matchers(name, entry),
        "examples": examples(inputs, name, entry),
    }


# -- examples, correct by construction -----------------------------------------------------


def examples(inputs: Inputs, name: str, entry: Name) -> dict[str, list[Literal]]:
    qualified = f"torch.cuda.{name}" if name else "torch.cuda"
    flag: list[str] = []
    passing: list[str] = []
    if entry.kind == "function":
        flag.append(f"import torch\n\nresult = {qualified}({entry.args})\n")
        flag.append(f"from torch.cuda import {name}\n\nresult = {name}({entry.args})\n")
        flag.append(f"import torch\n\nhooks = [{qualified}]\n")
        passing.append(f"def {name}(*args):\n    return args\n\n\nresult = {name}({entry.args})\n")
    elif entry.kind == "class":
        flag.append(f"import torch\n\nobj = {qualified}({entry.args})\n")
        flag.append(f"import torch\n\nif isinstance(obj, {qualified}):\n    step()\n")
        # a type annotation names the class and runs nothing: not a use
        passing.append(f"import torch\n\n\ndef build() -> {qualified}:\n    return make()\n")
        passing.append(f"class {name}:\n    def __init__(self, *args):\n        self.args = args\n\n\nobj = {name}({entry.args})\n")
    elif entry.kind == "context":
        flag.append(f"import torch\n\nwith {qualified}({entry.args}):\n    step()\n")
        flag.append(f"import torch\n\nscope = {qualified}\n")
        passing.append("import contextlib\n\nwith contextlib.nullcontext():\n    step()\n")
    elif entry.kind == "constant":
        flag.append(f"import torch\n\nvalue = {qualified}\n")
        flag.append(f"import torch\n\nif {qualified}:\n    step()\n")
        passing.append(f"{name} = True\nprint({name})\n")
    elif entry.kind == "exception":
        flag.append(f"import torch\n\ntry:\n    step()\nexcept {qualified}:\n    recover()\n")
        passing.append("try:\n    step()\nexcept RuntimeError:\n    recover()\n")
    else:  # module
        if name:
            flag.append(f"import torch\n\nmodule = {qualified}\n")
        if entry.child:
            flag.append(f"import torch\n\nvalue = {qualified}.{entry.child}\n")
        if entry.claimed_child:  # another rule judges this one
            passing.append(f"import torch\n\nresult = {qualified}.{entry.claimed_child}\n")
        if not name:
            passing.append("import torch\n\nmodule = torch.cuda\n")
    kind = fix_kind(inputs, name) if name else "none"
    if kind in ("tpu", "both"):
        use = f"torch.tpu.{name}" + ("()" if entry.kind == "function" else "")
        passing.append(f"import torch\n\nresult = {use}\n")
    if kind in ("accelerator", "both"):
        passing.append(f"import torch\n\nresult = torch.accelerator.{name}()\n")
    passing.append(f"# {qualified}{'.' + entry.child if not name and entry.child else ''} was removed for the TPU port\nresult = None\n")
    return {"flag": [Literal(code) for code in dict.fromkeys(flag)], "pass": [Literal(code) for code in dict.fromkeys(passing)]}


# -- the pack ----------------------------------------------------------------------------


@dataclass
class Pack:
    rules: list[dict[str, Any]] = field(default_factory=list)
    covered: dict[str, list[str]] = field(default_factory=dict)


def build_pack(inputs: Inputs, hand: HandRules) -> Pack:
    covered = hand_coverage(inputs, hand)
    missing = [name for name in inputs.names if name not in covered and name not in NAMES]
    if missing:
        raise GenerationError(
            f"no hand rule and no NAMES entry for {', '.join('torch.cuda.' + n for n in missing)}: "
            "say what each does, its family, and whether to remove or redesign it"
        )
    stale = [name for name in NAMES if name not in inputs.names or name in covered]
    if stale:
        raise GenerationError(f"NAMES entries no longer needed (not in the data, or covered by a hand rule): {', '.join(stale)}")
    ids = [entry.id for entry in NAMES.values()] + [UNLISTED_ID]
    if len(set(ids)) != len(ids):
        raise GenerationError("two NAMES entries share an id")
    taken = {rule.id for rule in hand.rules} | {rule.name for rule in hand.rules}
    pack = Pack(covered={name: covered[name] for name in inputs.names if name in covered})
    for name in inputs.names:
        if name in NAMES:
            pack.rules.append(build_rule(inputs, name, NAMES[name]))
    pack.rules.append(build_rule(inputs, "", UNLISTED))
    pack.rules.sort(key=lambda rule: rule["id"])
    for rule in pack.rules:
        for key in ("id", "name"):
            if rule[key] in taken:
                raise GenerationError(f"generated {key} {rule[key]!r} is taken by a hand-written rule")
        if rule["severity"] not in ("blocker", "major", "minor", "info"):
            raise GenerationError(f"{rule['id']}: unknown severity {rule['severity']!r}")
    return pack


def render(pack: Pack, inputs: Inputs) -> str:
    surface = inputs.surface
    kinds: dict[str, list[str]] = {"both": [], "tpu": [], "accelerator": [], "none": []}
    for name in inputs.names:
        kinds[fix_kind(inputs, name)].append(name)
    document: dict[str, Any] = {
        "x-generated-from": {
            "command": COMMAND,
            "torch_tpu": {
                "version": surface["torch_tpu"]["version"],
                "requires_torch": surface["torch_tpu"]["requires_torch"],
                "wheel_sha256": surface["torch_tpu"]["wheel_sha256"],
            },
            "torch": {"version": surface["torch"]["version"], "wheel_sha256": surface["torch"]["wheel_sha256"]},
            "torch_cuda_all": len(inputs.names),
            "files": {shown_path(inputs.path): inputs.digest},
        },
        "x-fix-kinds": {
            "torch.tpu and torch.accelerator": len(kinds["both"]),
            "torch.tpu only": len(kinds["tpu"]),
            "torch.accelerator only": len(kinds["accelerator"]),
            "neither": len(kinds["none"]),
        },
        "x-covered-by-hand": {name: Flow(ids) for name, ids in pack.covered.items()},
        "rules": pack.rules,
    }
    header = (
        "# GENERATED by scripts/generate_cuda_rules.py from ../shared/data/torchtpu/api_surface.json\n"
        "# and the hand-written rules: do not edit by hand. Regenerate with\n"
        f"#     {COMMAND}\n"
        f"# and check with `{COMMAND} --check` (tests/test_cuda_pack.py does).\n"
        "# One rule per public torch.cuda name (torch.cuda.__all__) that no hand-written rule flags\n"
        "# as a call and as a reference (those are listed under x-covered-by-hand), matched both\n"
        "# ways; the fix follows TorchTPU's surface: the torch.tpu name, the torch.accelerator call,\n"
        "# or, where TorchTPU has neither, whether to remove the call or redesign around it.\n"
        f"# {UNLISTED_ID} flags any other torch.cuda name that no rule knows (private or unlisted).\n"
    )
    return header + dump(document)


def verify(text: str, hand: HandRules, inputs: Inputs) -> int:
    """The pack loads; every example does what it says under tpucheck's analyzer, each rule
    run alone with what the others claim resolved; and every public name is flagged as a
    call and as a reference by exactly one rule, hand-written or generated."""
    generated, _, problems = parse_rule_file(text, "rules/" + DEFAULT_OUT.name)
    generated, place_problems = resolve_places(generated, hand.places)
    if problems or place_problems:
        raise GenerationError(f"generated pack does not load: {(problems + place_problems)[0]}")
    everything = resolve_claims(hand.rules + generated)
    ours = {rule.id for rule in generated}
    for rule in everything:
        if rule.id not in ours:
            continue
        context = build_context(Ruleset(rules=(rule,), device=hand.device))
        for expect, cases in (("flag", rule.flag_examples), ("pass", rule.pass_examples)):
            for example in cases:
                result = analyze_text("example.py", ("python",), example.code, context)
                found = result.error is None and any(m.rule_id == rule.id for m in result.matches)
                if result.error is not None or found != (expect == "flag"):
                    error = f" ({result.error.message})" if result.error else ""
                    raise GenerationError(f"{rule.id} ({rule.name}): {expect} example wrong{error}:\n{example.code}")
    context = build_context(Ruleset(rules=tuple(everything), device=hand.device))
    by_id = {rule.id: rule for rule in everything}
    for name in inputs.names:
        for snippet, how in ((call_snippet(name), "call"), (reference_snippet(name), "reference")):
            ids = flagging(context, snippet)
            # a rule that supersedes another says it all (CA021 over PR001 on `HalfTensor`)
            ids = [i for i in ids if not any(i in by_id[other].supersedes for other in ids)]
            if len(ids) != 1:
                raise GenerationError(f"torch.cuda.{name} as a {how} is flagged by {ids or 'no rule'}: want exactly one")
    return len(generated)


def generate(data: Path = DEFAULT_DATA, out: Path = DEFAULT_OUT) -> str:
    """The pack's text for this data: deterministic, verified, not yet written."""
    inputs = load_inputs(data)
    hand = load_hand_rules()
    text = render(build_pack(inputs, hand), inputs)
    verify(text, hand, inputs)
    return text


def diff_summary(old: str | None, new: str, shown: str) -> str | None:
    """None when equal; else one line saying how the committed file differs."""
    return _diff_summary(old, new, shown, COMMAND)


def check(data: Path = DEFAULT_DATA, out: Path = DEFAULT_OUT) -> str | None:
    """None when the committed pack is what the script produces; else a one-line summary."""
    new = generate(data, out)
    old = out.read_text(encoding="utf-8") if out.is_file() else None
    return diff_summary(old, new, shown_path(out))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="TorchTPU's API surface (default: ../shared/data/torchtpu/api_surface.json)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the generated pack (default: rules/cuda-api-generated.yaml)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed pack differs from what would be generated")
    args = parser.parse_args(argv)
    try:
        if args.check:
            problem = check(args.data, args.out)
            if problem:
                print(problem)
                return 1
            print(f"{shown_path(args.out)} is up to date")
            return 0
        text = generate(args.data, args.out)
    except GenerationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.write_text(text, encoding="utf-8")
    document = yaml.safe_load(text)
    print(f"wrote {shown_path(args.out)}: {len(document['rules'])} rules, {len(document['x-covered-by-hand'])} names covered by hand rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
