"""Hostile input: every file a scan finds is analyzed, skipped or an error with a reason,
nothing crashes the scan, and found = analyzed + skipped + errored always holds.

Every fixture is written here, into tmp_path: binaries, bad encodings, pathological
nesting, symlink tricks and broken notebooks are generated rather than committed, so the
repository holds no file that would trip its own tools.
"""

from __future__ import annotations

import builtins
import codecs
import errno
import io
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from test_scan_cli import run_cli

from tpucheck.analyze import build_context
from tpucheck.discover.walk import discover
from tpucheck.engine import ScanOptions, analyze_files, scan
from tpucheck.report import terminal
from tpucheck.result import ScanResult
from tpucheck.ruleset import RuleFileError, load_ruleset
from tpucheck.ruleset.model import Ruleset

MiB = 1024 * 1024
SYNC = "torch.cuda.synchronize()"


@pytest.fixture(scope="module")
def ruleset() -> Ruleset:
    return load_ruleset()


# --------------------------------------------------------------------------- outcomes


@dataclass(frozen=True)
class Found:
    """Analyzed, with exactly these (rule, line, column, cell) findings."""

    findings: tuple[tuple[str, int, int, int | None], ...]


@dataclass(frozen=True)
class Analyzed:
    """Analyzed (parsed or screened) without findings."""


@dataclass(frozen=True)
class Error:
    kind: str
    phrase: str


@dataclass(frozen=True)
class Skip:
    phrase: str


@dataclass(frozen=True)
class Absent:
    """Not a file: counted nowhere (a directory named like one)."""


Outcome = Found | Analyzed | Error | Skip | Absent


@dataclass(frozen=True)
class Case:
    files: dict[str, str | bytes]
    """Relative path -> content; bytes are written as they are, text as UTF-8."""
    expect: dict[str, Outcome]
    """Reported path -> outcome, for every path the case creates."""
    build: Callable[[Path, Path], None] | None = None
    """Extra construction in (case directory, a directory outside the scanned root)."""
    needs_non_root: bool = False
    marks: tuple[Any, ...] = field(default=())


def _notebook(source: Any, **extra: Any) -> str:
    cell = {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell], **extra})


def _symlink(name: str, target: str) -> Callable[[Path, Path], None]:
    def build(here: Path, outside: Path) -> None:
        (here / name).symlink_to(target)

    return build


def _outside_link(here: Path, outside: Path) -> None:
    target = outside / "target.py"
    target.write_text(f"import torch\n{SYNC}\n")
    (here / "out.py").symlink_to(os.path.relpath(target, here))


def _dir_named_like_a_file(here: Path, outside: Path) -> None:
    (here / "x.py").mkdir()
    (here / "x.py" / "inner.py").write_text(f"import torch\n{SYNC}\n")


def _unreadable(here: Path, outside: Path) -> None:
    path = here / "locked.py"
    path.write_text(f"import torch\n{SYNC}\n")
    path.chmod(0)


def _bytes_name(here: Path, outside: Path) -> None:
    with open(os.path.join(os.fsencode(here), b"caf\xe9.py"), "wb") as handle:
        handle.write(f"import torch\n{SYNC}\n".encode())


