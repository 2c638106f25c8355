"""Rule messages cut down for places with little room: one sentence, a length limit."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`\"])")


def first_sentence(text: str) -> str:
    """The first sentence, whitespace folded: a finding's line or a rule's summary."""
    return " ".join(_SENTENCE_END.split(text.strip(), maxsplit=1)[0].split())


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
