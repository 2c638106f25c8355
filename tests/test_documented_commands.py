"""Files the root README's code blocks run are the product's entry points (blind set 47:
HAT's README trains with `python -m torch.distributed.launch ... hat/train.py` and tests
with `python hat/test.py`; their `__main__` blocks and the test script were read as an
example and a test, at most minor). Look-alikes stay supporting: a file the README only
names in prose, a command in a sub-folder's README, pytest runs, and a file under a folder
of examples (minDALL-E's README runs `examples/transfer_learning_ex.py`)."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.judge.entrypoints import documented_paths
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

SCRIPT = "import torch\n\n\ndef build():\n    return torch.nn.Linear(2, 2)\n\n\nif __name__ == '__main__':\n    build().cuda()\n"
README = """\
# A model

Train it:

```bash
CUDA_VISIBLE_DEVICES=0,1 python -m torch.distributed.launch --nproc_per_node=2 \\
    pkg/train.py -opt options/train.yml --launcher pytorch
```

```
$ python pkg/test.py -opt options/test.yml
```

Fine-tune on your data:

```
python examples/finetune.py -d configs/finetune.yaml
```

The demo (`python demo/run.py`) shows a single image. Tests: `pytest tests/test_model.py`.

```sh
pytest tests/test_model.py
```
"""


def rows(root: Path) -> list[tuple[str, str, str, tuple[str, ...]]]:
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.path, f.role, f.severity, tuple(r.rule for r in f.because)) for f in result.findings if f.rule == "CA003")


def test_files_the_readme_runs_are_product(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "repo",
        {
            "README.md": README,
            "pkg/__init__.py": "",
            "pkg/train.py": SCRIPT,
            "pkg/test.py": SCRIPT,
            "demo/run.py": SCRIPT,
            "examples/finetune.py": SCRIPT,
            "demo/README.md": "```\npython demo/run.py\n```\n",
            "tests/test_model.py": SCRIPT,
        },
    )
    assert rows(root) == [
        ("demo/run.py", "example", "minor", ("role.example", "role.main-block", "severity.supporting")),
        # a folder of examples keeps its role when the README runs one (minDALL-E)
        ("examples/finetune.py", "example", "minor", ("role.example", "role.main-block", "severity.supporting")),
        ("pkg/test.py", "script", "major", ("role.launched",)),
        ("pkg/train.py", "library", "major", ()),
        ("tests/test_model.py", "test", "minor", ("role.test", "severity.supporting")),
    ]


def test_documented_paths_reads_fenced_blocks_only() -> None:
    files = ["pkg/train.py", "pkg/test.py", "demo/run.py", "tests/test_model.py"]
    assert documented_paths(README, "README.md", files) == {"pkg/train.py": "README.md", "pkg/test.py": "README.md"}
    assert documented_paths("Run `python pkg/train.py`.\n", "README.md", files) == {}
    # a script the user is told to write (`./train.py`) is no file of the tree, whatever
    # ends with that name (byol-pytorch's examples/lightning/train.py)
    assert documented_paths("```\n$ accelerate launch ./train.py\n```\n", "README.md", ["examples/lightning/train.py"]) == {}
    # `cd code` first (monosdf, audit AQ): a path with a folder names the one file ending with it
    monosdf = "```\ncd code\npython -m torch.distributed.launch --nproc_per_node 1 training/exp_runner.py --conf confs/dtu.conf\n```\n"
    assert documented_paths(monosdf, "README.md", ["code/training/exp_runner.py", "code/model/network.py"]) == {"code/training/exp_runner.py": "README.md"}


def test_editing_the_readme_is_seen_by_a_warm_rescan(tmp_path: Path) -> None:
    """The README is no scanned file: the cached tree facts must follow its text."""
    root = write_tree(tmp_path / "repo", {"README.md": "# nothing to run\n", "pkg/__init__.py": "", "pkg/test.py": SCRIPT})

    def test_rows() -> list[tuple[str, str]]:
        result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=True))
        return [(f.role, f.severity) for f in result.findings if f.rule == "CA003"]

    assert test_rows() == [("test", "minor")]
    (root / "README.md").write_text("```\npython pkg/test.py\n```\n", encoding="utf-8")
    assert test_rows() == [("script", "major")]
