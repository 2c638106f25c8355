"""`tpucheck fix` is safe when it says safe (issue 26): each shape that a review of real
repositories found wrong, in code of our own, with what the fix does now."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from textwrap import dedent
from types import SimpleNamespace

from fixtools import fix_project, fixed, notes

TYPE = 'getattr(torch.accelerator.current_accelerator(), "type", "cuda")'


# ---------------------------------------------------------------- pins


def test_the_grad_scaler_rename_reads_the_pin(tmp_path: Path) -> None:
    code = "import torch\nscaler = torch.cuda.amp.GradScaler(enabled=True)\n"
    report = fix_project(tmp_path, {"train.py": code, "requirements.txt": "torch==2.0.1\n"})
    assert report.changed_files == []
    (outcome,) = report.outcomes
    assert (outcome.state, outcome.source) == ("pinned", "requirements.txt:1: torch==2.0.1")
    assert outcome.note.startswith("torch.amp.GradScaler needs torch>=2.3, newer than the project allows")


def test_every_codemod_declares_the_torch_it_needs(tmp_path: Path) -> None:
    code = 'from transformers import AutoModel\nm = AutoModel.from_pretrained("x", attn_implementation="flash_attention_2")\n'
    report = fix_project(tmp_path, {"serve.py": code, "requirements.txt": "torch==2.0.1\n"}, unsafe=True)
    manifest = next(c for c in report.changed_files if c.path == "requirements.txt")
    assert manifest.after == "torch==2.1.1\n"
    assert [o.state for o in report.outcomes] == ["fixed"] and str(report.needs()) == "2.1.1"


def test_each_file_reads_its_nearest_manifest(tmp_path: Path) -> None:
    code = "import torch\ntorch.cuda.synchronize()\n"
    report = fix_project(
        tmp_path,
        {
            "old/requirements.txt": "torch<2.6\nnumpy\n",
            "old/src/train.py": code,
            "new/pyproject.toml": '[project]\nname = "new"\ndependencies = ["numpy"]\n',
            "new/train.py": code,
            "requirements.txt": "torch\n",
            "tools/bench.py": code,
        },
    )
    assert [c.path for c in report.changed_files] == ["new/train.py", "tools/bench.py"]
    (held,) = report.pinned
    assert held.target.finding.path == "old/src/train.py" and held.source == "old/requirements.txt:1: torch<2.6"


def test_a_supported_older_torch_makes_the_fix_unsafe(tmp_path: Path) -> None:
    files = {"train.py": "import torch\ntorch.cuda.synchronize()\n", "setup.py": "from setuptools import setup\nsetup(name='p', install_requires=['torch>=2.1'])\n"}
    report = fix_project(tmp_path, files)
    assert report.changed_files == []
    assert report.unsafe_held[0].note.startswith("unsafe: needs torch>=2.6, and setup.py:2: torch>=2.1 supports older torch")
    assert fix_project(tmp_path, files, unsafe=True).files[0].after == "import torch\ntorch.accelerator.synchronize()\n"


def test_a_raised_pin_allows_what_the_fixes_need() -> None:
    from tpucheck.fix.pins import raise_pin
    from tpucheck.fix.versions import Version

    needs = Version("2.9")
    assert raise_pin("torch<2.6,>=2.1\n", 1, needs) == "torch<2.10,>=2.1\n"
    assert raise_pin("torch<=2.5\n", 1, needs) == "torch<=2.9.0\n"
    assert raise_pin("torch~=2.4.0\n", 1, needs) == "torch~=2.9.0\n"
    assert raise_pin("torch>=2.1\n", 1, needs) is None  # no upper bound to raise
    assert raise_pin("numpy==1.0\n", 1, needs) is None


def test_unsafe_fixes_raise_only_the_version_on_the_pin_line(tmp_path: Path) -> None:
    requirements = "numpy==1.26.4  # arrays\ntorch==2.4.1+cu121  # the GPU build\n"
    report = fix_project(tmp_path, {"train.py": "import torch\ntorch.cuda.empty_cache()\n", "requirements.txt": requirements}, unsafe=True)
    manifest = next(c for c in report.changed_files if c.path == "requirements.txt")
    assert manifest.after == "numpy==1.26.4  # arrays\ntorch==2.9.0  # the GPU build\n"
    assert report.pins_raised == [("requirements.txt", "torch==2.4.1+cu121  # the GPU build", "torch==2.9.0  # the GPU build")]
    assert [o.state for o in report.outcomes] == ["fixed"]


# ---------------------------------------------------------------- availability checks


def test_a_check_whose_value_selects_cuda_only_code_stays(tmp_path: Path) -> None:
    code = """\
        import torch
        import torch.distributed as dist

        backend = "gloo" if not torch.cuda.is_available() else "nccl"
        meter = Meter(cuda=torch.cuda.is_available())
        name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
        if torch.cuda.is_available() or args.force:
            torch.backends.cudnn.benchmark = True
        _use_gpu = torch.cuda.device_count() > 0
        if _use_gpu:
            dist.init_process_group("nccl")
        """
    assert fixed(tmp_path, code) == dedent(code)
    assert [note for rule, _, _, note in notes(tmp_path, code) if rule != "DI001"] == [
        'unsafe: True on any accelerator, and the code it selects uses NCCL ("nccl") (would be: torch.cuda.is_available() -> torch.accelerator.is_available())',
        "unsafe: True on any accelerator, and it is passed as `cuda=` to Meter, which then asks for CUDA (would be: torch.cuda.is_available() -> torch.accelerator.is_available())",
        "unsafe: True on any accelerator, and the code it selects calls torch.cuda.get_device_name (would be: torch.cuda.is_available() -> torch.accelerator.is_available())",
        "unsafe: True on any accelerator, and the code it selects calls torch.backends.cudnn.benchmark (would be: torch.cuda.is_available() -> torch.accelerator.is_available())",
        'unsafe: True on any accelerator, and `_use_gpu`: the code it selects uses NCCL ("nccl") (would be: torch.cuda.device_count() -> torch.accelerator.device_count())',
    ]


def test_a_check_whose_value_selects_device_agnostic_code_is_rewritten(tmp_path: Path) -> None:
    code = """\
        import torch

        def pick():
            use_accel = torch.cuda.is_available()
            device = torch.device("cuda" if use_accel else "cpu")
            n = torch.cuda.device_count()
            print(f"{n} devices")
            return device
        """
    assert fixed(tmp_path, code) == dedent("""\
        import torch

        def pick():
            use_accel = torch.accelerator.is_available()
            device = torch.device(torch.accelerator.current_accelerator().type if use_accel else "cpu")
            n = torch.accelerator.device_count()
            print(f"{n} devices")
            return device
        """).replace("torch.accelerator.current_accelerator().type", TYPE)


# ---------------------------------------------------------------- memory calls


def test_memory_calls_are_guarded_where_cuda_did_nothing(tmp_path: Path) -> None:
    code = """\
        import torch

        def tidy(log):
            torch.cuda.empty_cache()  # between epochs
            log(torch.cuda.max_memory_allocated() / 2**30)
            stats = torch.cuda.memory_stats()
            return stats
        """
    new = fixed(tmp_path, code)
    assert new == dedent("""\
        import torch

        def tidy(log):
            if torch.accelerator.is_available():
                torch.accelerator.empty_cache()  # between epochs
            log((torch.accelerator.max_memory_allocated() if torch.accelerator.is_available() else 0) / 2**30)
            stats = torch.accelerator.memory_stats() if torch.accelerator.is_available() else {}
            return stats
        """)

    def raises() -> None:
        raise RuntimeError("Cannot access accelerator device when none is available.")

    # a CPU-only torch: torch.accelerator's memory functions raise, the guarded code does not
    cpu_only = SimpleNamespace(accelerator=SimpleNamespace(is_available=lambda: False, empty_cache=raises, max_memory_allocated=raises, memory_stats=raises))
    scope: dict[str, Callable[[Callable[[float], None]], object]] = {}
    exec(compile(new.replace("import torch\n", ""), "mod.py", "exec"), {"torch": cpu_only}, scope)
    logged: list[float] = []
    assert scope["tidy"](logged.append) == {} and logged == [0.0]


def test_a_memory_function_passed_on_is_unsafe(tmp_path: Path) -> None:
    code = "import torch\ncallbacks = [torch.cuda.empty_cache]\n"
    assert fixed(tmp_path, code) == code
    assert notes(tmp_path, code)[0][3].startswith("unsafe: torch.cuda.empty_cache does nothing without CUDA")


# ---------------------------------------------------------------- .cuda()


def test_cuda_on_an_object_with_its_own_cuda_method_is_not_rewritten(tmp_path: Path) -> None:
    code = """\
        import torch
        from torch import nn

        class AverageMeter:
            def cuda(self):
                self.on_gpu = True
                return self

        class Net(nn.Module):
            pass

        meter = AverageMeter().cuda()
        net = Net().cuda()
        x = torch.zeros(2)
        y = x.float().cuda()
        batch = next(loader).cuda()
        state = torch.load("meter.pt").cuda()
        """
    new = fixed(tmp_path, code)
    assert "meter = AverageMeter().cuda()" in new and "batch = next(loader).cuda()" in new and 'state = torch.load("meter.pt").cuda()' in new
    assert "net = Net().to(torch.accelerator.current_accelerator())" in new
    assert "y = x.float().to(torch.accelerator.current_accelerator())" in new
    held = [note for _, line, _, note in notes(tmp_path, code) if line in (12, 16)]
    assert held[0].startswith("unsafe: `AverageMeter()` is not known to be a tensor or module")
    assert held[1].startswith("unsafe: `next(loader)` is not known to be a tensor or module")


# ---------------------------------------------------------------- imports


def test_a_module_that_imports_torch_locally_gets_a_local_import(tmp_path: Path) -> None:
    code = """\
        def bench(fn):
            import torch

            torch.cuda.synchronize()
            return fn()


        def tidy():
            from torch.cuda import empty_cache

            empty_cache()
        """
    assert fixed(tmp_path, code) == dedent("""\
        def bench(fn):
            import torch

            torch.accelerator.synchronize()
            return fn()


        def tidy():
            import torch

            if torch.accelerator.is_available():
                torch.accelerator.empty_cache()
        """)


def test_import_torch_takes_its_sorted_place(tmp_path: Path) -> None:
    code = """\
        import os
        import sys

        import numpy as np
        import tqdm
        from torch import nn

        layer = nn.Linear(2, 2).cuda()
        """
    assert fixed(tmp_path, code) == dedent("""\
        import os
        import sys

        import numpy as np
        import torch
        import tqdm
        from torch import nn

        layer = nn.Linear(2, 2).to(torch.accelerator.current_accelerator())
        """)


# ---------------------------------------------------------------- moving code to the TPU


NANO = """\
    import torch
    from contextlib import nullcontext

    device = 'cuda'
    device_type = 'cuda' if 'cuda' in device else 'cpu'
    ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=torch.bfloat16)
    optimizer = configure(device_type)
    """


def test_a_device_type_test_takes_the_tpu_path_with_unsafe_fixes(tmp_path: Path) -> None:
    # safe: the arm is not rewritten alone (it would be dead on a TPU, where the test stays false)
    assert fixed(tmp_path, NANO).splitlines()[4] == "device_type = 'cuda' if 'cuda' in device else 'cpu'"
    held = [note for _, line, _, note in notes(tmp_path, NANO) if line == 5]
    assert held[0].startswith("unsafe: rewritten alone it is dead on a TPU, where the test beside it ('cuda' in device) stays false")
    assert held[1].startswith("unsafe: on any accelerator the comparison now holds, and `device_type`: it is passed to configure")
    new = fixed(tmp_path, NANO, unsafe=True)
    assert new.splitlines()[4] == f"device_type = {TYPE} if getattr(torch.accelerator.current_accelerator(), 'type', 'cuda') in device else 'cpu'"
    lines = "\n".join(new.splitlines()[3:5])

    def run(accelerator: object) -> object:
        scope: dict[str, object] = {}
        exec(lines, {"torch": SimpleNamespace(accelerator=SimpleNamespace(current_accelerator=lambda: accelerator))}, scope)
        return scope["device_type"]

    assert run(SimpleNamespace(type="tpu")) == "tpu"
    assert run(SimpleNamespace(type="cuda")) == "cuda"
    assert run(None) == "cuda"  # as before: "cuda" in "cuda"


def test_moves_device_indices_legacy_constructors_meshes_and_conditional_autocast(tmp_path: Path) -> None:
    code = """\
        import torch
        from torch.distributed.device_mesh import init_device_mesh

        mesh = init_device_mesh("cuda", (2, 4))
        weights = torch.cuda.FloatTensor(3, 4)
        labels = torch.cuda.LongTensor([0, 1, 1])
        x = torch.ones(2).cuda(0)
        with torch.cuda.amp.autocast(use_amp):
            pass
        Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
        """
    assert fixed(tmp_path, code) == dedent(f"""\
        import torch
        from torch.distributed.device_mesh import init_device_mesh

        mesh = init_device_mesh({TYPE}, (2, 4))
        weights = torch.empty(3, 4, dtype=torch.float32, device={TYPE})
        labels = torch.tensor([0, 1, 1], dtype=torch.int64, device={TYPE})
        x = torch.ones(2).to(torch.device({TYPE}, 0))
        with torch.autocast({TYPE}, enabled=use_amp):
            pass
        Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
        """)
    assert notes(tmp_path, code)[-1][2:] == (False, "a legacy CUDA tensor type used as a value (a type check, an alias): test `x.dtype` and `x.device.type` by hand")


def test_a_comparison_in_a_file_that_names_another_accelerator_is_unsafe(tmp_path: Path) -> None:
    code = """\
        import torch
        def kind(x):
            if x.device.type == "cuda":
                return "gpu"
            if x.device.type == "mps":
                return "apple"
            return "cpu"
        """
    assert fixed(tmp_path, code) == dedent(code)
    assert notes(tmp_path, code)[0][3].startswith("unsafe: the project also runs on \"mps\" (mod.py), where the comparison would now hold")


# ---------------------------------------------------------------- config values

CONFIG_RULE = """\
rules:
  - id: TEAM010
    name: config-cuda-device
    category: device-placement
    severity: minor
    message: a config file puts the model on a CUDA device
    codemod: {name: config-value, safe: SAFE, values: {cuda: tpu}}
    match:
      file: ["*.yaml", "*.yml"]
      pattern: '^\\s*\\w*device:\\s*["'']?cuda(:\\d+)?["'']?'
