"""`tpucheck fix`: scan, pick the findings a codemod may fix, rewrite each file once, check
the result parses, then show a diff or write atomically.

The scan is `tpucheck.api.scan` with the caller's settings, so selection, configuration,
target, suppressions, per-file ignores and the baseline mean what they mean for `scan`: a
suppressed or baselined finding is not fixed. A rule names its codemod in YAML and says
whether the fix is safe; unsafe ones run only with `unsafe=True`.
"""

from __future__ import annotations

import ast
import difflib
import os
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

import libcst as cst
from libcst.metadata import MetadataWrapper

from tpucheck import api
from tpucheck.analyze import analyze_text, build_context
from tpucheck.config.settings import Settings
from tpucheck.discover.walk import classify
from tpucheck.engine import findings_in
from tpucheck.findings import Finding
from tpucheck.fix.base import FIXED, MANUAL, PINNED, REWRITTEN, UNSAFE, Codemod, Dispatch, FileFix, Outcome, Target, leftover
from tpucheck.fix.config_values import CONFIG_SUFFIXES, fix_config
from tpucheck.fix.imports import add_import_torch, drop_unused_imports
from tpucheck.fix.notebooks import NotebookProblem, fix_notebook
from tpucheck.fix.pins import Pin, pin_for, raise_pin
from tpucheck.fix.registry import make_codemods
from tpucheck.fix.versions import Version
from tpucheck.result import ScanResult

__all__ = ["FileChange", "FixReport", "apply_fixes", "fix_source", "run_fix"]


@dataclass(slots=True)
class FileChange:
    path: str
    """As the scan reports it (relative to the root)."""
    before: str
    after: str
    outcomes: list[Outcome]

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self, prefix: str = "") -> str:
        """A unified diff `git apply` takes (paths shown with `prefix`, from the current folder)."""
        shown = prefix + self.path
        return "".join(
            difflib.unified_diff(self.before.splitlines(keepends=True), self.after.splitlines(keepends=True), f"a/{shown}", f"b/{shown}")
        )


@dataclass(slots=True)
class FixReport:
    """What `tpucheck fix` did or would do."""

    root: str
    before: ScanResult
    files: list[FileChange] = field(default_factory=list)
    not_fixable: list[Finding] = field(default_factory=list)
    """Findings whose rule has no codemod."""
    problems: list[tuple[str, str]] = field(default_factory=list)
    """(path, why): files that could not be fixed at all."""
    pins_raised: list[tuple[str, str, str]] = field(default_factory=list)
    """(manifest, old line, new line): torch pins raised so that held-back fixes apply."""
    written: bool = False
    after: ScanResult | None = None

    @property
    def outcomes(self) -> list[Outcome]:
        return [o for f in self.files for o in f.outcomes]

    def in_state(self, state: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.state == state]

    @property
    def fixed(self) -> list[Outcome]:
        return self.in_state(FIXED)

    @property
    def rewritten(self) -> list[Outcome]:
        """Edited, but the finding stays (or a rescan still reports it)."""
        return self.in_state(REWRITTEN)

    @property
    def unsafe_held(self) -> list[Outcome]:
        """Fixes that may change behaviour, not made without `--unsafe-fixes`."""
        return self.in_state(UNSAFE)

    @property
    def pinned(self) -> list[Outcome]:
        return self.in_state(PINNED)

    @property
    def left(self) -> list[Outcome]:
        """Findings a person fixes (no edit exists)."""
        return self.in_state(MANUAL)

    @property
    def changed_files(self) -> list[FileChange]:
        return [f for f in self.files if f.changed]

    def needs(self) -> Version | None:
        """The newest torch any rewritten code needs."""
        versions = [o.needs for o in self.outcomes if o.edited and o.needs is not None]
        return max(versions) if versions else None


