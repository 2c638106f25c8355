"""`torch.cuda.manual_seed(s)` / `manual_seed_all(s)` -> `torch.manual_seed(s)`.

`torch.manual_seed` seeds the CPU and every device, the GPU included. Where the same block
already calls `torch.manual_seed` with the same seed before the CUDA call, the CUDA call
adds nothing and is removed: that is exact, hence safe. Elsewhere the replacement also
reseeds the CPU generator, which changes the random numbers CPU code draws afterwards:
that part is done only with `--unsafe-fixes`.
"""

from __future__ import annotations

import libcst as cst

from tpucheck.fix.base import Codemod, Edit, FileFix

_SEEDERS = ("torch.cuda.manual_seed", "torch.cuda.manual_seed_all", "torch.cuda.random.manual_seed", "torch.cuda.random.manual_seed_all")


class ManualSeed(Codemod):
    name = "manual-seed"

    def __init__(self) -> None:
        self.redundant: set[cst.Call] = set()

    def begin(self, module: cst.Module, fix: FileFix) -> None:
        """Find the CUDA seed calls that follow `torch.manual_seed` with the same seed."""
        for block in _blocks(module):
            seeded: set[str] = set()
            for statement in block.body:
                call = _only_call(statement)
                if call is None or len(call.args) != 1:
                    continue
                names = fix.qualified(call.func)
                seed = module.code_for_node(call.args[0].value)
                if names & {"torch.manual_seed", "torch.random.manual_seed"}:
                    seeded.add(seed)
                elif names & set(_SEEDERS) and seed in seeded and not _has_comment(statement):
                    self.redundant.add(call)

    def leave(self, original: cst.CSTNode, updated: cst.CSTNode, fix: FileFix) -> Edit | None:
        if isinstance(original, cst.SimpleStatementLine):
            return self._statement(original, fix)
        if isinstance(original, cst.Call) and isinstance(updated, cst.Call) and original not in self.redundant and fix.carries(self.name, original):
            target = fix.take(self.name, original)
            assert target is not None
            if not fix.qualified(original.func) & set(_SEEDERS):
                fix.skip(target, "not a CUDA seed call this fix knows; fix it by hand")
                return None
            if len(updated.args) != 1 or updated.args[0].star:
                fix.skip(target, "a seed call with other than one argument; fix it by hand")
                return None
            arg = updated.args[0].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
            return Edit(
                updated.with_changes(func=fix.torch("manual_seed"), args=[arg]),
                (target,),
                "torch.cuda.manual_seed -> torch.manual_seed (reseeds the CPU too)",
                unsafe="torch.manual_seed(s) reseeds the CPU generator too (numbers drawn on the CPU change); where torch.manual_seed(s) is called just before, the CUDA call is simply dropped",
            )
        return None

    def _statement(self, original: cst.SimpleStatementLine, fix: FileFix) -> Edit | None:
        """Remove a redundant seed statement (its comment lines go to the next statement)."""
        call = _only_call(original)
        if call is None or call not in self.redundant or (target := fix.take(self.name, call)) is None:
            return None
        return Edit(cst.RemovalSentinel.REMOVE, (target,), "dropped torch.cuda.manual_seed: torch.manual_seed already seeds every device")


def _blocks(module: cst.Module) -> list[cst.IndentedBlock | cst.Module]:
    found: list[cst.IndentedBlock | cst.Module] = [module]

    class _Collect(cst.CSTVisitor):
        def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
            found.append(node)

    module.visit(_Collect())
    return found


def _only_call(statement: cst.CSTNode) -> cst.Call | None:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            return small.value
    return None


def _has_comment(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and statement.trailing_whitespace.comment is not None

