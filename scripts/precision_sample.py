#!/usr/bin/env python3
"""Draw a stratified sample of findings for a hand audit, and summarize the audit.

    python scripts/precision_sample.py sample [--repos /work/repos] [--n 170] [--cap 12]
        [--seed 11] [--scans DIR] [--reuse] [--target T] -o sheet.md [--csv sheet.csv]
    python scripts/precision_sample.py summarize sheet.md   (or sheet.csv)

Why (issue 11 point 7): precision is measured, not assumed, on repositories the model was
not tuned on (`precision_repos` in calibration_set.json). A sample drawn evenly over
findings would be all `.item()` and `.cuda()`; drawn evenly over rules it would overweight
rare rules. So: every rule with findings gets one, the rest of N goes to rules in
proportion to their findings, no rule gets more than --cap, and inside a rule the draw is
spread over repositories. A fixed seed makes the sheet reproducible for the same reports.

The auditor fills `verdict` with one of: right (right rule, right severity),
wrong-severity (right rule, wrong severity), false (should not be reported at all), and
may add a note. Strict precision = right / audited; lenient = (right + wrong-severity) /
audited.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration_common import (
    DEFAULT_REPOS,
    DEFAULT_SET,
    Repo,
    ScanFailed,
    load_or_scan,
    load_set,
    select,
)

CONTEXT = 2  # lines either side: five lines in all
VERDICTS = {
    "right": "right",
    "ok": "right",
    "wrong-severity": "wrong-severity",
    "wrong severity": "wrong-severity",
    "severity": "wrong-severity",
    "ws": "wrong-severity",
    "false": "false",
    "fp": "false",
    "wrong": "false",
}
FIELDS = [
    "id", "repo", "path", "line", "rule", "name", "severity", "category", "role",
    "guarded", "confidence", "snippet", "context", "verdict", "note",
]


@dataclass
class Item:
    repo: str
    finding: dict[str, Any]

    @property
    def key(self) -> tuple[Any, ...]:
        f = self.finding
        return (self.repo, f.get("path", ""), f.get("cell") or 0, f.get("line", 0), f.get("column", 0), f.get("rule", ""))


def allocate(counts: dict[str, int], n: int, cap: int) -> dict[str, int]:
    """How many to draw per rule: one each, then the rest in proportion, at most `cap`
    (and never more than the rule has); largest remainders break ties, by rule id."""
    quota = {r: min(1, c) for r, c in counts.items()}
    room = {r: min(cap, c) for r, c in counts.items()}
    left = n - sum(quota.values())
    while left > 0:
        open_rules = {r: counts[r] for r in counts if quota[r] < room[r]}
        if not open_rules:
            break
        total = sum(open_rules.values())
        shares = {r: left * c / total for r, c in open_rules.items()}
        given = 0
        for r, share in shares.items():
            add = min(int(share), room[r] - quota[r])
            quota[r] += add
            given += add
        left -= given
        if given == 0:  # hand out the remainders one by one, largest first
            for r in sorted(open_rules, key=lambda r: (-(shares[r] - int(shares[r])), r)):
                if left == 0:
                    break
                if quota[r] < room[r]:
                    quota[r] += 1
                    left -= 1
    return quota


def draw(items: list[Item], n: int, cap: int, seed: int) -> list[Item]:
    """The stratified sample, sorted by repository, path and line for auditing."""
    by_rule: dict[str, list[Item]] = defaultdict(list)
    for it in sorted(items, key=lambda i: i.key):
        by_rule[it.finding.get("rule", "?")].append(it)
    quota = allocate({r: len(v) for r, v in by_rule.items()}, n, cap)
    rng = random.Random(seed)
    chosen: list[Item] = []
    for rule in sorted(by_rule):
        pool = by_rule[rule]
        k = quota[rule]
        by_repo: dict[str, list[Item]] = defaultdict(list)
        for it in pool:
            by_repo[it.repo].append(it)
        for v in by_repo.values():
            rng.shuffle(v)
        # round-robin over repositories (in a seeded order) so one repo cannot fill a rule
        order = sorted(by_repo)
        rng.shuffle(order)
        picked: list[Item] = []
        while len(picked) < k:
            for repo in order:
                if by_repo[repo] and len(picked) < k:
                    picked.append(by_repo[repo].pop())
        chosen.extend(picked)
    return sorted(chosen, key=lambda i: i.key)


def _notebook_lines(path: Path, cell: int) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    cells = nb.get("cells", [])
    # tpucheck numbers cells from 1 in findings
    idx = cell - 1 if 0 < cell <= len(cells) else cell
    src = cells[idx].get("source", "") if 0 <= idx < len(cells) else ""
    return ("".join(src) if isinstance(src, list) else src).splitlines()


def context(root: Path, finding: dict[str, Any], around: int = CONTEXT) -> str:
    """The source lines around a finding, numbered, the finding's line marked with '>'."""
    path = root / finding.get("path", "")
    line = int(finding.get("line") or 0)
    try:
        if finding.get("cell") is not None and path.suffix == ".ipynb":
            lines = _notebook_lines(path, int(finding["cell"]))
        else:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except (OSError, ValueError, KeyError, IndexError) as exc:
        return f"(source unavailable: {exc})"
    if line < 1 or line > len(lines):
        return f"(line {line} outside the file's {len(lines)} lines)"
    lo, hi = max(1, line - around), min(len(lines), line + around)
    width = len(str(hi))
    return "\n".join(
        f"{'>' if i == line else ' '} {i:>{width}} | {lines[i - 1].rstrip()}" for i in range(lo, hi + 1)
    )


