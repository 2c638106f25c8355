"""Adoption in CI: baselines, the diff-aware gate, config through the CLI, user rule tests,
scans of a few files (pre-commit) and shards merged back into one scan."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_tree

from tpucheck.engine import ScanOptions, scan
from tpucheck.merge import MergeError, merge_reports
from tpucheck.reports.json_report import render
from tpucheck.ruleset import load_ruleset

SOURCE_ROOT = str(Path(__file__).resolve().parent.parent)
DEMO = Path(SOURCE_ROOT) / "examples" / "gpu-trainer"
RULESET = load_ruleset()


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SOURCE_ROOT, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "tpucheck", *args], capture_output=True, text=True, cwd=cwd, env=env)


def concise(result: subprocess.CompletedProcess[str]) -> list[str]:
    """`path:line:col: RULE` of each finding line of the concise format."""
    return [" ".join(line.split()[:2]) for line in result.stdout.splitlines() if ": " in line and line.split()[1][:2].isalpha() and line.split()[0].endswith(":")]


TRAIN = """\
import torch

def step(model, batch):
    torch.cuda.synchronize()
    return model(batch.cuda())
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "proj", {"train.py": TRAIN, "util.py": "import torch\ntorch.cuda.empty_cache()\n"})


# --------------------------------------------------------------------------- baselines


def test_baseline_forgives_old_findings_and_catches_new_ones(project: Path) -> None:
    written = cli("scan", ".", "--no-cache", "-q", "--write-baseline", "base.json", "--fail-on", "minor", "--format", "json", cwd=project)
    assert written.returncode == 0, written.stderr
    recorded = json.loads((project / "base.json").read_text())
    assert [(e["rule"], e["path"]) for e in recorded["findings"]] == [("CA001", "train.py"), ("CA003", "train.py"), ("CA007", "util.py")]
    # Moved down two lines and re-indented around unrelated edits: still baselined.
    (project / "train.py").write_text("import torch\n\n\ndef step(model, batch):\n    x = 1\n    torch.cuda.synchronize()\n    return model(batch.cuda())\n")
    moved = cli("scan", ".", "--no-cache", "-q", "--baseline", "base.json", "--fail-on", "minor", "--format", "json", cwd=project)
    assert moved.returncode == 0, moved.stdout + moved.stderr
    report = json.loads(moved.stdout)
    assert report["summary"]["baselined"] == 3 and report["summary"]["gated"] == 0
    assert report["gate"] == {"baseline": "base.json", "diff_base": None}
    assert all(f["baselined"] for f in report["findings"])
    # One more identical call is new, and only it trips the gate; the score counts all.
    (project / "util.py").write_text("import torch\ntorch.cuda.empty_cache()\ntorch.cuda.empty_cache()\n")
    again = cli("scan", ".", "--no-cache", "-q", "--baseline", "base.json", "--fail-on", "info", "--format", "concise", cwd=project)
    assert again.returncode == 1
    assert concise(again) == ["util.py:3:1: CA007"]
    assert "1 new findings at or above info" in again.stderr
    assert "3 baselined" in again.stdout


def test_baseline_file_is_deterministic(project: Path) -> None:
    for name in ("a.json", "b.json"):
        assert cli("scan", ".", "--no-cache", "-q", "--write-baseline", name, "--format", "json", cwd=project).returncode == 0
    assert (project / "a.json").read_bytes() == (project / "b.json").read_bytes()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "base.json:1: not a baseline file: invalid JSON"),
        ('{"findings": []}', "not a baseline file (write one with"),
        ('{"tpucheck_baseline": 1, "findings": [{"rule": "CA001"}]}', "findings must be a list of entries with a fingerprint"),
    ],
)
def test_bad_baseline_is_reported_and_the_scan_goes_on(project: Path, content: str, message: str) -> None:
    (project / "base.json").write_text(content)
    done = cli("scan", ".", "--no-cache", "-q", "--baseline", "base.json", "--fail-on", "blocker", "--format", "json", cwd=project)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    assert report["summary"]["findings"] == 3 and report["summary"]["baselined"] == 0
    assert [e["kind"] for e in report["configuration_errors"]] == ["baseline"]


