"""The HTML report holds its layout: on a kernel-heavy repository and a small one, at 900
and 1400 px, the page never scrolls sideways, no block runs over another, snippets keep a
readable width and the page's script raises nothing. Measured in a real Chromium (skipped
where none is installed; CI installs Debian's), plus the content rules the layout rests
on: sections that adapt to what the scan found, rule text with its inline code as code.

Set TPUCHECK_SCREENSHOTS=<folder> to also save a screenshot of each page and width, to
look at: a test can say nothing overlaps, not that the page reads well.
"""

from __future__ import annotations

import html as html_module
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import write_tree
from test_report_html import _chromium

from tpucheck.engine import ScanOptions, scan
from tpucheck.report import html
from tpucheck.report.judgement import percent, work_split
from tpucheck.result import ScanResult
from tpucheck.ruleset import load_ruleset

KERNEL_FILES = 60
GROUPS = ("attention", "normalization", "state_space_scan", "activations")


def kernel_heavy_tree(root: Path) -> Path:
    """60 Triton kernels with long names in long paths (each with a CUDA buffer made
    outside its launcher, which would be the kernel's own), a CUDA kernel, a CUDA extension in
    setup.py and manifests naming CUDA-only packages: the shape of an SSM or attention
    library, with names long enough to push every column."""
    files: dict[str, str] = {}
    for i in range(KERNEL_FILES):
        group = GROUPS[i % len(GROUPS)]
        kernel = f"_fused_{group}_variant_{i:02d}_forward_with_a_rather_long_kernel_name"
        files[f"src/heavy_ops/triton_kernels/{group}/fused_{group}_variant_{i:02d}_implementation.py"] = (
            "import torch\nimport triton\nimport triton.language as tl\n\n\n"
            "@triton.jit\n"
            f"def {kernel}(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):\n"
            "    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
            "    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n_elements), mask=offsets < n_elements)\n\n\n"
            f"def buffer_{i}(x):\n"
            '    y = torch.empty_like(x, device="cuda")\n'
            "    torch.cuda.synchronize()\n"
            "    return y\n\n\n"
            f"def run_{i}(x, y):\n"
            f"    {kernel}[(1,)](x, y, x.numel(), BLOCK_SIZE=1024)\n"
            "    return y\n"
        )
    files["csrc/selective_scan/selective_scan_forward_kernel_implementation.cu"] = (
        "#include <cuda_runtime.h>\n"
        "__global__ void selective_scan_forward_kernel(const float* __restrict__ input, float* __restrict__ output, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) output[i] = input[i];\n"
        "}\n"
    )
    files["setup.py"] = (
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        "setup(name='heavy', ext_modules=[CUDAExtension('selective_scan_cuda', "
        "['csrc/selective_scan/selective_scan_forward_kernel_implementation.cu'])], cmdclass={'build_ext': BuildExtension})\n"
    )
    files["requirements.txt"] = "torch>=2.3\ntriton>=2.2\nflash-attn>=2.5\ncausal-conv1d>=1.2\nbitsandbytes\nnvidia-cudnn-cu12\n"
    files["src/heavy_ops/model.py"] = (
        "import torch\nfrom flash_attn import flash_attn_func\nimport bitsandbytes as bnb\n\n"
        "model = torch.nn.Linear(4, 4).cuda()\n"
        "with torch.cuda.amp.autocast(dtype=torch.float16):\n"
        "    out = flash_attn_func(q, k, v)\n"
    )
    files["tests/test_ops.py"] = "import torch\n\ndef test_ops():\n    x = torch.randn(8, device='cuda')\n    torch.cuda.synchronize()\n"
    return write_tree(root, files)


def small_tree(root: Path) -> Path:
    """Three files at the root, a dozen mechanical edits, no kernel and no package."""
    return write_tree(
        root,
        {
            "train.py": (
                "import torch\nfrom model import Net\n\n"
                "model = Net().cuda()\n"
                "torch.cuda.manual_seed_all(0)\n"
                "torch.backends.cudnn.benchmark = True\n"
                "print(torch.cuda.get_device_name(0), torch.cuda.device_count())\n"
                "for step in range(10):\n"
                "    x = torch.randn(4, 4).cuda()\n"
                "    loss = model(x).sum()\n"
                "    print(loss.item())\n"
                "    torch.cuda.synchronize()\n"
                "torch.cuda.empty_cache()\n"
                "print(torch.cuda.max_memory_allocated())\n"
            ),
            "model.py": "import torch\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x.to('cuda:0')\n",
            "README.md": "# tiny\n",
        },
    )


