"""Hugging Face settings (issue 15): device_map="cuda" -> the accelerator's type (safe;
"auto" would be a CUDA dispatch still), flash_attention_2 -> sdpa and fp16 -> bf16 (unsafe)."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from fixtools import fix_project, fixed

CODE = """\
    import torch
    from accelerate import Accelerator
    from transformers import AutoModelForCausalLM, TrainingArguments

    model = AutoModelForCausalLM.from_pretrained(
        "gpt2",
        device_map="cuda",
        attn_implementation="flash_attention_2",
        torch_dtype=torch.float16,
    )
    other = AutoModelForCausalLM.from_pretrained("gpt2", use_flash_attention_2=True, dtype="float16")
    args = TrainingArguments("out", fp16=True, fp16_full_eval=True, tf32=True)
    accelerator = Accelerator(mixed_precision="fp16")
    """


def test_unsafe_fixes_rewrite_the_settings(tmp_path: Path) -> None:
    assert fixed(tmp_path, CODE, unsafe=True) == dedent("""\
        import torch
        from accelerate import Accelerator
        from transformers import AutoModelForCausalLM, TrainingArguments

        model = AutoModelForCausalLM.from_pretrained(
            "gpt2",
            device_map=getattr(torch.accelerator.current_accelerator(), "type", "cuda"),
            attn_implementation="sdpa",
            torch_dtype=torch.bfloat16,
        )
        other = AutoModelForCausalLM.from_pretrained("gpt2", attn_implementation="sdpa", dtype="bfloat16")
        args = TrainingArguments("out", bf16=True, bf16_full_eval=True)
        accelerator = Accelerator(mixed_precision="bf16")
        """)


def test_without_unsafe_fixes_only_the_device_map_changes(tmp_path: Path) -> None:
    report = fix_project(tmp_path, {"mod.py": CODE})
    assert [(o.target.finding.rule, o.fixed) for o in report.outcomes if o.state != "unsafe"] == [("HF003", True)]
    assert sorted({o.target.finding.rule for o in report.unsafe_held}) == ["HF001", "HF004", "HF011"]


def test_a_device_map_with_an_index_keeps_it(tmp_path: Path) -> None:
    code = "from transformers import pipeline\npipe = pipeline('text-generation', device_map='cuda:1')\n"
    assert fixed(tmp_path, code) == (
        "from transformers import pipeline\nimport torch\n"
        "pipe = pipeline('text-generation', device_map=f'{getattr(torch.accelerator.current_accelerator(), \"type\", \"cuda\")}:1')\n"
    )


def test_leaves_alone_auto_a_cpu_map_sdpa_and_bf16(tmp_path: Path) -> None:
    # device_map="auto" is flagged (a CUDA dispatch) but spreads a model: left to a person
    code = """\
        import torch
        from transformers import AutoModelForCausalLM, TrainingArguments
        model = AutoModelForCausalLM.from_pretrained("gpt2", device_map="auto", attn_implementation="sdpa", torch_dtype=torch.bfloat16)
        cpu = AutoModelForCausalLM.from_pretrained("gpt2", device_map="cpu")
        args = TrainingArguments("out", bf16=True)
        # args = TrainingArguments("out", fp16=True)
        """
    assert fixed(tmp_path, code, unsafe=True) == dedent(code)
