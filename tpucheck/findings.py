"""The plain data that crosses the boundary between analyzers and everything after them.

Analyzers produce `RawMatch`es (what a rule matched, where, in which context) and
`ScanError`s; the engine turns matches into `Finding`s by attaching the rule's data, the
path, the role of the file and the fingerprint. Keeping the raw match free of rule data
lets analysis results be cached and shipped between processes cheaply.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from tpucheck.jsontypes import expect_int, expect_str

SEVERITIES: tuple[str, ...] = ("blocker", "major", "minor", "info")
"""Most severe first; the index is used for ordering and for `--fail-on`."""

CONFIDENCES: tuple[str, ...] = ("high", "medium", "low")

CATEGORIES: tuple[str, ...] = (
    "custom-kernel",
    "cuda-api",
    "device-placement",
    "unsupported-op",
    "dynamic-shape",
    "host-sync",
    "precision",
    "distributed",
    "dependency",
    "hf-transformers",
    "build",
)

WORKLOADS: tuple[str, ...] = ("training", "inference")


def severity_rank(severity: str) -> int:
    """0 for blocker ... 3 for info: smaller is more severe."""
    return SEVERITIES.index(severity)


PENDING = "pending.option"
"""The why-rule an analyzer gives code that runs only when a setting its file reads but
does not declare is turned on (`if model_args.use_qlora:` with `use_qlora: bool = False`
in args.py). Never reported: the judgement settles it against the project's declarations."""


@dataclass(frozen=True, slots=True)
class Span:
    """1-based line and column (columns count characters, as editors do); end is exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a finding weighs less than its rule says, or sits where it does: the judgement
    rule that fired (a key of rules/judgement.yaml, e.g. `guard.test`, `role.test`) and the
    evidence it fired on. From an analyzer, `line` and `cell` place the evidence in the
    same file; the judgement folds them into the text (`... at train.py:40`)."""

    rule: str
    evidence: str
    line: int | None = None
    cell: int | None = None

    def located(self, path: str) -> Reason:
        """The evidence with its place written out, for the report."""
        if self.line is None:
            return self
        where = f"{path}:cell {self.cell}:{self.line}" if self.cell is not None else f"{path}:{self.line}"
        return Reason(self.rule, f"{self.evidence} at {where}")

    def to_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "evidence": self.evidence}


@dataclass(frozen=True, slots=True)
class RawMatch:
    """What one rule matched in one file, before the rule's data is attached."""

    rule_id: str
    span: Span
    snippet: str
    """The matched source, whitespace-normalized: the stable part of the fingerprint."""
    cell: int | None = None
    """1-based notebook cell (counting every cell), with `span` relative to the cell."""
    guarded: bool = False
    """Fallback kept: the match sits on a path that only runs when CUDA (or a CUDA-only
    package) is there, and a non-CUDA path exists (try/except ImportError, availability
    checks and their early-return forms, `x.is_cuda` / `device.type == "cuda"` branches,
    CUDA skip conditions on tests)."""
    detail: str | None = None
    """A short name the inventory shows, e.g. a kernel's name or a package's name."""
    severity: str | None = None
    """Set when the place decides the severity (a rule's `where`), else the rule's own."""
    role: str | None = None
    """Supporting code inside a library file, decided from the code: "example" (an
    `if __name__ == "__main__":` block), "benchmark" (a `bench*`/`*_benchmark` function),
    "test" (a `test_*` function). None: the file's own role (from its path) applies."""
    reasons: tuple[Reason, ...] = ()
    """The evidence for `guarded` and `role`, when the analyzer decided them."""


@dataclass(frozen=True, slots=True)
class ScanError:
    """A file that could not be analyzed, and why; the scan goes on without it."""

    path: str
    kind: str
    message: str

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "kind": self.kind, "message": self.message}


@dataclass(frozen=True, slots=True)
class Skipped:
    """A discovered file that was deliberately not analyzed (too big, symlink out of root)."""

    path: str
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Import:
    """One imported name, as written: `level` leading dots, `module` the dotted name."""

    level: int
    module: str
    conditional: bool
    """Under a try or in a function body: it may not run when the module loads."""
    top: bool = False
    """At the module's top level, under no block at all: it runs whenever the module loads."""
    guarded: bool = False
    """Conditional, and under a `try` or an `if` too: a path chosen where the code runs
    (`if flash_attn_is_installed(): from .flash_models import llama`), not a lazy import
    that only breaks an import cycle."""
    branch: bool = False
    """Under an `if`, `elif` or `else` and no try or function: it runs whenever its side of
    the test is taken (the main path on its platform, or under its setting)."""
    placeholder: bool = False
    """Under a `try` whose `except` binds the names it imports to None or `object`, which
    the module never tests: it loads without them and fails where they are used
    (`guard.placeholder`), a known edit rather than a working fallback."""
    cuda_test: bool = False
    """Under the side of an `if` that asks whether CUDA is there (`if
    torch.cuda.is_available():`, or the `else` of its negation): a host without CUDA never
    runs it, whatever its `try` does when it fails."""
    dead: str = ""
    """Under the side of a test of torch's version that no target release takes (`if
    torch.__version__.startswith('0'):`), as evidence: the test's line, the test and why
    it is false, tab-separated; empty otherwise (analyze/version_tests.py)."""


