"""Reports leak nothing: one scan whose file names, code and rule text carry HTML,
Markdown and workflow-command payloads, rendered in every format.

The per-format tests (test_report_html/markdown/github/sarif) pin exact escapes on small
inputs; this one checks the invariants each format must keep whatever the payload, on
data that went through a real scan (discovery, the analyzers, the engine) plus rule data
and error text made hostile afterwards, which is what a malicious rule pack or a broken
file would put there.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from tpucheck.engine import ScanOptions, scan
from tpucheck.findings import ScanError, Skipped
from tpucheck.report import github, html, json_report, markdown, sarif, terminal
from tpucheck.result import Inventory, KernelEntry, PackageEntry, ScanResult
from tpucheck.ruleset import load_ruleset

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "</script><script>alert(1)</script>"
MARKDOWN = "](javascript:alert(1)) <details> @everyone | `tick` ![p](https://t.example/p.png) <!-- x"
WORKFLOW = "::error::pwned %0A::warning::w\n::notice::n\rtail"
PAYLOAD = f"{IMG} {SCRIPT} {MARKDOWN} {WORKFLOW}"

# What a file system allows in names (anything but '/' and NUL): each a separate attack.
NAMES = [
    f"pkg/{IMG}.py",
    "pkg/x</script><script>alert(1)</script>.py",  # three path segments, one payload
    'pkg/q"\'.py',
    "pkg/%0A::error::pwned.py",
    "::warning::root.py",
    "pkg/](javascript:alert(1)).py",
    "pkg/a|b`c`@everyone.py",
    "pkg/new\nline.py",
    "pkg/cr\rx.py",
]
CODE = (
    "import torch\n"
    f"torch.device({('cuda:' + SCRIPT)!r})\n"
    f"torch.cuda.synchronize({PAYLOAD!r})\n"
    "torch.cuda.empty_cache()  # tpucheck: ignore -- " + IMG + " @everyone ::error::x\n"
)


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> ScanResult:
    root = tmp_path_factory.mktemp("hostile") / "repo"
    for name in NAMES:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(CODE)
    scanned = scan(str(root), load_ruleset(), ScanOptions(jobs=1))
    # Rule data is data too: a rule pack can say anything in its message, name and fix.
    scanned.findings = [dataclasses.replace(f, message=f"{PAYLOAD} end.", name=f"n{MARKDOWN}", fix=f"fix {WORKFLOW} {IMG}") for f in scanned.findings]
    scanned.errors = [*scanned.errors, ScanError(f"err/{IMG}.py", "syntax-error", f"bad {WORKFLOW} {SCRIPT}")]
    scanned.skipped = [*scanned.skipped, Skipped("big/@everyone|x.py", f"too big {WORKFLOW}")]
    scanned.inventory = Inventory(
        kernels=(KernelEntry(f"csrc/{IMG}.cu", 3, f"k{SCRIPT}", "CK002"),),
        packages=(PackageEntry(f"p{MARKDOWN}", "DEP002", 1, ("requirements.txt",), f"fix {IMG} @everyone"),),
        training_findings=1,
        inference_findings=1,
    )
    return scanned


def test_the_fixture_carries_every_payload(result: ScanResult) -> None:
    """Guards the rest: each payload really reaches the report through a finding."""
    paths = {f.path for f in result.findings}
    assert {f"pkg/{IMG}.py", "pkg/%0A::error::pwned.py", "::warning::root.py", "pkg/new\\nline.py", "pkg/cr\\rx.py"} <= paths
    assert any(SCRIPT in f.snippet for f in result.findings) and any(IMG in f.snippet for f in result.findings)
    assert result.suppressed and all(IMG in (f.suppression_reason or "") for f in result.suppressed)


def _render(writer: object, result: ScanResult) -> str:
    stream = io.StringIO()
    writer.write(result, stream)  # type: ignore[attr-defined]
    return stream.getvalue()


def test_html_has_only_its_own_markup(result: ScanResult) -> None:
    page = html.render(result)
    clean = html.render(dataclasses.replace(result, findings=[], suppressed=[], errors=[], skipped=[], inventory=Inventory((), (), 0, 0)))
    for tag in ("<script", "<img", "<iframe", "<style", "<object", "<embed"):
        assert page.count(tag) == clean.count(tag), tag
    assert len(re.findall(r"<a\b", page)) == page.count('<a href="https://')  # only our help links
    assert IMG not in page and SCRIPT not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert all(href.startswith(("https://", "#")) for href in re.findall(r'href="([^"]*)"', page))
    # The JSON data island cannot be closed from inside.
    island = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', page, re.DOTALL)
    assert island is not None and "<" not in island.group(1)


_MARKDOWN_TAGS = {"details", "summary", "code"}


def test_markdown_has_no_live_markup_mentions_or_links(result: ScanResult) -> None:
    text = markdown.render(result)
    assert {tag for tag in re.findall(r"</?([A-Za-z][\w-]*)", text)} <= _MARKDOWN_TAGS
    assert text.count("<details>") == text.count("</details>")
    assert all(line.startswith("<details><summary>") for line in text.splitlines() if "<details>" in line)
    assert "<!--" not in text
    assert re.search(r"@\w", text) is None, "a live @mention"
    assert all(target.startswith("https://") for target in re.findall(r"(?<!\\)\]\(([^)]*)", text)), "a link not made by us"
    assert re.search(r"(?<!\\)!\[", text) is None, "a live image"
    for line in text.splitlines():
        if line.startswith(("| major |", "| blocker |")):
            assert len(re.findall(r"(?<!\\)\|", line)) == 6, line  # five cells: no pipe from data splits one
            assert re.search(r"(?<!\\)`", line) is None, line


_COMMAND = re.compile(r"::(error|warning|notice)(?: ([^\n\r]*?))?::([^\n\r]*)")


def _unescape(value: str) -> str:
    return value.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def test_github_every_line_is_one_command_of_ours(result: ScanResult) -> None:
    text = github.render(result)
    assert "\r" not in text and text.endswith("\n")
    lines = text[:-1].split("\n")  # what the runner splits on
    files = {f.path for f in result.findings} | {e.path for e in result.errors}
    for line in lines:
        command = _COMMAND.fullmatch(line)
        assert command is not None, line
        properties = dict(item.split("=", 1) for item in command.group(2).split(",")) if command.group(2) else {}
        assert ":" not in (command.group(2) or ""), line  # a property cannot end the command early
        if "file" in properties:
            assert _unescape(properties["file"]) in files
    # The errors sit behind GitHub's per-level cap here; alone, they come out whole.
    (error_line,) = github.render(dataclasses.replace(result, findings=[])).splitlines()
    assert error_line.startswith("::warning file=err/<img src=x onerror=alert(1)>.py::")
    assert _unescape(error_line.split("::", 2)[2]) == f"tpucheck could not analyze this file: bad {WORKFLOW} {SCRIPT}"


def test_sarif_is_valid_json_with_the_payload_as_data(result: ScanResult) -> None:
    log = json.loads(_render(sarif, result))
    run = log["runs"][0]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]]
    assert sorted(map(unquote, uris)) == sorted(f.path for f in result.findings + result.suppressed)
    for uri in uris:
        assert re.fullmatch(r"[A-Za-z0-9._~/%-]+", uri), uri  # percent-encoded: no space, ':', '#', '<' or newline
    messages = [r["message"]["text"] for r in run["results"] if "suppressions" not in r]
    assert messages and all(m.startswith(f"{PAYLOAD} end. Fix: ") for m in messages)
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert any(note["message"]["text"].endswith(f"bad {WORKFLOW} {SCRIPT}") for note in notes)


def test_json_round_trips_the_payload_exactly(result: ScanResult) -> None:
    report = json.loads(json_report.render(result))
    assert [f["message"] for f in report["findings"]] == [f.message for f in result.findings]
    assert [f["path"] for f in report["findings"]] == [f.path for f in result.findings]
    assert report["errors"][-1]["message"] == f"bad {WORKFLOW} {SCRIPT}"
    assert report["inventory"]["kernels"][0]["name"] == f"k{SCRIPT}"


def test_terminal_prints_data_as_text(result: ScanResult) -> None:
    text = _render(terminal, result)
    assert "\x1b" not in text and "\r" not in text  # no colour asked for, and none smuggled in
    assert "pkg/new\\nline.py:2:14: CA003 [major]" in text  # the name's newline shown, not obeyed
    assert f"k{SCRIPT}" in text  # the inventory names the kernel as written


def test_paths_that_look_like_commands_stay_paths(tmp_path: Path) -> None:
    """A file named like a workflow command is reported under its name, escaped per format."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "::error::x.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    done = scan(str(root), load_ruleset(), ScanOptions(jobs=1))
    (line,) = github.render(done).splitlines()
    assert line.startswith("::warning file=%3A%3Aerror%3A%3Ax.py,line=2,")
    log = json.loads(_render(sarif, done))
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "%3A%3Aerror%3A%3Ax.py"