@pytest.fixture(scope="module")
def heavy(tmp_path_factory: pytest.TempPathFactory) -> ScanResult:
    return scan(str(kernel_heavy_tree(tmp_path_factory.mktemp("heavy") / "repo")), load_ruleset(), ScanOptions(jobs=1))


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> ScanResult:
    return scan(str(small_tree(tmp_path_factory.mktemp("small") / "repo")), load_ruleset(), ScanOptions(jobs=1))


def test_fixtures_are_what_they_claim(heavy: ScanResult, small: ScanResult) -> None:
    """Guards the layout tests: the heavy page must have the long tables the old layout
    broke on, the small one the near-empty sections it padded out."""
    assert len(heavy.inventory.ported_kernels) == KERNEL_FILES + 2  # 60 Triton, one __global__, one extension
    assert {p.name for p in heavy.inventory.packages} >= {"triton", "flash-attn", "causal-conv1d", "bitsandbytes"}
    assert len(heavy.findings) > 250
    assert len(small.findings) >= html.BREAKDOWN_MIN_FINDINGS and not small.inventory.kernels and not small.inventory.packages
    assert {f.path for f in small.findings} == {"train.py", "model.py"}


# --- content the layout rests on ---------------------------------------------------------


def _text(fragment: str) -> str:
    return html_module.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_page_opens_with_verdict_work_and_plan(heavy: ScanResult) -> None:
    page = html.render(heavy)
    order = [
        page.index(marker)
        for marker in (
            'aria-label="Verdict"',
            'aria-label="Where the work is"',
            'aria-label="Migration plan"',
            'aria-label="Inventory"',
            'id="findings"',
        )
    ]
    assert order == sorted(order)
    work = re.search(r'<p class="lead" id="work">(.*?)</p>', page, re.S)
    assert work and _text(work.group(1)).startswith("The 62 kernels are most of the work (")
    legend = _text(re.search(r'<ul class="legend" id="work-split">(.*?)</ul>', page, re.S).group(1))  # type: ignore[union-attr]
    areas = work_split(heavy)
    assert re.findall(r"(Kernels|Dependencies|Mechanical edits|Supporting code) (\d+%|<1%)", legend) == [
        (a.label, percent(a.share)) for a in areas
    ]
    assert [a.key for a in areas] == ["kernels", "dependencies", "edits", "supporting"] and areas[0].share > 0.5
    assert "62 kernels" in legend and "4 packages" in legend


def test_small_page_has_no_empty_boxes_one_row_tables_or_charts(small: ScanResult) -> None:
    page = html.render(small)
    assert 'id="inventory-none"' in page and '<table class="kernels">' not in page and '<table class="packages">' not in page
    assert page.count("<svg") == 1  # the gauge; no bar chart repeating the count table
    assert 'class="split"' not in page  # one area of work: a sentence, not a one-colour bar
    assert "Mechanical edits are all of the work." in page
    # Both files sit at the root, so a directory table would have one row: files instead.
    assert "<h3>By directory</h3>" not in page and "<h3>By file</h3>" in page
    heat = re.search(r'<table class="heat">(.*?)</table>', page, re.S).group(1)  # type: ignore[union-attr]
    assert sorted(re.findall(r'<td class="mono path">([^<]+)</td>', heat)) == ["model.py", "train.py"]
    # No severity column that is zero everywhere.
    present = [s for s, n in small.counts_by_severity().items() if n]
    assert re.findall(r'<th class="num">(\w+)</th>', heat) == [*present, "total"]
    assert "blocker" not in present


def test_a_handful_of_findings_gets_no_count_tables(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "tiny",
        {"a.py": "import torch\nx = torch.zeros(1).cuda()\ntorch.cuda.synchronize()\n", "b.py": "import torch\ny = torch.ones(1).cuda()\n"},
    )
    result = scan(str(root), load_ruleset(), ScanOptions(jobs=1))
    assert 2 <= len(result.findings) < html.BREAKDOWN_MIN_FINDINGS
    page = html.render(result)
    assert 'aria-label="Where the findings are"' not in page and 'id="findings"' in page


