"""Shared by the Hugging Face codemods: rewrite one `keyword=value` argument a finding
points at."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from tpucheck.fix.base import Edit, FileFix, Target
from tpucheck.fix.versions import Version

Rewrite = Callable[[cst.Arg, FileFix, Target], "cst.Arg | cst.RemovalSentinel | str"]
"""The new argument, REMOVE to drop it, or why it cannot be fixed."""


def keyword_edit(
    codemod: str, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix, rewrite: Rewrite, note: Callable[[cst.Arg], str], needs: Version | None = None, uses: str | None = None
) -> Edit | None:
    if not (isinstance(original, cst.Arg) and isinstance(updated, cst.Arg)):
        return None
    target = fix.take_keyword(codemod, original)
    if target is None:
        return None
    new = rewrite(updated, fix, target)
    if isinstance(new, str):
        fix.skip(target, new)
        return None
    if needs is not None and not fix.allows(needs):
        fix.skip_pinned(target, needs, uses or "this fix")
        return None
    return Edit(new, (target,), note(updated), needs, uses)


def string_value(arg: cst.Arg) -> str | None:
    value = arg.value
    if isinstance(value, cst.SimpleString) and "b" not in value.prefix.lower():
        evaluated = value.evaluated_value
        return evaluated if isinstance(evaluated, str) else None
    return None


def with_string(arg: cst.Arg, text: str) -> cst.Arg:
    """`arg` with its string value replaced, in the same quotes."""
    value = arg.value
    assert isinstance(value, cst.SimpleString)
    return arg.with_changes(value=value.with_changes(value=f"{value.prefix}{value.quote}{text}{value.quote}"))
