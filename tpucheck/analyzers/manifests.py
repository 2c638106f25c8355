"""Read dependency manifests into entries with exact source positions.

The dependency rules only need to know *which* packages and package indexes a project
asks for and *where* it says so, so this module turns every supported manifest format
into one flat list of `Requirement`s and leaves judging them to the rule engine.

Nothing here ever executes or imports project code: `setup.py` is read with `ast`, YAML
goes through PyYAML's safe loader only, and TOML through `tomllib`. A scanner that runs
the code it is auditing would be both a security hole and a source of flaky results.

Positions follow the rest of tpucheck: 1-based lines, 1-based columns counting
characters (not bytes), exclusive end. Where a format's parser gives no positions
(`tomllib`), the text is searched; a position that cannot be recovered falls back to the
enclosing table's line rather than dropping the entry, because a finding on a slightly
wrong line is more useful than a missed CUDA dependency.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import yaml

from tpucheck.manifest_names import is_manifest as is_manifest  # re-exported: the parsers answer for their names
from tpucheck.manifest_names import manifest_format
from tpucheck.names import normalize_package
from tpucheck.textpos import YAML_LINE_BREAKS, LineIndex, TomlLocator, toml_syntax_error

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


@dataclass(frozen=True, slots=True)
class Requirement:
    """One dependency (or package index) a manifest asks for, and where it says so."""

    kind: str
    """"package", or "index" for an index / find-links URL."""
    name: str
    """PEP 503-normalized, so rules can match one spelling; "" for an index."""
    spec: str
    """What follows the name as written (extras, versions, `@ URL`, markers); for an
    index, or a requirement given only as a URL/path, the URL/path itself. Kept verbatim
    because the CUDA signal often lives here (`+cu121`, `/whl/cu121`)."""
    raw: str
    """The entry as written, stripped: what a report shows as the snippet."""
    ecosystem: str
    """"pip" or "conda": the same name can mean different packages in each."""
    line: int
    column: int
    end_line: int
    end_column: int
    extra: str | None = None
    """The optional extra (or optional group) that asks for it; None for a base dependency.
    An extra is installed only on request (`pip install pkg[cuda]`), so the CUDA-only
    package in it is a choice the project offers, not a requirement of the product."""


class ManifestError(Exception):
    """A manifest that its own format's parser rejects; the scan reports it and goes on."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


# --------------------------------------------------------------------------- dispatch

def parse_manifest(relpath: str, text: str) -> list[Requirement]:
    """All entries of one manifest, sorted by position.

    Raises `ManifestError` when the file is not valid in its own format (TOML, Python,
    YAML); requirements files and setup.cfg are read leniently and never raise, matching
    how forgiving their consumers are. A path `is_manifest` rejects also raises
    `ManifestError`: if file discovery and this module ever disagree on names, the scan
    should report the file, not crash.
    """
    fmt = manifest_format(relpath)
    if fmt is None:
        raise ManifestError(f"not a recognized dependency manifest name: {relpath}")
    if text.startswith("\ufeff"):
        # Editors do not show the BOM, so columns must not count it.
        text = text[1:]
    if fmt == "requirements":
        found = _parse_requirements_txt(text)
    elif fmt == "pyproject":
        found = _parse_pyproject(text)
    elif fmt == "setup.py":
        found = _parse_setup_py(text)
    elif fmt == "setup.cfg":
        found = _parse_setup_cfg(text)
    else:
        found = _parse_conda_env(text)
    # The same literal can be reachable twice (a list bound to a name and used for both
    # install_requires and an extra); one place should yield one finding.
    unique = list(dict.fromkeys(found))
    unique.sort(key=lambda r: (r.line, r.column))
    return unique


# --------------------------------------------------------------------------- shared helpers


normalize_name = normalize_package
"""PEP 503: the one spelling under which `Flash_Attn` and `flash-attn` are equal."""


def _make(
    t: LineIndex, parsed: tuple[str, str, str], raw: str, ecosystem: str, start: int, end: int, extra: str | None = None
) -> Requirement:
    kind, name, spec = parsed
    line, column = t.position(start)
    end_line, end_column = t.position(end)
    return Requirement(kind, name, spec, raw.strip(), ecosystem, line, column, end_line, end_column, extra)


_COMMENT_RE = re.compile(r"(?:^|\s)#")


