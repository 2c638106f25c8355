"""`tpucheck fix` on the command line (issue 15): --diff prints a unified diff, writes
nothing and exits 1 when there is something to fix; a plain run writes, says what changed
and what it left; a second run changes nothing."""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CODE = """import torch

torch.manual_seed(0)
torch.cuda.manual_seed(0)
torch.cuda.synchronize()  # wait
print(torch.cuda.memory_summary())
"""


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "tpucheck", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=300)


def test_diff_writes_nothing_and_exits_1(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(CODE)
    done = run("fix", "--diff", "--isolated", ".", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout == (
        "--- a/train.py\n"
        "+++ b/train.py\n"
        "@@ -1,6 +1,5 @@\n"
        " import torch\n"
        " \n"
        " torch.manual_seed(0)\n"
        "-torch.cuda.manual_seed(0)\n"
        "-torch.cuda.synchronize()  # wait\n"
        "+torch.accelerator.synchronize()  # wait\n"
        " print(torch.cuda.memory_summary())\n"
    )
    assert "would fix 2 findings in 1 file" in done.stderr
    assert (tmp_path / "train.py").read_text() == CODE
    # the diff applies as it is
    patch = subprocess.run(["git", "apply", "--check", "-"], input=done.stdout, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert patch.returncode == 0, patch.stderr


def test_fix_writes_reports_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(CODE)
    done = run("fix", "--isolated", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "train.py").read_text() == (
        "import torch\n\ntorch.manual_seed(0)\ntorch.accelerator.synchronize()  # wait\nprint(torch.cuda.memory_summary())\n"
    )
    out = done.stdout
    assert "fixed 2 findings in 1 file; score " in out
    assert "    5:1 CA001 torch.cuda.synchronize() -> torch.accelerator.synchronize()" in out
    assert "The rewritten code needs torch>=2.6" in out
    assert "train.py:6:7 CA006 torch.accelerator has no counterpart of torch.cuda.memory_summary; fix it by hand" in out
    assert "Next: review the change" in out
    assert not list(tmp_path.glob(".tpucheck-fix-*"))
    again = run("fix", "--diff", "--isolated", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == ""
    assert run("fix", "--isolated", cwd=tmp_path).stdout.startswith("tpucheck fix: fixed 0 findings in 0 files")


def test_select_and_ignore_choose_the_rules(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(CODE)
    done = run("fix", "--diff", "--isolated", "--ignore", "CA001", cwd=tmp_path)
    assert "+torch.accelerator" not in done.stdout and "-torch.cuda.manual_seed(0)" in done.stdout
    done = run("fix", "--diff", "--isolated", "--select", "cuda-synchronize", cwd=tmp_path)
    assert "-torch.cuda.manual_seed" not in done.stdout and "+torch.accelerator.synchronize()" in done.stdout


def test_nothing_to_fix_exits_0(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("import torch\nx = torch.ones(2)\n")
    done = run("fix", "--diff", "--isolated", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "")


def test_a_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    done = run("fix", "nowhere", cwd=tmp_path)
    assert done.returncode == 2 and "no such file or directory: nowhere" in done.stderr


def test_help_is_there() -> None:
    done = run("fix", "-h", cwd=ROOT)
    assert done.returncode == 0 and "fix [OPTIONS] [PATH]..." in done.stdout and "--unsafe-fixes" in done.stdout


SHAPES = """\
import argparse
import torch
import torch.distributed as dist
from torch.cuda.amp import GradScaler


def helper():
    torch.cuda.empty_cache()


device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
torch.cuda.manual_seed_all(0)
model = torch.nn.Linear(2, 2).cuda()
meter = Meter().cuda()
scaler = GradScaler()
with torch.cuda.amp.autocast():
    loss = model(torch.randn(2, device="cuda"))
torch.cuda.synchronize()
dist.init_process_group("nccl")
backend = "gloo" if not torch.cuda.is_available() else "nccl"
print(torch.cuda.memory_summary())
"""


def _fixable(report: str) -> Counter[str]:
    """The findings a fix works on, by rule: the reported ones and those set aside as one
    edit with another (`"cuda" if torch.cuda.is_available() else "cpu"`)."""
    data = json.loads(report)
    same_edit = [f for f in data["set_aside"] if f["because"][-1]["rule"] == "set-aside.same-edit"]
    return Counter(f["rule"] for f in [*data["findings"], *same_edit])


def test_the_summary_counts_what_the_diff_changed(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(SHAPES)
    before = _fixable(run("scan", "--isolated", "--format", "json", ".", cwd=tmp_path).stdout)
    done = run("fix", "--isolated", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0].startswith("tpucheck fix: fixed 8 findings in 1 file (1 more rewritten where the finding stays); score ")
    listed = [line.split()[0] for line in out if line.startswith("    ")]
    assert len(listed) == 9  # 8 fixed + the GradScaler rename
    after = (tmp_path / "train.py").read_text()

    changed_old: set[int] = set()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, SHAPES.splitlines(), after.splitlines()).get_opcodes():
        if tag != "equal":
            changed_old.update(range(i1 + 1, i2 + 1))
    edited_lines = {int(position.split(":")[0]) for position in listed}
    # every listed edit changed its line, and every changed line is a listed edit
    assert edited_lines == changed_old - {4}, (edited_lines, changed_old)  # line 4: the GradScaler import, now unused, goes
    assert "from torch.cuda.amp import GradScaler" not in after
    # what was held back is listed apart, with its reason
    assert "Unsafe fixes not applied (3):" in done.stdout
    assert "train.py:15:17 CA003 unsafe: `Meter()` is not known to be a tensor or module" in done.stdout
    assert "train.py:20:1 DI001 unsafe: the default timeout becomes 30 minutes instead of NCCL's 10" in done.stdout
    assert "train.py:21:25 CA002 unsafe: True on any accelerator, and the code it selects uses NCCL" in done.stdout
    # the "nccl" kept in `backend` is DI001 too (issue 24), and no form the fix rewrites
    assert "Not fixed (2):\n  train.py:21:56 DI001 not a form this fix rewrites; fix it by hand\n  train.py:22:7 CA006 torch.accelerator has no counterpart of torch.cuda.memory_summary; fix it by hand" in done.stdout
    compile(after, "train.py", "exec")
    # and the rescan agrees: the fixed findings are gone, no new one came
    after_scan = _fixable(run("scan", "--isolated", "--format", "json", ".", cwd=tmp_path).stdout)
    fixed_rules = Counter(line.split()[1] for line in out if line.startswith("    ") and "(rewritten; the finding stays)" not in line)
    assert before - after_scan == fixed_rules and not after_scan - before
