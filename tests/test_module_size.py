"""No module in the package over 600 lines: a module that long is doing two jobs (issue
13 found five manifest parsers and a TOML locator in one file, and a TOML lexer and the
`init` writer inside config.py)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tpucheck"
LIMIT = 600


def line_counts() -> dict[str, int]:
    return {path.relative_to(PACKAGE).as_posix(): len(path.read_bytes().splitlines()) for path in sorted(PACKAGE.rglob("*.py"))}


def test_no_module_over_the_limit() -> None:
    assert {name: count for name, count in line_counts().items() if count > LIMIT} == {}
