"""The pre-commit hooks, the GitHub Action and the README's CI snippets.

Structure (required keys, every input used, outputs wired to real steps), safety (no
`${{ }}` inside a shell script, inputs arrive as data), agreement with the CLI (every
flag they pass exists in `tpucheck scan --help` / `merge --help`), and behaviour: the
hooks run as pre-commit runs them, the action's scripts run with the environment GitHub
gives a composite step.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import write_tree

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
HOOKS_FILE = ROOT / ".pre-commit-hooks.yaml"
ACTION_FILE = ROOT / "action.yml"
README = ROOT / "README.md"

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
COMMAND = re.compile(r"tpucheck\"? (scan|merge)\b([^`\n]*)")
"""A tpucheck command up to the end of its line or inline-code span; `tpucheck" scan`
covers the action's `"$TPUCHECK_BIN/tpucheck" scan`."""
EXPRESSION = re.compile(r"^\$\{\{\s*(inputs|steps)\.([\w-]+)(?:\.outputs\.([\w-]+))?\s*\}\}$")


def hooks() -> list[dict[str, Any]]:
    return yaml.safe_load(HOOKS_FILE.read_text(encoding="utf-8"))


def action() -> dict[str, Any]:
    return yaml.safe_load(ACTION_FILE.read_text(encoding="utf-8"))


def steps() -> list[dict[str, Any]]:
    return action()["runs"]["steps"]


def step(step_id: str) -> dict[str, Any]:
    return next(s for s in steps() if s.get("id") == step_id or s.get("name") == step_id)


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "tpucheck", *args], check=False, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


@functools.cache
def cli_flags(command: str) -> frozenset[str]:
    """The long options `tpucheck COMMAND --help` lists."""
    done = run_cli(command, "--help")
    assert done.returncode == 0, f"`tpucheck {command} --help` failed:\n{done.stdout}{done.stderr}"
    return frozenset(FLAG.findall(done.stdout))


def commands_in(text: str) -> list[tuple[str, set[str]]]:
    """(subcommand, long flags) of every `tpucheck scan|merge ...` in the text, comments
    (`# ...` lines) left out."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    return [(m.group(1), set(FLAG.findall(m.group(2)))) for m in COMMAND.finditer("\n".join(lines))]


def assert_flags_exist(where: str, subcommand: str, flags: set[str]) -> None:
    missing = sorted(flags - cli_flags(subcommand))
    assert not missing, f"{where} passes {missing} to `tpucheck {subcommand}`, whose --help does not list them"


# --------------------------------------------------------------------------- pre-commit


def test_hooks_structure() -> None:
    manifest = hooks()
    assert isinstance(manifest, list)
    ids = [hook["id"] for hook in manifest]
    assert ids == ["tpucheck", "tpucheck-all"]
    for hook in manifest:
        for key in ("id", "name", "description", "entry", "language", "minimum_pre_commit_version"):
            assert isinstance(hook.get(key), str) and hook[key], (hook.get("id"), key)
        assert hook["language"] == "python"
        assert shlex.split(hook["entry"])[:2] == ["tpucheck", "scan"]
        assert "--format concise" in hook["entry"]
        assert re.fullmatch(r"\d+\.\d+\.\d+", hook["minimum_pre_commit_version"])
    per_file, whole = manifest
    assert per_file.get("pass_filenames", True) is True and per_file["require_serial"] is False
    assert per_file.get("types") == ["text"] or per_file.get("types_or")
    assert whole["pass_filenames"] is False and whole["always_run"] is True
    assert shlex.split(whole["entry"])[2] == ".", "the whole-repository hook scans the current directory"
    # stage names pre-push/manual need pre-commit >= 3.2.0
    assert set(whole["stages"]) <= {"pre-commit", "pre-push", "manual", "pre-merge-commit", "commit-msg"}


def test_hook_entry_is_an_installed_script() -> None:
    """`language: python` pip-installs this repository; the entry must be its console script."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    for hook in hooks():
        assert shlex.split(hook["entry"])[0] in scripts


