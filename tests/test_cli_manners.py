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
