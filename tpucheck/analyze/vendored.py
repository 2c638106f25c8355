"""Vendored copies of published CUDA packages: a package's whole source tree (its own
`setup.py` and its package folder) copied into the repository, which the product imports
as it would the installed package.

Why: VisionLLM keeps full copies of mmcv and apex (147 and 80 kernels) beside its code,
and sapiens a copy of mmcv; the product uses a handful of their ops. Priced kernel by
kernel, every op of the library became the product's port (blind set 44: VisionLLM at
1,003-3,008 h against a band of 110-340 h; sapiens at 500-1,500 h against 40-120 h in set
29). The port replaces what the product uses of the package, which its imports of it price
through the package's own rules (DEP036 per mmcv op, DEP001 for apex), as they would with
the package installed. Recognised by structure: a folder holding a `setup.py` and a
package folder whose name is one of `kernels.vendored_packages`, beside it or under `src/`
(blind set 79: CodeRL's fork of transformers 4.16, whose unused speech and layout models
held 17 blockers), also when `.gitmodules` names it: a fork the product imports at load
had its reached modules priced as the product's code.
"""

from __future__ import annotations

from collections.abc import Iterable

from tpucheck.findings import Reason

__all__ = ["VENDORED_PACKAGE", "vendored_packages"]

VENDORED_PACKAGE = "set-aside.vendored-package"


def vendored_packages(paths: Iterable[str], names: frozenset[str]) -> dict[str, tuple[str, Reason]]:
    """Folder of a vendored copy -> (the package's name, why its code is set aside)."""
    files = set(paths)
    out: dict[str, tuple[str, Reason]] = {}
    for path in sorted(files):
        parts = path.split("/")
        if len(parts) < 3 or parts[-1] != "__init__.py" or parts[-2] not in names:
            continue
        root = "/".join(parts[:-2])
        if parts[-3] == "src" and len(parts) >= 4 and f"{root}/setup.py" not in files:
            root = "/".join(parts[:-3])  # the src layout: `transformers/src/transformers/` beside `transformers/setup.py`
        if f"{root}/setup.py" not in files or root in out:
            continue
        name = parts[-2]
        out[root] = (name, Reason(VENDORED_PACKAGE, f"{root} is a copy of the `{name}` package ({root}/setup.py): what the product uses of it is priced by its imports of `{name}`, as with the package installed"))
    return out