# --------------------------------------------------------------------------- diff-aware gate


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@needs_git
def test_diff_base_gates_only_changed_lines(project: Path) -> None:
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "base")
    git(project, "checkout", "-qb", "feature")
    (project / "train.py").write_text(TRAIN.replace("    return", "    torch.cuda.manual_seed(0)\n    return"))
    git(project, "commit", "-qam", "seed")
    (project / "new.py").write_text("import torch\ntorch.cuda.ipc_collect()\n")  # untracked: all new
    done = cli("scan", ".", "--no-cache", "-q", "--diff-base", "main", "--fail-on", "info", "--format", "json", cwd=project)
    report = json.loads(done.stdout)
    inside = sorted((f["path"], f["line"], f["rule"]) for f in report["findings"] if not f.get("outside_diff"))
    assert inside == [("new.py", 2, "CA007"), ("train.py", 5, "CA005")]
    assert report["summary"]["outside_diff"] == 3 and report["gate"]["diff_base"] == "main"
    assert done.returncode == 1 and "2 new findings at or above info" in done.stderr
    # The base branch moving on does not make its changes "ours": the merge base decides.
    git(project, "stash", "-u", "-q")
    git(project, "checkout", "-q", "main")
    (project / "util.py").write_text("import torch\ntorch.cuda.empty_cache()\ntorch.cuda.synchronize()\n")
    git(project, "commit", "-qam", "main moves")
    git(project, "checkout", "-q", "feature")
    later = json.loads(cli("scan", ".", "--no-cache", "-q", "--diff-base", "main", "--format", "json", cwd=project).stdout)
    assert sorted((f["path"], f["line"]) for f in later["findings"] if not f.get("outside_diff")) == [("train.py", 5)]


@needs_git
def test_diff_base_errors_are_usage_errors(project: Path, tmp_path: Path) -> None:
    not_repo = cli("scan", ".", "--no-cache", "-q", "--diff-base", "main", cwd=project)
    assert not_repo.returncode == 2 and not_repo.stderr.startswith("tpucheck: error: --diff-base main: ")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "base")
    bad_ref = cli("scan", ".", "--no-cache", "-q", "--diff-base", "no-such-branch", cwd=project)
    assert bad_ref.returncode == 2 and "Traceback" not in bad_ref.stderr
    option_like = cli("scan", ".", "--no-cache", "-q", "--diff-base=--output=/tmp/x", cwd=project)
    assert (option_like.returncode == 2 and not Path("/tmp/x").exists()) or option_like.returncode == 2


def test_unified_diff_parsing() -> None:
    from tpucheck.gitdiff import parse_unified_diff

    text = "\n".join(
        [
            "diff --git a/a.py b/a.py",
            "--- a/a.py",
            "+++ b/a.py",
            "@@ -3,0 +4,2 @@ def f():",
            "+x",
            "+y",
            "@@ -10 +12 @@",
            "-old",
            "+new",
            "@@ -20,3 +23,0 @@",
            '--- a/"odd\\tname.py"',
            '+++ "b/t\\303\\251st.py"',
            "@@ -1 +1 @@",
            "--- a/gone.py",
            "+++ /dev/null",
            "@@ -1,2 +0,0 @@",
        ]
    )
    assert parse_unified_diff(text) == {"a.py": {4, 5, 12}, "tést.py": {1}}


# --------------------------------------------------------------------------- config through the CLI


def test_config_settings_apply_and_flags_override(project: Path) -> None:
    (project / "tpucheck.toml").write_text('fail-on = "major"\nignore = ["CA003"]\nformat = "concise"\n[per-file-ignores]\n"util.py" = ["cuda-api"]\n')
    done = cli("scan", ".", "--no-cache", "-q", cwd=project)
    assert concise(done) == ["train.py:4:5: CA001"]
    assert done.returncode == 1
    report = json.loads(cli("scan", ".", "--no-cache", "-q", "--format", "json", "--fail-on", "blocker", cwd=project).stdout)
    assert [(s["rule"], s["suppression_reason"]) for s in report["suppressed"]] == [("CA007", "per-file-ignores: util.py")]
    assert cli("scan", ".", "--no-cache", "-q", "--fail-on", "blocker", cwd=project).returncode == 0


