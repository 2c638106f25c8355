"""What audit T (docs/audits/audit-t.md) rated too low, each with a probe that fails on the
commit it audited (e06e287) and a look-alike that must keep its judgement."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()


def write_tree(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")


def rows(root: Path, files: dict[str, str], rules: tuple[str, ...]) -> set[tuple[str, str, int, str, str, tuple[str, ...]]]:
    write_tree(root, files)
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return {(f.rule, f.path, f.span.line, f.severity, f.role, tuple(r.rule for r in f.because)) for f in result.findings if f.rule in rules}


MODEL = "import torch\n\n\nclass Image2Video:\n    def __init__(self):\n        self.model = torch.nn.Linear(2, 2).cuda()\n"


def test_a_file_product_code_imports_is_product_whatever_its_name(tmp_path: Path) -> None:
    """Audit T (DynamiCrafter): the gradio app imports its model class from
    `scripts/gradio/i2v_test.py`; the `_test.py` name made it a test. Adversarial: a
    `*_test.py` only tests import stays a test, and a file under `tests/` keeps its folder's
    role even when product code imports it."""
    files = {
        "app.py": "from scripts.gradio.i2v_test import Image2Video\nfrom tests.fixtures import make\n\ndemo = Image2Video()\n",
        "scripts/gradio/i2v_test.py": MODEL,
        "pkg/helper_test.py": MODEL,
        "tests/test_pkg.py": "from pkg.helper_test import Image2Video\n\n\ndef test_it():\n    Image2Video()\n",
        "tests/fixtures.py": MODEL,
        "pkg/__init__.py": "",
    }
    assert rows(tmp_path, files, ("CA003",)) == {
        ("CA003", "scripts/gradio/i2v_test.py", 6, "major", "script", ("role.imported",)),
        ("CA003", "pkg/helper_test.py", 6, "minor", "test", ("role.test", "severity.supporting")),
        ("CA003", "tests/fixtures.py", 6, "minor", "test", ("role.test", "severity.supporting")),
    }


def test_torch_distributed_is_available_is_no_cuda_check(tmp_path: Path) -> None:
    """Audit T (neuralangelo): `dist.is_available()` is true on every Linux build of torch,
    TPU hosts included, so the CUDA calls under it run on a TPU. Adversarial: a CUDA check
    beside it, and the project's own `is_cuda_available()` helper, still guard."""
    files = {
        "dist.py": (
            "import torch\nimport torch.distributed as dist\nfrom helpers import is_cuda_available\n\n\n"
            "def init(local_rank):\n"
            "    if dist.is_available() and dist.is_initialized():\n"
            "        torch.cuda.set_device(local_rank)\n"
            "    if torch.distributed.is_available():\n"
            "        torch.cuda.set_device(local_rank)\n"
            "    if dist.is_available() and torch.cuda.is_available():\n"
            "        torch.cuda.set_device(local_rank)\n"
            "    if is_cuda_available():\n"
            "        torch.cuda.set_device(local_rank)\n"
        ),
        "helpers.py": "def is_cuda_available():\n    return False\n",
    }
    found = {(line, severity, because[:1]) for _, _, line, severity, _, because in rows(tmp_path, files, ("CA004",))}
    assert found == {
        (8, "major", ()),
        (10, "major", ()),
        (12, "minor", ("guard.test",)),
        (14, "minor", ("guard.test",)),
    }


def test_nvml_initialised_on_import_fails_every_importer(tmp_path: Path) -> None:
    """Audit T (neuralangelo): `pynvml.nvmlInit()` at a module's top level raises without
    the NVIDIA driver, so every entry point importing the module fails. Adversarial: the
    same call in a function, and one in a try that catches NVMLError and sets a flag."""
    files = {
        "affinity.py": "import pynvml\n\npynvml.nvmlInit()\n",
        "lazy.py": "import pynvml\n\n\ndef count():\n    pynvml.nvmlInit()\n    return pynvml.nvmlDeviceGetCount()\n",
        "tried.py": "import pynvml\n\ntry:\n    pynvml.nvmlInit()\n    HAVE_NVML = True\nexcept pynvml.NVMLError:\n    HAVE_NVML = False\n",
    }
    assert {(path, line, severity, because[:1]) for _, path, line, severity, _, because in rows(tmp_path, files, ("CA025",))} == {
        ("affinity.py", 3, "major", ()),
        ("tried.py", 4, "info", ("guard.except",)),
    }


def test_a_device_test_whose_tpu_side_raises_is_a_failure_not_a_lost_path(tmp_path: Path) -> None:
    """Audit T (open_lm): `if x.device.type == "cuda": ... elif ... == "cpu": ... else: raise`
    sends a TPU tensor into the raise. Adversarial: a TPU branch before the raise, and a
    plain fast path with a fallthrough, stay a lost path at minor."""
    files = {
        "norms.py": (
            "import torch\n\n\n"
            "def cast(t):\n"
            '    if t.device.type == "cuda":\n'
            "        dtype = torch.float16\n"
            '    elif t.device.type == "cpu":\n'
            "        dtype = torch.bfloat16\n"
            "    else:\n"
            "        raise NotImplementedError()\n"
            "    return t.to(dtype)\n\n\n"
            "def cast_tpu(t):\n"
            '    if t.device.type == "cuda":\n'
            "        dtype = torch.float16\n"
            '    elif t.device.type == "tpu":\n'
            "        dtype = torch.bfloat16\n"
            "    else:\n"
            "        raise NotImplementedError()\n"
            "    return t.to(dtype)\n\n\n"
            "def fast(t):\n"
            '    if t.device.type == "cuda":\n'
            "        return t.half()\n"
            "    return t\n"
        ),
    }
    assert {(line, severity, because) for _, _, line, severity, _, because in rows(tmp_path, files, ("DP010",))} == {
        (5, "major", ()),
        (15, "minor", ("where.rule",)),
        (25, "minor", ("where.rule",)),
    }


