"""Every Python statement form is walked: a CUDA call inside each is found, exactly.

Each case holds one `torch.cuda.synchronize()` (fixture rule T001) somewhere a newer or
rarer statement form puts it; the finding must come back with its line and column, and
the file must not turn into an error entry (a `match` statement once crashed the
analyzer with `'Match' object has no attribute 'body'`, losing the whole file).
libcst 1.9's grammar accepts all of these forms, including Python 3.12's `type` aliases
and PEP 695 generics, even when the interpreter running the scan is older.
"""

from __future__ import annotations

from textwrap import dedent

import libcst
import pytest
from conftest import findings_of

HEADER = "import torch\n"

FORMS: dict[str, tuple[str, list[tuple[str, int, int]]]] = {
    "match-subject": (
        """
        match torch.cuda.synchronize():
            case _:
                pass
        """,
        [("T001", 2, 7)],
    ),
    "match-guard": (
        """
        match x:
            case [a, *rest] if torch.cuda.synchronize():
                pass
        """,
        [("T001", 3, 24)],
    ),
    "match-nested-pattern-body": (
        """
        match event:
            case {"kind": "step", "data": [Point(x=0, y=y), *_]} | ("a" | "b") as tag:
                torch.cuda.synchronize()
            case Point(x=torch.float16):
                pass
        """,
        [("T001", 4, 9)],
    ),
    "match-in-function-with-captures": (
        """
        def handle(msg):
            match msg:
                case {"cuda": cuda, **rest}:
                    cuda.synchronize()
                case [*items]:
                    torch.cuda.synchronize()
        """,
        [("T001", 7, 13)],
    ),
    "try-except-star": (
        """
        try:
            torch.cuda.synchronize()
        except* ValueError as group:
            torch.cuda.synchronize()
        else:
            torch.cuda.synchronize()
        finally:
            torch.cuda.synchronize()
        """,
        [("T001", 3, 5), ("T001", 5, 5), ("T001", 7, 5), ("T001", 9, 5)],
    ),
    "parenthesized-with": (
        """
        with (
            open(a) as f,
            torch.cuda.synchronize() as g,
        ):
            torch.cuda.synchronize()
        """,
        [("T001", 4, 5), ("T001", 6, 5)],
    ),
    "type-alias": (
        """
        type Sync = torch.cuda.synchronize()
        type Pair[T: torch.cuda.synchronize()] = tuple[T, T]
        """,
        [("T001", 2, 13), ("T001", 3, 14)],
    ),
    "pep695-function-and-class": (
        """
        def first[T: torch.cuda.synchronize(), *Ts, **P](x: T) -> T:
            return x

        class Box[T = torch.cuda.synchronize()]:
            pass
        """,
        [("T001", 2, 14), ("T001", 5, 15)],
    ),
    "walrus": (
        """
        if (done := torch.cuda.synchronize()) is None:
            pass
        values = [y for x in xs if (y := torch.cuda.synchronize())]
        """,
        [("T001", 2, 13), ("T001", 4, 34)],
    ),
    "decorator-arbitrary-expression": (
        """
        @registry[torch.cuda.synchronize()].register
        def a(): pass

        @(lambda f: torch.cuda.synchronize() or f)
        def b(): pass

        @handlers.get(torch.cuda.synchronize(), default)(1)
        def c(): pass
        """,
        [("T001", 2, 11), ("T001", 5, 13), ("T001", 8, 15)],
    ),
    "async-forms": (
        """
        async def run(stream):
            async for batch in torch.cuda.synchronize():
                torch.cuda.synchronize()
            async with torch.cuda.synchronize() as ctx:
                await torch.cuda.synchronize()
            return [x async for x in torch.cuda.synchronize()]
        """,
        [("T001", 3, 24), ("T001", 4, 9), ("T001", 5, 16), ("T001", 6, 15), ("T001", 7, 30)],
    ),
    "global-and-nonlocal": (
        """
        def outer():
            global torch
            level = 0
            def inner():
                nonlocal level
                torch.cuda.synchronize()
            return inner
        """,
        [("T001", 7, 9)],
    ),
    "star-parameter-annotations": (
        """
        def f(*args: torch.cuda.synchronize(), **kw: torch.cuda.synchronize()):
            pass
        """,
        [("T001", 2, 14), ("T001", 2, 46)],
    ),
    "lambda-default-and-conditional-import": (
        """
        if flag:
            from torch.cuda import synchronize as sync
        handler = lambda s=sync(): s
        """,
        [("T001", 4, 20)],
    ),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_a_cuda_call_inside_each_form_is_found(test_context, name: str) -> None:
    body, expected = FORMS[name]
    code = HEADER + dedent(body).lstrip("\n")
    libcst.parse_module(code)  # the form itself is valid for the parser we ship with
    assert findings_of(test_context, code) == expected


def test_match_in_a_function_no_longer_crashes_the_analyzer(test_context) -> None:
    """The shape that raised AttributeError in `_blocks` (the function-locals pre-pass)."""
    code = dedent(
        """
        import torch

        def dispatch(op):
            match op:
                case "sync":
                    torch.cuda.synchronize()
                case _:
                    return None
        """
    ).lstrip("\n")
    assert findings_of(test_context, code) == [("T001", 6, 13)]


def test_match_capture_shadows_an_import(test_context) -> None:
    """`case cuda:` binds a local, so `cuda.synchronize()` after it is not torch's."""
    code = dedent(
        """
        from torch import cuda

        def f(x):
            match x:
                case cuda:
                    cuda.synchronize()
        """
    ).lstrip("\n")
    assert findings_of(test_context, code) == []


def test_global_names_are_not_uses(test_context) -> None:
    """`global` / `nonlocal` name a variable, and binding a name is no use of what it
    named: only the read in `g` is a reference."""
    code = dedent(
        """
        from torch.backends.cudnn import benchmark

        def f():
            global benchmark
            benchmark = True

        def g():
            return benchmark
        """
    ).lstrip("\n")
    assert findings_of(test_context, code) == [("T002", 8, 12)]


def test_code_inside_concatenated_f_strings_is_walked(test_context) -> None:
    """Implicitly concatenated literals once hid their f-string holes from the walk."""
    code = dedent(
        """
        import torch
        message = (
            f"device {torch.cuda.synchronize()} "
            "and more "
            f"{torch.cuda.synchronize()!r}"
        )
        """
    ).lstrip("\n")
    assert findings_of(test_context, code) == [("T001", 3, 15), ("T001", 5, 8)]


def test_a_concatenated_device_string_is_matched_once(test_context) -> None:
    code = 'import torch\nx.to("cuda" ":1")\n'
    assert findings_of(test_context, code) == [("T007", 2, 6)]
