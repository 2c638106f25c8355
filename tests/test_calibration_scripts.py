"""The calibration and precision scripts decide what "in band" and "precision" mean; these
tests pin those decisions on small hand-made inputs (no public repository needed)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import calibrate  # noqa: E402
import precision_sample as ps  # noqa: E402
from calibration_common import Repo, load_set  # noqa: E402


def test_grade_band_spans_letters_in_order() -> None:
    assert calibrate.grade_band("A-B") == {"A", "B"}
    assert calibrate.grade_band("B-D") == {"B", "C", "D"}
    assert calibrate.grade_band("f") == {"F"}
    with pytest.raises(ValueError):
        calibrate.grade_band("A-E")


def _report(grade: str, summary_extra: dict[str, object]) -> dict[str, object]:
    summary = {"score": 80.0, "grade": grade, "effort_hours": {"low": 10, "high": 90},
               "training_score": 79.0, "inference_score": 85.0, "findings": 3,
               "by_severity": {"blocker": 1}}
    summary.update(summary_extra)
    return {"summary": summary}


def test_measure_prefers_product_effort_and_says_when_it_fell_back() -> None:
    total = calibrate.measure(_report("B", {}))
    assert total.effort == (10.0, 90.0) and not total.effort_is_product
    product = calibrate.measure(
        _report("B", {"effort_hours": {"low": 10, "high": 90, "product": {"low": 2, "high": 6},
                                       "supporting": {"low": 1, "high": 3}}})
    )
    assert product.effort == (2.0, 6.0) and product.effort_is_product
    assert product.supporting == (1.0, 3.0)


def test_in_band_uses_grade_letters_and_geometric_middle_of_effort() -> None:
    repo = Repo(repo="o/n", commit="c", kind="pure-pytorch", grade="A-B", effort=(1.0, 8.0))
    # sqrt(2 * 18) = 6 lies in 1-8 although the high end (18) does not
    inside = calibrate.judge(repo, calibrate.measure(_report("B", {"effort_hours": {"low": 2, "high": 18}})))
    assert inside.in_band
    # sqrt(4 * 36) = 12 lies above 8
    too_much = calibrate.judge(repo, calibrate.measure(_report("A", {"effort_hours": {"low": 4, "high": 36}})))
    assert too_much.grade_ok and not too_much.effort_ok and not too_much.in_band
    wrong_grade = calibrate.judge(repo, calibrate.measure(_report("C", {"effort_hours": {"low": 2, "high": 4}})))
    assert not wrong_grade.grade_ok and wrong_grade.effort_ok


def test_committed_set_has_three_kinds_of_at_least_four_and_valid_bands() -> None:
    cset = load_set()
    kinds = Counter(r.kind for r in cset.repos)
    assert set(kinds) == {"tpu-support", "pure-pytorch", "kernels"}
    assert min(kinds.values()) >= 4
    for r in cset.repos:
        calibrate.grade_band(r.grade)
        assert r.effort and 0 <= r.effort[0] < r.effort[1] and len(r.commit) == 40 and r.why
    names = {r.repo for r in cset.repos}
    assert len(cset.precision_repos) >= 6 and not names & {r.repo for r in cset.precision_repos}


def test_allocate_gives_every_rule_one_then_proportional_under_the_cap() -> None:
    quota = ps.allocate({"A": 100, "B": 10, "C": 1, "D": 2}, n=10, cap=5)
    assert quota == {"A": 5, "B": 3, "C": 1, "D": 1}  # A capped, its share flows to B
    assert sum(ps.allocate({"A": 3, "B": 2}, n=50, cap=12).values()) == 5  # never more than exist


def _items() -> list[ps.Item]:
    out = []
    for repo in ("r1", "r2"):
        for i in range(20):
            out.append(ps.Item(repo, {"rule": "HS001", "path": "a.py", "line": i + 1, "column": 1}))
        out.append(ps.Item(repo, {"rule": "CK001", "path": "k.cu", "line": 1, "column": 1}))
    return out


def test_draw_is_reproducible_and_spreads_a_rule_over_repositories() -> None:
    first = ps.draw(_items(), n=6, cap=4, seed=3)
    again = ps.draw(list(reversed(_items())), n=6, cap=4, seed=3)
    assert [i.key for i in first] == [i.key for i in again]
    rules = Counter(i.finding["rule"] for i in first)
    assert rules == {"HS001": 4, "CK001": 2}
    assert Counter(i.repo for i in first if i.finding["rule"] == "HS001") == {"r1": 2, "r2": 2}


def test_context_marks_the_line_and_shows_two_either_side(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("".join(f"x{i} = {i}\n" for i in range(1, 11)))
    text = ps.context(tmp_path, {"path": "m.py", "line": 5})
    assert text.splitlines() == ["  3 | x3 = 3", "  4 | x4 = 4", "> 5 | x5 = 5", "  6 | x6 = 6", "  7 | x7 = 7"]
    nb = {"cells": [{"source": ["a = 1\n"]}, {"source": ["b = 2\n", "c = 3\n"]}]}
    (tmp_path / "n.ipynb").write_text(json.dumps(nb))
    assert ps.context(tmp_path, {"path": "n.ipynb", "cell": 2, "line": 2}).splitlines()[-1] == "> 2 | c = 3"


def test_summarize_counts_strict_and_lenient_from_a_filled_markdown_sheet(tmp_path: Path) -> None:
    rows = ps.rows_for(
        [ps.Item("o/r", {"rule": "HS001", "path": "a.py", "line": 1, "severity": "major", "category": "host-sync", "role": "library"})] * 4,
        tmp_path, {"o/r": "o__r"},
    )
    sheet = tmp_path / "sheet.md"
    ps.write_markdown(rows, sheet, "# sheet")
    text = sheet.read_text()
    for verdict in ("right", "wrong-severity", "false"):
        text = text.replace("verdict: \n", f"verdict: {verdict}\n", 1)
    sheet.write_text(text)
    out = ps.summarize([sheet])
    assert "| o/r | 3 | 1 | 1 | 1 | 1 | 33 % | 67 % |" in out
    assert "| major | 3 | 1 | 1 | 1 | 1 | 33 % | 67 % |" in out  # the severity table
    pooled = ps.summarize([sheet, sheet])
    assert "| o/r | 6 | 2 | 2 | 2 | 2 | 33 % | 67 % |" in pooled
    bad = tmp_path / "bad.md"
    bad.write_text(text.replace("verdict: false", "verdict: maybe"))
    with pytest.raises(ValueError):
        ps.summarize([bad])
    out_csv = tmp_path / "verdicts.csv"
    assert ps.cmd_verdicts(sheet, out_csv) == 0
    committed = out_csv.read_text()
    assert committed.splitlines()[0] == "id,repo,path,line,rule,severity,category,role,guarded,verdict,note"
    assert "snippet" not in committed and committed.count(",right,") == 1 and committed.count(",false,") == 1


def test_doc_table_states_every_repository_with_its_commit_and_bands() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "calibration.md").read_text(encoding="utf-8")
    for r in load_set().repos:
        assert r.effort is not None
        row = f"| `{r.commit[:10]}` | {r.kind} | {r.python_lines:,} | {r.grade} | {r.effort[0]:g}-{r.effort[1]:g} |"
        assert row in doc, f"docs/calibration.md disagrees with calibration_set.json on {r.repo}"


def test_recheck_keeps_judged_findings_reopens_moved_ones_and_sets_gone_apart() -> None:
    row = {"id": "1", "repo": "r", "path": "a.py", "line": "3", "rule": "X1", "severity": "major", "verdict": "right", "note": ""}
    moved = {**row, "id": "2", "line": "5", "rule": "X2", "verdict": "wrong-severity", "note": "should be minor"}
    gone = {**row, "id": "3", "path": "b.py", "line": "1", "rule": "X3", "severity": "info", "verdict": "false", "note": "cpu"}
    report = {"r": {"findings": [
        {"rule": "X1", "path": "a.py", "line": 3, "severity": "major"},
        {"rule": "X2", "path": "a.py", "line": 5, "severity": "minor"},
    ]}}  # fmt: skip
    kept, dropped = ps.recheck([row, moved, gone], report)
    assert kept[0] == row
    assert (kept[1]["severity"], kept[1]["verdict"]) == ("minor", "")
    assert kept[1]["note"] == "severity now minor (was major; verdict then: wrong-severity: should be minor)"
    assert dropped == [gone]