def _strip_comment(line: str) -> str:
    """pip's comment rule: `#` at the start or after whitespace, so `#egg=` survives."""
    found = _COMMENT_RE.search(line)
    return line[: found.start()] if found else line


# --------------------------------------------------------------------------- pip requirement lines

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_NAME_RE = re.compile(_NAME)
_NAME_AT_RE = re.compile(rf"({_NAME})\s*(?:\[[^\]]*\])?\s*@")
# What may follow a name in PEP 508 (or pip's looser reading): extras, a version
# clause (bare or parenthesized), markers, or nothing. Anything else is not a requirement.
_AFTER_NAME_RE = re.compile(r"\s*(?:$|[\[(=<>!~;])")
_TRAILING_OPTION_RE = re.compile(r"\s-")
_ARCHIVE_RE = re.compile(r"\.(?:tar\.gz|tgz|tar\.bz2|tbz2?|tar\.xz|txz|tar|zip)$", re.IGNORECASE)
_EGG_RE = re.compile(r"[#&]egg=([^&#\s]+)")

_LONG_OPTIONS = (
    "index-url",
    "extra-index-url",
    "find-links",
    "no-index",
    "requirement",
    "constraint",
    "editable",
    "no-binary",
    "only-binary",
    "prefer-binary",
    "require-hashes",
    "pre",
    "trusted-host",
    "use-feature",
    "global-option",
    "config-settings",
    "hash",
)
_INDEX_OPTIONS = {"index-url", "extra-index-url", "find-links", "i", "f"}
_EDITABLE_OPTIONS = {"editable", "e"}


def _parse_pip_line(line: str, allow_options: bool) -> tuple[str, str, str] | None:
    """(kind, name, spec) of one logical requirements-file line, or None to skip it.

    Never raises: manifests in the wild contain junk, and one junk line must not hide
    the CUDA wheel on the next.
    """
    line = line.strip()
    if not line:
        return None
    if line.startswith("-"):
        return _parse_option_line(line) if allow_options else None
    return _parse_requirement(line)


def _parse_option_line(line: str) -> tuple[str, str, str] | None:
    if line.startswith("--"):
        found = re.match(r"--([A-Za-z][A-Za-z0-9-]*)", line)
        if not found:
            return None
        given = found.group(1).lower()
        rest = line[found.end() :]
        if rest.startswith("="):
            rest = rest[1:]
        elif rest and not rest[0].isspace():
            return None
        # optparse accepts any unambiguous prefix of a long option, and so does pip.
        candidates = [o for o in _LONG_OPTIONS if o.startswith(given)]
        option = given if given in _LONG_OPTIONS else (candidates[0] if len(candidates) == 1 else given)
    else:
        if len(line) < 2 or not line[1].isalpha():
            return None
        option = line[1]
        rest = line[2:].lstrip()
        if rest.startswith("="):
            rest = rest[1:]
    tokens = rest.split()
    if not tokens:
        return None
    value = tokens[0]
    if option in _INDEX_OPTIONS:
        return ("index", "", value)
    if option in _EDITABLE_OPTIONS:
        # Only a VCS URL naming its egg says which package it installs; a local path
        # is the project itself (or a sibling scanned on its own).
        name = _egg_name(value)
        return ("package", name, value) if name else None
    return None


def _egg_name(location: str) -> str | None:
    found = _EGG_RE.search(location)
    if not found:
        return None
    egg = found.group(1).split("[", 1)[0]
    return normalize_name(egg) if _NAME_RE.fullmatch(egg) else None


def _parse_requirement(text: str) -> tuple[str, str, str] | None:
    # pip stops the requirement at the first whitespace-separated token that starts
    # with '-' (per-requirement options such as --hash); those are not the spec.
    cut = _TRAILING_OPTION_RE.search(text)
    requirement = (text[: cut.start()] if cut else text).strip()
    if not requirement:
        return None
    named_url = _NAME_AT_RE.match(requirement)
    if named_url:
        name = named_url.group(1)
        return ("package", normalize_name(name), requirement[len(name) :].strip())
    # URLs may contain ';', so pip only treats "; " (or " ;") as their marker separator.
    location = re.split(r";\s|\s;", requirement, maxsplit=1)[0].strip()
    if _looks_like_location(location):
        name = _name_from_location(location)
        return ("package", name, requirement) if name else None
    found = _NAME_RE.match(requirement)
    if not found or not _AFTER_NAME_RE.match(requirement, found.end()):
        return None
    return ("package", normalize_name(found.group(0)), requirement[found.end() :].strip())


