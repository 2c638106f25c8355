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
            "`torch.cuda.manual_seed(s)` / `manual_seed_all(s)` right after `torch.manual_seed(s)` in the same block is removed: torch.manual_seed already seeds every device.",
            unsafe="Elsewhere it becomes `torch.manual_seed(s)`, which reseeds the CPU generator too.",
        ),
        CodemodInfo(
            "current-accelerator",
            'A hard-coded "cuda" device becomes the current accelerator\'s type, still a string ("cuda" on a GPU and where there is no accelerator); `.cuda()` becomes `.to(torch.accelerator.current_accelerator())`.',
            unsafe="A `device` variable in scope is used instead where a device is passed (`x.to(device)`).",
        ),
        CodemodInfo(
            "autocast",
            '`torch.cuda.amp.autocast(...)`, `torch.autocast("cuda", ...)` and the CUDA `custom_fwd`/`custom_bwd` get the current accelerator\'s type as device type; fp16 stays fp16.',
            unsafe="fp16 autocast becomes bf16.",
        ),
        CodemodInfo(
            "grad-scaler",
            '`torch.cuda.amp.GradScaler(...)` becomes `torch.amp.GradScaler("cuda", ...)`, the same object without the deprecated name (the finding stays).',
            unsafe="Where the module has no fp16 left once its autocasts are bf16, the scaler goes: `scaler.scale(loss)` becomes `loss`, `scaler.step(opt)` becomes `opt.step()`, `scaler.update()`, `scaler.unscale_(opt)` and the scaler itself are removed.",
        ),
        CodemodInfo(
            "default-backend",
            '`init_process_group("nccl", ...)` / `new_group(..., backend="nccl")` leave the backend out, so PyTorch takes each device\'s default: NCCL for CUDA tensors as before, the TPU\'s own backend on a TPU.',
        ),
        CodemodInfo(
            "hf-device-map",
            '`device_map="cuda"` becomes the current accelerator\'s type ("cuda" on a GPU and where there is none, "tpu" on a TPU); not "auto", a CUDA dispatch that loads the model on the CPU of a TPU host.',
        ),
        CodemodInfo(
            "hf-sdpa",
            '`attn_implementation="flash_attention_2"` (or `use_flash_attention_2=True`) becomes `"sdpa"`: PyTorch\'s own attention, on every device; speed and the last bits of the numerics differ from flash-attn.',
        ),
        CodemodInfo(
            "hf-bf16",
            'fp16 in Hugging Face settings becomes bf16: `fp16=True` -> `bf16=True`, `torch_dtype=torch.float16` -> `torch.bfloat16`, `mixed_precision="fp16"` -> `"bf16"`; `tf32=True` goes. Numerics change.',
        ),
        CodemodInfo(
            "legacy-tensor",
            "A legacy CUDA tensor constructor becomes `torch.empty(sizes, dtype=..., device=<accelerator type>)` (int sizes) or `torch.tensor(data, ...)` (a list or tuple display); other arguments, type checks and aliases are left to a person.",
        ),
        CodemodInfo(
            "config-value",
            "A CUDA value in a config file (`device: cuda`, `backend: nccl`) becomes the value the rule names, edited in place: only the value's characters change.",
        ),
    )
}
