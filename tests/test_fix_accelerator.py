"""torch.cuda.X -> torch.accelerator.Y (issue 15): the names torch.accelerator has, the
version they need, and the code to leave alone."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from fixtools import fix_project, fixed, notes


def test_calls_and_references_become_torch_accelerator(tmp_path: Path) -> None:
    code = """\
        import torch

        def bench(fn, x):
            # time it
            torch.cuda.synchronize()  # barrier
            out = fn(x)
            torch.cuda.synchronize(device=0)
            return out

        n = torch.cuda.device_count()
        print(torch.cuda.max_memory_allocated() / 1e9)
        torch.cuda.empty_cache()
        hook = torch.cuda.synchronize
        free, total = torch.cuda.mem_get_info()
        torch.cuda.set_device(3)
        i = torch.cuda.current_device()
        torch.cuda.reset_peak_memory_stats()
        r = torch.cuda.memory_reserved()
        """
    assert fixed(tmp_path, code) == dedent("""\
        import torch

        def bench(fn, x):
            # time it
            torch.accelerator.synchronize()  # barrier
            out = fn(x)
            torch.accelerator.synchronize(0)
            return out

        n = torch.accelerator.device_count()
        print((torch.accelerator.max_memory_allocated() if torch.accelerator.is_available() else 0) / 1e9)
        if torch.accelerator.is_available():
            torch.accelerator.empty_cache()
        hook = torch.accelerator.synchronize
        free, total = torch.accelerator.get_memory_info()
        torch.accelerator.set_device_index(3)
        i = torch.accelerator.current_device_index()
        torch.accelerator.reset_peak_memory_stats()
        r = torch.accelerator.memory_reserved() if torch.accelerator.is_available() else 0
        """)


def test_aliases_resolve_torch_is_imported_once_and_the_unused_cuda_imports_go(tmp_path: Path) -> None:
    code = """\
        from torch import cuda
        from torch.cuda import synchronize as sync

        cuda.synchronize()
        sync()
        """
    assert fixed(tmp_path, code) == dedent("""\
        import torch

        torch.accelerator.synchronize()
        torch.accelerator.synchronize()
        """)


def test_the_module_alias_is_used(tmp_path: Path) -> None:
    assert fixed(tmp_path, "import torch as T\nT.cuda.synchronize()\n") == "import torch as T\nT.accelerator.synchronize()\n"


def test_leaves_alone_a_local_cuda_a_comment_and_a_guard(tmp_path: Path) -> None:
    code = """\
        import torch

        class Device:
            def synchronize(self):
                pass

        cuda = Device()
        cuda.synchronize()
        # torch.cuda.synchronize() used to be here
        print("torch.cuda.synchronize()")
        if torch.cuda.is_available():
            x = 1
        """
    report = fix_project(tmp_path, {"mod.py": code})
    assert report.files == []


def test_names_without_a_counterpart_are_reported(tmp_path: Path) -> None:
    assert notes(tmp_path, "import torch\nprint(torch.cuda.memory_summary())\n") == [
        ("CA006", 2, False, "torch.accelerator has no counterpart of torch.cuda.memory_summary; fix it by hand")
    ]


def test_reports_the_torch_version_the_code_needs(tmp_path: Path) -> None:
    report = fix_project(tmp_path, {"mod.py": "import torch\ntorch.cuda.synchronize()\ntorch.cuda.empty_cache()\n"})
    assert str(report.needs()) == "2.9"


def test_not_offered_when_the_project_pins_an_older_torch(tmp_path: Path) -> None:
    report = fix_project(
        tmp_path,
        {"mod.py": "import torch\ntorch.cuda.synchronize()\ntorch.cuda.empty_cache()\n", "requirements.txt": "torch==2.7.1\n"},
    )
    assert [(o.target.finding.rule, o.state) for o in report.outcomes] == [("CA001", "fixed"), ("CA007", "pinned")]
    assert report.files[0].after == "import torch\ntorch.accelerator.synchronize()\ntorch.cuda.empty_cache()\n"
    left = report.pinned[0].note
    assert "torch.accelerator.empty_cache needs torch>=2.9" in left and "requirements.txt:1: torch==2.7.1" in left


def test_a_torch_older_than_torch_accelerator_gets_nothing(tmp_path: Path) -> None:
    report = fix_project(tmp_path, {"mod.py": "import torch\ntorch.cuda.synchronize()\n", "requirements.txt": "torch<2.6\n"})
    assert report.changed_files == [] and not report.outcomes[0].fixed


def test_a_patch_of_torch_cuda_is_left_to_a_person_and_a_check_passed_on_is_unsafe(tmp_path: Path) -> None:
    code = "import torch\ntorch.cuda.is_available = lambda: True\nchecks = [torch.cuda.is_available]\n"
    assert fixed(tmp_path, code) == code
    assert fixed(tmp_path, code, unsafe=True) == "import torch\ntorch.cuda.is_available = lambda: True\nchecks = [torch.accelerator.is_available]\n"
    assert ("CA002", 2, False, "assigned to (a patch of torch.cuda): fix it by hand") in notes(tmp_path, code)


def test_an_availability_check_that_guards_a_cuda_call_beside_it_stays(tmp_path: Path) -> None:
    code = "import torch\nbf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()\nok = torch.cuda.is_available() and flag\n"
    assert fixed(tmp_path, code) == (
        "import torch\nbf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()\nok = torch.accelerator.is_available() and flag\n"
    )
