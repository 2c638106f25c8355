"""What `tpucheck fix` prints: the diff, and a summary of what it changed, what it left and
what to do next. Paths read from the current folder, as scan's reports do."""

from __future__ import annotations

from typing import TextIO

from tpucheck.fix.base import Outcome
from tpucheck.fix.runner import FixReport
from tpucheck.report.paths import display_prefix

__all__ = ["print_diff", "print_summary"]

MAX_LEFT = 30
"""How many findings it could not fix are listed one by one."""


def print_diff(report: FixReport, stream: TextIO) -> None:
    prefix = display_prefix(report.root)
    for change in report.changed_files:
        stream.write(change.diff(prefix))


def print_summary(report: FixReport, stream: TextIO, *, diff: bool) -> None:
    """What changed (every edited finding, fixed or rewritten, so the counts are the diff's),
    what the torch pins held back and which pin, the unsafe fixes not made and why, and
    what is left to a person."""
    prefix = display_prefix(report.root)
    fixed, rewritten = report.fixed, report.rewritten
    files = report.changed_files
    verb = "would fix" if diff else "fixed"
    line = f"tpucheck fix: {verb} {_n(len(fixed), 'finding')} in {_n(len(files), 'file')}"
    if rewritten:
        line += f" ({len(rewritten)} more {'would be' if diff else ''}{' ' if diff else ''}rewritten where the finding stays)"
    if report.after is not None:
        line += f"; score {report.before.score.score:.1f} -> {report.after.score.score:.1f}"
    stream.write(line + "\n")
    if not diff:
        for change in files:
            stream.write(f"  {prefix}{change.path}\n")
            for outcome in sorted((o for o in change.outcomes if o.edited), key=lambda o: o.target.start):
                line_no, column = outcome.target.start
                mark = "" if outcome.fixed else " (rewritten; the finding stays)"
                stream.write(f"    {line_no}:{column + 1} {outcome.target.finding.rule} {outcome.note}{mark}\n")
    for manifest, old, new in report.pins_raised:
        stream.write(f"Raised the torch pin in {prefix}{manifest}: {old} -> {new}\n")
    needs = report.needs()
    if needs is not None:
        which = sorted({o.uses for o in report.outcomes if o.edited and o.needs == needs and o.uses})
        stream.write(f"The rewritten code needs torch>={needs} ({', '.join(which)}).\n")
    by_pin: dict[str, list[Outcome]] = {}
    for outcome in report.pinned:
        by_pin.setdefault(outcome.source or "a torch pin", []).append(outcome)
    for source, pinned in sorted(by_pin.items()):
        versions = sorted({o.needs for o in pinned if o.needs is not None})
        apis = sorted({o.uses for o in pinned if o.uses})
        stream.write(
            f"Held back by the torch pin {source}: {_n(len(pinned), 'finding')} whose fix needs torch>={versions[0]}"
            + (f" to {versions[-1]}" if len(versions) > 1 else "")
            + f" ({', '.join(apis)}); raise the pin (--unsafe-fixes raises it), then run tpucheck fix again.\n"
        )
    _listing(stream, prefix, "Unsafe fixes not applied", report.unsafe_held)
    if report.unsafe_held:
        stream.write("Review them with `tpucheck fix --diff --unsafe-fixes`; apply with --unsafe-fixes.\n")
    _listing(stream, prefix, "Not fixed", report.left)
    for path, why in report.problems:
        stream.write(f"  {prefix}{path}: {why}\n")
    if report.not_fixable:
        rules = sorted({f.rule for f in report.not_fixable})
        shown = ", ".join(rules[:8]) + (", ..." if len(rules) > 8 else "")
        stream.write(
            f"No codemod for {_n(len(report.not_fixable), 'finding')} of {_n(len(rules), 'rule')} ({shown}): "
            "`tpucheck scan` lists them and `tpucheck explain RULE` gives the hand fix.\n"
        )
    if diff and files:
        stream.write("Apply with `tpucheck fix` (same paths and options, without --diff).\n")
    elif not diff and files:
        stream.write("Next: review the change (`git diff`), run your tests, and `tpucheck scan` for what is left.\n")


def _listing(stream: TextIO, prefix: str, title: str, outcomes: list[Outcome]) -> None:
    if not outcomes:
        return
    stream.write(f"{title} ({len(outcomes)}):\n")
    for outcome in sorted(outcomes, key=lambda o: (o.target.finding.path, o.target.finding.cell or 0, o.target.start))[:MAX_LEFT]:
        finding = outcome.target.finding
        cell = f"[cell {finding.cell}]" if finding.cell else ""
        stream.write(f"  {prefix}{finding.path}{cell}:{finding.span.line}:{finding.span.column} {finding.rule} {outcome.note}\n")
    if len(outcomes) > MAX_LEFT:
        stream.write(f"  ... and {len(outcomes) - MAX_LEFT} more\n")


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
