"""A CUDA-only package imported at a module's top and used only under a test of an option
the project declares off by default (`import vllm`, used only under `if args.use_vllm:`)
is an edit, not a blocker: `severity.option-only-import` (blind set 55: LESS's eval
scripts). Adversarial: a use outside the test, a use on its `else` side, a negated test,
and an option a launch script turns on all keep the blocker."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

EVAL = """\
import argparse

import torch
import vllm
from transformers import AutoModelForCausalLM


def main(args):
    if args.use_vllm:
        model = vllm.LLM(model=args.model)
        outputs = model.generate(["hi"], vllm.SamplingParams(temperature=0))
    else:
        model = AutoModelForCausalLM.from_pretrained(args.model)
        outputs = model.generate(torch.zeros(1, 4, dtype=torch.long))
    return outputs


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="gpt2")
    parser.add_argument("--use_vllm", action="store_true", help="use the vllm library for speed")
    main(parser.parse_args())
"""

REASON = "`vllm` is imported at load but used only under a test of `use_vllm`, off by default (eval/run_eval.py): the import moves under the option, the default path needs no package"


def _vllm(tmp_path: Path, code: str, **extra: str) -> list[tuple[str, int, int, str, tuple[str, ...]]]:
    root = write_tree(tmp_path / "repo", {"eval/run_eval.py": code, **extra})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [(f.path, f.span.line, f.span.column, f.severity, tuple(r.evidence for r in f.because)) for f in result.findings if f.rule == "DEP007"]


def test_an_import_used_only_behind_an_off_option_is_an_edit(tmp_path: Path) -> None:
    assert _vllm(tmp_path, EVAL) == [("eval/run_eval.py", 4, 8, "major", (REASON,))]


def test_a_use_outside_the_option_keeps_the_blocker(tmp_path: Path) -> None:
    code = EVAL.replace("    return outputs\n", "    print(vllm.__version__)\n    return outputs\n")
    assert [s for _, _, _, s, _ in _vllm(tmp_path, code)] == ["blocker"]


def test_a_use_on_the_else_side_keeps_the_blocker(tmp_path: Path) -> None:
    code = EVAL.replace("model = AutoModelForCausalLM.from_pretrained(args.model)", "model = vllm.LLM(model='x')")
    assert [s for _, _, _, s, _ in _vllm(tmp_path, code)] == ["blocker"]


def test_a_negated_test_keeps_the_blocker(tmp_path: Path) -> None:
    assert [s for _, _, _, s, _ in _vllm(tmp_path, EVAL.replace("if args.use_vllm:", "if not args.use_vllm:"))] == ["blocker"]


def test_an_option_a_launch_script_turns_on_keeps_the_blocker(tmp_path: Path) -> None:
    found = _vllm(tmp_path, EVAL, **{"scripts/eval.sh": "python eval/run_eval.py --model llama --use_vllm\n"})
    assert [s for _, _, _, s, _ in found] == ["blocker"]
