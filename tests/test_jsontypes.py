"""The one set of type checks for data read back from JSON (merge inputs, cache entries,
notebooks): exact types, and messages that name the field."""

from __future__ import annotations

import json

import pytest

from tpucheck.findings import Finding, Span
from tpucheck.jsontypes import expect_bool, expect_int, expect_list, expect_str, json_type, optional_str


@pytest.mark.parametrize(
    ("text", "name"),
    [("null", "null"), ("true", "boolean"), ("1", "number"), ("1.5", "number"), ('"x"', "string"), ("[]", "array"), ("{}", "object")],
)
def test_json_type_names_what_json_load_returned(text: str, name: str) -> None:
    assert json_type(json.loads(text)) == name


@pytest.mark.parametrize(
    ("check", "value", "message"),
    [
        (expect_int, True, "line must be an integer"),  # a bool is an int to Python, not to JSON
        (expect_int, 1.0, "line must be an integer"),
        (expect_str, None, "line must be a string"),
        (expect_bool, 0, "line must be a boolean"),
        (expect_list, (1,), "line must be a list"),
    ],
)
def test_a_wrong_type_is_a_type_error_naming_the_field(check, value, message: str) -> None:
    with pytest.raises(TypeError, match=f"^{message}$"):
        check(value, "line")


def test_values_of_the_right_type_pass_through() -> None:
    assert (expect_int(3), expect_str("a"), expect_bool(False), optional_str(None), optional_str("b")) == (3, "a", False, None, "b")
    assert expect_list([1, 2], length=2) == [1, 2]
    with pytest.raises(TypeError, match="must have 3 items"):
        expect_list([1, 2], "entry", length=3)


def test_a_finding_read_back_checks_each_field() -> None:
    finding = Finding(
        rule="CA001", name="n", category="c", severity="major", confidence="high", path="a.py", span=Span(1, 2, 1, 5),
        cell=None, message="m", fix="f", affects=("training",), snippet="s", role="library", guarded=False, fingerprint="fp",
    )  # fmt: skip
    data = finding.to_dict()
    assert Finding.from_dict(data) == finding
    with pytest.raises(TypeError, match=r"^end_column must be an integer$"):
        Finding.from_dict({**data, "end_column": "5"})
