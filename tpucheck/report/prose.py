"""Rule messages cut down for places with little room: one sentence, a length limit."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`\"])")


def first_sentence(text: str) -> str:
    """The first sentence, whitespace folded: a finding's line or a rule's summary."""
    return " ".join(_SENTENCE_END.split(text.strip(), maxsplit=1)[0].split())


def shorten(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a space when one is near the end, never mid-word
    when it can be helped."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit * 0.6:
        cut = cut[:space]
    return cut.rstrip() + "…"


BRIEF_LIMIT = 72
"""Characters of a one-line summary (`--format concise`): with `path:line:col: RULE
[severity] `, a finding line stays near a hundred characters, as a linter's does."""


def brief(text: str, limit: int = BRIEF_LIMIT) -> str:
    """The gist of a message for a one-line report: its first sentence without
    parenthetical asides (a backquoted `f(x)` is kept whole), as many of its clauses
    (`;` / `:`) as fit in `limit` (a first clause under half of it takes the next one,
    shortened), and the first one shortened when even it does not fit."""
    kept: list[str] = []
    depth = 0
    code = False
    for char in first_sentence(text):
        if char == "`" and not depth:
            code = not code
        elif not code and char == "(":
            depth += 1
            continue
        elif not code and char == ")" and depth:
            depth -= 1
            continue
        if not depth:
            kept.append(char)
    plain = re.sub(r"\s+([,;:.])", r"\1", " ".join("".join(kept).split())).rstrip(" .")
    clauses = _CLAUSE.split(plain)
    summary = clauses[0]
    for separator, clause in zip(clauses[1::2], clauses[2::2], strict=True):
        if len(summary) + len(separator) + len(clause) > limit and len(summary) >= limit // 2:
            break  # a clause too short to say much alone takes (part of) the next one
        summary += separator + clause
    short = shorten(summary, limit)
    return short[:-1].rstrip(",;: ") + "…" if short.endswith("…") else short


_CLAUSE = re.compile(r"([;:] )(?=(?:[^`]*`[^`]*`)*[^`]*$)")
"""A clause break: `; ` or `: ` outside backquotes."""
