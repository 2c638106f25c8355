"""Python side of the fused ops.

Installed builds get `gpu_trainer._fused_ops` from setup.py; in a source checkout we JIT-build
the same sources on first import so nobody has to remember `pip install -e .`.
"""

import os

import torch
import torch.nn.functional as F
from torch.utils.cpp_extension import load, load_inline

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    from gpu_trainer import _fused_ops  # noqa: F401  (registers torch.ops.gpu_trainer.*)
except ImportError:
    _fused_ops = load(
        name="gpu_trainer_fused_ops",
        sources=[
            os.path.join(_ROOT, "csrc", "fused_gelu.cu"),
            os.path.join(_ROOT, "csrc", "bindings.cpp"),
        ],
        extra_cuda_cflags=["-O3", "--use_fast_math"],
        verbose=False,
    )


_CLAMP_SOURCE = r"""
__global__ void clamp_inplace_kernel(float* x, float lo, float hi, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] = fminf(fmaxf(x[i], lo), hi);
}

torch::Tensor clamp_inplace(torch::Tensor x, double lo, double hi) {
  int64_t n = x.numel();
  clamp_inplace_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), lo, hi, n);
  return x;
}
"""

_clamp_ext = None


def clamp_logits_(x: torch.Tensor, lo: float = -30.0, hi: float = 30.0) -> torch.Tensor:
    """In-place logit clamp; the JIT build is only paid for the first time it's used."""
    global _clamp_ext
    if _clamp_ext is None:
        _clamp_ext = load_inline(
            name="gpu_trainer_clamp",
            cpp_sources="torch::Tensor clamp_inplace(torch::Tensor x, double lo, double hi);",
            cuda_sources=_CLAMP_SOURCE,
            functions=["clamp_inplace"],
        )
    return _clamp_ext.clamp_inplace(x, lo, hi)


class _FusedBiasGelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bias):
        ctx.save_for_backward(x, bias)
        return torch.ops.gpu_trainer.fused_gelu(x, bias)

    @staticmethod
    def backward(ctx, grad_out):
        x, bias = ctx.saved_tensors
        grad_in = torch.ops.gpu_trainer.fused_gelu_backward(grad_out.contiguous(), x, bias)
        return grad_in, grad_in.flatten(0, -2).sum(dim=0)


def fused_bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    if x.is_cuda and x.dtype == torch.float16:
        return _FusedBiasGelu.apply(x, bias)
    return F.gelu(x + bias, approximate="tanh")
