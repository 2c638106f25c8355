"""Device counts kept in a name: `n = torch.cuda.device_count()` then `if n > 1:`.

A count that is only compared with a number (and perhaps printed) is the check that keeps a
multi-GPU path off a TPU host, where it is 0, as `if torch.cuda.device_count() > 1:` is;
the count picks no device. A count that is also used as a number (`batch_size *= n`,
`range(n)`, `world_size=n`) does work and keeps its finding (audit AE: Dassl's trainer
keeps the count in `device_count` and tests it `> 1` before DataParallel).

Read with `ast` from the whole source (the walk's tree may be hollowed by the screen),
by name across the module: a name used as a number anywhere keeps every finding."""

from __future__ import annotations

import ast

from tpucheck.analyze.pyparse import last_name, parse_or_none


def compared_only(source: str, reports: frozenset[str]) -> frozenset[str]:
    """Names the module sets from a `device_count()` call (whose call the walk resolves)
    and reads only as a comparison's left side against an integer literal (`n > 1`, `n >=
    2`), in an f-string, or as an argument of a report call, compared at least once: a
    name only printed or never read guards nothing (it is the count's edit, as a printed
    `torch.cuda.device_count()` is). `reports`: calls whose arguments only report a value
    (rules/judgement.yaml `guards.report_calls`: `print`, `logger.info`)."""
    tree = parse_or_none(source) if "device_count" in source else None
    if tree is None:
        return frozenset()
    names = frozenset(
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and last_name(node.value.func) == "device_count"
        for target in node.targets
        if isinstance(target, ast.Name)
    )
    if not names:
        return frozenset()
    compared: set[str] = set()
    bad: set[str] = set()
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, reported = stack.pop()
        if isinstance(node, ast.Name):
            if node.id in names and isinstance(node.ctx, ast.Load) and not reported:
                bad.add(node.id)
            continue
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id in names and all(
            isinstance(c, ast.Constant) and type(c.value) is int for c in node.comparators
        ):
            compared.add(node.left.id)
            continue
        if isinstance(node, ast.JoinedStr):
            stack.extend((child, True) for child in ast.iter_child_nodes(node))
            continue
        if isinstance(node, ast.Call) and last_name(node.func) in reports:
            stack.append((node.func, reported))
            stack.extend((arg, True) for arg in (*node.args, *(k.value for k in node.keywords)))
            continue
        stack.extend((child, reported) for child in ast.iter_child_nodes(node))
    return frozenset(compared - bad)
