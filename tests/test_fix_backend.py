"""init_process_group("nccl") -> each device's default backend (issue 15)."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from fixtools import fixed, notes


def test_the_nccl_backend_goes(tmp_path: Path) -> None:
    code = """\
        import torch.distributed as dist
        from torch import distributed

        dist.init_process_group("nccl", rank=rank, world_size=world)
        dist.init_process_group(backend="nccl", init_method="env://")
        dist.init_process_group(init_method="env://", backend="nccl")
        distributed.init_process_group(backend=distributed.Backend.NCCL)
        dist.init_process_group("nccl", "env://")
        dist.init_process_group(
            backend="nccl",
            init_method="env://",
        )
        dist.init_process_group(
            backend="nccl",  # the GPUs' library
            init_method="env://",
        )
        """
    assert fixed(tmp_path, code) == dedent("""\
        import torch.distributed as dist
        from torch import distributed

        dist.init_process_group(rank=rank, world_size=world)
        dist.init_process_group(init_method="env://")
        dist.init_process_group(init_method="env://")
        distributed.init_process_group()
        dist.init_process_group(None, "env://")
        dist.init_process_group(
            init_method="env://",
        )
        dist.init_process_group(
            backend="nccl",  # the GPUs' library
            init_method="env://",
        )
        """)
    assert ("DI001", 13, False, "a comment sits on the backend argument; remove it by hand") in notes(tmp_path, code)


def test_leaves_alone_gloo_a_variable_and_a_mixed_spec(tmp_path: Path) -> None:
    code = """\
        import torch.distributed as dist
        dist.init_process_group("gloo")
        dist.init_process_group(backend=args.backend)
        dist.init_process_group(backend="cpu:gloo,cuda:nccl")
        """
    assert fixed(tmp_path, code) == dedent(code)
    assert notes(tmp_path, code) == [("DI001", 4, False, "the backend is not plainly NCCL; set it by hand")]
