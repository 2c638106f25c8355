"""pyproject.toml: PEP 621 dependencies and extras, dependency groups, build requires,
poetry tables and sources, and uv's indexes; positions recovered by `TomlLocator`."""

from __future__ import annotations

import sys
from typing import Any

from tpucheck.analyze.manifests.model import ManifestError, Requirement, make_requirement
from tpucheck.analyze.manifests.pip import parse_pip_line
from tpucheck.discover.textpos import TomlLocator, toml_syntax_error
from tpucheck.ruleset.names import normalize_package

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def _as_table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def parse_pyproject(text: str) -> list[Requirement]:
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
            parsed = parse_pip_line(value, allow_options=False)
            if parsed is None:
                continue
            span = loc.find_string(value, cursor, anchor.end)
            if span is None:
                span = loc.fallback_span(anchor.fallback)
            else:
                cursor = span[1]
            found.append(make_requirement(loc.index, parsed, value, "pip", *span, extra=extra))

    def index(table: tuple[str, ...], keys: tuple[str, ...], url: Any, occurrence: int = 0) -> None:
        if not isinstance(url, str) or not url.strip():
            return
        anchor = loc.anchor(table, keys, occurrence)
        span = loc.find_string(url, anchor.start, anchor.end) or loc.fallback_span(anchor.fallback)
        found.append(make_requirement(loc.index, ("index", "", url.strip()), url, "pip", *span))

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
                poetry_extras.setdefault(normalize_package(member), str(extra_name))
    for table, deps, group_extra in poetry_tables:
        anchor = loc.anchor(table)
        for key, value in _as_table(deps).items():
            if key.lower() == "python":
                continue
            spec = _render_poetry_spec(value)
            span = loc.find_key_line(key, anchor.start, anchor.end) or loc.fallback_span(anchor.fallback)
            raw = text[span[0] : span[1]] or key
            name = normalize_package(key)
            extra = group_extra
            if extra is None and _poetry_optional(value):
                extra = poetry_extras.get(name, "optional")
            found.append(make_requirement(loc.index, ("package", name, spec), raw, "pip", *span, extra=extra))
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
