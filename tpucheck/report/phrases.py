"""Rule facts as short phrases: what a matcher matches and where a rule's severity holds,
as segments of text, code and regexes that each renderer (terminal, Markdown, JSON) styles
its own way."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from tpucheck.ruleset.model import ArgConstraint, Matcher, Rule, Where

SegmentKind = Literal["text", "code", "regex"]


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of a phrase: each renderer styles code and regexes its own way."""

    text: str
    kind: SegmentKind = "text"


def text_part(text: str) -> Segment:
    return Segment(text)


def code_part(text: str) -> Segment:
    return Segment(text, "code")


def regex_part(pattern: str) -> Segment:
    return Segment(pattern, "regex")


def _listed(items: Sequence[str], wrap: Callable[[str], Segment] = code_part, last: str = " or ") -> list[Segment]:
    """`a`, `b` or `c`."""
    out: list[Segment] = []
    for index, item in enumerate(items):
        if index:
            out.append(text_part(last if index == len(items) - 1 else ", "))
        out.append(wrap(item))
    return out


def _ordinal(position: int) -> str:
    number = position + 1
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def _argument(arg: ArgConstraint) -> list[Segment]:
    """How one `args` entry reads: `with device_type= (or the 1st argument) matching "cuda"`."""
    names: list[Segment] = []
    if arg.name is not None:
        names.append(code_part(f"{arg.name}="))
    if arg.position is not None:
        ordinal = f"{_ordinal(arg.position)} argument"
        names.append(text_part(f" (or the {ordinal})" if names else f"a {ordinal}"))
    if arg.missing:
        return [text_part("without "), *names]
    if arg.value is None:
        return [text_part("with "), *names]
    tail = [text_part(" (or any expression)")] if arg.any_expression else []
    return [text_part("with "), *names, text_part(" matching "), regex_part(arg.value.pattern), *tail]


def _arguments(args: Iterable[ArgConstraint]) -> list[Segment]:
    out: list[Segment] = []
    for index, arg in enumerate(args):
        out.extend([text_part(" and " if index else " "), *_argument(arg)])
    return out


def describe_matcher(matcher: Matcher) -> list[Segment]:
    """One matcher as a phrase: `call torch.cuda.synchronize`, `dependency flash-attn`."""
    out = _describe(matcher)
    if matcher.not_inside:
        out += [text_part(", not inside or beside "), *_listed([f"@{p}" for p in matcher.not_inside])]
    if matcher.files and matcher.kind not in ("native", "config", "option"):
        out += [text_part(" in files "), *_listed(matcher.files)]
    return out


def _describe(matcher: Matcher) -> list[Segment]:
    kind, patterns = matcher.kind, matcher.patterns
    if kind == "call":
        return [text_part("call "), *_listed(patterns), *_arguments(matcher.args)]
    if kind == "reference":
        if matcher.exact:
            return [text_part("reference to "), *_listed(patterns), text_part(" (the name itself, not a longer one)")]
        if matcher.residual:
            return [text_part("reference to "), *_listed(patterns), text_part(" (the name or a longer one, except where another rule's pattern claims it)")]
        return [text_part("reference to "), *_listed(patterns), text_part(" (any use of the name or a longer one)")]
    if kind == "import":
        return [text_part("import of "), *_listed(patterns), text_part(" (or a submodule)")]
    if kind == "decorator":
        return [text_part("decorator "), *_listed([f"@{p}" for p in patterns]), *_arguments(matcher.args)]
    if kind == "method":
        out = [text_part("method "), *_listed([f".{p}()" for p in patterns])]
        if matcher.arity is not None:
            out.append(text_part(f" with {matcher.arity} argument{'' if matcher.arity == 1 else 's'}"))
        if matcher.max_args is not None:
            out.append(text_part(f" with at most {matcher.max_args} positional argument{'' if matcher.max_args == 1 else 's'}"))
        return out + _arguments(matcher.args)
    if kind == "attribute":
        return [text_part("attribute "), *_listed([f".{p}" for p in patterns])]
    if kind == "keyword":
        out = [text_part("keyword "), *_listed([f"{p}=" for p in patterns])]
        if matcher.value is not None:
            out += [text_part(" with a value matching "), regex_part(matcher.value.pattern)]
        if matcher.in_call:
            out += [text_part(" in calls to "), *_listed(matcher.in_call)]
        if matcher.not_in_call:
            out += [text_part(", not in calls to "), *_listed(matcher.not_in_call)]
        return out
    if kind == "string":
        pattern = matcher.regex.pattern if matcher.regex is not None else ""
        return [text_part("string "), regex_part(pattern), text_part(f" in {'/'.join(matcher.contexts)} contexts")]
    if kind == "native":
        pattern = matcher.regex.pattern if matcher.regex is not None else ""
        out = [text_part("C/C++/CUDA code matching "), regex_part(pattern)]
        if matcher.files:
            out += [text_part(" in files "), *_listed(matcher.files)]
        return out
    if kind == "dependency":
        out = [text_part("dependency "), *_listed(patterns)]
        if matcher.regex is not None:
            out += [text_part(" with a version or URL matching "), regex_part(matcher.regex.pattern)]
        if matcher.outside is not None:
            out += [text_part(" whose version specifiers allow nothing in "), code_part(matcher.outside.text)]
        return out
    if kind in ("config", "option"):
        out = [text_part("config key " if kind == "config" else "launch option "), *_listed(patterns)]
        if matcher.value is not None:
            out += [text_part(" with a value matching "), regex_part(matcher.value.pattern)]
        if matcher.programs:
            out += [text_part(" in a command run by "), *_listed(matcher.programs)]
        return [*out, text_part(" in files "), *_listed(matcher.files)]
    if kind == "file":
        out = [text_part("file "), *_listed(patterns)]
        if matcher.regex is not None:
            out += [text_part(" with a line matching "), regex_part(matcher.regex.pattern)]
            if matcher.keep_comments:
                out.append(text_part(" (comment lines included)"))
        return out
    if kind == "runtime":
        return [text_part("`tpucheck trace`: "), *_listed(patterns), text_part(" seen when the model ran (never a static match)")]
    return [text_part(kind + " "), *_listed(patterns)]


def describe_where(rule: Rule) -> list[Segment] | None:
    """When the rule's severity holds (its `where`), or None: everywhere it matches."""
    where: Where | None = rule.where
    if where is None:
        return None
    places: list[list[Segment]] = []
    if where.loop:
        places.append([text_part("inside a loop")])
    if where.module:
        places.append([text_part("at a module's top level (it runs on import)")])
    if where.fatal:
        places.append([text_part("in a check whose side taken without CUDA raises or exits")])
    if where.functions:
        places.append([text_part("in a function named "), *_listed(where.functions)])
    if where.decorated:
        places.append([text_part("in a function decorated with "), *_listed([f"@{d}" for d in where.decorated])])
    out: list[Segment] = [text_part(f"{rule.severity} ")]
    for index, place in enumerate(places):
        if index:
            out.append(text_part(", " if index < len(places) - 1 else " or "))
        out.extend(place)
    if where.otherwise == "skip":
        out.append(text_part("; not reported elsewhere."))
    else:
        out.append(text_part(f"; {where.otherwise} elsewhere."))
    return out


def plain(segments: Iterable[Segment]) -> str:
    """Segments as plain text, regexes in double quotes: for JSON and tests."""
    return "".join(f'"{s.text}"' if s.kind == "regex" else s.text for s in segments)
