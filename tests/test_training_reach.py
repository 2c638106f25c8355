"""Modules only non-training scripts reach (analyze/training_reach.py): a backward-only
failure there is a note. Audit AK found twelve weight_norm blockers in Bert-VITS2's older
model copies, which only its web UI loads while `train_ms.py` trains the newest copy; the
look-alikes keep their blockers wherever a training step may reach the layer."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()

LAYER = """\
import torch
from torch import nn


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.utils.weight_norm(nn.Conv1d(1, 16, 5))

    def forward(self, wave):
        return torch.tanh(self.conv(wave))
"""

STEP = """\
import torch


def step(model, wave, opt):
    loss = model(wave).mean()
    loss.backward()
    opt.step()
"""

TRAIN = """\
import torch
from models import Discriminator
from trainer import step

if __name__ == "__main__":
    model = Discriminator()
    step(model, torch.zeros(1, 1, 64), torch.optim.Adam(model.parameters()))
"""

WEBUI = """\
import torch
from legacy.models_v1 import Discriminator

if __name__ == "__main__":
    print(Discriminator()(torch.zeros(1, 1, 64)).shape)
"""


def rows(root: Path, files: dict[str, str]) -> set[tuple[str, int, str, str]]:
    write_tree(root, files)
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return {(f.path, f.span.line, f.severity, f.because[-1].rule if f.because else "") for f in result.findings if f.rule == "UO008"}


APP = {"models.py": LAYER, "trainer.py": STEP, "train.py": TRAIN, "legacy/__init__.py": "", "legacy/models_v1.py": LAYER, "webui.py": WEBUI}


def test_an_older_copy_only_the_web_ui_loads_is_a_note(tmp_path: Path) -> None:
    """The probe: `train.py` trains `models.py` through `trainer.py`; the older copy only
    `webui.py` (a script whose imports reach no training step) loads."""
    assert rows(tmp_path, APP) == {
        ("models.py", 8, "blocker", ""),
        ("legacy/models_v1.py", 8, "info", "severity.no-training-reach"),
    }


def test_the_reason_names_the_scripts(tmp_path: Path) -> None:
    result = scan(str(_write(tmp_path, APP)), RULESET, ScanOptions(jobs=1, use_cache=False))
    found = next(f for f in result.findings if f.rule == "UO008" and f.path == "legacy/models_v1.py")
    assert found.because[-1].evidence.startswith("only `webui.py`, which run no training step")


def _write(root: Path, files: dict[str, str]) -> Path:
    write_tree(root, files)
    return root


def test_a_script_that_also_reaches_a_training_step_keeps_the_blocker(tmp_path: Path) -> None:
    """Adversarial: the web UI also imports the trainer (fine-tuning from the UI)."""
    webui = WEBUI.replace("import torch\n", "import torch\nimport trainer\n", 1)
    assert ("legacy/models_v1.py", 8, "blocker", "") in rows(tmp_path, {**APP, "webui.py": webui})


def test_a_library_whose_users_import_trainer_and_models_apart_keeps_the_blocker(tmp_path: Path) -> None:
    """Adversarial: a package exports its models and its trainer side by side, and a
    command-line demo imports the models only. The package is a root no script is: its
    users may train what it exports."""
    files = {
        "lib/__init__.py": "from lib.models import Discriminator\nfrom lib.trainer import step\n",
        "lib/models.py": LAYER,
        "lib/trainer.py": STEP,
        "demo.py": "import torch\nfrom lib.models import Discriminator\n\nif __name__ == '__main__':\n    print(Discriminator())\n",
    }
    assert rows(tmp_path, files) == {("lib/models.py", 8, "blocker", "")}


def test_a_module_nothing_imports_is_judged_by_what_it_does(tmp_path: Path) -> None:
    """Adversarial: a discriminator no module imports (audits judge unreferenced code by
    what it does: a discriminator trains)."""
    assert ("legacy/models_v1.py", 8, "blocker", "") in rows(tmp_path, {**APP, "webui.py": "print('ui')\n"})


def test_a_training_path_that_imports_by_name_keeps_every_blocker(tmp_path: Path) -> None:
    """Adversarial: the trainer picks its model with `importlib.import_module`, so the
    graph cannot tell which modules it trains."""
    train = TRAIN.replace("from models import Discriminator\n", "import importlib\n").replace(
        "model = Discriminator()", "model = importlib.import_module('legacy.models_v1').Discriminator()"
    )
    assert ("legacy/models_v1.py", 8, "blocker", "") in rows(tmp_path, {**APP, "train.py": train})


def test_a_script_without_a_main_block_is_no_script(tmp_path: Path) -> None:
    """Adversarial: a root with no main block, nothing launching it, may be a module a
    user imports: what it reaches keeps its severity."""
    webui = "import torch\nfrom legacy.models_v1 import Discriminator\n\n\ndef build():\n    return Discriminator()\n"
    assert ("legacy/models_v1.py", 8, "blocker", "") in rows(tmp_path, {**APP, "webui.py": webui})
