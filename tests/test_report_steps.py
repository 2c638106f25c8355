"""A plan step of no rule (a validation run on the target) is shown by its title alone in
every report: `validate training on the target: ...`, never `validation validate ...`
(seen in the HTML and the terminal at 80 columns)."""

from __future__ import annotations

import io
from pathlib import Path

from tpucheck.engine import ScanOptions, scan
from tpucheck.report import html, markdown, terminal
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
TRAIN = "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\nloss = model(torch.ones(2)).sum()\nloss.backward()\n"


def test_a_validation_step_is_its_title_and_a_rule_step_keeps_its_rule(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    assert any(item.rule == "validation" for item in result.score.plan)
    stream = io.StringIO()
    terminal.write(result, stream)
    pages = {"terminal": stream.getvalue(), "html": html.render(result), "markdown": markdown.render(result)}
    for name, page in pages.items():
        assert "validation validate" not in page, name
        assert "validate training on the target" in page, name
        assert "CA003" in page, name
