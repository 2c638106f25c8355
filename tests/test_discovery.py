"""Tests for the tree walk: each builds a small tree in tmp_path and asserts exact output."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tpucheck.discover import walk as discovery
from tpucheck.discover.walk import (
    DEFAULT_MAX_FILE_SIZE,
    Discovery,
    SourceFile,
    classify,
    discover,
)
from tpucheck.findings import ScanError, Skipped


def make(root: Path, *paths: str, content: str = "x = 1\n") -> None:
    """Create files (and their parents); a path ending in '/' makes an empty directory."""
    for rel in paths:
        target = root / rel
        if rel.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)


def paths(result: Discovery) -> list[str]:
    return [f.path for f in result.files]


def kinds(result: Discovery) -> dict[str, tuple[str, ...]]:
    return {f.path: f.kinds for f in result.files}


# --------------------------------------------------------------------------- classify


@pytest.mark.parametrize(
    ("relpath", "expected"),
    [
        ("a.py", ("python",)),
        ("pkg/stubs.pyi", ("python",)),
        ("nb/train.ipynb", ("notebook",)),
        ("csrc/k.cu", ("native",)),
        ("csrc/k.cuh", ("native",)),
        ("csrc/a.cpp", ("native",)),
        ("a.cc", ("native",)),
        ("a.cxx", ("native",)),
        ("a.c", ("native",)),
        ("a.h", ("native",)),
        ("a.hpp", ("native",)),
        ("a.hh", ("native",)),
        ("a.hxx", ("native",)),
        ("setup.py", ("python", "manifest")),
        ("sub/setup.py", ("python", "manifest")),
        ("requirements.txt", ("manifest",)),
        ("requirements-dev.txt", ("manifest",)),
        ("deps/requirements_gpu.txt", ("manifest",)),
        ("requirements/base.txt", ("manifest",)),
        ("x/requirements/cuda.txt", ("manifest",)),
        ("requirements.in", ("manifest",)),
        ("dev-requirements.in", ("manifest",)),
        ("constraints.txt", ("manifest",)),
        ("constraints-cu121.txt", ("manifest",)),
        ("pyproject.toml", ("manifest",)),
        ("setup.cfg", ("manifest",)),
        ("environment.yml", ("manifest",)),
        ("env/environment.yaml", ("manifest",)),
        ("conda.yml", ("manifest",)),
        ("conda-gpu.yaml", ("manifest",)),
        # Near misses: not analyzed at all.
        ("requirements/dev/extra.txt", ()),
        ("notes.txt", ()),
        ("dev-requirements.txt", ("manifest",)),
        ("README.md", ()),
        ("Makefile", ()),
        ("a.py.bak", ()),
        ("module.PY", ()),
        ("environment.json", ()),
        ("myconda.yml", ()),
        ("requirement.txt", ()),
    ],
)
def test_classify_builtin_kinds(relpath: str, expected: tuple[str, ...]) -> None:
    assert classify(relpath) == expected


def test_classify_extra_globs() -> None:
    globs = ["Dockerfile", "CMakeLists.txt", "*.sh", "**/*.yaml"]
    assert classify("Dockerfile", globs) == ("other",)
    assert classify("docker/Dockerfile", globs) == ("other",)
    assert classify("csrc/CMakeLists.txt", globs) == ("other",)
    assert classify("scripts/run.sh", globs) == ("other",)
    assert classify("configs/train.yaml", globs) == ("other",)
    # Other in addition to a builtin kind, in KINDS order, no duplicates.
    assert classify("environment.yaml", globs) == ("manifest", "other")
    assert classify("a.py", ["*.py"]) == ("python", "other")
    assert classify("setup.py", ["setup.py", "*.py"]) == ("python", "manifest", "other")
    # Without the globs none of these are analyzed.
    assert classify("Dockerfile") == ()
    assert classify("scripts/run.sh") == ()
    assert classify("Dockerfile.dev", globs) == ()


def test_classify_glob_with_slash_is_anchored_to_root() -> None:
    assert classify("docker/Dockerfile", ["docker/Dockerfile"]) == ("other",)
    assert classify("x/docker/Dockerfile", ["docker/Dockerfile"]) == ()


# --------------------------------------------------------------------------- basic walk


def test_walk_lists_kinds_sorted_and_ignores_unclassified(tmp_path: Path) -> None:
    make(
        tmp_path,
        "setup.py",
        "requirements.txt",
        "requirements/dev.txt",
        "pkg/__init__.py",
        "pkg/model.py",
        "pkg/ops/kernel.cu",
        "pkg/ops/kernel.h",
        "nb/demo.ipynb",
        "README.md",
        "Dockerfile",
        "csrc/CMakeLists.txt",
        "docs/",
    )
    result = discover(tmp_path, extra_globs=["Dockerfile", "CMakeLists.txt"])
    assert kinds(result) == {
        "Dockerfile": ("other",),
        "csrc/CMakeLists.txt": ("other",),
        "nb/demo.ipynb": ("notebook",),
        "pkg/__init__.py": ("python",),
        "pkg/model.py": ("python",),
        "pkg/ops/kernel.cu": ("native",),
        "pkg/ops/kernel.h": ("native",),
        "requirements.txt": ("manifest",),
        "requirements/dev.txt": ("manifest",),
        "setup.py": ("python", "manifest"),
    }
    assert paths(result) == sorted(paths(result))
    assert result.skipped == []
    assert result.errors == []
    model = next(f for f in result.files if f.path == "pkg/model.py")
    assert model == SourceFile("pkg/model.py", str(tmp_path / "pkg" / "model.py"), ("python",), 6)


def test_output_sorted_by_string_not_walk_order(tmp_path: Path) -> None:
    # '.' sorts before '/', so "a.py" comes before "a/b.py" even though a walk visits a/ first.
    make(tmp_path, "a/b.py", "a.py", "a-b.py", "B.py")
    assert paths(discover(tmp_path)) == ["B.py", "a-b.py", "a.py", "a/b.py"]


def test_relative_root_gives_absolute_abspath(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make(tmp_path, "proj/m.py")
    monkeypatch.chdir(tmp_path)
    result = discover("proj")
    assert result.files == [SourceFile("m.py", str(tmp_path / "proj" / "m.py"), ("python",), 6)]


def test_determinism(tmp_path: Path) -> None:
    make(tmp_path, "z.py", "a/b/c.py", "a/requirements.txt", "m/n.cu", "big.py")
    (tmp_path / "big.py").write_text("#" * 50)
    (tmp_path / "link.py").symlink_to("z.py")
    (tmp_path / "dangling.py").symlink_to("missing.py")
    first = discover(tmp_path, max_file_size=20)
    second = discover(tmp_path, max_file_size=20)
    assert first == second
    assert paths(first) == ["a/b/c.py", "a/requirements.txt", "m/n.cu", "z.py"]
    assert first.skipped == [
        Skipped("big.py", "larger than the 20 bytes limit (50 bytes)"),
        Skipped("link.py", "duplicate of z.py"),
    ]
    assert first.errors == [ScanError("dangling.py", "broken-symlink", "symlink target does not exist: missing.py")]


def test_directory_named_like_a_file(tmp_path: Path) -> None:
    make(tmp_path, "x.py/inner.py", "x.py/data.txt", "y.ipynb/")
    result = discover(tmp_path)
    assert paths(result) == ["x.py/inner.py"]
    assert result.skipped == []
    assert result.errors == []


def test_special_files_are_ignored(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no fifos on this platform")
    make(tmp_path, "a.py")
    os.mkfifo(tmp_path / "pipe.py")
    result = discover(tmp_path)
    assert paths(result) == ["a.py"]
    assert result.errors == []


# --------------------------------------------------------------------------- single-file root


def test_single_file_root(tmp_path: Path) -> None:
    make(tmp_path, "build/setup.py")
    # Inside an always-skipped dir, and gitignored: named explicitly, so scanned anyway.
    (tmp_path / ".gitignore").write_text("*.py\n")
    target = tmp_path / "build" / "setup.py"
    result = discover(target)
    assert result.files == [SourceFile("setup.py", str(target), ("python", "manifest"), 6)]
    assert result.skipped == []
    assert result.errors == []


def test_single_file_root_without_kind_and_too_big(tmp_path: Path) -> None:
    make(tmp_path, "notes.md", "big.py")
    (tmp_path / "big.py").write_text("#" * 4000)
    assert discover(tmp_path / "notes.md") == Discovery([], [], [])
    assert discover(tmp_path / "big.py", max_file_size=1024) == Discovery(
        [], [Skipped("big.py", "larger than the 1.0 KB limit (3.9 KB)")], []
    )
    assert discover(tmp_path / "notes.md", extra_globs=["*.md"]).files == [
        SourceFile("notes.md", str(tmp_path / "notes.md"), ("other",), 6)
    ]


def test_missing_root_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        discover(tmp_path / "nope")


# --------------------------------------------------------------------------- always-skipped dirs


def test_always_skipped_directories(tmp_path: Path) -> None:
    skipped_dirs = sorted(discovery.ALWAYS_SKIPPED_DIRS) + ["pkg.egg-info", "sub/deep/node_modules"]
    make(tmp_path, "keep.py", "sub/keep.py", *(f"{d}/inner.py" for d in skipped_dirs))
    result = discover(tmp_path)
    assert paths(result) == ["keep.py", "sub/keep.py"]
    assert result.skipped == []
    assert result.errors == []


def test_always_skipped_names_are_exact(tmp_path: Path) -> None:
    make(tmp_path, "builds/a.py", "my_build/b.py", "distutils_ext/c.py", "venvs_doc/d.py")
    assert paths(discover(tmp_path)) == ["builds/a.py", "distutils_ext/c.py", "my_build/b.py", "venvs_doc/d.py"]


def test_virtualenv_detected_by_pyvenv_cfg(tmp_path: Path) -> None:
    make(tmp_path, "app.py", "py311env/pyvenv.cfg", "py311env/lib/python3.11/torch_stub.py", "py311env/bin/activate.py")
    make(tmp_path, "tools/pyvenv.cfg.py")  # a file merely named like the marker is not one
    result = discover(tmp_path)
    assert paths(result) == ["app.py", "tools/pyvenv.cfg.py"]


def test_root_that_is_a_venv_or_skipped_name_is_still_scanned(tmp_path: Path) -> None:
    make(tmp_path, "build/pyvenv.cfg", "build/tool.py", "build/node_modules/x.py")
    result = discover(tmp_path / "build")
    assert paths(result) == ["tool.py"]


# --------------------------------------------------------------------------- .gitignore


def test_root_gitignore(tmp_path: Path) -> None:
    make(tmp_path, "a.py", "gen_pb2.py", "out/x.py", "src/out/y.py", "src/b.py", "top.py", "src/top.py")
    (tmp_path / ".gitignore").write_text("# generated\n*_pb2.py\nout/\n/top.py\n")
    assert paths(discover(tmp_path)) == ["a.py", "src/b.py", "src/top.py"]


def test_gitignore_negation(tmp_path: Path) -> None:
    make(tmp_path, "gen/a.py", "gen/keep.py", "x.py", "logs/keep.py")
    (tmp_path / ".gitignore").write_text("*.py\n!keep.py\nlogs/\n!logs/keep.py\n")
    # logs/ is excluded as a directory, and git cannot re-include a file inside an
    # excluded directory: logs/keep.py stays out.
    assert paths(discover(tmp_path)) == ["gen/keep.py"]


def test_gitignore_directory_pattern_only_matches_directories(tmp_path: Path) -> None:
    make(tmp_path, "cache/a.py", "sub/cache/b.py", "other/c.py")
    (tmp_path / "other" / "cache").write_text("not a directory\n")
    (tmp_path / "other" / "cache.py").write_text("x\n")
    (tmp_path / ".gitignore").write_text("cache/\ncache.py/\n")
    assert paths(discover(tmp_path)) == ["other/c.py", "other/cache.py"]


def test_nested_gitignore_is_relative_and_overrides(tmp_path: Path) -> None:
    make(tmp_path, "a.log.py", "gen.py", "pkg/gen.py", "pkg/local.py", "pkg/sub/local.py", "other/local.py", "pkg/only.py")
    (tmp_path / ".gitignore").write_text("gen.py\n")
    # In pkg/: re-include gen.py (deeper file wins), ignore local.py at any depth below
    # pkg, and /only.py anchored to pkg/ itself.
    (tmp_path / "pkg" / ".gitignore").write_text("!gen.py\nlocal.py\n/only.py\n")
    assert paths(discover(tmp_path)) == ["a.log.py", "other/local.py", "pkg/gen.py"]


def test_nested_gitignore_in_ignored_dir_is_not_read(tmp_path: Path) -> None:
    make(tmp_path, "vendor/lib.py", "vendor/keep.py")
    (tmp_path / ".gitignore").write_text("vendor/\n")
    (tmp_path / "vendor" / ".gitignore").write_text("!keep.py\n")
    assert paths(discover(tmp_path)) == []


def test_git_info_exclude(tmp_path: Path) -> None:
    make(tmp_path, "a.py", "scratch.py", "notes/b.py", ".git/info/")
    (tmp_path / ".git" / "info" / "exclude").write_text("scratch.py\nnotes/\n")
    (tmp_path / ".gitignore").write_text("!notes/\n")  # .gitignore outranks info/exclude
    assert paths(discover(tmp_path)) == ["a.py", "notes/b.py"]
    assert paths(discover(tmp_path, respect_gitignore=False)) == ["a.py", "notes/b.py", "scratch.py"]


def test_respect_gitignore_false(tmp_path: Path) -> None:
    make(tmp_path, "a.py", "gen/b.py", "sub/c.py", "node_modules/d.py")
    (tmp_path / ".gitignore").write_text("gen/\n")
    (tmp_path / "sub" / ".gitignore").write_text("*.py\n")
    assert paths(discover(tmp_path)) == ["a.py"]
    # Always-skipped dirs stay skipped: they are not a gitignore matter.
    assert paths(discover(tmp_path, respect_gitignore=False)) == ["a.py", "gen/b.py", "sub/c.py"]


# --------------------------------------------------------------------------- exclude


def test_exclude_globs(tmp_path: Path) -> None:
    make(
        tmp_path,
        "a.py",
        "msg.pb.py",
        "deep/x.pb.py",
        "tests/fixtures/f.py",
        "tests/test_a.py",
        "legacy/old.py",
        "legacy/sub/older.py",
        "src/legacy/new.py",
    )
    result = discover(tmp_path, exclude=["tests/fixtures/", "*.pb.py", "/legacy/**"])
    assert paths(result) == ["a.py", "src/legacy/new.py", "tests/test_a.py"]
    assert result.skipped == []


def test_exclude_applies_without_gitignore(tmp_path: Path) -> None:
    make(tmp_path, "a.py", "b.py", "third_party/c.py")
    (tmp_path / ".gitignore").write_text("a.py\n")
    result = discover(tmp_path, exclude=["third_party"], respect_gitignore=False)
    assert paths(result) == ["a.py", "b.py"]


def test_exclude_prunes_directories_without_listing_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make(tmp_path, "a.py", "huge/b.py", "huge/sub/c.py")
    listed: list[str] = []
    real_scandir = os.scandir

    def spy(path: str) -> object:
        listed.append(os.path.relpath(path, tmp_path))
        return real_scandir(path)

    monkeypatch.setattr(discovery.os, "scandir", spy)
    assert paths(discover(tmp_path, exclude=["huge/"])) == ["a.py"]
    assert listed == ["."]


# --------------------------------------------------------------------------- size limit


def test_size_limit_skips_and_reports(tmp_path: Path) -> None:
    make(tmp_path, "small.py", "exact.py", "big.ipynb", "big.txt")
    (tmp_path / "exact.py").write_text("#" * 100)
    (tmp_path / "big.ipynb").write_text("#" * 101)
    (tmp_path / "big.txt").write_text("#" * 1000)  # no kind: not reported at all
    result = discover(tmp_path, max_file_size=100)
    assert paths(result) == ["exact.py", "small.py"]
    assert result.skipped == [Skipped("big.ipynb", "larger than the 100 bytes limit (101 bytes)")]


def test_size_limit_message_in_megabytes(tmp_path: Path) -> None:
    make(tmp_path, "weights.py")
    with open(tmp_path / "weights.py", "wb") as handle:
        handle.truncate(int(21.3 * 1024 * 1024))
    result = discover(tmp_path)
    assert DEFAULT_MAX_FILE_SIZE == 5 * 1024 * 1024
    assert result.files == []
    assert result.skipped == [Skipped("weights.py", "larger than the 5.0 MB limit (21.3 MB)")]


# --------------------------------------------------------------------------- symlinks


def test_symlink_to_file_and_dir_inside_root_is_listed(tmp_path: Path) -> None:
    make(tmp_path, "lib/impl/core.py", "shared/util.py")
    (tmp_path / "lib" / "api.py").symlink_to("impl/core.py")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "common").symlink_to("../shared", target_is_directory=True)
    # shared/ is gitignored, so the only route to util.py is through the link.
    (tmp_path / ".gitignore").write_text("/shared/\n")
    result = discover(tmp_path)
    assert result.files == [
        SourceFile("lib/impl/core.py", str(tmp_path / "lib/impl/core.py"), ("python",), 6),
        SourceFile("pkg/common/util.py", str(tmp_path / "pkg/common/util.py"), ("python",), 6),
    ]
    # api.py is a second route to core.py: the real file wins.
    assert result.skipped == [Skipped("lib/api.py", "duplicate of lib/impl/core.py")]
    assert result.errors == []


def test_symlink_to_file_inside_root_is_listed_with_link_path(tmp_path: Path) -> None:
    make(tmp_path, "data/script.txt")
    (tmp_path / "run.py").symlink_to("data/script.txt")
    result = discover(tmp_path)
    assert result.files == [SourceFile("run.py", str(tmp_path / "run.py"), ("python",), 6)]


def test_symlinked_dir_to_already_walked_dir_is_pruned(tmp_path: Path) -> None:
    make(tmp_path, "zreal/m.py", "a/")
    (tmp_path / "a" / "alias").symlink_to("../zreal", target_is_directory=True)
    result = discover(tmp_path)
    # The link is met first in a depth-first walk, but the real route wins and the alias
    # is pruned silently.
    assert paths(result) == ["zreal/m.py"]
    assert result.skipped == []
    assert result.errors == []


def test_symlinks_outside_root_are_skipped(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    make(outside, "secret.py", "lib/x.py", "notes.md")
    root = tmp_path / "root"
    make(root, "a.py")
    (root / "ext.py").symlink_to(outside / "secret.py")
    (root / "extlib").symlink_to(outside / "lib", target_is_directory=True)
    (root / "up").symlink_to("..", target_is_directory=True)
    (root / "notes.md").symlink_to(outside / "notes.md")  # no kind: silent
    result = discover(root)
    assert paths(result) == ["a.py"]
    assert result.skipped == [
        Skipped("ext.py", "symlink outside the scanned root"),
        Skipped("extlib", "symlink outside the scanned root"),
        Skipped("up", "symlink outside the scanned root"),
    ]
    assert result.errors == []


def test_root_reached_through_symlink(tmp_path: Path) -> None:
    make(tmp_path, "real/a.py", "real/sub/b.py")
    (tmp_path / "real" / "sub" / "back").symlink_to("../a.py")
    (tmp_path / "alias").symlink_to("real", target_is_directory=True)
    result = discover(tmp_path / "alias")
    assert result.files == [
        SourceFile("a.py", str(tmp_path / "alias" / "a.py"), ("python",), 6),
        SourceFile("sub/b.py", str(tmp_path / "alias" / "sub" / "b.py"), ("python",), 6),
    ]
    # "back" has no kind by its own name, so it is not a second route to a.py.
    assert result.skipped == []


def test_broken_symlink_is_an_error(tmp_path: Path) -> None:
    make(tmp_path, "a.py")
    (tmp_path / "gone.py").symlink_to("nowhere/gone.py")
    (tmp_path / "gonedir").symlink_to(tmp_path / "missing_dir", target_is_directory=True)
    result = discover(tmp_path)
    assert paths(result) == ["a.py"]
    assert result.errors == [
        ScanError("gone.py", "broken-symlink", "symlink target does not exist: nowhere/gone.py"),
        ScanError("gonedir", "broken-symlink", f"symlink target does not exist: {tmp_path / 'missing_dir'}"),
    ]
    assert result.skipped == []


def test_ignored_broken_symlink_is_silent(tmp_path: Path) -> None:
    make(tmp_path, "a.py")
    (tmp_path / "gone.py").symlink_to("nowhere.py")
    (tmp_path / ".gitignore").write_text("gone.py\n")
    result = discover(tmp_path)
    assert paths(result) == ["a.py"]
    assert result.errors == []


def test_self_loop_symlink_is_an_error(tmp_path: Path) -> None:
    make(tmp_path, "a.py")
    (tmp_path / "loop.py").symlink_to("loop.py")
    (tmp_path / "ping").symlink_to("pong")
    (tmp_path / "pong").symlink_to("ping")
    result = discover(tmp_path)
    assert paths(result) == ["a.py"]
    assert result.errors == [
        ScanError("loop.py", "broken-symlink", "symlink loop (too many levels of symbolic links): loop.py"),
        ScanError("ping", "broken-symlink", "symlink loop (too many levels of symbolic links): pong"),
        ScanError("pong", "broken-symlink", "symlink loop (too many levels of symbolic links): ping"),
    ]


def test_directory_cycle_terminates(tmp_path: Path) -> None:
    make(tmp_path, "top.py", "a/b.py", "a/c/d.py")
    (tmp_path / "a" / "loop").symlink_to("..", target_is_directory=True)
    (tmp_path / "a" / "c" / "up").symlink_to("..", target_is_directory=True)
    (tmp_path / "a" / "c" / "self").symlink_to(".", target_is_directory=True)
    result = discover(tmp_path)
    assert paths(result) == ["a/b.py", "a/c/d.py", "top.py"]
    assert result.skipped == []
    assert result.errors == []


def test_two_links_to_same_dir_smallest_path_wins(tmp_path: Path) -> None:
    make(tmp_path, "hidden/m.py")
    (tmp_path / ".gitignore").write_text("hidden/\n")
    (tmp_path / "zz").symlink_to("hidden", target_is_directory=True)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "aa").symlink_to("../hidden", target_is_directory=True)
    result = discover(tmp_path)
    assert paths(result) == ["sub/aa/m.py"]
    assert result.skipped == []


def test_duplicate_file_via_symlink(tmp_path: Path) -> None:
    make(tmp_path, "pkg/real.py")
    (tmp_path / "a_link.py").symlink_to("pkg/real.py")
    (tmp_path / "z_link.py").symlink_to("pkg/real.py")
    (tmp_path / "hop.py").symlink_to("z_link.py")
    result = discover(tmp_path)
    assert paths(result) == ["pkg/real.py"]
    assert result.skipped == [
        Skipped("a_link.py", "duplicate of pkg/real.py"),
        Skipped("hop.py", "duplicate of pkg/real.py"),
        Skipped("z_link.py", "duplicate of pkg/real.py"),
    ]


def test_duplicate_between_links_smallest_path_wins(tmp_path: Path) -> None:
    make(tmp_path, "store/blob.txt")
    (tmp_path / "b.py").symlink_to("store/blob.txt")
    (tmp_path / "a.py").symlink_to("store/blob.txt")
    result = discover(tmp_path)
    assert paths(result) == ["a.py"]
    assert result.skipped == [Skipped("b.py", "duplicate of a.py")]


def test_symlinked_dir_with_skipped_name_is_pruned(tmp_path: Path) -> None:
    make(tmp_path, "real_env/lib.py", "src/a.py")
    (tmp_path / "src" / "node_modules").symlink_to("../real_env", target_is_directory=True)
    (tmp_path / "src" / "venv").symlink_to("/", target_is_directory=True)
    result = discover(tmp_path)
    assert paths(result) == ["real_env/lib.py", "src/a.py"]
    assert result.skipped == []  # pruned by name before anything is resolved


# --------------------------------------------------------------------------- unreadable


def test_unreadable_directory_with_chmod(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root can list any directory")
    make(tmp_path, "a.py", "locked/b.py", "z/c.py")
    locked = tmp_path / "locked"
    locked.chmod(0)
    try:
        result = discover(tmp_path)
    finally:
        locked.chmod(0o755)
    assert paths(result) == ["a.py", "z/c.py"]
    assert [(e.path, e.kind) for e in result.errors] == [("locked", "unreadable")]


def test_unreadable_directory_reported_and_walk_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Simulated so that it also runs as root, where chmod cannot make a directory unreadable.
    make(tmp_path, "a.py", "locked/b.py", "z/c.py")
    real_scandir = os.scandir
    locked = str(tmp_path / "locked")

    def scandir(path: str) -> object:
        if path == locked:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(discovery.os, "scandir", scandir)
    result = discover(tmp_path)
    assert paths(result) == ["a.py", "z/c.py"]
    assert result.errors == [ScanError("locked", "unreadable", "cannot list directory: Permission denied")]


def test_discovery_and_the_parsers_agree_on_manifest_names() -> None:
    from tpucheck.analyze.manifests import is_manifest

    for name in ("setup.py", "Setup.py", "pyproject.toml", "Requirements.txt", "requirements/dev.in", "environment.yml", "notes.txt"):
        assert ("manifest" in classify(name)) == is_manifest(name), name
    assert "manifest" not in classify("Setup.py")
    assert "manifest" in classify("Requirements.txt")
