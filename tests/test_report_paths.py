"""Paths print relative to the current folder in the formats people read (issue 14 point
4), absolute when the root is elsewhere; JSON keeps root-relative paths plus the root."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tpucheck.report.paths import display_prefix

ROOT = Path(__file__).resolve().parent.parent


def run(cwd: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "tpucheck", "scan", *args, "--no-cache", "-q"], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    pkg = tmp_path / "work" / "proj" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "train.py").write_text("import torch\n\ntorch.cuda.synchronize()\n")
    return tmp_path / "work"


def first_location(concise: str) -> str:
    return concise.splitlines()[0].split(": ", 1)[0]


def test_folder_below_here(project: Path) -> None:
    assert first_location(run(project, "proj", "--format", "concise")) == "proj/pkg/train.py:3:1"


def test_file_and_its_folder_print_the_same_path(project: Path) -> None:
    by_file = first_location(run(project, "proj/pkg/train.py", "--format", "concise"))
    by_folder = first_location(run(project, "proj/pkg", "--format", "concise"))
    assert by_file == by_folder == "proj/pkg/train.py:3:1"


def test_root_elsewhere_prints_absolute_paths(project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    expected = f"{(project / 'proj' / 'pkg' / 'train.py').resolve()}:3:1"
    assert first_location(run(elsewhere, str(project / "proj"), "--format", "concise")) == expected


def test_terminal_and_github_use_the_same_paths(project: Path) -> None:
    assert "proj/pkg/train.py:3:1" in run(project, "proj")
    assert "file=proj/pkg/train.py,line=3" in run(project, "proj", "--format", "github")


def test_json_keeps_root_relative_paths_and_the_root(project: Path) -> None:
    report = json.loads(run(project, "proj", "--format", "json"))
    assert [f["path"] for f in report["findings"]] == ["pkg/train.py"]
    assert report["root"] == "proj"


def test_display_prefix(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert display_prefix(str(tmp_path), cwd=str(tmp_path)) == ""
    assert display_prefix(str(tmp_path / "a" / "b"), cwd=str(tmp_path)) == "a/b/"
    assert display_prefix(str(tmp_path / "a"), cwd=str(tmp_path / "a" / "b")) == f"{tmp_path / 'a'}/"
