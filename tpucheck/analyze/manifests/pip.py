"""One pip requirement line (PEP 508, a URL or path, or a requirements-file option)
into (kind, name, spec): shared by every format that embeds pip requirements."""

from __future__ import annotations

import re
from urllib.parse import unquote

from tpucheck.ruleset.names import normalize_package

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_NAME_RE = re.compile(_NAME)
_NAME_AT_RE = re.compile(rf"({_NAME})\s*(?:\[[^\]]*\])?\s*@")
# What may follow a name in PEP 508 (or pip's looser reading): extras, a version
# clause (bare or parenthesized), markers, or nothing. Anything else is not a requirement.
_AFTER_NAME_RE = re.compile(r"\s*(?:$|[\[(=<>!~;])")
_TRAILING_OPTION_RE = re.compile(r"\s-")
_ARCHIVE_RE = re.compile(r"\.(?:tar\.gz|tgz|tar\.bz2|tbz2?|tar\.xz|txz|tar|zip)$", re.IGNORECASE)
_EGG_RE = re.compile(r"[#&]egg=([^&#\s]+)")

_LONG_OPTIONS = (
    "index-url",
    "extra-index-url",
    "find-links",
    "no-index",
    "requirement",
    "constraint",
    "editable",
    "no-binary",
    "only-binary",
    "prefer-binary",
    "require-hashes",
    "pre",
    "trusted-host",
    "use-feature",
    "global-option",
    "config-settings",
    "hash",
)
_INDEX_OPTIONS = {"index-url", "extra-index-url", "find-links", "i", "f"}
_EDITABLE_OPTIONS = {"editable", "e"}


def parse_pip_line(line: str, allow_options: bool) -> tuple[str, str, str] | None:
    """(kind, name, spec) of one logical requirements-file line, or None to skip it.

    Never raises: manifests in the wild contain junk, and one junk line must not hide
    the CUDA wheel on the next.
    """
    line = line.strip()
    if not line:
        return None
    if line.startswith("-"):
        return _parse_option_line(line) if allow_options else None
    return _parse_requirement(line)


def _parse_option_line(line: str) -> tuple[str, str, str] | None:
    if line.startswith("--"):
        found = re.match(r"--([A-Za-z][A-Za-z0-9-]*)", line)
        if not found:
            return None
        given = found.group(1).lower()
        rest = line[found.end() :]
        if rest.startswith("="):
            rest = rest[1:]
        elif rest and not rest[0].isspace():
            return None
        # optparse accepts any unambiguous prefix of a long option, and so does pip.
        candidates = [o for o in _LONG_OPTIONS if o.startswith(given)]
        option = given if given in _LONG_OPTIONS else (candidates[0] if len(candidates) == 1 else given)
    else:
        if len(line) < 2 or not line[1].isalpha():
            return None
        option = line[1]
        rest = line[2:].lstrip()
        if rest.startswith("="):
            rest = rest[1:]
    tokens = rest.split()
    if not tokens:
        return None
    value = tokens[0]
    if option in _INDEX_OPTIONS:
        return ("index", "", value)
    if option in _EDITABLE_OPTIONS:
        # Only a VCS URL naming its egg says which package it installs; a local path
        # is the project itself (or a sibling scanned on its own).
        name = _egg_name(value)
        return ("package", name, value) if name else None
    return None


def _egg_name(location: str) -> str | None:
    found = _EGG_RE.search(location)
    if not found:
        return None
    egg = found.group(1).split("[", 1)[0]
    return normalize_package(egg) if _NAME_RE.fullmatch(egg) else None


def _parse_requirement(text: str) -> tuple[str, str, str] | None:
    # pip stops the requirement at the first whitespace-separated token that starts
    # with '-' (per-requirement options such as --hash); those are not the spec.
    cut = _TRAILING_OPTION_RE.search(text)
    requirement = (text[: cut.start()] if cut else text).strip()
    if not requirement:
        return None
    named_url = _NAME_AT_RE.match(requirement)
    if named_url:
        name = named_url.group(1)
        return ("package", normalize_package(name), requirement[len(name) :].strip())
    # URLs may contain ';', so pip only treats "; " (or " ;") as their marker separator.
    location = re.split(r";\s|\s;", requirement, maxsplit=1)[0].strip()
    if _looks_like_location(location):
        name = _name_from_location(location)
        return ("package", name, requirement) if name else None
    found = _NAME_RE.match(requirement)
    if not found or not _AFTER_NAME_RE.match(requirement, found.end()):
        return None
    return ("package", normalize_package(found.group(0)), requirement[found.end() :].strip())


def _looks_like_location(text: str) -> bool:
    return (
        "://" in text
        or text.startswith((".", "/", "~", "\\"))
        or text.lower().startswith("file:")
        or "/" in text
        or "\\" in text
        or bool(_ARCHIVE_RE.search(text))
        or text.lower().endswith(".whl")
    )


def _name_from_location(location: str) -> str | None:
    """The project name a bare URL or path installs, read from `#egg=` or the file name.

    Wheel names escape dashes inside the project name, so the first dash-separated
    field is the name. Old sdists did not (`flash-attn-2.5.6.tar.gz`), so for them the
    name runs up to the first dash followed by a digit.
    """
    egg = _egg_name(location)
    if egg:
        return egg
    path = location.split("#", 1)[0].split("?", 1)[0].rstrip("/\\")
    base = unquote(re.split(r"[/\\]", path)[-1])
    if base.lower().endswith(".whl"):
        fields = base[:-4].split("-")
        if len(fields) < 2:  # not even name-version: not a wheel file name
            return None
        candidate = fields[0]
    else:
        archive = _ARCHIVE_RE.search(base)
        if not archive:
            return None
        stem = base[: archive.start()]
        versioned = re.match(r"(.+?)-\d", stem)
        if not versioned:
            return None
        candidate = versioned.group(1)
    return normalize_package(candidate) if _NAME_RE.fullmatch(candidate) else None
