"""Operator coverage judged from the targets' dispatcher tables (issue 24, point 4).

TorchTPU's table (rules/op-status.json, from torch_tpu 0.2.0's dispatcher) says which ATen
ops raise there (`TpuMissingOpFallback`); PyTorch/XLA's says which run on the host. A rule
that names its ops (`ops:`) is judged per target from them, and the generated pack adds a
rule per public function a target lacks. These tests hold the rules to the table, and the
scan to the issue's cases."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.result import ScanResult
from tpucheck.ruleset import load_ruleset
from tpucheck.trace.opstatus import OpTable, load_op_table

ROOT = Path(__file__).resolve().parent.parent
PACK = ROOT / "rules" / "unsupported-op-generated.yaml"
DATA = ROOT.parent / "shared" / "data" / "op-coverage"
CATALOG = ROOT.parent / "shared" / "RULE_CATALOG.md"
RULESET = load_ruleset()
TABLE = load_op_table()

needs_data = pytest.mark.skipif(
    not (DATA / "top_cpu_fallbacks.json").is_file() or not CATALOG.is_file(),
    reason=f"op-coverage data not present at {DATA} (the shared data checkout beside the project)",
)

STEP = """\
    import torch
    import torch.nn.functional as F


    def train_step(model, batch, opt):
        scores = model(batch)
        med = torch.median(scores)
        total = scores.nansum()
        idx = torch.nonzero(scores > 0)
        loss = F.huber_loss(scores, batch) + med + total + idx.sum()
        loss.backward()
        opt.step()
        return loss
    """


def scan_step(tmp_path: Path, target: str, code: str = STEP) -> ScanResult:
    root = write_tree(tmp_path / target, {"pkg/train.py": code})
    return scan(str(root), RULESET.for_target(target), ScanOptions(jobs=1, use_cache=False))


def rows(result: ScanResult) -> list[tuple[str, int, str, str]]:
    return sorted((f.rule, f.span.line, f.category, f.severity) for f in result.findings)


def test_missing_ops_are_blockers_on_torchtpu_and_native_ones_are_not_unsupported(tmp_path: Path) -> None:
    table_rules = {rule.id for rule in RULESET.rules if rule.name.startswith("torchtpu-missing-")}
    found = rows(scan_step(tmp_path, "torchtpu"))
    nansum = next(r for r in found if r[1] == 8)
    huber = next(r for r in found if r[1] == 10)
    assert ("UO010", 7, "unsupported-op", "blocker") in found  # torch.median: aten::median raises
    assert nansum[0] in table_rules and nansum[2:] == ("unsupported-op", "blocker")
    assert huber[0] in table_rules and huber[2:] == ("unsupported-op", "blocker")
    # aten::nonzero has a TorchTPU kernel: a data-dependent shape in eager code, not an unsupported op
    assert [r for r in found if r[1] == 9] == [("DS001", 9, "dynamic-shape", "info")]


def test_on_xla_nonzero_is_a_host_round_trip_and_median_a_cpu_fallback(tmp_path: Path) -> None:
    found = rows(scan_step(tmp_path, "xla"))
    assert ("DS001", 9, "dynamic-shape", "major") in found
    assert ("UO010", 7, "unsupported-op", "major") in found
    assert not any(r[3] == "blocker" for r in found)


def test_gradscaler_raises_on_torchtpu_only_where_it_stays_enabled(tmp_path: Path) -> None:
    # a scaler for "cuda" disables itself where CUDA is absent (torch/amp/grad_scaler.py):
    # training runs unscaled; one for the device in use stays enabled and its ops raise
    # (the product trains: a scaler's failure is a training step's, severity.no-training)
    code = "import torch\nscaler = torch.amp.GradScaler('cuda')\nother = torch.amp.GradScaler(device.type)\nscaler.scale(loss).backward()\n"
    scalers = ("CA015", "CA023")
    assert [(r[0], r[3]) for r in rows(scan_step(tmp_path, "torchtpu", code)) if r[0] in scalers] == [("CA015", "major"), ("CA023", "blocker")]
    assert [(r[0], r[3]) for r in rows(scan_step(tmp_path, "xla", code)) if r[0] in scalers] == [("CA015", "major"), ("CA023", "major")]


def _statuses(ops: tuple[str, ...], target: str) -> set[str]:
    return {TABLE.status("aten::" + op, target).status for op in ops}


@pytest.mark.parametrize("rule", [r for r in RULESET.rules if r.ops], ids=lambda r: r.id)
def test_rules_that_name_their_ops_are_judged_by_the_table(rule) -> None:
    """A blocker on TorchTPU exactly where one of its ops has no kernel there; an
    unsupported-op rule whose ops all run there is not reported on TorchTPU. The table's
    PyTorch/XLA rules are reported only there, where their ops fall back to the CPU."""
    assert "unknown" not in _statuses(rule.ops, "torchtpu"), f"{rule.id}: an op no table lists"
    on_tpu = RULESET.for_target("torchtpu").by_id().get(rule.id)
    on_xla = RULESET.for_target("xla").by_id().get(rule.id)
    if rule.name.startswith("xla-cpu-fallback-"):
        assert on_tpu is None and on_xla is not None and "cpu-fallback" in _statuses(rule.ops, "xla")
        return
    if "missing" in _statuses(rule.ops, "torchtpu"):
        assert on_tpu is not None and on_tpu.severity == "blocker"
    elif rule.category == "unsupported-op":
        assert on_tpu is None
    if rule.name.startswith("torchtpu-missing-") and on_xla is not None:
        assert "cpu-fallback" in _statuses(rule.ops, "xla")


def test_every_missing_public_function_reaches_a_torchtpu_rule() -> None:
    """What the issue names: `median`, `nansum`, `mode`, `huber_loss`, `trace` and the fp16
    GradScaler's two ops are missing on TorchTPU; each is named by a rule judged there."""
    judged = {op for rule in RULESET.for_target("torchtpu").rules if rule.severity == "blocker" for op in rule.ops}
    for op in ("median", "nansum", "mode", "huber_loss", "trace", "_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_"):
        assert TABLE.status("aten::" + op, "torchtpu").status == "missing"
        assert op in judged, op
    for op in ("nonzero", "_unique2", "_fft_r2c", "grid_sampler_2d", "_embedding_bag"):
        assert TABLE.status("aten::" + op, "torchtpu").status == "kernel"
        assert op not in judged, op


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_op_rules", ROOT / "scripts" / "generate_op_rules.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_an_alternative_is_offered_only_where_its_ops_run() -> None:
    generator = _load_generator()
    assert "sort" in generator.alternative("median", "torchtpu", TABLE)
    tiny = OpTable(ops={"aten::sort": {"torchtpu": {"s": "missing"}}, "aten::select.int": {"torchtpu": {"s": "kernel"}}}, notes={}, sources=())
    assert generator.alternative("median", "torchtpu", tiny) is None
    assert generator.alternative("no-such-family", "torchtpu", TABLE) is None
    broken = OpTable(ops={"aten::select.int": {"torchtpu": {"s": "kernel"}}}, notes={}, sources=())
    with pytest.raises(generator.GenerationError, match="no table lists"):
        generator.alternative("median", "torchtpu", broken)


@needs_data
def test_table_rule_ids_survive_a_regeneration(tmp_path: Path) -> None:
    generator = _load_generator()
    document = yaml.safe_load(PACK.read_text(encoding="utf-8"))
    ids = document["x-table-ids"]
    free = f"UO{max(int(i[2:]) for i in ids.values()) + 1}"
    previous = tmp_path / "unsupported-op-generated.yaml"
    previous.write_text(yaml.safe_dump({"x-table-ids": {**ids, "trace": free}}), encoding="utf-8")
    newer = yaml.safe_load(generator.generate(DATA, CATALOG, previous))
    by_name = {rule["name"]: rule["id"] for rule in newer["rules"]}
    assert by_name["torchtpu-missing-trace"] == free
    assert by_name["torchtpu-missing-nansum"] == ids["nansum"]
