"""CLI manners (issue 14 point 5): -h everywhere, `scan` defaults to `.`, readable
metavars, whole command summaries, and `rules` giving the message room."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = [[], ["scan"], ["merge"], ["init"], ["explain"], ["rules"], ["rules", "test"], ["trace"]]


def run(*args: str, cwd: Path | None = None, columns: int = 80) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": str(columns), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "tpucheck", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=300)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "tpucheck")
def test_short_help_flag_and_readable_usage(command: list[str]) -> None:
    short, long = run(*command, "-h"), run(*command, "--help")
    assert short.returncode == 0, short.stderr
    assert short.stdout == long.stdout
    # no Python types, no braces around required arguments
    assert not re.search(r"<(?:str|int|float|path|list\[[^\]]*\])>", short.stdout), short.stdout
    assert "{" not in short.stdout.splitlines()[0]


def test_command_summaries_are_whole() -> None:
    listing = run("-h").stdout.split("Commands:", 1)[1]
    summaries = [line.split(None, 1)[1] for line in listing.splitlines() if line.strip()]
    assert len(summaries) == 7
    assert all(s.endswith(".") and "..." not in s for s in summaries), summaries


def test_scan_help_shows_examples() -> None:
    assert "tpucheck scan ./repo --fail-under 80" in run("scan", "-h").stdout


def test_scan_without_a_path_scans_the_current_folder(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    done = run("scan", "--format", "concise", "--no-cache", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("train.py:2:1: CA001 ")


def test_rules_gives_the_message_room() -> None:
    lines = run("rules", columns=80).stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert not any(line.rstrip().endswith("…") for line in lines)
    first = lines.index(next(line for line in lines if line.startswith("CA001 ")))
    assert lines[first].split() == ["CA001", "major", "cuda-synchronize"]
    assert lines[first + 1].strip().startswith("`torch.cuda.synchronize()`")


def test_rules_long_adds_the_fix() -> None:
    text = run("rules", "--long", "--category", "cuda-api", columns=120).stdout
    assert re.search(r"^CA001 +major cuda-synchronize +cuda-api · confidence high", text, re.MULTILINE)
    assert "fix: " in text


NOTHING = "(--allow-empty passes anyway)\n"


def test_a_scan_of_nothing_is_an_error_not_a_pass(tmp_path: Path) -> None:
    """A typo in a CI path (an empty folder) or a plain text file must not pass the gate
    for ever with "0 files, grade A" (issue 28)."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.txt").write_text("nothing to see\n")
    for target, where in (("empty", "empty"), ("notes.txt", "notes.txt")):
        done = run("scan", target, "--fail-under", "80", "--no-cache", cwd=tmp_path)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == f"tpucheck: error: nothing to analyze: no Python, notebook, C/C++/CUDA, manifest or build file in {where} {NOTHING}"
    allowed = run("scan", "empty", "--allow-empty", "--format", "concise", "--no-cache", cwd=tmp_path)
    assert (allowed.returncode, allowed.stderr) == (0, "")
    # files found, none of them analyzable: still nothing analyzed
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "a.py").write_text("def f(:\n")
    broken = run("scan", "bad", "--no-cache", "--no-prefilter", cwd=tmp_path)
    assert broken.returncode == 2
    assert broken.stderr == f"tpucheck: error: nothing to analyze: the 1 file found in bad could not be analyzed (1 error, 0 skipped) {NOTHING}"


def test_a_broken_tool_table_header_stops_the_gate(tmp_path: Path) -> None:
    """`[tool.tpucheck` without its bracket: the settings would silently vanish and the
    scan pass; it is a configuration error with its line instead."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.tpucheck\nfail-under = 80\n')
    (tmp_path / "train.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    done = run("scan", ".", "--format", "concise", "--no-cache", "-q", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "tpucheck: error: pyproject.toml:4: invalid TOML: Expected ']' at the end of a table declaration (column 15)\n"


def test_a_baseline_is_written_with_the_usual_file_mode(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    previous = os.umask(0o022)
    try:
        assert run("scan", ".", "--no-cache", "-q", "--write-baseline", "base.json", cwd=tmp_path).returncode == 0
        assert (tmp_path / "base.json").stat().st_mode & 0o777 == 0o644
        (tmp_path / "base.json").chmod(0o664)  # a rewrite keeps the mode it finds
        assert run("scan", ".", "--no-cache", "-q", "--write-baseline", "base.json", cwd=tmp_path).returncode == 0
        assert (tmp_path / "base.json").stat().st_mode & 0o777 == 0o664
    finally:
        os.umask(previous)
