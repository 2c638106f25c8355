"""Recall of tpucheck against the independent oracle (tests/oracle.py) on any tree.

    python scripts/oracle_recall.py /work/repos/karpathy__nanoGPT [more roots] [--misses 20]

For each list the oracle makes (torch.cuda references, .cuda() calls, CUDA device
strings in a device argument, init_process_group with NCCL, CUDA source files) it prints
how many items tpucheck found. An item is found when a finding (suppressed ones too)
starts exactly where the item starts; a `.cuda()` call where its name starts; a CUDA
source file when a finding or the inventory's `cuda_sources` names it. Items in files
tpucheck never analyzed (skipped, git-ignored, errored) count as missed and are
tallied apart, so a discovery gap is not mistaken for an analyzer gap; so are missed
torch.cuda references that no rule would match as used (a name only a call rule knows,
used as a value), which are gaps in the rules rather than in the analyzer; and missed
references a rule leaves silent on purpose (`unless: guard`: `torch.cuda.is_available()`
as the condition of a CUDA guard or a test skip, which keeps a fallback and is not work),
found by analyzing those files again with the rules' `unless` lifted. The recall over what
the rules mean to report is printed beside the raw one.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType

from tpucheck.analyze import analyze_text, build_context
from tpucheck.analyze.python import build_python_index
from tpucheck.engine import ScanOptions, scan
from tpucheck.result import ScanResult
from tpucheck.ruleset import load_ruleset
from tpucheck.ruleset.model import Ruleset

ORACLE_PATH = Path(__file__).resolve().parent.parent / "tests" / "oracle.py"


def load_oracle() -> ModuleType:
    module = sys.modules.get("tpucheck_oracle")
    if module is None:
        spec = importlib.util.spec_from_file_location("tpucheck_oracle", ORACLE_PATH)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up by name
        spec.loader.exec_module(module)
    return module


@dataclass
class ListRecall:
    name: str
    total: int = 0
    found: int = 0
    missed: list[object] = field(default_factory=list)
    """Oracle items (tests/oracle.py Item) no finding stands for."""
    not_analyzed: int = 0
    """Of the missed, those in files the scan did not analyze."""
    unruled: int = 0
    """Of the missed torch.cuda references, those no rule would match as used: no
    reference or decorator rule names the chain or a prefix, and no call rule names it
    where it is called. A gap in the rules rather than in the analyzer."""
    silent: int = 0
    """Of the missed, those a rule leaves silent on purpose (`unless: guard`)."""

    @property
    def recall(self) -> float:
        return self.found / self.total if self.total else 1.0

    @property
    def judged_recall(self) -> float:
        """Recall over the items the rules mean to report: silent-on-purpose ones left out."""
        meant = self.total - self.silent
        return self.found / meant if meant else 1.0


@dataclass
class Recall:
    root: str
    lists: dict[str, ListRecall]
    unparsed: list[str]


def recall(root: str, result: ScanResult | None = None, jobs: int = 1, ruleset: Ruleset | None = None) -> Recall:
    oracle = load_oracle()
    listed = oracle.oracle(root)
    ruleset = ruleset or load_ruleset()
    if result is None:
        result = scan(root, ruleset, ScanOptions(jobs=jobs))
    index = build_python_index(ruleset)
    findings = [*result.findings, *result.suppressed, *result.same_edit()]
    starts = {(f.path, f.span.line, f.span.column) for f in findings}
    paths = {f.path for f in findings}
    paths.update(source.path for source in getattr(result.inventory, "cuda_sources", ()))
    unread = {e.path for e in result.errors} | {s.path for s in result.skipped}
    lists: dict[str, ListRecall] = {}
    for name in oracle.LISTS:
        tally = lists[name] = ListRecall(name)
        for item in listed.items[name]:
            tally.total += 1
            found = item.path in paths if name == oracle.SOURCES else (item.path, item.line, item.column) in starts
            if found:
                tally.found += 1
            else:
                tally.missed.append(item)
                tally.not_analyzed += item.path in unread
                if name == oracle.REFERENCES:
                    parts = ["torch", *item.text.split(".")[1:]]
                    prefixes = [".".join(parts[:n]) for n in range(2, len(parts) + 1)]
                    full = ".".join(parts)  # an `exact` reference names only the whole chain
                    named = any(not m.exact or q == full for t in (index.reference, index.decorator) for q in prefixes for _, m in t.lookup(q))
                    tally.unruled += not (named or (item.called and index.call.lookup(".".join(parts))))
    references = lists[oracle.REFERENCES]
    references.silent = len(_silent_on_purpose(root, [m for m in references.missed if m.path not in unread], ruleset))  # type: ignore[attr-defined]
    return Recall(root, lists, listed.unparsed)


def _silent_on_purpose(root: str, missed: list[object], ruleset: Ruleset) -> set[tuple[str, int, int]]:
    """The missed items a finding would stand for if no rule's `unless` held: the files
    with misses analyzed again with `unless` lifted."""
    if not missed or not any(rule.unless for rule in ruleset.rules):
        return set()
    context = build_context(ruleset.with_rules(tuple(replace(rule, unless=None) for rule in ruleset.rules)))
    wanted = {(m.path, m.line, m.column) for m in missed}  # type: ignore[attr-defined]
    found: set[tuple[str, int, int]] = set()
    for path in sorted({key[0] for key in wanted}):
        try:
            text = (Path(root) / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        analysis = analyze_text(path, ("python",), text, context)
        found.update((path, m.span.line, m.span.column) for m in analysis.matches if (path, m.span.line, m.span.column) in wanted)
    return found


def format_recall(measured: Recall, misses: int = 0) -> str:
    out = [f"{measured.root}"]
    for tally in measured.lists.values():
        line = f"  {tally.name:<26} {tally.found:>6} / {tally.total:<6} {100 * tally.recall:6.1f} %"
        if tally.not_analyzed:
            line += f"   ({tally.not_analyzed} missed in files not analyzed)"
        if tally.unruled:
            line += f"   ({tally.unruled} of the missed used where no rule looks)"
        if tally.silent:
            line += f"   ({tally.silent} of the missed silent on purpose: guard conditions; {100 * tally.judged_recall:.1f} % of the rest)"
        out.append(line)
        for item in tally.missed[:misses]:
            out.append(f"      missed {item.path}:{item.line}:{item.column}  {item.text}")  # type: ignore[attr-defined]
    if measured.unparsed:
        out.append(f"  ({len(measured.unparsed)} Python files the oracle's ast could not read)")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--misses", type=int, default=0, help="list up to N missed items per list")
    parser.add_argument("--jobs", type=int, default=1, help="scan workers")
    args = parser.parse_args(argv)
    for root in args.roots:
        print(format_recall(recall(root, jobs=args.jobs), args.misses), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
