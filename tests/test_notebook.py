"""Tests for reading notebooks and mapping the virtual module back to cells."""

from __future__ import annotations

import ast
import json
from typing import Any

import libcst
import pytest

from tpucheck.analyze.notebook import (
    Cell,
    NotebookError,
    VirtualModule,
    build_virtual_module,
    magic_shell_commands,
    read_cells,
)


def nb4(*cells: dict[str, Any]) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": list(cells)})


def code(source: str | list[str]) -> dict[str, Any]:
    return {"cell_type": "code", "source": source, "metadata": {}, "outputs": [], "execution_count": None}


def md(source: str | list[str]) -> dict[str, Any]:
    return {"cell_type": "markdown", "source": source, "metadata": {}}


def module_of(*sources: str) -> VirtualModule:
    return build_virtual_module([Cell(i, "code", s) for i, s in enumerate(sources, 1)])


def lines_of(vm: VirtualModule) -> list[str]:
    return vm.code.split("\n")[:-1]


def assert_parses(code_text: str) -> None:
    ast.parse(code_text)
    libcst.parse_module(code_text)


# ----------------------------------------------------------------------------- reading


def test_numbering_counts_markdown_and_raw_cells() -> None:
    text = nb4(md("# Title"), code("import torch\n"), {"cell_type": "raw", "source": "x"}, code("y = 1"))
    cells = read_cells(text)
    assert [(c.number, c.kind) for c in cells] == [(1, "markdown"), (2, "code"), (3, "raw"), (4, "code")]
    assert cells[1].source == "import torch\n"


def test_source_as_string_and_as_list_of_strings() -> None:
    cells = read_cells(nb4(code("a = 1\nb = 2"), code(["a = 1\n", "b = 2"])))
    assert cells[0].source == cells[1].source == "a = 1\nb = 2"


def test_nbformat3_worksheets_use_input_for_code_and_number_across_worksheets() -> None:
    text = json.dumps(
        {
            "nbformat": 3,
            "worksheets": [
                {"cells": [{"cell_type": "heading", "level": 1, "source": ["Intro"]},
                           {"cell_type": "code", "input": ["import torch\n", "torch.cuda.is_available()"],
                            "language": "python", "outputs": []}]},
                {"cells": [{"cell_type": "code", "input": "x = 2", "outputs": []}]},
            ],
        }
    )
    cells = read_cells(text)
    assert cells == [
        Cell(1, "heading", "Intro"),
        Cell(2, "code", "import torch\ntorch.cuda.is_available()"),
        Cell(3, "code", "x = 2"),
    ]


@pytest.mark.parametrize("text", [json.dumps({}), nb4(), json.dumps({"worksheets": []})])
def test_empty_notebook_has_no_cells(text: str) -> None:
    assert read_cells(text) == []
    assert build_virtual_module(read_cells(text)) == VirtualModule("", (), (), frozenset())


def test_not_json_reports_line_and_column() -> None:
    with pytest.raises(NotebookError) as info:
        read_cells('{\n  "cells": [\n    {"cell_type": "code" "source": ""}]}')
    message = str(info.value)
    assert message.startswith("not valid JSON (line 3, column 26): ")
    assert "delimiter" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1, 2]", "not a notebook: top level is a JSON array, not an object"),
        (json.dumps({"cells": {"a": 1}}), "'cells' is a JSON object, not a list"),
        (json.dumps({"worksheets": [{"cells": "x"}]}), "worksheet 1: 'cells' is a JSON string, not a list"),
        (nb4(md("x"), "not a cell"), "cell 2: is a JSON string, not an object"),
        (nb4(md("x"), code("y"), code(["a\n", 3])),
         "cell 3: 'source' is neither a string nor a list of strings"),
        (nb4(code(None)), "cell 1: 'source' is neither a string nor a list of strings"),  # type: ignore[arg-type]
        (json.dumps({"worksheets": [{"cells": [{"cell_type": "code", "input": 5}]}]}),
         "cell 1: 'input' is neither a string nor a list of strings"),
    ],
)
def test_malformed_notebooks_raise_one_line_errors(text: str, expected: str) -> None:
    with pytest.raises(NotebookError) as info:
        read_cells(text)
    assert str(info.value) == expected


