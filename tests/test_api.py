"""The Python API gives a library caller what the CLI gives (issue 13 point 1), and the
settings are resolved once: the file, then the flags, key by key."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tpucheck
from tpucheck.config.file import load_config
from tpucheck.config.settings import Flags, SettingsError, resolve_settings
from tpucheck.report import json_report
from tpucheck.result import ScanResult

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(
        "import torch\n\n"
        "torch.cuda.synchronize()\n"
        "x = torch.zeros(3).cuda()\n"
        "torch.cuda.empty_cache()  # tpucheck: ignore[CA007] -- measured: harmless\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_train.py").write_text("import torch\n\ntorch.cuda.synchronize()\n")
    (tmp_path / "tpucheck.toml").write_text(
        'select = ["CA", "DP"]\n'
        'target = "xla"\n'
        '[per-file-ignores]\n"tests/*" = ["CA001"]\n'
    )
    return tmp_path


def cli_json(root: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "tpucheck", "scan", str(root), "--format", "json", "--no-cache", "-q", *args],
        capture_output=True, text=True, env=env, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def api_json(result: ScanResult) -> str:
    stream = io.StringIO()
    json_report.write(result, stream)
    return stream.getvalue()


def test_api_equals_cli(project: Path) -> None:
    result = tpucheck.scan(str(project))
    assert api_json(result) == cli_json(project)
    assert result.target == "xla"
    assert [(f.rule, f.path, f.span.line) for f in result.findings] == [("CA001", "pkg/train.py", 3), ("CA003", "pkg/train.py", 4)]
    assert sorted((f.rule, f.suppression_reason) for f in result.suppressed) == [
        ("CA001", "per-file-ignores: tests/*"),
        ("CA007", "measured: harmless"),
    ]


def test_api_with_flags_equals_cli_with_flags(project: Path) -> None:
    settings = tpucheck.load_settings(str(project), tpucheck.Flags(target="torchtpu", ignore=("CA003",)))
    assert api_json(tpucheck.scan(str(project), settings)) == cli_json(project, "--target", "torchtpu", "--ignore", "CA003")


def test_flags_win_over_the_file_key_by_key(project: Path) -> None:
    config = load_config(project)
    from_file = resolve_settings(config)
    assert (from_file.select, from_file.target, from_file.exclude) == (("CA", "DP"), "xla", ())
    flagged = resolve_settings(config, Flags(select=("HS",), exclude=("tests/",)))
    assert (flagged.select, flagged.target, flagged.exclude) == (("HS",), "xla", ("tests/",))
    assert flagged.per_file_ignores == (("tests/*", ("CA001",)),)


def test_bad_flag_is_a_settings_error(project: Path) -> None:
    with pytest.raises(SettingsError, match="unknown target 'tpu9'"):
        tpucheck.load_settings(str(project), tpucheck.Flags(target="tpu9"))
