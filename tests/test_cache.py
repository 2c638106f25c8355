"""The incremental cache: identical output, exact invalidation, and no trust in what it reads."""

from __future__ import annotations

import json
import marshal
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import fixture_ruleset, write_tree

import tpucheck
import tpucheck.analyze.cache as cache_module
from tpucheck import engine
from tpucheck.analyze import build_context
from tpucheck.analyze.cache import (
    CACHE_DIRNAME,
    LAYOUT,
    CacheStats,
    ResultCache,
    ruleset_digest,
)
from tpucheck.discover.walk import SourceFile
from tpucheck.engine import ScanOptions, analyze_file, scan
from tpucheck.report.json_report import render
from tpucheck.ruleset.select import select_rules

SOURCE_ROOT = str(Path(__file__).resolve().parent.parent)

FILES: dict[str, str | bytes] = {
    "pkg/__init__.py": "",
    "pkg/train.py": """
        import torch
        for batch in loader:
            loss.item()
        torch.cuda.synchronize()  # tpucheck: ignore[T001] -- measured
        torch.cuda.synchronize()
    """,
    "pkg/kernels.py": "import triton\n\n@triton.jit\ndef k(x):\n    pass\n",
    "pkg/broken.py": "import torch\ntorch.cuda.synchronize(\n",
    "pkg/blob.py": b"\x00\x01binary torch.cuda.synchronize",
    "pkg/clean.py": "def add(a, b):\n    return a + b\n",
    "tests/test_x.py": "import torch\ntorch.backends.cudnn.benchmark = True\n",
}


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "repo", FILES)


def cached_scan(root: Path, jobs: int = 1, ruleset=None, **options) -> tuple[str, CacheStats]:  # type: ignore[no-untyped-def]
    stats = CacheStats()
    result = scan(str(root), ruleset or fixture_ruleset(), ScanOptions(jobs=jobs, use_cache=True, cache_stats=stats, **options))
    return render(result), stats


def entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob(f"{LAYOUT}/*/*/*.json"))


def analyzed_files(tree: Path) -> int:
    return sum(1 for p in tree.rglob("*") if p.is_file() and p.suffix == ".py" and CACHE_DIRNAME not in p.parts)


def test_warm_rescan_is_identical_and_all_hits(tree: Path) -> None:
    plain = render(scan(str(tree), fixture_ruleset(), ScanOptions(jobs=1)))
    assert not (tree / CACHE_DIRNAME).exists(), "the library default must not write a cache"
    cold, first = cached_scan(tree)
    warm, second = cached_scan(tree)
    files = analyzed_files(tree)
    assert plain == cold == warm
    assert (first.hits, first.misses, first.written) == (0, files, files)
    assert (second.hits, second.misses, second.written) == (files, 0, 0)
    assert second.enabled and second.directory == str(tree / CACHE_DIRNAME)
    assert len(entries(tree / CACHE_DIRNAME)) == files + 1, "one entry per file, and one for the whole tree's facts"


