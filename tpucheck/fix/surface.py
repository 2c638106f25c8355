"""Which `torch.cuda` functions have a `torch.accelerator` counterpart, and since when.

Written by hand from `torch.accelerator.__all__` as TorchTPU's wheel ships it (torch
2.14; the project's shared data `torchtpu/api_surface.json`, which the installed package
cannot read) and PyTorch's release history; tests/test_fix_surface.py holds it equal to
that JSON, so a name the wheel does not have can never be offered.

The versions are the first torch release whose `torch.accelerator` has the name, rounded
up where the history is unclear: a fix is then refused for a project pinned to a torch
that might lack it, never offered to one that does.
"""

from __future__ import annotations

from tpucheck.fix.versions import Version

__all__ = ["ACCELERATOR_SINCE", "CPU_NOOP", "CUDA_TO_ACCELERATOR", "DEFAULT_BACKEND_SINCE", "GRAD_SCALER_SINCE", "SDPA_SINCE", "counterpart"]

ACCELERATOR_SINCE: dict[str, str] = {
    # torch 2.6 introduced the module
    "current_accelerator": "2.6",
    "current_device_idx": "2.6",
    "current_stream": "2.6",
    "device_count": "2.6",
    "is_available": "2.6",
    "set_device_idx": "2.6",
    "set_stream": "2.6",
    "synchronize": "2.6",
    # 2.7 renamed *_idx to *_index; 2.8 added the device_index context manager
    "current_device_index": "2.7",
    "set_device_index": "2.7",
    "device_index": "2.8",
    # the memory API
    "empty_cache": "2.9",
    "max_memory_allocated": "2.9",
    "max_memory_reserved": "2.9",
    "memory_allocated": "2.9",
    "memory_reserved": "2.9",
    "memory_stats": "2.9",
    "reset_accumulated_memory_stats": "2.9",
    "reset_peak_memory_stats": "2.9",
    "get_memory_info": "2.10",
    "get_device_capability": "2.10",
    "empty_host_cache": "2.11",
    "Graph": "2.11",
}
"""Every name of `torch.accelerator.__all__` (TorchTPU's torch 2.14) and the release that
first has it."""

CUDA_TO_ACCELERATOR: dict[str, str] = {
    "synchronize": "synchronize",
    "is_available": "is_available",
    "device_count": "device_count",
    "current_device": "current_device_index",
    "set_device": "set_device_index",
    "current_stream": "current_stream",
    "set_stream": "set_stream",
    "empty_cache": "empty_cache",
    "memory_allocated": "memory_allocated",
    "max_memory_allocated": "max_memory_allocated",
    "memory_reserved": "memory_reserved",
    "max_memory_reserved": "max_memory_reserved",
    "memory_stats": "memory_stats",
    "reset_peak_memory_stats": "reset_peak_memory_stats",
    "reset_accumulated_memory_stats": "reset_accumulated_memory_stats",
    "mem_get_info": "get_memory_info",
    "memory.empty_cache": "empty_cache",
    "memory.memory_allocated": "memory_allocated",
    "memory.max_memory_allocated": "max_memory_allocated",
    "memory.memory_reserved": "memory_reserved",
    "memory.max_memory_reserved": "max_memory_reserved",
    "memory.memory_stats": "memory_stats",
    "memory.reset_peak_memory_stats": "reset_peak_memory_stats",
    "memory.mem_get_info": "get_memory_info",
}
"""`torch.cuda.<key>` -> `torch.accelerator.<value>`: same arguments, same result on CUDA.
Left out on purpose: `memory_cached` and `max_memory_cached` (deprecated aliases with no
counterpart), `memory_summary`, `memory_snapshot`, `ipc_collect`, `get_device_properties`
(no counterpart), `device` (torch.accelerator.device_index takes only an index), and `get_device_capability` (on CUDA it returns a tuple, while
torch.accelerator's returns a dict)."""


CPU_NOOP: dict[str, str | None] = {
    "empty_cache": None,
    "memory_allocated": "0",
    "max_memory_allocated": "0",
    "memory_reserved": "0",
    "max_memory_reserved": "0",
    "memory_stats": "{}",
}
"""torch.accelerator names whose torch.cuda counterpart does nothing on a CPU-only torch
(and on a host with no GPU), while they raise there ("Cannot access accelerator device
when none is available", torch 2.13): the value the CUDA one returns there, or None for a
call made for its effect. Measured on torch 2.13's CPU build; synchronize, current_device,
set_device, mem_get_info and reset_peak_memory_stats raise in both forms."""

GRAD_SCALER_SINCE = "2.3"
"""`torch.amp.GradScaler(device)`: the device-generic scaler (torch 2.3 made
`torch.cuda.amp.GradScaler` a deprecated alias of it)."""

SDPA_SINCE = "2.1.1"
"""Hugging Face's `attn_implementation="sdpa"` asks for torch 2.1.1 or later."""

DEFAULT_BACKEND_SINCE = "2.6"
"""`init_process_group()` with no backend: before 2.6 it created a gloo group beside NCCL
for every process group (a second set of connections and threads)."""


def counterpart(cuda_name: str) -> tuple[str, Version] | None:
    """(torch.accelerator name, the torch it needs) for `torch.cuda.<cuda_name>`."""
    name = CUDA_TO_ACCELERATOR.get(cuda_name)
    if name is None or name not in ACCELERATOR_SINCE:
        return None
    return name, Version(ACCELERATOR_SINCE[name])