def _too_big(here: Path, outside: Path) -> None:
    line = b"x = 1\n"  # no rule's prefilter string: with the limit raised it is screened, not parsed
    (here / "big.py").write_bytes(line * (20 * MiB // len(line) + 1))


def _setup_fan_out() -> str:
    """Ten names, each a list of ten copies of the previous one: 10**10 static lookups."""
    lines = ["a0 = ['flash-attn']"] + [f"a{i} = [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 11)]
    return "\n".join(lines) + "\nsetup(name='x', install_requires=a10)\n"


_DEEP = 5000
_HAS_INT_LIMIT = hasattr(sys, "get_int_max_str_digits")

CASES: dict[str, Case] = {
    "binary-named-py": Case({"blob.py": bytes(range(256)) * 64}, {"blob.py": Error("binary", "binary file (contains NUL bytes)")}),
    "nul-after-8k": Case(
        {"nul.py": "import torch\n" + "#" * 9000 + "\n\0\n" + SYNC + "\n"},
        {"nul.py": Error("syntax-error", "syntax error at line 3, column 1: a NUL byte")},
    ),
    "invalid-utf8": Case(
        {"bad.py": b"import torch\nx = '\xff\xfe'\n" + SYNC.encode() + b"\n"},
        {"bad.py": Error("encoding", "not valid utf-8 (line 2, byte 18)")},
    ),
    "utf16-bom": Case(
        {"wide.py": codecs.BOM_UTF16_LE + f"import torch\nx = 1; {SYNC}\n".encode("utf-16-le")},
        {"wide.py": Found((("CA001", 2, 8, None),))},
    ),
    # The column counts characters: "télé = 1; " is ten, whatever its Latin-1 bytes.
    "latin1-pep263": Case(
        {"latin.py": b"# vim: set fileencoding=latin-1 :\nimport torch\nt\xe9l\xe9 = 1; " + SYNC.encode() + b"\n"},
        {"latin.py": Found((("CA001", 3, 11, None),))},
    ),
    "crlf": Case({"crlf.py": f"import torch\r\n\r\nx = 1; {SYNC}\r\n".encode()}, {"crlf.py": Found((("CA001", 3, 8, None),))}),
    "cr-only": Case({"mac.py": f"import torch\rx = 1; {SYNC}\r".encode()}, {"mac.py": Found((("CA001", 2, 8, None),))}),
    # libcst drops a form feed that starts a statement line; the column must still count it.
    "form-feeds": Case(
        {"ff.py": f"import torch\n\f\nx = 1\n\f{SYNC}\ny = 2;\f{SYNC}\n"},
        {"ff.py": Found((("CA001", 4, 2, None), ("CA001", 5, 8, None)))},
    ),
    "twenty-megabytes": Case({}, {"big.py": Skip("larger than the 5.0 MB limit (20.0 MB)")}, build=_too_big),
    "deep-lambdas": Case(
        {"lambdas.py": "import torch\nx = " + "lambda: " * _DEEP + "1\n" + SYNC + "\n"},
        {"lambdas.py": Error("too-deep", "expression nested more than 300 deep (line 2): not analyzed")},
    ),
    "deep-sum": Case(
        {"sum.py": "import torch\nx = 1" + " + 1" * _DEEP + "\n" + SYNC + "\n"},
        {"sum.py": Error("too-deep", "expression nested more than 300 deep (line 2)")},
    ),
    "deep-subscripts": Case(
        {"index.py": "import torch\nx = a" + "[0]" * _DEEP + "\n" + SYNC + "\n"},
        {"index.py": Error("too-deep", "expression nested more than 300 deep (line 2)")},
    ),
    "deep-parentheses": Case(
        {"parens.py": "import torch\nx = " + "(" * _DEEP + "1" + ")" * _DEEP + "\n" + SYNC + "\n"},
        {"parens.py": Error("too-deep", "brackets nested more than 200 deep")},
    ),
    "deep-and-unclosed": Case(
        {"open.py": "import torch\nx = (\n" + "lambda:\n" * _DEEP + "1\n" + SYNC + "\n"},
        {"open.py": Error("syntax-error", "syntax error at line 2: a bracket opened here is never closed")},
    ),
    "python2": Case(
        {"legacy.py": f'import torch\nprint "x"\ntry:\n    {SYNC}\nexcept E, e:\n    pass\n'},
        {"legacy.py": Error("python2", "Python 2 syntax (line 2, column 1)")},
    ),
    # PEP 758 (Python 3.14) made `except A, B:` mean `except (A, B):`: valid, analyzed.
    "except-comma-pep758": Case(
        {"pep758.py": f"import torch\ntry:\n    {SYNC}\nexcept E, e:\n    pass\n"},
        {"pep758.py": Found((("CA001", 3, 5, None),))},
    ),
    "pep695-generics": Case(
        {"generic.py": "import torch\ntype Device = str\ndef to_gpu[T](x: T) -> T:\n    return x.cuda()\nclass Box[T]:\n    pass\n"},
        {"generic.py": Found((("CA003", 4, 14, None),))},
    ),
    "pep701-fstrings": Case(
        {"fstring.py": f'import torch\nx = {{"a": 1}}\ny = f"{{x["a"]}} {{{SYNC}}}"\n'},
        {"fstring.py": Found((("CA001", 3, 17, None),))},
    ),
    "match-statement": Case(
        {"match.py": f"import torch\nmatch command:\n    case {{'sync': True}}:\n        {SYNC}\n    case _:\n        pass\n"},
        {"match.py": Found((("CA001", 4, 9, None),))},
    ),
    "empty-files": Case(
        {"empty.py": b"", "requirements.txt": b"", "empty.ipynb": b""},
        {"empty.py": Analyzed(), "requirements.txt": Analyzed(), "empty.ipynb": Error("notebook-error", "not valid JSON (line 1, column 1)")},
    ),
    "directory-named-x.py": Case({}, {"x.py": Absent(), "x.py/inner.py": Found((("CA001", 2, 1, None),))}, build=_dir_named_like_a_file),
    "unreadable": Case({}, {"locked.py": Error("unreadable", "cannot read: Permission denied")}, build=_unreadable, needs_non_root=True),
    "broken-symlink": Case({}, {"gone.py": Error("broken-symlink", "symlink target does not exist: nowhere.py")}, build=_symlink("gone.py", "nowhere.py")),
    "symlink-loop": Case({}, {"loop.py": Error("broken-symlink", "symlink loop (too many levels of symbolic links): loop.py")}, build=_symlink("loop.py", "loop.py")),
    "symlink-out-of-root": Case({}, {"out.py": Skip("symlink outside the scanned root")}, build=_outside_link),
    "notebook-not-json": Case({"broken.ipynb": '{"cells": [}'}, {"broken.ipynb": Error("notebook-error", "not valid JSON (line 1, column 12)")}),
    # nbformat allows a cell's source as one string instead of a list of lines.
    "notebook-string-source": Case({"str.ipynb": _notebook(f"import torch\n{SYNC}\n")}, {"str.ipynb": Found((("CA001", 2, 1, 1),))}),
    "notebook-without-cells": Case(
        {"none.ipynb": json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}}), "zero.ipynb": _notebook("x").replace('"cells": [', '"cells": [], "was": [')},
        {"none.ipynb": Analyzed(), "zero.ipynb": Analyzed()},
    ),
    # json.loads raises a plain ValueError (not JSONDecodeError) past int()'s digit limit.
    "notebook-huge-number": Case(
        {"number.ipynb": '{"nbformat": 4, "cells": [], "metadata": {"n": ' + "7" * 5000 + "}}"},
        {"number.ipynb": Error("notebook-error", "not valid JSON: Exceeds the limit (4300") if _HAS_INT_LIMIT else Analyzed()},
    ),
    # JSON can spell an unpaired surrogate; it becomes one U+FFFD (column 10 counts it once).
    "notebook-lone-surrogate": Case(
        {"surrogate.ipynb": _notebook(["import torch\n", 'x = "\\ud800"; ' + SYNC + "\n"]).replace("\\\\ud800", "\\ud800")},
        {"surrogate.ipynb": Found((("CA001", 2, 10, 1),))},
    ),
    "requirements-with-everything": Case(
        {
            "requirements.txt": (
                "-r requirements-gpu.txt\n"
                "git+https://github.com/Dao-AILab/flash-attention.git#egg=flash-attn\n"
                "https://example.com/wheels/flash_attn-2.5.6-cp311-cp311-linux_x86_64.whl\n"
                'flash-attn; platform_system == "Linux"\n'
                "--extra-index-url https://download.pytorch.org/whl/cu121\n"
                "flash-attn==2.5.6 \\\n"
                "    --hash=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
                "numpy==1.26.4 --hash=sha256:00ff\n"
            ),
            "requirements-gpu.txt": "flash-attn>=2\n",
        },
        {
            "requirements.txt": Found((("DEP002", 2, 1, None), ("DEP002", 3, 1, None), ("DEP002", 4, 1, None), ("BLD002", 5, 1, None), ("DEP002", 6, 1, None))),
            "requirements-gpu.txt": Found((("DEP002", 1, 1, None),)),
        },
    ),
    "pyproject-nested-too-deep": Case(
        {"pyproject.toml": "a = " + "[" * 100_000 + "]" * 100_000 + "\n"},
        {"pyproject.toml": Error("manifest-error", "invalid TOML: nested too deeply")},
    ),
    "setup-py-fan-out": Case({"setup.py": _setup_fan_out()}, {"setup.py": Analyzed()}),
    "file-name-not-utf8": Case({}, {"caf\\xe9.py": Found((("CA001", 2, 1, None),))}, build=_bytes_name),
    "file-name-control-characters": Case({"esc\x1b[2J.py": f"import torch\n{SYNC}\n"}, {"esc\\x1b[2J.py": Found((("CA001", 2, 1, None),))}),
    "file-name-rich-markup": Case({"a[/b].py": f"import torch\n{SYNC}\n"}, {"a[/b].py": Found((("CA001", 2, 1, None),))}),
}