def test_validation_grows_with_the_product_not_with_its_tests(tmp_path: Path) -> None:
    """Blind sets 1-13: engineers price a 10k-line product's port above a 1k-line one's
    where the findings are the same. Adversarial: lines of tests and examples add nothing."""
    model = "import torch\n\n\ndef step(model, batch, opt):\n    loss = model(batch.cuda()).sum()\n    loss.backward()\n    opt.step()\n"
    filler = "".join(f"def helper_{i}(x):\n    return x + {i}\n\n\n" for i in range(2000))  # 8,000 lines

    # the whole port's 4-12 h floor (tests/test_port_floor.py) would hide the size term here
    judgement = RULESET.judgement
    unfloored = replace(RULESET, judgement=replace(judgement, scoring=replace(judgement.scoring, port_floor=(0.0, 0.0))))

    def effort(files: dict[str, str]) -> tuple[int, float, float]:
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        write_tree(root, files)
        result = scan(str(root), unfloored, ScanOptions(jobs=1, use_cache=False))
        return result.coverage.product_lines, result.score.effort.low, result.score.effort.high

    small = effort({"train.py": model})
    with_tests = effort({"train.py": model, "tests/test_big.py": filler, "examples/big.py": filler})
    large = effort({"train.py": model, "pkg/big.py": "import torch\n" + filler})
    # blind set 69: lhotse's data recipes and cleanlab's NumPy core never touch torch; they
    # run as on the GPU host, so their lines add no validation
    host_only = effort({"train.py": model, "pkg/recipes.py": "import json\n" + filler})
    assert small[0] == with_tests[0] == host_only[0] == 7 and large[0] == 8008
    assert small[1:] == with_tests[1:] == host_only[1:]
    # the size term above the floor (rules/judgement.yaml validation.floor_is_minimum), at
    # validation's own place in the total
    assert large[1] - small[1] > 1.0 and large[2] - small[2] > 3.0


def test_a_cuda_check_that_picks_a_feature_or_turns_one_off_is_no_device_pick(tmp_path: Path) -> None:
    """Audit T (open_lm, aot-benchmark): `"xformers_attn" if cuda else "torch_attn"` picks
    an implementation, and `if args.amp and not cuda: args.amp = False` switches a feature
    off; neither sends a TPU host to the CPU. Adversarial: a device string pick and a body
    that sets the device stay CA002 findings."""
    files = {
        "m.py": (
            "import torch\n\n\n"
            "def setup(args):\n"
            '    name = "xformers_attn" if torch.cuda.is_available() else "torch_attn"\n'
            '    device = "cuda" if torch.cuda.is_available() else "cpu"\n'
            "    if args.amp and not torch.cuda.is_available():\n"
            '        print("no CUDA: amp off")\n'
            "        args.amp = False\n"
            "    if args.gpu and not torch.cuda.is_available():\n"
            '        args.device = "cpu"\n'
            "    return name, device\n"
        ),
    }
    assert {(line, severity) for _, _, line, severity, _, _ in rows(tmp_path, files, ("CA002",))} == {(6, "major"), (10, "major")}


def test_a_launch_line_that_runs_a_missing_file_is_set_aside(tmp_path: Path) -> None:
    """Audit U (Video-LLaVA): three DeepSpeed launchers left from the project it was forked
    from run `llava/train/train_mem.py`, which the tree does not have. Adversarial: a line
    running a file that exists (through a variable prefix), a `-m` module, and an absolute
    path stay findings."""
    launcher = (
        "#!/bin/bash\n"
        "deepspeed --num_gpus 8 llava/train/train_mem.py \\\n"
        "    --deepspeed ./scripts/zero3.json \\\n"
        "    --fp16 True\n"
        "torchrun --nproc_per_node 8 ${ROOT}/pkg/train/train.py --fp16 True\n"
        "torchrun --nproc_per_node 8 -m llava.train.train_mem --fp16 True\n"
        "torchrun --nproc_per_node 8 /opt/llava/train_mem.py --fp16 True\n"
    )
    write_tree(tmp_path, {"pkg/train/train.py": "import torch\n", "scripts/finetune.sh": launcher})
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    aside = {(f.rule, f.span.line, f.because[-1].rule) for f in result.set_aside if f.path == "scripts/finetune.sh"}
    kept = {(f.rule, f.span.line) for f in result.findings if f.path == "scripts/finetune.sh"}
    assert aside == {("DI011", 3, "set-aside.dead-launch"), ("PR004", 4, "set-aside.dead-launch")}
    assert {line for _, line in kept} == {5, 6, 7}