def _looks_like_location(text: str) -> bool:
    return (
        "://" in text
        or text.startswith((".", "/", "~", "\\"))
        or text.lower().startswith("file:")
        or "/" in text
        or "\\" in text
        or bool(_ARCHIVE_RE.search(text))
        or text.lower().endswith(".whl")
    )


def _name_from_location(location: str) -> str | None:
    """The project name a bare URL or path installs, read from `#egg=` or the file name.

    Wheel names escape dashes inside the project name, so the first dash-separated
    field is the name. Old sdists did not (`flash-attn-2.5.6.tar.gz`), so for them the
    name runs up to the first dash followed by a digit.
    """
    egg = _egg_name(location)
    if egg:
        return egg
    path = location.split("#", 1)[0].split("?", 1)[0].rstrip("/\\")
    base = unquote(re.split(r"[/\\]", path)[-1])
    if base.lower().endswith(".whl"):
        fields = base[:-4].split("-")
        if len(fields) < 2:  # not even name-version: not a wheel file name
            return None
        candidate = fields[0]
    else:
        archive = _ARCHIVE_RE.search(base)
        if not archive:
            return None
        stem = base[: archive.start()]
        versioned = re.match(r"(.+?)-\d", stem)
        if not versioned:
            return None
        candidate = versioned.group(1)
    return normalize_name(candidate) if _NAME_RE.fullmatch(candidate) else None


# --------------------------------------------------------------------------- requirements.txt


def _logical_lines(t: LineIndex) -> Iterator[tuple[str, list[int]]]:
    """pip's line joining: a line ending in a backslash continues on the next one.

    Yields the joined text with, for every character, its offset in the file, so
    positions survive the joining.
    """
    chars: list[str] = []
    offsets: list[int] = []
    for number, content in enumerate(t.lines(), start=1):
        base = t.starts[number - 1]
        is_comment = re.match(r"\s*#", content) is not None
        if is_comment:
            # A comment ends a continuation and contributes nothing.
            if chars:
                yield "".join(chars), offsets
                chars, offsets = [], []
            continue
        continued = content.endswith("\\")
        piece = content.rstrip("\\") if continued else content
        chars.extend(piece)
        offsets.extend(range(base, base + len(piece)))
        if not continued:
            yield "".join(chars), offsets
            chars, offsets = [], []
    if chars:
        yield "".join(chars), offsets


def _parse_requirements_txt(text: str) -> list[Requirement]:
    t = LineIndex(text)
    found: list[Requirement] = []
    for joined, offsets in _logical_lines(t):
        content = _strip_comment(joined)
        stripped = content.strip()
        if not stripped:
            continue
        parsed = _parse_pip_line(stripped, allow_options=True)
        if parsed is None:
            continue
        first = len(content) - len(content.lstrip())
        last = first + len(stripped) - 1
        found.append(_make(t, parsed, stripped, "pip", offsets[first], offsets[last] + 1))
    return found


# --------------------------------------------------------------------------- pyproject.toml

