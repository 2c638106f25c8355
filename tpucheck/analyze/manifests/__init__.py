"""Read dependency manifests into entries with exact source positions.

The dependency rules only need to know *which* packages and package indexes a project
asks for and *where* it says so, so this module turns every supported manifest format
into one flat list of `Requirement`s and leaves judging them to the rule engine.

Nothing here ever executes or imports project code: `setup.py` is read with `ast`, YAML
goes through PyYAML's safe loader only, and TOML through `tomllib`. A scanner that runs
the code it is auditing would be both a security hole and a source of flaky results.

Positions follow the rest of tpucheck: 1-based lines, 1-based columns counting
characters (not bytes), exclusive end. Where a format's parser gives no positions
(`tomllib`), the text is searched; a position that cannot be recovered falls back to the
enclosing table's line rather than dropping the entry, because a finding on a slightly
wrong line is more useful than a missed CUDA dependency.
"""

from __future__ import annotations

from dataclasses import replace

from tpucheck.analyze.manifests.conda import parse_conda_env
from tpucheck.analyze.manifests.model import ManifestError, Requirement
from tpucheck.analyze.manifests.pyproject import parse_pyproject
from tpucheck.analyze.manifests.requirements_txt import parse_requirements_txt, requirements_extra
from tpucheck.analyze.manifests.setup_cfg import parse_setup_cfg
from tpucheck.analyze.manifests.setup_py import parse_setup_py
from tpucheck.discover.manifest_names import is_manifest as is_manifest  # re-exported: the parsers answer for their names
from tpucheck.discover.manifest_names import manifest_format

__all__ = ["ManifestError", "Requirement", "is_manifest", "parse_manifest", "requirements_extra"]


def parse_manifest(relpath: str, text: str) -> list[Requirement]:
    """All entries of one manifest, sorted by position.

    Raises `ManifestError` when the file is not valid in its own format (TOML, Python,
    YAML); requirements files and setup.cfg are read leniently and never raise, matching
    how forgiving their consumers are. A path `is_manifest` rejects also raises
    `ManifestError`: if file discovery and this module ever disagree on names, the scan
    should report the file, not crash.
    """
    fmt = manifest_format(relpath)
    if fmt is None:
        raise ManifestError(f"not a recognized dependency manifest name: {relpath}")
    if text.startswith("\ufeff"):
        # Editors do not show the BOM, so columns must not count it.
        text = text[1:]
    if fmt == "requirements":
        found = parse_requirements_txt(text)
        extra = requirements_extra(relpath)
        if extra is not None:
            found = [replace(r, extra=extra) for r in found]
    elif fmt == "pyproject":
        found = parse_pyproject(text)
    elif fmt == "setup.py":
        found = parse_setup_py(text)
    elif fmt == "setup.cfg":
        found = parse_setup_cfg(text)
    else:
        found = parse_conda_env(text)
    # The same literal can be reachable twice (a list bound to a name and used for both
    # install_requires and an extra); one place should yield one finding.
    unique = list(dict.fromkeys(found))
    unique.sort(key=lambda r: (r.line, r.column))
    return unique
