"""The HTML report: hostile input stays inert, the page loads nothing from outside, the
findings table is complete without JS, output is deterministic, and — where Chromium is
installed — the page's own filter works in a real browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import fixture_ruleset, write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.report import html
from tpucheck.report.judgement import hours
from tpucheck.result import ScanResult

HOSTILE_PATH = 'pkg/"><img src=x onerror=alert(1)>.py'

FILES = {
    "pkg/train.py": (
        "import torch\n"
        "import torch.distributed as dist\n"
        'dist.init_process_group("nccl")\n'
        "for batch in loader:\n"
        "    loss.item()\n"
        "torch.cuda.empty_cache()  # tpucheck: ignore[T014] -- harmless\n"
        'torch.cuda.synchronize("</details><script>alert(1)</script>")\n'
    ),
    HOSTILE_PATH: "import torch\ntorch.cuda.synchronize()\n",
    "pkg/broken.py": "import torch\ntorch.cuda.synchronize(\n",
    "csrc/k.cu": "__global__ void add_kernel(float* x) {}\n",
    "top.py": "import torch\ntorch.cuda.synchronize()\n",
}


@pytest.fixture()
def result(tmp_path: Path) -> ScanResult:
    return scan(str(write_tree(tmp_path / "repo", FILES)), fixture_ruleset(), ScanOptions(jobs=1))


@pytest.fixture()
def page(result: ScanResult) -> str:
    return html.render(result)


def test_fixture_exercises_the_report(result: ScanResult) -> None:
    """Guards the other tests: they mean something only if these are all present."""
    assert len({f.rule for f in result.findings}) >= 3
    assert any(f.path == HOSTILE_PATH for f in result.findings)
    assert any("<script>alert(1)" in f.snippet for f in result.findings)
    assert result.errors and result.suppressed
    assert any(f.help_uri for f in result.findings)


def test_hostile_input_is_escaped(page: str) -> None:
    assert "<script>alert" not in page
    assert "<img src=x" not in page
    assert "</details><script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    # Only our own two script elements exist (error hook, JSON data, main script).
    assert page.count("<script") == 3


def test_no_external_resources(page: str) -> None:
    assert "<link" not in page
    assert "<script src" not in page
    assert "@import" not in page
    assert "url(" not in page
    assert not re.search(r"<(img|iframe|object|embed|video|audio|source)\b", page)
    for match in re.finditer(r"""\b(src|href)\s*=\s*["']?([^"'\s>]*)""", page):
        attribute, value = match.groups()
        if re.match(r"(?i)https?:", value):
            assert attribute == "href" and re.fullmatch(r"https://\S+/docs/rules\.md#[\w-]+", value), match.group(0)
            assert page[: match.start()].endswith("<a ")
        else:
            assert not re.match(r"(?i)(//|javascript:|data:)", value), match.group(0)


def test_help_links_are_http_only() -> None:
    class Fake:
        def __init__(self, rule: str, uri: str | None) -> None:
            self.rule, self.help_uri = rule, uri

    links = html._help_links([Fake("A", "javascript:alert(1)"), Fake("B", "https://x/docs/rules.md#b"), Fake("C", None)])  # type: ignore[list-item]
    assert links == {"B": "https://x/docs/rules.md#b"}


def test_one_row_per_finding_and_severity_order(result: ScanResult, page: str) -> None:
    rows = re.findall(r'<tr class="finding" data-severity="(\w+)"', page)
    assert len(rows) == len(result.findings)
    ranks = [html.SEVERITIES.index(s) for s in rows]
    assert ranks == sorted(ranks)
    assert page.count('<pre class="hl">') == len(result.findings)


def test_snippets_are_highlighted(page: str) -> None:
    assert '<span class="n">torch</span>' in page
    assert ".hl .n" in page or ".hl .k" in page  # pygments' CSS is inline and scoped


def test_score_grade_and_sections(result: ScanResult, page: str) -> None:
    score = result.score
    assert f"{score.score:.1f}/100 ({score.grade}: {score.grade_meaning})" in page
    assert f"grade {score.grade}" in page
    assert hours(score.effort) in page
    for heading in ("Where the work is", "Migration plan", "Inventory", "could not be analyzed", "Coverage", "suppressed"):
        assert re.search(rf"<h2>[^<]*{heading}</h2>", page), heading
    for item in score.plan:
        assert f">{item.rule}</a>" in page or f'<td class="step">{item.rule} ' in page or (not item.findings and f'<td class="step">{item.title}' in page)
    assert "add_kernel" in page  # the kernel inventory
    # The plan and the findings table are in document order after the score.
    assert page.index("Migration plan") < page.index('id="findings"') < page.index("Coverage")


def test_directory_heat_groups_by_top_level_directory() -> None:
    files = [
        ("pkg/a.py", "library", {"blocker": 0, "major": 2, "minor": 0, "info": 0}),
        ("top.py", "library", {"blocker": 0, "major": 0, "minor": 1, "info": 0}),
        ("csrc/k.cu", "library", {"blocker": 1, "major": 0, "minor": 0, "info": 0}),
        ("pkg/sub/b.py", "library", {"blocker": 0, "major": 1, "minor": 1, "info": 0}),
    ]
    heat = html.directory_heat(files)
    assert [(d.directory, d.files, d.total) for d in heat] == [("csrc", 1, 1), ("pkg", 2, 4), (".", 1, 1)]
    assert heat[1].counts == {"blocker": 0, "major": 3, "minor": 1, "info": 0}


def test_script_json_cannot_close_the_script_element() -> None:
    text = str(html.script_json({"x": "</script><!-- & <b>"}))
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"x": "</script><!-- & <b>"}