def test_kernels_are_folded_by_file(heavy: ScanResult) -> None:
    page = html.render(heavy)
    table = re.search(r'<table class="kernels">(.*?)</table>', page, re.S).group(1)  # type: ignore[union-attr]
    rows = re.findall(r"<tr><td class=\"mono path\">(.*?)</td><td class=\"num\">(\d+)</td>", table)
    assert len(rows) == KERNEL_FILES + 2 and sum(int(n) for _, n in rows) == len(heavy.inventory.ported_kernels)
    assert _text(rows[0][0]) == "csrc/selective_scan/selective_scan_forward_kernel_implementation.cu"
    # Long names wrap after an underscore, long paths after a slash, never mid-word.
    assert "<code>_fused_<wbr>attention_<wbr>variant_<wbr>00_<wbr>forward_" in table
    assert "src/<wbr>heavy_ops/<wbr>triton_kernels/<wbr>" in table


def test_rule_text_renders_inline_code_as_code(heavy: ScanResult) -> None:
    page = html.render(heavy)
    # The fixture's code has no backtick, so any on the page would be rule text left raw.
    assert "`" not in page
    assert "<code>torch.<wbr>tpu.<wbr>pallas.<wbr>jax_op</code>" in page  # CK004's fix
    assert "<code>.cuda()</code>" in page  # CA003's message


def test_prose_escapes_outside_and_inside_code() -> None:
    assert str(html.prose('Use `x.to("tpu")` <b>, not `<script>`; a lone ` stays')) == (
        "Use <code>x.<wbr>to(&#34;tpu&#34;)</code> &lt;b&gt;, not <code>&lt;script&gt;</code>; a lone ` stays"
    )
    assert str(html.prose("no code & no markup")) == "no code &amp; no markup"


def test_breakable_names_and_paths_escape() -> None:
    assert str(html.breakable_path("a/<b>/c.py")) == "a/<wbr>&lt;b&gt;/<wbr>c.py"
    assert str(html.breakable_name("_chunk_scan_bwd<x>")) == "_chunk_<wbr>scan_<wbr>bwd&lt;x&gt;"
    assert str(html.breakable_name("__init__")) == "__init__"


def test_heat_view_picks_the_level_that_splits() -> None:
    def counts(major: int) -> dict[str, int]:
        return {"blocker": 0, "major": major, "minor": 0, "info": 0}

    one_package = [("pkg/a/x.py", "library", counts(2)), ("pkg/b/y.py", "library", counts(1)), ("pkg/b/z.py", "library", counts(1))]
    view = html.heat_view(one_package)
    assert view is not None and view.kind == "directory"
    assert [(r.directory, r.files, r.total) for r in view.rows] == [("pkg/a", 1, 2), ("pkg/b", 2, 2)]
    flat = [("x.py", "library", counts(2)), ("y.py", "library", counts(1))]
    view = html.heat_view(flat)
    assert view is not None and view.kind == "file" and [r.directory for r in view.rows] == ["x.py", "y.py"]
    assert html.heat_view([("x.py", "library", counts(2))]) is None
    many = [(f"d{i:02d}/x.py", "library", counts(1)) for i in range(html.HEAT_ROWS + 3)]
    view = html.heat_view(many)
    assert view is not None and len(view.rows) == html.HEAT_ROWS and view.more == 3


# --- in a real browser ---------------------------------------------------------------------

