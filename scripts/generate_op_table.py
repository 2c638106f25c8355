#!/usr/bin/env python3
"""Generate `rules/op-status.json`: what TorchTPU and PyTorch/XLA run for every ATen op.

    python scripts/generate_op_table.py [--shared DIR] [--out FILE] [--check]

Read in place from `../shared/data` (never copied into the project):

- `torchtpu/coverage/torch_tpu_0.2.0.json` and `torch_xla_2.9.0.json`: each backend's
  dispatcher entry per op (kernel, catch-all fallback, composite);
- `op-coverage/native_functions.yaml`: how composites decompose (structured delegates,
  out= variants, `_copy` variants of views);
- `op-coverage/op_coverage.json` and `top_cpu_fallbacks.json`: PyTorch/XLA kernels that
  fall back to the CPU inside (`nonzero`, `_local_scalar_dense`, ...), and when.

And from this project, `rules/implicit-ops.json` (`scripts/trace_implicit.py`): what common
composite-implicit functions decompose into, traced on CPU torch (`torch.cross` calls
`linalg_cross`), so such a function takes the status of its parts.

The resolution lives in `tpucheck/trace/resolve.py`, so the unsupported-op rule pack can
reuse it. The output records each source's version line and sha256, and is written one op a
line (compact, and a regeneration diffs readably). `--check` (run by tests/test_op_table.py)
exits 1 when the committed table is not this script's output.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a plain script: import tpucheck from this checkout
    sys.path.insert(0, str(REPO))

from tpucheck.trace.resolve import NOTES, STATUSES, parse_native_functions, resolve_all, xla_conditions

DEFAULT_SHARED = REPO.parent / "shared"
DEFAULT_OUT = REPO / "rules" / "op-status.json"
IMPLICIT = REPO / "rules" / "implicit-ops.json"
TABLES = {"torchtpu": "data/torchtpu/coverage/torch_tpu_0.2.0.json", "xla": "data/torchtpu/coverage/torch_xla_2.9.0.json"}
NATIVE = "data/op-coverage/native_functions.yaml"
OP_COVERAGE = "data/op-coverage/op_coverage.json"
TOP_FALLBACKS = "data/op-coverage/top_cpu_fallbacks.json"
COMMAND = "python scripts/generate_op_table.py"
SCHEMA_VERSION = 1


def _shown(path: Path) -> str:
    return Path(os.path.relpath(path.absolute(), REPO)).as_posix()


def _source(path: Path, version: str) -> dict[str, str]:
    return {"file": _shown(path), "version": version, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def generate(shared: Path) -> str:
    """The table's text for the data under `shared`."""
    tables: dict[str, dict[str, str]] = {}
    autograd: dict[str, frozenset[str]] = {}
    sources = []
    for target, relative in TABLES.items():
        path = shared / relative
        data = json.loads(path.read_text(encoding="utf-8"))
        tables[target] = {op: entry["kind"] for op, entry in data["ops"].items()}
        autograd[target] = frozenset(op for op, entry in data["ops"].items() if entry.get("tpu_autograd") or entry.get("xla_autograd"))
        sources.append({"target": target, **_source(path, data["source"])})
    native_path = shared / NATIVE
    entries = yaml.load(native_path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    coverage_path, top_path = shared / OP_COVERAGE, shared / TOP_FALLBACKS
    coverage = json.loads(coverage_path.read_text(encoding="utf-8"))
    top = json.loads(top_path.read_text(encoding="utf-8"))
    native_version = coverage.get("inputs", {}).get("native_functions.yaml", {}).get("source", "native_functions.yaml")
    sources += [
        _source(native_path, native_version),
        _source(coverage_path, "PyTorch/XLA op coverage survey (conditional fallbacks in XLA kernels)"),
        _source(top_path, "PyTorch/XLA CPU-fallback survey (the conditions of those fallbacks)"),
    ]
    traced = json.loads(IMPLICIT.read_text(encoding="utf-8"))
    sources.append(_source(IMPLICIT, f"composite-implicit decompositions traced on torch {traced['torch']}"))
    implicit = {op: tuple(parts) for op, parts in traced["decompositions"].items()}
    resolved = resolve_all(tables, parse_native_functions(entries), xla_conditions(coverage, top), autograd, implicit)
    head = {
        "schema_version": SCHEMA_VERSION,
        "generated_by": COMMAND,
        "statuses": list(STATUSES),
        "notes": NOTES,
        "sources": sources,
    }
    lines = ["{"]
    for key, value in head.items():
        lines.append(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
    lines.append('"ops": {')
    items = list(resolved.items())
    for index, (op, per_target) in enumerate(items):
        entry = {target: status.to_json() for target, status in per_target.items()}
        comma = "," if index < len(items) - 1 else ""
        lines.append(f"{json.dumps(op)}: {json.dumps(entry, ensure_ascii=False, separators=(',', ':'))}{comma}")
    lines += ["}", "}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="the shared data checkout (default: ../shared)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write (default: rules/op-status.json)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed table differs from what would be generated")
    args = parser.parse_args(argv)
    text = generate(args.shared)
    if args.check:
        old = args.out.read_text(encoding="utf-8") if args.out.exists() else None
        if old != text:
            print(f"{_shown(args.out)} is not the output of {COMMAND}; regenerate it", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {_shown(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