def test_config_problems_are_reported_and_the_scan_goes_on(project: Path) -> None:
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.tpucheck]\nfail-undr = 80\nselect = ["CA", "NOPE9"]\njobs = "2"\n')
    done = cli("scan", ".", "--no-cache", "-q", "--format", "json", cwd=project)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    errors = done.stderr.splitlines()
    assert any("pyproject.toml:5" in line and "fail-undr" in line and "fail-under" in line for line in errors)
    assert any("pyproject.toml:7" in line and "jobs" in line for line in errors)
    assert any("pyproject.toml:6" in line and "NOPE9" in line for line in errors)
    report = json.loads(done.stdout)
    assert {f["rule"] for f in report["findings"]} == {"CA001", "CA003", "CA007"}
    assert len(report["configuration_errors"]) == 3


def test_broken_user_rule_file_is_left_out_and_the_scan_goes_on(project: Path) -> None:
    (project / "bad.yaml").write_text("rules:\n  - id: X1\n    name: [unclosed\n")
    done = cli("scan", ".", "--no-cache", "-q", "--rules", "bad.yaml", "--format", "json", cwd=project)
    assert done.returncode == 2
    assert done.stderr.startswith("tpucheck: error: bad.yaml:4: invalid YAML")
    assert json.loads(done.stdout)["summary"]["findings"] == 3


def test_isolated_ignores_the_config(project: Path) -> None:
    (project / "tpucheck.toml").write_text('select = ["CA007"]\n')
    assert len(json.loads(cli("scan", ".", "--no-cache", "-q", "--format", "json", cwd=project).stdout)["findings"]) == 1
    assert len(json.loads(cli("scan", ".", "--no-cache", "-q", "--isolated", "--format", "json", cwd=project).stdout)["findings"]) == 3


def test_init_writes_a_config_the_scan_reads(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {"pyproject.toml": '[project]\nname = "p"\n', "m.py": "import flash_attn\n"})
    done = cli("init", cwd=root)
    assert done.returncode == 0 and done.stdout.strip() == "tpucheck: wrote pyproject.toml"
    assert (root / "pyproject.toml").read_text().startswith('[project]\nname = "p"\n')
    gate = cli("scan", ".", "--no-cache", "-q", "--format", "concise", cwd=root)
    assert gate.returncode == 1 and "blocker" in gate.stderr
    assert cli("init", cwd=root).returncode == 2


# --------------------------------------------------------------------------- user rules


USER_RULES = """\
rules:
  - id: ACME001
    name: acme-cuda-helper
    category: cuda-api
    severity: major
    affects: [training]
    effort: {low: 0.5, high: 1}
    message: "acme.gpu.pin() pins host memory for CUDA copies."
    fix: {tpu: "Drop the call."}
    docs: ["https://example.org/acme"]
    match:
      call: acme.gpu.pin
    examples:
      flag:
        - "import acme.gpu\\nacme.gpu.pin(x)"
      pass:
        - "import acme\\nacme.cpu.pin(x)"
  - id: ACME002
    name: acme-wrong-example
    category: cuda-api
    severity: minor
    affects: [training]
    effort: {low: 0.5, high: 1}
    message: "m"
    fix: {tpu: "f"}
    docs: ["https://example.org/acme"]
    match:
      call: acme.gpu.sync
    examples:
      flag:
        - "import acme\\nacme.gpu.synchronize()"
      pass:
        - "import acme\\nacme.gpu.sync()"
"""