@dataclass(frozen=True, slots=True)
class Build:
    """A compiled extension a file builds (`CUDAExtension("ops", ["ops_kernel.cu"])`): its
    name as written and the CUDA sources it lists, as written (relative to the build file's
    folder or to the project's top: the import graph decides which)."""

    name: str
    sources: tuple[str, ...]
    package: str = ""
    """The top package of a dotted name (`pointnet2_ops` of `pointnet2_ops._ext`): the
    project's package the compiled module lands in; empty for a bare name."""


@dataclass(frozen=True, slots=True)
class JitBuild:
    """A call that hands CUDA sources to a run-time build (`get_plugin(sources=["op.cu"])`,
    `load("op", ["op.cu"])`), as written (`analyze/dispatch.py`): the callee's last name,
    the native sources it names, and the device test every call of its building function sits
    under ("" when one does not), the name its result is bound to (`ext = load(...)`) and
    the extension's name as the call writes it (`load("op_ext", ...)`)."""

    callee: str
    sources: tuple[str, ...]
    guard: str
    line: int
    target: str = ""
    name: str = ""
    opt_in: str = ""
    """The environment test the build sits under that is off unless the user sets it
    (`if os.getenv("OPS_JIT") == "1":`), as evidence, or ""."""
    twin: str = ""
    """Where the module sends tensors on the CPU to a plain-PyTorch twin and every other
    device to the built extension (`if x.device.type == "cpu": upfirdn2d_native(...) else:
    UpFirDn2d.apply(...)`), as evidence, or "" (analyze/dispatch.py)."""


@dataclass(frozen=True, slots=True)
class ImportFacts:
    """What the whole-tree import graph reads from one Python file (`analyze/imports.py`):
    a pure function of the file's text, so it is cached with the file's result."""

    imports: tuple[Import, ...] = ()
    builds: tuple[Build, ...] = ()
    workloads: tuple[str, ...] = ()
    """What the module shows of the product's workloads: a model (it uses torch:
    inference), a training step (rules/judgement.yaml `workloads.training`)."""
    options: tuple[tuple[str, str], ...] = ()
    """Settings the module declares, each with its default as literal code: a config field
    (`use_qlora: bool = False`, `bits: int = field(default=16)`), a `store_true` flag or an
    argparse option with a literal default, a click option, a module-level `USE_X = False`,
    a config-tree key (`_C.MODEL.MORE_POS = False`). The project's table of them
    (analyze/declared.py) settles tests of settings that a module reads but does not declare."""
    jit_builds: tuple[JitBuild, ...] = ()
    jit_loaders: tuple[str, ...] = ()
    """Module-level functions that pass `cpp_extension.load` sources their callers give."""
    checks: tuple[str, ...] = ()
    """Module-level availability checks other modules may call or read (`analyze/checks.py`):
    check functions as `name()`, import flags as `NAME`."""
    dead: tuple[Import, ...] = ()
    """Imports under a side of a torch version test no target release takes: never run,
    kept apart from `imports` so that the graph never follows them, and read only to set
    aside what nothing else imports (analyze/dead_code.py)."""
    registered: tuple[tuple[str, int, int, tuple[str, ...]], ...] = ()
    """Top-level classes and functions a registry decorator registers (`@HEADS.register_
    module()`): (name, first line, last line, the keys the decorator gives) (analyze/registry.py)."""


@dataclass(slots=True)
class FileResult:
    """Everything the analysis of one file produced. Picklable, cacheable."""

    path: str
    kind: str
    lines: int = 0
    parsed: bool = False
    """False when the prefilter found none of the rules' needles and parsing was skipped."""
    matches: list[RawMatch] = field(default_factory=list)
    suppressions: dict[int, Suppression] = field(default_factory=dict)
    """Suppression comments by line (line within the cell for notebooks, keyed by
    `cell * 1_000_000 + line`)."""
    error: ScanError | None = None
    imports: ImportFacts | None = None
    """A Python module's import facts (None for other files, or when it could not be read)."""


@dataclass(frozen=True, slots=True)
class Suppression:
    """A `# tpucheck: ignore[...]` comment. An empty `rules` set silences every rule."""

    rules: frozenset[str]
    reason: str | None = None

    def covers(self, rule_id: str, rule_name: str) -> bool:
        return not self.rules or rule_id in self.rules or rule_name in self.rules


def suppression_key(line: int, cell: int | None) -> int:
    return (cell or 0) * 1_000_000 + line


_SUPPRESSION_RE = re.compile(
    r"#\s*tpucheck:\s*ignore(?:\[(?P<rules>[^\]]*)\])?(?:\s+--\s*(?P<reason>.*))?",
)


