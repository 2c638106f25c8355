"""Launch lines: the commands of shell and batch scripts, Makefile recipes and Dockerfiles,
and the `option` matchers run over their words.

`python train.py --accelerator gpu`, `torchrun ... --strategy=deepspeed_stage_2`, `tune run
lora_finetune device=cuda`: what a launch line says about CUDA is an option and its value,
however the line is split. The reader joins continuation lines (`\\` at the end), drops
comments and heredoc bodies (their text is another program's input), and splits each
command into shell words, keeping where every word was written so a finding points at the
option even when its value sits on the next line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase

from tpucheck.discover.textpos import NEWLINES_ONLY, LineIndex
from tpucheck.findings import RawMatch, Span, normalize_snippet
from tpucheck.ruleset.model import Rule
from tpucheck.ruleset.names import path_matches

__all__ = ["Word", "analyze_launch", "launch_words"]


@dataclass(frozen=True, slots=True)
class Word:
    text: str
    """The word with its quotes removed (and the brackets and commas of an exec-form
    Dockerfile line: `["python", "--accelerator", "gpu"]`)."""
    start: int
    end: int
    """Offsets into the file's text."""


_WORD = re.compile(r"""(?:[^\s'"\\]+|\\.|'[^']*'|"(?:\\.|[^"\\])*")+""", re.S)
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_]\w*)\1")
_EDGES = re.compile(r"""^[\[,]+|[\],;]+$""")
_TRAILING = re.compile(r"[\],;]+$")


def _unquote(word: str) -> str:
    word = _EDGES.sub("", word)
    out: list[str] = []
    for part in re.finditer(r"""'([^']*)'|"((?:\\.|[^"\\])*)"|\\(.)|([^'"\\]+)""", word, re.S):
        single, double, escaped, plain = part.groups()
        out.append(single if single is not None else re.sub(r"\\(.)", r"\1", double) if double is not None else escaped or plain or "")
    return _EDGES.sub("", "".join(out))


def _strip_comment(line: str) -> str:
    """Drop a `#` comment: one that starts a word, outside quotes (`${#x}`, `a#b` stay)."""
    quote: str | None = None
    previous = " "
    for index, char in enumerate(line):
        if quote:
            if char == quote and (quote == "'" or line[index - 1] != "\\"):
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#" and previous in " \t;|&(":
            return line[:index]
        previous = char
    return line


def command_lines(text: str) -> Iterator[list[tuple[int, str]]]:
    """Each logical line as pieces of (offset in the text, piece of code): continuation
    lines joined, comments dropped, heredoc bodies skipped."""
    index = LineIndex(text, NEWLINES_ONLY)
    pieces: list[tuple[int, str]] = []
    heredoc: str | None = None
    for number in range(1, len(index.starts) + 1):
        offset = index.starts[number - 1]
        line = index.line_text(number).rstrip("\r")
        if heredoc is not None:
            if line.strip() == heredoc:
                heredoc = None
            continue
        code = _strip_comment(line)
        continued = code.endswith("\\") and not code.endswith("\\\\")
        if continued:
            code = code[:-1]
        found = _HEREDOC.search(code)
        if found is not None:
            heredoc = found.group(2)
        pieces.append((offset, code))
        if not continued:
            if any(piece.strip() for _, piece in pieces):
                yield pieces
            pieces = []
    if any(piece.strip() for _, piece in pieces):
        yield pieces


def _raw_words(pieces: list[tuple[int, str]]) -> Iterator[tuple[re.Match[str], int, str]]:
    """Each shell word of one logical line as written, with its piece's offset and its
    unquoted text (empty for `""`); a word never spans a continuation."""
    for offset, code in pieces:
        for found in _WORD.finditer(code):
            yield found, offset, _unquote(found.group())


def launch_words(pieces: list[tuple[int, str]]) -> list[Word]:
    """The shell words of one logical line."""
    return [Word(text, offset + found.start(), offset + _trimmed_end(found.group(), found.end())) for found, offset, text in _raw_words(pieces) if text]


def _trimmed_end(raw: str, end: int) -> int:
    """The end of a word without a trailing `,` or `]` (an exec-form Dockerfile array)."""
    trailing = _TRAILING.search(raw)
    return end - (len(trailing.group()) if trailing else 0)


@dataclass(frozen=True, slots=True)
class Option:
    name: str
    value: str | None
    start: int
    end: int


