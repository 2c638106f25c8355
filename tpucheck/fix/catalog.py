"""The codemods `tpucheck fix` has, by name, with what each does: plain data.

A rule names its codemod in YAML (`codemod: {name: ..., safe: ...}`); the loader checks
the name against this table and `tpucheck rules --long` / `explain` print the line, so
neither needs the codemods themselves (nor libcst) to describe them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CODEMODS", "CodemodInfo"]


@dataclass(frozen=True, slots=True)
class CodemodInfo:
    name: str
    does: str
    """What the safe fix does, one sentence."""
    unsafe: str | None = None
    """What `--unsafe-fixes` adds, when the codemod goes further there."""


CODEMODS: dict[str, CodemodInfo] = {
    info.name: info
    for info in (
        CodemodInfo(
            "torch-accelerator",
            "`torch.cuda.X(...)` becomes `torch.accelerator.Y(...)` where torch.accelerator has the same function (synchronize, is_available, device_count, current_device, set_device, empty_cache, the memory counters), unless the project pins a torch older than the one that has it.",
        ),
        CodemodInfo(
            "manual-seed",
            "`torch.cuda.manual_seed(s)` / `manual_seed_all(s)` become `torch.manual_seed(s)`, which seeds every device; where `torch.manual_seed` is already called with the same seed, the CUDA call is dropped.",
        ),
        CodemodInfo(
            "current-accelerator",
            "A hard-coded \"cuda\" device becomes the current accelerator's type (still \"cuda\" on a GPU, and where there is no accelerator); `.cuda()` becomes `.to(torch.accelerator.current_accelerator())`.",
        ),
        CodemodInfo(
            "autocast",
            "`torch.cuda.amp.autocast(...)` and `torch.autocast(\"cuda\", ...)` become `torch.autocast(<the current accelerator's type>, ...)`; fp16 stays fp16.",
            unsafe="fp16 autocast becomes bf16.",
        ),
        CodemodInfo(
            "grad-scaler",
            "`torch.cuda.amp.GradScaler(...)` becomes `torch.amp.GradScaler(\"cuda\", ...)` (the same object, without the deprecated name).",
            unsafe="Where every autocast of the file is bf16 (after the autocast fix), the scaler goes: `scaler.scale(loss)` becomes `loss`, `scaler.step(opt)` becomes `opt.step()`, `scaler.update()` and the scaler itself are removed.",
        ),
        CodemodInfo(
            "default-backend",
            "`init_process_group(\"nccl\", ...)` / `new_group(..., backend=\"nccl\")` leave the backend out, so PyTorch takes each device's default: NCCL for CUDA tensors as before, the TPU's own backend on a TPU.",
        ),
        CodemodInfo(
            "hf-device-map",
            "`device_map=\"cuda\"` becomes the current accelerator's type (\"cuda\" on a GPU and where there is none, \"tpu\" on a TPU); not \"auto\", which is a CUDA dispatch that loads the model on the CPU of a TPU host.",
        ),
        CodemodInfo(
            "hf-sdpa",
            "`attn_implementation=\"flash_attention_2\"` becomes `\"sdpa\"` (PyTorch's own attention, on every device; numerics and speed differ slightly from flash-attn).",
        ),
        CodemodInfo(
            "hf-bf16",
            "fp16 in Hugging Face settings becomes bf16: `fp16=True` -> `bf16=True`, `torch_dtype=torch.float16` -> `torch.bfloat16`, `mixed_precision=\"fp16\"` -> `\"bf16\"` (numerics change).",
        ),
    )
}
