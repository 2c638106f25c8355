"""Availability checks a project defines in one module and tests in others (blind set 15:
Fooocus's vendored diffusion backend tests `model_management.xformers_enabled()` before
importing xformers, and its version probes sit in nested tries inside the import attempt).
Each probe fails on the commit before (32b6712); each look-alike keeps its judgement."""

from __future__ import annotations

from pathlib import Path

from tpucheck.analyze.checks import availability_checks
from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()
CALLS = RULESET.judgement.guards.availability_calls

MANAGER = """\
import torch

DISABLED = False
if DISABLED:
    FAST_OK = False
else:
    try:
        import xformers
        FAST_OK = True
        {probe}
    except:
        FAST_OK = False


def fast_attention_on():
    if not torch.cuda.is_available():
        return False
    return FAST_OK


def fast_vae_on():
    on = fast_attention_on()
    if not on:
        return False
    return VAE_OK


VAE_OK = True
USE_FAST = False


def configured():
    return USE_FAST
"""

PROBE = """try:
            FAST_OK = xformers._has_cpp_library
        except:
            {handler}"""

USER = """\
import torch
from pkg import manager

if manager.{check}():
    import xformers.ops


def attend(q, k, v):
    if manager.{check}():
        return xformers.ops.memory_efficient_attention(q, k, v)
    return torch.nn.functional.scaled_dot_product_attention(q, k, v)
"""


