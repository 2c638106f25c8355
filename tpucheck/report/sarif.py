"""SARIF 2.1.0, the format GitHub code scanning (and most IDEs) ingest.

Like every report this only formats a ScanResult. The one thing the result does not hold
yet is the rule metadata SARIF wants per rule (descriptions, help, docs), so `render`
takes the rules explicitly and `write` loads the built-in ruleset as a stopgap until the
ScanResult carries its Rule objects.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO
from urllib.parse import quote

from tpucheck import __version__
from tpucheck.findings import Finding, ScanError, severity_rank
from tpucheck.report.options import ReportOptions
from tpucheck.report.prose import first_sentence
from tpucheck.result import ScanResult
from tpucheck.ruleset.model import Rule

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/tpucheck/tpucheck"
FINGERPRINT_KEY = "tpucheck/v1"
"""Versioned so that a future change of the fingerprint recipe does not make GitHub match
old alerts against differently computed new ones."""
SRCROOT = "%SRCROOT%"

MAX_RESULTS = 25_000
"""GitHub code scanning rejects runs with more results than this."""

LEVELS: dict[str, str] = {"blocker": "error", "major": "warning", "minor": "note", "info": "note"}



def _descriptor(rule_id: str, rule: Rule | None, example: Finding | None) -> dict[str, object]:
    """One reportingDescriptor. Falls back to what a finding carries when the rule itself
    is unknown (a user rule file `write` could not reload), so every ruleIndex resolves."""
    if rule is not None:
        # rule help is reference text: both targets' advice, whichever was judged
        fix = rule.fix_tpu + (f" PyTorch/XLA: {rule.fix_xla}" if rule.fix_xla else "")
        name, message, docs = rule.name, rule.message, rule.docs
        category, severity, confidence, affects = rule.category, rule.severity, rule.confidence, rule.affects
        help_uri: str | None = rule.help_uri
    elif example is not None:
        name, message, fix, docs = example.name, example.message, example.fix, ()
        category, severity, confidence, affects = example.category, example.severity, example.confidence, example.affects
        help_uri = example.help_uri
    else:
        return {"id": rule_id}
    docs_text = "".join(f"\n{url}" for url in docs)
    docs_markdown = "".join(f"\n- <{url}>" for url in docs)
    descriptor: dict[str, object] = {
        "id": rule_id,
        "name": name,
        "shortDescription": {"text": first_sentence(message)},
        "fullDescription": {"text": message},
        "help": {
            "text": f"Fix: {fix}" + (f"\n\nDocs:{docs_text}" if docs else ""),
            "markdown": f"**Fix:** {fix}" + (f"\n\n**Docs:**\n{docs_markdown}" if docs else ""),
        },
    }
    if help_uri:
        descriptor["helpUri"] = help_uri
    descriptor["defaultConfiguration"] = {"level": LEVELS[severity]}
    descriptor["properties"] = {
        "category": category,
        "severity": severity,
        "confidence": confidence,
        "affects": list(affects),
        "tags": ["tpu-migration", category],
    }
    return descriptor


def _uri(path: str) -> str:
    """A relative path as the URI reference SARIF requires (spec 3.10.2): percent-encoded, so
    a file named `a b.py`, `%0A.py` or `x#y.py` is not read as a space, a newline or a
    fragment, and a `:` in the first segment cannot pass for a URI scheme."""
    return quote(path, safe="/")


def _location(path: str) -> dict[str, object]:
    return {"physicalLocation": {"artifactLocation": {"uri": _uri(path), "uriBaseId": SRCROOT}}}


def _result(finding: Finding, index: int, rule: Rule | None, with_baseline: bool = False) -> dict[str, object]:
    # The short fix is the TPU-native one; the PyTorch/XLA alternative stays in the rule's help.
    fix = rule.fix_tpu if rule is not None else finding.fix
    text = f"{finding.message} Fix: {fix}"
    if finding.cell is not None:
        text = f"[notebook cell {finding.cell}] {text}"
    span = finding.span
    location = _location(finding.path)
    # Notebook spans are relative to their cell and SARIF has no cell addressing: the
    # region keeps the cell-relative lines as given (no better mapping into the raw .ipynb
    # JSON exists), and the cell goes into the message and properties.cell.
    location["physicalLocation"]["region"] = {  # type: ignore[index]
        "startLine": span.line,
        "startColumn": span.column,
        "endLine": span.end_line,
        "endColumn": span.end_column,
    }
    properties: dict[str, object] = {"role": finding.role, "guarded": finding.guarded, "confidence": finding.confidence}
    if finding.cell is not None:
        properties["cell"] = finding.cell
    if finding.because:
        properties["because"] = [reason.to_dict() for reason in finding.because]
    out: dict[str, object] = {
        "ruleId": finding.rule,
        "ruleIndex": index,
        "level": LEVELS[finding.severity],
        "message": {"text": text},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: finding.fingerprint},
        "properties": properties,
    }
    if with_baseline:
        out["baselineState"] = "unchanged" if finding.baselined else "new"
    if finding.outside_diff:
        properties["outsideDiff"] = True
    if finding.suppressed:
        suppression: dict[str, object] = {"kind": "inSource"}
        if finding.suppression_reason:
            suppression["justification"] = finding.suppression_reason
        out["suppressions"] = [suppression]
    return out


def _error_notification(error: ScanError) -> dict[str, object]:
    return {
        "level": "warning",
        "message": {"text": f"tpucheck could not analyze this file ({error.kind}): {error.message}"},
        "descriptor": {"id": error.kind},
        "locations": [_location(error.path)],
    }


def _capped(result: ScanResult) -> tuple[list[Finding], int]:
    """Findings then suppressed findings, in the result's order, trimmed to GitHub's limit.

    When there are too many, the most severe active findings are kept (suppressed ones go
    first); survivors keep the order the result gave them."""
    everything = [*result.findings, *result.suppressed]
    if len(everything) <= MAX_RESULTS:
        return everything, 0
    ranked = sorted(range(len(everything)), key=lambda i: (everything[i].suppressed, severity_rank(everything[i].severity), i))
    keep = sorted(ranked[:MAX_RESULTS])
    return [everything[i] for i in keep], len(everything) - MAX_RESULTS


def _root_uri(root: str) -> str:
    """SARIF requires a base id's uri to be absolute and end in '/' (spec 3.14.14)."""
    uri = Path(root).absolute().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def to_sarif(result: ScanResult, rules: dict[str, Rule]) -> dict[str, object]:
    """The SARIF log as a dict; `rules` maps rule ids to their metadata (may be partial)."""
    findings, left_out = _capped(result)
    examples: dict[str, Finding] = {}
    for finding in (*result.findings, *result.suppressed):
        examples.setdefault(finding.rule, finding)
    rule_ids = list(result.rules)
    for rule_id in examples:  # a finding's rule missing from result.rules would break ruleIndex
        if rule_id not in rule_ids:
            rule_ids.append(rule_id)
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    notifications = [_error_notification(error) for error in result.errors]
    if left_out:
        notifications.append(
            {
                "level": "warning",
                "message": {
                    "text": f"{left_out} of {left_out + len(findings)} results were left out: GitHub accepts at most "
                    f"{MAX_RESULTS} per run; the most severe were kept. The JSON report has all of them."
                },
            }
        )
    invocation: dict[str, object] = {"executionSuccessful": True}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "tpucheck",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": [_descriptor(r, rules.get(r), examples.get(r)) for r in rule_ids],
                    }
                },
                "invocations": [invocation],
                "originalUriBaseIds": {SRCROOT: {"uri": _root_uri(result.root)}},
                "columnKind": "unicodeCodePoints",
                "properties": {"target": result.target, "score": result.score.score, "grade": result.score.grade},
                "results": [_result(f, index[f.rule], rules.get(f.rule), result.baseline is not None) for f in findings],
            }
        ],
    }


def render(result: ScanResult, rules: dict[str, Rule]) -> str:
    """Deterministic text: same result and rules, same bytes."""
    return json.dumps(to_sarif(result, rules), indent=2, ensure_ascii=False) + "\n"


def write(result: ScanResult, stream: TextIO, options: ReportOptions | None = None) -> None:
    stream.write(render(result, {rule.id: rule for rule in result.rule_data}))
