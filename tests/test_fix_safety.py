"""Never worse (issue 15): conflicts and code that would not parse are skipped and
reported, suppressed and baselined findings are left alone, notebooks are fixed cell by
cell, writes are atomic, and a second run changes nothing."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import libcst as cst
import pytest
from fixtools import fix_project

import tpucheck
from tpucheck.config.settings import Flags
from tpucheck.fix import registry, runner
from tpucheck.fix.base import Codemod, Edit, FileFix
from tpucheck.gates.baseline import write_baseline

MANY = """\
    import argparse
    import torch
    import torch.distributed as dist

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    model = Net().cuda()
    scaler = torch.cuda.amp.GradScaler()
    with torch.cuda.amp.autocast():
        loss = model(torch.randn(2, device="cuda"))
    torch.cuda.synchronize()
    dist.init_process_group("nccl")
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda:0")
    print(torch.cuda.max_memory_allocated())
    """


class _Copycat(Codemod):
    """Rewrites `torch.cuda.synchronize()` too, claiming no finding: a conflict."""

    name = "copycat"

    def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        if isinstance(original, cst.Call) and "torch.cuda.synchronize" in fix.qualified(original.func):
            return Edit(cst.parse_expression("wait()"), (), "")
        return None


class _Breaker(Codemod):
    """Produces `class`, which libcst prints and Python rejects."""

    name = "torch-accelerator"

    def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        if isinstance(original, cst.Call) and (target := fix.take(self.name, original)) is not None:
            return Edit(cst.Name("class"), (target,), "broken")
        return None


def test_a_second_run_changes_nothing(tmp_path: Path) -> None:
    for unsafe in (False, True):
        first = fix_project(tmp_path, {"mod.py": MANY}, unsafe=unsafe, write=True)
        assert first.changed_files and first.written
        settings = tpucheck.load_settings(str(tmp_path), Flags(no_cache=True), isolated=True)
        second = runner.run_fix([str(tmp_path)], settings, unsafe=unsafe, write=True)
        assert second.changed_files == [], [c.diff() for c in second.changed_files]


def test_conflicting_edits_are_both_skipped_and_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "make_codemods", lambda: [*registry.make_codemods(), _Copycat()])
    report = fix_project(tmp_path, {"mod.py": "import torch\ntorch.cuda.synchronize()\ntorch.cuda.empty_cache()\n"})
    assert report.files[0].after == "import torch\ntorch.cuda.synchronize()\nif torch.accelerator.is_available():\n    torch.accelerator.empty_cache()\n"
    assert [(o.target.finding.rule, o.fixed, o.note) for o in report.outcomes] == [
        ("CA001", False, "conflict: torch-accelerator and copycat both rewrite this code; fix it by hand"),
        ("CA007", True, "torch.cuda.empty_cache() -> torch.accelerator.empty_cache() where an accelerator is there (torch.cuda.empty_cache did nothing without CUDA)"),
    ]


def test_an_edit_that_would_not_parse_is_skipped_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def codemods() -> list[Codemod]:
        return [_Breaker() if c.name == "torch-accelerator" else c for c in registry.make_codemods()]

    monkeypatch.setattr(runner, "make_codemods", codemods)
    report = fix_project(tmp_path, {"mod.py": "import torch\ntorch.cuda.synchronize()\nx = torch.ones(2).cuda()\n"})
    assert report.files[0].after == "import torch\ntorch.cuda.synchronize()\nx = torch.ones(2).to(torch.accelerator.current_accelerator())\n"
    assert ("CA001", False, "the fix would produce code that does not parse: skipped; fix it by hand") in [
        (o.target.finding.rule, o.fixed, o.note) for o in report.outcomes
    ]


def test_a_codemod_that_raises_costs_only_its_own_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class _Raiser(Codemod):
        name = "torch-accelerator"

        def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
            if isinstance(original, cst.Call) and fix.take(self.name, original) is not None:
                raise RuntimeError("a bug")
            return None

    monkeypatch.setattr(runner, "make_codemods", lambda: [_Raiser() if c.name == "torch-accelerator" else c for c in registry.make_codemods()])
    report = fix_project(tmp_path, {"mod.py": "import torch\ntorch.cuda.synchronize()\nx = torch.ones(2).cuda()\n"})
    assert report.files[0].after.endswith("x = torch.ones(2).to(torch.accelerator.current_accelerator())\n")
    assert report.left[0].note == "the fix failed (RuntimeError: a bug): skipped; fix it by hand"


def test_suppressed_and_baselined_findings_are_not_fixed(tmp_path: Path) -> None:
    code = "import torch\ntorch.cuda.synchronize()  # tpucheck: ignore[CA001] -- timing on GPUs only\ntorch.cuda.empty_cache()\n"
    (tmp_path / "old.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    settings = tpucheck.load_settings(str(tmp_path), Flags(no_cache=True), isolated=True)
    write_baseline(tpucheck.scan(str(tmp_path), settings), tmp_path / "baseline.json")
    report = fix_project(tmp_path, {"mod.py": code}, flags=Flags(no_cache=True, baseline=tmp_path / "baseline.json"))
    assert [c.path for c in report.changed_files] == ["mod.py"]
    assert report.files[0].after == code.replace("torch.cuda.empty_cache()", "if torch.accelerator.is_available():\n    torch.accelerator.empty_cache()")


def test_writes_are_atomic_and_keep_the_mode(tmp_path: Path) -> None:
    script = tmp_path / "run.py"
    script.write_text("#!/usr/bin/env python\nimport torch\ntorch.cuda.synchronize()\n")
    os.chmod(script, 0o755)
    fix_project(tmp_path, {}, write=True)
    assert script.read_text() == "#!/usr/bin/env python\nimport torch\ntorch.accelerator.synchronize()\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.py"]


def test_crlf_and_a_bom_survive(tmp_path: Path) -> None:
    (tmp_path / "win.py").write_bytes(b"\xef\xbb\xbfimport torch\r\ntorch.cuda.synchronize()\r\n")
    fix_project(tmp_path, {}, write=True)
    assert (tmp_path / "win.py").read_bytes() == b"\xef\xbb\xbfimport torch\r\ntorch.accelerator.synchronize()\r\n"


def _notebook(*cells: tuple[str, str]) -> str:
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3"}},
            "cells": [
                {"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True), **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                for kind, source in cells
            ],
        },
        indent=1,
        ensure_ascii=False,
    ) + "\n"


def test_notebooks_are_fixed_cell_by_cell(tmp_path: Path) -> None:
    notebook = _notebook(
        ("markdown", "# Tränieren"),
        ("code", "import torch\n"),
        ("code", "x = torch.ones(2).cuda()\ntorch.cuda.synchronize()"),
        ("code", "%timeit torch.cuda.synchronize()\ntorch.cuda.empty_cache()"),
    )
    (tmp_path / "nb.ipynb").write_text(notebook, encoding="utf-8")
    report = fix_project(tmp_path, {}, write=True)
    expected = json.loads(notebook)
    expected["cells"][2]["source"] = ["x = torch.ones(2).to(torch.accelerator.current_accelerator())\n", "torch.accelerator.synchronize()"]
    assert (tmp_path / "nb.ipynb").read_text(encoding="utf-8") == json.dumps(expected, indent=1, ensure_ascii=False) + "\n"
    left = [(o.target.finding.cell, o.note) for o in report.left]
    assert left == [(4, "cell 4 has IPython syntax (%magic, !shell), which is not Python; fix it by hand")]


def test_a_notebook_whose_json_would_be_reformatted_is_reported(tmp_path: Path) -> None:
    compact = json.dumps(json.loads(_notebook(("code", "import torch\ntorch.cuda.synchronize()\n"))), separators=(",", ":"), sort_keys=True)
    (tmp_path / "nb.ipynb").write_text(compact)
    report = fix_project(tmp_path, {})
    assert report.changed_files == [] and "not formatted as Jupyter writes it" in report.problems[0][1]


def test_yaml_findings_of_a_python_codemod_are_reported_not_fixed(tmp_path: Path) -> None:
    report = fix_project(tmp_path, {"conf/train.yaml": "distributed_backend: nccl\n"})
    assert report.changed_files == []
    assert [(o.target.finding.rule, o.state, o.note) for o in report.outcomes] == [
        ("DI001", "manual", "only Python files and notebooks are fixed for this rule; fix it by hand")
    ]