def test_rules_test_reports_which_examples_fail(tmp_path: Path) -> None:
    (tmp_path / "acme.yaml").write_text(USER_RULES)
    done = cli("rules", "test", "acme.yaml", cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0] == "ok   ACME001 acme-cuda-helper (acme.yaml:2): 2/2 examples"
    assert lines[1] == "FAIL ACME002 acme-wrong-example (acme.yaml:18): 0/2 examples"
    assert lines[2] == "     flag example 1: not flagged: import acme"
    assert lines[3] == "     pass example 1: flagged on line 2: import acme"
    assert lines[-1] == "2 rules, 4 examples: 2 passed, 2 failed"
    (tmp_path / "acme.yaml").write_text(USER_RULES.split("  - id: ACME002")[0])
    assert cli("rules", "test", "acme.yaml", cwd=tmp_path).returncode == 0


def test_rules_test_invalid_file_and_id_clash(tmp_path: Path) -> None:
    (tmp_path / "clash.yaml").write_text(USER_RULES.replace("ACME001", "CA001"))
    done = cli("rules", "test", "clash.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert "clash.yaml:2: rule CA001 id: duplicate id 'CA001'" in done.stderr
    # `tpucheck rules` itself still lists.
    listing = cli("rules", "--category", "build", "--format", "json", cwd=tmp_path)
    assert listing.returncode == 0 and json.loads(listing.stdout)


# --------------------------------------------------------------------------- a few files, as pre-commit passes them


def test_scanning_files_keeps_paths_and_fingerprints_of_the_whole_tree(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "r", {"pkg/__init__.py": "", "pkg/a.py": TRAIN, "pkg/b.py": "import pkg.ops\nimport flash_attn\n", "other.py": "x = 1\n"})
    whole = json.loads(cli("scan", ".", "--no-cache", "-q", "--format", "json", cwd=root).stdout)
    some = json.loads(cli("scan", "pkg/a.py", "pkg/b.py", "--no-cache", "-q", "--format", "json", cwd=root).stdout)
    assert some["findings"] == whole["findings"]
    assert some["coverage"]["files_found"] == 2
    # The project's own package is known as first-party from the root, not from the files given.
    assert "pkg" not in {f.get("detail") for f in some["findings"]}


def test_exclude_applies_to_files_named_explicitly(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "r", {"vendor/x.py": TRAIN, "a.py": TRAIN, "tpucheck.toml": 'exclude = ["vendor/"]\n'})
    done = json.loads(cli("scan", "a.py", "vendor/x.py", "--no-cache", "-q", "--format", "json", cwd=root).stdout)
    assert {f["path"] for f in done["findings"]} == {"a.py"}


# --------------------------------------------------------------------------- shards


def test_merged_shards_equal_one_scan(tmp_path: Path) -> None:
    single = scan(str(DEMO), RULESET, ScanOptions(jobs=1))
    expected = render(single)
    for count in (1, 2, 3, 5):
        paths = []
        for k in range(1, count + 1):
            shard = scan(str(DEMO), RULESET, ScanOptions(jobs=1, shard=(k, count)))
            path = tmp_path / f"{count}-{k}.json"
            path.write_text(render(shard))
            paths.append(path)
        assert render(merge_reports(paths, RULESET)) == expected, f"{count} shards"
    sizes = [len(json.loads((tmp_path / f"5-{k}.json").read_text())["findings"]) for k in range(1, 6)]
    assert sum(sizes) == len(single.findings) and max(sizes) < len(single.findings)


def test_merge_cli_matches_scan_and_renders_other_formats(tmp_path: Path) -> None:
    for k in (1, 2):
        assert cli("scan", str(DEMO), "--no-cache", "-q", "--shard", f"{k}/2", "--format", "json", "-o", f"s{k}.json", cwd=tmp_path).returncode == 0
    merged = cli("merge", "s1.json", "s2.json", "--format", "sarif", cwd=tmp_path)
    direct = cli("scan", str(DEMO), "--no-cache", "-q", "--format", "sarif", cwd=tmp_path)
    assert merged.returncode == 0 and merged.stdout == direct.stdout
    gate = cli("merge", "s1.json", "s2.json", "--fail-under", "90", "--format", "json", cwd=tmp_path)
    assert gate.returncode == 1 and "is below 90" in gate.stderr


def test_merge_refuses_what_is_not_one_scan(tmp_path: Path) -> None:
    paths = []
    for k in (1, 2, 3):
        path = tmp_path / f"s{k}.json"
        path.write_text(render(scan(str(DEMO), RULESET, ScanOptions(jobs=1, shard=(k, 3)))))
        paths.append(path)
    with pytest.raises(MergeError, match=r"shards 3/3 missing"):
        merge_reports(paths[:2], RULESET)
    with pytest.raises(MergeError, match=r"shard 2/3 given twice"):
        merge_reports([paths[0], paths[1], paths[1]], RULESET)
    whole = tmp_path / "whole.json"
    whole.write_text(render(scan(str(DEMO), RULESET, ScanOptions(jobs=1))))
    with pytest.raises(MergeError, match=r"not a shard report"):
        merge_reports([paths[0], whole], RULESET)
    (tmp_path / "junk.json").write_text("[1, 2]")
    with pytest.raises(MergeError, match=r"junk.json: not a tpucheck JSON report"):
        merge_reports([tmp_path / "junk.json"], RULESET)
    done = cli("merge", "s1.json", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr == "tpucheck: error: shards 2/3, 3/3 missing: merge needs every shard\n"


@pytest.mark.parametrize("value", ["0/2", "3/2", "1", "a/b", "1/0"])
def test_bad_shard_values_are_usage_errors(project: Path, value: str) -> None:
    done = cli("scan", ".", "--no-cache", "-q", "--shard", value, cwd=project)
    assert done.returncode == 2 and "--shard takes K/N" in done.stderr


def test_every_report_says_how_many_are_baselined(project: Path) -> None:
    assert cli("scan", ".", "--no-cache", "-q", "--write-baseline", "base.json", cwd=project).returncode == 0
    (project / "util.py").write_text("import torch\ntorch.cuda.empty_cache()\ntorch.cuda.empty_cache()\n")
    sentence = "1 new findings, 3 baselined (base.json); the score counts them all"
    for fmt in ("terminal", "markdown", "html"):
        done = cli("scan", ".", "--no-cache", "-q", "--baseline", "base.json", "--format", fmt, cwd=project)
        assert sentence in done.stdout, fmt
    sarif = json.loads(cli("scan", ".", "--no-cache", "-q", "--baseline", "base.json", "--format", "sarif", cwd=project).stdout)
    states = sorted((r["locations"][0]["physicalLocation"]["region"]["startLine"], r["baselineState"]) for r in sarif["runs"][0]["results"])
    assert states == [(2, "unchanged"), (3, "new"), (4, "unchanged"), (5, "unchanged")]


def test_directories_named_on_the_command_line_keep_the_roots_ignore_rules(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "r", {".gitignore": "src/gen/\n", "src/a.py": TRAIN, "src/gen/b.py": TRAIN, "tests/t.py": TRAIN, "docs/d.py": TRAIN})
    done = json.loads(cli("scan", "src", "tests", "--no-cache", "-q", "--format", "json", cwd=root).stdout)
    assert sorted({f["path"] for f in done["findings"]}) == ["src/a.py", "tests/t.py"]


def test_an_unusable_cache_dir_is_a_note_not_a_failure(project: Path) -> None:
    (project / "blocker").write_text("")
    done = cli("scan", ".", "--cache-dir", "blocker/cache", "--format", "concise", cwd=project)
    assert done.returncode == 0 and len(concise(done)) == 3
    assert done.stderr == "tpucheck: note: results not cached: cannot write the cache: Not a directory\n"
    warm = cli("scan", ".", "--format", "concise", cwd=project)
    again = cli("scan", ".", "--format", "concise", cwd=project)
    assert warm.stdout == again.stdout and (project / ".tpucheck_cache" / ".gitignore").read_text().endswith("*\n")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"tool": 1}', "not a tpucheck JSON report"),
        ('{"tool": {"name": "tpucheck", "version": "%s"}, "schema_version": "1.3", "rules": 3}', "rules must be a list of rule ids"),
    ],
)
def test_malformed_reports_are_one_line_merge_errors(tmp_path: Path, content: str, message: str) -> None:
    from tpucheck import __version__

    (tmp_path / "r.json").write_text(content.replace("%s", __version__))
    done = cli("merge", "r.json", cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
