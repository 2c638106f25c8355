"""The screen (analyze/python/screen.py): `ast` decides what libcst need not parse.

The contract: a scan gives byte-identical JSON with the screen and without it
(`--no-prefilter`), on every rule's examples and on the real-code fixtures; only the
coverage's parsed/screened split may differ. Then each way the screen could lose a
finding is shown to matter (forcing the body out changes what the walk finds) and to be
kept.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from textwrap import dedent

import pytest
from conftest import write_tree

from tpucheck.analyze import build_context
from tpucheck.analyze.python import analyze_source
from tpucheck.analyze.python.screen import screen
from tpucheck.config.settings import Settings
from tpucheck.engine import scan
from tpucheck.report import json_report
from tpucheck.ruleset import load_ruleset
from tpucheck.ruleset.examples import example_path

ROOT = Path(__file__).resolve().parent.parent
RULESET = load_ruleset()
INDEX = build_context(RULESET).python


def _json(root: Path, *, prefilter: bool) -> tuple[str, dict[str, int]]:
    """The JSON report without the coverage's parsed/screened split, and that split."""
    result = scan(str(root), RULESET, Settings(jobs=2, prefilter=prefilter))
    data = json.loads(json_report.render(result))
    split = {key: data["coverage"].pop(key) for key in ("files_parsed", "files_screened")}
    return json.dumps(data, indent=2, ensure_ascii=False), split


def _same_with_and_without(root: Path) -> dict[str, int]:
    screened, split = _json(root, prefilter=True)
    whole, whole_split = _json(root, prefilter=False)
    assert screened == whole
    assert whole_split["files_screened"] == 0
    return split


def test_every_rule_example_gives_the_same_json(tmp_path: Path) -> None:
    files: dict[str, str] = {}
    for rule in RULESET.rules:
        if "runtime" in rule.kinds():
            continue  # a model to trace, not code to scan
        for expect, examples in (("flag", rule.flag_examples), ("pass", rule.pass_examples)):
            for number, example in enumerate(examples, start=1):
                path = example_path(rule, example)
                folder, _, name = path.rpartition("/")
                files[f"{rule.id}/{expect}{number}/{folder}/{name}".replace("//", "/")] = example.code
    split = _same_with_and_without(write_tree(tmp_path / "examples", files))
    assert split["files_screened"] > 0  # pass examples with nothing a rule can match


@pytest.mark.parametrize("root", [ROOT / "tests" / "fixtures" / "oracle-repo", ROOT / "examples" / "gpu-trainer"], ids=lambda p: p.name)
def test_the_fixture_repositories_give_the_same_json(root: Path) -> None:
    _same_with_and_without(root)


def test_the_screen_cuts_something_in_the_fixture_repositories() -> None:
    """Or the comparison above would prove little."""
    roots = [ROOT / "tests" / "fixtures" / "oracle-repo", ROOT / "examples" / "gpu-trainer"]
    texts = [path.read_text(encoding="utf-8") for root in roots for path in sorted(root.rglob("*.py"))]
    results = [screen(text, INDEX) for text in texts if INDEX.candidate(text)]
    assert any(r.text is None for r in results) or sum(r.hollowed for r in results) > 0


def _code(text: str) -> str:
    return dedent(text).lstrip("\n")


def _matches(code: str, *, prefilter: bool) -> list[tuple[str, int, bool, tuple[str, ...]]]:
    analysis = analyze_source(code, INDEX, prefilter=prefilter)
    assert analysis.error_kind is None
    return [(m.rule_id, m.span.line, m.guarded, tuple(r.rule for r in m.reasons)) for m in analysis.matches]


def test_a_file_nothing_can_match_is_not_parsed() -> None:
    code = _code(
        """
        import torch

        def scale(x: torch.Tensor) -> torch.Tensor:
            '''Runs on cuda, says the docstring: `x.cuda()`.'''
            return x * 2
        """
    )
    assert screen(code, INDEX).text is None
    analysis = analyze_source(code, INDEX)
    assert (analysis.parsed, analysis.matches) == (False, [])


def test_a_body_nothing_can_match_is_hollowed_and_lines_keep_their_numbers() -> None:
    code = _code(
        """
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = 2

            def forward(self, x):
                return x.cuda()
        """
    )
    result = screen(code, INDEX)
    assert result.text == code.replace("        super().__init__()\n        self.scale = 2\n", "        pass\n\n")
    assert result.hollowed == 1
    assert _matches(code, prefilter=True) == _matches(code, prefilter=False) == [("CA003", 9, False, ())]


