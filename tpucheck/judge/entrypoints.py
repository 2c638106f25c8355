"""The modules a project exposes as commands, the files its launch scripts run (product
code, whatever folder holds them), and the projects it keeps beside itself but never uses.

A team runs its product through its console scripts (`[project.scripts]`, setup.py's or
setup.cfg's `console_scripts`, poetry's scripts) or `python -m pkg` (a package's
`__main__.py`). A folder name such as `recipes/` or `cli/` says nothing about that; the
manifest does. Read with tomllib, configparser and `ast` (never run).
"""

from __future__ import annotations

import ast
import configparser
import functools
import posixpath
import re
import sys
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence

from tpucheck.analyze.pyparse import is_main_test, last_name
from tpucheck.analyze.reachability import import_resolver
from tpucheck.findings import ImportFacts
from tpucheck.judge.roles import Roles
from tpucheck.ruleset.judgement import Guards

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["LAUNCHERS", "SHELL_COMMENT", "command_line_helper", "dead_launch_lines", "documented_paths", "entry_point_paths", "launched_paths", "nested_projects", "options_launched", "sole_code", "test_named_scripts"]

_SCRIPT_GROUPS = ("console_scripts", "gui_scripts")


def entry_point_paths(files: Iterable[str], read: Callable[[str], str | None]) -> frozenset[str]:
    """Paths (relative to the root, as `files` are) of the modules named as commands by
    any manifest among `files`, and every `__main__.py`."""
    paths = sorted(files)
    known = frozenset(paths)
    found: set[str] = {p for p in paths if posixpath.basename(p) == "__main__.py"}
    for path in paths:
        name = posixpath.basename(path)
        if name not in ("pyproject.toml", "setup.cfg", "setup.py"):
            continue
        text = read(path)
        if text is None:
            continue
        base = posixpath.dirname(path)
        for module in _modules(name, text):
            found.update(_module_files(base, module, known))
    return frozenset(found)


def _modules(name: str, text: str) -> list[str]:
    """The modules of `module:function` targets a manifest names as commands."""
    targets: list[str] = []
    try:
        if name == "pyproject.toml":
            targets = _pyproject(text)
        elif name == "setup.cfg":
            targets = _setup_cfg(text)
        else:
            targets = _setup_py(text)
    except (ValueError, SyntaxError, RecursionError, configparser.Error, tomllib.TOMLDecodeError):
        return []  # a broken manifest is reported by its own analyzer
    return [t.split(":", 1)[0].strip() for t in targets if t.split(":", 1)[0].strip()]


def _pyproject(text: str) -> list[str]:
    data = tomllib.loads(text)
    project = data.get("project", {})
    tables = [project.get("scripts", {}), project.get("gui-scripts", {})]
    entry_points = project.get("entry-points", {})
    tables += [entry_points.get(group, {}) for group in _SCRIPT_GROUPS]
    tables.append(data.get("tool", {}).get("poetry", {}).get("scripts", {}))
    out: list[str] = []
    for table in tables:
        if isinstance(table, dict):
            for value in table.values():
                target = value.get("reference", value.get("callable")) if isinstance(value, dict) else value
                if isinstance(target, str):
                    out.append(target)
    return out


def _setup_cfg(text: str) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    out: list[str] = []
    for group in _SCRIPT_GROUPS:
        value = parser.get("options.entry_points", group, fallback="")
        out += [line.split("=", 1)[1] for line in value.splitlines() if "=" in line]
    return out


def _setup_py(text: str) -> list[str]:
    out: list[str] = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.keyword) and node.arg == "entry_points" and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values):
                if isinstance(key, ast.Constant) and key.value in _SCRIPT_GROUPS and isinstance(value, (ast.List, ast.Tuple)):
                    out += [e.value.split("=", 1)[1] for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str) and "=" in e.value]
    return out


def _module_files(base: str, module: str, known: frozenset[str]) -> list[str]:
    parts = module.split(".")
    stems = ["/".join(parts)]
    candidates = []
    for root in (base, posixpath.join(base, "src") if base else "src"):
        for stem in stems:
            for suffix in (".py", "/__init__.py", "/__main__.py"):
                candidates.append(posixpath.normpath(posixpath.join(root, stem + suffix)) if root else stem + suffix)
    return [c for c in candidates if c in known]


