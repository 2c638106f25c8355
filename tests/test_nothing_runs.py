"""Nothing in a scanned tree is executed or imported, and no rule file constructs objects.

Every planted file would write its own marker file (an absolute path under tmp_path) the
moment Python ran or imported it; the scans (in-process, and the CLI started from inside
the scanned tree) must leave every marker absent while still reporting what the files
contain.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import notebook_json
from test_hostile import GOOD_RULE
from test_scan_cli import SOURCE_ROOT

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import RuleFileError, load_ruleset


def _writes(marker: Path) -> str:
    """One line of Python that leaves evidence of having run."""
    return f"open({str(marker)!r}, 'w').write('ran')\n"


def _plant(root: Path, markers: Path) -> None:
    """Each planted file names its own marker, so a failure says which one ran."""
    planted = {
        "setup.py": (
            "import os\n"
            + _writes(markers / "setup")
            + "from setuptools import setup\n"
            "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
            "setup(\n"
            "    name='fused',\n"
            "    ext_modules=[CUDAExtension('fused_cuda', ['csrc/fused.cu'])],\n"
            "    cmdclass={'build_ext': BuildExtension},\n"
            "    install_requires=['flash-attn>=2'],\n"
            ")\n"
        ),
        "conftest.py": "import torch\n" + _writes(markers / "conftest") + "torch.cuda.synchronize()\n",
        "pkg/__init__.py": "import torch\n" + _writes(markers / "init") + "torch.cuda.synchronize()\n",
        "sitecustomize.py": _writes(markers / "sitecustomize"),
        "usercustomize.py": _writes(markers / "usercustomize"),
        "evil.pth": "import os; " + _writes(markers / "pth"),
        # Shadows of modules the CLI imports: `python -m` puts the current directory first.
        "yaml.py": _writes(markers / "yaml"),
        "typer.py": _writes(markers / "typer"),
        "json.py": _writes(markers / "json"),
        "nb/run.ipynb": notebook_json(
            ("code", ["import torch\n", _writes(markers / "notebook"), "torch.cuda.synchronize()\n"]),
            ("code", [f"!touch {markers / 'notebook-shell'}\n", f"%run {markers / 'never.py'}\n"]),
        ),
        "environment.yml": f"name: x\ndependencies:\n  - !!python/object/apply:os.system ['touch {markers / 'conda'}']\n",
    }
    for name, content in planted.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


@pytest.fixture()
def tree(tmp_path: Path) -> tuple[Path, Path]:
    root, markers = tmp_path / "repo", tmp_path / "markers"
    root.mkdir()
    markers.mkdir()
    _plant(root, markers)
    return root, markers


def _assert_nothing_ran(markers: Path) -> None:
    assert sorted(os.listdir(markers)) == []


def test_in_process_scan_runs_nothing_and_still_reports(tree: tuple[Path, Path]) -> None:
    root, markers = tree
    result = scan(str(root), load_ruleset(), ScanOptions(jobs=1))
    _assert_nothing_ran(markers)
    found = {(f.path, f.rule) for f in result.findings}
    assert {("setup.py", "CK001"), ("setup.py", "DEP002"), ("conftest.py", "CA001"), ("pkg/__init__.py", "CA001"), ("nb/run.ipynb", "CA001")} <= found
    assert [(e.path, e.kind) for e in result.errors] == [("environment.yml", "manifest-error")]
    assert "python/object/apply:os.system" in result.errors[0].message


def test_cli_started_inside_the_tree_runs_nothing(tree: tuple[Path, Path]) -> None:
    """cwd is the scanned tree, as when a user runs `python -m tpucheck scan .` in their repository."""
    root, markers = tree
    env = {**os.environ, "PYTHONPATH": SOURCE_ROOT}
    done = subprocess.run([sys.executable, "-m", "tpucheck", "scan", ".", "--format", "json", "-q", "--no-cache"], check=False, capture_output=True, text=True, cwd=root, env=env)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stderr
    _assert_nothing_ran(markers)
    report = json.loads(done.stdout)
    assert ("setup.py", "CK001") in {(f["path"], f["rule"]) for f in report["findings"]}


# --------------------------------------------------------------------------- rule files

TAGGED = {
    "object-apply": "!!python/object/apply:os.system ['touch {marker}']",
    "name": "!!python/name:os.system",
    "object-new": "!!python/object/new:subprocess.Popen [['touch', '{marker}']]",
}


@pytest.mark.parametrize("tag", sorted(TAGGED))
def test_rule_file_with_python_tags_is_refused(tag: str, tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    rule = GOOD_RULE.format(id="ZZ001", name="zz-sync", match="call: torch.cuda.synchronize")
    text = "rules:\n" + rule.replace("message: m", "message: " + TAGGED[tag].format(marker=marker))
    path = tmp_path / "evil.yaml"
    path.write_text(text)
    with pytest.raises(RuleFileError) as caught:
        load_ruleset([path])
    assert not marker.exists()
    [problem] = caught.value.problems
    assert (problem.file, problem.line) == (str(path), 8)  # the `message:` line
    assert problem.message.startswith("invalid YAML") and "python/" in problem.message
