"""requirements*.txt: pip's line joining and options, positions kept across joins."""

from __future__ import annotations

import re
from collections.abc import Iterator

from tpucheck.analyze.manifests.model import Requirement, make_requirement, strip_comment
from tpucheck.analyze.manifests.pip import parse_pip_line
from tpucheck.discover.textpos import LineIndex


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


def parse_requirements_txt(text: str) -> list[Requirement]:
    t = LineIndex(text)
    lines = t.lines() if "via" in text else []
    found: list[Requirement] = []
    for joined, offsets in _logical_lines(t):
        content = strip_comment(joined)
        stripped = content.strip()
        if not stripped:
            continue
        parsed = parse_pip_line(stripped, allow_options=True)
        if parsed is None:
            continue
        first = len(content) - len(content.lstrip())
        last = first + len(stripped) - 1
        requirement = make_requirement(t, parsed, stripped, "pip", offsets[first], offsets[last] + 1)
        if not _transitive(lines, requirement.end_line):
            found.append(requirement)
    return found


_VIA = re.compile(r"\s*#\s*via\b(.*)")
_VIA_MORE = re.compile(r"\s*#\s+(\S.*)")


def _transitive(lines: list[str], end_line: int) -> bool:
    """A pin that a lock file (pip-compile, `uv pip compile`) says is there only because
    another package needs it (`triton==3.1.0` then `# via torch`): that package's choice,
    judged where it is asked for. A pin `via -r requirements.in` is the project's own."""
    if end_line >= len(lines):
        return False
    via = _VIA.match(lines[end_line])
    if via is None:
        return False
    sources = [via.group(1).strip()] if via.group(1).strip() else []
    for line in lines[end_line + 1 :]:
        more = _VIA_MORE.match(line)
        if more is None or _VIA.match(line):
            break
        sources.append(more.group(1).strip())
    return bool(sources) and not any(source.startswith(("-r", "-c")) for source in sources)


_BASE_REQUIREMENTS = frozenset({"requirements", "base", "main", "runtime", "install", "core", "default", "prod", "production", "common"})
_REQUIREMENTS_AFFIX = re.compile(r"(?i)^(?:requirements[-_.](?P<after>.+)|(?P<before>.+?)[-_.]requirements)\.(?:txt|in)$")


def requirements_extra(relpath: str) -> str | None:
    """The optional set a requirements file holds, by its name: `requirements-mamba.txt`,
    `dev-requirements.txt` and `requirements/docs.txt` are installed on request, as an
    extra is; `requirements.txt`, `requirements/base.txt` or `runtime.txt` are the product's."""
    parts = relpath.replace("\\", "/").split("/")
    name = parts[-1]
    if len(parts) > 1 and parts[-2].lower() == "requirements":
        stem = name.rsplit(".", 1)[0].lower()
        return None if stem in _BASE_REQUIREMENTS else stem
    match = _REQUIREMENTS_AFFIX.match(name)
    if match is None:
        return None
    extra = (match.group("after") or match.group("before") or "").lower()
    return None if extra in _BASE_REQUIREMENTS else extra