LAUNCHERS = (".sh", ".bash", ".slurm", ".sbatch")
"""Shell launch scripts: their command lines are how a team runs the product."""
_RUNNERS = frozenset({"python", "python3", "torchrun", "accelerate", "deepspeed", "colossalai", "srun", "mpirun", "horovodrun", "uv", "poetry"})
"""Commands whose line runs a Python file or module (directly or through a launcher)."""
SHELL_COMMENT = re.compile(r"(?:^|(?<=\s))#.*$", re.MULTILINE)
_WORD = re.compile(r"[^\s;&|()'\"`]+")
_PYTEST = re.compile(r"(?:^|[\s/])(?:py\.test|pytest)(?:\s|$)|-m\s+(?:pytest|unittest)\b")
_OWN_FOLDER = re.compile(r"""\$\(\s*dirname\s+["']?\$(?:0|\{0\}|BASH_SOURCE(?:\[0\])?|\{BASH_SOURCE(?:\[0\])?\})["']?\s*\)|`dirname\s+["']?\$0["']?`""")
"""The launch script's own folder as a shell writes it (`$(dirname "$0")/test.py`, mmdet's
`dist_test.sh`): read as `.`, the folder a relative path is resolved against."""


def launched_paths(files: Iterable[str], read: Callable[[str], str | None], product: Callable[[str], bool]) -> dict[str, str]:
    """Python files the project's own launch scripts run, each with the first launcher
    (in path order) that runs it. Only launchers that are product code count (`product`):
    a script under `examples/` runs an example. A file pytest collects (`test_*.py`,
    `*_test.py`) or a line that runs pytest stays a test. A path is resolved against the
    launcher's folder, then the root, then as the unique file ending with it (`cd train &&
    python src/train.py`, `${ROOT}/tools/eval.py`)."""
    paths = sorted(files)
    python = [p for p in paths if p.endswith(".py")]
    known = frozenset(python)
    found: dict[str, str] = {}
    for launcher in paths:
        if not launcher.lower().endswith(LAUNCHERS) or not product(launcher):
            continue
        script = functools.partial(_resolve, folder=posixpath.dirname(launcher), known=known, python=python)
        for _, _, words, _ in _run_commands(read(launcher) or ""):
            for target in _command_targets(words, 0, script, known):
                found.setdefault(target, launcher)
    return found


def _command_targets(words: list[str], start: int, script: Callable[[str], str | None], known: frozenset[str]) -> Iterator[str]:
    """The project's Python files a command's words from `start` on run: each `.py` word
    as `script` resolves it, each `-m` module; never a file pytest collects."""
    for index in range(start, len(words)):
        word = words[index]
        if word.endswith(".py"):
            target = script(word)
        elif word == "-m" and index + 1 < len(words):
            target = next(iter(_module_files("", words[index + 1], known)), None)
        else:
            continue
        if target is not None and not _collected_by_pytest(target):
            yield target


_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1", re.MULTILINE | re.DOTALL)


def documented_paths(readme: str, name: str, files: Iterable[str]) -> dict[str, str]:
    """Python files the root README's code blocks run (`python hat/train.py -opt ...`,
    `python -m torch.distributed.launch ... tools/train.py`), each with the README's name:
    the documented way to run the product, so product code as a launch script's targets
    are. Only fenced blocks are read (prose mentioning a file runs nothing); a path is
    resolved from the root, or, when it has a folder (`cd code` first, then
    `training/exp_runner.py`), as the unique file ending with it; a bare name is only the
    root's: a README's `accelerate launch ./train.py` for a script the user writes is no
    file of the tree (byol-pytorch). A file pytest collects stays a test."""
    if not readme or ("```" not in readme and "~~~" not in readme):
        return {}
    paths = sorted(files)
    python = [p for p in paths if p.endswith(".py")]
    known = frozenset(python)
    found: dict[str, str] = {}

    def script(word: str) -> str | None:
        if "$" in word:
            return None
        written = posixpath.normpath(word)
        # `cd code` then `training/exp_runner.py` (monosdf): a path with a folder names its
        # file; a bare name is only the root's
        return _resolve(written, "", known, python) if "/" in written else written if written in known else None

    for block in _FENCE.finditer(readme):
        text = "\n".join(line.strip().removeprefix("$ ").removeprefix("> ") for line in block.group(2).splitlines())
        for _, _, words, runner in _run_commands(text):
            for target in _command_targets(words, runner, script, known):
                found.setdefault(target, name)
    return found