def _as_table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _parse_pyproject(text: str) -> list[Requirement]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # The position goes into `line`; the message stays one short line for reports.
        error = toml_syntax_error(exc, text)
        raise ManifestError(f"invalid TOML: {error.detail}", error.line) from None
    except RecursionError:
        raise ManifestError("invalid TOML: nested too deeply") from None
    except ValueError as exc:  # not a TOMLDecodeError: e.g. an integer over int()'s digit limit
        raise ManifestError(f"invalid TOML: {str(exc).splitlines()[0] if str(exc) else 'bad value'}") from None
    loc = TomlLocator(text)
    found: list[Requirement] = []

    def pep508(table: tuple[str, ...], keys: tuple[str, ...], values: Any, extra: str | None = None) -> None:
        anchor = loc.anchor(table, keys)
        cursor = anchor.start
        for value in _as_list(values):
            if not isinstance(value, str):
                continue  # e.g. PEP 735 {include-group = "..."}
            parsed = _parse_pip_line(value, allow_options=False)
            if parsed is None:
                continue
            span = loc.find_string(value, cursor, anchor.end)
            if span is None:
                span = loc.fallback_span(anchor.fallback)
            else:
                cursor = span[1]
            found.append(_make(loc.index, parsed, value, "pip", *span, extra=extra))

    def index(table: tuple[str, ...], keys: tuple[str, ...], url: Any, occurrence: int = 0) -> None:
        if not isinstance(url, str) or not url.strip():
            return
        anchor = loc.anchor(table, keys, occurrence)
        span = loc.find_string(url, anchor.start, anchor.end) or loc.fallback_span(anchor.fallback)
        found.append(_make(loc.index, ("index", "", url.strip()), url, "pip", *span))

    project = _as_table(data.get("project"))
    pep508(("project",), ("dependencies",), project.get("dependencies"))
    for group, values in _as_table(project.get("optional-dependencies")).items():
        pep508(("project", "optional-dependencies"), (group,), values, extra=str(group))
    for group, values in _as_table(data.get("dependency-groups")).items():
        pep508(("dependency-groups",), (group,), values)
    pep508(("build-system",), ("requires",), _as_table(data.get("build-system")).get("requires"))

    tool = _as_table(data.get("tool"))
    poetry = _as_table(tool.get("poetry"))
    poetry_tables: list[tuple[tuple[str, ...], Any, str | None]] = [
        (("tool", "poetry", "dependencies"), poetry.get("dependencies"), None),
        (("tool", "poetry", "dev-dependencies"), poetry.get("dev-dependencies"), None),
    ]
    for group, body in _as_table(poetry.get("group")).items():
        optional_group = str(group) if _as_table(body).get("optional") is True else None
        poetry_tables.append((("tool", "poetry", "group", group, "dependencies"), _as_table(body).get("dependencies"), optional_group))
    # `[tool.poetry.extras]` names the extras that pull in each `optional = true` dependency.
    poetry_extras: dict[str, str] = {}
    for extra_name, members in _as_table(poetry.get("extras")).items():
        for member in _as_list(members):
            if isinstance(member, str):
                poetry_extras.setdefault(normalize_name(member), str(extra_name))
    for table, deps, group_extra in poetry_tables:
        anchor = loc.anchor(table)
        for key, value in _as_table(deps).items():
            if key.lower() == "python":
                continue
            spec = _render_poetry_spec(value)
            span = loc.find_key_line(key, anchor.start, anchor.end) or loc.fallback_span(anchor.fallback)
            raw = text[span[0] : span[1]] or key
            name = normalize_name(key)
            extra = group_extra
            if extra is None and _poetry_optional(value):
                extra = poetry_extras.get(name, "optional")
            found.append(_make(loc.index, ("package", name, spec), raw, "pip", *span, extra=extra))
    for number, source in enumerate(_as_list(poetry.get("source"))):
        index(("tool", "poetry", "source"), ("url",), _as_table(source).get("url"), number)

    uv = _as_table(tool.get("uv"))
    pep508(("tool", "uv"), ("dev-dependencies",), uv.get("dev-dependencies"))
    for number, entry in enumerate(_as_list(uv.get("index"))):
        index(("tool", "uv", "index"), ("url",), _as_table(entry).get("url"), number)
    index(("tool", "uv"), ("index-url",), uv.get("index-url"))
    for key in ("extra-index-url", "find-links"):
        value = uv.get(key)
        for url in [value] if isinstance(value, str) else _as_list(value):
            index(("tool", "uv"), (key,), url)
    return found


_POETRY_SPEC_FIELDS = ("version", "url", "git", "path", "source")


def _poetry_optional(value: Any) -> bool:
    """`{version = "...", optional = true}`, or a list of such constraints all optional."""
    if isinstance(value, dict):
        return value.get("optional") is True
    if isinstance(value, list) and value:
        return all(_poetry_optional(v) for v in value)
    return False


def _render_poetry_spec(value: Any) -> str:
    """Poetry constraints are TOML values, not strings; rules match on text, so render
    the fields that can carry a CUDA signal (version, wheel URL, source) as text."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict):
        return ", ".join(f"{k}={value[k]}" for k in _POETRY_SPEC_FIELDS if isinstance(value.get(k), str))
    if isinstance(value, list):
        return " | ".join(r for r in (_render_poetry_spec(v) for v in value) if r)
    return ""


# --------------------------------------------------------------------------- setup.py

_SETUP_KEYWORDS = ("install_requires", "setup_requires", "tests_require")
_MAX_RESOLVE_DEPTH = 16
_MAX_RESOLVE_STEPS = 10_000
"""Names bound to lists of names can fan out: ten lines of `a2 = [*a1, *a1, ...]` ask for
10**10 steps. A real setup.py resolves in well under a hundred; past this budget the rest
of the file's values are left unread rather than hanging the scan."""


