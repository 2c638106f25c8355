"""CUDA autocast and GradScaler (issue 15): torch.autocast / torch.amp.GradScaler with the
device type (safe); fp16 -> bf16 with the scaler removed (unsafe)."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from fixtools import fixed, notes

TYPE = 'getattr(torch.accelerator.current_accelerator(), "type", "cuda")'

TRAIN = """\
    import torch

    scaler = torch.cuda.amp.GradScaler()

    for x in data:
        with torch.cuda.amp.autocast():
            loss = model(x).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
    """


def test_autocast_forms_get_the_accelerator_type_and_keep_fp16(tmp_path: Path) -> None:
    code = """\
        import torch
        from torch.cuda.amp import autocast

        with torch.cuda.amp.autocast(True, torch.float16):
            pass
        with autocast():
            pass
        with torch.autocast("cuda", dtype=torch.float16):
            pass
        with torch.amp.autocast(device_type="cuda", dtype=torch.bfloat16):
            pass
        """
    assert fixed(tmp_path, code) == dedent(f"""\
        import torch

        with torch.autocast({TYPE}, enabled=True, dtype=torch.float16):
            pass
        with torch.autocast({TYPE}):
            pass
        with torch.autocast({TYPE}, dtype=torch.float16):
            pass
        with torch.amp.autocast(device_type={TYPE}, dtype=torch.bfloat16):
            pass
        """)


def test_custom_fwd_decorators(tmp_path: Path) -> None:
    code = """\
        import torch

        class Scaled(torch.autograd.Function):
            @staticmethod
            @torch.cuda.amp.custom_fwd
            def forward(ctx, a):
                return a * 2

            @staticmethod
            @torch.cuda.amp.custom_bwd(cast_inputs=torch.float32)
            def backward(ctx, g):
                return g
        """
    assert fixed(tmp_path, code) == dedent(f"""\
        import torch

        class Scaled(torch.autograd.Function):
            @staticmethod
            @torch.amp.custom_fwd(device_type={TYPE})
            def forward(ctx, a):
                return a * 2

            @staticmethod
            @torch.amp.custom_bwd(device_type={TYPE}, cast_inputs=torch.float32)
            def backward(ctx, g):
                return g
        """)


def test_safe_grad_scaler_changes_only_the_deprecated_name(tmp_path: Path) -> None:
    assert fixed(tmp_path, TRAIN) == dedent(f"""\
        import torch

        scaler = torch.amp.GradScaler("cuda")

        for x in data:
            with torch.autocast({TYPE}):
                loss = model(x).mean()
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            scaler.step(opt)
            scaler.update()
        """)


def test_unsafe_trains_in_bf16_without_the_scaler(tmp_path: Path) -> None:
    assert fixed(tmp_path, TRAIN, unsafe=True) == dedent(f"""\
        import torch

        for x in data:
            with torch.autocast({TYPE}, dtype=torch.bfloat16):
                loss = model(x).mean()
            loss.backward()
            opt.step()
        """)


def test_the_scaler_stays_where_fp16_is_chosen_elsewhere(tmp_path: Path) -> None:
    code = """\
        import torch
        dtype = "float16"
        scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
        scaler.scale(loss).backward()
        """
    assert fixed(tmp_path, code, unsafe=True) == dedent("""\
        import torch
        dtype = "float16"
        scaler = torch.amp.GradScaler("cuda", enabled=(dtype == "float16"))
        scaler.scale(loss).backward()
        """)
    ((rule, _line, ok, note),) = notes(tmp_path, code, unsafe=True)
    assert (rule, ok) == ("CA015", False) and "fp16 gradients underflow" in note


def test_the_scaler_stays_when_used_otherwise(tmp_path: Path) -> None:
    code = "import torch\nscaler = torch.amp.GradScaler()\nstate = scaler.state_dict()\n"
    assert fixed(tmp_path, code, unsafe=True) == code
    assert "`scaler.state_dict(...)` has no plain replacement" in notes(tmp_path, code, unsafe=True)[0][3]


def test_leaves_alone_cpu_autocast_a_local_autocast_and_comments(tmp_path: Path) -> None:
    code = """\
        import torch
        # with torch.cuda.amp.autocast():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            pass

        def autocast():
            return torch.autocast("cpu")

        with autocast():
            pass
        """
    assert fixed(tmp_path, code) == dedent(code)
