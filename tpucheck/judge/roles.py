"""Where a file sits in a project, which decides how much its findings block a migration.

Library and training code must run on the TPU for the product to; tests, examples,
benchmarks and docs still need porting but do not stop the product from running.
"""

from __future__ import annotations

import re

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("test", re.compile(r"(^|/)(tests?|testing|unittests?|stubs?)/|^\.(github|circleci|gitlab|buildkite|azure-pipelines)/|^\.(gitlab-ci|travis)\.ya?ml$|_stub_tests?\.py$|(^|/)test_[^/]*$|_tests?\.py$|(^|/)tests?\.py$|(^|/)conftest\.py$")),
    ("benchmark", re.compile(r"(^|/)(benchmarks?|benchmarking|bench|perf)/|(^|/)(bench|benchmarks?)(_[^/]*|\.py)$|_bench(mark)?s?\.py$")),
    # A notebook is a demo or an exploration wherever it sits (`run_demo.ipynb` at the
    # root is a Colab walkthrough); the product it shows lives in the package.
    # `gradio_demo/app.py`, `online_demo.py`, `demo_dc_ae.py`: a demo is a demo by its name too.
    ("example", re.compile(r"(^|/)([^/]*[_-])?(examples?|samples?|demos?|tutorials?|notebooks?|recipes)/|\.ipynb$|(^|/)demos?(_[^/]*)?\.py$|_demo\.py$")),
    ("docs", re.compile(r"(^|/)(docs?|documentation)/")),
    ("script", re.compile(r"(^|/)(scripts?|tools)/")),
)


def role_of(path: str) -> str:
    for role, pattern in _RULES:
        if pattern.search(path):
            return role
    return "library"


SUPPORTING_ROLES = frozenset({"test", "example", "benchmark", "docs"})


def supporting_path(path: str) -> bool:
    """Tests, examples, benchmarks and docs: code that does not stop the product."""
    return role_of(path) in SUPPORTING_ROLES


_DATA_FOLDER = re.compile(r"(^|/)(datasets?|data_?loaders?)/")
_DATA_FILE = re.compile(r"(transform|dataset|sampler|loader|augment|collat)[^/]*\.py$")


def data_pipeline(path: str) -> bool:
    """Dataset code (`training/dataset/transforms.py`, `datasets/vos_dataset.py`) runs in
    the DataLoader's workers, on the host: a `.item()` there waits for no device, and an
    op there runs on the CPU. Other files of such a folder may not (`datasets/coco_eval.py`
    gets the model's outputs), so the file's name must say it too."""
    return bool(_DATA_FOLDER.search(path) and _DATA_FILE.search(path.rpartition("/")[2]))