# ----------------------------------------------------------------------------- masking


def test_line_magic_and_shell_are_masked_and_pip_install_is_reported() -> None:
    cells = read_cells(nb4(md("setup"), code("%matplotlib inline\n!pip install flash-attn\nimport torch\n")))
    vm = build_virtual_module(cells)
    assert lines_of(vm) == ["pass", "pass", "import torch"]
    assert vm.masked_lines == {1, 2}
    assert magic_shell_commands(cells) == [(2, 2, "pip install flash-attn")]


def test_install_commands_from_percent_magics_conda_and_continuations() -> None:
    cells = [
        Cell(1, "code", "x = 1\n%pip install -q triton\n"),
        Cell(2, "markdown", "!pip install not-code"),
        Cell(3, "code", "!conda install -y cudatoolkit\n%conda install nccl\n!pip install a \\\n    b\nz = 3\n"),
        Cell(4, "code", "!ls\n%time f()\n"),
        Cell(5, "code", "%%bash\nset -e\npip install \\\n  apex\n"),
    ]
    assert magic_shell_commands(cells) == [
        (1, 2, "pip install -q triton"),
        (3, 1, "conda install -y cudatoolkit"),
        (3, 2, "conda install nccl"),
        (3, 3, "pip install a b"),
        (5, 3, "pip install apex"),
    ]
    vm = build_virtual_module(cells)
    assert lines_of(vm)[2:] == ["pass", "pass", "pass", "pass", "z = 3", "pass", "pass"] + ["pass"] * 4
    assert_parses(vm.code)


def test_bash_cell_is_masked_entirely_even_when_indented() -> None:
    vm = module_of("x = 1\n", "\n%%bash\nfor f in *.py; do\n    echo $f\ndone\n", "y = 2")
    assert lines_of(vm) == ["x = 1", "pass", "pass", "pass", "pass", "pass", "y = 2"]
    assert vm.masked_lines == {2, 3, 4, 5, 6}
    assert_parses(vm.code)


def test_writefile_cell_is_masked_entirely() -> None:
    vm = module_of("%%writefile kernel.py\nimport torch\ntorch.cuda.synchronize()\n")
    assert lines_of(vm) == ["pass", "pass", "pass"]


@pytest.mark.parametrize("magic", ["%%time", "%%timeit -n 3", "%%capture out", "%%prun"])
def test_python_body_cell_magics_mask_only_the_magic_line(magic: str) -> None:
    vm = module_of(f"{magic}\nfor i in range(3):\n    y = torch.ones(3).cuda()\n")
    assert lines_of(vm) == ["pass", "for i in range(3):", "    y = torch.ones(3).cuda()"]
    assert vm.masked_lines == {1}


def test_capture_cell_with_pip_install_is_reported() -> None:
    cells = [Cell(1, "code", "%%capture\n!pip install -q bitsandbytes\n")]
    assert magic_shell_commands(cells) == [(1, 2, "pip install -q bitsandbytes")]


@pytest.mark.parametrize(
    "line",
    ["torch.cuda?", "torch.cuda??", "torch.cuda.synchronize ?  ", "?torch.cuda",
     "files = !ls", "a, b = !ls", "home = %env HOME", "out[0]=%sx ls"],
)
def test_help_and_magic_assignments_are_masked(line: str) -> None:
    vm = module_of(f"import torch\n{line}\nx = 1\n")
    assert lines_of(vm) == ["import torch", "pass", "x = 1"]
    assert vm.masked_lines == {2}


@pytest.mark.parametrize(
    "line",
    ["x = 1  # really?", "s = 'why?'", "a != b", "x %= 3", "x = y % z", "d = {'k': 1}",
     's = """Ready for TPU?\nnot yet"""'],
)
def test_python_lines_that_look_like_ipython_are_kept(line: str) -> None:
    vm = module_of(line)
    assert lines_of(vm) == line.split("\n")
    assert vm.masked_lines == frozenset()


def test_masked_line_in_indented_block_keeps_indentation_and_parses() -> None:
    source = (
        "import torch\n"
        "for step in range(3):\n"
        "    %time loss = step * 2\n"
        "    if step:\n"
        "        !nvidia-smi\n"
        "x = torch.cuda.is_available()\n"
    )
    vm = module_of(source)
    assert lines_of(vm)[2] == "    pass"
    assert lines_of(vm)[4] == "        pass"
    assert vm.masked_lines == {3, 5}
    assert_parses(vm.code)


