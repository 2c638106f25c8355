"""A folder of modules that import each other relatively is a package where it runs, with
or without an `__init__.py` (a Hugging Face remote-code folder, shipped beside a checkpoint
and loaded with `trust_remote_code`). A module its siblings import only under a try is a
guarded module, not a script of its own (audit BE: Sa2VA's `flash_attention.py`, judged
a fallback against a blocker). Adversarial: an unguarded sibling import keeps the blocker."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

FLASH = "import torch\nfrom flash_attn.bert_padding import pad_input, unpad_input\n\n\ndef pad(x, i, b, s):\n    return pad_input(x, i, b, s)\n"
GUARDED = """\
import torch

try:
    from .flash_attention import pad
    has_flash_attn = True
except:
    has_flash_attn = False


def attend(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v)
"""


def rows(root: Path, modeling: str) -> list[tuple[str, str, int, str, tuple[str, ...]]]:
    write_tree(root, {"hf/models/flash_attention.py": FLASH, "hf/models/modeling_chat.py": modeling})
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return [(f.rule, f.path, f.span.line, f.severity, tuple(r.rule for r in f.because)) for f in result.findings if f.rule == "DEP002"]


def test_a_sibling_imported_only_under_a_try_is_a_guarded_module(tmp_path: Path) -> None:
    assert rows(tmp_path, GUARDED) == [
        ("DEP002", "hf/models/flash_attention.py", 2, "minor", ("fallback.guarded-module", "severity.kernel-fallback")),
    ]


def test_a_sibling_imported_unguarded_keeps_the_blocker(tmp_path: Path) -> None:
    unguarded = "import torch\nfrom .flash_attention import pad\n\n\ndef attend(q, k, v):\n    return pad(q, k, v, 1)\n"
    assert rows(tmp_path, unguarded) == [("DEP002", "hf/models/flash_attention.py", 2, "blocker", ())]