def dead_launch_lines(files: Iterable[str], read: Callable[[str], str | None]) -> dict[str, dict[int, str]]:
    """Launch lines that run a Python file the tree does not have (`python llava/train/
    train_mem.py` left over from the project this one was forked from): launcher -> each
    physical line of such a command -> the script as written. Only the first `.py` word
    after a runner is the script; one under a variable or an absolute path is judged by
    the part after them, as `launched_paths` resolves it; `-m` modules are not judged
    (they may be installed packages)."""
    paths = sorted(files)
    python = [p for p in paths if p.endswith(".py")]
    known = frozenset(python)
    out: dict[str, dict[int, str]] = {}
    for launcher in paths:
        if not launcher.lower().endswith(LAUNCHERS):
            continue
        for start, end, words, runner in _run_commands(read(launcher) or ""):
            script = next((w for w in words[runner + 1 :] if w.endswith(".py")), None)
            if script is None or script.startswith("/") or re.fullmatch(r"[\w./-]*\$\{?\w+\}?/?", script[: -len(".py")] + "/"):
                continue
            if _resolve(script, posixpath.dirname(launcher), known, python) is None:
                out.setdefault(launcher, {}).update(dict.fromkeys(range(start, end + 1), script))
    return out


_FUNCTION = re.compile(r"^\s*(?:function\s+([A-Za-z_][\w-]*)\s*(?:\(\s*\))?|([A-Za-z_][\w-]*)\s*\(\s*\))\s*\{?(.*)$")
_FORWARDED = re.compile(r"\$(?:@|\*|\{@\}|\{\*\})")


def _wrappers(text: str) -> frozenset[str]:
    """Shell functions that run a runner with the arguments they are given (`function
    trun () { torchrun --nproc_per_node=$GPUS $@; }`): a call `trun examples/eval.py` runs
    that file as the runner does (audit AF: RADIO's `tools/*.sh`)."""
    names: set[str] = set()
    lines = text.splitlines()
    for index, raw in enumerate(lines):
        header = _FUNCTION.match(SHELL_COMMENT.sub("", raw))
        if header is None:
            continue
        body = [header.group(3)]
        for line in lines[index + 1 : index + 40]:
            if "}" in header.group(3) or line.strip().startswith("}"):
                break
            body.append(SHELL_COMMENT.sub("", line))
        text_of_body = " ".join(body)
        words = _WORD.findall(text_of_body)
        if _FORWARDED.search(text_of_body) and any(posixpath.basename(w) in _RUNNERS for w in words):
            names.add(header.group(1) or header.group(2))
    return frozenset(names)


def _run_commands(text: str) -> Iterator[tuple[int, int, list[str], int]]:
    """The commands of a launch script that run Python (not pytest), continuation lines
    joined and comments dropped: (first line, last line, words, index of the runner). A
    shell function that forwards its arguments to a runner is a runner too."""
    wrappers = _wrappers(text) if "(" in text or "function" in text else frozenset()
    start = 0
    pieces: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pieces:
            start = number
        pieces.append(SHELL_COMMENT.sub("", raw))
        if raw.endswith("\\"):
            continue
        line, pieces = _OWN_FOLDER.sub(".", " ".join(p.rstrip("\\") for p in pieces)), []
        words = _WORD.findall(line)
        runner = next((i for i, w in enumerate(words) if posixpath.basename(w) in _RUNNERS or posixpath.basename(w).startswith("python3.") or w in wrappers), None)
        if runner is not None and not _PYTEST.search(line):
            yield start, number, words, runner


def _resolve(word: str, folder: str, known: frozenset[str], python: list[str]) -> str | None:
    if "$" in word:
        tail = re.split(r"\$\{?\w+\}?", word)[-1].lstrip("/")
    elif word.startswith("/"):
        return None  # an absolute path names a machine's folder, not the project's
    else:
        tail = word
        for candidate in (posixpath.normpath(posixpath.join(folder, word)), posixpath.normpath(word)):
            if candidate in known:
                return candidate
    ending = "/" + posixpath.normpath(tail)
    matches = [p for p in python if ("/" + p).endswith(ending)]
    return matches[0] if len(matches) == 1 else None


