#!/usr/bin/env python3
"""Run `tpucheck fix` on copies of public repositories and check what it did.

    python scripts/fix_proof.py [--repos /work/repos] [--set scripts/fix_proof_set.json]
                                [--only NAME ...] [--json OUT.json] [--with-diffs]

For each repository of the set (laid out as <repos>/<owner>__<name>, never committed), on
a fresh copy, with the safe fixes and then with --unsafe-fixes:
- every changed Python file parses, and a second run changes nothing;
- the rescan's cuda-api and device-placement findings before and after, and whether each
  finding counted as fixed is gone (its rule's count in its file dropped by as many);
- the diff, cut into hunks, each with the outcomes it carries (for the review sheet,
  docs/fix-review.md; the JSON keeps the hunks' text only with --with-diffs, since it is
  the repositories' code);
- where the set gives a CPU `check` command (a tiny entry point or the project's own
  tests), it runs before and after the fix in the copy with CPU torch and a fixed seed
  (`CUDA_VISIBLE_DEVICES=""`, `PYTHONHASHSEED=0`), and the outputs are compared. Only this
  script runs the projects' code, never tpucheck itself; a `setup` command (synthetic data)
  runs first in each copy.

Exit status: 0 when every copy parses, is idempotent and every check command prints the
same before and after; 1 otherwise; 2 when a copy is missing.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tpucheck
from tpucheck.config.settings import Flags
from tpucheck.fix.runner import FixReport, run_fix

DEFAULT_SET = Path(__file__).resolve().parent / "fix_proof_set.json"
DEFAULT_REPOS = Path("/work/repos")
CATEGORIES = ("cuda-api", "device-placement")


def counts(report_findings: list[Any]) -> int:
    return sum(1 for f in report_findings if f.category in CATEGORIES and not f.suppressed and not f.baselined)


def fix(root: Path, unsafe: bool) -> FixReport:
    settings = tpucheck.load_settings(str(root), Flags(no_cache=True), isolated=True)
    return run_fix([str(root)], settings, unsafe=unsafe, write=True)


def hunks(report: FixReport) -> list[dict[str, Any]]:
    """Each change of the diff with one line of context, and the outcomes on its lines."""
    found = []
    for change in report.changed_files:
        old, new = change.before.splitlines(), change.after.splitlines()
        for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(1):
            first, last = group[0], group[-1]
            lines = range(first[1] + 1, last[2] + 1)
            text = []
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    text += [" " + line for line in old[i1:i2]]
                else:
                    text += ["-" + line for line in old[i1:i2]] + ["+" + line for line in new[j1:j2]]
            outcomes = [
                {"rule": o.target.finding.rule, "line": o.target.finding.span.line, "state": o.state, "note": o.note}
                for o in change.outcomes
                if o.edited and o.target.finding.span.line in lines
            ]
            found.append({"path": change.path, "old_lines": [first[1] + 1, last[2]], "diff": "\n".join(text), "outcomes": outcomes})
    return found


def run_check(command: str, cwd: Path, timeout: int) -> dict[str, Any]:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"returncode": None, "output": f"timed out after {timeout} s"}
    return {"returncode": done.returncode, "output": done.stdout + ("\n[stderr tail] " + done.stderr[-600:] if done.returncode else "")}


def prove(repo: dict[str, Any], source: Path, work: Path) -> dict[str, Any]:
    result: dict[str, Any] = {"repo": repo["repo"], "folder": repo.get("folder", "")}
    for mode, unsafe in (("safe", False), ("unsafe", True)):
        copy = work / f"{mode}"
        shutil.copytree(source, copy, symlinks=True)
        target = copy / repo.get("folder", "")
        checks_before = {}
        if repo.get("setup"):
            run_check(repo["setup"], target, 600)
        for name, command in repo.get("checks", {}).items():
            checks_before[name] = run_check(command, target, repo.get("timeout", 600))
        first = fix(target, unsafe)
        changed = [c.path for c in first.changed_files]
        parses = []
        for change in first.changed_files:
            if change.path.endswith(".py"):
                try:
                    ast.parse(change.after)
                    parses.append(True)
                except SyntaxError:
                    parses.append(False)
        second = fix(target, unsafe)
        after_findings = first.after.findings if first.after is not None else first.before.findings
        gone = Counter((f.rule, f.path) for f in first.before.findings) - Counter((f.rule, f.path) for f in after_findings)
        claimed = Counter((o.target.finding.rule, o.target.finding.path) for o in first.fixed)
        confirmed = all(gone[key] >= n for key, n in claimed.items())
        new = Counter((f.rule, f.path) for f in after_findings) - Counter((f.rule, f.path) for f in first.before.findings)
        checks = {}
        for name, command in repo.get("checks", {}).items():
            after = run_check(command, target, repo.get("timeout", 600))
            checks[name] = {"before": checks_before[name], "after": after, "same": checks_before[name] == after}
        result[mode] = {
            "files_changed": changed,
            "all_parse": all(parses),
            "idempotent": second.changed_files == [],
            "findings_before": counts(first.before.findings),
            "findings_after": counts(after_findings),
            "states": dict(sorted(Counter(o.state for o in first.outcomes).items())),
            "fixed_confirmed_by_rescan": confirmed,
            "new_findings_after": sorted(f"{rule} {path}" for (rule, path) in new.elements()),
            "pins_raised": first.pins_raised,
            "hunks": hunks(first),
            "checks": checks,
        }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, default=DEFAULT_REPOS)
    parser.add_argument("--set", type=Path, default=DEFAULT_SET)
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--with-diffs", action="store_true", help="keep each hunk's diff text in the JSON (public code: never commit it)")
    args = parser.parse_args(argv)
    chosen = json.loads(args.set.read_text())["repos"]
    if args.only:
        chosen = [r for r in chosen if any(o in r["repo"] + r.get("folder", "") for o in args.only)]
    results, failed = [], False
    for repo in chosen:
        source = args.repos / repo["repo"].replace("/", "__")
        if not source.is_dir():
            print(f"missing copy: {source}", file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory(prefix="fix-proof-") as work:
            result = prove(repo, source, Path(work))
        results.append(result)
        for mode in ("safe", "unsafe"):
            r = result[mode]
            same = all(c["same"] for c in r["checks"].values())
            failed |= not (r["all_parse"] and r["idempotent"] and same)
            print(
                f"{repo['repo']}/{repo.get('folder', '')} [{mode}]: {len(r['files_changed'])} files, {len(r['hunks'])} hunks, "
                f"{r['states']}, cuda-api+device-placement {r['findings_before']} -> {r['findings_after']}, parse={r['all_parse']} "
                f"idempotent={r['idempotent']} confirmed={r['fixed_confirmed_by_rescan']} checks_same={same} new={r['new_findings_after']}"
            )
    if args.json:
        if not args.with_diffs:
            for result in results:
                for mode in ("safe", "unsafe"):
                    for hunk in result[mode]["hunks"]:
                        hunk.pop("diff", None)
        args.json.write_text(json.dumps({"repos": results}, indent=1, sort_keys=True) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
