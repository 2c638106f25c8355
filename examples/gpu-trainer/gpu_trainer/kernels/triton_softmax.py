"""Row-wise softmax in Triton, used for the token-score head at serving time."""

import torch
import triton
import triton.language as tl


@triton.jit
def _row_softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols,
                        BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


def triton_softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of a 2-D CUDA tensor."""
    assert x.ndim == 2 and x.is_cuda
    rows, cols = x.shape
    out = torch.empty_like(x)
    block = triton.next_power_of_2(cols)
    num_warps = 8 if block >= 2048 else 4
    _row_softmax_kernel[(rows,)](
        out, x, x.stride(0), out.stride(0), cols, BLOCK_SIZE=block, num_warps=num_warps
    )
    return out