_SCRIPT_NAMES = ("test.py", "tests.py")


def test_named_scripts(
    files: Iterable[str],
    read: Callable[[str], str | None],
    named_only: Callable[[str], bool],
    guards: Guards,
    parses_for: Callable[[str], str | None] = lambda _path: None,
) -> dict[str, str]:
    """Files named as tests that hold no test and read a command line: an ML project's
    evaluation or inference script (`python test.py --trained_model=...`, the README's
    command; `main_test.py`), product code; a kernel folder's bare `test.py` that reads none
    stays a check. pytest never collects `test.py`; a file is a test when it defines a
    `TestCase`, imports pytest or unittest, or checks numerics (`gradcheck`, `allclose`: a
    kernel's harness), and a file pytest collects (`test_*.py`, `*_test.py`) also when it
    has a `test*` function or `Test*` class at its top. Only where the name alone said test
    (`named_only`), never under `tests/`. The packages and calls are rules/judgement.yaml's
    (`guards.command_line_packages`, `test_frameworks`, `numerics_checks`). Path -> the
    evidence. `parses_for(path)` names a project module the file imports that reads the
    command line for it (`args, cfg = merge_config()` from `utils/common.py`, which imports
    argparse: audit AN's Ultra-Fast-Lane-Detection `test.py`); it counts when the file has
    a main block."""
    out: dict[str, str] = {}
    for path in sorted(files):
        collected = _collected_by_pytest(path)
        if (posixpath.basename(path) not in _SCRIPT_NAMES and not collected) or not named_only(path):
            continue
        try:
            tree = ast.parse(read(path) or "")
        except (SyntaxError, ValueError):
            continue
        nodes = list(ast.walk(tree))
        # a file pytest collects (`main_test.py`, `test_net.py`) is a script only when it
        # gives pytest nothing to collect either: no `test*` function, no `Test*` class
        # at its top (audit AG: mae_st's `main_test.py`, its test-stage entry point)
        if collected and any(_pytest_item(node) for node in tree.body):
            continue
        if any(_is_test(node, guards) for node in nodes):
            continue
        if any(_reads_command_line(node, guards) for node in nodes):
            out[path] = f"{path} reads a command line and defines no test (no TestCase, no pytest, unittest or numerics check): a script"
        elif (helper := parses_for(path)) is not None and any(_main_block(node) for node in tree.body):
            out[path] = f"{path} runs as a program and reads its command line through {helper}, and defines no test: a script"
    return out


def _main_block(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":` at the module's top."""
    return isinstance(node, ast.If) and is_main_test(node.test)


def _pytest_item(node: ast.stmt) -> bool:
    """What pytest collects at a module's top: a `test*` function or a `Test*` class."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.name.startswith("test")
    return isinstance(node, ast.ClassDef) and node.name.startswith("Test")


def _reads_command_line(node: ast.AST, guards: Guards) -> bool:
    """A program's own command line: an argument parser imported, or `sys.argv` read."""
    return _imports(node, guards.command_line_packages) or (isinstance(node, ast.Attribute) and node.attr == "argv" and isinstance(node.value, ast.Name) and node.value.id == "sys")


def _is_test(node: ast.AST, guards: Guards) -> bool:
    # no function name: `def test(opt)` and `def test_net(...)` are many an evaluation
    # loop, and pytest never collects this file to run one
    if isinstance(node, ast.ClassDef):
        return any(last_name(base).endswith("TestCase") for base in node.bases)
    if isinstance(node, ast.Call):
        return last_name(node.func) in guards.numerics_checks
    return _imports(node, guards.test_frameworks)


def _imports(node: ast.AST, packages: frozenset[str]) -> bool:
    """An import of one of these top-level packages."""
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] in packages for alias in node.names)
    return isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in packages


def _collected_by_pytest(path: str) -> bool:
    name = posixpath.basename(path)
    return name.startswith("test_") or name.endswith("_test.py")


_MANIFESTS = ("pyproject.toml", "setup.py", "setup.cfg")
_ROOT_MARKERS = (*_MANIFESTS, "requirements.txt", "environment.yml", "environment.yaml")


