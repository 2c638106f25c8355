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
