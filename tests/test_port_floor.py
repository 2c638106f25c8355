"""The least a port costs (rules/judgement.yaml `validation.port_floor`): a product with a
workload is never priced under a TPU environment, a first run per workload and a numerics
check. The hours are topped up in the validation items and weigh nothing in the score."""

from __future__ import annotations

from test_scoring import RULES, WITHOUT_PORT_FLOOR, finding

from tpucheck.judge.score import compute_score
from tpucheck.ruleset.loader import load_judgement

JUDGEMENT = load_judgement()
FLOOR = JUDGEMENT.scoring.port_floor
NO_FLOOR = WITHOUT_PORT_FLOOR


def test_the_shipped_floor_is_a_days_work() -> None:
    assert FLOOR == (4.0, 12.0)


def test_a_small_port_is_topped_up_to_the_floor_in_its_validation_items() -> None:
    found = [finding("DEV", "major", 1)]
    bare = compute_score(found, RULES, NO_FLOOR, ("training", "inference"))
    floored = compute_score(found, RULES, JUDGEMENT, ("training", "inference"))
    assert bare.effort.high < FLOOR[1]
    assert (floored.effort.low, floored.effort.high) == FLOOR
    validation = [item for item in floored.plan if item.rule == "validation"]
    assert len(validation) == 2
    assert abs(sum(item.effort.low for item in floored.plan) - FLOOR[0]) < 0.05
    assert abs(sum(item.effort.high for item in floored.plan) - FLOOR[1]) < 0.05


def test_the_floor_weighs_nothing_in_the_score() -> None:
    found = [finding("DEV", "major", 1), finding("SYNC", "minor", 2)]
    bare = compute_score(found, RULES, NO_FLOOR, ("inference",))
    floored = compute_score(found, RULES, JUDGEMENT, ("inference",))
    assert (floored.score, floored.grade, floored.cost) == (bare.score, bare.grade, bare.cost)


def test_a_port_above_the_floor_is_not_touched() -> None:
    """Adversarial: a kernel port is priced by its items alone."""
    found = [finding("KERNEL", "blocker", n) for n in range(3)]
    bare = compute_score(found, RULES, NO_FLOOR, ("training",))
    floored = compute_score(found, RULES, JUDGEMENT, ("training",))
    assert bare.effort.low > FLOOR[0]
    assert floored.effort == bare.effort and floored.plan == bare.plan


def test_a_tree_with_no_workload_has_no_floor() -> None:
    """Adversarial: nothing of PyTorch to run (no model, no training step): no port."""
    found = [finding("DEV", "minor", 1)]
    assert compute_score(found, RULES, JUDGEMENT, ()).effort == compute_score(found, RULES, NO_FLOOR, ()).effort
