"""Branches a TPU host never enters (issue 23, audits J and K).

Two shapes the audits judged wrong: a CUDA call on a branch entered only with CUDA present
was a "major" though the TPU's branch is right there (10 of 14 guarded majors too high or
false), and code under an MPS or XPU test was read as CUDA's fallback or as work. Each has
look-alikes here that must keep their weight: an option off by default, a negated test, a
name that merely holds "mps".
"""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from tpucheck.engine import ScanOptions, scan
from tpucheck.result import ScanResult
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

Row = tuple[str, int, int, str, tuple[str, ...]]


def scanned(root: Path, code: str) -> ScanResult:
    path = root / "pkg" / "mod.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dedent(code), encoding="utf-8")
    return scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))


def rows(findings: list, rules: tuple[str, ...]) -> list[Row]:
    return sorted((f.rule, f.span.line, f.span.column, f.severity, tuple(r.rule for r in f.because)) for f in findings if f.rule in rules)


def test_a_cuda_call_on_a_branch_entered_only_with_cuda_is_minor(tmp_path: Path) -> None:
    code = """\
        import torch

        def timed(step, x):
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            out = step(x)
            if not torch.cuda.is_available():
                return out
            torch.cuda.synchronize()
            return out
        """
    result = scanned(tmp_path, code)
    assert rows(result.findings, ("CA001",)) == [
        ("CA001", 5, 9, "minor", ("guard.test", "severity.guarded")),
        ("CA001", 9, 5, "minor", ("guard.early-exit", "severity.guarded")),
    ]
    first = next(f for f in result.findings if f.rule == "CA001")
    assert first.because[-1].evidence == "on a branch entered only with CUDA present: minor"


def test_an_option_off_by_default_keeps_its_weight(tmp_path: Path) -> None:
    # adversarial: the option's side is the only way through it; nobody wrote the TPU's
    code = """\
        import torch

        def step(x, use_graphs=False):
            if use_graphs:
                torch.cuda.synchronize()
            return x
        """
    assert rows(scanned(tmp_path, code).findings, ("CA001",)) == [("CA001", 5, 9, "major", ("guard.option",))]


def test_an_unguarded_cuda_call_keeps_its_weight(tmp_path: Path) -> None:
    code = """\
        import torch

        def step(x):
            torch.cuda.synchronize()
            return x
        """
    assert rows(scanned(tmp_path, code).findings, ("CA001",)) == [("CA001", 4, 5, "major", ())]


MPS = """\
    import torch


    class Net(torch.nn.Module):
        def forward(self, x, device):
            if x.is_mps:
                torch.cuda.synchronize()
            if device.type == "mps":
                torch.cuda.synchronize()
            if torch.backends.mps.is_available():
                torch.cuda.synchronize()
            else:
                torch.cuda.synchronize()
            if not torch.backends.mps.is_available():
                torch.cuda.synchronize()
            if device.type != "mps":
                torch.cuda.synchronize()
            if self.use_mps_fallback:
                torch.cuda.synchronize()
            if torch.backends.mps.is_available() or x.is_cuda:
                torch.cuda.synchronize()
            return x.cuda() if torch.xpu.is_available() else x
    """


def test_code_under_another_accelerators_test_is_set_aside_with_its_reason(tmp_path: Path) -> None:
    result = scanned(tmp_path, MPS)
    branch = ("alternative.other-accelerator-branch",)
    assert rows(result.set_aside, ("CA001", "CA003")) == [
        ("CA001", 7, 13, "major", branch),  # x.is_mps
        ("CA001", 9, 13, "major", branch),  # device.type == "mps"
        ("CA001", 11, 13, "major", branch),  # torch.backends.mps.is_available()
        ("CA003", 22, 18, "major", branch),  # ... if torch.xpu.is_available() else x
    ]
    aside = next(f for f in result.set_aside if f.span.line == 11)
    assert aside.because[0].evidence.startswith("`torch.backends.mps.is_available()` at pkg/mod.py:10")


def test_look_alikes_of_another_accelerators_test_are_work(tmp_path: Path) -> None:
    # adversarial: MPS missing says nothing of CUDA; a negated test, a name holding "mps" and
    # an `or` with a CUDA side are no other accelerator's branch
    result = scanned(tmp_path, MPS)
    assert rows(result.findings, ("CA001",)) == [
        ("CA001", 13, 13, "major", ()),  # the else of the MPS test
        ("CA001", 15, 13, "major", ()),  # if not mps available
        ("CA001", 17, 13, "major", ()),  # device.type != "mps"
        ("CA001", 19, 13, "major", ()),  # self.use_mps_fallback
        ("CA001", 21, 13, "major", ()),  # mps or CUDA
    ]


