"""Matchers from their YAML mapping, and the prefilter strings (needles) a matcher
implies: the part of rule loading that knows what each matcher kind means."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from tpucheck.ruleset.model import CONFIG_FILES, LAUNCH_FILES, MATCHER_KINDS, ArgConstraint, Matcher
from tpucheck.ruleset.problems import Problems
from tpucheck.ruleset.versions import VersionRange


def as_patterns(value: str | list[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


def build_matcher(raw: dict[str, Any], path: tuple[str | int, ...], problems: Problems) -> Matcher | None:
    kind = next(k for k in raw if k in MATCHER_KINDS)
    args = []
    for index, arg in enumerate(raw.get("args", [])):
        value = problems.regex(arg["value"], (*path, "args", index, "value")) if "value" in arg else None
        if arg.get("missing") and "value" in arg:
            problems.add((*path, "args", index), "an argument cannot be both `missing` and have a `value`")
        if arg.get("any_expression") and value is None:
            problems.add((*path, "args", index, "any_expression"), "`any_expression` widens a `value`: give one")
        args.append(ArgConstraint(arg.get("name"), arg.get("position"), value, bool(arg.get("missing", False)), bool(arg.get("any_expression", False))))
    label = raw.get("label")
    common: dict[str, Any] = {
        "kind": kind,
        "args": tuple(args),
        "arity": raw.get("arity"),
        "max_args": raw.get("max_args"),
        "label": ArgConstraint(label.get("name"), label.get("position"), None) if label else None,
    }
    if kind == "string":
        regex = problems.regex(raw["string"], (*path, "string"))
        contexts = tuple(raw.get("context", ("argument", "assignment")))
        return Matcher(regex=regex, contexts=contexts, **common)
    if kind == "native":
        regex = problems.regex(raw["native"], (*path, "native"))
        macro_body = problems.regex(raw["macro_body"], (*path, "macro_body")) if "macro_body" in raw else None
        return Matcher(regex=regex, files=as_patterns(raw.get("files", ())), macro_body=macro_body, **common)
    patterns = as_patterns(raw[kind])
    matcher = Matcher(
        patterns=patterns,
        in_call=as_patterns(raw.get("in_call", ())),
        not_in_call=as_patterns(raw.get("not_in_call", ())),
        exclude=as_patterns(raw.get("except", ())),
        files=as_patterns(raw.get("files", ())),
        not_inside=as_patterns(raw.get("not_inside", ())),
        fatal=bool(raw.get("fatal", False)),
        **common,
    )
    if kind in ("config", "option"):
        defaults = CONFIG_FILES if kind == "config" else LAUNCH_FILES
        matcher = replace(matcher, files=matcher.files or defaults)
        if "value" in raw:
            matcher = replace(matcher, value=problems.regex(raw["value"], (*path, "value")))
        if kind == "option" and "programs" in raw:
            matcher = replace(matcher, programs=as_patterns(raw["programs"]))
        return matcher
    if kind == "reference":
        matcher = replace(matcher, exact=bool(raw.get("exact", False)), residual=bool(raw.get("residual", False)), uncalled=bool(raw.get("uncalled", False)))
        if matcher.exact and matcher.residual:
            problems.add((*path, "residual"), "a reference cannot be both `exact` and `residual`")
        if matcher.residual and any(GLOB_CHARS.search(p) for p in patterns):
            problems.add((*path, kind), "a `residual` reference names plain qualified names, not globs")
    if kind == "import" and raw.get("each"):
        matcher = replace(matcher, each=True)
    if kind == "define":
        matcher = replace(matcher, in_class=as_patterns(raw.get("in_class", ())), not_static=bool(raw.get("not_static", False)))
    if kind == "keyword" and "value" in raw:
        matcher = replace(matcher, value=problems.regex(raw["value"], (*path, "value")))
    if kind == "dependency":
        from tpucheck.ruleset.names import normalize_package

        matcher = replace(matcher, patterns=tuple(normalize_package(p) for p in patterns))
        if "spec" in raw:
            matcher = replace(matcher, regex=problems.regex(raw["spec"], (*path, "spec")))
        if "outside" in raw:
            try:
                matcher = replace(matcher, outside=VersionRange.parse(raw["outside"]))
            except ValueError as exc:
                problems.add((*path, "outside"), str(exc))
    if kind == "file":
        matcher = replace(matcher, keep_comments=raw.get("comments") == "keep")
        if "pattern" in raw:
            matcher = replace(matcher, regex=problems.regex(raw["pattern"], (*path, "pattern")))
    return matcher


GLOB_CHARS = re.compile(r"[*?\[]")
_LEADING_WORD = re.compile(r"\^?([A-Za-z_][A-Za-z0-9_]*)")


def string_needle(regex: re.Pattern[str]) -> str | None:
    """The literal word a string regex must start with, if it has one of 3+ characters
    (every value it fullmatches starts with that word)."""
    pattern = regex.pattern
    if "|" in pattern:
        return None
    found = _LEADING_WORD.match(pattern)
    if not found:
        return None
    word = found.group(1)
    if pattern[found.end() : found.end() + 1] in ("?", "*", "{"):
        word = word[:-1]
    return word if len(word) >= 3 else None


def derive_needles(matcher: Matcher) -> tuple[tuple[str, ...], ...] | None:
    """Groups of strings, all of one group present in every file this matcher can match.

    Names only enter a Python file through its text: an import spells the root module
    (`import torch as T`, `from torch.cuda import amp`), and the last part is spelled
    either there or at the use. So a qualified-name pattern needs its root and its last
    literal part; a method needs `.name`; builtins need only their name. None: unknown.
    """
    if matcher.kind == "string":
        assert matcher.regex is not None
        needle = string_needle(matcher.regex)
        return ((needle,),) if needle else None
    groups: list[tuple[str, ...]] = []
    for pattern in matcher.patterns:
        parts = [p for p in pattern.lstrip(".").split(".") if p]
        chosen = None
        for part in reversed(parts):
            literal = GLOB_CHARS.split(part, 1)[0]
            if literal and (literal == part or len(literal) >= 3):
                chosen = literal
                break
        if chosen is None or len(chosen) < 2:
            return None
        if matcher.kind in ("method", "keyword"):
            groups.append(("." + chosen,) if matcher.kind == "method" else (chosen,))
            continue
        root = parts[0]
        if root == "builtins" or GLOB_CHARS.search(root) or root == chosen:
            groups.append((chosen,))
        else:
            groups.append((root, chosen))
    return tuple(groups)
