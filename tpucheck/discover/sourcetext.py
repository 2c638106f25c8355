"""Bytes to text: PEP 263 for Python, BOMs, and refusing binaries with a clear reason."""

from __future__ import annotations

import codecs
import io
import tokenize


class SourceTextError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def decode(data: bytes, *, python: bool) -> str:
    """Decode a file's bytes; raise SourceTextError("binary" | "encoding", ...) otherwise.

    Python files honour their coding declaration (PEP 263) as the interpreter would;
    other text is UTF-8. UTF-16 with a BOM is text, not a binary, even with its NULs.
    """
    if data.startswith(_UTF16_BOMS):
        try:
            return _newlines(data.decode("utf-16"))
        except UnicodeDecodeError as exc:
            raise SourceTextError("encoding", f"invalid UTF-16 at byte {exc.start}") from None
    if b"\0" in data[:8192]:
        raise SourceTextError("binary", "binary file (contains NUL bytes)")
    encoding = "utf-8-sig"
    if python:
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as exc:
            raise SourceTextError("encoding", f"bad coding declaration: {exc.msg}") from None
    try:
        return _checked(_newlines(data.decode(encoding)), encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SourceTextError("encoding", f"not valid {encoding} (line {line}, byte {exc.start}): {exc.reason}") from None
    except LookupError:
        raise SourceTextError("encoding", f"unknown encoding {encoding!r} in coding declaration") from None


def _newlines(text: str) -> str:
    return text[1:] if text.startswith("\ufeff") else text


def _checked(text: str, encoding: str) -> str:
    """Refuse text no UTF-8 can hold. A coding declaration may name any codec Python has,
    and `unicode_escape` turns `\\ud800` in the bytes into an unpaired surrogate that
    would fail later, in the parser or in a report, far from its cause."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        line = text.count("\n", 0, exc.start) + 1
        raise SourceTextError("encoding", f"decoding as {encoding} gives an unpaired surrogate (line {line}): not text") from None
    return text