def rows_for(sample: list[Item], repos_root: Path, dirnames: dict[str, str]) -> list[dict[str, str]]:
    rows = []
    for n, it in enumerate(sample, 1):
        f = it.finding
        where = f"{f.get('path')}" + (f"#cell{f['cell']}" if f.get("cell") is not None else "")
        rows.append(
            {
                "id": str(n),
                "repo": it.repo,
                "path": where,
                "line": str(f.get("line", "")),
                "rule": f.get("rule", ""),
                "name": f.get("name", ""),
                "severity": f.get("severity", ""),
                "category": f.get("category", ""),
                "role": str(f.get("role", "")),
                "guarded": str(f.get("guarded", "")).lower(),
                "confidence": str(f.get("confidence", "")),
                "snippet": " ".join(str(f.get("snippet", "")).split())[:120],
                "context": context(repos_root / dirnames[it.repo], f),
                "verdict": "",
                "note": "",
            }
        )
    return rows


def _lang(path: str) -> str:
    """A fence language for the sheet's code blocks, so a Markdown viewer highlights it."""
    p = path.split("#cell")[0].lower()
    if p.endswith((".py", ".pyi", ".ipynb")):
        return "python"
    if p.endswith((".cu", ".cuh", ".cpp", ".cc", ".h", ".hpp", ".c")):
        return "cpp"
    if p.endswith((".toml", ".cfg", ".txt", ".yml", ".yaml")) or "dockerfile" in p:
        return "text"
    return ""


def write_markdown(rows: list[dict[str, str]], path: Path, header: str) -> None:
    out = [header, ""]
    for r in rows:
        out += [
            f"### {r['id']}. {r['repo']} · {r['path']}:{r['line']} · {r['rule']} {r['name']}",
            "",
            f"severity: {r['severity']} | category: {r['category']} | role: {r['role']} | "
            f"guarded: {r['guarded']} | confidence: {r['confidence']}",
            "",
            "```" + _lang(r["path"]),
            r["context"].replace("```", "`\u200b``"),
            "```",
            "",
            f"verdict: {r.get('verdict', '')}",
            f"note: {r.get('note', '')}",
            "",
        ]
    path.write_text("\n".join(out), encoding="utf-8")