MEASURE = r"""
<script>
window.addEventListener("load", function () {
  function box(e) { var r = e.getBoundingClientRect(); return { l: r.left, t: r.top, r: r.right, b: r.bottom }; }
  function label(e) {
    return e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.getAttribute("aria-label") ? "[" + e.getAttribute("aria-label") + "]" : "") +
      (typeof e.className === "string" && e.className ? "." + e.className.split(" ").join(".") : "");
  }
  function shown(e) { var r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && e.tagName !== "SCRIPT"; }
  var problems = [];
  // Top-level blocks: the page's header and main, the sections, and the blocks inside a
  // section or a grid/flex container. Siblings must not intersect, and each must stay
  // inside its container's width.
  var containers = [document.body, document.querySelector("main")].concat(
    Array.prototype.slice.call(document.querySelectorAll("main > section, .cols, .cols > *, .verdict, .verdict-text")));
  containers.forEach(function (parent) {
    var outer = box(parent);
    var kids = Array.prototype.slice.call(parent.children).filter(shown);
    kids.forEach(function (kid, i) {
      var k = box(kid);
      if (k.l < outer.l - 0.5 || k.r > outer.r + 0.5) { problems.push("outside " + label(parent) + ": " + label(kid) + " " + JSON.stringify(k) + " in " + JSON.stringify(outer)); }
      kids.slice(i + 1).forEach(function (other) {
        var o = box(other);
        var dx = Math.min(k.r, o.r) - Math.max(k.l, o.l), dy = Math.min(k.b, o.b) - Math.max(k.t, o.t);
        if (dx > 1 && dy > 1) { problems.push("overlap: " + label(kid) + " and " + label(other)); }
      });
    });
  });
  // Nothing spills past its section, except inside a box that scrolls on its own.
  Array.prototype.slice.call(document.querySelectorAll("main > section")).forEach(function (section) {
    var outer = box(section);
    Array.prototype.slice.call(section.querySelectorAll("*")).forEach(function (e) {
      if (!shown(e) || e.closest(".scroll") && !e.classList.contains("scroll")) { return; }
      var k = box(e);
      if (k.r > outer.r + 0.5 || k.l < outer.l - 0.5) { problems.push("spills from " + label(section) + ": " + label(e)); }
    });
  });
  var snippets = Array.prototype.slice.call(document.querySelectorAll("td.snippet pre")).map(function (e) { return e.getBoundingClientRect().width; });
  var scrolling = Array.prototype.slice.call(document.querySelectorAll(".scroll")).filter(function (e) { return e.scrollWidth > e.clientWidth + 1; }).map(label);
  var out = document.createElement("pre");
  out.id = "layout";
  out.textContent = JSON.stringify({
    viewport: window.innerWidth,
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
    problems: problems.slice(0, 20),
    problemCount: problems.length,
    narrowestSnippet: snippets.length ? Math.min.apply(null, snippets) : null,
    scrollingBoxes: scrolling,
    errors: window.tpucheckErrors
  });
  document.body.appendChild(out);
});
</script>
"""

WIDTHS = (900, 1400)
READABLE_SNIPPET_PX = 260
"""About 35 characters of 12.5 px monospace: a line of code reads as a line."""


def _browser_args(browser: str, profile: Path) -> list[str]:
    return [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}",
    ]  # fmt: skip


def _measure(browser: str, page: Path, width: int, profile: Path) -> dict[str, object]:
    args = [*_browser_args(browser, profile), f"--window-size={width},2000", "--virtual-time-budget=5000", "--dump-dom", page.as_uri()]
    done = subprocess.run(args, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    match = re.search(r'<pre id="layout">(.*?)</pre>', done.stdout, re.S)
    assert match, "the measuring script did not run"
    return json.loads(html_module.unescape(match.group(1)))  # type: ignore[no-any-return]


def _screenshot(browser: str, page: Path, width: int, target: Path, profile: Path) -> None:
    args = [*_browser_args(browser, profile), f"--window-size={width},2400", f"--screenshot={target}", page.as_uri()]
    subprocess.run(args, capture_output=True, timeout=180, check=True)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("which", ["heavy", "small"])
def test_layout_in_chromium(which: str, width: int, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium not installed")
    result: ScanResult = request.getfixturevalue(which)
    page = html.render(result)
    copy = tmp_path / f"{which}.html"
    copy.write_text(page.replace("</body>", MEASURE + "</body>"), encoding="utf-8")

    seen = _measure(browser, copy, width, tmp_path / "profile")
    assert seen["viewport"] == width  # the window size took effect, so the rest measures that width
    assert seen["scrollWidth"] <= seen["clientWidth"], f"the page scrolls sideways: {seen['scrollWidth']} > {seen['clientWidth']}"
    assert seen["problems"] == [], f"{seen['problemCount']} layout problems"
    assert seen["errors"] == []
    assert isinstance(seen["narrowestSnippet"], float | int) and seen["narrowestSnippet"] >= READABLE_SNIPPET_PX
    if width >= 1400:
        assert seen["scrollingBoxes"] == []  # the scroll boxes are for narrow windows; at 1400 everything fits

    folder = os.environ.get("TPUCHECK_SCREENSHOTS")
    if folder:
        plain = tmp_path / f"html-{which}.html"
        plain.write_text(page, encoding="utf-8")
        Path(folder).mkdir(parents=True, exist_ok=True)
        _screenshot(browser, plain, width, Path(folder) / f"html-{which}-{width}.png", tmp_path / "profile-shot")
