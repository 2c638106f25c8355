"""Project settings: `[tool.tpucheck]` in pyproject.toml, or the top-level keys of
tpucheck.toml (no table header, as in ruff.toml).

A bad config never stops a scan: a CI job should not break because someone typed
`fail-undr`, and it should not silently ignore the typo either. So nothing here raises
for bad content or an unreadable file. `load_config` returns a `Config` holding the
settings that validated and one `ConfigProblem` per thing that did not; a key with a
wrong value is dropped, as if unset. Problems name the file, the line where it can be
found (tomllib gives no positions, so the text is scanned for the key) and the key.

API
---
find_config(start: Path) -> Path | None
    Walks up from `start` (itself if a directory, else its parent; made absolute
    lexically, so `..` means what it meant to the user) to the filesystem root. In each
    directory tpucheck.toml wins over pyproject.toml; a pyproject.toml without a
    `[tool.tpucheck]` table is passed over. The first found is the config.
load_config(start=None, *, explicit=None, formats=None) -> Config
    `explicit` is `--config FILE`: read as `[tool.tpucheck]` when named pyproject.toml,
    as top-level keys otherwise; no walking. `formats` overrides the report format names
    `format` is checked against (default: `tpucheck.config.formats.FORMAT_NAMES`).
Config
    The settings (None or () when unset), `problems`, `root` (the config's directory)
    and `without_unknown_rule_refs(is_known)`, for once the rule set is loaded.
ConfigProblem
    `str()` is one line: `pyproject.toml:12: [tool.tpucheck] fail-under: expected a
    number from 0 to 100, got "80"`; without a line, `file: ...`; file-level problems
    (unreadable, syntax) have no key: `tpucheck.toml:3: invalid TOML: ...`.

`tpucheck init`'s starter config is written by `tpucheck.config.init_template`.

Keys and what a valid value becomes: `select`, `ignore` (lists of rule refs);
`per-file-ignores` (table: gitignore glob -> list of rule refs; a bad entry is dropped
alone); `exclude` (list of gitignore patterns; a bad pattern is dropped alone);
`extend-rules` (list of paths or globs relative to the config's directory: a literal
path must exist, a glob must match at least one .yaml/.yml file, sorted; a bad entry is
dropped alone); `fail-under` (0..100), `fail-on` (a severity), `format`, `jobs` (>= 1),
`baseline`, `cache-dir` (paths relative to the config's directory, made absolute),
`max-file-size` (bytes >= 1), `file-time-budget` (seconds > 0), `cache`,
`respect-gitignore` (booleans). Types are strict: a bool is not a number, a string is
not a list.
"""

from __future__ import annotations

import difflib
import glob
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import pathspec

from tpucheck.config.formats import FORMAT_NAMES
from tpucheck.discover.textpos import TomlLocator, toml_syntax_error

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CONFIG_FILE = "tpucheck.toml"
PYPROJECT = "pyproject.toml"
TABLE = ("tool", "tpucheck")
RULE_SUFFIXES = (".yaml", ".yml")


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class ConfigProblem:
    """One thing wrong with a config file; `key` is empty for file-level problems."""

    file: str
    line: int | None
    key: str
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        if not self.key:
            return f"{where}: {self.message}"
        scope = "[tool.tpucheck] " if os.path.basename(self.file) == PYPROJECT else ""
        return f"{where}: {scope}{self.key}: {self.message}"