def write_csv(rows: list[dict[str, str]], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)


# ---------------------------------------------------------------- summarize

_HEAD = re.compile(r"^### (\d+)\. (\S+) · (.+?):(\d*) · (\S+)(?: (\S+))?")
_META = re.compile(r"severity: (\S+) \| category: (\S+) \| role: (\S*)(?: \| guarded: (\S*))?(?: \| confidence: (\S*))?")


def read_markdown(path: Path) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    cur: dict[str, str] | None = None
    in_code = False
    code: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            if in_code and cur is not None:
                cur["context"] = "\n".join(code)
            in_code, code = not in_code, []
            continue
        if in_code:
            code.append(line)
            continue
        m = _HEAD.match(line)
        if m:
            cur = {"id": m[1], "repo": m[2], "path": m[3], "line": m[4], "rule": m[5], "name": m[6] or "",
                   "verdict": "", "note": "", "context": ""}
            rows.append(cur)
            continue
        if cur is None:
            continue
        m = _META.match(line)
        if m:
            cur.update(severity=m[1], category=m[2], role=m[3], guarded=m[4] or "", confidence=m[5] or "")
        elif line.startswith("verdict:"):
            cur["verdict"] = line[len("verdict:"):].strip()
        elif line.startswith("note:"):
            cur["note"] = line[len("note:"):].strip()
    return rows


def read_sheet(path: Path) -> list[dict[str, str]]:
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh))
    return read_markdown(path)


def normalize(verdict: str) -> str | None:
    v = verdict.strip().lower().strip("*`_ ")
    if not v:
        return None
    if v not in VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r} (want right, wrong-severity or false)")
    return VERDICTS[v]


def tally(rows: Iterable[dict[str, str]], by: str) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rows:
        v = normalize(r.get("verdict", ""))
        for key in (r.get(by, "?") or "?", "ALL"):
            out[key][v or "pending"] += 1
    return out


