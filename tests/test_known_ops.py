"""Kernels that compute a standard op (rules/judgement.yaml `score.known_ops`): their name
spells the op in whole words, their hours are a share of a new kernel's, the finding says
why, and they never make a core of custom CUDA (grade F)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpucheck.engine import ScanOptions, scan
from tpucheck.judge.known_ops import KNOWN_OP, known_op, name_words
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
OPS = RULESET.judgement.scoring.known_ops


def _kernel(name: str) -> str:
    return f"__global__ void {name}(float* out, const float* in, int n) {{\n  out[0] = in[0];\n}}\n"


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("ms_deformable_im2col_gpu_kernel", ["ms", "deformable", "im2col", "gpu", "kernel"]),
        ("ROIAlignForward", ["roi", "align", "forward"]),
        ("RoIAlignForward", ["ro", "i", "align", "forward"]),
        ("kernel_resample2d_update_output", ["kernel", "resample2d", "update", "output"]),
    ],
)
def test_names_split_at_underscores_and_case_changes(name: str, words: list[str]) -> None:
    assert name_words(name) == words


@pytest.mark.parametrize(
    ("name", "op"),
    [
        ("nms_kernel", "nms"),
        ("RoIAlignForward", "roialign"),
        ("SigmoidFocalLossBackward", "sigmoidfocalloss"),
        ("query_ball_point_kernel", "queryballpoint"),
        ("three_interpolate_grad_kernel", "threeinterpolate"),
        ("three_nearest_neighbors_interpolate_grad_kernel", "threenearestneighbors"),
        ("trilinear_devoxelize_kernel", "trilineardevoxelize"),
        ("avg_voxelize_grad_kernel", "avgvoxelize"),
        ("gather_features_kernel", "gatherfeatures"),
        ("chamfer_dist_grad_kernel", "chamferdist"),
        ("knnquery_cuda_kernel", "knnquery"),
        ("furthestsampling_cuda_kernel", "furthestsampling"),
        # the longest op the words spell: multi-scale deformable attention, not deform conv
        ("ms_deformable_im2col_gpu_kernel", "msdeformableim2col"),
        ("modulated_deformable_im2col_gpu_kernel", "deformableim2col"),
    ],
)
def test_a_kernel_name_spelling_a_standard_op_in_whole_words_is_known(name: str, op: str) -> None:
    assert known_op(name, OPS) == op


@pytest.mark.parametrize(
    "name",
    [
        "columns_kernel",  # letters of no op
        "knnet_forward_kernel",  # `knn` inside a word is no word
        "unknown_kernel",
        "warp_scan_kernel",
        "roi_kernel",  # half of `roialign`
        "fused_attention_fwd",
        None,
        "",
    ],
)
def test_a_kernel_that_spells_no_standard_op_in_whole_words_is_not_known(name: str | None) -> None:
    assert known_op(name, OPS) is None


def _scan(tmp_path: Path, kernel: str) -> tuple[str, tuple[float, float], list[tuple[str, int, int, str, tuple[str, ...]]]]:
    (tmp_path / "op").mkdir()
    (tmp_path / "op" / "op.cu").write_text(_kernel(kernel))
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    findings = [(f.rule, f.span.line, f.span.column, f.severity, tuple(r.rule for r in f.because)) for f in result.findings]
    return result.score.grade, (result.score.effort.low, result.score.effort.high), findings


def test_a_standard_op_kernel_is_priced_at_the_factor_and_graded_d(tmp_path: Path) -> None:
    grade, effort, findings = _scan(tmp_path, "nms_kernel")
    assert findings == [("CK003", 1, 1, "blocker", (KNOWN_OP,))]
    assert effort == (2.0, 6.0)  # CK003's 5-15 h at factor 0.4
    assert grade == "D"


def test_a_custom_kernel_keeps_its_price_and_makes_a_core_of_custom_cuda(tmp_path: Path) -> None:
    grade, effort, findings = _scan(tmp_path, "warp_scan_kernel")
    assert findings == [("CK003", 1, 1, "blocker", ())]
    assert effort == (5.0, 15.0)
    assert grade == "F"


def test_the_known_op_reason_names_the_op_and_its_replacement(tmp_path: Path) -> None:
    (tmp_path / "op").mkdir()
    (tmp_path / "op" / "op.cu").write_text(_kernel("RoIAlignForward"))
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    (finding,) = result.findings
    (reason,) = finding.because
    assert reason.rule == KNOWN_OP
    assert reason.evidence.startswith("`RoIAlignForward` computes `roialign`, a standard op: torchvision.ops.roi_align")
    assert KNOWN_OP in RULESET.judgement.rationale
