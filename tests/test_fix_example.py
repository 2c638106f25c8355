"""`tpucheck fix` on the bundled example (issue 15): a rescan confirms it, fixed findings
gone and the score higher; the project's torch pin holds the torch.accelerator fixes back
until it is raised; every changed file still compiles; a second run changes nothing."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import tpucheck
from tpucheck.config.settings import Flags
from tpucheck.fix.runner import FixReport, run_fix

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "gpu-trainer"


def _fix(root: Path, *, unsafe: bool = False) -> FixReport:
    settings = tpucheck.load_settings(str(root), Flags(no_cache=True), isolated=True)
    return run_fix([str(root)], settings, unsafe=unsafe, write=True)


def _confirmed(report: FixReport, *, score_rises: bool = True) -> None:
    assert report.after is not None
    before = Counter((f.rule, f.path) for f in report.before.findings)
    after = Counter((f.rule, f.path) for f in report.after.findings)
    fixed = Counter((o.target.finding.rule, o.target.finding.path) for o in report.fixed)
    for key, count in fixed.items():
        assert after[key] <= before[key] - count, key
    assert report.after.score.score > report.before.score.score or not score_rises
    for change in report.changed_files:
        if change.path.endswith(".py"):
            compile(change.after, change.path, "exec")


def test_the_example_is_fixed_and_a_rescan_confirms_it(tmp_path: Path) -> None:
    root = tmp_path / "gpu-trainer"
    shutil.copytree(EXAMPLE, root)
    pinned = _fix(root)
    # torch==2.3.1 is pinned: only the fixes that need no torch.accelerator are made; the
    # GradScaler rename (torch 2.3) is made and reported as rewritten (its finding stays)
    assert [(o.target.finding.rule, o.target.finding.span.line) for o in pinned.fixed] == [("CA005", 102)]
    assert [(o.target.finding.rule, o.target.finding.span.line) for o in pinned.rewritten] == [("CA015", 123)]
    assert len(pinned.pinned) == 26 and {o.source for o in pinned.pinned} == {"requirements.txt:3: torch==2.3.1+cu121"}
    assert sorted(o.target.finding.rule for o in pinned.unsafe_held) == ["DI001", "HF001", "HF011", "HF011"]
    _confirmed(pinned, score_rises=False)  # one minor finding less: the score moves by less than its rounding

    # pyproject.toml says torch>=2.3 is supported: with the pin raised, torch.accelerator
    # would break torch 2.3-2.5 users, so those fixes are unsafe
    requirements = root / "requirements.txt"
    requirements.write_text(requirements.read_text().replace("torch==2.3.1+cu121", "torch==2.9.0"))
    raised = _fix(root)
    assert raised.fixed == [] and raised.changed_files == []
    assert sum("pyproject.toml:7: torch>=2.3 supports older torch" in o.note for o in raised.unsafe_held) == 19

    unsafe = _fix(root, unsafe=True)
    assert [c.path for c in unsafe.changed_files] == [
        "gpu_trainer/bench.py", "gpu_trainer/serve.py", "gpu_trainer/train.py", "notebooks/explore.ipynb", "tests/test_model.py"
    ]  # fmt: skip
    assert len(unsafe.fixed) == 26 and len(unsafe.rewritten) == 4 and str(unsafe.needs()) == "2.9"
    _confirmed(unsafe)
    # the notebook imports torch in a cell with IPython syntax: no cell gets an import of its own
    notebook = next(c for c in unsafe.changed_files if c.path.endswith(".ipynb"))
    assert not [line for line in notebook.diff().splitlines() if line.startswith("+") and "import torch" in line]

    again = _fix(root, unsafe=True)
    assert again.changed_files == []


def test_unsafe_fixes_raise_the_pin_that_holds_fixes_back(tmp_path: Path) -> None:
    root = tmp_path / "gpu-trainer"
    shutil.copytree(EXAMPLE, root)
    report = _fix(root, unsafe=True)
    assert report.pins_raised == [("requirements.txt", "torch==2.3.1+cu121", "torch==2.9.0")]
    assert "torch==2.9.0\n" in (root / "requirements.txt").read_text()
    assert report.pinned == [] and str(report.needs()) == "2.9"