class _SetupReader:
    """Static reading of `setup(...)` calls: literals and names bound to literals only.

    Anything computed (file reads, function calls) is skipped on purpose: guessing at
    runtime values would produce positions that point at nothing the user wrote.
    """

    def __init__(self, text: str, tree: ast.Module) -> None:
        self.text = text
        self.t = LineIndex(text)
        self.steps = 0
        self.bindings: dict[str, list[tuple[int, ast.expr]]] = {}
        for statement in tree.body:
            targets: list[ast.expr] = []
            value: ast.expr | None = None
            if isinstance(statement, ast.Assign):
                targets, value = statement.targets, statement.value
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                targets, value = [statement.target], statement.value
            for target in targets:
                if isinstance(target, ast.Name) and value is not None:
                    self.bindings.setdefault(target.id, []).append((statement.lineno, value))

    def lookup(self, name: str, before: int) -> tuple[int, ast.expr] | None:
        """The last module-level binding above `before`; failing that, the last one at
        all (a `setup()` inside a function defined early may run after it)."""
        bound = self.bindings.get(name)
        if not bound:
            return None
        earlier = [b for b in bound if b[0] < before]
        return earlier[-1] if earlier else bound[-1]

    def strings(self, node: ast.expr, before: int, depth: int = 0) -> list[ast.Constant]:
        """String literals a requirements value is built from, as far as it is static."""
        self.steps += 1
        if depth > _MAX_RESOLVE_DEPTH or self.steps > _MAX_RESOLVE_STEPS:
            return []
        if isinstance(node, ast.Constant):
            return [node] if isinstance(node.value, str) else []
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            out: list[ast.Constant] = []
            for element in node.elts:
                inner = element.value if isinstance(element, ast.Starred) else element
                out.extend(self.strings(inner, before, depth + 1))
            return out
        if isinstance(node, ast.Name):
            bound = self.lookup(node.id, before)
            return self.strings(bound[1], bound[0], depth + 1) if bound else []
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.strings(node.left, before, depth + 1) + self.strings(node.right, before, depth + 1)
        return []

    def dict_items(self, node: ast.expr, before: int, depth: int = 0) -> list[tuple[str, ast.expr]]:
        """(extra name, value) of an `extras_require` mapping; a key that is not a string
        literal is named "?" (still an extra: only installed on request)."""
        self.steps += 1
        if depth > _MAX_RESOLVE_DEPTH or self.steps > _MAX_RESOLVE_STEPS:
            return []
        if isinstance(node, ast.Dict):
            out: list[tuple[str, ast.expr]] = []
            for key, value in zip(node.keys, node.values):
                if key is None:  # `**OTHER`: its items are extras too
                    out.extend(self.dict_items(value, before, depth + 1))
                else:
                    out.append((key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else "?", value))
            return out
        if isinstance(node, ast.Name):
            bound = self.lookup(node.id, before)
            return self.dict_items(bound[1], bound[0], depth + 1) if bound else []
        return []

    def offset(self, line: int, byte_column: int) -> int:
        """`ast` columns are UTF-8 byte offsets; reports need character columns."""
        content = self.t.line_text(line)
        prefix = content.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore")
        return self.t.starts[line - 1] + len(prefix)

    def requirements(self, node: ast.Constant, extra: str | None = None) -> list[Requirement]:
        """One entry per requirement line of the string (pkg_resources reads a string
        as newline-separated requirements), each spanning its text inside the quotes."""
        if node.end_lineno is None or node.end_col_offset is None:
            return []
        start = self.offset(node.lineno, node.col_offset)
        end = self.offset(node.end_lineno, node.end_col_offset)
        opening = re.match(r"[rRbBuUfF]*('''|\"\"\"|'|\")", self.text[start:end])
        content_start = start + opening.end() if opening else start
        content_end = end - len(opening.group(1)) if opening else end
        content_end = max(content_end, content_start)
        cursor = content_start
        out: list[Requirement] = []
        value = node.value if isinstance(node.value, str) else ""
        for line in value.splitlines():
            entry = _strip_comment(line).strip()
            if not entry:
                continue
            parsed = _parse_pip_line(entry, allow_options=False)
            if parsed is None:
                continue
            at = self.text.find(entry, cursor, content_end)
            if at >= 0:
                span = (at, at + len(entry))
                cursor = span[1]
            else:  # escapes or implicit concatenation: fall back to the whole literal
                span = (content_start, content_end)
            out.append(_make(self.t, parsed, entry, "pip", *span, extra=extra))
        return out


