"""An import whose except clause only reports (`except ImportError: print("... not
compiled")`) puts nothing in the name's place: code that then calls the name fails where it
stands, so the extension is no working fallback (audit AO: BEVDepth's voxel pooling, every
model calls it; its kernels read as fallback kept). Look-alikes keep their fallback."""

from __future__ import annotations

from tpucheck.analyze.imports import scan_imports
from tpucheck.ruleset import load_ruleset

REPORTS = load_ruleset().judgement.guards.quiet

TRY = """\
try:
    from pkg.ops.voxel_pooling import voxel_pooling
except ImportError:
    {handler}


def pool(x):
    {use}
"""


def placeholder(handler: str, use: str = "return voxel_pooling(x)") -> bool:
    found = [i for i in scan_imports(TRY.format(handler=handler, use=use), (), REPORTS) if i.module == "pkg.ops.voxel_pooling.voxel_pooling"]
    assert len(found) == 1
    return found[0].placeholder


def test_a_handler_that_only_reports_leaves_a_placeholder() -> None:
    assert placeholder("print('Import VoxelPooling fail.')")
    assert placeholder("warnings.warn('not compiled')")
    assert placeholder("pass")


def test_a_handler_that_provides_the_name_keeps_the_fallback() -> None:
    """Adversarial: the handler imports the PyTorch twin under the same name."""
    assert not placeholder("print('slow path')\n    from pkg.ops.reference import voxel_pooling")


def test_a_module_that_tests_the_name_keeps_the_fallback() -> None:
    """Adversarial: the caller asks whether the import worked."""
    assert not placeholder("print('x')", "if 'voxel_pooling' in globals() and voxel_pooling is not None:\n        return voxel_pooling(x)\n    return x")
