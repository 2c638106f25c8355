"""scripts/fix_proof.py (issue 26 point 5): on a copy of a repository, fix (safe, then
unsafe), check parse, idempotence and rescan, and run a CPU check before and after."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import fix_proof  # noqa: E402

TRAIN = """\
import torch

def step(log):
    torch.cuda.empty_cache()
    log(torch.cuda.memory_allocated())
    print(torch.cuda.is_available())

step(print)
"""


CPU_ONLY_TORCH = """\
from types import SimpleNamespace


def _raises(*args):
    raise RuntimeError("Cannot access accelerator device when none is available.")


# as a CPU-only torch 2.13 behaves: torch.cuda's memory calls do nothing, torch.accelerator's raise
cuda = SimpleNamespace(empty_cache=lambda: None, memory_allocated=lambda: 0, is_available=lambda: False)
accelerator = SimpleNamespace(empty_cache=_raises, memory_allocated=_raises, is_available=lambda: False)
"""


def test_a_copy_is_fixed_checked_and_its_hunks_listed(tmp_path: Path) -> None:
    source = tmp_path / "owner__repo"
    source.mkdir()
    (source / "train.py").write_text(TRAIN)
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    (stubs / "torch.py").write_text(CPU_ONLY_TORCH)
    repo = {"repo": "owner/repo", "checks": {"run": f"PYTHONPATH={stubs} {sys.executable} train.py"}}
    result = fix_proof.prove(repo, source, tmp_path / "work")
    safe = result["safe"]
    assert (safe["all_parse"], safe["idempotent"], safe["fixed_confirmed_by_rescan"]) == (True, True, True)
    assert safe["states"] == {"fixed": 3}
    assert [h["old_lines"] for h in safe["hunks"]] == [[3, 7]]
    assert [o["rule"] for o in safe["hunks"][0]["outcomes"]] == ["CA007", "CA006", "CA002"]
    # the fixed code runs as the original did wherever the check runs
    check = safe["checks"]["run"]
    assert check["same"] and check["before"] == {"returncode": 0, "output": "0\nFalse\n"}, check
    assert (source / "train.py").read_text() == TRAIN  # the copy was fixed, not the source
