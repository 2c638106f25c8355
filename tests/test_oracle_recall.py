"""tpucheck's recall against an independent oracle (issue 12, point 7).

tests/oracle.py lists CUDA code with a plain `ast` walk that shares nothing with the
analyzer; scripts/oracle_recall.py compares the two. On the fixture repositories
(tests/fixtures/oracle-repo, written for this test with CUDA code inside the statement
forms and aliases the analyzer must see through, and examples/gpu-trainer) tpucheck
must find at least 95 % of every list. The oracle is itself tested on code whose
answer is written out, so a broken oracle cannot make the comparison pass.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from textwrap import dedent
from types import ModuleType

import pytest

from tpucheck.result import Inventory
from tpucheck.ruleset import load_ruleset

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_REPOS = [ROOT / "tests" / "fixtures" / "oracle-repo", ROOT / "examples" / "gpu-trainer"]
THRESHOLD = 0.95


def _load(name: str, path: Path) -> ModuleType:
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


SCRIPT = _load("oracle_recall", ROOT / "scripts" / "oracle_recall.py")
ORACLE = SCRIPT.load_oracle()


@functools.cache
def _measured(root: Path):
    return SCRIPT.recall(str(root))


@pytest.mark.parametrize(
    ("root", "name"),
    [
        pytest.param(root, name, id=f"{root.name}-{name}")
        for root in FIXTURE_REPOS
        for name in ORACLE.LISTS
        if name != ORACLE.SOURCES
    ],
)
def test_python_lists_recall(root: Path, name: str) -> None:
    measured = _measured(root)
    tally = measured.lists[name]
    assert tally.total > 0, f"the fixture holds no {name}: the comparison would prove nothing"
    assert tally.recall >= THRESHOLD, SCRIPT.format_recall(measured, misses=50)


@pytest.mark.skipif(not hasattr(Inventory, "cuda_sources"), reason="needs the inventory's cuda_sources (issue 12 point 4, branch h-files)")
@pytest.mark.parametrize("root", FIXTURE_REPOS, ids=lambda p: p.name)
def test_cuda_source_files_recall(root: Path) -> None:
    measured = _measured(root)
    tally = measured.lists[ORACLE.SOURCES]
    assert tally.total > 0
    assert tally.recall >= THRESHOLD, SCRIPT.format_recall(measured, misses=50)


def test_the_fixture_repository_is_all_parsed_by_the_oracle() -> None:
    assert ORACLE.oracle(str(FIXTURE_REPOS[0])).unparsed == []


# --------------------------------------------------------------------------- the oracle itself


def _listed(tmp_path: Path, files: dict[str, str]) -> dict[str, list[tuple[str, int, int]]]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text).lstrip("\n"), encoding="utf-8")
    result = ORACLE.oracle(str(tmp_path))
    return {name: sorted((i.path, i.line, i.column) for i in items) for name, items in result.items.items()}


def test_oracle_lists_what_it_promises(tmp_path: Path) -> None:
    listed = _listed(
        tmp_path,
        {
            "a.py": """
                import torch as T
                import torch.distributed
                s = "é"; T.cuda.synchronize()
                x = T.cuda.get_device_properties(0).total_memory
                getattr(T.cuda, "is_available")
                y = T.cuda.amp.autocast
                model.cuda().half().cuda(1)
                T.cuda()
                z.to("cuda:1"); z.to("cpu"); z.to(dev)
                T.device("cuda" if ok else "cpu")
                w = T.zeros(1, device=f"cuda:{rank}")
                torch.distributed.init_process_group(backend="NCCL")
                init_process_group("gloo" if cpu else "nccl")
                init_process_group(backend=name)
            """,
            "b.py": """
                cuda.synchronize()
                torch.cuda.synchronize()
            """,
            "k/kernel.cu": "",
            "k/h.cuh": "",
            "bad.py": "def f(:\n",
        },
    )
    assert listed[ORACLE.REFERENCES] == [
        ("a.py", 3, 10),  # a column in characters, after the two-byte "é"
        ("a.py", 4, 5),
        ("a.py", 5, 9),
        ("a.py", 6, 5),
        ("a.py", 8, 1),  # `T.cuda()` is no `.cuda()` call, but a chain T.cuda all the same
    ]
    assert listed[ORACLE.CUDA_CALLS] == [("a.py", 7, 7), ("a.py", 7, 21)]
    assert listed[ORACLE.DEVICE_STRINGS] == [("a.py", 9, 6), ("a.py", 10, 10), ("a.py", 11, 23)]
    assert listed[ORACLE.NCCL] == [("a.py", 12, 1), ("a.py", 13, 1)]
    assert listed[ORACLE.SOURCES] == [("k/h.cuh", 1, 1), ("k/kernel.cu", 1, 1)]


def test_a_miss_is_reported_as_one(tmp_path: Path) -> None:
    """The comparison really compares: a use the analyzer cannot resolve (the oracle counts
    `import torch` anywhere in the file; here it binds only inside a function) is a miss,
    and one some rule would have judged."""
    (tmp_path / "m.py").write_text("def f():\n    import torch\n\n\nx = torch.cuda.synchronize\n", encoding="utf-8")
    measured = SCRIPT.recall(str(tmp_path))
    tally = measured.lists[ORACLE.REFERENCES]
    assert (tally.total, tally.found, tally.unruled, tally.silent) == (1, 0, 0, 0)
    assert "missed m.py:5:5" in SCRIPT.format_recall(measured, misses=5)


def test_a_name_no_rule_knows_is_counted_as_unruled(tmp_path: Path) -> None:
    """Without the catch-all for unlisted torch.cuda names (CA100), an unknown name is a
    gap in the rules, told apart from a gap in the analyzer."""
    (tmp_path / "m.py").write_text("import torch\nx = torch.cuda.no_such_api_for_the_test\n", encoding="utf-8")
    builtin = load_ruleset()
    without = builtin.with_rules(tuple(r for r in builtin.rules if r.id != "CA100"))
    tally = SCRIPT.recall(str(tmp_path), ruleset=without).lists[ORACLE.REFERENCES]
    assert (tally.total, tally.found, tally.unruled) == (1, 0, 1)
    tally = SCRIPT.recall(str(tmp_path)).lists[ORACLE.REFERENCES]
    assert (tally.total, tally.found, tally.unruled) == (1, 1, 0)


def test_a_guard_condition_is_silent_on_purpose(tmp_path: Path) -> None:
    """`if torch.cuda.is_available():` over CUDA code keeps a fallback: CA002 leaves it
    unreported (`unless: guard`), and the recall says so instead of calling it a miss."""
    (tmp_path / "m.py").write_text("import torch\nif torch.cuda.is_available():\n    torch.cuda.synchronize()\n", encoding="utf-8")
    measured = SCRIPT.recall(str(tmp_path))
    tally = measured.lists[ORACLE.REFERENCES]
    assert (tally.total, tally.found, tally.silent, tally.judged_recall) == (2, 1, 1, 1.0)
    assert "1 of the missed silent on purpose" in SCRIPT.format_recall(measured)
