"""init_process_group("nccl") -> each device's default backend (issue 15), an unsafe fix
(issue 26): the backend name, the default timeout and, before torch 2.6, an extra gloo
group change on a GPU."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from fixtools import fix_project, fixed, notes


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
    assert fixed(tmp_path, code, unsafe=True) == dedent("""\
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
    assert ("DI001", 13, False, "a comment sits on the backend argument; remove it by hand") in notes(tmp_path, code, unsafe=True)


def test_dropping_nccl_is_unsafe_and_says_what_changes(tmp_path: Path) -> None:
    code = """\
        import datetime
        import torch.distributed as dist
        dist.init_process_group("nccl")
        dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=5))
        print(dist.get_backend())
        """
    assert fixed(tmp_path, code) == dedent(code)
    reasons = [note for _, _, _, note in notes(tmp_path, code)]
    assert reasons[0].startswith(
        "unsafe: the code reads dist.get_backend(), which no longer says nccl; the default timeout becomes 30 minutes instead of NCCL's 10; before torch 2.6 a gloo group opens beside NCCL"
    )
    assert reasons[1].startswith("unsafe: the code reads dist.get_backend(), which no longer says nccl; before torch 2.6 a gloo group opens beside NCCL")
    floor = fix_project(tmp_path, {"mod.py": "import datetime\nimport torch.distributed as dist\ndist.init_process_group('nccl', timeout=datetime.timedelta(minutes=5))\n", "requirements.txt": "torch>=2.6\n"})
    assert floor.unsafe_held[0].note.startswith("unsafe: the backend name changes for code elsewhere that reads it")


def test_leaves_alone_gloo_a_variable_and_a_mixed_spec(tmp_path: Path) -> None:
    code = """\
        import torch.distributed as dist
        dist.init_process_group("gloo")
        dist.init_process_group(backend=args.backend)
        dist.init_process_group(backend="cpu:gloo,cuda:nccl")
        """
    assert fixed(tmp_path, code) == dedent(code)
    assert notes(tmp_path, code) == [("DI001", 4, False, "the backend is not plainly NCCL; set it by hand")]