def _is_setup_callee(func: ast.expr) -> bool:
    """`setup(...)`, `setuptools.setup(...)`, `distutils.core.setup(...)`: matched by
    name, since resolving imports statically buys nothing for a file this small."""
    return (isinstance(func, ast.Name) and func.id == "setup") or (
        isinstance(func, ast.Attribute) and func.attr == "setup"
    )


def _parse_setup_py(text: str) -> list[Requirement]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes etc. are the project's business
            tree = ast.parse(text, filename="setup.py")
    except SyntaxError as exc:
        raise ManifestError(f"invalid Python: {exc.msg}", exc.lineno) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ManifestError(f"cannot parse setup.py: {exc}") from None
    reader = _SetupReader(text, tree)
    found: list[Requirement] = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or not _is_setup_callee(call.func):
            continue
        for keyword in call.keywords:
            values: list[tuple[str | None, ast.expr]]
            if keyword.arg in _SETUP_KEYWORDS:
                values = [(None, keyword.value)]
            elif keyword.arg == "extras_require":
                values = list(reader.dict_items(keyword.value, call.lineno))
            else:
                continue
            for extra, value in values:
                for string in reader.strings(value, call.lineno):
                    found.extend(reader.requirements(string, extra))
    return found


# --------------------------------------------------------------------------- setup.cfg

_CFG_REQUIREMENT_KEYS = {"install_requires", "setup_requires", "tests_require"}
_MARKER_START_RE = re.compile(
    r"(?:python_version|python_full_version|os_name|sys_platform|platform_release|platform_system"
    r"|platform_version|platform_machine|platform_python_implementation|implementation_name"
    r"|implementation_version|extra)\b|[(\"']"
)


@dataclass(slots=True)
class _CfgPiece:
    line: int
    start: int
    """0-based character index in the line."""
    text: str


def _parse_setup_cfg(text: str) -> list[Requirement]:
    """A minimal INI reader, because `configparser` forgets line numbers.

    Mirrors setuptools: a multi-line value holds one requirement per line; a value
    written on the key line alone is split at ';' (setuptools does that too), except
    that a ';' starting an environment marker is kept with its requirement.
    """
    t = LineIndex(text)
    found: list[Requirement] = []
    section: str | None = None
    collecting = False
    key_indent = -1
    pieces: list[_CfgPiece] = []
    extra: str | None = None

    def flush() -> None:
        entries: list[_CfgPiece] = []
        if len(pieces) == 1:
            entries = _split_semicolons(pieces[0])
        else:
            entries = pieces
        for piece in entries:
            entry = _strip_comment(piece.text)
            stripped = entry.strip()
            if not stripped or stripped.startswith("#"):
                continue
            parsed = _parse_pip_line(stripped, allow_options=False)
            if parsed is None:
                continue
            lead = len(entry) - len(entry.lstrip())
            start = t.starts[piece.line - 1] + piece.start + lead
            found.append(_make(t, parsed, stripped, "pip", start, start + len(stripped), extra=extra))
        pieces.clear()

    for number, content in enumerate(t.lines(), start=1):
        stripped = content.strip()
        if not stripped or stripped[0] in "#;":
            continue  # configparser lets blank and comment lines sit inside a value
        indent = len(content) - len(content.lstrip())
        if key_indent >= 0 and indent > key_indent:
            if collecting:
                pieces.append(_CfgPiece(number, indent, content[indent:].rstrip()))
            continue
        if collecting:
            flush()
        collecting, key_indent = False, -1
        header = re.fullmatch(r"\[(.+)\]", stripped)
        if header:
            section = header.group(1).strip()
            continue
        delimiter = re.search(r"[=:]", content)
        if not delimiter:
            continue
        key = content[: delimiter.start()].strip().lower().replace("-", "_")
        key_indent = indent
        collecting = (section == "options" and key in _CFG_REQUIREMENT_KEYS) or section == "options.extras_require"
        extra = content[: delimiter.start()].strip() if section == "options.extras_require" else None
        value = content[delimiter.end() :]
        if collecting and value.strip():
            if value.strip().startswith("file:"):
                collecting = False  # the referenced file is a manifest scanned on its own
            else:
                lead = len(value) - len(value.lstrip())
                pieces.append(_CfgPiece(number, delimiter.end() + lead, value.strip()))
    if collecting:
        flush()
    return found


