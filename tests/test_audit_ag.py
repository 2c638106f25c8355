"""What audit AG (docs/audits/audit-ag.md) found wrong that this round fixes, with a probe
that failed at `e8f8103` and look-alikes that keep their reading.

A file pytest would collect by its name (`main_test.py`) that reads a command line and
gives pytest nothing to collect (no `test*` function, no `Test*` class, no framework
import, no numerics check) is a script: mae_st's test-stage entry point. What it imports
(`engine_test.py`) is then product code too (`role.imported`)."""

from __future__ import annotations

from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

FILES = {
    "main_test.py": (
        "import argparse\nimport torch\nfrom mae.engine_test import test\n\n\ndef main(args):\n"
        "    model = torch.nn.Linear(2, 2).cuda()\n    return test(model)\n\n\n"
        'if __name__ == "__main__":\n    main(argparse.ArgumentParser().parse_args())\n'
    ),
    "mae/__init__.py": "",
    "mae/engine_test.py": 'import torch\n\n\ndef test(model):\n    x = torch.zeros(2, device="cuda")\n    return model(x)\n',
    # pytest collects its `test_forward`: a test, though it reads a command line
    "check_test.py": "import argparse\nimport torch\n\n\ndef test_forward():\n    x = torch.zeros(2).cuda()\n    return x\n\n\nargparse.ArgumentParser()\n",
}


def test_a_test_named_entry_point_that_gives_pytest_nothing_is_a_script(tmp_path: Path) -> None:
    for path, text in FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    found = sorted((f.path, f.span.line, f.span.column, f.severity, f.role, tuple(r.rule for r in f.because)) for f in result.findings if f.rule == "CA003")
    assert found == [
        ("check_test.py", 6, 24, "minor", "test", ("role.test", "role.test-function", "severity.supporting")),
        ("mae/engine_test.py", 5, 31, "major", "library", ("role.imported",)),
        ("main_test.py", 7, 35, "major", "script", ("role.script",)),
    ]


HELPER_FILES = {
    "test.py": (
        "import torch\nfrom utils.common import merge_config\n\n"
        'if __name__ == "__main__":\n    args = merge_config()\n    torch.distributed.init_process_group(backend="nccl")\n'
    ),
    "utils/__init__.py": "",
    "utils/common.py": "import argparse\n\n\ndef merge_config():\n    return argparse.ArgumentParser().parse_args()\n",
}


def helper_rows(root: Path, files: dict[str, str]) -> set[tuple[str, str, str]]:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return {(f.path, f.severity, f.role) for f in result.findings if f.rule == "DI001"}


def test_a_test_py_whose_helper_parses_its_command_line_is_a_script(tmp_path: Path) -> None:
    """Audit AN (Ultra-Fast-Lane-Detection): `test.py` is the README's evaluation command;
    its arguments come from `merge_config()` in a project module that imports argparse."""
    assert helper_rows(tmp_path, HELPER_FILES) == {("test.py", "major", "script")}


def test_a_test_py_without_a_main_block_stays_a_test(tmp_path: Path) -> None:
    """Adversarial: the same import in a file that does not run as a program."""
    files = {**HELPER_FILES, "test.py": HELPER_FILES["test.py"].replace('if __name__ == "__main__":\n    ', "def check():\n    ")}
    assert helper_rows(tmp_path, files) == {("test.py", "minor", "test")}
