"""What audit V (docs/audits/audit-v.md) judged wrong, each with a probe that fails on the
commit it audited (dddd246) and a look-alike that must keep its judgement."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

GPT = """\
class GPT:
    def load(self, folder):
        {load}
            from .engine import LLM

            self.llm = LLM(folder)
"""


def engine_rows(root: Path, load: str) -> set[tuple[str, str, tuple[str, ...]]]:
    files = {
        "pkg/__init__.py": "from .model.gpt import GPT\n",
        "pkg/model/__init__.py": "from .gpt import GPT\n",
        "pkg/model/gpt.py": GPT.format(load=load),
        "pkg/model/engine/__init__.py": "from .llm import LLM\n",
        "pkg/model/engine/llm.py": "class LLM:\n    def __init__(self, folder):\n        from .worker import Worker\n\n        self.worker = Worker(folder)\n",
        "pkg/model/engine/worker.py": "from vllm.config import CacheConfig\n\n\nclass Worker:\n    pass\n",
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return {(f.path, f.severity, tuple(r.rule for r in f.because)[:1]) for f in result.findings if f.rule == "DEP007"}


def test_a_lazy_import_inside_an_engine_the_product_loads_by_choice_is_that_choice(tmp_path: Path) -> None:
    """Audit V (ChatTTS): `if self.use_vllm: from .velocity import LLM` loads the engine
    package by choice; inside it, `from .worker import Worker` in a method made the whole
    package (its own parent) a lazy import with no choice, and its vLLM imports blockers."""
    assert engine_rows(tmp_path, "if self.use_engine:") == {("pkg/model/engine/worker.py", "minor", ("fallback.guarded-module",))}


def test_an_engine_loaded_lazily_with_no_choice_keeps_its_package_blocker(tmp_path: Path) -> None:
    """Adversarial: the same engine imported in a function with no choice around it (to
    break an import cycle) is the main path, so vLLM stays a blocker."""
    rows = engine_rows(tmp_path, "with self.lock:")
    assert rows == {("pkg/model/engine/worker.py", "blocker", ())}


@pytest.mark.parametrize("load", ["if self.use_engine:"])
def test_the_evidence_names_the_choice(tmp_path: Path, load: str) -> None:
    engine_rows(tmp_path, load)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    (worker,) = [f for f in result.findings if f.rule == "DEP007"]
    assert worker.because[0].evidence.startswith("pkg/model/engine/worker.py is only imported by modules the product loads by choice")


def test_a_value_chain_that_rejects_unknown_names_keeps_its_option(tmp_path: Path) -> None:
    """Audit V (magic-animate): `elif act == "mish": ... else: raise ValueError(act)`: the
    raise rejects unknown names; the Mish branch is one value of a setting whose default is
    another, an option (major), not the main path. Adversarial: a CUDA test whose other side
    raises keeps its blocker weight (no fallback)."""
    code = (
        "import torch\nimport torch.nn as nn\n\n\n"
        'def activation(act="silu"):\n'
        '    if act == "silu":\n'
        "        return nn.SiLU()\n"
        '    elif act == "mish":\n'
        "        return nn.Mish()\n"
        "    else:\n"
        "        raise ValueError(act)\n\n\n"
        "def fused(x):\n"
        "    if torch.cuda.is_available():\n"
        "        return nn.functional.mish(x)\n"
        "    else:\n"
        '        raise RuntimeError("needs CUDA")\n'
    )
    (tmp_path / "act.py").write_text(code, encoding="utf-8")
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert {(f.span.line, f.severity, f.because[0].rule if f.because else None) for f in result.findings if f.rule == "UO958"} == {
        (9, "major", "guard.option"),
        (16, "blocker", None),
    }