def options(words: list[Word]) -> Iterator[Option]:
    """`--name value`, `--name=value`, `-name value` and override words `name=value`
    (`trainer.accelerator=gpu`, `+device=cuda`, `++x=y`)."""
    for position, word in enumerate(words):
        text = word.text
        if text.startswith("-") and len(text.lstrip("-")) > 1:
            name, equals, value = text.lstrip("-").partition("=")
            if equals:
                yield Option(name, value, word.start, word.end)
                continue
            following = words[position + 1] if position + 1 < len(words) else None
            if following is not None and not following.text.startswith("-") and "=" not in following.text:
                yield Option(name, following.text, word.start, following.end)
            else:
                yield Option(name, None, word.start, word.end)
        elif "=" in text and position > 0:
            name, _, value = text.lstrip("+~").partition("=")
            # `deepspeed==0.7.7` is a pin for pip, not an override
            if re.fullmatch(r"[A-Za-z_][\w.\-/]*", name) and not value.startswith("="):
                yield Option(name, value, word.start, word.end)


_OFF = frozenset({"false", "0", "no", "off", "none"})
"""Values that turn a flag off (`--fp16 False`, `--use_deepspeed 0`): a matcher that names
no value wants the option on."""


def _name_matches(name: str, patterns: tuple[str, ...]) -> bool:
    """A glob holds on the option's name or on its last dotted parts (`accelerator` holds
    on `trainer.accelerator`), as a `config` key pattern does."""
    parts = name.split(".")
    return any(fnmatchcase(".".join(parts[-n:]), pattern) for pattern in patterns for n in range(1, len(parts) + 1))


_SEPARATORS = frozenset({"&&", "||", "|", ";", "&", "then", "do", "else", "(", "{", "!"})
"""Words after which a new command starts."""
_WRAPPERS = frozenset({"sudo", "exec", "nohup", "time", "env", "nice", "stdbuf", "RUN", "CMD", "ENTRYPOINT"})
"""Words that run the command after them: the program is the next word."""
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=")
_LAUNCHERS = frozenset({"srun", "salloc", "sbatch", "bsub", "qsub", "flux"})
"""Schedulers that run the command after their own options: it is a command of its own."""


def programs(pieces: list[tuple[int, str]]) -> dict[int, str]:
    """Each word's command program, by the word's start offset (as `launch_words` places
    it): the first word of its command that is neither an environment assignment
    (`CUDA_VISIBLE_DEVICES=0`) nor a wrapper, by its file name (`/usr/bin/srun` -> `srun`,
    `@python` in a recipe -> `python`). Read from the raw words, where `;` still ends one."""
    out: dict[int, str] = {}
    program = ""
    expecting = True
    valued = False  # the word before was an option that may take this one as its value
    for found, offset, text in _raw_words(pieces):
        raw = found.group()
        if raw in _SEPARATORS or not text:
            expecting = True
            continue
        if program in _LAUNCHERS and not expecting and not text.startswith("-") and not valued:
            expecting = True  # `srun --gpus=8 python main.py`: the command it launches
        valued = text.startswith("-") and "=" not in text
        if expecting and text in _WRAPPERS:
            program = text
        elif expecting and not _ASSIGNMENT.match(text) and not (program in _WRAPPERS and text.startswith("-")):
            program = text.lstrip("@").rpartition("/")[2]
            expecting = False
        out[offset + found.start()] = program
        if raw.endswith((";", "&&", "||", "|")):
            expecting = True
    return out


def analyze_launch(path: str, text: str, rules: list[Rule]) -> list[RawMatch]:
    wanted = [(rule, m) for rule in rules for m in rule.matchers if m.kind == "option" and path_matches(path, m.files)]
    if not wanted or ("-" not in text and "=" not in text):
        return []
    index = LineIndex(text, NEWLINES_ONLY)
    matches: list[RawMatch] = []
    seen: set[tuple[str, int]] = set()
    for pieces in command_lines(text):
        words = launch_words(pieces)
        run_by = programs(pieces) if any(m.programs for _, m in wanted) else {}
        for option in options(words):
            for rule, matcher in wanted:
                if not _name_matches(option.name, matcher.patterns):
                    continue
                if matcher.programs and not any(fnmatchcase(run_by.get(option.start, ""), glob) for glob in matcher.programs):
                    continue
                if matcher.value is not None and (option.value is None or matcher.value.fullmatch(option.value) is None):
                    continue
                if matcher.value is None and option.value is not None and option.value.lower() in _OFF:
                    continue  # `--fp16 False` turns the flag off: it asks for nothing
                if (rule.id, option.start) in seen:
                    continue
                seen.add((rule.id, option.start))
                span: Span = index.span(option.start, option.end)
                snippet = normalize_snippet(index.line_text(span.line))[:160]
                matches.append(RawMatch(rule.id, span, snippet, detail=option.name))
    return matches
