"""CMake `message(...)` arguments are text for the user (analyze/textfiles.py): audit BC
found instant-ngp's `message(FATAL_ERROR "... CMAKE_CUDA_ARCHITECTURES ...")` reported as
a CUDA build, twice on its line. Directives around a message keep their findings."""

from __future__ import annotations

from tpucheck.analyze.textfiles import analyze_textfile
from tpucheck.ruleset import load_ruleset

FILE_RULES = [rule for rule in load_ruleset().rules if rule.id == "BLD001"]


def rows(text: str) -> list[tuple[str, int, int]]:
    return [(m.rule_id, m.span.line, m.span.column) for m in analyze_textfile("CMakeLists.txt", text, FILE_RULES)]


def test_a_message_naming_cuda_settings_is_no_cuda_build() -> None:
    text = (
        "cmake_minimum_required(VERSION 3.18)\n"
        "project(viewer LANGUAGES CXX)\n"
        'message(FATAL_ERROR "Set CMAKE_CUDA_ARCHITECTURES or TORCH_CUDA_ARCH_LIST; see enable_language(CUDA)")\n'
        "message(STATUS\n"
        '  "find_package(CUDAToolkit) found nothing (LANGUAGES CUDA)")\n'
    )
    assert rows(text) == []


def test_directives_beside_and_after_a_message_are_reported() -> None:
    """Adversarial: a message on the line before, a parenthesis and an escaped quote
    inside it, and the directive right after its closing parenthesis."""
    text = (
        'message(STATUS "building (with \\"CUDA\\")")\n'
        "project(fused LANGUAGES CXX CUDA)\n"
        'message(STATUS "arch") set(CMAKE_CUDA_ARCHITECTURES 80)\n'
    )
    assert rows(text) == [("BLD001", 2, 15), ("BLD001", 3, 28)]


def test_a_line_is_reported_once_per_rule() -> None:
    text = "project(fused LANGUAGES CXX CUDA)\nset_target_properties(fused PROPERTIES CUDA_ARCHITECTURES 80 CMAKE_CUDA_FLAGS -O3)\n"
    assert rows(text) == [("BLD001", 1, 15), ("BLD001", 2, 40)]

