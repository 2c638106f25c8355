"""Statement handlers: control flow (which branches keep a fallback, which are test skips,
loops, periodic or `__main__` blocks), scopes (functions, classes, lambdas,
comprehensions) and bindings (imports and the dependency rules they trip, aliases made by
assignment, host data). The questions are answered in conditions.py and hostdata.py; the
answers change the walk only here, through `enter`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any

import libcst as cst

from tpucheck.analyze.dead_code import DEAD_VERSION
from tpucheck.analyze.python import choices, conditions, counts, excepts, hostdata, options, selected, testmarks
from tpucheck.analyze.python.context import Guard, Names, RoleMark
from tpucheck.analyze.python.core import BaseWalker, Hit
from tpucheck.analyze.python.cpu_pick import picks_cpu
from tpucheck.analyze.python.flag_parameters import flag_parameters
from tpucheck.analyze.python.scope import Scope, dotted, import_from_module, node_code, target_names
from tpucheck.analyze.version_tests import version_test
from tpucheck.findings import PENDING
from tpucheck.ruleset.model import Matcher

ASSIGNMENT = hostdata.ASSIGNMENT


class StatementWalker(BaseWalker):
    # -- modules and blocks --------------------------------------------------------------

    def run(self, module: cst.Module, source: str | None = None) -> list[Any]:
        """Walk the module; `source` is its full text when the tree was hollowed by the
        screen (questions about the whole module read it)."""
        self.source, self._uses, self._test_module, self.assigned = source if source is not None else module.code, None, None, None
        self._reads_version = "__version__" in self.source
        self.bind_module_imports(module.body)
        self.flags |= flag_parameters(module, lambda value: conditions.mentions_availability(self, value))
        # `pytestmark = pytest.mark.skipif(<no CUDA>)` skips every test of the module.
        mark = next((s for s in module.body if conditions.module_skip_mark(self, s)), None)
        queried = testmarks.assigned_names(module.body, lambda value: conditions.mentions_availability(self, value))
        self.skip_flags = testmarks.skip_only_flags(module, self.source, queried, self.index.guards.skip_decorators)
        with self.enter(guard=Guard("guard.test-skip", mark) if mark is not None else None):
            self.walk_block(module.body)
        return self.hits

    def only_compared(self, targets: Sequence[cst.AssignTarget]) -> bool:
        """Whether every target is a plain name the module only compares with a number or
        reports (counts.py)."""
        if self._compared_counts is None:
            self._compared_counts = counts.compared_only(self.source, self.index.guards.report_calls)
        return all(isinstance(t.target, cst.Name) and t.target.value in self._compared_counts for t in targets)

    def collected_test(self, node: cst.FunctionDef) -> bool:
        """Whether a module-level `test_*` function is a test by what it does: its module
        imports a test framework, it asserts or checks numerics itself (testmarks.py), or
        nothing in its module calls it (a hand-run check left in a library module: audit
        AF, CogView's `test_sparse_attention`). A script's `test_net(...)` that its own
        `__main__` calls is its evaluation loop."""
        if self._test_module is None:
            self._test_module = testmarks.imports_test_framework(self.source, self.index.guards.test_frameworks)
        if self._test_module or testmarks.checks_like_a_test(node, self.index.guards.numerics_checks):
            return True
        if self._uses is None:
            self._uses = excepts.name_uses(self.source)
        return node.name.value not in self._uses.loaded

    def walk_block(self, statements: Sequence[cst.CSTNode], start: int = 0) -> None:
        """Statements in order; after an early exit on "no CUDA" (`if not
        torch.cuda.is_available(): return fallback(x)`, `pytest.skip(...)`,
        `pytest.importorskip("flash_attn")`) the rest of the block is the CUDA path."""
        for at in range(start, len(statements)):
            statement = statements[at]
            if conditions.module_skip_mark(self, statement) or (self.skip_flags and isinstance(statement, cst.SimpleStatementLine) and testmarks.assigned_names([statement]) & self.skip_flags):
                with self.enter(guard_test=True):
                    self.walk(statement)
            else:
                self.walk(statement)
            if start == 0 and conditions.exits_without_cuda(self, statement, raise_caught=self.frame.raise_caught):
                with self.enter(guard=Guard("guard.early-exit", statement)):
                    self.walk_block(statements, at + 1)
                return

    def on_indented_block(self, node: cst.IndentedBlock, ctx: str | None) -> None:
        self.walk_block(node.body)

    # -- branches, loops, failures -------------------------------------------------------

    def on_if(self, node: cst.If, ctx: str | None) -> None:
        test_parts = dotted(node.test)
        if test_parts is not None and test_parts[-1] == "TYPE_CHECKING":
            with self.enter(type_checking=True):
                self.walk(node.body)
            if node.orelse is not None:
                self.walk(node.orelse)
            return
        guards = self.index.guards
        available = conditions.mentions_availability(self, node.test)
        polarity = conditions.cuda_polarity(self, node.test)
        tpu = conditions.tpu_test(self, node.test)
        option = options.option_polarity(self, node.test) if polarity == 0 and not tpu else 0
        # A side that raises is no fallback: the other side is the only way on (and the test
        # that picks it is the place to edit, so it is reported).
        body_fails, else_fails = conditions.fails(node.body, guards.skip_raises), conditions.fails(node.orelse, guards.skip_raises)
        skip = polarity < 0 and conditions.is_exit(node.body, guards.skip_calls) and not body_fails
        guard_test = (available or conditions.counts_cuda_devices(self, node.test)) and ((polarity > 0 and not else_fails) or skip)
        # A device test is a guard, not a lost path, when the branch a TPU takes is the one
        # written for other devices (`if x.device.type != "cuda": return fallback(x)`), or
        # when the CUDA side only sets CUDA's own knobs (tf32, sync debug mode).
        guard_test = guard_test or (not available and polarity < 0 and not body_fails) or (
            polarity > 0 and conditions.cuda_settings_only(self, node.body)
        ) or (polarity != 0 and node.orelse is None and conditions.reports_only(self, node.body)) or choices.turns_feature_off(self, node, polarity) or (
            polarity != 0 and isinstance(node.orelse, cst.Else) and conditions.placement_only(self, node.body) and conditions.placement_only(self, node.orelse.body)
        ) or (polarity > 0 and node.orelse is None and conditions.to_host_only(node.body))
        # ... unless the other side sends the host to the CPU: then the test picks the device
        guard_test = guard_test and not (available and picks_cpu(self, node.orelse if polarity > 0 else node.body))
        with self.enter(guard_test=guard_test, fatal=choices.stops_without_cuda(self, node, polarity) and not self.frame.raise_caught):
            self.walk(node.test)
        outer = self.frame
        body_guard = else_guard = outer.guard
        pending_ok = outer.guard is None or outer.guard.pending  # a real guard already decides
        if polarity > 0 and not else_fails:
            body_guard = Guard("guard.test", node.test)
        elif option > 0 and (not else_fails or conditions.names_a_value(node.test)):
            # `elif act == "mish": ... else: raise ValueError(act)`: the raise rejects
            # unknown values, it is no CUDA side (audit V: magic-animate)
            body_guard = Guard("guard.option", node.test)
        elif polarity == 0 and conditions.other_accelerator_test(self, node.test):
            body_guard = Guard("alternative.other-accelerator-branch", node.test)
        elif polarity == 0 and option == 0 and not tpu and pending_ok and (options.flag_name(node.test, turned_on=True) or options.compared_setting(node.test)) and not else_fails and options.declared_default(self, node.test) is None:
            # `if cfg.use_x:` / `if cfg.bits in [4, 8]:` with the setting declared elsewhere
            body_guard = Guard(PENDING, node.test, outer.guard)
        # `if <xla/tpu>: ... else: <CUDA>`: the CUDA branch has a TPU sibling.
        version = self._version(node.test)
        if version is False:  # `if torch.__version__ < "1.6":`: no target torch enters
            body_guard = Guard(DEAD_VERSION, node.test)
        if version is True:
            else_guard = Guard(DEAD_VERSION, node.test)
        elif ((polarity < 0 and not skip) or tpu) and not body_fails:
            else_guard = Guard("guard.test", node.test)
        elif option < 0 and not body_fails:
            else_guard = Guard("guard.option", node.test)
        elif polarity == 0 and option == 0 and not tpu and pending_ok and options.flag_name(node.test, turned_on=False) and not body_fails and node.orelse is not None and options.declared_default(self, node.test) is None:
            else_guard = Guard(PENDING, node.test, outer.guard)  # the else of `if not cfg.use_x:`
        role = outer.role
        if role is None and conditions.is_main_test(node.test):
            role = RoleMark("example", "role.main-block", node.test)
        before = len(self.hits)
        narrowed = hostdata.host_narrowed(self, node.test)
        host = outer.host | narrowed if narrowed else outer.host  # `if isinstance(x, np.ndarray):`
        follows_half = outer.follows_half or conditions.tests_half_dtype(self, node.test)
        with self.enter(guard=body_guard, guard_test=False, periodic=outer.periodic or conditions.is_periodic(node.test), role=role, host=host, follows_half=follows_half):
            self.walk(node.body)
        middle = len(self.hits)
        if node.orelse is not None:
            with self.enter(guard=else_guard, guard_test=False):
                self.walk(node.orelse)
            if polarity == 0 and option == 0 and not tpu and options.plain_flag(node.test):
                self._settle_option(node, before, middle)

    def _version(self, test: cst.BaseExpression) -> bool | None:
        """The test's value on every torch the targets run (`torch.__version__ < "1.6"`
        is false on all), or None: the side no target takes is dead code, set aside with
        the test (analyze/version_tests.py; what only it imports: analyze/dead_code.py)."""
        if not self._reads_version:
            return None  # the module never reads a version: no test to render
        code = node_code(test)
        return version_test(code, self.index.guards.torch_versions) if "__version__" in code else None

    def _settle_option(self, node: cst.If, start: int, middle: int) -> None:
        """`if cfg.use_xformers: out = <CUDA> else: out = <plain>`: when the two sides of an if
        on a plain setting are alternatives (they bind the same names, or both return a
        value), and one does its job with no CUDA-ism (nor another accelerator's API) while
        the other needs CUDA, the plain side is the TPU's path and the CUDA side keeps it as
        a fallback. (`if args.output_dir: save() else: model.cuda()` does two different jobs.)"""
        if options.alternatives(node):
            self._settle_sides(node.test, node.body, node.orelse, start, middle)

    def _settle_sides(self, test: cst.BaseExpression, body: cst.CSTNode, orelse: cst.CSTNode | None, start: int, middle: int) -> None:
        """The two sides of a choice on a plain setting, known to be alternatives: the CUDA
        side's findings (hits[start:middle] for the body, the rest for the other side) keep
        the plain side as their fallback."""
        body_hits, else_hits = self.hits[start:middle], self.hits[middle:]
        cuda_body, cuda_else = any(_cuda(h) for h in body_hits), any(_cuda(h) for h in else_hits)
        if cuda_body == cuda_else:
            return
        plain = orelse if cuda_body else body
        if plain is None or conditions.uses_other_accelerator(self, plain):
            return
        for hit in body_hits if cuda_body else else_hits:
            if hit.guard is None or hit.guard.pending:
                hit.guard = Guard("guard.option-else", test)

    def on_try(self, node: cst.Try | cst.TryStar, ctx: str | None) -> None:
        handler = next((h for h in node.handlers if excepts.handler_keeps_fallback(h, node.body.body, self)), None)
        kept = None if handler is None else Guard("guard.except" if self._placeholders_tested(handler) else "guard.placeholder", handler)
        with self.enter(guard=kept if kept is not None else self.frame.guard, raise_caught=excepts.swallows(node, self)):
            self.walk(node.body)
        dead = excepts.version_probe(node, self)
        for each in node.handlers:  # an old torch's stand-in (`except AttributeError: def nan_to_num`)
            with self.enter(guard=Guard(DEAD_VERSION, each) if each is dead else self.frame.guard):
                self.walk(each)
        if node.orelse is not None:
            self.walk(node.orelse)
        if node.finalbody is not None:
            self.walk(node.finalbody)

    def _placeholders_tested(self, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
        """A handler that only binds None placeholders keeps a working fallback when the
        module tests one of them, or reads none of them (excepts.placeholders); otherwise
        the module loads without the package but fails where the placeholder is called
        (`guard.placeholder`). The module's name uses are read once, on the first such
        handler."""
        bound = excepts.placeholders(handler, self)
        if not bound:
            return True
        if self._uses is None:
            self._uses = excepts.name_uses(self.source)
        return not bound.isdisjoint(self._uses.tested) or bound.isdisjoint(self._uses.loaded)

    def on_loop(self, node: cst.For | cst.While, ctx: str | None) -> None:
        if isinstance(node, cst.For):
            self.walk(node.target)
            self.walk(node.iter)
        else:
            self.walk(node.test)
        with self.enter(in_loop=True):
            self.walk(node.body)
        if node.orelse is not None:
            self.walk(node.orelse)

    def on_failure(self, node: cst.Assert | cst.Raise, ctx: str | None) -> None:
        """`assert ok.all(), f"got {x.tolist()}"`, `raise ValueError(f"{n.item()}")`: the
        message is built only when the check fails, so a host sync there costs no step."""
        if isinstance(node, cst.Assert):
            with self.enter(fatal=True):
                self.walk(node.test)
            failure: cst.CSTNode | None = node.msg
        else:
            failure = node.exc
            if node.cause is not None:
                self.walk(node.cause)
        if failure is None:
            return
        with self.enter(failure=True):
            self.walk(failure)

    # -- scopes ------------------------------------------------------------------------

    def on_function(self, node: cst.FunctionDef | cst.ClassDef, ctx: str | None) -> None:
        if node.type_parameters is not None:  # `def f[T: torch.cuda.Stream]()` (PEP 695)
            self.walk(node.type_parameters)
        outer = self.frame
        outer.scope.unbind(node.name.value)  # `def sync(): ...` replaces an alias of that name
        resolved = tuple(
            q for q in (self.qualified(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) for d in node.decorators) if q
        )
        # A decorator stacked on the function sees its siblings (`@torch.compile` over
        # `@torch.inference_mode()`), as code in the body does.
        skip: cst.CSTNode | None = None
        with self.enter(decorated=node.name.value, decorators=(*outer.decorators, *resolved)):
            for decorator in node.decorators:
                skipping = conditions.is_cuda_skip_decorator(self, decorator.decorator)
                skip = decorator if skipping and skip is None else skip
                with self.enter(guard_test=skipping):
                    self.walk(decorator)
        role = outer.role
        if role is None:
            found = conditions.role_of_function(self.index, node.name.value, resolved, outer.class_kind)
            if found == "test" and outer.class_kind != "test" and isinstance(node, cst.FunctionDef) and not self.collected_test(node):
                found = None  # `def test_net(...)`: a script's evaluation loop, product
            role = RoleMark(found, f"role.{found}-function", node.name) if found is not None else None
        with self.enter(role=role, guard=Guard("guard.test-skip", skip) if skip is not None else outer.guard, raise_caught=False):
            if isinstance(node, cst.ClassDef):
                self.walk_class(node)
                return
            if self.index.define:
                for rule_matcher in self.index.define.lookup(node.name.value):
                    if not any(fnmatchcase(node.name.value, p) for p in rule_matcher[1].exclude) and _defined_as(rule_matcher[1], node, outer.class_bases):
                        self.hit(rule_matcher, node.name, detail=node.name.value)
            self.walk_params(node.params)
            self.note_options(node.params)
            if node.returns is not None:
                self.walk_annotation(node.returns)
            host = {p.name.value for p in node.params.params if p.annotation is not None and conditions.host_annotation(self, p.annotation.annotation)}
            module_level = not outer.functions and outer.class_kind is None
            with self.enter(
                scope=Scope(outer.scope, node), in_loop=False, host=host, functions=(*outer.functions, node.name.value), class_bases=(),
                decorators=(*outer.decorators, *resolved), returns=[] if module_level else None,
            ):  # fmt: skip
                self.walk(node.body)
                self.note_host_function(node.name.value, self.frame.returns or [])

    def note_host_function(self, name: str, returns: list[bool | None]) -> None:
        """A module-level function whose every `return` gives host data (`return
        np.asarray(v)`, `return t.cpu().numpy()`), one of them a value, makes its calls
        further down the module host data too (a generator returns nothing of its own)."""
        if any(r is not None for r in returns) and all(r is not False for r in returns):
            self.host_functions.add(name)
        else:
            self.host_functions.discard(name)  # a redefinition replaces it

    def walk_class(self, node: cst.ClassDef) -> None:
        """A class body, with what its methods share: the fields it only sets to host data,
        and whether it is a Dataset."""
        self.walk_all(node.bases)
        self.walk_all(node.keywords)
        outer = self.frame
        for statement in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
                    code = options.literal_code(options.field_default(small.value))
                    if code is not None:
                        self.options[small.target.value] = code  # a dataclass or config field: `use_liger: bool = False`
        with self.enter(
            host_fields=hostdata.class_host_attributes(self, node),
            data_class=outer.data_class or hostdata.dataset_class(self, node),
            class_kind="test" if hostdata.test_class(node) else "plain",
            class_bases=tuple(q for q in (self.qualified(base.value) for base in node.bases) if q),
        ):
            selected.walk_body(self, node)

    def on_lambda(self, node: cst.Lambda, ctx: str | None) -> None:
        self.walk_params(node.params)
        with self.enter(scope=Scope(self.frame.scope, node)):
            self.walk(node.body)

    def note_options(self, params: cst.Parameters) -> None:
        """Parameters with a literal default are options (`use_triton=False`)."""
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.default is not None:
                code = options.literal_code(param.default)
                if code is not None:
                    self.options[param.name.value] = code

    def walk_params(self, params: cst.Parameters) -> None:
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.annotation is not None:
                self.walk_annotation(param.annotation)
            if param.default is not None:
                with self.enter(default=True):
                    self.walk(param.default, hostdata.assignment_context(self, param.name))
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param) and star.annotation is not None:
                self.walk_annotation(star.annotation)

    def on_comprehension(self, node: cst.CSTNode, ctx: str | None) -> None:
        """`[t.item() for t in ts]` runs its element once per item: a loop (whose names are
        host data when what they iterate over is: `[x.item() for x in torch.linspace(0, 1, 4)]`)."""
        with self.enter(host=hostdata.comprehension_host_names(self, node), in_loop=True):
            self.walk_fields(node)

    def walk_annotation(self, node: cst.Annotation) -> None:
        """A type annotation names types: `stream: torch.cuda.Stream | None` runs nothing a
        TPU lacks (CPU builds of torch have `torch.cuda.Stream` too), so only the calls in
        it (which run when the function is defined) are uses."""
        with self.enter(annotation=True):
            self.walk(node)

    # -- imports -------------------------------------------------------------------------

    def bind_module_imports(self, statements: Sequence[cst.CSTNode]) -> None:
        """Module-level imports, and aliases assigned from them (`sync =
        torch.cuda.synchronize`), apply to function bodies written above them."""
        scope = self.frame.scope
        for statement in statements:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, (cst.Import, cst.ImportFrom)):
                        scope.bind_import(small)
                    elif isinstance(small, cst.Assign):
                        self.bind_targets([t.target for t in small.targets], small.value)
                        if conditions.mentions_availability(self, small.value):
                            self.flags.update(name for t in small.targets for name in target_names(t.target))
                    elif isinstance(small, cst.AnnAssign) and small.value is not None:
                        self.bind_targets([small.target], small.value)
            elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                scope.unbind(statement.name.value)  # `def sync(): ...` replaces an alias
            elif isinstance(statement, cst.Match):
                for case in statement.cases:
                    if isinstance(case.body, cst.IndentedBlock):
                        self.bind_module_imports(case.body.body)
            elif isinstance(statement, (cst.If, cst.Try, cst.With, cst.TryStar)):
                if isinstance(statement, (cst.Try, cst.TryStar)):
                    self.flags |= excepts.import_flags(statement, self)
                for block in _blocks_of(statement):
                    if isinstance(block, cst.IndentedBlock):
                        self.bind_module_imports(block.body)

    def on_import(self, node: cst.Import | cst.ImportFrom, ctx: str | None) -> None:
        """An import inside a function is lazy: the module loads without the package, and
        only the path that calls the function needs it (an optional integration)."""
        frame = self.frame
        frame.scope.bind_import(node)
        if frame.type_checking or not self.index.imports:
            return
        with self.enter(guard=Guard("guard.lazy-import", node) if frame.functions else frame.guard):
            if isinstance(node, cst.Import):
                self._import_hits(node)
            else:
                self._import_from_hits(node)

    def _import_hits(self, node: cst.Import) -> None:
        for alias in node.names:
            parts = dotted(alias.name)
            if parts is None or not self.foreign(parts[0]):
                continue
            seen: set[str] = set()
            for rule_matcher in self.index.imports.lookup(".".join(parts)):
                if rule_matcher[0].id not in seen:
                    seen.add(rule_matcher[0].id)
                    self.hit(rule_matcher, alias.name, detail=".".join(parts))

    def _import_from_hits(self, node: cst.ImportFrom) -> None:
        module = import_from_module(node)
        if module is None or not self.foreign(module):
            return
        seen: set[str] = set()
        assert node.module is not None
        star = isinstance(node.names, cst.ImportStar)
        for rule_matcher in self.index.imports.lookup(module):
            if rule_matcher[0].id not in seen and (star or not rule_matcher[1].each):
                seen.add(rule_matcher[0].id)
                self.hit(rule_matcher, node.module, detail=module)
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            if isinstance(alias.name, cst.Name):
                qualified = f"{module}.{alias.name.value}"
                named: set[str] = set()
                bound = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else alias.name.value
                for rule_matcher in self.index.imports.lookup(qualified):
                    taken = named if rule_matcher[1].each else seen  # `each`: per name, else per statement
                    if rule_matcher[1].each and any(fnmatchcase(qualified, p) for p in rule_matcher[1].exclude):
                        continue  # a name of the package that is plain PyTorch (`mmcv.ops.point_sample`)
                    if rule_matcher[0].id not in taken:
                        taken.add(rule_matcher[0].id)
                        # `from mmcv.ops import RoIPool` read only in `isinstance(m, RoIPool)`
                        # runs none of its kernels (audits AM and AO: SoftTeacher, qdtrack)
                        typed = rule_matcher[1].each and self._type_only(bound)
                        with self.enter(guard=Guard("guard.type-only", node) if typed else self.frame.guard):
                            self.hit(rule_matcher, alias.name, detail=qualified)

    def _type_only(self, name: str) -> bool:
        """Whether the module reads `name` only as an isinstance/issubclass class."""
        if self._uses is None:
            self._uses = excepts.name_uses(self.source)
        return name in self._uses.type_only

    # -- assignments ---------------------------------------------------------------------

    def on_assign(self, node: cst.Assign, ctx: str | None) -> None:
        context: str | None = None
        for target in node.targets:
            self.walk_target(target.target)
            context = context or hostdata.assignment_context(self, target.target)
        before = len(self.hits)
        counted = conditions.is_device_count(self, node.value)
        # `n = torch.cuda.device_count()` read only as `n > 1` (or printed): the count
        # guards, as the call in the test itself does (counts.py)
        with self.enter(guard_test=self.frame.guard_test or (counted and self.only_compared(node.targets))):
            self.walk(node.value, context)
        if counted:
            self.counts.update(key for t in node.targets if (key := conditions.flag_key(t.target)) is not None)
        if len(self.hits) > before and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            loads = [h for h in self.hits[before:] if h.rule_matcher[0].unless == "weights"]
            if loads:
                self.archives[(self.frame.functions, node.targets[0].target.value)] = loads
        if (method := self.selected.get(id(node))) is not None:
            self.selected_guards.setdefault(method, []).append(self.frame.guard)
        self.bind_targets([t.target for t in node.targets], node.value)
        for target in node.targets:
            self.bind_host(target.target, node.value)
        if self.frame.functions and (conditions.implies_availability(self, node.value) or _device_test_value(self, node.value)):
            self.flags.update(key for t in node.targets if (key := conditions.flag_key(t.target)) is not None)

    def on_ann_assign(self, node: cst.AnnAssign, ctx: str | None) -> None:
        self.walk_target(node.target)
        self.walk_annotation(node.annotation)
        if node.value is not None:
            self.walk(node.value, hostdata.assignment_context(self, node.target))
            self.bind_targets([node.target], node.value)

    def on_named_expr(self, node: cst.NamedExpr, ctx: str | None) -> None:
        """`(sync := torch.cuda.synchronize)` binds as an assignment does."""
        self.walk(node.value, ctx)
        self.bind_targets([node.target], node.value)

    def on_declaration(self, node: cst.Global | cst.Nonlocal, ctx: str | None) -> None:
        """`global cuda` names a variable; it uses nothing."""

    def on_match_as(self, node: cst.MatchAs | cst.MatchStar, ctx: str | None) -> None:
        """A capture pattern binds its name (a store, not a use of what it named)."""
        if isinstance(node, cst.MatchAs) and node.pattern is not None:
            self.walk(node.pattern)
        if node.name is not None:
            self.frame.scope.unbind(node.name.value)

    def on_return(self, node: cst.Return, ctx: str | None) -> None:
        value = node.value
        if value is not None:
            self.walk(value)
        returns = self.frame.returns
        if returns is not None:
            nothing = value is None or (type(value) is cst.Name and value.value == "None")
            returns.append(None if nothing or value is None else hostdata.on_host(self, value))

    def walk_target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            return  # binding a name is no use of what it named before
        with self.enter(storing=isinstance(target, cst.Attribute)):
            self.walk(target)

    def bind_targets(self, targets: list[cst.BaseExpression], value: cst.BaseExpression) -> None:
        """`name = <resolved name>` makes `name` an alias as the walk proceeds; any other
        value clears one, except `None` (`except ImportError: fn = None`): a name bound
        to None is never called, so its uses all mean the other binding."""
        resolved = hostdata.alias_of(self, value)
        if resolved is not None and len(resolved) > 1:
            self.conditional_aliases = True
        scope = self.frame.scope
        for target in targets:
            if isinstance(target, cst.Name) and resolved is not None:
                before = scope.alias_targets(target.value)
                scope.bind_alias(target.value, resolved, module=len(resolved) == 1 and isinstance(value, cst.Name) and scope.is_module(value.value))
                self.alias_names.add(target.value)
                guard = self.frame.guard
                if guard is not None and guard.rule == "guard.test" and before != resolved:
                    self.alias_guards[target.value] = guard
                else:
                    self.alias_guards.pop(target.value, None)
                if isinstance(value, cst.IfExp) and len(resolved) > 1:
                    self.alias_choices[target.value] = value
            elif not (isinstance(value, cst.Name) and value.value == "None"):
                for name in target_names(target):
                    scope.unbind(name)

    def bind_host(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """`values, indices = probs.cpu().topk(5)`: every name unpacked from host data is host
        data; `ref, tt = a.cpu(), b.squeeze()` pairs each name with its own value."""
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) and len(target.elements) == len(value.elements):
            pairs = [(t, v) for t, v in zip(target.elements, value.elements, strict=True) if isinstance(t, cst.Element) and isinstance(v, cst.Element)]
            if len(pairs) == len(target.elements):
                for name_element, value_element in pairs:
                    self.bind_host(name_element.value, value_element.value)
                return
        is_host = hostdata.on_host(self, value)
        field = hostdata.self_field(target)  # `self.sigmas = sigmas.to("cpu")`: read as host data below
        host = self.frame.host
        for name in target_names(target) if field is None else (f"self.{field}",):
            if is_host:
                host.add(name)
            else:
                host.discard(name)


def _blocks_of(statement: cst.If | cst.Try | cst.With | cst.TryStar) -> list[cst.BaseSuite]:
    """The bodies of a compound statement: its own, its handlers', its elif and else."""
    blocks: list[cst.BaseSuite] = [statement.body]
    if isinstance(statement, (cst.Try, cst.TryStar)):
        blocks.extend(h.body for h in statement.handlers)
    orelse = getattr(statement, "orelse", None)
    while isinstance(orelse, cst.If):
        blocks.append(orelse.body)
        orelse = orelse.orelse
    if orelse is not None:
        blocks.append(orelse.body)
    return blocks


def _cuda(hit: Hit) -> bool:
    """A CUDA-ism of its own: not a note on host syncs, shapes or op lowering (which the
    plain side may have too), nor a record of an asset."""
    rule = hit.rule_matcher[0]
    return rule.category not in ("host-sync", "dynamic-shape", "unsupported-op") and rule.inventory not in ("reference", "tpu-support")


def _defined_as(matcher: Matcher, node: cst.FunctionDef, class_bases: tuple[str, ...]) -> bool:
    """A define matcher's placement: `in_class`, a method of a class whose base resolves to
    one of these globs; `not_static`, neither a `@staticmethod` nor a `@classmethod` (a
    legacy autograd Function's `forward(self, ...)`, which torch 1.5 and later refuse when
    the instance is called; `Function.apply` binds a classmethod's `cls` itself, audit AE)."""
    if matcher.in_class and not any(fnmatchcase(base, p) for base in class_bases for p in matcher.in_class):
        return False
    return not (matcher.not_static and any(isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod") for d in node.decorators))


def _device_test_value(names: Names, value: cst.BaseExpression) -> bool:
    """A value that is true only on a CUDA device: a comparison of a device with "cuda"
    (`use_cuda_sync = device.type == "cuda"`). A name bound to one inside a function is a
    flag, as one bound to an availability check is: `if use_cuda_sync:` tests the device
    (audit AW: Olive's timing syncs)."""
    return isinstance(value, cst.Comparison) and conditions.cuda_polarity(names, value) > 0