def run_fix(
    paths: Sequence[str],
    settings: Settings,
    *,
    unsafe: bool = False,
    write: bool = True,
    rescan: bool = True,
) -> FixReport:
    """Fix what the scan of `paths` found (as `tpucheck fix PATH...`); with `write=False`
    only compute the changes (for `--diff`)."""
    root, only = api.scan_root(list(paths))
    before = api.scan(root, settings, paths=only)
    report = apply_fixes(before, settings, unsafe=unsafe)
    if write and report.changed_files:
        for change in report.changed_files:
            try:
                _write_atomically(os.path.join(root, change.path), change.after)
            except OSError as exc:
                report.problems.append((change.path, f"cannot write: {exc.strerror or exc}"))
        report.written = True
        if rescan:
            report.after = api.scan(root, settings, paths=only)
    return report


def apply_fixes(result: ScanResult, settings: Settings, *, unsafe: bool = False) -> FixReport:
    """The changes that fix `result`'s fixable findings, file by file, nothing written.

    Every finding whose rule names a codemod goes to it; each edit says whether it is safe
    (a rule whose codemod is unsafe makes all of its edits unsafe), and an unsafe one is
    made only with `unsafe=True`. Each file's torch pin comes from its nearest manifest;
    with `unsafe=True` a pin that holds fixes back is raised in its manifest. Each file's
    edits are checked by analysing the new text: a fix whose finding is still reported, or
    that brings a new finding, is counted as rewritten, not fixed."""
    ruleset = settings.ruleset
    rules = {rule.id: rule for rule in (ruleset.rules if ruleset is not None else result.rule_data)}
    report = FixReport(result.root, result)
    chosen: dict[str, list[Target]] = {}
    for finding in [*result.findings, *result.same_edit()]:
        rule = rules.get(finding.rule)
        if finding.suppressed or finding.baselined:
            continue
        if rule is None or rule.codemod is None:
            report.not_fixable.append(finding)
            continue
        chosen.setdefault(finding.path, []).append(Target.of(finding, rule.codemod.name, safe=rule.codemod.safe))
    checker = _Checker(settings) if ruleset is not None else None
    folders: dict[str, Pin | None] = {}
    pins = {path: pin_for(result.root, path, folders) for path in chosen}
    elsewhere = other_accelerator(result.root)
    values = {rule.id: dict(rule.codemod.values) for rule in rules.values() if rule.codemod is not None and rule.codemod.values}
    changes = {path: _fix_file(result.root, path, chosen[path], FileOptions.of(unsafe, pins[path], elsewhere), report, values) for path in sorted(chosen)}
    if unsafe:
        _raise_pins(result.root, pins, changes, chosen, replace(FileOptions(unsafe), other_accelerator=elsewhere), report, values)
    for path in sorted(chosen):
        change = changes[path]
        if change is None:
            continue
        if checker is not None and change.changed and path.lower().endswith((".py", ".pyi")):
            change.outcomes = checker.confirm(path, change)
        report.files.append(change)
    return report


