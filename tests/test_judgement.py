"""The judgement recognises what code does, never one repository's words (issue 23).

Each heuristic has a probe here that it must NOT fire on: the look-alikes that the old
word lists discounted (a name holding "tpu", a logging `except Exception`, an option word
guarding both branches, a folder called `recipes/`), and every discount a finding gets
carries its reason.
"""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from tpucheck.engine import ScanOptions, scan
from tpucheck.findings import SEVERITIES, Finding
from tpucheck.result import ScanResult
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "gpu-trainer"
ORACLE = Path(__file__).resolve().parent / "fixtures" / "oracle-repo"


def scanned(root: Path, files: dict[str, str]) -> ScanResult:
    for path, code in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(dedent(code), encoding="utf-8")
    return scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))


def rows(result: ScanResult, rules: tuple[str, ...]) -> list[tuple[str, int, str, bool]]:
    return sorted((f.rule, f.span.line, f.severity, f.guarded) for f in result.findings if f.rule in rules)


def test_a_name_that_holds_tpu_is_no_tpu_path(tmp_path: Path) -> None:
    # "output" holds "tpu": `if args.output_dir: ... else: model.cuda()` was "guarded".
    code = """\
        import torch

        def run(args, model):
            if args.output_dir:
                save(model, args.output_dir)
            else:
                model.cuda()
            if args.use_tpu:
                return model
            return model.cuda()
        """
    # the second .cuda() is the other side of a real TPU switch (`use_tpu`, a whole word)
    assert rows(scanned(tmp_path, {"pkg/run.py": code}), ("CA003",)) == [("CA003", 7, "major", False), ("CA003", 10, "minor", True)]


def test_an_except_exception_around_a_training_loop_keeps_no_fallback(tmp_path: Path) -> None:
    # A training loop wrapped in a logging try scored 99.8: `except Exception` was a fallback.
    code = """\
        import logging
        import torch

        def train(model, batches):
            try:
                for batch in batches:
                    loss = model(batch.cuda())
                    torch.cuda.synchronize()
            except Exception:
                logging.exception("training failed")
                raise
        """
    assert rows(scanned(tmp_path, {"pkg/train.py": code}), ("CA001", "CA003")) == [("CA001", 8, "major", False), ("CA003", 7, "major", False)]


def test_an_except_that_only_reports_keeps_no_fallback_around_a_cuda_call(tmp_path: Path) -> None:
    code = """\
        import logging
        import torch

        def warm():
            try:
                torch.cuda.synchronize()
            except RuntimeError:
                logging.warning("no sync")

        def props():
            try:
                major = torch.cuda.get_device_capability()[0]
            except RuntimeError:
                major = 0
            return major
        """
    result = scanned(tmp_path, {"pkg/warm.py": code})
    # a report is no alternative; `major = 0` is one (the code goes on without CUDA)
    assert [(f.rule, f.span.line, f.guarded) for f in result.findings if f.rule in ("CA001", "CA106", "CA013")] == [
        ("CA001", 6, False),
        *[(f.rule, 12, True) for f in result.findings if f.span.line == 12 and f.rule in ("CA106", "CA013")],
    ]


@pytest.mark.parametrize("word", ["use_fused", "fusion", "bits", "amp", "xformers"])
def test_an_option_word_guards_nothing_by_itself(tmp_path: Path, word: str) -> None:
    # `bits|fusion|^use_|fp16` words guarded both branches of any if. An option of unknown
    # default, whose other branch is CUDA too, keeps no fallback on either side.
    code = f"""\
        import torch

        def step(cfg, x):
            if cfg.{word}:
                x = x.cuda()
            else:
                torch.cuda.synchronize()
            return x
        """
    assert rows(scanned(tmp_path, {"pkg/step.py": code}), ("CA001", "CA003")) == [("CA001", 7, "major", False), ("CA003", 5, "major", False)]


def test_a_public_apis_option_off_by_default_is_known_by_its_documented_default(tmp_path: Path) -> None:
    # `fp16` is TrainingArguments' and accelerate's option, False unless asked for
    # (rules/judgement.yaml `known_options`): its side is opt-in, the other the main path.
    code = """\
        import torch

        def step(args, x):
            if args.fp16:
                x = x.cuda().half()
            else:
                torch.cuda.synchronize()
            return x
        """
    result = scanned(tmp_path, {"pkg/step.py": code})
    assert rows(result, ("CA001", "CA003")) == [("CA001", 7, "major", False), ("CA003", 5, "major", True)]