BROAD = """\
    import logging

    try:
        import xformers.ops
        HAS_XFORMERS = True
    except:
        HAS_XFORMERS = False

    try:
        import apex
    except Exception:
        pass

    try:
        import bitsandbytes
    except Exception:
        logging.warning("no bitsandbytes")

    try:
        import deepspeed
        deepspeed.init_distributed()
    except Exception:
        HAS_DEEPSPEED = False


    def attend(q, k, v):
        if HAS_XFORMERS:
            return xformers.ops.memory_efficient_attention(q, k, v)
        return (q @ k.transpose(-1, -2)).softmax(-1) @ v
    """


def test_a_broad_catch_around_imports_alone_with_an_alternative_keeps_a_fallback(tmp_path: Path) -> None:
    findings = scanned(tmp_path, BROAD).findings
    xformers = [(f.span.line, f.severity, tuple(r.rule for r in f.because)) for f in findings if f.rule == "DEP003"]
    assert xformers == [(4, "info", ("guard.except", "severity.kernel-fallback"))]


def test_a_broad_catch_around_imports_alone_is_an_import_catch_but_around_a_call_keeps_nothing(tmp_path: Path) -> None:
    # `except Exception: pass` or a logging handler around imports alone is the optional-import
    # idiom, as `except ImportError: pass` is (audit O); adversarial: a try that also calls
    # into the package is error handling, whatever its handler does
    findings = scanned(tmp_path, BROAD).findings
    assert [(f.rule, f.span.line, f.guarded) for f in findings if f.rule in ("DEP001", "DEP004", "DEP005")] == [
        ("DEP001", 10, True),
        ("DEP004", 15, True),
        ("DEP005", 20, False),
    ]


def test_a_value_chosen_by_a_conditional_takes_its_arms_guard(tmp_path: Path) -> None:
    """Audit M: `attn_implementation="flash_attention_2" if use_flash else None` with the
    flag off by default was a blocker; the flash value runs only when the option is turned
    on, as under `if use_flash:`. Look-alikes keep their weight: a flag whose default picks
    flash, a setting whose default is the flash arm, and a conditional whose two arms are both
    flash."""
    code = """\
        import argparse
        from dataclasses import dataclass, field

        import torch
        from transformers import AutoModelForCausalLM

        @dataclass
        class ModelArguments:
            use_flash: bool = field(default=False)

        parser = argparse.ArgumentParser()
        parser.add_argument("--eager", action="store_true")
        parser.add_argument("--mode", default="fast")

        def load(margs: ModelArguments, args):
            a = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2" if margs.use_flash else None)
            b = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2" if torch.cuda.is_available() else "sdpa")
            c = AutoModelForCausalLM.from_pretrained("m", attn_implementation="sdpa" if args.eager else "flash_attention_2")
            d = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2" if args.mode == "fast" else "sdpa")
            e = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2" if args.mode == "x" else "flash_attention_2")
            f = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2" if margs.fast else "sdpa")
            return a, b, c, d, e, f
        """
    assert rows(scanned(tmp_path, code).findings, ("HF001",)) == [
        # HF001 is major (a known one-argument edit): the guard shows in the reasons
        ("HF001", 16, 51, "major", ("guard.option",)),
        ("HF001", 17, 51, "minor", ("guard.test", "severity.guarded")),
        ("HF001", 18, 51, "major", ()),
        ("HF001", 19, 51, "major", ()),
        ("HF001", 20, 51, "major", ()),
        ("HF001", 21, 51, "major", ("guard.option-else",)),
    ]


def test_a_broad_catch_around_imports_rebound_as_a_tuple_keeps_a_fallback(tmp_path: Path) -> None:
    """Audit BE: Sa2VA's InternLM2 imports flash-attn under private names in a bare
    `try`/`except:` and rebinds them (`flash_attn_func, pad_input = _flash_attn_func,
    _pad_input`); binding the names just imported fails nothing an import would not.
    Adversarial: a tuple that calls something is code, and the catch keeps nothing."""
    code = """\
        flash_attn_func, pad_input = None, None
        try:
            from flash_attn import flash_attn_func as _flash_attn_func
            from flash_attn.bert_padding import pad_input as _pad_input

            flash_attn_func, pad_input = _flash_attn_func, _pad_input
            has_flash_attn = True
        except:
            has_flash_attn = False

        try:
            from xformers.ops import memory_efficient_attention as _mea
            mea, ops = _mea, _mea.load()
        except:
            mea = None
        """
    findings = scanned(tmp_path, code).findings
    assert [(f.rule, f.span.line, f.severity, f.guarded) for f in findings if f.rule in ("DEP002", "DEP003")] == [
        ("DEP002", 3, "info", True),
        ("DEP002", 4, "info", True),
        ("DEP003", 12, "blocker", False),
    ]
