"""The rule-set store (ruleset/store.py): a loaded rule set comes back from the user's cache
folder exactly as built, any change to what it was built from builds it again, and a bad
entry is rebuilt, never trusted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tpucheck.ruleset import loader, store
from tpucheck.ruleset.loader import load_ruleset, load_ruleset_lenient
from tpucheck.ruleset.model import Ruleset

TEAM_RULE = """
rules:
  - id: TEAM001
    name: team-sync
    category: cuda-api
    severity: major
    message: Our own sync wrapper.
    fix: {tpu: Drop it.}
    docs: ["https://example.org/team"]
    match:
      call: ourlib.sync
    examples:
      flag: ["import ourlib\\nourlib.sync()  # expect"]
      pass: ["import ourlib\\nourlib.other()"]
"""


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(store.DISABLE_ENV, raising=False)
    return tmp_path / "cache" / "tpucheck" / "rulesets"


def _team_file(tmp_path: Path, text: str = TEAM_RULE) -> Path:
    path = tmp_path / "team.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _no_build(files: list[Path]) -> tuple[Ruleset, list[loader.RuleProblem]]:
    raise AssertionError("built again: the store was not used")


def test_the_built_in_rules_survive_the_encoding() -> None:
    ruleset = load_ruleset()
    data = json.loads(json.dumps(store.encode(ruleset, Ruleset)))
    assert store.decode(data, Ruleset) == ruleset


def test_a_second_load_comes_from_the_store(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    team = _team_file(tmp_path)
    first = load_ruleset([team])
    assert len(list(home.glob("*.json"))) == 1
    monkeypatch.setattr(loader, "_build", _no_build)
    assert load_ruleset([team]) == first
    assert "TEAM001" in first.by_id()


def test_a_changed_rule_file_is_built_again(tmp_path: Path, home: Path) -> None:
    team = _team_file(tmp_path)
    load_ruleset([team])
    team.write_text(TEAM_RULE.replace("severity: major", "severity: minor"), encoding="utf-8")
    assert load_ruleset([team]).by_id()["TEAM001"].severity == "minor"
    assert len(list(home.glob("*.json"))) == 2


def test_problems_are_stored_with_the_rules(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    team = _team_file(tmp_path, TEAM_RULE.replace("severity: major", "severity: huge"))
    ruleset, problems = load_ruleset_lenient([team])
    assert problems and "TEAM001" not in ruleset.by_id()
    monkeypatch.setattr(loader, "_build", _no_build)
    assert load_ruleset_lenient([team]) == (ruleset, problems)


def _spoil(entry: Path, change: str) -> None:
    data = json.loads(entry.read_text(encoding="utf-8"))
    if change == "not json":
        entry.write_text("{", encoding="utf-8")
        return
    if change == "layout":
        data["layout"] = "ruleset-v0"
    elif change == "key":
        data["key"] = "0" * 64
    elif change == "a number for a string":
        data["ruleset"]["rules"][0]["severity"] = 3
    elif change == "a missing field":
        del data["ruleset"]["rules"][0]["message"]
    elif change == "a bad regex":
        data["ruleset"]["device"]["names"] = {"re": "(", "flags": 32}
    entry.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize("change", ["not json", "layout", "key", "a number for a string", "a missing field", "a bad regex"])
def test_a_bad_entry_is_built_again(tmp_path: Path, home: Path, change: str) -> None:
    team = _team_file(tmp_path)
    fresh = load_ruleset([team])
    (entry,) = home.glob("*.json")
    _spoil(entry, change)
    assert load_ruleset([team]) == fresh
    assert json.loads(entry.read_text(encoding="utf-8"))["layout"] == store.LAYOUT  # written again, whole


def test_a_store_that_cannot_be_written_is_no_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    team = _team_file(tmp_path)
    assert "TEAM001" in load_ruleset([team]).by_id()


def test_the_store_can_be_turned_off(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(store.DISABLE_ENV, "1")
    load_ruleset([_team_file(tmp_path)])
    assert not home.exists()


def test_an_entry_is_json_of_the_model(tmp_path: Path, home: Path) -> None:
    load_ruleset([_team_file(tmp_path)])
    (entry,) = home.glob("*.json")
    data = json.loads(entry.read_text(encoding="utf-8"))
    team = next(rule for rule in data["ruleset"]["rules"] if rule["id"] == "TEAM001")
    assert (team["severity"], team["matchers"][0]["patterns"]) == ("major", ["ourlib.sync"])
    assert os.stat(home).st_mode & 0o077 == 0  # the folder is the user's alone