def precision_table(counts: dict[str, Counter[str]], label: str) -> str:
    lines = [
        f"| {label} | audited | right | wrong-severity | false | pending | strict | lenient |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key in sorted(counts, key=lambda k: (k == "ALL", k)):
        c = counts[key]
        audited = c["right"] + c["wrong-severity"] + c["false"]
        strict = f"{100 * c['right'] / audited:.0f} %" if audited else "-"
        lenient = f"{100 * (c['right'] + c['wrong-severity']) / audited:.0f} %" if audited else "-"
        name = "**overall**" if key == "ALL" else key
        lines.append(
            f"| {name} | {audited} | {c['right']} | {c['wrong-severity']} | {c['false']} | "
            f"{c['pending']} | {strict} | {lenient} |"
        )
    return "\n".join(lines)


def summarize(paths: list[Path], by_rule: bool = False) -> str:
    """Per repository (what issue 11 asks for), per severity (issue 23: blockers apart,
    since a false blocker costs a gate), per role (tests were the worst in the first
    audit) and, when asked, per rule (which rules to fix first). Several sheets are pooled."""
    rows = [row for path in paths for row in read_sheet(path)]
    parts = [precision_table(tally(rows, "repo"), "repo")]
    parts.append(precision_table(tally(rows, "severity"), "severity"))
    parts.append(precision_table(tally(rows, "role"), "role"))
    if by_rule:
        parts.append(precision_table(tally(rows, "rule"), "rule"))
    return "\n\n".join(parts)


# ---------------------------------------------------------------- main

def scan_reports(repos: list[Repo], args: argparse.Namespace, scans_dir: Path) -> dict[str, dict[str, Any]] | None:
    """Each repository's JSON report, scanned or read back (--reuse); None after a failed
    scan, which is reported on stderr."""
    reports: dict[str, dict[str, Any]] = {}
    for repo in repos:
        print(f"{'reading' if args.reuse else 'scanning'} {repo.repo} ...", file=sys.stderr, flush=True)
        try:
            reports[repo.repo], _ = load_or_scan(
                repo, args.repos, scans_dir, reuse=args.reuse, tpucheck=args.tpucheck, target=args.target, jobs=args.jobs
            )
        except ScanFailed as exc:
            print(f"error: {repo.repo}: {exc}", file=sys.stderr)
            return None
    return reports


def cmd_sample(args: argparse.Namespace) -> int:
    cset = load_set(args.set_path)
    repos = select(cset.precision_repos, args.only)
    scans_dir = args.scans or Path(tempfile.mkdtemp(prefix="tpucheck-precision-"))
    items: list[Item] = []
    per_repo: dict[str, int] = {}
    targets: set[str] = set()
    reports = scan_reports(repos, args, scans_dir)
    if reports is None:
        return 2
    for repo in repos:
        report = reports[repo.repo]
        t = report.get("summary", {}).get("target") or report.get("target")
        if isinstance(t, str):
            targets.add(t)
        found = report.get("findings", [])
        per_repo[repo.repo] = len(found)
        items += [Item(repo.repo, f) for f in found]
    sample = draw(items, args.n, args.cap, args.seed)
    rules_with = len({i.finding.get("rule") for i in items})
    rules_in = len({i.finding.get("rule") for i in sample})
    rows = rows_for(sample, args.repos, {r.repo: r.dirname for r in repos})
    header = "\n".join(
        [
            "# tpucheck precision audit sheet",
            "",
            f"Sample of {len(sample)} of {len(items)} findings (seed {args.seed}, N {args.n}, cap {args.cap} per rule), "
            f"{rules_in} of {rules_with} rules with findings; target: {', '.join(sorted(targets)) or 'tool default'}.",
            "Findings per repository: " + ", ".join(f"{k} {v}" for k, v in per_repo.items()) + ".",
            "",
            "Fill each `verdict:` with right (right rule, right severity), wrong-severity, or false; "
            "add a `note:` for anything not right. Then: `python scripts/precision_sample.py summarize THIS_FILE`.",
        ]
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    write_markdown(rows, args.output, header)
    if args.csv:
        write_csv(rows, args.csv)
    by_rule = Counter(r["rule"] for r in rows)
    print(f"sampled {len(rows)} of {len(items)} findings over {rules_in}/{rules_with} rules -> {args.output}")
    print("per rule: " + ", ".join(f"{k} {v}" for k, v in sorted(by_rule.items())))
    print("per repo: " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(r['repo'] for r in rows).items())))
    return 0