@dataclass(frozen=True)
class Config:
    """Valid settings only; None (or an empty tuple) means unset, so the command line
    or the built-in default decides. `path` is the config file chosen, even when it
    could not be read (then `problems` says why); None when there is none."""

    path: Path | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    extend_rules: tuple[Path, ...] = ()
    fail_under: float | None = None
    fail_on: str | None = None
    target: str | None = None
    format: str | None = None
    jobs: int | None = None
    baseline: Path | None = None
    max_file_size: int | None = None
    file_time_budget: float | None = None
    cache_dir: Path | None = None
    cache: bool | None = None
    respect_gitignore: bool | None = None
    problems: tuple[ConfigProblem, ...] = ()
    rule_ref_lines: tuple[tuple[str, str, int | None], ...] = field(default=(), repr=False, compare=False)
    """(key, rule ref, line): where each rule ref was written, so that refs found unknown
    once the rule set is loaded can still be reported at their line."""

    @property
    def root(self) -> Path | None:
        """The directory relative paths in the config are resolved against."""
        return None if self.path is None else self.path.parent

    def without_unknown_rule_refs(self, is_known: Callable[[str], bool]) -> Config:
        """Drops rule refs that name no rule and reports each one.

        Unknown refs can only be told once the rule set (with `extend-rules`) is loaded,
        and `select_rules` rightly refuses them on the command line; from a config they
        must not stop the scan. A `select` left empty becomes unset (all rules), a
        per-file-ignores entry left empty is dropped.
        """
        display = "" if self.path is None else display_path(self.path)
        lines = {(key, ref): line for key, ref, line in self.rule_ref_lines}
        problems = list(self.problems)

        def known(key: str, refs: Iterable[str]) -> tuple[str, ...]:
            kept = []
            for ref in refs:
                if is_known(ref):
                    kept.append(ref)
                else:
                    problems.append(ConfigProblem(display, lines.get((key, ref)), key, f"unknown rule {_show(ref)}: not a rule id, id prefix, name or category"))
            return tuple(kept)

        select = None if self.select is None else known("select", self.select)
        ignore = known("ignore", self.ignore)
        per_file = tuple((pattern, kept) for pattern, refs in self.per_file_ignores if (kept := known(_entry_key(pattern), refs)))
        return replace(
            self,
            select=select if select or self.select == () else None,
            ignore=ignore,
            per_file_ignores=per_file,
            problems=tuple(problems),
        )


class _Invalid(Exception):
    """A key's value is unusable: the key is dropped and the message reported."""


class _Unreadable(Exception):
    pass


# --------------------------------------------------------------------------- finding


def _walk_up(start: Path) -> list[Path]:
    here = Path(os.path.abspath(start))
    if not here.is_dir():
        here = here.parent
    return [here, *here.parents]


def find_config(start: Path) -> Path | None:
    """The nearest config above `start`, as ruff finds its own: settings belong to the
    tree they sit in, so scanning a subdirectory still honours the project's."""
    for directory in _walk_up(start):
        own = directory / CONFIG_FILE
        if own.is_file():
            return own
        pyproject = directory / PYPROJECT
        if pyproject.is_file() and declares_table(pyproject):
            return pyproject
    return None


_TABLE_TEXT = re.compile(r"""^[ \t]*(?:\[[ \t]*){0,2}tool[ \t]*\.[ \t]*(?:tpucheck|"tpucheck"|'tpucheck')(?![\w-])""", re.MULTILINE)
"""`[tool.tpucheck]`, `[tool.tpucheck.per-file-ignores]` or a dotted key `tool.tpucheck.x =`
at the start of a line, closed or not: in a file TOML cannot parse, a header broken by
the very typo (`[tool.tpucheck`) still says whose table it was."""


def declares_table(pyproject: Path) -> bool:
    """Whether the file is meant as tpucheck's config. A file TOML cannot parse counts
    when its text shows the table, so the user hears about the syntax error rather than
    having their settings silently ignored; one that cannot be read does not count."""
    try:
        text = _read(pyproject)
    except _Unreadable:
        return False
    try:
        document = tomllib.loads(text)
    except (ValueError, RecursionError):
        return bool(_TABLE_TEXT.search(text))
    return has_table(document)


