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
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

import libcst as cst
from libcst.metadata import MetadataWrapper

from tpucheck import api
from tpucheck.config.settings import Settings
from tpucheck.findings import Finding
from tpucheck.fix.base import Codemod, Dispatch, FileFix, Outcome, Target, leftover
from tpucheck.fix.imports import add_import_torch
from tpucheck.fix.notebooks import NotebookProblem, fix_notebook
from tpucheck.fix.pins import torch_pin
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
    unsafe_held: list[Finding] = field(default_factory=list)
    """Findings whose fix is unsafe, not made without `--unsafe-fixes`."""
    problems: list[tuple[str, str]] = field(default_factory=list)
    """(path, why): files that could not be fixed at all."""
    written: bool = False
    after: ScanResult | None = None

    @property
    def outcomes(self) -> list[Outcome]:
        return [o for f in self.files for o in f.outcomes]

    @property
    def fixed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.fixed]

    @property
    def left(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.fixed]

    @property
    def changed_files(self) -> list[FileChange]:
        return [f for f in self.files if f.changed]

    def needs(self) -> Version | None:
        """The newest torch any rewritten code needs."""
        versions = [o.needs for o in self.fixed if o.needs is not None]
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
    """The changes that fix `result`'s fixable findings, file by file, nothing written."""
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
        if not rule.codemod.safe and not unsafe:
            report.unsafe_held.append(finding)
            continue
        chosen.setdefault(finding.path, []).append(Target.of(finding, rule.codemod.name))
    pin, pin_source = torch_pin(result.root)
    for path in sorted(chosen):
        absolute = os.path.join(result.root, path)
        try:
            with open(absolute, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            report.problems.append((path, f"cannot read: {exc.strerror or exc}"))
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            report.problems.append((path, "not UTF-8 text: fix it by hand"))
            continue
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        text = text[len(bom) :]
        options = FileOptions(unsafe, pin, pin_source)
        if path.lower().endswith(".ipynb"):
            try:
                after, outcomes = fix_notebook(text, chosen[path], partial(_fix_cell, options=options))
            except NotebookProblem as exc:
                report.problems.append((path, f"notebook not fixed: {exc}"))
                continue
        elif path.lower().endswith((".py", ".pyi")):
            after, outcomes = fix_source(text, chosen[path], options)
        else:
            report.problems.append((path, "only Python files and notebooks are fixed; fix it by hand"))
            continue
        report.files.append(FileChange(path, bom + text, bom + after, outcomes))
    return report


@dataclass(frozen=True, slots=True)
class FileOptions:
    unsafe: bool = False
    torch_pin: Version | None = None
    pin_source: str | None = None
    torch_name: str | None = None
    """The name torch is bound to elsewhere (a notebook's earlier cell); None: look in the module."""


def fix_source(code: str, targets: list[Target], options: FileOptions | None = None, *, codemods: Callable[[], list[Codemod]] | None = None) -> tuple[str, list[Outcome]]:
    """Rewrite one module for `targets`; the new code and what became of each target.

    When the rewritten module does not parse, the targets are tried one at a time and each
    kept only if the module still parses with it, so one bad edit costs only itself."""
    options = options or FileOptions()
    make = codemods or make_codemods
    try:
        module = cst.parse_module(code)
    except cst.ParserSyntaxError as exc:
        return code, [Outcome(t, False, f"libcst cannot parse the file ({exc.message}); fix it by hand") for t in targets]
    new, outcomes, error = _apply(module, targets, options, make)
    if error is None and _parses(new):
        return new, outcomes
    kept: list[Target] = []
    failed: list[Outcome] = []
    for target in targets:
        trial, _, error = _apply(module, [*kept, target], options, make)
        if error is not None:
            failed.append(Outcome(target, False, f"the fix failed ({error}): skipped; fix it by hand"))
        elif _parses(trial):
            kept.append(target)
        else:
            failed.append(Outcome(target, False, "the fix would produce code that does not parse: skipped; fix it by hand"))
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
        torch_name=options.torch_name,
    )
    unknown = [Outcome(t, False, f"no codemod named {t.codemod!r}; fix it by hand") for t in targets if t.codemod not in known]
    try:
        new_module = MetadataWrapper(module, unsafe_skip_copy=True).visit(Dispatch(codemods, fix))
    except Exception as exc:  # a codemod's bug must cost its own edits, not the run
        return module.code, [], f"{type(exc).__name__}: {exc}"
    if fix.import_torch and any(o.fixed for o in fix.outcomes):
        new_module = add_import_torch(new_module)
    return new_module.code, [*fix.outcomes, *leftover(fix.targets, fix), *unknown], None


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


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