def _write(case: Case, here: Path, outside: Path) -> None:
    for name, content in case.files.items():
        path = here / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    if case.build is not None:
        case.build(here, outside)


def _skip_unless_possible(case: Case) -> None:
    if case.needs_non_root and os.geteuid() == 0:
        pytest.skip("root reads any file whatever its mode")


# --------------------------------------------------------------------------- checks


def _identity(result: ScanResult) -> None:
    c = result.coverage
    assert c.files_found == c.files_analyzed + c.files_skipped + c.files_errored, c
    assert c.files_errored == len(result.errors) and c.files_skipped == len(result.skipped)
    assert 0 <= c.files_parsed <= c.files_analyzed


def _check(result: ScanResult, expect: dict[str, Outcome]) -> None:
    """Each expected path in exactly the place its outcome says; nothing else reported."""
    findings: dict[str, list[tuple[str, int, int, int | None]]] = {}
    for f in result.findings:
        findings.setdefault(f.path, []).append((f.rule, f.span.line, f.span.column, f.cell))
    errors = {e.path: e for e in result.errors}
    skipped = {s.path: s for s in result.skipped}
    assert len(errors) == len(result.errors) and len(skipped) == len(result.skipped), "a path reported twice"
    for path, outcome in expect.items():
        places = [name for name, table in (("findings", findings), ("errors", errors), ("skipped", skipped)) if path in table]
        if isinstance(outcome, Found):
            assert places == ["findings"], (path, places)
            assert sorted(findings[path], key=lambda f: (f[1], f[2])) == list(outcome.findings), path
        elif isinstance(outcome, Error):
            assert places == ["errors"], (path, places, result.errors)
            error = errors[path]
            assert (error.kind, outcome.phrase in error.message) == (outcome.kind, True), error
            assert "\n" not in error.message and "\r" not in error.message
        elif isinstance(outcome, Skip):
            assert places == ["skipped"], (path, places)
            assert outcome.phrase in skipped[path].reason
        else:
            assert places == [], (path, places)
    reported = set(findings) | set(errors) | set(skipped)
    assert reported <= set(expect), reported - set(expect)
    counted = {"analyzed": (Found, Analyzed), "errored": (Error,), "skipped": (Skip,)}
    c = result.coverage
    assert (c.files_analyzed, c.files_errored, c.files_skipped) == tuple(
        sum(isinstance(o, kinds) for o in expect.values()) for kinds in counted.values()
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_is_accounted_for(name: str, tmp_path: Path, ruleset: Ruleset) -> None:
    case = CASES[name]
    _skip_unless_possible(case)
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    _write(case, root, outside)
    result = scan(str(root), ruleset, ScanOptions(jobs=1))
    _identity(result)
    _check(result, case.expect)


def test_unreadable_file_even_as_root(tmp_path: Path, ruleset: Ruleset, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same case without relying on file modes: the read itself fails."""
    (tmp_path / "locked.py").write_text(f"import torch\n{SYNC}\n")
    (tmp_path / "open.py").write_text(f"import torch\n{SYNC}\n")
    real_open = builtins.open
    locked = str(tmp_path / "locked.py")

    def refusing_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, str) and file == locked:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing_open)
    result = scan(str(tmp_path), ruleset, ScanOptions(jobs=1))
    _identity(result)
    _check(result, {"locked.py": Error("unreadable", "cannot read: Permission denied"), "open.py": Found((("CA001", 2, 1, None),))})


def test_twenty_megabytes_with_the_limit_raised_is_analyzed(tmp_path: Path, ruleset: Ruleset) -> None:
    _too_big(tmp_path, tmp_path)
    result = scan(str(tmp_path), ruleset, ScanOptions(jobs=1, max_file_size=64 * MiB))
    _identity(result)
    assert (result.coverage.files_analyzed, result.coverage.files_parsed, result.errors, result.skipped) == (1, 0, [], [])
    assert result.coverage.lines_scanned == 20 * MiB // 6 + 1


# --------------------------------------------------------------------------- all at once


def _big_tree(tmp_path: Path) -> tuple[Path, dict[str, Outcome]]:
    root, outside = tmp_path / "all", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    expect: dict[str, Outcome] = {}
    for name, case in CASES.items():
        if case.needs_non_root and os.geteuid() == 0:
            continue
        here = root / name
        here.mkdir()
        _write(case, here, outside)
        expect.update({f"{name}/{path}": outcome for path, outcome in case.expect.items()})
    return root, expect


def test_every_created_path_is_accounted_for_once(tmp_path: Path, ruleset: Ruleset) -> None:
    root, expect = _big_tree(tmp_path)
    result = scan(str(root), ruleset, ScanOptions(jobs=1))
    _identity(result)
    _check(result, expect)
    # The same through the stages: every discovered file comes back analyzed or errored.
    context = build_context(ruleset)
    found = discover(root, extra_globs=context.other_globs)
    results = analyze_files(found.files, context, jobs=1)
    assert sorted(r.path for r in results) == [f.path for f in found.files]
    analyzed = {r.path for r in results if r.error is None}
    errored = {r.path for r in results if r.error is not None} | {e.path for e in found.errors}
    skipped = {s.path for s in found.skipped}
    for path, outcome in expect.items():
        places = [name for name, group in (("analyzed", analyzed), ("errored", errored), ("skipped", skipped)) if path in group]
        wanted = {Found: ["analyzed"], Analyzed: ["analyzed"], Error: ["errored"], Skip: ["skipped"], Absent: []}[type(outcome)]
        assert places == wanted, (path, places)
    assert len(analyzed) + len(errored) + len(skipped) == result.coverage.files_found


def test_the_cli_reports_the_same_without_a_traceback(tmp_path: Path, ruleset: Ruleset) -> None:
    root, _ = _big_tree(tmp_path)
    done = run_cli("scan", str(root), "--format", "json", "-q")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    coverage = report["coverage"]
    assert coverage["files_found"] == coverage["files_analyzed"] + coverage["files_skipped"] + coverage["files_errored"]
    in_process = scan(str(root), ruleset, ScanOptions(jobs=1))
    assert [(e["path"], e["kind"]) for e in report["errors"]] == [(e.path, e.kind) for e in in_process.errors]
    assert [s["path"] for s in report["skipped"]] == [s.path for s in in_process.skipped]
    assert [(f["path"], f["rule"], f["line"], f["column"]) for f in report["findings"]] == [
        (f.path, f.rule, f.span.line, f.span.column) for f in in_process.findings
    ]


def test_terminal_report_states_the_accounting(tmp_path: Path, ruleset: Ruleset) -> None:
    root, _ = _big_tree(tmp_path)
    result = scan(str(root), ruleset, ScanOptions(jobs=1))
    stream = io.StringIO()
    terminal.write(result, stream)
    text = " ".join(stream.getvalue().split())
    c = result.coverage
    found = re.search(r"Coverage: (\d+) files found = (\d+) analyzed \((\d+) parsed, (\d+) screened out by the prefilter\) \+ (\d+) errors \+ (\d+) skipped", text)
    assert found is not None, text[-400:]
    assert tuple(map(int, found.groups())) == (c.files_found, c.files_analyzed, c.files_parsed, c.files_screened, c.files_errored, c.files_skipped)
    # Data is printed as data: the control character and the markup-like path come out inert.
    assert "\x1b[2J" not in stream.getvalue()
    assert "a[/b].py" in text and "esc\\x1b[2J.py" in text


# --------------------------------------------------------------------------- rule files

GOOD_RULE = """\
  - id: {id}
    name: {name}
    category: cuda-api
    severity: major
    affects: [training]
    effort: {{low: 0.1, high: 0.2}}
    message: m
    fix: {{tpu: t}}
    docs: ["https://example.org"]
    match:
      {match}
    examples: {{flag: ["torch.cuda.synchronize()"], pass: ["x = 1"]}}
"""


def _rule(rule_id: str = "ZZ001", name: str = "zz-sync", match: str = "call: torch.cuda.synchronize") -> str:
    return GOOD_RULE.format(id=rule_id, name=name, match=match)


@pytest.mark.parametrize(
    ("text", "line", "phrase"),
    [
        pytest.param("rules:\n" + _rule().replace("severity: major", "severity: [major"), 6, "invalid YAML", id="yaml-syntax"),
        pytest.param("rules:\n" + _rule(match="calls: torch.cuda.synchronize"), 12, "unknown matcher", id="unknown-matcher"),
        pytest.param("rules:\n" + _rule(match="string: 'cuda(('"), 12, "invalid regex 'cuda(('", id="bad-regex"),
        pytest.param("rules:\n" + _rule() + _rule(name="zz-other"), 14, "duplicate id 'ZZ001'", id="duplicate-id"),
    ],
)
def test_bad_extra_rule_file_names_file_and_line(tmp_path: Path, text: str, line: int, phrase: str) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    with pytest.raises(RuleFileError) as caught:
        load_ruleset([path])
    problems = caught.value.problems
    assert [(p.file, p.line) for p in problems] == [(str(path), line)], problems
    assert phrase in problems[0].message
    assert str(caught.value).startswith(f"{path}:{line}: ")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers inherit the patched analyzer only on Linux")
def test_a_worker_that_dies_costs_only_the_file_that_killed_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ruleset: Ruleset) -> None:
    """libcst's parser is native code: a crash there kills the worker process and, with it,
    every pending task of the pool. The scan must still account for every file."""
    from tpucheck import engine

    files = {f"pkg/m{i:02}.py": f"import torch\nx{i} = torch.zeros(1).cuda()\n" for i in range(60)}
    files["pkg/boom.py"] = "import torch\ntorch.cuda.synchronize()\n" + "# padding\n" * 50  # large: goes out first
    root = tmp_path / "repo"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    real = engine.analyze_file

    def crashing(source: Any, *args: Any, **kwargs: Any) -> Any:
        if source.path.endswith("boom.py") and os.getpid() != parent:
            os._exit(139)  # what a segfault in native code looks like to the pool
        return real(source, *args, **kwargs)

    parent = os.getpid()
    monkeypatch.setattr(engine, "analyze_file", crashing)
    monkeypatch.setattr(engine, "INLINE_BELOW", 0)
    result = scan(str(root), ruleset, ScanOptions(jobs=2))
    assert [(e.path, e.kind) for e in result.errors] == [("pkg/boom.py", "crash")]
    assert result.coverage.files_found == 61 and result.coverage.files_analyzed == 60
    assert sorted({f.path for f in result.findings}) == sorted(p for p in files if p != "pkg/boom.py")


def test_a_pool_that_breaks_while_tasks_are_still_submitted_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ruleset: Ruleset) -> None:
    """A worker can die before the last batch is submitted: `submit` itself then raises.
    The batches not yet submitted are rerun like those lost in flight."""
    from concurrent.futures.process import BrokenProcessPool

    from tpucheck import engine

    files = {f"pkg/m{i:02}.py": f"import torch\nx{i} = torch.zeros(1).cuda()\n" for i in range(40)}
    root = tmp_path / "repo"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    broken = {"left": 1}

    class Breaking(engine.ProcessPoolExecutor):
        def submit(self, *args: Any, **kwargs: Any) -> Any:
            if broken["left"] and len(getattr(self, "_pending_work_items", {})) >= 1:
                broken["left"] -= 1
                raise BrokenProcessPool("a worker died")
            return super().submit(*args, **kwargs)

    monkeypatch.setattr(engine, "ProcessPoolExecutor", Breaking)
    monkeypatch.setattr(engine, "INLINE_BELOW", 0)
    result = scan(str(root), ruleset, ScanOptions(jobs=2, use_cache=False))
    assert broken["left"] == 0  # the break happened
    assert result.errors == [] and result.coverage.files_analyzed == 40
    assert sorted({f.path for f in result.findings}) == sorted(files)