def has_table(document: dict[str, Any]) -> bool:
    tool = document.get("tool")
    return isinstance(tool, dict) and "tpucheck" in tool


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _Unreadable(f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None
    except OSError as exc:
        raise _Unreadable(exc.strerror or str(exc)) from None


def display_path(path: Path) -> str:
    """Relative to the working directory when inside it, as the user would type it."""
    try:
        relative = os.path.relpath(path)
    except (ValueError, OSError):
        return str(path)
    return str(path) if relative.split(os.sep)[0] == ".." else relative


# --------------------------------------------------------------------------- loading


def load_config(start: Path | None = None, *, explicit: Path | None = None, formats: Iterable[str] | None = None) -> Config:
    """The settings for a scan of `start` (default: the working directory), or of the
    `explicit` file; never raises for what a file holds or whether it can be read."""
    if explicit is not None:
        path = Path(os.path.abspath(explicit))
        if not os.path.lexists(path):
            return _file_problem(path, "no such config file")
        return _load_file(path, formats)
    found = find_config(Path.cwd() if start is None else start)
    return Config() if found is None else _load_file(found, formats)


def _file_problem(path: Path, message: str, line: int | None = None) -> Config:
    return Config(path=path, problems=(ConfigProblem(display_path(path), line, "", message),))


def _load_file(path: Path, formats: Iterable[str] | None) -> Config:
    try:
        text = _read(path)
    except _Unreadable as exc:
        return _file_problem(path, f"cannot read: {exc}")
    try:
        document = tomllib.loads(text)
    except (ValueError, RecursionError) as exc:
        message, line = _syntax_problem(exc, text)
        return _file_problem(path, message, line)
    locator = TomlLocator(text)
    if path.name != PYPROJECT:
        return _Checker(path, (), locator, formats).run(document)
    if not has_table(document):
        return _file_problem(path, "no [tool.tpucheck] table")
    settings = document["tool"]["tpucheck"]
    if not isinstance(settings, dict):
        return _file_problem(path, f"[tool.tpucheck] must be a table, got {_show(settings)}", locator.line_of(TABLE))
    return _Checker(path, TABLE, locator, formats).run(settings)


def _syntax_problem(exc: BaseException, text: str) -> tuple[str, int | None]:
    error = toml_syntax_error(exc, text)
    if error.column is not None:
        return f"invalid TOML: {error.detail} (column {error.column})", error.line
    if error.at_end:
        return f"invalid TOML: {error.detail} at the end of the file", error.line
    return f"invalid TOML: {error.detail}", error.line


class _Checker:
    """Validates one settings table, collecting values and problems so that each key's
    check stays a small function that either returns a value or raises `_Invalid`."""

    def __init__(self, path: Path, prefix: tuple[str, ...], locator: TomlLocator, formats: Iterable[str] | None) -> None:
        self.path = path
        self.directory = path.parent
        self.display = display_path(path)
        self.prefix = prefix
        self.locator = locator
        self._formats = None if formats is None else tuple(formats)
        self.problems: list[ConfigProblem] = []
        self.ref_lines: list[tuple[str, str, int | None]] = []

    def run(self, settings: dict[str, Any]) -> Config:
        """Each key checked against its part of the config's JSON Schema
        (tpucheck/schema/config.schema.json, which also documents it), then converted:
        paths resolved, rule refs recorded with their lines, patterns and globs checked
        entry by entry."""
        values: dict[str, Any] = {}
        properties = config_schema()["properties"]
        for key, value in settings.items():
            spec = properties.get(key)
            if spec is None:
                self.report(_key_text(key), self._unknown(key), self.line((key,)))
                continue
            try:
                _validate(spec, value, self.formats() if key == "format" else None)
                values[spec["x-attribute"]] = _CONVERT[spec.get("x-convert", "value")](value, self, key)
            except _Invalid as exc:
                self.report(key, str(exc), self.line((key,)))
        return Config(path=self.path, problems=tuple(self.problems), rule_ref_lines=tuple(self.ref_lines), **values)

    def report(self, key: str, message: str, line: int | None) -> None:
        self.problems.append(ConfigProblem(self.display, line, key, " ".join(message.split())))

    def line(self, keys: tuple[str, ...]) -> int | None:
        return self.locator.line_of(self.prefix + keys)

    def item_line(self, key: str, item: str) -> int | None:
        return self.locator.item_line(self.prefix + (key,), item)

    def resolve(self, value: str) -> Path:
        return Path(os.path.normpath(os.path.join(self.directory, os.path.expanduser(value))))

    def formats(self) -> tuple[str, ...]:
        if self._formats is None:
            self._formats = FORMAT_NAMES
        return self._formats

    def _unknown(self, key: str) -> str:
        hint = key.replace("_", "-") if key.replace("_", "-") in KNOWN_KEYS else None
        hint = hint or next(iter(difflib.get_close_matches(key, list(KNOWN_KEYS), n=1, cutoff=0.6)), None)
        if hint:
            return f"unknown key; did you mean {hint}?"
        if key == "tool" and not self.prefix:
            return "unknown key: this file takes its settings as top-level keys, without a [tool.tpucheck] header"
        return f"unknown key; known keys are {', '.join(KNOWN_KEYS)}"


# --------------------------------------------------------------------------- checks


@lru_cache(maxsize=1)
def config_schema() -> dict[str, Any]:
    """The config's JSON Schema: what each key takes, and what a wrong value is told."""
    return json.loads(resources.files("tpucheck").joinpath("schema/config.schema.json").read_text(encoding="utf-8"))


def _validate(spec: dict[str, Any], value: object, choices: tuple[str, ...] | None) -> None:
    """Raise `_Invalid` with the friendly message when `value` breaks `spec`: "expected
    <what the schema says>, got <the value as TOML writes it>", with a "did you mean" for
    a misspelt choice. Strict as TOML is: a bool is not a number."""
    if choices is not None or "enum" in spec:
        allowed = choices if choices is not None else tuple(spec["enum"])
        if isinstance(value, str) and value in allowed:
            return
        close = difflib.get_close_matches(value, allowed, n=1) if isinstance(value, str) else []
        hint = f"; did you mean {close[0]}?" if close else ""
        raise _Invalid(f"expected one of {', '.join(allowed)}, got {_show(value)}{hint}")
    wrong = (isinstance(value, bool) and spec.get("type") in ("number", "integer")) or (spec.get("type") == "integer" and not isinstance(value, int))
    finite = not spec.get("x-finite") or (isinstance(value, (int, float)) and math.isfinite(value))
    import jsonschema  # here, not at the top: only a configuration file's values need it (40 ms of start-up)

    if wrong or not finite or next(jsonschema.Draft202012Validator(spec).iter_errors(value), None) is not None:
        raise _Invalid(f"expected {spec['x-expected']}, got {_show(value)}")


def _refs(value: object) -> tuple[str, ...]:
    """Rule refs are stripped (as on the command line) and must not be blank."""
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise _Invalid(f"expected a list of rule ids, id prefixes, names or categories, got {_show(value)}")
    return tuple(dict.fromkeys(item.strip() for item in value))


def _rule_refs(value: object, checker: _Checker, key: str) -> tuple[str, ...]:
    refs = _refs(value)
    checker.ref_lines.extend((key, ref, checker.item_line(key, ref)) for ref in refs)
    return refs


def _exclude(value: object, checker: _Checker, key: str) -> tuple[str, ...]:
    """A bad pattern is dropped alone; negations are fine here, as in a .gitignore."""
    kept = []
    assert isinstance(value, list)
    for pattern in value:
        problem = _pattern_problem(pattern, negation=True)
        if problem is None:
            kept.append(pattern)
        else:
            checker.report(key, f"{_show(pattern)}: {problem}", checker.item_line(key, pattern))
    return tuple(kept)


def _pattern_problem(pattern: str, *, negation: bool) -> str | None:
    """Why `pattern` would crash the scan or silently match nothing, if it would."""
    if pattern.startswith("!") and not negation:
        return "a negated pattern cannot select files here"
    try:
        spec = _gitignore_spec(pattern)
    except (ValueError, re.error) as exc:
        reason = re.sub(r" at position \d+$", "", str(exc))
        return f"not a valid gitignore pattern ({reason})"
    if not any(p.include is not None for p in spec.patterns):
        return "not a pattern (blank, a # comment or unfinished)"
    return None


def _per_file_ignores(value: object, checker: _Checker, key: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    assert isinstance(value, dict)
    entries = []
    for pattern, refs in value.items():
        entry = _entry_key(pattern)
        line = checker.line((key, pattern))
        problem = _pattern_problem(pattern, negation=False)
        if problem is None:
            try:
                kept = _refs(refs)
            except _Invalid as exc:
                problem = str(exc)
        if problem is not None:
            checker.report(entry, problem, line)
            continue
        entries.append((pattern, kept))
        checker.ref_lines.extend((entry, ref, line) for ref in kept)
    return tuple(entries)


def _extend_rules(value: object, checker: _Checker, key: str) -> tuple[Path, ...]:
    """Deduplicated, and without files a listed directory already brings in: the loader
    reads every .yaml/.yml of a directory it is given, and a rule loaded twice is a
    duplicate-id error."""
    found: dict[Path, None] = {}
    assert isinstance(value, list)
    for entry in value:
        try:
            found.update(dict.fromkeys(_rule_paths(entry, checker.directory)))
        except _Invalid as exc:
            checker.report(key, str(exc), checker.item_line(key, entry))
    directories = {path for path in found if path.is_dir()}
    return tuple(path for path in found if not (path.parent in directories and path.suffix in RULE_SUFFIXES))


def _is_glob(text: str) -> bool:
    return any(char in text for char in "*?[")


def _rule_paths(entry: str, directory: Path) -> list[Path]:
    """A glob picks rule files (a directory to load is named literally); `**` recurses."""
    if not entry.strip():
        raise _Invalid("expected a path or glob, got an empty string")
    written = os.path.expanduser(entry)
    if not _is_glob(written):
        path = Path(os.path.normpath(os.path.join(directory, written)))
        if not os.path.exists(path):
            raise _Invalid(f"{_show(entry)}: no such file or directory ({path})")
        return [path]
    pattern = written if os.path.isabs(written) else os.path.join(glob.escape(str(directory)), written)
    hits = sorted(Path(os.path.normpath(hit)) for hit in glob.glob(pattern, recursive=True))
    files = [hit for hit in hits if hit.suffix in RULE_SUFFIXES and hit.is_file()]
    if not files:
        raise _Invalid(f"{_show(entry)} matches no .yaml or .yml file (looked in {directory})")
    return files


Convert = Callable[[Any, _Checker, str], Any]

_CONVERT: dict[str, Convert] = {
    "value": lambda value, checker, key: value,
    "float": lambda value, checker, key: float(value),
    "path": lambda value, checker, key: checker.resolve(value),
    "rule-refs": _rule_refs,
    "exclude": _exclude,
    "per-file-ignores": _per_file_ignores,
    "extend-rules": _extend_rules,
}
"""What a valid value becomes (the schema's `x-convert`; plain values stay as they are)."""

KNOWN_KEYS: tuple[str, ...] = tuple(config_schema()["properties"])


# --------------------------------------------------------------------------- showing


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _key_text(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _entry_key(pattern: str) -> str:
    """How a per-file-ignores entry is named in problems: a TOML dotted key."""
    return f"per-file-ignores.{json.dumps(pattern, ensure_ascii=False)}"


def _toml_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, list):
        return "[" + ", ".join(_toml_text(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key_text(k)} = {_toml_text(v)}" for k, v in value.items()) + "}"
    return str(value)


def _show(value: object, limit: int = 60) -> str:
    """The value as TOML spells it (a user wrote `true`, not `True`), kept short."""
    text = _toml_text(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------- per-file ignores


@lru_cache(maxsize=256)
def _gitignore_spec(pattern: str) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines([pattern])
