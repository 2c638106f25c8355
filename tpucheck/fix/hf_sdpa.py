"""Hugging Face `attn_implementation="flash_attention_2"` -> `"sdpa"`, and
`use_flash_attention_2=True` -> `attn_implementation="sdpa"`: PyTorch's own attention,
which every device runs. Unsafe: speed and the last bits of the numerics differ from
flash-attn, and flash-attn-only features (sliding windows on some models) may not apply."""

from __future__ import annotations

import re

import libcst as cst

from tpucheck.fix.base import Codemod, Edit, FileFix, Target
from tpucheck.fix.hf_keywords import keyword_edit, string_value, with_string
from tpucheck.fix.surface import SDPA_SINCE
from tpucheck.fix.versions import Version

_FLASH = re.compile(r"flash_attention_\d.*")
NEEDS = Version(SDPA_SINCE)


class HfSdpa(Codemod):
    name = "hf-sdpa"

    def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        return keyword_edit(self.name, original, updated, fix, _rewrite, lambda arg: "flash attention -> attn_implementation=\"sdpa\"", NEEDS, 'attn_implementation="sdpa"')


def _rewrite(arg: cst.Arg, fix: FileFix, target: Target) -> cst.Arg | str:
    keyword = arg.keyword.value if arg.keyword is not None else ""
    if keyword == "use_flash_attention_2":
        if not (isinstance(arg.value, cst.Name) and arg.value.value == "True"):
            return "use_flash_attention_2 is not plainly True; fix it by hand"
        return arg.with_changes(keyword=cst.Name("attn_implementation"), value=cst.SimpleString('"sdpa"'))
    value = string_value(arg)
    if value is None or not _FLASH.fullmatch(value):
        return "attn_implementation is not a flash_attention string; fix it by hand"
    return with_string(arg, "sdpa")
