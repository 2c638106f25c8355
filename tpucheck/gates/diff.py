"""`--diff-base REF`: which lines changed since a git ref, for a gate on pull requests.

Read with the git command line (no library to install, and it is what CI already has).
The comparison is the working tree against the merge base of REF and HEAD, like a pull
request's own diff: commits on the base branch since the fork do not count as changed,
uncommitted edits and untracked files do.

The scanned repository may not be trusted, and some git settings run programs (external
diff drivers, textconv filters, an fsmonitor hook): every git call turns them off.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, replace

from tpucheck.result import ScanResult

_SAFE = ("-c", "core.fsmonitor=false", "-c", "core.quotepath=off", "-c", "diff.external=", "-c", "core.hooksPath=/dev/null")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"'}


class DiffError(Exception):
    """git is missing, the path is not in a repository, or the ref does not exist."""


@dataclass(frozen=True, slots=True)
class ChangedLines:
    """Changed lines per path relative to the scanned root. A path mapped to None changed
    as a whole (a new or untracked file, or a notebook, whose JSON lines are not cell lines)."""

    ref: str
    lines: dict[str, frozenset[int] | None]

    def touches(self, path: str, line: int, end_line: int, cell: int | None) -> bool:
        if path not in self.lines:
            return False
        changed = self.lines[path]
        if changed is None or cell is not None:
            return True
        return any(number in changed for number in range(line, end_line + 1))


def _git(cwd: str, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", *_SAFE, *args],
            cwd=cwd,
            capture_output=True,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"},
        )
    except FileNotFoundError:
        raise DiffError("--diff-base needs git, and git is not installed") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DiffError(message[-1] if message else f"git {args[0]} failed ({done.returncode})")
    return done.stdout.decode("utf-8", "surrogateescape")


def _unquote(name: str) -> str:
    """git C-quotes paths with control characters, quotes or backslashes: "a\\tb"."""
    if not (name.startswith('"') and name.endswith('"')):
        return name
    body = name[1:-1]
    out = bytearray()
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            following = body[index + 1]
            octal = body[index + 1 : index + 4]
            if len(octal) == 3 and all(c in "01234567" for c in octal):
                out.append(int(octal, 8) & 0xFF)
                index += 4
                continue
            out.extend(_ESCAPES.get(following, following).encode("utf-8"))
            index += 2
            continue
        out.extend(char.encode("utf-8", "surrogateescape"))
        index += 1
    return out.decode("utf-8", "surrogateescape")


def parse_unified_diff(text: str) -> dict[str, set[int]]:
    """New-side line numbers added or changed, per new-side path, from `git diff -U0`."""
    changed: dict[str, set[int]] = {}
    current: set[int] | None = None
    for line in text.splitlines():
        if line.startswith("+++ "):
            target = line[4:].rstrip("\t")
            if target == "/dev/null":
                current = None
                continue
            target = _unquote(target)
            current = changed.setdefault(target.removeprefix("b/"), set())
        elif line.startswith("@@") and current is not None:
            hunk = _HUNK.match(line)
            if hunk:
                start, count = int(hunk.group(1)), int(hunk.group(2) if hunk.group(2) is not None else 1)
                current.update(range(start, start + count))
    return changed


def changed_lines(root: str, ref: str) -> ChangedLines:
    """Lines changed under `root` since the merge base of `ref` and HEAD."""
    root_abs = os.path.realpath(root if os.path.isdir(root) else os.path.dirname(os.path.abspath(root)))
    top = os.path.realpath(_git(root_abs, "rev-parse", "--show-toplevel").strip())
    _git(top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    try:
        base = _git(top, "merge-base", "--end-of-options", ref, "HEAD").strip()
    except DiffError:
        base = ref  # no common history (a shallow clone): compare with the ref itself
    diff = _git(top, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--find-renames", "-U0", "--end-of-options", base, "--")
    untracked = _git(top, "ls-files", "--others", "--exclude-standard", "-z")
    by_top: dict[str, frozenset[int] | None] = {path: frozenset(lines) for path, lines in parse_unified_diff(diff).items()}
    by_top.update({path: None for path in untracked.split("\0") if path})
    lines: dict[str, frozenset[int] | None] = {}
    for path, numbers in by_top.items():
        relative = os.path.relpath(os.path.join(top, path), root_abs).replace(os.sep, "/")
        if relative.startswith("../"):
            continue
        lines[relative] = None if path.endswith(".ipynb") else numbers
    return ChangedLines(ref, lines)


def apply_diff(result: ScanResult, changed: ChangedLines) -> ScanResult:
    """Mark findings on unchanged lines: still reported, left out of the gate."""
    result.findings = [
        f if changed.touches(f.path, f.span.line, f.span.end_line, f.cell) else replace(f, outside_diff=True)
        for f in result.findings
    ]
    result.diff_base = changed.ref
    return result
