"""Code only an old torch imports (analyze/version_tests.py, analyze/dead_code.py): audit
AM found HRNet's vendored InPlace-ABN, imported only under `torch.__version__.startswith(
'0')`, reported as 23 findings no target can reach. The look-alikes keep their findings."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree

from tpucheck.analyze.entry_json import result_from_json, result_to_json
from tpucheck.analyze.imports import import_facts
from tpucheck.analyze.version_tests import version_test
from tpucheck.engine import ScanOptions, scan
from tpucheck.findings import FileResult
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
VERSIONS = RULESET.judgement.guards.torch_versions

HELPER = """\
import torch

if {test}:
    from .old_bn.functions import sync_stats
    BatchNorm = None
else:
    BatchNorm = torch.nn.SyncBatchNorm
"""

OLD_BN = """\
import torch
from torch.utils.cpp_extension import load

_backend = load(name="old_bn", sources=["src/old_bn_cuda.cu"])


def sync_stats(x):
    return torch.cuda.comm.reduce_add([x])
"""

KERNEL = """\
__global__ void stats_kernel(float *x) { x[threadIdx.x] = 0; }
"""


def findings(root: Path, test: str, extra: dict[str, str] | None = None) -> tuple[set[tuple[str, str]], set[tuple[str, str, str]]]:
    files = {
        "net/__init__.py": "",
        "net/helper.py": HELPER.format(test=test),
        "net/old_bn/__init__.py": "",
        "net/old_bn/functions.py": OLD_BN,
        "net/old_bn/src/old_bn_cuda.cu": KERNEL,
        "train.py": "import torch\nfrom net.helper import BatchNorm\n\nif __name__ == '__main__':\n    print(BatchNorm)\n",
        **(extra or {}),
    }
    write_tree(root, files)
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    kept = {(f.path, f.rule) for f in result.findings}
    aside = {(f.path, f.rule, f.because[-1].rule) for f in result.set_aside}
    return kept, aside


def test_a_package_only_torch_0_imports_is_set_aside_with_its_kernels(tmp_path: Path) -> None:
    kept, aside = findings(tmp_path, "torch.__version__.startswith('0')")
    assert not any(path.startswith("net/old_bn/") for path, _ in kept)
    assert ("net/old_bn/functions.py", "CA019", "set-aside.dead-version") in aside
    assert ("net/old_bn/src/old_bn_cuda.cu", "CK003", "set-aside.dead-version") in aside


def test_the_reason_names_the_test_and_where_it_is(tmp_path: Path) -> None:
    findings(tmp_path, "torch.__version__.startswith('0')")
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    reason = next(f.because[-1] for f in result.set_aside if f.rule == "CA019")
    assert reason.evidence.startswith("imported only under `torch.__version__.startswith('0')` at net/helper.py:3")


def test_the_else_of_a_test_every_target_passes_is_dead_too(tmp_path: Path) -> None:
    helper = "import torch\n\nif torch.__version__ >= '1.0':\n    BatchNorm = torch.nn.SyncBatchNorm\nelse:\n    from .old_bn.functions import sync_stats\n"
    _, aside = findings(tmp_path, "True", {"net/helper.py": helper})
    assert ("net/old_bn/functions.py", "CA019", "set-aside.dead-version") in aside


@pytest.mark.parametrize(
    "test",
    [
        "torch.__version__ < '2.12'",  # true on 2.11, false on 2.13: some target takes it
        "transformers.__version__.startswith('0')",  # another package's version: not decided here
        "args.legacy_bn",  # an option
        "torch.__version__.startswith('2')",  # every target takes it
    ],
)
def test_a_side_some_target_may_take_keeps_its_findings(tmp_path: Path, test: str) -> None:
    """Adversarial: an undecided, foreign or true test leaves the package on the path."""
    kept, aside = findings(tmp_path, test)
    assert ("net/old_bn/functions.py", "CA019") in kept
    assert not any(reason == "set-aside.dead-version" for _, _, reason in aside)


def test_a_package_a_live_import_also_reaches_keeps_its_findings(tmp_path: Path) -> None:
    """Adversarial: the dead side imports it, and so does a module every torch runs."""
    kept, _ = findings(tmp_path, "torch.__version__.startswith('0')", {"net/fast.py": "from net.old_bn.functions import sync_stats\n"})
    assert ("net/old_bn/functions.py", "CA019") in kept


@pytest.mark.parametrize(
    ("test", "value"),
    [
        ("torch.__version__.startswith('0')", False),
        ("torch.__version__[0] == '0'", False),
        ("int(torch.__version__.split('.')[0]) >= 2", True),
        ("version.parse(torch.__version__) < version.parse('1.8')", False),
        ("LooseVersion(torch.__version__) >= LooseVersion('1.7.0')", True),
        ("float(torch.__version__[:3]) < 1.7", False),
        ("not torch.__version__.startswith('1.')", True),
        ("torch.__version__ < '2.12'", None),
        ("torch.__version__.startswith('0') or use_legacy", None),
        ("sys.version_info < (3, 8)", None),
        ("__import__('os').system('x')", None),
    ],
)
def test_version_tests_are_read_not_run(test: str, value: bool | None) -> None:
    assert version_test(test, VERSIONS) is value


def test_dead_imports_and_checks_survive_the_cache() -> None:
    """The availability checks a module defines were lost on a rescan before: the cache
    did not keep them."""
    text = HELPER.format(test="torch.__version__.startswith('0')") + "\n\ndef cuda_ok():\n    return torch.cuda.is_available()\n"
    facts = import_facts(text, (), RULESET.judgement.guards.availability_calls, VERSIONS)
    assert facts.checks == ("cuda_ok()",)
    assert [i.module for i in facts.dead] == ["old_bn.functions.sync_stats"]
    assert all(i.module != "old_bn.functions.sync_stats" for i in facts.imports)
    result = FileResult("net/helper.py", "python", imports=facts)
    back = result_from_json("net/helper.py", "python", result_to_json(result))
    assert back.imports == facts
