"""A project whose Python is all examples, tests and docs ships its examples (blind set
43: ChatLaw's only code is `demo/web.py`, the web demo of its model): they are the
product, so the scan prices them and their validation instead of reporting 0 hours."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

DEMO = """\
import torch
from transformers import AutoModelForCausalLM


def main(name):
    model = AutoModelForCausalLM.from_pretrained(name, device_map="auto")
    return model.to("cuda")


if __name__ == "__main__":
    main("org/model")
"""


def roles(root: Path, files: dict[str, str]) -> tuple[set[tuple[str, str, str]], float]:
    write_tree(root, files)
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    rows = {(f.path, f.role, f.because[0].rule if f.because else "") for f in result.findings if f.rule == "CA003"}
    return rows, result.to_dict()["summary"]["effort_hours"]["high"]


def test_a_demo_that_is_all_the_code_is_the_product(tmp_path: Path) -> None:
    rows, hours = roles(tmp_path, {"demo/web.py": DEMO, "tests/test_prompt.py": "def test_x():\n    assert True\n"})
    assert rows == {("demo/web.py", "script", "role.sole-code")}
    assert hours > 0


def test_a_demo_beside_a_library_stays_an_example(tmp_path: Path) -> None:
    """Adversarial: the project has product code of its own."""
    rows, _ = roles(tmp_path, {"demo/web.py": DEMO, "pkg/__init__.py": "", "pkg/model.py": "import torch\n\n\ndef build():\n    return torch.nn.Linear(2, 2)\n"})
    assert rows == {("demo/web.py", "example", "role.example")}