def test_an_option_off_by_default_or_with_a_plain_other_side_keeps_a_fallback(tmp_path: Path) -> None:
    code = """\
        import torch
        import triton_ops

        def attend(q, k, v, use_triton=False):
            if use_triton:
                return triton_ops.attention(q.cuda(), k, v)
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)

        def step(cfg, x):
            if cfg.fused:
                x = x.cuda()
            else:
                x = x * 2
            return x
        """
    result = scanned(tmp_path, {"pkg/attend.py": code})
    assert rows(result, ("CA003",)) == [("CA003", 6, "major", True), ("CA003", 11, "major", True)]
    first, second = (f for f in result.findings if f.rule == "CA003")
    assert first.because[0].to_dict() == {"rule": "guard.option", "evidence": "`use_triton` at pkg/attend.py:5"}
    assert second.because[0].to_dict() == {"rule": "guard.option-else", "evidence": "`cfg.fused` at pkg/attend.py:10"}


def test_an_availability_check_marks_the_side_that_needs_cuda_only(tmp_path: Path) -> None:
    code = """\
        import torch

        def pick(x):
            if torch.cuda.is_available():
                x = x.cuda()
            else:
                torch.cuda.synchronize()
            return x
        """
    result = scanned(tmp_path, {"pkg/pick.py": code})
    assert rows(result, ("CA001", "CA003")) == [("CA001", 7, "major", False), ("CA003", 5, "minor", True)]
    (guarded,) = (f for f in result.findings if f.guarded)
    assert guarded.because[0].to_dict() == {"rule": "guard.test", "evidence": "`torch.cuda.is_available()` at pkg/pick.py:4"}


def test_recipes_and_cli_folders_are_product(tmp_path: Path) -> None:
    code = "import torch\ntorch.cuda.synchronize()\n"
    result = scanned(tmp_path, {"recipes/full_finetune.py": code, "pkg/cli/train.py": code, "pkg/__init__.py": ""})
    assert sorted((f.path, f.role, f.severity) for f in result.findings if f.rule == "CA001") == [
        ("pkg/cli/train.py", "library", "major"),
        ("recipes/full_finetune.py", "library", "major"),
    ]


def test_a_command_the_project_exposes_is_product_wherever_it_sits(tmp_path: Path) -> None:
    code = "import torch\ntorch.cuda.synchronize()\n"
    pyproject = '[project]\nname = "p"\n[project.scripts]\np-train = "examples.train:main"\n'
    result = scanned(tmp_path, {"examples/train.py": code, "examples/other.py": code, "pyproject.toml": pyproject})
    got = {f.path: (f.role, f.severity, [r.rule for r in f.because]) for f in result.findings if f.rule == "CA001"}
    assert got == {
        "examples/train.py": ("script", "major", ["role.entry-point"]),
        "examples/other.py": ("example", "minor", ["role.example", "severity.supporting"]),
    }


def test_older_versions_kept_beside_the_newest_are_set_aside(tmp_path: Path) -> None:
    kernel = "__global__ void wkv_forward(float* y) {}\n"
    files = {f"RWKV-v{n}/cuda/wkv_cuda.cu": kernel for n in (4, 5, 7)}
    files.update({f"RWKV-v{n}/src/model.py": "import torch\n" for n in (4, 5, 7)})
    result = scanned(tmp_path, files)
    assert [f.path for f in result.findings if f.rule == "CK003"] == ["RWKV-v7/cuda/wkv_cuda.cu"]
    assert sorted(f.path for f in result.set_aside if f.rule == "CK003") == ["RWKV-v4/cuda/wkv_cuda.cu", "RWKV-v5/cuda/wkv_cuda.cu"]
    assert all(f.because[-1].rule == "version.older" for f in result.set_aside if f.rule == "CK003")


def test_version_named_folders_that_are_not_copies_are_kept(tmp_path: Path) -> None:
    # `conv1/` and `conv2/` are no versions (no `v`), nor are `api_v1/` and `api_v2/` that share no file
    kernel = "__global__ void k(float* y) {}\n"
    result = scanned(tmp_path, {"conv1/a.cu": kernel, "conv2/b.cu": kernel, "api_v1/x.cu": kernel, "api_v2/y.cu": kernel})
    assert len([f for f in result.findings if f.rule == "CK003"]) == 4 and result.set_aside == []


def _discounted(finding: Finding, rules: dict) -> bool:
    rule = rules[finding.rule]
    lowered = SEVERITIES.index(finding.severity) > SEVERITIES.index(rule.severity)
    return lowered or finding.guarded or finding.role not in ("library", "script")


@pytest.mark.parametrize("root", [EXAMPLE, ORACLE], ids=lambda p: p.name)
def test_every_discount_says_why(root: Path) -> None:
    ruleset = RULESET.for_target("torchtpu")
    result = scan(str(root), ruleset, ScanOptions(jobs=1, use_cache=False))
    rules = ruleset.by_id()
    silent = [f"{f.path}:{f.span.line} {f.rule}" for f in result.findings if _discounted(f, rules) and not f.because]
    assert silent == []
    assert all(f.because for f in result.set_aside)
    assert any(_discounted(f, rules) for f in result.findings)  # the probe sees discounts at all