def test_hook_flags_exist_in_cli() -> None:
    for hook in hooks():
        (found,) = commands_in(hook["entry"])
        assert_flags_exist(f"hook {hook['id']}", *found)


PRE_COMMIT_FILES = {
    "pkg/model.py": "import torch\ntorch.cuda.synchronize()\n",
    "csrc/k.cu": "__global__ void add_kernel(float* x) {}\n",
    "README.md": "not analyzed\n",
    "pkg/clean.py": "x = 1\n",
}


def run_hook(hook_id: str, cwd: Path, args: list[str] = (), files: list[str] = ()) -> subprocess.CompletedProcess[str]:
    """What pre-commit runs: the entry, then the hook's `args:`, then the file names (unless
    pass_filenames is false), in the repository's root."""
    hook = next(h for h in hooks() if h["id"] == hook_id)
    names = list(files) if hook.get("pass_filenames", True) else []
    return run_cli(*shlex.split(hook["entry"])[1:], *args, *names, cwd=cwd)


def test_per_file_hook_reports_concise_lines(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", PRE_COMMIT_FILES)
    done = run_hook("tpucheck", repo, files=sorted(PRE_COMMIT_FILES))
    assert done.returncode == 0, done.stderr  # no gate configured: report only
    lines = done.stdout.splitlines()
    assert lines[0].startswith("csrc/k.cu:1:1: CK003 [blocker] ")
    assert lines[1].startswith("pkg/model.py:2:1: CA001 [major] ")
    assert re.fullmatch(r"2 findings \(1 blocker, 1 major\) in 3 files; score \d+\.\d \(grade [A-F], target torchtpu\)", lines[2])
    assert len(lines) == 3


def test_per_file_hook_gates_from_args_and_config(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", PRE_COMMIT_FILES)
    files = ["pkg/model.py", "pkg/clean.py"]
    assert run_hook("tpucheck", repo, ["--fail-on", "major"], files).returncode == 1
    assert run_hook("tpucheck", repo, ["--fail-on", "blocker"], files).returncode == 0
    # A configured score gate is for the whole project, not for a few staged files ...
    (repo / "tpucheck.toml").write_text('fail-under = 100\n', encoding="utf-8")
    assert run_hook("tpucheck", repo, [], files).returncode == 0
    # ... while the configured severity gate applies.
    (repo / "tpucheck.toml").write_text('fail-under = 100\nfail-on = "major"\n', encoding="utf-8")
    done = run_hook("tpucheck", repo, [], files)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("pkg/model.py:2:1: CA001 [major] ")


def test_per_file_hook_with_nothing_to_analyze_passes(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", PRE_COMMIT_FILES)
    (repo / "tpucheck.toml").write_text('fail-on = "info"\n', encoding="utf-8")
    done = run_hook("tpucheck", repo, [], ["README.md"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("0 findings in 0 files; score 100.0 (grade A, target torchtpu)")


def test_whole_repository_hook_uses_the_score_gate(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", PRE_COMMIT_FILES)
    (repo / "tpucheck.toml").write_text("fail-under = 99\n", encoding="utf-8")
    done = run_hook("tpucheck-all", repo, [], ["pkg/clean.py"])
    assert done.returncode == 1, done.stdout + done.stderr
    assert "in 4 files" in done.stdout.splitlines()[-1]  # tpucheck.toml is read as a config too
    assert run_hook("tpucheck-all", repo, ["--fail-under", "10"]).returncode == 0


# --------------------------------------------------------------------------- action.yml


def test_action_structure() -> None:
    data = action()
    assert data["name"] and data["description"]
    assert data["runs"]["using"] == "composite"
    inputs, outputs = data["inputs"], data["outputs"]
    assert set(inputs) == {
        "path", "fail-under", "fail-on", "baseline", "diff-base", "args", "version",
        "python-version", "sarif", "sarif-category", "summary", "annotations",
    }  # fmt: skip
    for name, spec in inputs.items():
        assert spec.get("description"), name
        assert isinstance(spec.get("default"), str), f"input {name}: give a string default"
    defaults = {name: spec["default"] for name, spec in inputs.items()}
    assert defaults["path"] == "." and defaults["python-version"] == "3.11"
    assert defaults["diff-base"] == defaults["version"] == defaults["args"] == ""
    assert defaults["sarif"] == defaults["summary"] == defaults["annotations"] == "true"
    assert "github.event.pull_request.base.sha" in inputs["diff-base"]["description"]
    assert "fetch-depth: 0" in inputs["diff-base"]["description"]
    assert set(outputs) == {"score", "grade", "findings", "exit-code"}
    for name, spec in outputs.items():
        assert spec.get("description") and spec.get("value"), name

    uses = {s["uses"].split("@")[0]: s for s in steps() if "uses" in s}
    assert steps()[0]["uses"] == "actions/setup-python@v5"
    upload = uses["github/codeql-action/upload-sarif"]
    assert upload["uses"].endswith("@v3")
    assert "always()" in upload["if"] and upload["with"]["category"] and upload["with"]["sarif_file"]
    for s in steps():
        assert ("uses" in s) != ("run" in s), s.get("name")
        if "run" in s:
            assert s["shell"] == "bash", s.get("name")
    assert steps()[-1]["name"] == "Gate" and "always()" in steps()[-1]["if"]


def test_no_expression_inside_any_script() -> None:
    """`${{ }}` is pasted into the script before bash reads it: an input (or a value
    derived from one) there can run as code. Everything goes through `env:`."""
    for s in steps():
        if "run" in s:
            assert "${{" not in s["run"], s.get("name")


def _strings(node: object) -> list[str]:
    if isinstance(node, dict):
        return [text for value in node.values() for text in _strings(value)]
    if isinstance(node, list):
        return [text for value in node for text in _strings(value)]
    return [node] if isinstance(node, str) else []


def test_every_input_is_used() -> None:
    used = "\n".join(_strings(steps()))
    for name in action()["inputs"]:
        assert re.search(rf"\binputs\.{re.escape(name)}(?![\w-])", used), f"input {name} is never used"


def test_inputs_reach_scripts_only_through_env() -> None:
    for s in steps():
        for key, value in (s.get("env") or {}).items():
            assert EXPRESSION.match(value), f"step {s.get('name')}: env {key} should be one plain expression"


def test_outputs_and_step_references_resolve() -> None:
    ids = [s.get("id") for s in steps()]
    for name, spec in action()["outputs"].items():
        m = EXPRESSION.match(spec["value"])
        assert m and m.group(1) == "steps", name
        producer = step(m.group(2))
        assert f"{m.group(3)}=" in producer["run"], f"step {m.group(2)} never writes {m.group(3)}"
    for index, s in enumerate(steps()):
        for text in _strings({k: v for k, v in s.items() if k != "run"}):
            for ref, key in re.findall(r"steps\.([\w-]+)\.(?:outputs\.([\w-]+)|outcome)", text):
                assert ref in ids[:index], f"step {s.get('name')} refers to {ref}, which does not run before it"
                if key and "run" in step(ref):
                    assert f"{key}=" in step(ref)["run"], f"step {ref} never writes {key}"


def test_action_flags_exist_in_cli() -> None:
    seen = set()
    for s in steps():
        script = s.get("run", "")
        for subcommand, flags in commands_in(script):
            seen.add(subcommand)
            # The scan's command line is built up in a bash array: `cmd=(...)`, `cmd+=(...)`.
            built = [line for line in script.splitlines() if re.match(r"\s*(if .*then )?cmd\+?=\(", line)]
            assert_flags_exist(f"action step {s.get('name')}", subcommand, flags | set(FLAG.findall("\n".join(built))))
    assert seen == {"scan", "merge"}


class ActionRun:
    """Runs the action's `run:` steps as a runner does: `bash --noprofile --norc -eo
    pipefail`, `env:` expressions resolved from the inputs and earlier steps' outputs,
    GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files, RUNNER_TEMP. The install step is replaced by
    a `bin` folder whose `tpucheck` runs this source tree."""

    def __init__(self, tmp_path: Path, workspace: Path, **inputs: str) -> None:
        self.tmp = tmp_path
        self.workspace = workspace
        self.inputs = {name: spec["default"] for name, spec in action()["inputs"].items()}
        self.inputs.update({name.replace("_", "-"): value for name, value in inputs.items()})
        self.runner_temp = tmp_path / "runner-temp"
        (self.runner_temp / "tpucheck").mkdir(parents=True)
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        for name, command in (("tpucheck", "-m tpucheck"), ("python", "")):
            script = bin_dir / name
            script.write_text(
                f'#!/bin/sh\nPYTHONPATH={shlex.quote(str(ROOT))} exec {shlex.quote(sys.executable)} {command} "$@"\n', encoding="utf-8"
            )
            script.chmod(0o755)
        self.outputs: dict[str, dict[str, str]] = {"install": {"bin": str(bin_dir)}}
        self.summary = tmp_path / "step-summary.md"

    def _resolve(self, value: str) -> str:
        m = EXPRESSION.match(value)
        assert m, value
        if m.group(1) == "inputs":
            return self.inputs[m.group(2)]
        return self.outputs.get(m.group(2), {}).get(m.group(3), "")

    def run(self, step_id: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
        s = step(step_id)
        output_file = self.tmp / f"output-{step_id}"
        output_file.write_text("", encoding="utf-8")
        script = self.tmp / f"step-{step_id}.sh"
        script.write_text(s["run"], encoding="utf-8")
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(self.tmp),
            "RUNNER_TEMP": str(self.runner_temp),
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "GITHUB_ACTION_PATH": str(ROOT),
            "GITHUB_WORKSPACE": str(self.workspace),
        }
        env.update({key: self._resolve(value) for key, value in (s.get("env") or {}).items()})
        env.update(extra_env)
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            check=False, capture_output=True, text=True, cwd=self.workspace, env=env, timeout=300,
        )  # fmt: skip
        written = dict(line.split("=", 1) for line in output_file.read_text(encoding="utf-8").splitlines() if "=" in line)
        if s.get("id"):
            self.outputs[s["id"]] = written
        return done


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "workspace", PRE_COMMIT_FILES)


def test_action_scan_renders_and_gates(tmp_path: Path, workspace: Path) -> None:
    run = ActionRun(tmp_path, workspace, fail_on="blocker", args="--select 'CK,CA' --exclude \"docs/*\"")
    scan = run.run("scan")
    assert scan.returncode == 0, scan.stderr  # the step itself never fails: the Gate step does
    out = run.outputs["scan"]
    assert out["exit-code"] == "1"
    assert re.fullmatch(r"\d+(\.\d+)?", out["score"]) and out["grade"] in "ABCDF" and out["findings"] == "2"
    report = json.loads(Path(out["json"]).read_text(encoding="utf-8"))
    assert report["summary"]["findings"] == 2
    assert "gate failed" in scan.stderr

    summary = run.run("Job summary")
    assert summary.returncode == 0, summary.stderr
    assert run.summary.read_text(encoding="utf-8").startswith("**TPU readiness ")

    annotations = run.run("Annotations")
    assert annotations.returncode == 0, annotations.stderr
    assert annotations.stdout.startswith("::error file=csrc/k.cu,line=1,")

    sarif = run.run("sarif")
    assert sarif.returncode == 0, sarif.stderr
    assert json.loads(Path(run.outputs["sarif"]["file"]).read_text(encoding="utf-8"))["version"] == "2.1.0"

    gate = run.run("Gate")
    assert gate.returncode == 1
    assert gate.stdout.startswith("::error title=tpucheck gate failed::tpucheck: gate failed")


def test_action_gate_passes(tmp_path: Path, workspace: Path) -> None:
    run = ActionRun(tmp_path, workspace, fail_under="10")
    assert run.run("scan").returncode == 0
    assert run.outputs["scan"]["exit-code"] == "0"
    assert run.run("Gate").returncode == 0


def test_action_usage_error_fails_without_a_report(tmp_path: Path, workspace: Path) -> None:
    run = ActionRun(tmp_path, workspace, path="no-such-dir")
    assert run.run("scan").returncode == 0
    out = run.outputs["scan"]
    assert out["exit-code"] == "2" and "json" not in out and "score" not in out
    gate = run.run("Gate")
    assert gate.returncode == 2
    assert gate.stdout.startswith("::error title=tpucheck usage or configuration error::")


def test_action_crash_and_missing_exit_code_fail(tmp_path: Path, workspace: Path) -> None:
    run = ActionRun(tmp_path, workspace)
    run.outputs["scan"] = {"exit-code": "3"}
    assert run.run("Gate").returncode == 3
    run.outputs["scan"] = {}
    gate = run.run("Gate")
    assert gate.returncode == 3 and "did not finish" in gate.stdout


def test_action_inputs_are_data_not_code(tmp_path: Path, workspace: Path) -> None:
    run = ActionRun(
        tmp_path, workspace,
        path="$(touch pwned1)`touch pwned2`", fail_on="blocker; touch pwned3",
        args='--select "$(touch pwned4)" ; touch pwned5',
    )  # fmt: skip
    assert run.run("scan").returncode == 0
    assert run.outputs["scan"]["exit-code"] == "2"
    assert not list(workspace.glob("pwned*")) and not list(tmp_path.glob("pwned*"))


def test_action_unbalanced_args_are_a_usage_error(tmp_path: Path, workspace: Path) -> None:
    run = ActionRun(tmp_path, workspace, args='--select "CA')
    scan = run.run("scan")
    assert run.outputs["scan"]["exit-code"] == "2"
    assert "cannot split the `args` input" in scan.stderr


FAKE_PYTHON = '''#!{python}
"""Stands in for setup-python's interpreter: `-m venv DIR` makes a venv whose python logs
`-m pip` calls instead of installing, and whose tpucheck runs the source tree."""
import os, sys
venv = sys.argv[3]
os.makedirs(os.path.join(venv, "bin"))
with open(os.path.join(venv, "bin", "python"), "w") as f:
    f.write({venv_python!r})
with open(os.path.join(venv, "bin", "tpucheck"), "w") as f:
    f.write({venv_tpucheck!r})
for name in ("python", "tpucheck"):
    os.chmod(os.path.join(venv, "bin", name), 0o755)
'''

VENV_PYTHON = '''#!{python}
import json, os, sys
if sys.argv[1:3] == ["-m", "pip"]:
    with open({log!r}, "w") as f:
        json.dump(sys.argv[3:], f)
    sys.exit(0)
os.execv({python!r}, [{python!r}, *sys.argv[1:]])
'''


@pytest.mark.parametrize(
    ("version", "requirement"),
    [("", str(ROOT)), ("0.4.0", "tpucheck==0.4.0"), (">=0.4, <0.5", "tpucheck>=0.4,<0.5"), ("~=1.2", "tpucheck~=1.2"),
     ("--index-url https://example.invalid/simple", None), ("0.4; touch pwned", None), ("git+https://example.invalid/x", None)],
)  # fmt: skip
def test_action_install_takes_only_a_version(tmp_path: Path, workspace: Path, version: str, requirement: str | None) -> None:
    log = tmp_path / "pip-args.json"
    venv_python = VENV_PYTHON.format(python=sys.executable, log=str(log))
    venv_tpucheck = f'#!/bin/sh\nPYTHONPATH={shlex.quote(str(ROOT))} exec {shlex.quote(sys.executable)} -m tpucheck "$@"\n'
    fake = tmp_path / "fake-python"
    fake.write_text(FAKE_PYTHON.format(python=sys.executable, venv_python=venv_python, venv_tpucheck=venv_tpucheck), encoding="utf-8")
    fake.chmod(0o755)
    run = ActionRun(tmp_path, workspace, version=version)
    run.outputs["python"] = {"python-path": str(fake)}
    done = run.run("install")
    if requirement is None:
        assert done.returncode != 0 and not log.exists()
        assert not list(workspace.glob("pwned*"))
        return
    assert done.returncode == 0, done.stderr
    assert json.loads(log.read_text())[-1] == requirement
    assert run.outputs["install"]["bin"] == str(run.runner_temp / "tpucheck-venv" / "bin")


# --------------------------------------------------------------------------- README


def ci_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## Continuous integration\n")
    assert start < text.index("\n## The score\n"), "the CI section goes before the score's"
    return text[start : text.index("\n## ", start + 1)]


def fenced_blocks(text: str) -> dict[str, Any]:
    """The section's YAML blocks by what they configure."""
    found: dict[str, Any] = {}
    for language, body in re.findall(r"```(\w*)\n(.*?)```", text, re.DOTALL):
        if language != "yaml":
            continue
        data = yaml.safe_load(body)
        if "repos" in data:
            found["pre-commit"] = data
        elif "jobs" in data and any("/tpucheck@" in t for t in _strings(data)):
            found["github"] = data
        elif any(isinstance(job, dict) and "script" in job for job in data.values()):
            found["gitlab"] = data
    return found


def test_readme_pre_commit_snippet_matches_the_hooks() -> None:
    config = fenced_blocks(ci_section())["pre-commit"]
    (repo,) = config["repos"]
    # no release tag or hosted URL exists yet (issue 28): a clone's URL or path, at a commit
    assert (repo["repo"], repo["rev"]) == ("REPO", "SHA")
    used = [hook["id"] for hook in repo["hooks"]]
    assert "tpucheck" in used and set(used) <= {hook["id"] for hook in hooks()}
    for hook in repo["hooks"]:
        assert_flags_exist("the README's pre-commit snippet", "scan", set(FLAG.findall(" ".join(hook.get("args", [])))))


def test_readme_workflow_matches_the_action() -> None:
    workflow = fenced_blocks(ci_section())["github"]
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "pull_request" in triggers
    assert workflow["permissions"] == {"contents": "read", "security-events": "write"}
    (job,) = workflow["jobs"].values()
    checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    ours = next(s for s in job["steps"] if "/tpucheck@" in s.get("uses", ""))
    assert ours["uses"] == "OWNER/tpucheck@SHA"  # a commit, not a tag that does not exist
    assert set(ours["with"]) <= set(action()["inputs"])
    assert ours["with"]["diff-base"] == "${{ github.event.pull_request.base.sha }}"


def test_readme_inputs_table_matches_the_action() -> None:
    rows = [line.split("|")[1:-1] for line in ci_section().splitlines() if line.startswith("| `")]
    documented = {name.strip().strip("`"): default.strip().strip("`") for name, default, _ in rows}
    assert documented == {name: spec["default"] for name, spec in action()["inputs"].items()}
    outputs_line = next(line for line in ci_section().splitlines() if line.startswith("Outputs:"))
    assert re.findall(r"`([a-z-]+)`", outputs_line) == list(action()["outputs"])


def test_readme_gitlab_job() -> None:
    config = fenced_blocks(ci_section())["gitlab"]
    (job,) = [job for job in config.values() if isinstance(job, dict) and "script" in job]
    assert job["image"] == "python:3.11"
    assert str(job["variables"]["GIT_DEPTH"]) == "0"
    script = "\n".join(job["script"])
    assert 'pip install "tpucheck @ git+$TPUCHECK_REPO@$TPUCHECK_SHA"' in script
    assert '--diff-base "$CI_MERGE_REQUEST_DIFF_BASE_SHA"' in script
    assert job["artifacts"]["when"] == "always"


def test_readme_commands_use_real_flags() -> None:
    found = commands_in(ci_section())
    assert {subcommand for subcommand, _ in found} == {"scan", "merge"}
    for subcommand, flags in found:
        assert_flags_exist("the README's CI section", subcommand, flags)