def nested_projects(files: Iterable[str], facts: Callable[[str], ImportFacts | None], launched: Mapping[str, str]) -> dict[str, str]:
    """Folders below the root that hold a package manifest of their own (another project
    kept in the repository), each with its manifest, when nothing outside the folder
    imports a module of it (a package defined in it, a module at its top imported by its
    bare name, a module a relative import reaches in it, an extension its build makes: DINO's `import MultiScaleDeformableAttention` built by
    `models/dino/ops/setup.py`) nor runs one of its files (`launched`: file -> launch
    script). Only when the root has its own manifest, requirements or Python files: a
    repository of several projects side by side has no product above them to set them
    apart from."""
    paths = sorted(files)
    if not any(p in _ROOT_MARKERS or ("/" not in p and p.endswith(".py")) for p in paths):
        return {}
    manifests: dict[str, str] = {}
    requirements_only: set[str] = set()
    for path in paths:
        folder, _, name = path.rpartition("/")
        if name in _MANIFESTS and folder and not any(folder.startswith(f + "/") for f in manifests):
            manifests.setdefault(folder, path)
    for path in paths:
        # A folder with a requirements file of its own is another project too, when the root
        # holds a package and none of the folder's modules imports it (blind set 78: Sparsebit's
        # `large_language_models/alpaca-qlora`, a QLoRA project with its own CUDA kernels
        # that never imports `sparsebit`); a demo that imports the product stays with it.
        folder, _, name = path.rpartition("/")
        if name == "requirements.txt" and folder and not any(folder == f or folder.startswith(f + "/") or f.startswith(folder + "/") for f in manifests):
            manifests[folder] = path
            requirements_only.add(folder)
    if not manifests:
        return {}
    packages: dict[str, set[str]] = {folder: set() for folder in manifests}  # top package names
    built: dict[str, set[str]] = {folder: set() for folder in manifests}  # extension modules, as named
    # a module at the folder's top (`pointnet2/pointnet2_utils.py`) is imported by its bare
    # name once a script puts the folder on `sys.path` (votenet, audit Z), unless a module of
    # that name lives outside the folder too
    outside_names = {_module_stem(p) for p in paths if p.endswith(".py") and not any(p.startswith(f + "/") for f in manifests)}
    for path in paths:
        for folder in manifests:
            if not path.startswith(folder + "/"):
                continue
            rest = path[len(folder) + 1 :]
            if "/" not in rest and rest.endswith(".py") and rest not in _MANIFESTS and _module_stem(rest) not in outside_names:
                packages[folder].add(_module_stem(rest))
            if path.endswith("/__init__.py"):
                parts = path[len(folder) + 1 :].split("/")[:-1]
                parts = parts[1:] if parts and parts[0] == "src" else parts
                if parts:
                    packages[folder].add(parts[0])
            elif path.endswith(".py") and "/" in rest and rest.split("/")[0].isidentifier():
                # a folder of modules with no `__init__.py` imports as a namespace package
                # (audit BD: RVT's `point_renderer`, imported by `from point_renderer.rvt_renderer
                # import ...` under an option RVT-2's config turns on, read as a project apart)
                packages[folder].add(rest.split("/")[0])
            elif path.endswith(".py") and (fact := facts(path)) is not None:
                # `CUDAExtension(name="qserve_backend.fused_attention")` is imported under
                # its dotted name (blind set 56: QServe's kernels/ read as apart)
                built[folder].update(name for build in fact.builds for name in (build.name, f"{build.package}.{build.name}" if build.package else build.name))
    reached: list[tuple[str, str]] = []  # (project path a relative import reaches, importer)
    absolute: list[tuple[str, str]] = []  # (module an absolute import names, importer)
    for path in paths:
        if not path.endswith(".py") or (fact := facts(path)) is None:
            continue
        for imp in fact.imports:
            if imp.level:
                base = path.split("/")[: -imp.level]
                reached.append(("/".join([*base, *imp.module.split(".")]), path))
            else:
                absolute.append((imp.module, path))
    root_packages = {p.split("/")[0] for p in paths if p.count("/") == 1 and p.endswith("/__init__.py")}
    # the files a run-time build compiles, by the module that builds them (`load(sources=[
    # join(parent, "cuda_rasterizer/forward.cu")])`: audit BF, 4DGS's vendored rasterizer);
    # a source is written relative to a folder the build computes, so it matches by suffix
    sources = {
        (source.lstrip("./"), path) for path in paths if path.endswith(".py") and (fact := facts(path)) is not None for build in fact.jit_builds for source in build.sources
    }
    compiled = [(p, builder) for source, builder in sources for p in paths if p == source or p.endswith("/" + source)]
    out: dict[str, str] = {}
    for folder, manifest in manifests.items():
        inside = folder + "/"
        if any(p.startswith(inside) and not builder.startswith(inside) for p, builder in compiled):
            continue
        if folder in requirements_only and (not root_packages or any(importer.startswith(inside) and module.split(".")[0] in root_packages for module, importer in absolute)):
            continue  # a repository of scripts side by side has no product package to set it apart from
        if any(f.startswith(inside) and not launcher.startswith(inside) for f, launcher in launched.items()):
            continue
        if any((target + "/").startswith(inside) and not importer.startswith(inside) for target, importer in reached):
            continue
        if any(_uses(module, packages[folder], built[folder]) and not importer.startswith(inside) for module, importer in absolute):
            continue
        # `from models.ops.modules import MSDeformAttn`: the folder by its path from the top
        # (audit AO's MOTR, blind set 45's SOLQ: their deformable-attention ops)
        if any((module.replace(".", "/") + "/").startswith(inside) and not importer.startswith(inside) for module, importer in absolute):
            continue
        out[folder] = manifest
    return out