def _fix_file(root: str, path: str, targets: list[Target], options: FileOptions, report: FixReport, values: dict[str, dict[str, str]]) -> FileChange | None:
    absolute = os.path.join(root, path)
    try:
        with open(absolute, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        report.problems.append((path, f"cannot read: {exc.strerror or exc}"))
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        report.problems.append((path, "not UTF-8 text: fix it by hand"))
        return None
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    text = text[len(bom) :]
    lowered = path.lower()
    if lowered.endswith(".ipynb"):
        try:
            after, outcomes = fix_notebook(text, targets, partial(_fix_cell, options=options))
        except NotebookProblem as exc:
            report.problems.append((path, f"notebook not fixed: {exc}"))
            return None
    elif lowered.endswith((".py", ".pyi")):
        after, outcomes = fix_source(text, targets, options)
    elif lowered.endswith(CONFIG_SUFFIXES):
        after, outcomes = fix_config(text, targets, options.unsafe, values)
    else:
        report.problems.append((path, "only Python files, notebooks and config files are fixed; fix it by hand"))
        return None
    return FileChange(path, bom + text, bom + after, outcomes)


def _raise_pins(
    root: str, pins: dict[str, Pin], changes: dict[str, FileChange | None], chosen: dict[str, list[Target]], base: FileOptions, report: FixReport, values: dict[str, dict[str, str]]
) -> None:
    """With --unsafe-fixes: raise each manifest pin that held fixes back to the newest
    torch they need, then fix the files it governs again."""
    wanted: dict[tuple[str, int], Version] = {}
    for path, change in changes.items():
        pin = pins[path]
        held = [o.needs for o in (change.outcomes if change else []) if o.state == PINNED and o.needs is not None]
        if held and pin.path is not None and pin.line is not None:
            key = (pin.path, pin.line)
            wanted[key] = max([*held, *([wanted[key]] if key in wanted else [])])
    for (manifest, line), needs in sorted(wanted.items()):
        absolute = os.path.join(root, manifest)
        try:
            with open(absolute, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError):
            continue
        raised = raise_pin(text, line, needs)
        if raised is None:
            continue
        old, new = text.splitlines()[line - 1].strip(), raised.splitlines()[line - 1].strip()
        report.pins_raised.append((manifest, old, new))
        report.files.append(FileChange(manifest, text, raised, []))
        for path, pin in pins.items():
            if (pin.path, pin.line) == (manifest, line):
                options = replace(base, torch_pin=needs, pin_source=f"{manifest}:{line}: {new}", torch_floor=pin.oldest, floor_source=pin.oldest_source)
                changes[path] = _fix_file(root, path, chosen[path], options, report, values)


class _Checker:
    """Analyses a file's text before and after its edits, as the scan does, to hold the
    summary to what the new code shows."""

    def __init__(self, settings: Settings) -> None:
        ruleset = settings.ruleset
        assert ruleset is not None
        self.ruleset = ruleset.for_target(ruleset.target)
        self.context = build_context(self.ruleset, prefilter=False)

    def findings(self, path: str, text: str) -> list[Finding]:
        kinds = classify(path, self.context.other_globs)
        return [f for f in findings_in(analyze_text(path, kinds, text, self.context), self.ruleset) if not f.suppressed]

    def confirm(self, path: str, change: FileChange) -> list[Outcome]:
        """The outcomes, with each FIXED one whose finding a rescan still shows (or that
        brings a new finding in its lines) turned REWRITTEN, saying what the rescan shows."""
        before, after = self.findings(path, change.before), self.findings(path, change.after)
        old_lines, new_lines = change.before.splitlines(), change.after.splitlines()
        hunks = [op for op in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes() if op[0] != "equal"]
        outcomes = list(change.outcomes)
        for _, i1, i2, j1, j2 in hunks:
            inside = [k for k, o in enumerate(outcomes) if o.state == FIXED and i1 < o.target.finding.span.line <= i2]
            if not inside:
                continue
            was = Counter(f.rule for f in before if i1 < f.span.line <= i2)
            now = Counter(f.rule for f in after if j1 < f.span.line <= j2)
            fixed = Counter(outcomes[k].target.finding.rule for k in inside)
            new = sorted(rule for rule in now if now[rule] > was.get(rule, 0) - fixed.get(rule, 0) and rule not in fixed)
            for k in inside:
                outcome = outcomes[k]
                rule = outcome.target.finding.rule
                still = now.get(rule, 0) > was.get(rule, 0) - fixed[rule]
                if still or new:
                    why = f"the rescan still reports {rule} here" if still else f"the rescan reports {', '.join(new)} here"
                    outcomes[k] = replace(outcome, state=REWRITTEN, note=f"{outcome.note} ({why})")
                    if still:
                        fixed[rule] -= 1
        return outcomes


@dataclass(frozen=True, slots=True)
class FileOptions:
    unsafe: bool = False
    torch_pin: Version | None = None
    pin_source: str | None = None
    torch_floor: Version | None = None
    floor_source: str | None = None
    torch_name: str | None = None
    """The name torch is bound to elsewhere (a notebook's earlier cell); None: look in the module."""
    other_accelerator: str | None = None
    """Another accelerator the project's code names (`"mps" (train.py)`), if any."""

    @classmethod
    def of(cls, unsafe: bool, pin: Pin, other_accelerator: str | None = None) -> FileOptions:
        return cls(unsafe, pin.newest, pin.newest_source, pin.oldest, pin.oldest_source, other_accelerator=other_accelerator)


def fix_source(code: str, targets: list[Target], options: FileOptions | None = None, *, codemods: Callable[[], list[Codemod]] | None = None) -> tuple[str, list[Outcome]]:
    """Rewrite one module for `targets`; the new code and what became of each target.

    When the rewritten module does not parse, the targets are tried one at a time and each
    kept only if the module still parses with it, so one bad edit costs only itself."""
    options = options or FileOptions()
    make = codemods or make_codemods
    try:
        module = cst.parse_module(code)
    except cst.ParserSyntaxError as exc:
        return code, [Outcome(t, MANUAL, f"libcst cannot parse the file ({exc.message}); fix it by hand") for t in targets]
    new, outcomes, error = _apply(module, targets, options, make)
    if error is None and _parses(new):
        return new, outcomes
    kept: list[Target] = []
    failed: list[Outcome] = []
    for target in targets:
        trial, _, error = _apply(module, [*kept, target], options, make)
        if error is not None:
            failed.append(Outcome(target, MANUAL, f"the fix failed ({error}): skipped; fix it by hand"))
        elif _parses(trial):
            kept.append(target)
        else:
            failed.append(Outcome(target, MANUAL, "the fix would produce code that does not parse: skipped; fix it by hand"))
    new, outcomes, _ = _apply(module, kept, options, make)
    return new, [*outcomes, *failed]


def _fix_cell(code: str, targets: list[Target], *, options: FileOptions, torch_name: str | None) -> tuple[str, list[Outcome]]:
    return fix_source(code, targets, replace(options, torch_name=torch_name))


def _apply(module: cst.Module, targets: list[Target], options: FileOptions, make: Callable[[], list[Codemod]]) -> tuple[str, list[Outcome], str | None]:
    """(new code, outcomes, None), or (the old code, [], what went wrong) when a codemod raised."""
    if not targets:
        return module.code, [], None
    codemods = make()
    known = {c.name for c in codemods}
    fix = FileFix(
        [t for t in targets if t.codemod in known],
        unsafe=options.unsafe,
        torch_pin=options.torch_pin,
        pin_source=options.pin_source,
        torch_floor=options.torch_floor,
        floor_source=options.floor_source,
        torch_name=options.torch_name,
        other_accelerator=options.other_accelerator,
    )
    unknown = [Outcome(t, MANUAL, f"no codemod named {t.codemod!r}; fix it by hand") for t in targets if t.codemod not in known]
    try:
        new_module = MetadataWrapper(module, unsafe_skip_copy=True).visit(Dispatch(codemods, fix))
    except Exception as exc:  # a codemod's bug must cost its own edits, not the run
        return module.code, [], f"{type(exc).__name__}: {exc}"
    if any(o.edited for o in fix.outcomes):
        if module in fix.import_torch:
            new_module = add_import_torch(new_module)
        new_module = drop_unused_imports(module, new_module)
    elif new_module.code != module.code:
        new_module = module  # only held-back edits asked for imports: change nothing
    return new_module.code, [*fix.outcomes, *leftover(fix.targets, fix), *unknown], None


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


_OTHERS = re.compile(r"""["'](mps|xpu|hpu|npu|xla|tpu|mlu|musa)(?::\d+)?["']""")
_SKIP_DIRS = frozenset({".git", ".hg", ".venv", "venv", "env", "node_modules", "site-packages", "__pycache__", ".tox", "build", "dist"})


def other_accelerator(root: str) -> str | None:
    """Another accelerator the project's Python code names as a device string (`"mps"`,
    `'xpu:0'`): where the code already runs there, an availability check made
    accelerator-generic would change what it does. `"mps" (train.py)`, or None."""
    if not os.path.isdir(root):
        return None
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    found = _OTHERS.search(handle.read(2_000_000))
            except OSError:
                continue
            if found:
                return f"{found.group(0)} ({os.path.relpath(path, root).replace(os.sep, '/')})"
    return None


def _write_atomically(path: str, text: str) -> None:
    """Write next to the file, then rename over it: a reader sees the old file or the new
    one, never half of one; the file keeps its permissions."""
    directory = os.path.dirname(os.path.abspath(path))
    mode = os.stat(path).st_mode & 0o7777
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".tpucheck-fix-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(text.encode("utf-8"))
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise

