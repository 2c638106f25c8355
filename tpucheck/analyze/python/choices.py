"""What a CUDA check decides besides a guard: whether the side a TPU takes stops the
program (a raise or an exit: `fatal` matchers, `where: fatal`), and whether the check only
picks an implementation or switches a feature off (no device pick: CA002's `unless:
guard`). The guard questions themselves live in conditions.py."""

from __future__ import annotations

import re

import libcst as cst

from tpucheck.analyze.python.conditions import (
    CUDA_STRING,
    TPU_STRING,
    cuda_polarity,
    every_statement,
    fails,
    is_device_operand,
    names_device,
)
from tpucheck.analyze.python.context import Names
from tpucheck.analyze.python.excepts import quiet_call


def stops_without_cuda(names: Names, node: cst.If, polarity: int) -> bool:
    """Whether the side an if takes without CUDA stops the program: it raises or ends the
    process (`if not torch.cuda.is_available(): sys.exit("needs a GPU")`, `if BUILD_CUDA
    and not torch.cuda.is_available(): raise ...`, `if torch.cuda.is_available(): ... else:
    raise`). A side that only leaves something out, or an `elif`, does not. `polarity` is
    the test's `cuda_polarity`."""
    polarity = _without_cuda(names, node.test, polarity)
    if polarity == 0:
        return False
    side = node.body if polarity < 0 else node.orelse
    return side is not None and _stops(names, side)


def _without_cuda(names: Names, test: cst.BaseExpression, polarity: int) -> int:
    """The test's `cuda_polarity`, and -1 for `<option> and not <CUDA>` as well: it holds
    only without CUDA (when the option is on), though its false side is no CUDA path."""
    if polarity == 0 and isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        sides = (cuda_polarity(names, test.left), cuda_polarity(names, test.right))
        return -1 if -1 in sides and 1 not in sides else 0
    return polarity


_HOST_DEVICE = re.compile(r"cpu(:\d+)?")


def _stops(names: Names, side: cst.CSTNode) -> bool:
    guards = names.index.guards
    if isinstance(side, cst.If):
        # `elif x.device.type == "cpu": ... else: raise`: a TPU tensor takes the else
        return side.orelse is not None and _names_another_device(names, side.test) and _stops(names, side.orelse)
    if fails(side, guards.skip_raises):
        return True
    body = side.body if isinstance(side, cst.Else) else side
    if not isinstance(body, cst.BaseSuite) or not body.body:
        return False
    last = body.body[-1]
    smalls = last.body if isinstance(last, cst.SimpleStatementLine) else ()
    return any(
        isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and names.qualified(small.value.func) in guards.exit_calls for small in smalls
    )


def _names_another_device(names: Names, test: cst.BaseExpression) -> bool:
    """`x.device.type == "cpu"` (or `in ("cpu", "mps")`): a test a TPU value never passes."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, (cst.Equal, cst.In))):
        return False
    operands = (test.left, test.comparisons[0].comparator)
    other = names.index.other_devices
    return any(is_device_operand(names, o) for o in operands) and any(
        names_device(o, _HOST_DEVICE) or (isinstance(o, cst.SimpleString) and o.evaluated_value in other) for o in operands
    )


def picks_feature(names: Names, node: cst.IfExp) -> bool:
    """`"xformers_attn" if torch.cuda.is_available() else "torch_attn"`: a CUDA test whose
    two values are string literals naming no device and nothing a rule knows (`"nccl"`), or
    two dtypes (`guards.dtype_names`), picks an implementation or a precision; the TPU gets
    the other one (audit T: open_lm's attention choice, judged false as a device pick)."""
    polarity = cuda_polarity(names, node.test)
    if polarity == 0:
        return False
    if all(_is_dtype(names, arm, names.index.guards.dtype_names) for arm in (node.body, node.orelse)):
        return _is_dtype(names, node.orelse if polarity > 0 else node.body, names.index.guards.tpu_dtype_names)
    return all(_names_no_device(names, arm) for arm in (node.body, node.orelse))


def _is_dtype(names: Names, node: cst.BaseExpression, dtypes: frozenset[str]) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute)) and names.qualified(node) in dtypes


def switches_feature(names: Names, arg: cst.Arg) -> bool:
    """`fit(..., use_amp=torch.cuda.is_available())`: a keyword set by whether CUDA is there,
    whose name holds no word of a device or of CUDA (`guards.cuda_words`, `device_words`),
    switches a feature, and a TPU host runs on without it (audit Y: four tests of
    sentence-transformers judged false as device picks). `use_cuda=`, `gpu=`, `device=` stay
    device picks."""
    if arg.keyword is None or cuda_polarity(names, arg.value) != 1:
        return False
    words = {w.lower() for w in re.split(r"[\W_]+", arg.keyword.value) if w}
    return not words & (names.index.guards.cuda_words | names.index.guards.device_words)


def _names_no_device(names: Names, node: cst.BaseExpression) -> bool:
    if not isinstance(node, cst.SimpleString):
        return False
    value = node.evaluated_value
    if not isinstance(value, str):
        return False
    device = value.partition(":")[0]
    if CUDA_STRING.fullmatch(value) or TPU_STRING.fullmatch(value) or device in ("cpu", "meta", "gpu") or device in names.index.other_devices:
        return False
    # a value a rule knows (`"nccl"`, `"flash_attention_2"`) is a CUDA-ism picked, not a plain name
    return not any(m.regex is not None and m.regex.fullmatch(value) for _, m in names.index.strings)


def turns_feature_off(names: Names, node: cst.If, polarity: int) -> bool:
    """`if args.amp and not torch.cuda.is_available(): warn(...); args.amp = False`: a test
    that holds only without CUDA, whose body only reports and switches settings off
    (False, None, 0), and that has no other side: the TPU runs on with the feature off
    (audit T: aot-benchmark's `--amp` check, judged no device pick). `polarity` is the
    test's `cuda_polarity`."""
    if node.orelse is not None or _without_cuda(names, node.test, polarity) != -1:
        return False

    def switches_off(small: cst.BaseSmallStatement) -> bool:
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            return quiet_call(small.value, names)
        if isinstance(small, cst.Assign):
            value = small.value
            return (isinstance(value, cst.Name) and value.value in ("False", "None")) or (isinstance(value, cst.Integer) and value.value == "0")
        return isinstance(small, cst.Pass)

    return every_statement(node.body, switches_off)