@pytest.mark.parametrize("indent", ["    ", "\t"])
def test_magic_only_body_of_block_still_parses(indent: str) -> None:
    vm = module_of(f"def f():\n{indent}!echo hi\n")
    assert lines_of(vm) == ["def f():", f"{indent}pass"]
    assert_parses(vm.code)


def test_backslash_continued_magic_masks_continuation_at_magic_indent() -> None:
    vm = module_of("if True:\n    !apt-get install -y \\\n            libfoo\n    x = 1\n")
    assert lines_of(vm) == ["if True:", "    pass", "    pass", "    x = 1"]
    assert vm.masked_lines == {2, 3}
    assert_parses(vm.code)


def test_percent_inside_triple_quoted_string_is_not_masked() -> None:
    source = 'doc = """\n%matplotlib inline\n!rm -rf /\n"""\n%ls\nq = \'\'\'a\n?x\n\'\'\'\n'
    vm = module_of(source)
    assert lines_of(vm) == ['doc = """', "%matplotlib inline", "!rm -rf /", '"""', "pass", "q = '''a", "?x", "'''"]
    assert vm.masked_lines == {5}
    assert magic_shell_commands([Cell(1, "code", 's = """\n!pip install x\n"""')]) == []


def test_operators_at_line_start_inside_brackets_are_not_masked() -> None:
    source = "x = (a\n     % b)\ny = [1,\n  ! 2]\nz = a \\\n    % b\n"
    vm = module_of(source)
    assert vm.masked_lines == frozenset()
    assert lines_of(vm) == source.split("\n")[:-1]


def test_crlf_sources_split_on_real_line_breaks_only() -> None:
    vm = module_of("a = 1\r\n%ls\r\nb = '\x0c'\n")
    assert lines_of(vm) == ["a = 1", "pass", "b = '\x0c'"]


# ----------------------------------------------------------------------------- mapping


def test_to_cell_maps_lines_across_cells_ignoring_markdown_and_empty_cells() -> None:
    cells = read_cells(
        nb4(
            code("import torch\nimport numpy as np"),  # cell 1: virtual lines 1-2
            md("# notes\nmore"),  # cell 2: not code
            code(""),  # cell 3: contributes nothing
            code(["x = torch.ones(2)\n", "\n", "y = x.cuda()\n"]),  # cell 4: virtual lines 3-5
            code("print(y)"),  # cell 5: virtual line 6
        )
    )
    vm = build_virtual_module(cells)
    assert vm.code == "import torch\nimport numpy as np\nx = torch.ones(2)\n\ny = x.cuda()\nprint(y)\n"
    assert [vm.to_cell(line) for line in range(1, 7)] == [(1, 1), (1, 2), (4, 1), (4, 2), (4, 3), (5, 1)]
    assert vm.cell_of_line == (1, 1, 4, 4, 4, 5)
    assert vm.line_in_cell == (1, 2, 1, 2, 3, 1)
    # names from cell 1 reach cell 4 because it is one module
    tree = ast.parse(vm.code)
    assert isinstance(tree.body[2], ast.Assign) and tree.body[2].lineno == 3
    for bad in (0, 7):
        with pytest.raises(ValueError):
            vm.to_cell(bad)


def test_skip_drops_cells_and_mapping_follows() -> None:
    cells = [
        Cell(1, "code", "import torch\n"),
        Cell(2, "markdown", "text"),
        Cell(3, "code", "def broken(:\n    pass\n"),
        Cell(4, "code", "%env X=1\ny = torch.zeros(1).cuda()\n"),
    ]
    vm = build_virtual_module(cells, skip={3})
    assert lines_of(vm) == ["import torch", "pass", "y = torch.zeros(1).cuda()"]
    assert vm.to_cell(1) == (1, 1)
    assert vm.to_cell(3) == (4, 2)
    assert vm.masked_lines == {2}
    assert vm.to_cell(2) == (4, 1)
    assert_parses(vm.code)
    with pytest.raises(SyntaxError):
        ast.parse(build_virtual_module(cells).code)
