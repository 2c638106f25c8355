"""Settings a config tree or a click command declares (audits AT, AU and AV).

Three blockers of the audits sat behind settings tpucheck could not read: a yacs key off by
default (`_C.MODEL.CENTERNET.MORE_POS = False`, tested as `if self.more_pos:`), a yacs key
whose default and every shipped config pick another branch (`POOLER_TYPE`, only
`"ROIPool"` builds torchvision's RoIPool), and a click flag (`@click.option("--sync-bn",
is_flag=True, default=False)`). Look-alikes keep their weight: a YAML config that turns the
key on or sets the branch's value, a Python config that sets it, a flag on by default.
"""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from tpucheck.analyze.declared import UNKNOWN, declared_settings
from tpucheck.analyze.imports import OVERRIDE, declared_options
from tpucheck.engine import ScanOptions, scan
from tpucheck.findings import ImportFacts
from tpucheck.result import ScanResult
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
INFO = "a kernel or CUDA-only package with a working fallback: info"
MAJOR = "a fallback is kept: at most major"

DEFAULTS = """\
    from yacs.config import CfgNode as CN

    _C = CN()
    _C.MODEL = CN()
    _C.MODEL.HEAD = CN()
    _C.MODEL.HEAD.MORE_POS = False  # extra positives
    _C.MODEL.HEAD.QUANT_HEAD = False
    _C.MODEL.HEAD.POOLER_TYPE = "ROIAlignV2"
    _C.MODEL.HEAD.NORM = "BN"
    """

HEAD = """\
    from torchvision.ops import roi_pool
    from transformers import BitsAndBytesConfig

    class Head:
        def __init__(self, cfg, more_pos, pooler_type, norm):
            self.more_pos = more_pos
            self.quant = None
            if self.more_pos:
                self.quant = BitsAndBytesConfig(load_in_4bit=True)
            if cfg.MODEL.HEAD.QUANT_HEAD:
                self.quant = BitsAndBytesConfig(load_in_4bit=True)
            if pooler_type == "ROIPool":
                self.pool = roi_pool(cfg.features, cfg.boxes, 7)
            if norm == "SyncBN":
                self.quant = BitsAndBytesConfig(load_in_4bit=True)
    """

TRAIN = """\
    import click
    from transformers import BitsAndBytesConfig

    @click.command()
    @click.option("--sync-bn", is_flag=True, default=False, help="Use sync batch norm (slow)")
    @click.option("--fast/--no-fast", help="fused kernels")
    @click.option("--eager", is_flag=True, default=True)
    @click.option("--quant", default="none")
    def main(sync_bn, fast, eager, quant):
        config = None
        if sync_bn:
            config = BitsAndBytesConfig(load_in_4bit=True)
        if fast:
            config = BitsAndBytesConfig(load_in_4bit=True)
        if eager:
            config = BitsAndBytesConfig(load_in_4bit=True)
        if quant == "nf4":
            config = BitsAndBytesConfig(load_in_4bit=True)
        return config
    """


def scanned(root: Path) -> ScanResult:
    return scan(str(root), RULESET, ScanOptions(jobs=1))


def rows(result: ScanResult, path: str) -> list[tuple[int, str, str, tuple[str, ...]]]:
    return [(f.span.line, f.rule, f.severity, tuple(r.evidence for r in f.because)) for f in result.findings if f.path == path]


def test_a_config_key_off_by_default_and_a_value_no_config_sets_keep_their_branches_optional(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "repo",
        {
            "det/__init__.py": "",
            "det/defaults.py": DEFAULTS,
            "det/head.py": HEAD,
            "configs/base.yaml": "MODEL:\n  HEAD:\n    POOLER_TYPE: ROIAlign  # v1 boxes\n    NORM: \"SyncBN\"\n",
        },
    )
    assert rows(scanned(root), "det/head.py") == [
        (9, "HF002", "info", ("`self.more_pos` at det/head.py:8; `more_pos` is off by default (det/defaults.py)", INFO)),
        (11, "HF002", "info", ("`cfg.MODEL.HEAD.QUANT_HEAD` at det/head.py:10; `QUANT_HEAD` is off by default (det/defaults.py)", INFO)),
        (
            13,
            "UO033",
            "major",
            ("`pooler_type == \"ROIPool\"` at det/head.py:12; `pooler_type` is 'ROIAlign' or 'ROIAlignV2' wherever the project sets it (det/defaults.py)", MAJOR),
        ),
        # adversarial: a config sets the value this branch tests for
        (15, "HF002", "blocker", ()),
    ]


