"""Hugging Face `device_map="cuda"` -> `"auto"`: Accelerate places the model on whatever
accelerator there is. Unsafe: on a machine with several GPUs (or too little memory),
"auto" spreads the model over them or offloads to the CPU where "cuda" put it on one."""

from __future__ import annotations

import re

import libcst as cst

from tpucheck.fix.base import Codemod, Edit, FileFix, Target
from tpucheck.fix.hf_keywords import keyword_edit, string_value, with_string

_CUDA = re.compile(r"cuda(:\d+)?")


class HfDeviceMap(Codemod):
    name = "hf-device-map"

    def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        return keyword_edit(self.name, original, updated, fix, _rewrite, lambda arg: f'device_map="{string_value(arg)}" -> "auto"')


def _rewrite(arg: cst.Arg, fix: FileFix, target: Target) -> cst.Arg | str:
    value = string_value(arg)
    if value is None or not _CUDA.fullmatch(value):
        return "device_map is not a \"cuda\" string (already \"auto\", a number or a dict): place the model by hand"
    return with_string(arg, "auto")
