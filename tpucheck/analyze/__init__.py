"""Per-file analysis: one function that takes a file's text and kinds and returns a
FileResult. Pure (no I/O, no globals beyond the compiled context), so the engine can run
it in worker processes and a cache can store its output.

The analyzers are imported when a file of their kind is first analyzed: a rescan served
by the cache never loads libcst or the manifest parsers."""

from __future__ import annotations

from dataclasses import dataclass, field

from tpucheck.analyze.python import PythonIndex, build_python_index
from tpucheck.analyze.textfiles import OTHER_KINDS, file_globs
from tpucheck.findings import FileResult, ScanError
from tpucheck.ruleset.model import Rule, Ruleset


@dataclass(slots=True)
class AnalysisContext:
    """A ruleset compiled for analysis: built once per process."""

    ruleset: Ruleset
    python: PythonIndex
    native: list[Rule] = field(default_factory=list)
    files: list[Rule] = field(default_factory=list)
    """Rules with `file`, `config` or `option` matchers: what files of kind "other" are read for."""
    dependency: list[Rule] = field(default_factory=list)
    prefilter: bool = True

    @property
    def other_globs(self) -> tuple[str, ...]:
        return file_globs(self.files)


def build_context(ruleset: Ruleset, *, prefilter: bool = True) -> AnalysisContext:
    def having(kind: str) -> list[Rule]:
        return [r for r in ruleset.rules if kind in r.kinds()]

    return AnalysisContext(
        ruleset=ruleset,
        python=build_python_index(ruleset),
        native=having("native"),
        files=[r for r in ruleset.rules if r.kinds() & OTHER_KINDS],
        dependency=having("dependency"),
        prefilter=prefilter,
    )


def analyze_text(path: str, kinds: tuple[str, ...], text: str, context: AnalysisContext) -> FileResult:
    """Run every analysis a file's kinds call for. Bad input becomes `error`, never an exception.

    Each analysis guards against the bad input it knows of; should one still raise, that
    is a bug in tpucheck, and it costs this file (reported as an `internal-error` naming
    the exception) rather than the whole scan.
    """
    result = FileResult(path=path, kind=kinds[0] if kinds else "other", lines=text.count("\n") + (not text.endswith("\n") and bool(text)))
    for kind in kinds:
        try:
            _analyze_kind(kind, path, text, context, result)
        except Exception as exc:
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            result.error = ScanError(path, "internal-error", f"tpucheck failed on this file ({kind} analysis): {type(exc).__name__}: {detail}".rstrip(": "))
    if result.error is not None:
        # Counted as errored, not analyzed: "parsed" must not count it either, or the
        # coverage's screened count (analyzed - parsed) goes negative.
        result.parsed = False
    return result


def _analyze_kind(kind: str, path: str, text: str, context: AnalysisContext, result: FileResult) -> None:
    from tpucheck.analyze.configs import analyze_config
    from tpucheck.analyze.deps import match_requirements
    from tpucheck.analyze.launch import analyze_launch
    from tpucheck.analyze.manifests import ManifestError, parse_manifest
    from tpucheck.analyze.native import analyze_native
    from tpucheck.analyze.notebook_analysis import analyze_notebook
    from tpucheck.analyze.python.source import analyze_source, find_suppressions
    from tpucheck.analyze.textfiles import analyze_textfile

    if kind == "python":
        analysis = analyze_source(text, context.python, prefilter=context.prefilter, path=path)
        result.parsed = analysis.parsed
        result.matches.extend(analysis.matches)
        if analysis.error_kind is not None:
            result.error = ScanError(path, analysis.error_kind, analysis.error_message or "")
        elif analysis.matches:
            result.suppressions.update(find_suppressions(text))
    elif kind == "notebook":
        analyze_notebook(path, text, context.python, context.dependency, result, prefilter=context.prefilter)
    elif kind == "native":
        result.parsed = True
        result.matches.extend(analyze_native(path, text, context.native, context.ruleset.judgement.cuda_macros))
    elif kind == "manifest":
        try:
            requirements = parse_manifest(path, text)
        except ManifestError as exc:
            if result.error is None:
                where = f" (line {exc.line})" if getattr(exc, "line", None) else ""
                result.error = ScanError(path, "manifest-error", f"{exc}{where}")
            return
        result.parsed = True
        result.matches.extend(match_requirements(requirements, context.dependency))
    elif kind == "other":
        result.parsed = True
        result.matches.extend(analyze_textfile(path, text, context.files))
        result.matches.extend(analyze_config(path, text, context.files, context.ruleset.judgement.guards.switch_keys))
        result.matches.extend(analyze_launch(path, text, context.files))
