"""Hard-coded "cuda" devices and `.cuda()` -> the current accelerator (issue 15): a string
stays a string, "cuda" on a GPU and where there is no accelerator; `.cuda()` becomes
`.to(torch.accelerator.current_accelerator())`."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from fixtools import fix_project, fixed, notes

TYPE_OR_CUDA = 'getattr(torch.accelerator.current_accelerator(), "type", "cuda")'


def test_strings_and_methods(tmp_path: Path) -> None:
    code = """\
        import argparse
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"  # pick one
        model = Net().cuda()
        x = torch.randn(3, device="cuda")
        y = x.to(torch.device("cuda:0"))
        z = x.cuda(non_blocking=True)
        v = x.to(f"cuda:{rank}")
        parser = argparse.ArgumentParser()
        parser.add_argument("--device", default="cuda")
        """
    assert fixed(tmp_path, code) == dedent(f"""\
        import argparse
        import torch

        device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"  # pick one
        model = Net().cuda()
        x = torch.randn(3, device={TYPE_OR_CUDA})
        y = x.to(torch.device(f"{{getattr(torch.accelerator.current_accelerator(), 'type', 'cuda')}}:0"))
        z = x.to(torch.accelerator.current_accelerator(), non_blocking=True)
        v = x.to(f"{{getattr(torch.accelerator.current_accelerator(), 'type', 'cuda')}}:{{rank}}")
        parser = argparse.ArgumentParser()
        parser.add_argument("--device", default={TYPE_OR_CUDA})
        """)


def test_a_default_argument_keeps_a_string(tmp_path: Path) -> None:
    code = "import torch\ndef make(n, device='cuda'):\n    return torch.zeros(n, device=device)\n"
    assert fixed(tmp_path, code) == f"import torch\ndef make(n, device={TYPE_OR_CUDA}):\n    return torch.zeros(n, device=device)\n"


def test_torch_is_imported_when_only_a_submodule_is(tmp_path: Path) -> None:
    code = "from torch import nn\nlayer = nn.Linear(2, 2).cuda()\n"
    assert fixed(tmp_path, code) == "from torch import nn\nimport torch\nlayer = nn.Linear(2, 2).to(torch.accelerator.current_accelerator())\n"


def test_unsafe_uses_a_device_variable_in_scope(tmp_path: Path) -> None:
    code = """\
        import torch

        def train(model, batch, device):
            model = model.cuda()
            x = batch.to("cuda")
            return model(x)

        y = torch.ones(2).cuda()
        """
    assert fixed(tmp_path, code, unsafe=True) == dedent("""\
        import torch

        def train(model, batch, device):
            model = model.to(device)
            x = batch.to(device)
            return model(x)

        y = torch.ones(2).to(torch.accelerator.current_accelerator())
        """)


def test_a_device_index_goes_into_the_device(tmp_path: Path) -> None:
    code = "import torch\nx = torch.ones(2).cuda(non_blocking=True, device=1)\ny = torch.ones(2).cuda(args.gpu)\nz = torch.ones(2).cuda(a, b)\n"
    assert fixed(tmp_path, code) == (
        f"import torch\nx = torch.ones(2).to(torch.device({TYPE_OR_CUDA}, 1), non_blocking=True)\ny = torch.ones(2).cuda(args.gpu)\nz = torch.ones(2).cuda(a, b)\n"
    )
    assert fixed(tmp_path, code, unsafe=True).splitlines()[2] == f"y = torch.ones(2).to(torch.device({TYPE_OR_CUDA}, args.gpu))"
    assert [n[2:] for n in notes(tmp_path, code)][1:] == [
        (False, "unsafe: the device index `args.gpu` is not known to be an int (a torch.device there would raise) (would be: .cuda() -> .to(torch.device(" + TYPE_OR_CUDA + ", args.gpu)))"),
        (False, "`.cuda(...)` with arguments this fix does not know; use `.to(device)` with the device you mean"),
    ]


def test_leaves_alone_a_local_cuda_cpu_code_comments_and_other_strings(tmp_path: Path) -> None:
    code = """\
        import torch
        cuda = torch.cuda
        ok = cuda.is_available
        x = torch.ones(2).to("cpu")
        # model = model.cuda()
        backend = "cuda"
        print("running on cuda:0")
        """
    report = fix_project(tmp_path, {"mod.py": code})
    assert report.changed_files == []


def test_pinned_torch_without_torch_accelerator(tmp_path: Path) -> None:
    report = fix_project(tmp_path, {"mod.py": "import torch\nx = torch.ones(2).cuda()\n", "pyproject.toml": '[project]\nname = "p"\ndependencies = ["torch==2.4.0"]\n'})
    assert report.changed_files == []
    assert "needs torch>=2.6, newer than the project allows (pyproject.toml:3: torch==2.4.0)" in report.pinned[0].note


def test_the_string_is_cuda_without_an_accelerator_and_the_accelerator_type_with_one() -> None:
    from types import SimpleNamespace

    def torch_with(accelerator: object) -> SimpleNamespace:
        return SimpleNamespace(accelerator=SimpleNamespace(current_accelerator=lambda: accelerator))

    assert eval(TYPE_OR_CUDA, {"torch": torch_with(None)}) == "cuda"
    assert eval(TYPE_OR_CUDA, {"torch": torch_with(SimpleNamespace(type="cuda"))}) == "cuda"
    assert eval(TYPE_OR_CUDA, {"torch": torch_with(SimpleNamespace(type="tpu"))}) == "tpu"


def test_the_short_form_only_under_an_availability_check(tmp_path: Path) -> None:
    code = """\
        import torch
        try:
            import apex
            DEVICE = "cuda"
        except ImportError:
            DEVICE = "cpu"
        if torch.cuda.is_available():
            x = torch.ones(2).to("cuda")
        """
    assert fixed(tmp_path, code) == dedent(f"""\
        import torch
        try:
            import apex
            DEVICE = {TYPE_OR_CUDA}
        except ImportError:
            DEVICE = "cpu"
        if torch.cuda.is_available():
            x = torch.ones(2).to(torch.accelerator.current_accelerator().type)
        """)
