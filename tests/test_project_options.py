"""Settings declared in one module and tested in another (issue 23, audit M).

`if model_args.use_qlora: BitsAndBytesConfig(...)` with `use_qlora: bool = False` in
args.py was a blocker: the file that tests the flag does not declare it, so nothing knew
it was off by default. The project's declarations (ImportFacts.options, gathered over the
whole tree) settle it. Look-alikes keep their weight: a flag on by default, a name declared
on in one class and off in another, the side a test takes at the default, a name nobody
declares.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import write_tree

from tpucheck.analyze.imports import declared_options
from tpucheck.engine import ScanOptions, scan
from tpucheck.report.json_report import render
from tpucheck.result import ScanResult
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

ARGS = """\
    from dataclasses import dataclass, field

    @dataclass
    class ModelArguments:
        use_qlora: bool = field(
            default=False,
            metadata={"help": "4-bit QLoRA"},
        )
        use_liger: bool = False
        fast_kernels: bool = True
    """

OTHER = """\
    from dataclasses import dataclass

    @dataclass
    class EvalArguments:
        use_liger: bool = True
    """

MODEL = """\
    from transformers import BitsAndBytesConfig

    def load(model_args):
        quant = None
        if model_args.use_qlora:
            quant = BitsAndBytesConfig(load_in_4bit=True)
        if not model_args.use_qlora:
            pass
        else:
            quant = BitsAndBytesConfig(load_in_4bit=True)
        if model_args.use_liger:
            quant = BitsAndBytesConfig(load_in_4bit=True)
        if model_args.fast_kernels:
            quant = BitsAndBytesConfig(load_in_4bit=True)
        if not model_args.use_qlora:
            quant = BitsAndBytesConfig(load_in_4bit=True)
        if model_args.undeclared:
            quant = BitsAndBytesConfig(load_in_4bit=True)
        return quant

    def nested(model_args, do_train):
        if do_train:
            if model_args.use_qlora:
                return BitsAndBytesConfig(load_in_4bit=True)
        if model_args.use_qlora:
            if model_args.undeclared:
                return BitsAndBytesConfig(load_in_4bit=True)
        return None
    """


def scanned(root: Path, **options: object) -> ScanResult:
    return scan(str(root), RULESET, ScanOptions(jobs=1, **options))  # type: ignore[arg-type]


def rows(result: ScanResult) -> list[tuple[int, str, tuple[str, ...]]]:
    return [(f.span.line, f.severity, tuple(r.evidence for r in f.because)) for f in result.findings if f.rule == "HF002"]


def test_a_setting_declared_off_elsewhere_keeps_its_branch_optional(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/args.py": ARGS, "pkg/other.py": OTHER, "pkg/model.py": MODEL})
    assert rows(scanned(root)) == [
        (6, "info", ("`model_args.use_qlora` at pkg/model.py:5; `use_qlora` is off by default (pkg/args.py)", "a kernel or CUDA-only package with a working fallback: info")),
        (10, "info", ("`not model_args.use_qlora` at pkg/model.py:7; `use_qlora` is off by default (pkg/args.py)", "a kernel or CUDA-only package with a working fallback: info")),
        # adversarial: declared on in one class and off in another, on by default, the
        # default's side of a negated test, declared nowhere: full weight, no reason
        (12, "blocker", ()),
        (14, "blocker", ()),
        (16, "blocker", ()),
        (18, "blocker", ()),
        # inside a test of another undeclared setting, or around one: either test settles it
        (24, "info", ("`model_args.use_qlora` at pkg/model.py:23; `use_qlora` is off by default (pkg/args.py)", "a kernel or CUDA-only package with a working fallback: info")),
        (27, "info", ("`model_args.use_qlora` at pkg/model.py:25; `use_qlora` is off by default (pkg/args.py)", "a kernel or CUDA-only package with a working fallback: info")),
    ]


def test_the_pending_mark_never_reaches_a_report(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/model.py": MODEL})
    report = render(scanned(root))
    assert "pending.option" not in report
    assert [f["severity"] for f in json.loads(report)["findings"] if f["rule"] == "HF002"] == ["blocker"] * 8


def test_turning_the_default_on_is_seen_by_a_warm_rescan(tmp_path: Path) -> None:
    """The declaration lives in another file than the finding: the cached tree facts must
    follow args.py's bytes, not only model.py's."""
    root = write_tree(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/args.py": ARGS, "pkg/model.py": MODEL})
    assert rows(scanned(root, use_cache=True))[0][1] == "info"  # bitsandbytes behind an option off by default
    (root / "pkg/args.py").write_text(ARGS.replace("default=False", "default=True").replace("    ", "", 1), encoding="utf-8")
    warm = scanned(root, use_cache=True)
    assert rows(warm)[0] == (6, "blocker", ())
    assert render(warm) == render(scanned(root))


def test_declared_options_reads_fields_flags_and_constants() -> None:
    text = """\
