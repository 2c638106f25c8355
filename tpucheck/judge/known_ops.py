"""Which standard op a kernel computes, read from its name.

Why: a kernel that computes NMS, RoIAlign, a deformable convolution or a point-cloud
grouping is re-expressed from a published pure-PyTorch formulation, not designed: blind
engineers price it at a fraction of a new kernel and grade a product whose only kernels
are such ops D ("with known alternatives"), not F (rules/judgement.yaml
`score.known_ops`). The name is the only static witness of what a kernel computes, so it is
read strictly: the name is split into words at underscores and case changes, and a known op
must be spelled exactly by a run of whole words (`RoIAlignForward` -> ro|i|align|forward
spells `roialign`; `columns` spells nothing, though it holds the letters of no op either).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from tpucheck.findings import Finding
from tpucheck.ruleset.judgement import KNOWN_OP

__all__ = ["KNOWN_OP", "is_known_op", "known_op", "name_words"]

_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")
_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")


def name_words(name: str) -> list[str]:
    """`ms_deformable_im2col_gpu_kernel` -> [ms, deformable, im2col, gpu, kernel];
    `ROIAlignForward` -> [roi, align, forward]. Digits stay inside their word (`im2col`,
    `upfirdn2d`)."""
    spaced = _ACRONYM.sub(r"\1_\2", _LOWER_UPPER.sub(r"\1_\2", name))
    return [w for w in spaced.lower().split("_") if w]


def known_op(name: str | None, ops: Mapping[str, str]) -> str | None:
    """The longest known op that a run of the name's whole words spells, or None."""
    if not name or not ops:
        return None
    words = name_words(name)
    found: str | None = None
    for start in range(len(words)):
        spelled = ""
        for word in words[start:]:
            spelled += word
            if spelled in ops and (found is None or len(spelled) > len(found)):
                found = spelled
    return found


def is_known_op(finding: Finding) -> bool:
    """A kernel that computes a standard op (`known_op` gave it a `KNOWN_OP` reason)."""
    return any(reason.rule == KNOWN_OP for reason in finding.because)