def test_text_ast_cannot_read_goes_to_libcst_whole() -> None:
    code = "import torch\ndef f(:\n    torch.cuda.synchronize()\n"
    assert screen(code, INDEX).text == code
    assert analyze_source(code, INDEX).error_kind == analyze_source(code, INDEX, prefilter=False).error_kind == "syntax-error"


def test_a_lone_carriage_return_keeps_the_file_whole() -> None:
    code = "import torch\rdef f():\r    x = 1\r    return x\rtorch.cuda.synchronize()\r"
    assert screen(code, INDEX).text == code


# Each thing a body can decide for code outside it. `forced` is the code with that body
# cut out by hand: the walk then finds something else, so the screen must keep the body.
CARRIED = {
    # a module-level function that returns host data makes its calls host data
    "host-data function": (
        """
        import numpy as np

        def stats(x):
            values = np.asarray(x)
            return values

        def report(t):
            return stats(t).item()
        """,
        ("    values = np.asarray(x)\n    return values\n", "    pass\n\n"),
    ),
    # a function of the same name defined in another body resets that mark
    "reset mark": (
        """
        import numpy as np

        def stats(x):
            return np.asarray(x)

        def other():
            def stats(y):
                return y
            return stats

        def report(t):
            return stats(t).item()
        """,
        ("    def stats(y):\n        return y\n    return stats\n", "    pass\n\n\n"),
    ),
    # a field a method sets to host data is host data in the other methods
    "field": (
        """
        import numpy as np

        class Meter:
            def __init__(self):
                self.total = np.zeros(3)
                self.count = 0

            def mean(self):
                return self.total.sum().item()
        """,
        ("        self.total = np.zeros(3)\n        self.count = 0\n", "        pass\n\n"),
    ),
    # a store_true option keeps what its `if` turns on optional
    "option": (
        """
        import torch

        def add_arguments(parser):
            parser.add_argument("--fast-sync", action="store_true")
            parser.add_argument("--steps", type=int)

        def train(args):
            if args.fast_sync:
                torch.cuda.synchronize()
        """,
        ('    parser.add_argument("--fast-sync", action="store_true")\n    parser.add_argument("--steps", type=int)\n', "    pass\n\n"),
    ),
    # a side of an `if` on a setting that reaches another accelerator is no TPU path
    "other accelerator": (
        """
        import torch

        def run(cfg, x):
            if cfg.fused:
                torch.cuda.synchronize()
                y = x
            else:
                def wait():
                    torch.npu.synchronize()
                    return x
                y = wait()
            return y
        """,
        ("            torch.npu.synchronize()\n            return x\n", "            pass\n\n"),
    ),
}


@pytest.mark.parametrize("name", list(CARRIED))
def test_a_body_that_decides_something_elsewhere_is_kept(name: str) -> None:
    source, (body, stub) = CARRIED[name]
    code = _code(source)
    forced = code.replace(body, stub)
    assert forced != code and forced.count("\n") == code.count("\n")
    assert _matches(forced, prefilter=False) != _matches(code, prefilter=False), "the case must matter"
    assert screen(code, INDEX).text == code
    assert _matches(code, prefilter=True) == _matches(code, prefilter=False)


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        # names resolve through imports, aliases (also of aliases) and star imports
        ("sync = torch.cuda.synchronize\n    sync()", True),
        ("c = torch.cuda\n    d = c\n    d.synchronize()", True),
        ("from torch.cuda import *\n    synchronize()", True),
        ("x = torch.zeros(3)", False),
        # an argument constraint fails only on a literal that certainly fails it: a number
        # is compared as written, as libcst reads it
        ("return torch.nn.functional.pad(x, (1, 1), padding=1)", False),
        ("return tokenizer(x, padding=True)", True),
        ("return x.to(torch.float16)", True),
        ("return x.to(torch.float32)", False),
        # strings count anywhere, f-strings as libcst reads them (escapes unexpanded)
        ('return "cuda"', True),
        ('return f"cuda:{rank}"', True),
        ('return f"running on {name}\\n"', False),
        ('return f"{x=}"', False),
        ('return f"cu\\x64a"', False),
    ],
)
def test_what_keeps_a_body(line: str, kept: bool) -> None:
    code = f"import torch\n\n\ndef f(x, rank, name, tokenizer):\n    {line}\n    return None\n"
    result = screen(code, INDEX)
    assert (result.text is not None) == kept, result
    assert _matches(code, prefilter=True) == _matches(code, prefilter=False)


def test_the_projects_own_names_are_no_trigger() -> None:
    code = "import torch\n\n\ndef f():\n    torch.cuda.synchronize()\n"
    assert screen(code, INDEX).text == code
    index = replace(INDEX, first_party=frozenset({"torch"}))
    assert screen(code, index).text is None
