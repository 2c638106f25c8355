"""GPU housekeeping helpers.

Nothing in here should move tensors: callers decide whether to call `.cuda()` or stay on
CPU. The cuda helpers below just report on what the machine has.
"""

import argparse
import logging

import pynvml
import torch

log = logging.getLogger(__name__)


def describe_device() -> str:
    props = torch.cuda.get_device_properties(0)
    return f"{props.name}, {props.total_memory / 2**30:.0f} GiB, sm_{props.major}{props.minor}"


def pick_amp_dtype() -> torch.dtype:
    """bf16 on Ampere and newer, fp16 elsewhere (with a GradScaler)."""
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def log_gpu_memory() -> None:
    # NVML sees memory held by every process, not just PyTorch's caching allocator.
    pynvml.nvmlInit()
    try:
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            info = pynvml.nvmlDeviceGetMemoryInfo(handle)
            log.info("gpu%d: %.1f / %.1f GiB used", i, info.used / 2**30, info.total / 2**30)
    finally:
        pynvml.nvmlShutdown()


def release_cached_memory() -> None:
    """Called between the training and evaluation phases."""
    torch.cuda.empty_cache()  # tpucheck: ignore[CA007] -- measured: harmless on TPU


def resolve_device(args: argparse.Namespace) -> str:
    cuda = args.use_gpu and not args.force_cpu
    if cuda:
        log.info("using %s", describe_device())
        return "cuda"
    return "cpu"