"""

CONFIG = """\
# where to train
trainer:
  device: cuda   # the GPU
  eval_device: "cuda:1"
  devices: [cuda, cpu]
other: cuda
"""


def test_config_values_are_edited_in_place(tmp_path: Path) -> None:
    from tpucheck.config.settings import Flags

    rules = tmp_path / "team.yaml"
    rules.write_text(CONFIG_RULE.replace("SAFE", "false"))
    project = tmp_path / "project"
    flags = Flags(no_cache=True, rules=(rules,), select=("TEAM010",))
    held = fix_project(project, {"conf/train.yaml": CONFIG}, flags=flags)
    assert held.changed_files == [] and [o.state for o in held.outcomes] == ["unsafe", "unsafe"]
    assert held.outcomes[0].note == "unsafe: TEAM010's fix may change behaviour (would be: cuda -> tpu)"
    done = fix_project(project, {}, flags=flags, unsafe=True)
    assert done.files[0].after == CONFIG.replace("device: cuda ", "device: tpu ").replace('"cuda:1"', '"tpu:1"')
    assert [(o.target.finding.span.line, o.state, o.note) for o in done.outcomes] == [(3, "fixed", "cuda -> tpu"), (4, "fixed", "cuda:1 -> tpu:1")]
    rules.write_text(CONFIG_RULE.replace("SAFE", "true"))
    assert fix_project(project, {}, flags=flags).files[0].after == done.files[0].after


def test_a_config_value_rule_must_name_its_values(tmp_path: Path) -> None:
    import pytest

    from tpucheck.ruleset import RuleFileError, load_ruleset

    (tmp_path / "team.yaml").write_text(CONFIG_RULE.replace("SAFE", "true").replace(", values: {cuda: tpu}", ""))
    with pytest.raises(RuleFileError, match=r"the config-value codemod needs `values`"):
        load_ruleset([tmp_path / "team.yaml"])


def test_a_check_in_a_project_that_runs_on_another_accelerator_is_unsafe(tmp_path: Path) -> None:
    files = {
        "predict.py": "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n",
        "train.py": "import torch\ndef cast(device):\n    return torch.autocast(device.type if device.type != 'mps' else 'cpu')\n",
    }
    report = fix_project(tmp_path, files)
    assert report.files[0].after == "import torch\ndevice = torch.device(torch.accelerator.current_accelerator().type if torch.cuda.is_available() else 'cpu')\n"
    assert report.unsafe_held[0].note.startswith(
        "unsafe: True on any accelerator, and the project also runs on 'mps' (train.py), where this check would now change what it selects"
    )


def test_autocast_in_a_project_that_runs_on_another_accelerator_is_unsafe(tmp_path: Path) -> None:
    code = """\
        import torch
        device = "mps" if torch.backends.mps.is_available() else "cpu"
        with torch.cuda.amp.autocast():
            pass
        if torch.cuda.is_available():
            with torch.autocast("cuda"):
                pass
        """
    report = fix_project(tmp_path, {"mod.py": code})
    assert [(o.target.finding.span.line, o.state) for o in report.outcomes] == [
        (3, "unsafe"),
        (6, "fixed"),
    ]
    assert report.unsafe_held[0].note.startswith("unsafe: the project also runs on \"mps\" (mod.py), where CUDA's autocast did nothing")


def test_values_beside_a_python_codemod_fix_the_rules_config_findings(tmp_path: Path) -> None:
    from tpucheck.config.settings import Flags

    rules = tmp_path / "team.yaml"
    both = CONFIG_RULE.replace("{name: config-value, safe: SAFE, values: {cuda: tpu}}", "{name: current-accelerator, safe: true, values: {cuda: tpu}}")
    rules.write_text(both.replace("    match:\n      file:", "    match:\n      - string: 'cuda'\n      - file:").replace("\n      pattern:", "\n        pattern:"))
    flags = Flags(no_cache=True, rules=(rules,), select=("TEAM010",))
    report = fix_project(tmp_path / "project", {"conf/train.yaml": CONFIG, "run.py": "import torch\nx = torch.ones(2, device='cuda')\n"}, flags=flags)
    after = {c.path: c.after for c in report.changed_files}
    assert after == {"conf/train.yaml": CONFIG.replace("device: cuda ", "device: tpu ").replace('"cuda:1"', '"tpu:1"'), "run.py": f"import torch\nx = torch.ones(2, device={TYPE})\n"}


def test_a_memory_call_that_cannot_be_guarded_is_unsafe(tmp_path: Path) -> None:
    code = "import torch\nif ready: x = 1\nelse: torch.cuda.empty_cache()\n"
    assert fixed(tmp_path, code) == code
    assert notes(tmp_path, code)[0][3].startswith(
        "unsafe: torch.accelerator.empty_cache raises where there is no accelerator (torch.cuda.empty_cache did nothing), and the call does not stand alone on its line"
    )