def test_a_config_that_turns_the_key_on_or_picks_the_branch_keeps_the_blocker(tmp_path: Path) -> None:
    """Adversarial: the same code, with configs (YAML, and a Python config's lower-case
    assignment) that take the branches."""
    root = write_tree(
        tmp_path / "repo",
        {
            "det/__init__.py": "",
            "det/defaults.py": DEFAULTS,
            "det/head.py": HEAD,
            "configs/more.yaml": "MODEL:\n  HEAD:\n    MORE_POS: true\n    QUANT_HEAD: [1]\n",
            "configs/pool.py": "from det.defaults import _C as model\n\nmodel.head.pooler_type = 'ROIPool'\n",
        },
    )
    assert [row[:3] for row in rows(scanned(root), "det/head.py")] == [
        (9, "HF002", "blocker"),
        (11, "HF002", "blocker"),
        (13, "UO033", "blocker"),
        (15, "HF002", "info"),  # no config sets NORM here
    ]


def test_a_click_flag_off_by_default_keeps_its_branch_optional(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/train.py": TRAIN})
    assert rows(scanned(root), "pkg/train.py") == [
        (12, "HF002", "info", ("`sync_bn` at pkg/train.py:11; `sync_bn` is off by default (pkg/train.py)", INFO)),
        (14, "HF002", "info", ("`fast` at pkg/train.py:13; `fast` is off by default (pkg/train.py)", INFO)),
        # adversarial: a flag on by default; a value the test asks for is the default's
        (16, "HF002", "blocker", ()),
        (18, "HF002", "info", ("`quant == \"nf4\"` at pkg/train.py:17; `quant` is 'none' by default (pkg/train.py)", INFO)),
    ]


def test_declared_options_reads_config_keys_and_click_options() -> None:
    text = """\
import click
_C.MODEL.MORE_POS = False
_C.MODEL.POOLER_TYPE = 'ROIAlign'  # or ROIPool
_C.SOLVER.STEPS = (1, 2)
cfg.model.use_fast = True
torch.backends.cudnn.benchmark = True
    _C.INDENTED = False
@click.option("-s", "--sync-bn", is_flag=True)
@click.option("--workers", type=int, default=4)
@click.option("--name", help="(optional)")
def main(sync_bn, workers, name): ...
"""
    assert declared_options(text) == (
        ("sync_bn", "False"),
        ("workers", "4"),
        ("MORE_POS", "False"),
        ("more_pos", "False"),
        ("POOLER_TYPE", "'ROIAlign'"),
        ("pooler_type", "'ROIAlign'"),
        (OVERRIDE + "use_fast", "True"),
        (OVERRIDE + "benchmark", "True"),
    )


def test_declared_settings_joins_overrides_and_yaml_values_to_declared_names_only() -> None:
    facts = {
        "a.py": ImportFacts(options=(("POOLER_TYPE", "'A'"), ("pooler_type", "'A'"), ("USE_X", "False"), ("use_y", "False"))),
        "b.py": ImportFacts(options=((OVERRIDE + "use_y", "True"), (OVERRIDE + "benchmark", "True"))),
    }
    texts = {"c.yaml": "POOLER_TYPE: B\nUSE_X: null\nOTHER: 1\n", "d.yml": "POOLER_TYPE: {a: 1}\n"}
    off, values = declared_settings(facts, facts.get, texts, texts.get)
    assert off == {"USE_X": "a.py"}  # use_y is set on by b.py; benchmark is declared nowhere
    assert values == {}  # d.yml's POOLER_TYPE is no literal: nothing settled
    del texts["d.yml"]
    off, values = declared_settings(facts, facts.get, texts, texts.get)
    assert values == {"POOLER_TYPE": (("'A'", "'B'"), "a.py"), "pooler_type": (("'A'", "'B'"), "a.py")}
    assert UNKNOWN == "?"
