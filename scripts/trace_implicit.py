#!/usr/bin/env python3
"""Trace what composite-implicit ATen functions decompose into: `rules/implicit-ops.json`.

    python scripts/trace_implicit.py [--check]      (needs CPU torch: pip install torch==2.13.0)

Why: a `CompositeImplicitAutograd` function (`torch.cross`, `torch.linalg.eigh`,
`torch.det`, `torch.nanmean`) has no kernel of its own on any backend; it is rewritten
into other ops above the backend, and a backend runs it exactly when it runs those. The
dispatcher tables in `../shared/data/torchtpu/coverage/` say only "composite implicit", so
the op table read such functions as running everywhere, and `torch.cross` (which calls
`linalg_cross`, whose out= kernel TorchTPU lacks) was never reported. What a decomposition
calls is read here from PyTorch itself: each probe below runs on small CPU tensors under a
`TorchDispatchMode`, which sees the ops after the implicit decomposition, as a backend
does. The result is committed and read by `scripts/generate_op_table.py`; nothing at scan
time imports torch.

A decomposition can depend on its arguments (`torch.norm` with `p="nuc"` takes the SVD);
each probe calls the function the way code commonly does, and the table records that
call's ops only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "rules" / "implicit-ops.json"
COMMAND = "python scripts/trace_implicit.py"

# aten function -> a typical call of its public form, on small CPU tensors made by `_inputs`.
PROBES: dict[str, str] = {
    "aten::cross": "torch.cross(v3, w3, dim=-1)",
    "aten::matrix_exp": "torch.matrix_exp(a)",
    "aten::linalg_eigh": "torch.linalg.eigh(spd)",
    "aten::linalg_eigvalsh": "torch.linalg.eigvalsh(spd)",
    "aten::linalg_eigvals": "torch.linalg.eigvals(a)",
    "aten::det": "torch.det(a)",
    "aten::linalg_det": "torch.linalg.det(a)",
    "aten::logdet": "torch.logdet(spd)",
    "aten::slogdet": "torch.slogdet(a)",
    "aten::linalg_slogdet": "torch.linalg.slogdet(a)",
    "aten::orgqr": "torch.orgqr(a, tau)",
    "aten::linalg_cholesky": "torch.linalg.cholesky(spd)",
    "aten::linalg_inv": "torch.linalg.inv(a)",
    "aten::inverse": "torch.inverse(a)",
    "aten::linalg_solve": "torch.linalg.solve(a, b)",
    "aten::linalg_pinv": "torch.linalg.pinv(a)",
    "aten::pinverse": "torch.pinverse(a)",
    "aten::linalg_matrix_rank": "torch.linalg.matrix_rank(a)",
    "aten::linalg_cond": "torch.linalg.cond(a)",
    "aten::linalg_svd": "torch.linalg.svd(a)",
    "aten::svd": "torch.svd(a)",
    "aten::linalg_svdvals": "torch.linalg.svdvals(a)",
    "aten::linalg_norm": "torch.linalg.norm(a)",
    "aten::linalg_matrix_norm": "torch.linalg.matrix_norm(a)",
    "aten::norm": "torch.norm(a, dim=-1)",
    "aten::nuclear_norm": "torch.nuclear_norm(a)",
    "aten::lu_solve": "torch.lu_solve(b, *torch.linalg.lu_factor(a))",
    "aten::linalg_lu_factor": "torch.linalg.lu_factor(a)",
    "aten::nanmean": "torch.nanmean(x)",
    "aten::nanquantile": "torch.nanquantile(x, 0.5)",
    "aten::quantile": "torch.quantile(x, 0.5)",
    "aten::cdist": "torch.cdist(a, b)",
    "aten::cov": "torch.cov(a)",
    "aten::corrcoef": "torch.corrcoef(a)",
    "aten::trapezoid": "torch.trapezoid(x)",
    "aten::diff": "torch.diff(x)",
    "aten::kron": "torch.kron(a, b)",
    "aten::cartesian_prod": "torch.cartesian_prod(x, x)",
    "aten::combinations": "torch.combinations(x)",
    "aten::block_diag": "torch.block_diag(a, b)",
    "aten::vander": "torch.vander(x)",
    "aten::take_along_dim": "torch.take_along_dim(a, idx, dim=1)",
    "aten::einsum": "torch.einsum('ij,jk->ik', a, b)",
    "aten::tensordot": "torch.tensordot(a, b, dims=1)",
    "aten::stft": "torch.stft(signal, 16, return_complex=True, window=window)",
    "aten::istft": "torch.istft(spectrum, 16, window=window)",
    "aten::cosine_similarity": "torch.nn.functional.cosine_similarity(a, b)",
    "aten::pairwise_distance": "torch.nn.functional.pairwise_distance(a, b)",
    "aten::kl_div": "torch.nn.functional.kl_div(a, b, reduction='batchmean')",
    "aten::triplet_margin_loss": "torch.nn.functional.triplet_margin_loss(a, b, a)",
    "aten::margin_ranking_loss": "torch.nn.functional.margin_ranking_loss(x, x, x.sign())",
    "aten::hinge_embedding_loss": "torch.nn.functional.hinge_embedding_loss(a, a.sign())",
    "aten::cosine_embedding_loss": "torch.nn.functional.cosine_embedding_loss(a, b, x[:4].sign())",
    "aten::poisson_nll_loss": "torch.nn.functional.poisson_nll_loss(a, b.abs())",
    "aten::instance_norm": "torch.nn.functional.instance_norm(img)",
    "aten::group_norm": "torch.nn.functional.group_norm(img, 1)",
    "aten::layer_norm": "torch.nn.functional.layer_norm(a, (4,))",
    "aten::embedding_bag": "torch.nn.functional.embedding_bag(idx.flatten(), a, offsets)",
    "aten::pixel_shuffle": "torch.nn.functional.pixel_shuffle(img4, 2)",
    "aten::logsumexp": "torch.logsumexp(a, dim=-1)",
    "aten::std_mean": "torch.std_mean(a, dim=-1)",
    "aten::var_mean": "torch.var_mean(a, dim=-1)",
    "aten::trace": "torch.trace(a)",
    "aten::chain_matmul": "torch.linalg.multi_dot([a, b, a])",
    "aten::linalg_multi_dot": "torch.linalg.multi_dot([a, b, a])",
    "aten::linalg_matrix_power": "torch.linalg.matrix_power(a, 3)",
    "aten::matrix_power": "torch.matrix_power(a, 3)",
    "aten::linalg_vecdot": "torch.linalg.vecdot(a, b)",
    "aten::ger": "torch.ger(x, x)",
    "aten::outer": "torch.outer(x, x)",
    "aten::rot90": "torch.rot90(a)",
    "aten::gradient": "torch.gradient(x)",
    "aten::histogramdd": "torch.histogramdd(a[:, :2], bins=3)",
    "aten::nanmedian": "torch.nanmedian(x)",
    "aten::cummax": "torch.cummax(x, 0)",
    "aten::logcumsumexp": "torch.logcumsumexp(x, 0)",
    "aten::special_logsumexp": "torch.special.logsumexp(a, -1)",
    "aten::special_xlogy": "torch.special.xlogy(x, x.abs())",
    "aten::bilinear": "torch.nn.functional.bilinear(a, a, weight3)",
}


def _inputs(torch: Any) -> dict[str, Any]:
    """Small float64 CPU tensors (linalg on the CPU wants them well conditioned)."""
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(4, 4, generator=gen, dtype=torch.float64)
    b = torch.randn(4, 4, generator=gen, dtype=torch.float64)
    spd = a @ a.T + 4 * torch.eye(4, dtype=torch.float64)
    _factors, tau = torch.geqrf(a)
    signal, window = torch.randn(64, generator=gen), torch.hann_window(16)
    return {
        "torch": torch, "a": a + 4 * torch.eye(4, dtype=torch.float64), "b": b, "spd": spd, "tau": tau,
        "x": torch.randn(8, generator=gen, dtype=torch.float64),
        "v3": torch.randn(5, 3, generator=gen), "w3": torch.randn(5, 3, generator=gen),
        "idx": torch.tensor([[0, 1], [1, 0], [2, 3], [3, 2]]),
        "signal": signal, "window": window, "spectrum": torch.stft(signal, 16, return_complex=True, window=window),
        "offsets": torch.tensor([0, 2]), "weight3": torch.randn(2, 4, 4, generator=gen, dtype=torch.float64),
        "img": torch.randn(2, 4, 5, 5, generator=gen), "img4": torch.randn(1, 8, 3, 3, generator=gen),
    }


def trace() -> dict[str, list[str]]:
    """aten function -> the ops (`aten::name` or `aten::name.overload`) its probe dispatches,
    in first-seen order."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    seen: list[str] = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            name = _op_name(str(func))
            if name not in seen:
                seen.append(name)
            return func(*args, **(kwargs or {}))

    out: dict[str, list[str]] = {}
    for op, code in PROBES.items():
        env = _inputs(torch)
        seen.clear()
        with Record():
            eval(code, {}, env)  # the probes are this file's own constants, never user input
        out[op] = list(seen)
    return out


def _op_name(text: str) -> str:
    """`aten.linalg_cross.default` -> `aten::linalg_cross`; `aten.sum.dim_IntList` -> `aten::sum.dim_IntList`."""
    namespace, _, rest = text.partition(".")
    base, _, overload = rest.partition(".")
    return f"{namespace}::{base}" + ("" if overload in ("", "default") else f".{overload}")


def render(table: dict[str, list[str]], version: str) -> str:
    head = {"generated_by": COMMAND, "torch": version, "why": __doc__.split("\n\n")[1].replace("\n", " ")}
    lines = ["{"] + [f"{json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()] + ['"decompositions": {']
    items = sorted(table.items())
    for index, (op, parts) in enumerate(items):
        lines.append(f"{json.dumps(op)}: {json.dumps(parts)}" + ("," if index < len(items) - 1 else ""))
    return "\n".join([*lines, "}", "}"]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed table differs from a fresh trace")
    args = parser.parse_args(argv)
    import torch

    text = render(trace(), torch.__version__.split("+", 1)[0])
    if args.check:
        return 0 if OUT.exists() and OUT.read_text(encoding="utf-8") == text else 1
    OUT.write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {OUT.relative_to(REPO).as_posix()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