def test_deterministic(result: ScanResult, tmp_path: Path) -> None:
    first = html.render(result)
    assert html.render(result) == first
    again = scan(result.root, fixture_ruleset(), ScanOptions(jobs=1))
    assert html.render(again) == first


def test_no_findings(tmp_path: Path) -> None:
    root = tmp_path / "clean"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    page = html.render(scan(str(root), fixture_ruleset(), ScanOptions(jobs=1)))
    assert "No findings" in page
    assert '<tr class="finding"' not in page


# --- a real browser ---------------------------------------------------------------------


def _chromium() -> str | None:
    return shutil.which("chromium") or (str(Path("/usr/bin/chromium")) if Path("/usr/bin/chromium").exists() else None)


def _dump_dom(browser: str, url: str, profile: Path) -> str:
    args = [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
        "--virtual-time-budget=5000", "--dump-dom", url,
    ]  # fmt: skip
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_in_chromium(result: ScanResult, tmp_path: Path) -> None:
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium not installed")
    report = tmp_path / "report.html"
    with report.open("w", encoding="utf-8") as stream:
        html.write(result, stream)

    dom = _dump_dom(browser, report.as_uri(), tmp_path / "profile-plain")
    assert len(re.findall(r'<tr class="finding"', dom)) == len(result.findings)
    assert "<img src=x" not in dom and "<script>alert" not in dom

    dom = _dump_dom(browser, report.as_uri() + "#selftest", tmp_path / "profile-selftest")
    match = re.search(r'<pre id="selftest"[^>]*>(.*?)</pre>', dom, re.S)
    assert match and match.group(1), "the page's self-test did not run"
    report_of = json.loads(match.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    assert report_of["errors"] == []
    rule = result.score.plan[0].rule
    assert report_of["rule"] == rule
    # The filter matches the rule id as text in rule, name, path or message, case-insensitively.
    expected = sum(rule.lower() in f"{f.rule} {f.name} {f.path} {f.message}".lower() for f in result.findings)
    assert expected < len(result.findings)  # the filter has something to hide
    assert report_of["visible"] == expected
    assert report_of["sorted"] == sorted(report_of["sorted"])
    assert "<title>selftest ok</title>" in dom
