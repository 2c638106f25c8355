"""Files git tracks are scanned even when `.gitignore` matches them (issue 12 point 5).

Each test builds a real repository with the `git` program (the test's own fixture; the
scanner itself never runs git) and asserts the exact file list of the walk.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tpucheck.discover.gitindex import tracked_paths
from tpucheck.discover.walk import discover

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git program to build fixtures")


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root, check=True, capture_output=True,
    )  # fmt: skip


def write(root: Path, rel: str, text: str = "x = 1\n") -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A work tree whose .gitignore hides a tracked header and a tracked generated dir."""
    git(tmp_path, "init", "-q")
    write(tmp_path, "train.py")
    write(tmp_path, "csrc/kernel.cuh", "__global__ void k() {}\n")
    write(tmp_path, "gen/tracked.py")
    git(tmp_path, "add", ".")
    write(tmp_path, ".gitignore", "*.cuh\ngen/\n")
    git(tmp_path, "add", ".gitignore")
    git(tmp_path, "commit", "-q", "-m", "fixture")
    # untracked and ignored: must stay out
    write(tmp_path, "csrc/scratch.cuh", "__global__ void s() {}\n")
    write(tmp_path, "gen/untracked.py")
    write(tmp_path, "gen/deeper/untracked.py")
    return tmp_path


def test_tracked_files_beat_gitignore(repo: Path) -> None:
    assert [f.path for f in discover(repo).files] == ["csrc/kernel.cuh", "gen/tracked.py", "train.py"]


def test_exclude_still_drops_tracked_files(repo: Path) -> None:
    assert [f.path for f in discover(repo, exclude=["gen/"]).files] == ["csrc/kernel.cuh", "train.py"]


def test_without_gitignore_everything_is_walked(repo: Path) -> None:
    assert [f.path for f in discover(repo, respect_gitignore=False).files] == [
        "csrc/kernel.cuh", "csrc/scratch.cuh", "gen/deeper/untracked.py", "gen/tracked.py", "gen/untracked.py",
        "train.py",
    ]  # fmt: skip


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_index_versions_read_like_git(repo: Path, version: str) -> None:
    git(repo, "update-index", "--index-version", version)
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=repo, check=True, capture_output=True).stdout
    assert tracked_paths(str(repo)) == frozenset(p for p in listed.decode().split("\0") if p)


def test_linked_worktree_reads_its_own_index(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    other = tmp_path_factory.mktemp("linked") / "wt"
    git(repo, "worktree", "add", "-q", str(other))
    assert (other / ".git").is_file()
    assert [f.path for f in discover(other).files] == ["csrc/kernel.cuh", "gen/tracked.py", "train.py"]


def test_unreadable_index_falls_back_to_the_walk(repo: Path) -> None:
    (repo / ".git" / "index").write_bytes(b"DIRC\x00\x00\x00\x09garbage")
    assert tracked_paths(str(repo)) is None
    assert [f.path for f in discover(repo).files] == ["train.py"]


def test_repository_configuration_is_never_run(repo: Path) -> None:
    marker = repo.parent / "fsmonitor-ran"
    git(repo, "config", "core.fsmonitor", f"touch {marker}")
    discover(repo)
    assert not marker.exists()


def test_not_a_work_tree(tmp_path: Path) -> None:
    write(tmp_path, "a.py")
    assert tracked_paths(str(tmp_path)) is None