def parse_suppression(comment: str) -> Suppression | None:
    """Read one comment; None when it is not a tpucheck directive."""
    found = _SUPPRESSION_RE.search(comment)
    if found is None:
        return None
    listed = found.group("rules")
    rules = frozenset(r.strip() for r in listed.split(",") if r.strip()) if listed else frozenset()
    reason = (found.group("reason") or "").strip() or None
    return Suppression(rules=rules, reason=reason)


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule matched at a place: what the reports show and the score counts."""

    rule: str
    name: str
    category: str
    severity: str
    confidence: str
    path: str
    span: Span
    cell: int | None
    message: str
    fix: str
    affects: tuple[str, ...]
    snippet: str
    role: str
    """Where the finding sits: library, test, example, benchmark, docs, script."""
    guarded: bool
    fingerprint: str
    detail: str | None = None
    suppressed: bool = False
    suppression_reason: str | None = None
    inventory: str | None = None
    help_uri: str | None = None
    baselined: bool = False
    """Recorded in the baseline file: reported, counted in the score, left out of the gate."""
    because: tuple[Reason, ...] = ()
    """Every discount and placement this finding got, with its evidence: the guard that
    keeps a fallback, the role of its code, the cap that lowered its severity."""
    outside_diff: bool = False
    """Not on a line changed since `--diff-base`: reported, left out of the gate."""
    evidence: str | None = None
    """`scan --trace`: "confirmed" (a static finding the run reached) or "runtime" (found
    only by the run); None for a static finding the run did not speak to."""

    @property
    def gated(self) -> bool:
        """Whether `--fail-on` counts this finding: new, and in the diff when one is given."""
        return not (self.baselined or self.outside_diff)

    def sort_key(self) -> tuple[object, ...]:
        return (self.path, self.cell or 0, self.span.line, self.span.column, self.rule, self.span.end_line, self.span.end_column)

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {
            "rule": self.rule,
            "name": self.name,
            "category": self.category,
            "severity": self.severity,
            "confidence": self.confidence,
            "path": self.path,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "cell": self.cell,
            "message": self.message,
            "fix": self.fix,
            "affects": list(self.affects),
            "role": self.role,
            "guarded": self.guarded,
            "snippet": self.snippet,
            "fingerprint": self.fingerprint,
            "help_uri": self.help_uri,
        }
        if self.detail is not None:
            data["detail"] = self.detail
        if self.because:
            data["because"] = [reason.to_dict() for reason in self.because]
        if self.suppressed:
            data["suppression_reason"] = self.suppression_reason
        if self.baselined:
            data["baselined"] = True
        if self.outside_diff:
            data["outside_diff"] = True
        if self.evidence is not None:
            data["evidence"] = self.evidence
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, suppressed: bool = False) -> Finding:
        """The inverse of to_dict, for `tpucheck merge`; raises KeyError/TypeError/ValueError
        on a malformed entry, which the caller reports with the file it came from."""
        cell = data["cell"]
        return cls(
            rule=expect_str(data["rule"], "rule"),
            name=expect_str(data["name"], "name"),
            category=expect_str(data["category"], "category"),
            severity=expect_str(data["severity"], "severity"),
            confidence=expect_str(data["confidence"], "confidence"),
            path=expect_str(data["path"], "path"),
            span=Span(expect_int(data["line"], "line"), expect_int(data["column"], "column"), expect_int(data["end_line"], "end_line"), expect_int(data["end_column"], "end_column")),
            cell=None if cell is None else expect_int(data["cell"], "cell"),
            message=expect_str(data["message"], "message"),
            fix=expect_str(data["fix"], "fix"),
            affects=tuple(str(a) for a in data["affects"]),
            snippet=expect_str(data["snippet"], "snippet"),
            role=expect_str(data["role"], "role"),
            guarded=bool(data["guarded"]),
            fingerprint=expect_str(data["fingerprint"], "fingerprint"),
            detail=data.get("detail"),
            suppressed=suppressed,
            suppression_reason=data.get("suppression_reason") if suppressed else None,
            inventory=data.get("inventory"),
            help_uri=data.get("help_uri"),
            baselined=bool(data.get("baselined", False)),
            outside_diff=bool(data.get("outside_diff", False)),
            because=tuple(Reason(expect_str(r["rule"], "because.rule"), expect_str(r["evidence"], "because.evidence")) for r in data.get("because", ())),
            evidence=data.get("evidence"),
        )


_WS = re.compile(r"\s+")


def normalize_snippet(code: str) -> str:
    """Collapse whitespace so that re-indenting or re-wrapping code keeps the fingerprint."""
    return _WS.sub(" ", code).strip()


def fingerprints(rule_path_snippets: list[tuple[str, str, str]]) -> list[str]:
    """Fingerprint each (rule, path, snippet), numbering equal ones in their given order.

    Line numbers stay out of the hash so that unrelated edits above a finding leave it
    unchanged; the index among equal snippets keeps two identical calls apart.
    """
    seen: dict[tuple[str, str, str], int] = {}
    out: list[str] = []
    for key in rule_path_snippets:
        index = seen.get(key, 0)
        seen[key] = index + 1
        digest = hashlib.sha256("\x1f".join((*key, str(index))).encode("utf-8")).hexdigest()
        out.append(digest[:20])
    return out