def _module_stem(path: str) -> str:
    """`a/b/mod.py` -> `mod`; `a/pkg/__init__.py` -> `pkg`."""
    parts = path[: -len(".py")].split("/")
    return parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]


def _uses(module: str, packages: set[str], built: set[str]) -> bool:
    """Whether an absolute import names a package of a nested project (by its top name) or
    an extension its build makes (`FastAttn`, `pkg._C`; `from pkg import _C` arrives as
    `pkg._C`)."""
    if module.partition(".")[0] in packages:
        return True
    return any(module == name or module.startswith(name + ".") for name in built)


def command_line_helper(python: Sequence[str], facts: Callable[[str], ImportFacts | None], packages: frozenset[str]) -> Callable[[str], str | None]:
    """For a file, the first project module it imports that imports a command-line package
    (the helper that parses its arguments), or None."""
    parsers = {p for p in python if (known := facts(p)) is not None and any(i.module.partition(".")[0] in packages for i in known.imports)}
    if not parsers:
        return lambda _path: None
    resolve = import_resolver(python)

    def helper(path: str) -> str | None:
        known = facts(path)
        for imp in known.imports if known is not None else ():
            target = resolve(path, imp)
            if target is not None and target != path and target in parsers:
                return target
        return None

    return helper


def sole_code(python: Sequence[str], roles: Roles) -> dict[str, str]:
    """When every Python file is supporting and some are examples, the examples are what
    the project ships (blind set 43: ChatLaw's only code is `demo/web.py`, its model's web
    demo): path -> the evidence. Tests and docs stay supporting."""
    if not python or any(not roles.supporting(p) for p in python):
        return {}
    examples = [p for p in python if roles.role_of(p) == "example"]
    return {p: f"{p}: the project holds no Python but examples, tests and docs, so its examples are what it ships" for p in sorted(examples)}


_PASSED_FLAG = re.compile(r"(?<![\w-])--([A-Za-z][\w-]*)")


def options_launched(paths: Iterable[str], read: Callable[[str], str | None], options_off: Container[str]) -> dict[str, str]:
    """Settings off by default that the project's own launch scripts turn on (`--enable_
    deepspeed` in every shipped `scripts/*.sh`), each with the first script passing it: the
    way the product is run takes that branch, so it is the main path, not an option."""
    found: dict[str, str] = {}
    for path in sorted(p for p in paths if p.lower().endswith(LAUNCHERS)):
        text = SHELL_COMMENT.sub("", read(path) or "")  # `# --fp16 was slower` passes nothing
        for flag in _PASSED_FLAG.findall(text):
            name = flag.replace("-", "_")
            if name in options_off:
                found.setdefault(name, path)
    return found
