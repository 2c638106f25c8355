"""What the rule-pack generators share: YAML in the hand-written rules' style, paths as
spelled from the project, input hashes, and the one-line summary of a stale pack.

Both generated packs (scripts/generate_op_rules.py, scripts/generate_cuda_rules.py) are
checked byte for byte against the committed files, so the writing must be identical
wherever it happens: it lives here once.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent


class Folded(str):
    """A long message: folded block style, as the hand-written rules are."""


class Literal(str):
    """Example code: literal block style."""


class Flow(list):  # type: ignore[type-arg]
    """A short list on one line (`affects: [training, inference]`)."""


class FlowMap(dict):  # type: ignore[type-arg]
    """A short mapping on one line (`effort: {low: 1, high: 4}`)."""


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True  # a shared `where` written out in full in every rule, never as &id001

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)  # lists indented under their key, as in rules/*.yaml


_Dumper.add_representer(Folded, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", str(s), style=">"))
_Dumper.add_representer(Literal, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", str(s), style="|"))
_Dumper.add_representer(Flow, lambda d, s: d.represent_sequence("tag:yaml.org,2002:seq", list(s), flow_style=True))
_Dumper.add_representer(FlowMap, lambda d, s: d.represent_mapping("tag:yaml.org,2002:map", list(s.items()), flow_style=True))


def dump(document: dict[str, Any]) -> str:
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=92, allow_unicode=True)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def shown_path(path: Path) -> str:
    """The path as spelled from the project, symlinks kept: `../shared/...` stays that
    when `../shared` is a link to elsewhere, so the pack does not depend on the machine."""
    return Path(os.path.relpath(path.absolute(), REPO)).as_posix()


def number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def diff_summary(old: str | None, new: str, shown: str, command: str) -> str | None:
    """None when equal; else one line saying how the committed file differs."""
    if old == new:
        return None
    if old is None:
        return f"{shown} is missing; run {command}"
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0))
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    hunk = next((line for line in lines if line.startswith("@@")), "")
    first = re.search(r"-(\d+)", hunk)
    at = f", first at line {first.group(1)}" if first else ""
    return f"{shown} differs from the generated pack (+{added} -{removed} lines{at}); run {command}"
