"""torch.cuda.manual_seed(_all) -> torch.manual_seed (issue 15)."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from fixtools import fixed, notes


def test_a_cuda_seed_after_the_same_torch_seed_is_dropped(tmp_path: Path) -> None:
    code = """\
        import random
        import torch

        def set_seed(seed):
            random.seed(seed)
            torch.manual_seed(seed)
            # and the GPUs
            torch.cuda.manual_seed_all(seed)
            return seed
        """
    assert fixed(tmp_path, code) == dedent("""\
        import random
        import torch

        def set_seed(seed):
            random.seed(seed)
            torch.manual_seed(seed)
            # and the GPUs
            return seed
        """)


def test_seeds_in_different_blocks_are_not_redundant(tmp_path: Path) -> None:
    code = "import torch\nif True:\n    torch.manual_seed(0)\nif True:\n    torch.cuda.manual_seed(0)\n"
    # a different block: not the same seed call, so not redundant
    assert notes(tmp_path, code)[0][2] is False
    assert fixed(tmp_path, "import torch\ntorch.manual_seed(1)\ntorch.cuda.manual_seed(1)\n") == "import torch\ntorch.manual_seed(1)\n"


def test_a_lone_cuda_seed_is_replaced_only_as_an_unsafe_fix(tmp_path: Path) -> None:
    code = "import torch\ntorch.cuda.manual_seed_all(42)\n"
    assert fixed(tmp_path, code) == code
    assert fixed(tmp_path, code, unsafe=True) == "import torch\ntorch.manual_seed(42)\n"


def test_a_different_seed_or_a_comment_keeps_the_call(tmp_path: Path) -> None:
    code = "import torch\ntorch.manual_seed(1)\ntorch.cuda.manual_seed(2)\ntorch.manual_seed(3)\ntorch.cuda.manual_seed(3)  # gpu too\n"
    assert fixed(tmp_path, code) == code


def test_leaves_alone_a_local_function_and_a_comment(tmp_path: Path) -> None:
    code = "def manual_seed_all(seed):\n    pass\nmanual_seed_all(1)\n# torch.cuda.manual_seed_all(1)\n"
    assert fixed(tmp_path, code) == code
