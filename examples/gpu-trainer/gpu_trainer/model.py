"""The ticket classifier: a small pre-norm transformer encoder with a pooled head."""

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from gpu_trainer.kernels.triton_softmax import triton_softmax
from gpu_trainer.ops import fused_bias_gelu

try:
    from flash_attn import flash_attn_func
except ImportError:  # CPU dev boxes and the CI runners don't have it
    flash_attn_func = None


@dataclass
class ClassifierConfig:
    vocab_size: int = 32000
    hidden: int = 512
    heads: int = 8
    layers: int = 6
    max_len: int = 512
    num_classes: int = 14
    dropout: float = 0.1


def rope_frequencies(head_dim: int, max_len: int, base: float = 10000.0) -> torch.Tensor:
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(max_len).float(), inv_freq)
    return torch.polar(torch.ones_like(angles), angles)  # complex64, (max_len, head_dim/2)


def apply_rope(x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    # x: (batch, seq, heads, head_dim)
    pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    rotated = pairs * freqs[: x.shape[1]].unsqueeze(0).unsqueeze(2)
    return torch.view_as_real(rotated).flatten(-2).type_as(x)


class Attention(nn.Module):
    def __init__(self, cfg: ClassifierConfig):
        super().__init__()
        self.heads = cfg.heads
        self.head_dim = cfg.hidden // cfg.heads
        self.qkv = nn.Linear(cfg.hidden, 3 * cfg.hidden)
        self.out = nn.Linear(cfg.hidden, cfg.hidden)
        self.dropout = cfg.dropout

    def forward(self, x, freqs, padding_mask=None):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, self.head_dim).unbind(2)
        q, k = apply_rope(q, freqs), apply_rope(k, freqs)
        p = self.dropout if self.training else 0.0

        if flash_attn_func is not None and padding_mask is None and x.dtype == torch.float16:
            out = flash_attn_func(q, k, v, dropout_p=p)
        else:
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))
            attn_mask = None if padding_mask is None else padding_mask[:, None, None, :]
            with torch.backends.cuda.sdp_kernel(
                enable_flash=True, enable_math=False, enable_mem_efficient=True
            ):
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=p)
            out = out.transpose(1, 2)
        return self.out(out.reshape(b, s, -1))


class FeedForward(nn.Module):
    def __init__(self, cfg: ClassifierConfig):
        super().__init__()
        self.up = nn.Linear(cfg.hidden, 4 * cfg.hidden, bias=False)
        self.up_bias = nn.Parameter(torch.zeros(4 * cfg.hidden))
        self.down = nn.Linear(4 * cfg.hidden, cfg.hidden)

    def forward(self, x):
        return self.down(fused_bias_gelu(self.up(x), self.up_bias))


class Block(nn.Module):
    def __init__(self, cfg: ClassifierConfig):
        super().__init__()
        self.norm1 = nn.LayerNorm(cfg.hidden)
        self.attn = Attention(cfg)
        self.norm2 = nn.LayerNorm(cfg.hidden)
        self.ffn = FeedForward(cfg)

    def forward(self, x, freqs, padding_mask=None):
        x = x + self.attn(self.norm1(x), freqs, padding_mask)
        return x + self.ffn(self.norm2(x))


class TicketClassifier(nn.Module):
    def __init__(self, cfg: ClassifierConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.hidden)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = nn.LayerNorm(cfg.hidden)
        self.head = nn.Linear(cfg.hidden, cfg.num_classes)
        self.register_buffer(
            "freqs", rope_frequencies(cfg.hidden // cfg.heads, cfg.max_len), persistent=False
        )

    def forward(self, input_ids, attention_mask=None, return_token_scores=False):
        # Trim the batch to its longest real sequence: saves a lot on short tickets.
        if attention_mask is not None:
            longest = int(attention_mask.sum(dim=1).max().item())
            input_ids, attention_mask = input_ids[:, :longest], attention_mask[:, :longest]

        x = self.embed(input_ids)
        padding_mask = None if attention_mask is None else attention_mask.bool()
        for block in self.blocks:
            x = block(x, self.freqs, padding_mask)
        x = self.norm(x)

        if attention_mask is None:
            pooled = x.mean(dim=1)
        else:
            weights = attention_mask.unsqueeze(-1).to(x.dtype)
            pooled = (x * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)
        logits = self.head(pooled)

        if not return_token_scores:
            return logits
        # Token attributions for the triage UI: only for real (non-padding) tokens.
        token_logits = self.head(x)
        real_tokens = token_logits[padding_mask]
        positions = torch.nonzero(padding_mask)
        scores = triton_softmax(real_tokens)
        return logits, scores, positions
