"""What calibrate.py and precision_sample.py share: the repository set, where the copies
live, and one scan through the CLI.

Why the CLI and not the engine: the scoring API is being rewritten, the CLI's JSON report
is the documented, versioned interface (`schema_version`), and a subprocess per repository
keeps one repository's crash from taking the whole run down.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_SET = HERE / "calibration_set.json"
DEFAULT_REPOS = Path("/work/repos")


@dataclass(frozen=True)
class Repo:
    """One public repository of the calibration or precision set."""

    repo: str  # owner/name, as GitHub spells it
    commit: str
    kind: str
    python_lines: int = 0
    grade: str = ""  # expected grade band, e.g. "A-B"; empty for precision repos
    effort: tuple[float, float] | None = None  # expected product effort band, hours
    why: str = ""

    @property
    def dirname(self) -> str:
        """The folder name under the copies' root: owner__name."""
        return self.repo.replace("/", "__")


@dataclass
class CalibrationSet:
    repos: list[Repo] = field(default_factory=list)
    precision_repos: list[Repo] = field(default_factory=list)
    target: str | None = None


def _repo(entry: dict[str, Any]) -> Repo:
    effort = entry.get("effort")
    return Repo(
        repo=entry["repo"],
        commit=entry.get("commit", ""),
        kind=entry.get("kind", ""),
        python_lines=int(entry.get("python_lines", 0)),
        grade=entry.get("grade", ""),
        effort=(float(effort[0]), float(effort[1])) if effort else None,
        why=entry.get("why", ""),
    )


def load_set(path: Path = DEFAULT_SET) -> CalibrationSet:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return CalibrationSet(
        repos=[_repo(e) for e in data.get("repos", [])],
        precision_repos=[_repo(e) for e in data.get("precision_repos", [])],
        target=data.get("target"),
    )


def select(repos: list[Repo], only: list[str] | None) -> list[Repo]:
    """Keep the repositories named in `only` (owner/name, owner__name or just name)."""
    if not only:
        return repos
    wanted = {o.lower() for o in only}
    return [
        r
        for r in repos
        if {r.repo.lower(), r.dirname.lower(), r.repo.split("/")[1].lower()} & wanted
    ]


def git_head(path: Path) -> str | None:
    """The commit of a copy that is a git work tree; None for an exported tree."""
    try:
        out = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


class ScanFailed(RuntimeError):
    pass


def scan(
    path: Path,
    out_json: Path,
    *,
    tpucheck: str | None = None,
    target: str | None = None,
    jobs: int | None = None,
    extra: list[str] | None = None,
    cache: bool = False,
) -> tuple[dict[str, Any], float]:
    """Scan one copy with the CLI into `out_json`; return the report and the seconds taken.

    `--isolated` because a scanned repository's own pyproject.toml must not change how it
    is judged; `--no-cache` so a stale cache never hides a model change (`cache` keeps the
    analysis cache, whose keys hold the rules and the code: for re-judging quickly while
    the judgement's constants change). `--no-gitignore` because a copy is the export of a
    commit's tree, exactly the files git tracks, with no `.git`: in a clone git's index
    exempts tracked files from `.gitignore`, and the copy must be scanned as the clone
    would be (3detr commits `third_party/` and ignores it; found at blind set 52).
    """
    cmd = shlex.split(tpucheck) if tpucheck else [sys.executable, "-m", "tpucheck"]
    cmd += ["scan", str(path), "--format", "json", "-o", str(out_json)]
    cmd += ["--isolated", "--quiet", "--no-gitignore"] + ([] if cache else ["--no-cache"])
    if target:
        cmd += ["--target", target]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    cmd += extra or []
    out_json.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    took = time.monotonic() - started
    # 0: passed, 1: a gate failed (only with gate flags in `extra`); anything else failed.
    if proc.returncode not in (0, 1) or not out_json.exists():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise ScanFailed(f"exit {proc.returncode}: " + " | ".join(tail))
    return json.loads(out_json.read_text(encoding="utf-8")), took


def load_or_scan(
    repo: Repo,
    repos_root: Path,
    scans_dir: Path,
    *,
    reuse: bool,
    tpucheck: str | None,
    target: str | None,
    jobs: int | None,
    extra: list[str] | None = None,
    cache: bool = False,
) -> tuple[dict[str, Any], float | None]:
    """The report for one repository: a fresh scan, or with `reuse` the one kept earlier."""
    out = scans_dir / f"{repo.dirname}.json"
    if reuse and out.exists():
        return json.loads(out.read_text(encoding="utf-8")), None
    path = repos_root / repo.dirname
    if not path.is_dir():
        raise ScanFailed(f"no copy at {path} (fetch it: see docs/calibration.md)")
    return scan(path, out, tpucheck=tpucheck, target=target, jobs=jobs, extra=extra, cache=cache)