def rows(root: Path, check: str = "fast_attention_on", probe: str = "pass", handler: str = "pass") -> set[tuple[str, int, str, str]]:
    files = {
        "pkg/__init__.py": "",
        "pkg/manager.py": MANAGER.format(probe=PROBE.format(handler=handler) if probe == "nested" else probe),
        "pkg/attn.py": USER.format(check=check),
        "requirements.txt": "torch\n",
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return {(f.path, f.span.line, f.severity, f.because[0].rule if f.because else "") for f in result.findings if f.rule == "DEP003"}


def test_the_module_lists_the_checks_its_returns_make() -> None:
    # check functions by their call, then the import flag the attempt sets (read elsewhere
    # as `manager.FAST_OK`, it is a package test too)
    assert availability_checks(MANAGER.format(probe="pass"), CALLS) == ("fast_attention_on()", "fast_vae_on()", "FAST_OK")


def test_a_function_returning_a_plain_setting_is_no_check() -> None:
    """Adversarial: `configured()` returns a module constant no import attempt sets, and a
    function with a truthy return outside the flag is no check either."""
    text = "try:\n    import apex\n    HAS = True\nexcept ImportError:\n    HAS = False\n\n\ndef mixed():\n    if HAS:\n        return True\n    return 1\n\n\ndef takes(x):\n    return HAS\n"
    assert availability_checks(text, CALLS) == ("HAS",)  # the flag itself; no function
    assert "configured()" not in availability_checks(MANAGER.format(probe="pass"), CALLS)
    assert "USE_FAST" not in availability_checks(MANAGER.format(probe="pass"), CALLS)


def test_the_cuda_queries_a_check_returns_are_the_judgements_availability_calls() -> None:
    """Which calls ask for CUDA is data (judgement.yaml `guards.availability_calls`), read
    past the root whatever its alias; without that list no call is known to ask."""
    text = (
        "import torch as th\n\n\ndef gpu_ok():\n    return th.cuda.is_available()\n\n\n"
        "def nccl_ok():\n    return th.distributed.is_nccl_available()\n\n\n"
        "def sized():\n    return th.cuda.device_count()\n"
    )
    assert availability_checks(text, CALLS) == ("gpu_ok()", "nccl_ok()")
    assert availability_checks(text) == ()


def test_a_call_of_a_check_defined_elsewhere_guards_its_branches(tmp_path: Path) -> None:
    assert rows(tmp_path) == {
        ("pkg/attn.py", 5, "info", "guard.test"),
        ("pkg/manager.py", 8, "info", "guard.except"),
    }


def test_the_evidence_names_the_check_and_where_it_is_defined(tmp_path: Path) -> None:
    rows(tmp_path, check="fast_vae_on")
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    (finding,) = [f for f in result.findings if f.rule == "DEP003" and f.path == "pkg/attn.py"]
    assert finding.because[0].evidence == (
        "`manager.fast_vae_on()` at pkg/attn.py:4; `fast_vae_on()` is true only where the package or CUDA is there (pkg/manager.py)"
    )


def test_a_call_of_a_plain_setting_keeps_the_blocker(tmp_path: Path) -> None:
    """Adversarial: `configured()` returns a setting, not an availability: the import under
    it is the product's path when the setting is on."""
    assert ("pkg/attn.py", 5, "blocker", "") in rows(tmp_path, check="configured")


def test_a_probe_in_a_nested_try_that_swallows_everything_keeps_the_import_attempt(tmp_path: Path) -> None:
    assert ("pkg/manager.py", 8, "info", "guard.except") in rows(tmp_path, probe="nested")


def test_a_nested_try_that_reraises_is_no_probe(tmp_path: Path) -> None:
    """Adversarial: a nested handler that raises lets failures reach the outer bare
    `except:`, which then guards more than an import."""
    assert ("pkg/manager.py", 8, "blocker", "") in rows(tmp_path, probe="nested", handler="raise")


CONFIGS = """\
import warnings

try:
    from flash_attn import flash_attn_func
    USE_FLASH_ATTENTION = True
except ImportError:
    warnings.warn("no flash_attn: the plain path")
    USE_FLASH_ATTENTION = False
USE_FAST_NORM = False
"""
MODEL = """\
import torch
from pkg import configs

if configs.{flag}:
    from flash_attn import flash_attn_func


def attend(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v)
"""


def _flash(root: Path, flag: str) -> set[tuple[str, int, str, str]]:
    files = {"pkg/__init__.py": "", "pkg/configs.py": CONFIGS, "pkg/model.py": MODEL.format(flag=flag), "train.py": "from pkg.model import attend\n"}
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return {(f.path, f.span.line, f.severity, f.because[0].rule if f.because else "") for f in result.findings if f.rule == "DEP002"}


def test_a_flag_an_import_attempt_defines_guards_where_another_module_reads_it(tmp_path: Path) -> None:
    """Blind set 34 (LLaMA2-Accessory): `global_configs.USE_FLASH_ATTENTION` is set by an
    import attempt in one module and tested before importing flash-attn in 21 others."""
    found = _flash(tmp_path, "USE_FLASH_ATTENTION")
    assert ("pkg/model.py", 5, "info", "guard.test") in found  # a TPU host takes the plain path by itself


def test_a_plain_constant_read_elsewhere_is_no_package_test(tmp_path: Path) -> None:
    # adversarial: `USE_FAST_NORM = False` is a setting no import attempt sets
    found = _flash(tmp_path, "USE_FAST_NORM")
    assert not any(path == "pkg/model.py" and reason == "guard.test" for path, _, _, reason in found)


WORKFLOW = "import torch\nfrom pkg import cuda\n\n\ndef prepare(use_cuda, use_fp16):\n    cuda.CUDA_ENABLED = use_cuda and torch.cuda.is_available()\n    cuda.ANY_DEVICE = use_cuda or torch.cuda.is_available()\n    self.use_gpu = torch.cuda.is_available()\n"


def test_a_module_flag_set_to_a_cuda_query_is_a_check() -> None:
    # audit BB (pytext): `CUDA_ENABLED = False` in utils/cuda.py, reassigned to
    # `use_cuda_if_available and torch.cuda.is_available()` by the workflow; adversarial:
    # an `or` and an instance's attribute are no such flag
    assert availability_checks(WORKFLOW, CALLS) == ("CUDA_ENABLED",)


def test_code_under_a_module_flag_set_to_a_cuda_query_is_guarded(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/cuda.py": "CUDA_ENABLED = False\nANY_DEVICE = False\n",
        "pkg/workflow.py": WORKFLOW,
        "pkg/model.py": "from pkg import cuda\n\n\ndef place(x, y):\n    if cuda.CUDA_ENABLED:\n        x = x.cuda()\n    if cuda.ANY_DEVICE:\n        y = y.cuda()\n    return x, y\n",
        "train.py": "from pkg.workflow import prepare\nfrom pkg.model import place\n\nprepare(True, False)\nplace(1, 2)\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    result = scan(str(tmp_path), RULESET, ScanOptions(jobs=1, use_cache=False))
    found = sorted((f.span.line, f.severity, tuple(r.rule for r in f.because)[:1]) for f in result.findings if f.rule == "CA003" and f.path == "pkg/model.py")
    assert found == [(6, "minor", ("guard.test",)), (8, "major", ("guard.option",))]
