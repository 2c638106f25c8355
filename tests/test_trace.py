"""`tpucheck trace`: the ops of a small model of our own, per phase and line, judged for
both targets; the refusal without --allow-exec; the sandbox's network fence.

The traces run in the real child (one child for the model, twice, which also shows the
report is deterministic). They need torch (the `trace` extra) and skip without it.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tpucheck.ruleset import load_ruleset
from tpucheck.trace.command import TraceFailed, TraceOutcome, TraceRefused, run_trace, run_traces
from tpucheck.trace.judge import judge
from tpucheck.trace.opstatus import load_op_table
from tpucheck.trace.report import dumps
from tpucheck.trace.request import TraceRequest

FIXTURES = Path(__file__).parent / "fixtures" / "trace"
SOURCE_ROOT = Path(__file__).resolve().parent.parent
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed (the `trace` extra): pip install 'tpucheck[trace]'")
ZOO = TraceRequest(model="zoo:build", inputs="zoo:batch", loss="zoo:loss")


def marked(name: str) -> int:
    """The line of zoo.py whose comment starts with `name:`."""
    lines = (FIXTURES / "zoo.py").read_text().splitlines()
    return next(number for number, text in enumerate(lines, start=1) if f"# {name}:" in text)


@pytest.fixture(scope="module")
def zoo() -> list[TraceOutcome]:
    outcomes = run_traces([ZOO, ZOO], target="torchtpu", root=str(FIXTURES), ruleset=load_ruleset(), allow_exec=True)
    assert all(isinstance(o, TraceOutcome) for o in outcomes), outcomes
    return [o for o in outcomes if isinstance(o, TraceOutcome)]


def ops(report: dict[str, Any], phase: str) -> dict[str, dict[str, Any]]:
    return {op["op"]: op for op in report["phases"][phase]["ops"]}


def found(report_findings: list[dict[str, Any]]) -> set[tuple[str, str, str | None, int | None]]:
    return {(f["rule"], f["phase"], f["path"], f["line"]) for f in report_findings}


@needs_torch
def test_each_phase_lists_its_own_ops_with_counts_and_the_line_that_reached_them(zoo: list[TraceOutcome]) -> None:
    report = zoo[0].report
    inference, training = ops(report, "inference"), ops(report, "training")
    assert report["environment"]["route"] == "fake-tpu"
    assert "aten::_softmax" in inference and "aten::_softmax" not in training  # an inference-only op
    assert inference["aten::_softmax"]["first"] == {"path": "zoo.py", "line": marked("SOFTMAX")}
    assert "aten::native_dropout" in training and "aten::native_dropout" not in inference  # a training-only op
    assert training["aten::native_dropout"]["first"] == {"path": "zoo.py", "line": marked("DROPOUT")}
    assert training["aten::median"]["calls"] == 1 and training["aten::median"]["status"] == "missing"
    assert "aten::median" not in inference
    assert any(s["stage"] == "backward" for s in training["aten::embedding_dense_backward"]["sites"])  # backward ops point at their forward line
    assert any(op.startswith("aten::_foreach_") for op in training)  # AdamW's foreach path, as on a device
    assert report["summary"]["inference"]["ops"] == len(inference)


@needs_torch
def test_findings_name_the_rule_phase_and_line(zoo: list[TraceOutcome]) -> None:
    report = zoo[0].report
    median, item, nonzero = marked("MEDIAN"), marked("ITEM"), marked("NONZERO")
    assert found(report["findings"]) == {
        ("RT001", "training", "zoo.py", median),  # median: a blocker on TorchTPU, in training only
        *{("RT003", phase, "zoo.py", item) for phase in ("inference", "training")},  # .item(): a host sync
        *{("RT005", phase, "zoo.py", item) for phase in ("inference", "training")},  # ... and a graph break
        *{("RT004", phase, "zoo.py", nonzero) for phase in ("inference", "training")},  # nonzero: a dynamic shape
        *{("RT005", phase, "zoo.py", nonzero) for phase in ("inference", "training")},
    }
    blocker = next(f for f in report["findings"] if f["rule"] == "RT001")
    assert (blocker["severity"], blocker["op"], blocker["stage"]) == ("blocker", "aten::median", "loss")


@needs_torch
def test_the_same_run_judged_for_xla_adds_its_cpu_fallbacks(zoo: list[TraceOutcome]) -> None:
    report = zoo[0].report
    xla = [f.to_json() for f in judge(report["phases"], "xla", load_ruleset().for_target("xla"), load_op_table())]
    fallbacks = {(rule, phase, line) for rule, phase, _, line in found(xla) if rule == "RT002"}
    nonzero = marked("NONZERO")
    assert fallbacks == {("RT002", "inference", nonzero), ("RT002", "training", nonzero), ("RT002", "training", marked("MEDIAN"))}
    assert not any(f["rule"] == "RT001" for f in xla)
    assert all(f["severity"] == "major" for f in xla if f["rule"] in ("RT002", "RT003", "RT004"))


@needs_torch
def test_the_report_is_deterministic(zoo: list[TraceOutcome]) -> None:
    assert dumps(zoo[0].report) == dumps(zoo[1].report)
    data = json.loads(dumps(zoo[0].report))
    assert data["schema_version"] == "1" and data["kind"] == "tpucheck-trace"
    assert [op["op"] for op in data["phases"]["training"]["ops"]] == sorted(op["op"] for op in data["phases"]["training"]["ops"])


def test_without_allow_exec_nothing_is_imported_or_started(tmp_path: Path) -> None:
    marker = tmp_path / "imported"
    (tmp_path / "model.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\ndef build(): pass\ndef batch(): pass\n")
    with pytest.raises(TraceRefused, match="--allow-exec"):
        run_trace(TraceRequest("model:build", "model:batch"), target="torchtpu", root=str(tmp_path), ruleset=load_ruleset())
    started = subprocess.run(
        [sys.executable, "-m", "tpucheck", "trace", "model:build", "--input", "model:batch", "--root", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(SOURCE_ROOT)}, check=False,
    )  # fmt: skip
    assert started.returncode == 2
    assert started.stderr.strip().splitlines() == [
        "tpucheck: error: `tpucheck trace` imports and runs the model's code (in a sandboxed child process with no network, "
        "a time and memory limit, and no file writes); pass --allow-exec to let it"
    ]
    assert not marker.exists()


@needs_torch
def test_a_model_that_opens_a_socket_fails_inside_the_sandbox_at_once() -> None:
    started = time.monotonic()
    requests = [TraceRequest(f"{module}:build", f"{module}:batch") for module in ("phone_home", "raw_socket")]
    outcomes = run_traces(requests, target="torchtpu", root=str(FIXTURES), ruleset=load_ruleset(), allow_exec=True)
    assert time.monotonic() - started < 30  # each socket's own timeout is 60 s: nothing waited
    for module, outcome in zip(("phone_home", "raw_socket"), outcomes):
        assert isinstance(outcome, TraceFailed)
        assert re.search(rf"NetworkDisabled: tpucheck trace: networking is disabled .*\({module}\.py:\d+\)", str(outcome)), outcome


def test_bad_references_are_usage_errors() -> None:
    from tpucheck.trace.request import RequestError

    with pytest.raises(RequestError, match="MODULE:FUNCTION"):
        TraceRequest("zoo.build", "zoo:batch").check()
    with pytest.raises(RequestError, match="--device"):
        TraceRequest("zoo:build", "zoo:batch", device="tpu").check()


@needs_torch
def test_scan_with_the_trace_confirms_static_findings_and_adds_what_only_the_run_saw(zoo: list[TraceOutcome], tmp_path: Path) -> None:
    import tpucheck
    from tpucheck.config.settings import Flags
    from tpucheck.gates.merge import merge_reports
    from tpucheck.report import FORMATS
    from tpucheck.report.options import ReportOptions

    trace_file = tmp_path / "trace.json"
    trace_file.write_text(dumps(zoo[0].report))
    settings = tpucheck.load_settings(str(FIXTURES), Flags(no_cache=True, trace=trace_file), isolated=True)
    result = tpucheck.scan(str(FIXTURES), settings)
    by_evidence = {(f.rule, f.path, f.span.line, f.evidence) for f in result.findings if f.evidence}
    assert by_evidence == {
        # the `.item()` is no static finding on eager TorchTPU (a sync costs what it costs on
        # the GPU); the run saw it sync and break the compiled graph
        ("RT003", "zoo.py", marked("ITEM"), "runtime"),
        ("RT005", "zoo.py", marked("ITEM"), "runtime"),
        ("DS001", "zoo.py", marked("NONZERO"), "confirmed"),
        ("RT001", "zoo.py", marked("MEDIAN"), "runtime"),  # `logits.median()`: only the run saw it
    }
    median = next(f for f in result.findings if f.rule == "RT001")
    assert median.message.startswith("[from the run] `aten::median` has no TorchTPU kernel")
    assert (median.severity, median.affects) == ("blocker", ("training",))
    assert result.trace is not None and (result.trace.confirmed, result.trace.added) == (1, 3)
    data = result.to_dict()
    assert data["trace"]["unseen_ops"] == ["aten::_local_scalar_dense", "aten::median"]  # type: ignore[index]
    for name, writer in FORMATS.items():  # every format says which findings the run backs
        stream = io.StringIO()
        writer(result, stream, ReportOptions())
        text = " ".join(stream.getvalue().split())  # as read, whatever the wrapping
        assert "confirmed at run time" in text and "from the run" in text, name
        if name in ("terminal", "markdown", "html"):
            assert "1 static finding confirmed, 3 found only by the run" in text, name
    report_file = tmp_path / "scan.json"
    report_file.write_text(json.dumps(data))
    merged = merge_reports([report_file], load_ruleset())  # rendered again (as the GitHub Action does), the run's evidence stays
    assert merged.trace == result.trace and [f.evidence for f in merged.findings] == [f.evidence for f in result.findings]
    without = tpucheck.scan(str(FIXTURES), tpucheck.load_settings(str(FIXTURES), Flags(no_cache=True), isolated=True))
    assert result.score.score < without.score.score  # the blocker the run found is scored
    assert len(result.findings) == len(without.findings) + result.trace.added  # ... and the confirmed ones are not counted twice


def test_scan_refuses_a_file_that_is_not_a_trace_report(tmp_path: Path) -> None:
    bad = tmp_path / "trace.json"
    bad.write_text('{"schema_version": "1.2", "findings": []}')
    done = subprocess.run(
        [sys.executable, "-m", "tpucheck", "scan", str(FIXTURES), "--trace", str(bad), "--no-cache"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(SOURCE_ROOT)}, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"tpucheck: error: {bad} is not a tpucheck trace report (write one with `tpucheck trace ... --format json -o FILE`)"]


@needs_torch
def test_fake_tensors_stop_at_a_branch_on_a_value_and_the_cpu_device_goes_past_it() -> None:
    requests = [TraceRequest("branchy:build", "branchy:batch", phases=("inference",), device=device, graph_breaks=False) for device in ("fake", "cpu")]
    fake, cpu = run_traces(requests, target="torchtpu", root=str(FIXTURES), ruleset=load_ruleset(), allow_exec=True)
    assert isinstance(fake, TraceOutcome) and isinstance(cpu, TraceOutcome)
    lines = (FIXTURES / "branchy.py").read_text().splitlines()
    branch = next(n for n, text in enumerate(lines, start=1) if "# BRANCH:" in text)
    stopped = fake.report["phases"]["inference"]
    assert stopped["status"] == "stopped" and f"branchy.py:{branch}" in stopped["note"] and "--device cpu" in stopped["note"]
    assert "aten::tanh" not in ops(fake.report, "inference")
    assert ("RT003", "inference", "branchy.py", branch) in found(fake.report["findings"])
    assert cpu.report["phases"]["inference"]["status"] == "complete" and cpu.report["environment"]["route"] == "cpu"
    assert ops(cpu.report, "inference")["aten::tanh"]["first"] == {"path": "branchy.py", "line": branch + 2}


def test_the_backward_of_an_op_the_target_differentiates_itself_is_not_judged() -> None:
    def site(stage: str) -> dict[str, Any]:
        return {"path": "m.py", "line": 3, "stage": stage, "calls": 1}

    phases = {"training": {"ops": [
        {"op": "aten::native_layer_norm", "calls": 1, "sites": [site("forward")], "unattributed": {}},
        {"op": "aten::native_layer_norm_backward", "calls": 1, "sites": [site("backward")], "unattributed": {}},
        {"op": "aten::median", "calls": 1, "sites": [site("backward")], "unattributed": {}},
    ], "events": []}}  # fmt: skip
    findings = judge(phases, "xla", load_ruleset().for_target("xla"), load_op_table())
    assert [(f.rule, f.op) for f in findings] == []  # XLA's own gradient for layer norm covers that line's backward
    phases["training"]["ops"] = phases["training"]["ops"][1:]
    assert [(f.rule, f.op) for f in judge(phases, "xla", load_ruleset().for_target("xla"), load_op_table())] == [
        ("RT002", "aten::median"), ("RT002", "aten::native_layer_norm_backward"),
    ]  # fmt: skip


def test_scan_never_imports_torch_even_with_a_trace(tmp_path: Path) -> None:
    trace_file = tmp_path / "trace.json"
    trace_file.write_text(json.dumps({
        "schema_version": "1", "kind": "tpucheck-trace", "root": str(FIXTURES), "target": "torchtpu", "findings": [],
        "request": {"model": "zoo:build"}, "environment": {"route": "fake-tpu"},
        "phases": {"training": {"status": "complete", "note": None, "host_ops": [], "events": [], "ops": [
            {"op": "aten::median", "calls": 1, "status": "missing", "via": [], "note": None, "first": None,
             "sites": [{"path": "zoo.py", "line": marked("MEDIAN"), "stage": "loss", "calls": 1}], "sites_dropped": 0, "unattributed": {}},
        ]}},
    }))  # fmt: skip
    code = (
        "import sys, tpucheck\n"
        "from tpucheck.config.settings import Flags\n"
        f"s = tpucheck.load_settings({str(FIXTURES)!r}, Flags(no_cache=True, trace={str(trace_file)!r}), isolated=True)\n"
        f"r = tpucheck.scan({str(FIXTURES)!r}, s)\n"
        "print(sorted(f.rule for f in r.findings if f.evidence == 'runtime'), 'torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(SOURCE_ROOT)}, check=False)
    assert done.stdout.strip() == "['RT001'] False", done.stderr
