"""Entry points that only deploy to a CUDA-only engine: an alternative the port leaves.

Why: detection and re-identification repositories ship `tools/deploy/trt_export.py` and
`trt_inference.py` beside their training and evaluation scripts: each imports TensorRT
(or PyCUDA) at its top, or a module of the project that does, and exists to run the model
in that engine. The product trains and runs in PyTorch without them, and a TPU port
deploys the PyTorch model, not a TensorRT plan (audit AD: a DeepStream plugin judged
optional; blind set 37's fast-reid banded without its TensorRT tools). Recognised by
structure: an engine module (rules/judgement.yaml `cuda_engines`), a script outside any
package, that no project module imports, in a product that has other entry points. When
every entry point drives the engine, the engine is the product and nothing here applies.
"""

from __future__ import annotations

from collections.abc import Callable

from tpucheck.findings import Reason

__all__ = ["ENGINE_DEPLOY", "deploy_scripts"]

ENGINE_DEPLOY = "alternative.engine-deploy"


def deploy_scripts(
    modules: dict[str, str], engines: dict[str, Reason], edges: dict[str, list[tuple[str, bool]]], script: Callable[[str], bool]
) -> dict[str, Reason]:
    """Dotted module -> why it is an engine's deployment script (`modules`: dotted name ->
    path; `engines`: path -> the engine import; `edges`: module -> the modules it
    imports; `script`: whether a path is a script, outside any package). An engine module
    in a package is a library's integration, which its users import: not a deployment
    script. One that only such scripts import (a calibrator the export script loads) is
    one of them too."""
    importers: dict[str, set[str]] = {}
    for source, targets in edges.items():
        for target, _ in targets:
            if target != source and not source.startswith(target + "."):
                importers.setdefault(target, set()).add(source)
    roots = [m for m in modules if not importers.get(m)]
    # a script drives the engine when it imports, unconditionally, a module that does (an
    # evaluation script over the project's TensorRT processor: blind set 71, YOLOv6)
    why = {m: engines[modules[m]].evidence for m in modules if modules[m] in engines}
    for m in roots:
        via = next((t for t, conditional in edges.get(m, ()) if not conditional and modules.get(t) in engines), None)
        if m not in why and via is not None:
            why[m] = f"{modules[m]} imports {modules[via]}: {why[via]}"
    found = {m for m in roots if m in why and script(modules[m])}
    if not found or len(found) == len(roots):
        return {}
    grew = True  # a module the found scripts alone import is one of them
    while grew:
        more = {m for m in modules if m not in found and modules[m] in engines and importers.get(m) and importers[m] <= found}
        found |= more
        grew = bool(more)
    return {
        m: Reason(ENGINE_DEPLOY, f"{modules[m]} drives a CUDA-only engine and only deployment scripts import it, if any: a deployment the port leaves behind ({why[m]})")
        for m in sorted(found)
    }
