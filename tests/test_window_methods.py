"""`.median(20)` on a history of Python floats (audits AT and AU: detectron2's
`events.py`, `storage.history("time").median(1000)`) was a blocker: aten::median has no
TorchTPU kernel. A method that takes a dim first, given an integer literal no real tensor's
rank reaches, is another object's method with a window; its receiver is no tensor.
Look-alikes keep the finding: a small dim, a negative dim, no argument, a name, a keyword."""

from __future__ import annotations

from conftest import findings_of

from tpucheck.analyze import build_context
from tpucheck.analyze.python.hostdata import MAX_RANK
from tpucheck.ruleset import load_ruleset

CONTEXT = build_context(load_ruleset())

CODE = """\
import torch

def log(storage, x, k):
    eta = storage.history("time").median(1000)
    losses = [v.median(20) for v in storage.histories().values()]
    a = x.median(1)
    b = x.median(-1)
    c = x.median()
    d = x.median(k)
    e = x.median(dim=20)
    f = x.median(7)
    g = x.nanmedian(8)
    return eta, losses, a, b, c, d, e, f, g
"""


def test_a_dim_literal_no_tensor_has_is_a_window_not_a_tensor_op() -> None:
    found = findings_of(CONTEXT, CODE)
    assert [line for rule, line, _ in found if rule == "UO957"] == [6, 7, 10, 11]
    # adversarial: a small or negative dim, a keyword dim, a dim below the limit keep every
    # rule of the method; only lines 4-5 (and nanmedian's limit, line 12) lose theirs
    assert sorted({line for _, line, _ in found}) == [6, 7, 10, 11]
    assert MAX_RANK == 8


def test_the_window_reading_needs_the_method_in_the_data() -> None:
    """The same call of a method the data does not list keeps its rules (`x.sum(20)`)."""
    found = findings_of(CONTEXT, "import torch\n\ndef f(x):\n    return x.median(20), x.kthvalue(20)\n")
    assert [rule for rule, _, _ in found if rule == "UO957"] == []
    assert CONTEXT.python.dim_first == frozenset({"median", "nanmedian", "mode"})