def test_cache_directory_markers_and_discovery(tree: Path) -> None:
    cached_scan(tree)
    cache_dir = tree / CACHE_DIRNAME
    assert (cache_dir / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (cache_dir / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    # A second scan does not see the cache's files, and a custom directory inside the tree
    # is kept out of discovery by its own .gitignore.
    assert json.loads(cached_scan(tree)[0])["coverage"]["files_found"] == json.loads(render(scan(str(tree), fixture_ruleset(), ScanOptions(jobs=1))))["coverage"]["files_found"]
    custom = tree / "my-cache"
    _, stats = cached_scan(tree, cache_dir=str(custom), ruleset=fixture_ruleset())
    assert stats.written and (custom / ".gitignore").exists()
    again = json.loads(cached_scan(tree, cache_dir=str(custom))[0])
    assert not any(path.startswith("my-cache") for path in (f["path"] for f in again["findings"]))


def test_pool_path_prepass_and_counts(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a pool, the parent looks files up first; workers' write counts come back."""
    monkeypatch.setattr(engine, "INLINE_BELOW", 0)
    plain = render(scan(str(tree), fixture_ruleset(), ScanOptions(jobs=1)))
    cold, first = cached_scan(tree, jobs=2)
    (tree / "pkg" / "clean.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    edited_plain = render(scan(str(tree), fixture_ruleset(), ScanOptions(jobs=1)))
    edited, second = cached_scan(tree, jobs=2)
    warm, third = cached_scan(tree, jobs=2)
    files = analyzed_files(tree)
    assert cold == plain and edited == warm == edited_plain
    assert (first.hits, first.misses, first.written) == (0, files, files)
    assert (second.hits, second.misses, second.written) == (files - 1, 1, 1)
    assert (third.hits, third.misses, third.written) == (files, 0, 0)


def test_editing_one_file_is_one_miss(tree: Path) -> None:
    cached_scan(tree)
    (tree / "pkg" / "clean.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    edited, stats = cached_scan(tree)
    assert (stats.hits, stats.misses) == (analyzed_files(tree) - 1, 1)
    assert edited == render(scan(str(tree), fixture_ruleset(), ScanOptions(jobs=1)))
    assert any(f["path"] == "pkg/clean.py" for f in json.loads(edited)["findings"])


def test_renamed_file_is_a_miss(tree: Path) -> None:
    """The path is part of the key: findings carry it, so a moved file is re-analyzed."""
    cached_scan(tree)
    (tree / "pkg" / "train.py").rename(tree / "pkg" / "trainer.py")
    _, stats = cached_scan(tree)
    assert stats.misses == 1


@pytest.mark.parametrize(
    "change",
    ["select", "prefilter", "version", "first_party"],
)
def test_what_changes_results_changes_the_namespace(tree: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    cached_scan(tree)
    ruleset = fixture_ruleset()
    options: dict[str, object] = {}
    if change == "select":
        ruleset = select_rules(ruleset, ["T001"])
    elif change == "prefilter":
        options["prefilter"] = False
    elif change == "version":
        monkeypatch.setattr(tpucheck, "__version__", tpucheck.__version__ + ".post1")
    else:
        write_tree(tree, {"other/__init__.py": ""})
    result, stats = cached_scan(tree, ruleset=ruleset, **options)
    assert stats.hits == 0
    assert len(list((tree / CACHE_DIRNAME / LAYOUT).iterdir())) == 2
    assert result == render(scan(str(tree), ruleset, ScanOptions(jobs=1, **options)))  # type: ignore[arg-type]


def test_ruleset_digest_is_stable_across_hash_seeds() -> None:
    """repr() of frozensets changes with PYTHONHASHSEED; the digest must not."""
    code = (
        "from tests.conftest import fixture_ruleset; from tpucheck.ruleset import load_ruleset; "
        "from tpucheck.analyze.cache import ruleset_digest; print(ruleset_digest(load_ruleset()), ruleset_digest(fixture_ruleset()))"
    )
    runs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=SOURCE_ROOT, env={**os.environ, "PYTHONPATH": SOURCE_ROOT, "PYTHONHASHSEED": seed})
        for seed in ("1", "2")
    ]
    outputs = [run.communicate(timeout=60)[0] for run in runs]
    assert outputs[0] == outputs[1] and len(outputs[0].split()) == 2
    assert outputs[0].split()[1] == ruleset_digest(fixture_ruleset())


def _entry_for(tree: Path, relpath: str) -> Path:
    """The entry file of one scanned file, found through the same key the engine uses."""
    ruleset = fixture_ruleset()
    cache = ResultCache.for_scan(str(tree), ruleset, prefilter=True, first_party=engine.first_party_packages(str(tree)))
    assert cache is not None
    kinds = ("python",)
    key = cache.key(relpath, kinds, (tree / relpath).read_bytes())
    return Path(cache._entry_path(key.digest())[1])


@pytest.mark.parametrize(
    "damage",
    ["truncated", "garbage", "empty", "wrong-key", "wrong-types", "extra-field", "not-an-object", "deep", "huge-number"],
)
def test_damaged_entry_is_a_miss_and_is_rewritten(tree: Path, damage: str) -> None:
    cached_scan(tree)
    entry = _entry_for(tree, "pkg/train.py")
    good = entry.read_text()
    data = json.loads(good)
    if damage == "truncated":
        entry.write_text(good[: len(good) // 2])
    elif damage == "garbage":
        entry.write_bytes(os.urandom(256))
    elif damage == "empty":
        entry.write_bytes(b"")
    elif damage == "wrong-key":
        # Another file's entry copied over this one: its embedded key gives it away.
        entry.write_text(_entry_for(tree, "pkg/kernels.py").read_text())
    elif damage == "wrong-types":
        data["result"]["matches"][0][1] = "3"
        entry.write_text(json.dumps(data))
    elif damage == "extra-field":
        data["result"]["evil"] = True
        entry.write_text(json.dumps(data))
    elif damage == "not-an-object":
        entry.write_text("[1, 2, 3]")
    elif damage == "deep":
        entry.write_text("[" * 100_000 + "]" * 100_000)
    else:
        data["result"]["lines"] = True  # a bool is not an int here
        entry.write_text(json.dumps(data))
    result, stats = cached_scan(tree)
    assert (stats.hits, stats.misses, stats.written) == (analyzed_files(tree) - 1, 1, 1)
    assert result == render(scan(str(tree), fixture_ruleset(), ScanOptions(jobs=1)))
    assert entry.read_text() == good


def test_planted_pickle_is_never_unpickled(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hostile repository ships a pickle where an entry would be: it is not JSON, so a miss."""
    cached_scan(tree)
    marker = tree.parent / "pwned"

    class Payload:
        def __reduce__(self):  # type: ignore[no-untyped-def]
            return (open, (str(marker), "w"))

    entry = _entry_for(tree, "pkg/train.py")
    entry.write_bytes(pickle.dumps(Payload()))

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the cache must never unpickle or unmarshal")

    for module, name in ((pickle, "loads"), (pickle, "load"), (marshal, "loads"), (marshal, "load")):
        monkeypatch.setattr(module, name, refuse)
    result, stats = cached_scan(tree)
    assert stats.misses == 1 and not marker.exists()
    assert result == render(scan(str(tree), fixture_ruleset(), ScanOptions(jobs=1)))
    assert json.loads(entry.read_text())["key"]["path"] == "pkg/train.py"


def test_planted_fifo_does_not_hang(tree: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    cached_scan(tree)
    entry = _entry_for(tree, "pkg/train.py")
    entry.unlink()
    os.mkfifo(entry)
    _, stats = cached_scan(tree)
    assert stats.misses == 1


def test_planted_symlinks_never_redirect_writes(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    tree = write_tree(tmp_path / "repo", FILES)
    (tree / CACHE_DIRNAME).symlink_to(outside, target_is_directory=True)
    result, stats = cached_scan(tree)
    assert not stats.enabled and "symlink" in (stats.disabled_reason or "")
    assert list(outside.iterdir()) == []
    assert result == render(scan(str(tree), fixture_ruleset(), ScanOptions(jobs=1)))
    # Deeper down: the layout directory is a planted link.
    (tree / CACHE_DIRNAME).unlink()
    (tree / CACHE_DIRNAME).mkdir()
    (tree / CACHE_DIRNAME / LAYOUT).symlink_to(outside, target_is_directory=True)
    result, stats = cached_scan(tree)
    assert stats.written == 0 and stats.write_failures == 1
    assert list(outside.iterdir()) == []
    assert result == render(scan(str(tree), fixture_ruleset(), ScanOptions(jobs=1)))


def test_unwritable_cache_still_scans(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = render(scan(str(tree), fixture_ruleset(), ScanOptions(jobs=1)))
    # The cache directory cannot be created (a file is in the way).
    (tree.parent / "blocked").write_text("")
    result, stats = cached_scan(tree, cache_dir=str(tree.parent / "blocked"))
    assert result == expected and stats.written == 0 and stats.write_failures == 1 and stats.disabled_reason
    # A read-only file system (simulated: the tests may run as root, which ignores modes).

    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(cache_module.tempfile, "mkstemp", read_only)
    result, stats = cached_scan(tree)
    assert result == expected and stats.written == 0 and stats.write_failures == 1
    assert "Read-only" in (stats.disabled_reason or "")


def test_read_only_cache_is_still_read(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache restored read-only (a CI cache) still serves hits."""
    cached_scan(tree)

    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(cache_module.tempfile, "mkstemp", read_only)
    _, stats = cached_scan(tree)
    assert stats.hits == analyzed_files(tree) and stats.write_failures == 0


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_interrupted_write_leaves_no_partial_entry(tree: Path, monkeypatch: pytest.MonkeyPatch, failure: BaseException) -> None:
    def interrupted(src: str, dst: str) -> None:
        raise failure

    monkeypatch.setattr(cache_module.os, "replace", interrupted)
    if isinstance(failure, KeyboardInterrupt):
        with pytest.raises(KeyboardInterrupt):
            cached_scan(tree)
    else:
        result, stats = cached_scan(tree)
        assert stats.write_failures == 1 and result == render(scan(str(tree), fixture_ruleset(), ScanOptions(jobs=1)))
    cache_dir = tree / CACHE_DIRNAME
    assert entries(cache_dir) == []
    assert [p for p in cache_dir.rglob("*") if p.is_file() and p.name not in (".gitignore", "CACHEDIR.TAG")] == []
    monkeypatch.undo()
    _, stats = cached_scan(tree)
    assert stats.hits == 0 and stats.written == analyzed_files(tree)


def test_unreadable_file_is_not_cached(tree: Path) -> None:
    """The next run may well read it: an entry would keep reporting the error."""
    ruleset = fixture_ruleset()
    cache = ResultCache.for_scan(str(tree), ruleset, prefilter=True, first_party=())
    assert cache is not None
    missing = SourceFile("pkg/missing.py", str(tree / "pkg" / "missing.py"), ("python",), 10)
    result = analyze_file(missing, build_context(ruleset), cache)
    assert result.error is not None and result.error.kind == "unreadable"
    assert (cache.stats.misses, cache.stats.written) == (1, 0)
    assert cache.lookup(missing.path, missing.kinds, missing.abspath) is None


def test_single_file_root_has_no_default_cache(tree: Path) -> None:
    single, stats = cached_scan(tree / "pkg" / "train.py")
    assert not stats.enabled and stats.disabled_reason
    assert not (tree / "pkg" / CACHE_DIRNAME).exists()
    assert single == render(scan(str(tree / "pkg" / "train.py"), fixture_ruleset(), ScanOptions(jobs=1)))
    _, stats = cached_scan(tree / "pkg" / "train.py", cache_dir=str(tree.parent / "explicit"))
    assert stats.written == 1


CONCURRENT = """
import sys
from tests.conftest import fixture_ruleset
from tpucheck import engine
from tpucheck.analyze.cache import CacheStats
from tpucheck.engine import ScanOptions, scan
from tpucheck.report.json_report import render
engine.INLINE_BELOW = 0
stats = CacheStats()
sys.stdout.write(render(scan(sys.argv[1], fixture_ruleset(), ScanOptions(jobs=2, use_cache=True, cache_dir=sys.argv[2], cache_stats=stats))))
sys.stderr.write(f"{stats.hits} {stats.misses} {stats.written} {stats.write_failures}")
"""


def test_concurrent_scans_share_a_cache(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {f"pkg/m{i:02d}.py": f"import torch\nx = {i}\n" + "torch.cuda.synchronize()\n" * (i % 4 + 1) for i in range(60)}
    tree = write_tree(tmp_path / "repo", files)
    cache_dir = tmp_path / "shared-cache"
    env = {**os.environ, "PYTHONPATH": SOURCE_ROOT}
    runs = [
        subprocess.Popen([sys.executable, "-c", CONCURRENT, str(tree), str(cache_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=SOURCE_ROOT, env=env)
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err for _, err in outputs]
    expected = render(scan(str(tree), fixture_ruleset(), ScanOptions(jobs=1)))
    assert outputs[0][0] == outputs[1][0] == expected
    for _, err in outputs:
        hits, misses, _, failures = map(int, err.split()[-4:])
        assert hits + misses == 60 and failures == 0
    assert len(entries(cache_dir)) == 60 + 1  # and the tree's facts
    assert not [p for p in cache_dir.rglob("*.part")]
    result, stats = cached_scan(tree, cache_dir=str(cache_dir))
    assert result == expected and stats.hits == 60


def test_entries_made_without_this_machines_secret_are_never_served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A repository can ship well-formed entries for its own files (every other input of
    the key is public), but not under a namespace that depends on a secret it never saw."""

    root = write_tree(tmp_path / "repo", {"a.py": "import torch\ntorch.cuda.synchronize()\n"})
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "attacker-home"))
    monkeypatch.delenv(cache_module.SECRET_ENV, raising=False)
    forged = scan(str(root), fixture_ruleset(), ScanOptions(jobs=1, use_cache=True))
    assert (tmp_path / "attacker-home" / "tpucheck" / "cache-secret").stat().st_mode & 0o777 == 0o600
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "victim-home"))
    stats = cache_module.CacheStats()
    again = scan(str(root), fixture_ruleset(), ScanOptions(jobs=1, use_cache=True, cache_stats=stats))
    assert (stats.hits, stats.misses) == (0, 1)
    assert render(again) == render(forged)
    monkeypatch.setenv(cache_module.SECRET_ENV, "shared-ci-secret")
    first, second = cache_module.CacheStats(), cache_module.CacheStats()
    scan(str(root), fixture_ruleset(), ScanOptions(jobs=1, use_cache=True, cache_stats=first))
    scan(str(root), fixture_ruleset(), ScanOptions(jobs=1, use_cache=True, cache_stats=second))
    assert (first.misses, second.hits) == (1, 1)


def test_no_secret_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    root = write_tree(tmp_path / "repo", {"a.py": "import torch\ntorch.cuda.synchronize()\n"})
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.delenv(cache_module.SECRET_ENV, raising=False)
    stats = cache_module.CacheStats()
    scan(str(root), fixture_ruleset(), ScanOptions(jobs=1, use_cache=True, cache_stats=stats))
    assert not stats.enabled and stats.disabled_reason is not None and "TPUCHECK_CACHE_SECRET" in stats.disabled_reason


# ---------------------------------------------------------------- the whole tree's facts

GRAPH: dict[str, str | bytes] = {
    "pkg/__init__.py": "from pkg import model\n",
    "pkg/model.py": "try:\n    import fused_cuda\nexcept ImportError:\n    fused_cuda = None\n",
    "pkg/fused_cuda.cu": "__global__ void k(float* x) { x[0] = 1; }\n",
    "setup.py": "from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension('fused_cuda', ['pkg/fused_cuda.cu'])\n",
}


def _tree_entries(cache_dir: Path) -> list[Path]:
    return [p for p in entries(cache_dir) if "tree" in json.loads(p.read_text())]


def test_warm_rescan_serves_the_tree_facts_without_computing_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = write_tree(tmp_path / "repo", GRAPH)
    cold, _ = cached_scan(tree)
    assert len(_tree_entries(tree / CACHE_DIRNAME)) == 1

    def computed(*args: object, **kwargs: object) -> None:
        raise AssertionError("an unchanged tree's facts were computed again")

    monkeypatch.setattr(engine, "_compute_tree_facts", computed)
    warm, _ = cached_scan(tree)
    assert warm == cold
    assert "fallback.optional-module" in warm  # the verdict the facts carry came back


def test_an_edited_import_recomputes_the_tree_facts(tmp_path: Path) -> None:
    """The key covers every file's bytes: making the guarded import plain puts the kernel
    back on the main path, so the served facts must not be the old ones."""
    tree = write_tree(tmp_path / "repo", GRAPH)
    cold, _ = cached_scan(tree)
    (tree / "pkg/model.py").write_text("import fused_cuda\n")
    warm, _ = cached_scan(tree)
    fresh = render(scan(str(tree), fixture_ruleset(), ScanOptions(jobs=1)))
    assert warm == fresh != cold
    assert "fallback.optional-module" not in warm
    assert len(_tree_entries(tree / CACHE_DIRNAME)) == 2


@pytest.mark.parametrize("damage", ["wrong-shape", "wrong-types", "another-key", "garbage"])
def test_damaged_tree_entry_is_recomputed(tmp_path: Path, damage: str) -> None:
    tree = write_tree(tmp_path / "repo", GRAPH)
    cold, _ = cached_scan(tree)
    (entry,) = _tree_entries(tree / CACHE_DIRNAME)
    data = json.loads(entry.read_text())
    if damage == "wrong-shape":
        data["tree"]["evil"] = 1
    elif damage == "wrong-types":
        data["tree"]["entry_points"] = [1]
    elif damage == "another-key":
        data["key"]["tree"] = "0" * 64
    else:
        entry.write_bytes(os.urandom(64))
    if damage != "garbage":
        entry.write_text(json.dumps(data))
    warm, _ = cached_scan(tree)
    assert warm == cold


def test_tree_facts_round_trip_through_json() -> None:
    from tpucheck.analyze.reachability import Reachability
    from tpucheck.analyze.registry import Unreached
    from tpucheck.analyze.treefacts import TreeFacts, tree_from_json, tree_to_json
    from tpucheck.findings import Reason

    facts = TreeFacts(
        Reachability(frozenset({"a.py"}), frozenset({"ext_cuda"}), {"a.py": Reason("fallback.optional-module", "why", 3, None)}, {"m.py": Reason("alternative.other-accelerator", "x")}, {"ext_cuda": "setup.py"}, {"trt.py": Reason("set-aside.cuda-engine", "y")}, {"knn_cuda": "lib/csrc/knn.cu"}),
        frozenset({"cli.py"}),
        {"v1/a.py": Reason("version.older", "v2 beside it")},
        {"a.py": frozenset({"training", "inference"})},
        {"use_x": "cfg.py"},
        {"third_party/r": ("https://example.org/r.git", True, frozenset({"third_party/r/src/k.cu"}))},
        scripts={"test.py": "test.py defines no test"},
        unreached={"heads/rpn.py": Unreached((("RegionHead", 6, 12),), (("batched_nms", "RegionHead"),))},
        option_imports={"eval/run.py": {"vllm": "use_vllm"}},
    )
    assert tree_from_json(json.loads(json.dumps(tree_to_json(facts)))) == facts
    assert tree_from_json(tree_to_json(TreeFacts())) == TreeFacts()