def _split_semicolons(piece: _CfgPiece) -> list[_CfgPiece]:
    parts: list[_CfgPiece] = []
    position = 0
    for chunk in piece.text.split(";"):
        if parts and _MARKER_START_RE.match(chunk.strip()):
            previous = parts[-1]
            parts[-1] = _CfgPiece(previous.line, previous.start, previous.text + ";" + chunk)
        else:
            parts.append(_CfgPiece(piece.line, piece.start + position, chunk))
        position += len(chunk) + 1
    return parts


# --------------------------------------------------------------------------- conda environment files

_YAML_STR = "tag:yaml.org,2002:str"
_CONDA_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


def _parse_conda_spec(value: str) -> tuple[str, str, str] | None:
    """`channel::name=1.2=build`, `name>=1`, `name 1.2.*`, `name[version='>=1']`."""
    body = value.strip().rsplit("::", 1)[-1].strip()
    cut = re.search(r"[=<>!~\[\s]", body)
    name = body[: cut.start()] if cut else body
    if not _CONDA_NAME_RE.fullmatch(name):
        return None
    return ("package", normalize_name(name), body[len(name) :].strip())


def _yaml_error_line(exc: yaml.YAMLError, text: str) -> int | None:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        return mark.line + 1 if mark is not None else None
    if isinstance(exc, yaml.reader.ReaderError):
        return LineIndex(text).position(min(exc.position, len(text)))[0]
    return None


def _yaml_error_message(exc: yaml.YAMLError) -> str:
    """PyYAML's str() spans several lines with source excerpts; reports want one line."""
    if isinstance(exc, yaml.MarkedYAMLError):
        parts = [p for p in (exc.context, exc.problem) if p]
        if parts:
            return ": ".join(parts)
    if isinstance(exc, yaml.reader.ReaderError):
        return f"unacceptable character #x{exc.character:04x}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _scalar_span(t: LineIndex, node: yaml.ScalarNode) -> tuple[int, int]:
    """The scalar's text; for a one-line quoted scalar, inside the quotes (as for TOML
    and Python strings)."""
    start = t.offset(node.start_mark.line + 1, node.start_mark.column + 1)
    end = t.offset(node.end_mark.line + 1, node.end_mark.column + 1)
    if node.style in ("'", '"') and node.start_mark.line == node.end_mark.line and end - start >= 2:
        return start + 1, end - 1
    return start, end


def _mapping_get(node: yaml.Node, key: str) -> list[yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        return []
    return [v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key]


def _string_items(node: yaml.Node) -> Iterable[yaml.Node]:
    return node.value if isinstance(node, yaml.SequenceNode) else []


def _parse_conda_env(text: str) -> list[Requirement]:
    loader: yaml.SafeLoader | None = None
    try:
        loader = yaml.SafeLoader(text)  # already checks for unprintable characters
        root = loader.get_single_node()
        if root is not None:
            # Construct once with the safe constructor purely to reject tags it does not
            # know (`!!python/object` and friends) the way `yaml.safe_load` would. The
            # result is discarded: positions come from the nodes.
            loader.construct_document(root)
    except yaml.YAMLError as exc:
        raise ManifestError(f"invalid YAML: {_yaml_error_message(exc)}", _yaml_error_line(exc, text)) from None
    except RecursionError:
        raise ManifestError("invalid YAML: nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()
    if root is None:
        return []
    t = LineIndex(text, YAML_LINE_BREAKS)
    found: list[Requirement] = []
    for dependencies in _mapping_get(root, "dependencies"):
        for item in _string_items(dependencies):
            if isinstance(item, yaml.ScalarNode):
                if item.tag != _YAML_STR:
                    continue
                parsed = _parse_conda_spec(_strip_comment(item.value))
                if parsed is not None:
                    found.append(_make(t, parsed, item.value, "conda", *_scalar_span(t, item)))
                continue
            for pip_list in _mapping_get(item, "pip"):
                for entry in _string_items(pip_list):
                    if not isinstance(entry, yaml.ScalarNode) or entry.tag != _YAML_STR:
                        continue
                    parsed = _parse_pip_line(_strip_comment(entry.value), allow_options=True)
                    if parsed is not None:
                        found.append(_make(t, parsed, entry.value, "pip", *_scalar_span(t, entry)))
    return found