import argparse
from dataclasses import dataclass, field

USE_FLASH = False
HAS_TRITON = True  # probed below

@dataclass
class Args:
    use_qlora: bool = field(
        default=False,
        metadata={"help": "x"},
    )
    trust_remote_code: bool = True
    bits: int = 16
    adapter: Optional[str] = None

parser = argparse.ArgumentParser()
parser.add_argument("--use-liger", action="store_true")
parser.add_argument("-f", "--fast", default=False, action="store_true", help="x")
parser.add_argument("--keep", action="store_false")
model(use_cache=False)
"""
    assert declared_options(text) == (
        ("use_qlora", "False"),
        ("trust_remote_code", "True"),
        ("bits", "16"),
        ("adapter", "None"),
        ("use_liger", "False"),
        ("fast", "False"),
        ("keep", "True"),
        ("fast", "False"),
        ("USE_FLASH", "False"),
        ("HAS_TRITON", "True"),
    )


def test_declared_options_reads_literal_defaults_of_fields_and_arguments() -> None:
    text = """\
@dataclass
class Args:
    quant_type: str = field(default="nf4", metadata={})
    loss: str = 'l1'  # or smooth_l1
    lr: float = compute_lr()
    scale: float = 0.5
parser.add_argument("--bits", type=int, default=4, help="(4 or 8)")
parser.add_argument('--mode', default='fast')
parser.add_argument("--steps", default=steps_from_env())
"""
    assert declared_options(text) == (
        ("quant_type", "'nf4'"),
        ("loss", "'l1'"),
        ("scale", "0.5"),
        ("bits", "4"),
        ("mode", "'fast'"),
    )


VALUE_ARGS = """\
    from dataclasses import dataclass, field

    @dataclass
    class TrainingArguments:
        bits: int = field(
            default=16,
            metadata={"help": "How many bits to use."},
        )
        quant: str = "none"
        precision: int = 4
        twice: int = 16
    """

VALUE_OTHER = """\
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--twice", type=int, default=8)
    """

VALUE_MODEL = """\
    from transformers import BitsAndBytesConfig

    def load(training_args):
        quant = None
        if training_args.bits in [4, 8]:
            quant = BitsAndBytesConfig(load_in_4bit=training_args.bits == 4)
        if training_args.quant == "nf4":
            quant = BitsAndBytesConfig(load_in_4bit=True)
        if training_args.bits not in (16, 32):
            quant = BitsAndBytesConfig(load_in_4bit=True)
        if training_args.precision in [4, 8]:
            quant = BitsAndBytesConfig(load_in_4bit=True)
        if training_args.bits != 8:
            quant = BitsAndBytesConfig(load_in_4bit=True)
        if training_args.twice in [4, 8]:
            quant = BitsAndBytesConfig(load_in_4bit=True)
        if training_args.undeclared in [4, 8]:
            quant = BitsAndBytesConfig(load_in_4bit=True)
        if training_args.bits in [4, 8]:
            pass
        else:
            quant = BitsAndBytesConfig(load_in_4bit=True)
        return quant
    """


def test_a_setting_compared_with_values_its_default_fails_keeps_its_branch_optional(tmp_path: Path) -> None:
    """Audit AM (NExT-GPT): `if training_args.bits in [4, 8]: BitsAndBytesConfig(...)` with
    `bits` 16 by default in training_utils.py was a blocker; QLoRA is an option there."""
    root = write_tree(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/args.py": VALUE_ARGS, "pkg/other.py": VALUE_OTHER, "pkg/model.py": VALUE_MODEL})
    info = "a kernel or CUDA-only package with a working fallback: info"
    assert rows(scanned(root)) == [
        (6, "info", ("`training_args.bits in [4, 8]` at pkg/model.py:5; `bits` is 16 by default (pkg/args.py)", info)),
        (8, "info", ("`training_args.quant == \"nf4\"` at pkg/model.py:7; `quant` is 'none' by default (pkg/args.py)", info)),
        (10, "info", ("`training_args.bits not in (16, 32)` at pkg/model.py:9; `bits` is 16 by default (pkg/args.py)", info)),
        # adversarial: the default is among the values, the test holds at the default,
        # two declarations disagree, nobody declares it, the side the default takes
        (12, "blocker", ()),
        (14, "blocker", ()),
        (16, "blocker", ()),
        (18, "blocker", ()),
        (22, "blocker", ()),
    ]


def test_a_value_a_launch_script_passes_is_the_product_path(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "repo",
        {"pkg/__init__.py": "", "pkg/args.py": VALUE_ARGS, "pkg/model.py": VALUE_MODEL, "scripts/qlora.sh": "python -m pkg.train --bits 4\n"},
    )
    assert [row[:2] for row in rows(scanned(root))][:3] == [(6, "blocker"), (8, "info"), (10, "blocker")]
