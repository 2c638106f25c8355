"""fp16 in Hugging Face settings -> bf16, the dtype TPUs compute in. Unsafe: numerics change.

`fp16=True` -> `bf16=True` and `fp16_full_eval=True` -> `bf16_full_eval=True` (TrainingArguments
and TRL configs), `torch_dtype=torch.float16` (or `"float16"`) -> bf16 in `from_pretrained`
and pipelines, `mixed_precision="fp16"` -> `"bf16"` (Accelerate). `tf32=True`, an Ampere GPU
setting, is dropped.
"""

from __future__ import annotations

import libcst as cst

from tpucheck.fix.base import Codemod, Edit, FileFix, Target, arg_has_comment
from tpucheck.fix.hf_keywords import keyword_edit, string_value, with_string

_RENAMED = {"fp16": "bf16", "fp16_full_eval": "bf16_full_eval"}
_STRINGS = {"float16": "bfloat16", "fp16": "bf16", "torch.float16": "torch.bfloat16", "half": "bfloat16"}


class HfBf16(Codemod):
    name = "hf-bf16"

    def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        if isinstance(original, cst.Call) and isinstance(updated, cst.Call):
            return self._drop_tf32(original, updated, fix)
        if isinstance(original, cst.Arg) and original.keyword is not None and original.keyword.value == "tf32":
            return None  # its call drops it
        return keyword_edit(self.name, original, updated, fix, _rewrite, lambda arg: f"{arg.keyword.value if arg.keyword else '?'}: fp16 -> bf16")

    def _drop_tf32(self, original: cst.Call, updated: cst.Call, fix: FileFix) -> Edit | None:
        """`tf32=True` goes: an argument cannot remove itself, so its call does it."""
        for index, arg in enumerate(original.args):
            if arg.keyword is not None and arg.keyword.value == "tf32":
                target = fix.take_keyword(self.name, arg)
                if target is None:
                    continue
                if arg_has_comment(arg):
                    fix.skip(target, "a comment sits on tf32=True; remove it by hand")
                    return None
                args = list(updated.args)
                del args[index]
                if args and index == len(args):
                    args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                return Edit(updated.with_changes(args=args), (target,), "dropped tf32=True (an Ampere GPU setting)")
        return None


def _rewrite(arg: cst.Arg, fix: FileFix, target: Target) -> cst.Arg | str:
    keyword = arg.keyword.value if arg.keyword is not None else ""
    if keyword in _RENAMED:
        return arg.with_changes(keyword=cst.Name(_RENAMED[keyword]))
    text = string_value(arg)
    if text is not None:
        if text not in _STRINGS:
            return f"{keyword}={text!r}: not an fp16 spelling this fix knows"
        return with_string(arg, _STRINGS[text])
    code = cst.Module([]).code_for_node(arg.value)
    if code.endswith((".float16", ".half")):
        return arg.with_changes(value=cst.parse_expression(code.rsplit(".", 1)[0] + ".bfloat16"))
    return f"{keyword}={code}: not an fp16 spelling this fix knows"
