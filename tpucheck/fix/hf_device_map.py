"""Hugging Face `device_map="cuda"` (or `"cuda:0"`) -> the current accelerator's type.

Not `"auto"`: that too is a CUDA dispatch (HF003 flags it), and on a TPU host Accelerate
finds no CUDA device and loads the model on the CPU. The accelerator's type is "cuda" on a
GPU, as before, and "tpu" on a TPU, which is what the rule asks for; where there is no
accelerator it stays "cuda", as before. `"auto"`, `"balanced"`, indices and dicts spread
a model over several devices and are left to a person.
"""

from __future__ import annotations

import re

import libcst as cst

from tpucheck.fix.base import Codemod, Edit, FileFix
from tpucheck.fix.device import NEEDS, TYPE_OR_CUDA, USES
from tpucheck.fix.hf_keywords import string_value

_CUDA = re.compile(r"cuda(?::(\d+))?")


class HfDeviceMap(Codemod):
    name = "hf-device-map"

    def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        if not (isinstance(original, cst.Arg) and isinstance(updated, cst.Arg)):
            return None
        target = fix.take_keyword(self.name, original)
        if target is None:
            return None
        value = string_value(updated)
        found = _CUDA.fullmatch(value) if value is not None else None
        if found is None:
            fix.skip(target, "device_map spreads the model over devices (\"auto\", an index or a dict): place it by hand, e.g. `device_map=\"tpu\"`")
            return None
        if not fix.allows(NEEDS):
            fix.skip_pinned(target, NEEDS, USES)
            return None
        quote = updated.value.quote if isinstance(updated.value, cst.SimpleString) else '"'
        inner = found.group(1) is not None and '"' in quote  # inside an f-string: the other quotes
        expression = fix.expression(TYPE_OR_CUDA.replace('"', "'") if inner else TYPE_OR_CUDA)
        if found.group(1) is not None:
            code = (fix.module or cst.Module([])).code_for_node(expression)
            expression = cst.parse_expression(f"f{quote}{{{code}}}:{found.group(1)}{quote}")
        return Edit(updated.with_changes(value=expression), (target,), f'device_map="{value}" -> the current accelerator\'s type', NEEDS, USES)