def recheck(rows: list[dict[str, str]], reports: dict[str, dict[str, Any]]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """An audited sample held against new reports of the same repositories: a finding still
    there at the same severity keeps its verdict; one whose severity moved is cleared for a
    new look (the note says from what to what); one no longer reported is set apart (a
    false one dropped is a fix, a right one dropped is lost recall)."""
    kept: list[dict[str, str]] = []
    gone: list[dict[str, str]] = []
    for row in rows:
        findings = reports.get(row["repo"], {}).get("findings", [])
        path = row["path"].split("#cell", 1)[0]
        now = [f for f in findings if f.get("rule") == row["rule"] and f.get("path") == path and str(f.get("line")) == row["line"]]
        if not now:
            gone.append(row)
            continue
        severity = now[0].get("severity", "")
        if severity != row["severity"]:
            row = {**row, "note": f"severity now {severity} (was {row['severity']}; verdict then: {row.get('verdict', '')}: {row.get('note', '')})",
                   "verdict": "", "severity": severity}
        kept.append(row)
    return kept, gone


def cmd_recheck(args: argparse.Namespace) -> int:
    cset = load_set(args.set_path)
    repos = select(cset.precision_repos, args.only)
    reports = scan_reports(repos, args, args.scans)
    if reports is None:
        return 2
    rows = read_sheet(args.sheet)
    kept, gone = recheck(rows, reports)
    header = "\n".join([
        "# tpucheck precision audit sheet, rechecked",
        "",
        f"{args.sheet.name} held against new scans: {len(kept)} findings still reported "
        f"({sum(1 for r in kept if not r.get('verdict'))} with a new severity to judge again), {len(gone)} no longer reported.",
    ])  # fmt: skip
    write_markdown(kept, args.output, header)
    dropped = Counter(normalize(r.get("verdict", "")) or "pending" for r in gone)
    print(f"still reported {len(kept)}, to judge again {sum(1 for r in kept if not r.get('verdict'))} -> {args.output}")
    print("no longer reported: " + ", ".join(f"{v} {n}" for v, n in sorted(dropped.items())))
    for r in gone:
        print(f"  gone #{r['id']} {r['repo']} {r['path']}:{r['line']} {r['rule']} (was {r.get('verdict') or 'pending'})")
    return 0


VERDICT_FIELDS = ["id", "repo", "path", "line", "rule", "severity", "category", "role", "guarded", "verdict", "note"]


def cmd_verdicts(sheet: Path, output: Path) -> int:
    """The verdicts of a filled sheet, without its snippets and context: the sheet quotes
    the audited repositories' code, which is not ours to commit; the verdicts are, and with
    the set file and seed they are reproducible (a rescan at the set's commits draws the
    same findings)."""
    try:
        rows = read_sheet(sheet)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with output.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=VERDICT_FIELDS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, "verdict": normalize(row.get("verdict", "")) or ""})
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample", help="scan the precision repositories and write an audit sheet")
    s.add_argument("--repos", type=Path, default=DEFAULT_REPOS)
    s.add_argument("--set", dest="set_path", type=Path, default=DEFAULT_SET)
    s.add_argument("--only", action="append")
    s.add_argument("--n", type=int, default=170, help="sample size (default 170)")
    s.add_argument("--cap", type=int, default=12, help="at most this many per rule (default 12)")
    s.add_argument("--seed", type=int, default=11)
    s.add_argument("--target")
    s.add_argument("--jobs", type=int)
    s.add_argument("--tpucheck")
    s.add_argument("--scans", type=Path)
    s.add_argument("--reuse", action="store_true")
    s.add_argument("-o", "--output", type=Path, required=True, help="Markdown audit sheet")
    s.add_argument("--csv", type=Path, help="also write the sheet as CSV")
    m = sub.add_parser("summarize", help="strict and lenient precision from a filled sheet")
    m.add_argument("sheet", type=Path, nargs="+", help="one or more filled sheets, pooled")
    m.add_argument("--by-rule", action="store_true", help="also a table per rule")
    v = sub.add_parser("verdicts", help="a filled sheet without the quoted code: what is committed")
    v.add_argument("sheet", type=Path)
    v.add_argument("-o", "--output", type=Path, required=True, help="CSV of id, repo, path, line, rule, severity, role, verdict, note")
    c = sub.add_parser("recheck", help="hold a filled sheet against new scans: what still stands, what moved, what is gone")
    c.add_argument("sheet", type=Path)
    c.add_argument("--repos", type=Path, default=DEFAULT_REPOS)
    c.add_argument("--set", dest="set_path", type=Path, default=DEFAULT_SET)
    c.add_argument("--only", action="append")
    c.add_argument("--target")
    c.add_argument("--jobs", type=int)
    c.add_argument("--tpucheck")
    c.add_argument("--scans", type=Path, required=True)
    c.add_argument("--reuse", action="store_true")
    c.add_argument("-o", "--output", type=Path, required=True, help="the rechecked sheet")
    args = ap.parse_args(argv)
    if args.cmd == "recheck":
        return cmd_recheck(args)
    if args.cmd == "verdicts":
        return cmd_verdicts(args.sheet, args.output)
    if args.cmd == "sample":
        if args.reuse and not args.scans:
            ap.error("--reuse needs --scans")
        return cmd_sample(args)
    try:
        print(summarize(args.sheet, args.by_rule))
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
