"""Tests for the manifest readers: every entry's fields and exact position.

Positions are asserted as numbers *and* by slicing the text they cover, so a wrong
column shows up as readable text rather than an off-by-one in a tuple.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tpucheck.analyze.manifests import (
    ManifestError,
    Requirement,
    is_manifest,
    parse_manifest,
)


def fields(r: Requirement) -> tuple[object, ...]:
    return (r.kind, r.name, r.spec, r.ecosystem, r.line, r.column, r.end_line, r.end_column)


def covered(text: str, r: Requirement) -> str:
    """The text a requirement's span covers (lines split the way Python splits them)."""
    lines = re.split(r"\r\n|\r|\n", text.lstrip("\ufeff"))
    if r.line == r.end_line:
        return lines[r.line - 1][r.column - 1 : r.end_column - 1]
    parts = [lines[r.line - 1][r.column - 1 :]]
    parts += lines[r.line : r.end_line - 1]
    parts.append(lines[r.end_line - 1][: r.end_column - 1])
    return "\n".join(parts)


def by_name(found: list[Requirement]) -> dict[str, Requirement]:
    return {r.name: r for r in found}


# --------------------------------------------------------------------------- is_manifest


@pytest.mark.parametrize(
    "path",
    [
        "requirements.txt",
        "requirements-gpu.txt",
        "sub/dir/requirements_cuda.txt",
        "requirements/base.txt",
        "requirements/cuda.in",
        "dev-requirements.txt",
        "requirements.in",
        "deps/test-requirements.in",
        "constraints.txt",
        "constraints-cu121.txt",
        "pyproject.toml",
        "pkg/pyproject.toml",
        "setup.py",
        "setup.cfg",
        "environment.yml",
        "envs/environment.yaml",
        "conda.yml",
        "conda-gpu.yaml",
        "Requirements.txt",
        # `conda env create --file` takes any name (audit AH: BYOL's `env.yml`)
        "env.yml",
        "env.yaml",
        "environment-cuda118.yml",
        "conda_env.yaml",
        "docs/py310-env.yml",
        # a variant per platform (audit BC: deepchem's requirements/torch/env_torch.gpu.yml)
        "requirements/torch/env_torch.gpu.yml",
        "env-cpu.yaml",
        "env.cuda118.yml",
    ],
)
def test_is_manifest_accepts(path: str) -> None:
    assert is_manifest(path)


@pytest.mark.parametrize(
    "path",
    [
        "README.txt",
        "notes.txt",
        "Setup.py",
        "PyProject.toml",
        "requirements.py",
        "setup.pyc",
        "tox.ini",
        "pyproject.toml.bak",
        "envs.yaml",
        "environ.yml",
        "envoy.yaml",
        "env_vars.json",
        "venv.yml",
        "train_config.yaml",
        "env.json",
        "docs/environment.json",
        "mysetup.py",
        "constraints.in",
        "requirements/README.md",
    ],
)
def test_is_manifest_rejects(path: str) -> None:
    assert not is_manifest(path)


def test_parse_manifest_rejects_unknown_path() -> None:
    with pytest.raises(ManifestError) as caught:
        parse_manifest("README.md", "torch\n")
    assert caught.value.line is None


# --------------------------------------------------------------------------- requirements.txt


def test_requirements_names_extras_markers_and_comments() -> None:
    text = (
        "# CUDA stack\n"
        "\n"
        "torch==2.3.0+cu121  # pinned for the cluster\n"
        "  Flash_Attn.Extra[cuda, dev] >= 2.0 ; python_version < \"3.11\"\n"
        "bitsandbytes\n"
        "apex (>=0.1)\n"
    )
    found = parse_manifest("requirements.txt", text)
    assert [fields(r) for r in found] == [
        ("package", "torch", "==2.3.0+cu121", "pip", 3, 1, 3, 19),
        ("package", "flash-attn-extra", '[cuda, dev] >= 2.0 ; python_version < "3.11"', "pip", 4, 3, 4, 63),
        ("package", "bitsandbytes", "", "pip", 5, 1, 5, 13),
        ("package", "apex", "(>=0.1)", "pip", 6, 1, 6, 13),
    ]
    assert found[0].raw == "torch==2.3.0+cu121"
    assert covered(text, found[0]) == "torch==2.3.0+cu121"
    assert covered(text, found[1]) == 'Flash_Attn.Extra[cuda, dev] >= 2.0 ; python_version < "3.11"'


def test_requirements_urls_and_wheel_files() -> None:
    wheel = "https://example.invalid/wheels/flash_attn-2.5.6+cu122torch2.2-cp311-cp311-linux_x86_64.whl"
    text = (
        f"flash-attn @ {wheel}\n"
        f"{wheel}\n"
        "./vendor/cupy_cuda12x-13.0.0-cp311-cp311-linux_x86_64.whl\n"
        "https://example.invalid/src/Old-Style-Name-1.0.tar.gz\n"
        "https://example.invalid/xformers-0.0.26%2Bcu121-cp311-none-any.whl ; sys_platform == 'linux'\n"
        "git+https://github.com/example/apex.git#egg=apex\n"
        "git+https://github.com/example/no-egg.git\n"
        "./local/checkout\n"
        "https://example.invalid/index.html\n"
    )
    found = parse_manifest("requirements.txt", text)
    assert [fields(r) for r in found] == [
        ("package", "flash-attn", f"@ {wheel}", "pip", 1, 1, 1, 14 + len(wheel)),
        ("package", "flash-attn", wheel, "pip", 2, 1, 2, 1 + len(wheel)),
        ("package", "cupy-cuda12x", "./vendor/cupy_cuda12x-13.0.0-cp311-cp311-linux_x86_64.whl", "pip", 3, 1, 3, 58),
        ("package", "old-style-name", "https://example.invalid/src/Old-Style-Name-1.0.tar.gz", "pip", 4, 1, 4, 54),
        (
            "package",
            "xformers",
            "https://example.invalid/xformers-0.0.26%2Bcu121-cp311-none-any.whl ; sys_platform == 'linux'",
            "pip",
            5,
            1,
            5,
            93,
        ),
        ("package", "apex", "git+https://github.com/example/apex.git#egg=apex", "pip", 6, 1, 6, 49),
    ]


def test_requirements_options_includes_and_indexes() -> None:
    text = (
        "-r base.txt\n"
        "--requirement=other.txt\n"
        "-c constraints.txt\n"
        "--index-url https://download.pytorch.org/whl/cu121\n"
        "--extra-index-url=https://extra.invalid/simple\n"
        "-i https://mirror.invalid/simple\n"
        "-ihttps://attached.invalid/simple\n"
        "-f https://data.invalid/whl/torch-2.3.0+cu121.html\n"
        "--find-links /opt/wheels  # local\n"
        "--pre\n"
        "--trusted-host example.invalid\n"
        "--no-binary :all:\n"
        "--index-url\n"
        "torch\n"
    )
    found = parse_manifest("requirements.txt", text)
    assert [fields(r) for r in found] == [
        ("index", "", "https://download.pytorch.org/whl/cu121", "pip", 4, 1, 4, 51),
        ("index", "", "https://extra.invalid/simple", "pip", 5, 1, 5, 47),
        ("index", "", "https://mirror.invalid/simple", "pip", 6, 1, 6, 33),
        ("index", "", "https://attached.invalid/simple", "pip", 7, 1, 7, 34),
        ("index", "", "https://data.invalid/whl/torch-2.3.0+cu121.html", "pip", 8, 1, 8, 51),
        ("index", "", "/opt/wheels", "pip", 9, 1, 9, 25),
        ("package", "torch", "", "pip", 14, 1, 14, 6),
    ]
    assert found[0].raw == "--index-url https://download.pytorch.org/whl/cu121"
    assert found[5].raw == "--find-links /opt/wheels"


def test_requirements_editables() -> None:
    text = (
        "-e git+https://github.com/example/apex.git@v1#egg=Apex&subdirectory=csrc\n"
        "--editable=git+https://github.com/example/xf.git#egg=xformers[triton]\n"
        "-e .\n"
        "-e ./packages/local\n"
        "-e git+https://github.com/example/no-egg.git\n"
    )
    found = parse_manifest("requirements/dev.txt", text)
    assert [fields(r) for r in found] == [
        ("package", "apex", "git+https://github.com/example/apex.git@v1#egg=Apex&subdirectory=csrc", "pip", 1, 1, 1, 73),
        ("package", "xformers", "git+https://github.com/example/xf.git#egg=xformers[triton]", "pip", 2, 1, 2, 70),
    ]


def test_requirements_continuations_keep_first_line_position() -> None:
    text = (
        "deepspeed \\\n"
        "    >=0.14 \\\n"
        "    ; platform_system == 'Linux'\n"
        "triton\\\n"
        "# a comment ends the continuation\n"
        "xformers \\\n"
    )
    found = parse_manifest("requirements.txt", text)
    assert [fields(r) for r in found] == [
        ("package", "deepspeed", ">=0.14     ; platform_system == 'Linux'", "pip", 1, 1, 3, 33),
        ("package", "triton", "", "pip", 4, 1, 4, 7),
        ("package", "xformers", "", "pip", 6, 1, 6, 9),
    ]
    assert found[0].raw == "deepspeed     >=0.14     ; platform_system == 'Linux'"


def test_requirements_hash_options_are_not_part_of_the_spec() -> None:
    text = "xformers==0.0.26 --hash=sha256:0123 --hash=sha256:4567\n"
    (found,) = parse_manifest("requirements.txt", text)
    assert fields(found) == ("package", "xformers", "==0.0.26", "pip", 1, 1, 1, 55)
    assert found.raw == text.strip()


def test_requirements_garbage_lines_are_skipped() -> None:
    text = (
        "this is not a requirement\n"
        "!!!\n"
        "[cuda]\n"
        "-\n"
        "--\n"
        "-1\n"
        "=== garbage ===\n"
        "https://example.invalid/\n"
        "@ https://example.invalid/x.whl\n"
        "\x00\x01\n"
        "nvidia-cublas-cu12==12.1.3.1\n"
    )
    found = parse_manifest("requirements.txt", text)
    assert [fields(r) for r in found] == [("package", "nvidia-cublas-cu12", "==12.1.3.1", "pip", 11, 1, 11, 29)]


def test_requirements_hash_inside_url_is_not_a_comment() -> None:
    text = "apex@git+https://github.com/example/apex#egg=apex # trailing\n"
    (found,) = parse_manifest("requirements.txt", text)
    assert found.spec == "@git+https://github.com/example/apex#egg=apex"
    assert (found.line, found.column, found.end_line, found.end_column) == (1, 1, 1, 50)


def test_requirements_crlf_bom_and_non_ascii_columns() -> None:
    text = "\ufefftorch\r\n# é comment\r\n  xformers ; platform_release == 'é' \r\ntriton"
    found = parse_manifest("constraints.txt", text)
    assert [fields(r) for r in found] == [
        ("package", "torch", "", "pip", 1, 1, 1, 6),
        ("package", "xformers", "; platform_release == 'é'", "pip", 3, 3, 3, 37),
        ("package", "triton", "", "pip", 4, 1, 4, 7),
    ]
    assert covered(text, found[1]) == "xformers ; platform_release == 'é'"


def test_requirements_empty_file() -> None:
    assert parse_manifest("requirements.txt", "") == []
    assert parse_manifest("requirements.txt", "\n\n   \n# only comments\n") == []


# --------------------------------------------------------------------------- pyproject.toml

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61", "torch"]

[project]
name = "demo"
keywords = ["torch", "xformers"]
dependencies = [
    "torch",
    'flash-attn>=2.5; platform_system == "Linux"',
    "torch",
    "Bits_And.Bytes[extra] @ https://example.invalid/b.whl",
]

[project.optional-dependencies]
cuda = ["xformers", "deepspeed==0.14"]
gpu = [
  "xformers",  # same string, distinct position
]

[dependency-groups]
dev = ["pytest", {include-group = "cuda"}]
cuda = ["triton==2.3.0"]
"""


def test_pyproject_pep621_optional_groups_and_build_system() -> None:
    found = parse_manifest("pyproject.toml", PYPROJECT)
    assert [fields(r) for r in found] == [
        ("package", "setuptools", ">=61", "pip", 2, 14, 2, 28),
        ("package", "torch", "", "pip", 2, 32, 2, 37),
        ("package", "torch", "", "pip", 8, 6, 8, 11),
        ("package", "flash-attn", '>=2.5; platform_system == "Linux"', "pip", 9, 6, 9, 49),
        ("package", "torch", "", "pip", 10, 6, 10, 11),
        ("package", "bits-and-bytes", "[extra] @ https://example.invalid/b.whl", "pip", 11, 6, 11, 59),
        ("package", "xformers", "", "pip", 15, 10, 15, 18),
        ("package", "deepspeed", "==0.14", "pip", 15, 22, 15, 37),
        ("package", "xformers", "", "pip", 17, 4, 17, 12),
        ("package", "pytest", "", "pip", 21, 9, 21, 15),
        ("package", "triton", "==2.3.0", "pip", 22, 10, 22, 23),
    ]
    for r in found:
        assert covered(PYPROJECT, r) == r.raw
    # The `keywords = ["torch", ...]` line (6) is never mistaken for a dependency.
    assert all(r.line != 6 for r in found)


def test_pyproject_poetry_tables_and_sources() -> None:
    text = """\
[tool.poetry]
name = "demo"

[tool.poetry.dependencies]
python = "^3.10"
torch = { version = "2.3.0+cu121", source = "pytorch" }  # CUDA build
"deepspeed" = "^0.14"
apex = {git = "https://github.com/example/apex.git", branch = "main"}
Flash_Attn = [{version = "2.5.6", python = "<3.12"}, {path = "wheels/fa.whl"}]

[tool.poetry.group.gpu.dependencies]
triton = "2.3.0"

[tool.poetry.dev-dependencies]
xformers = "*"

[[tool.poetry.source]]
name = "pytorch"
url = "https://download.pytorch.org/whl/cu121"
priority = "explicit"

[[tool.poetry.source]]
name = "mirror"
url = "https://download.pytorch.org/whl/cu121"
"""
    found = parse_manifest("pyproject.toml", text)
    assert [fields(r) for r in found] == [
        ("package", "torch", "version=2.3.0+cu121, source=pytorch", "pip", 6, 1, 6, 56),
        ("package", "deepspeed", "^0.14", "pip", 7, 1, 7, 22),
        ("package", "apex", "git=https://github.com/example/apex.git", "pip", 8, 1, 8, 70),
        ("package", "flash-attn", "version=2.5.6 | path=wheels/fa.whl", "pip", 9, 1, 9, 79),
        ("package", "triton", "2.3.0", "pip", 12, 1, 12, 17),
        ("package", "xformers", "*", "pip", 15, 1, 15, 15),
        ("index", "", "https://download.pytorch.org/whl/cu121", "pip", 19, 8, 19, 46),
        ("index", "", "https://download.pytorch.org/whl/cu121", "pip", 24, 8, 24, 46),
    ]
    assert found[0].raw == 'torch = { version = "2.3.0+cu121", source = "pytorch" }'
    assert all(r.name != "python" for r in found)


def test_pyproject_uv_indexes_and_dev_dependencies() -> None:
    text = """\
[project]
name = "demo"

[tool.uv]
index-url = "https://primary.invalid/simple"
extra-index-url = ["https://download.pytorch.org/whl/cu121", 'https://other.invalid/simple']
dev-dependencies = ["nvidia-nccl-cu12"]

[[tool.uv.index]]
name = "pytorch-cu121"
url = "https://download.pytorch.org/whl/cu121"
explicit = true
"""
    found = parse_manifest("pyproject.toml", text)
    assert [fields(r) for r in found] == [
        ("index", "", "https://primary.invalid/simple", "pip", 5, 14, 5, 44),
        ("index", "", "https://download.pytorch.org/whl/cu121", "pip", 6, 21, 6, 59),
        ("index", "", "https://other.invalid/simple", "pip", 6, 63, 6, 91),
        ("package", "nvidia-nccl-cu12", "", "pip", 7, 22, 7, 38),
        ("index", "", "https://download.pytorch.org/whl/cu121", "pip", 11, 8, 11, 46),
    ]


def test_pyproject_dotted_and_inline_tables_and_escapes() -> None:
    text = (
        '[project]\n'
        'name = "demo"\n'
        'optional-dependencies.cuda = ["flash-attn", "apex ; extra == \\"x\\""]\n'
        'dependencies = ["\\u0074orch"]\n'
    )
    found = parse_manifest("pyproject.toml", text)
    assert [fields(r) for r in found] == [
        ("package", "flash-attn", "", "pip", 3, 32, 3, 42),
        ("package", "apex", '; extra == "x"', "pip", 3, 46, 3, 67),
        # Written with an escape: cannot be found verbatim, so the key's line stands in.
        ("package", "torch", "", "pip", 4, 1, 4, 30),
    ]


def test_pyproject_crlf_line_endings() -> None:
    text = '[project]\r\nname = "demo"\r\ndependencies = [\r\n  "cupy-cuda12x",\r\n]\r\n'
    (found,) = parse_manifest("pyproject.toml", text)
    assert fields(found) == ("package", "cupy-cuda12x", "", "pip", 4, 4, 4, 16)


def test_pyproject_without_dependencies() -> None:
    text = '[project]\nname = "demo"\ndynamic = ["dependencies"]\n[tool.black]\nline-length = 100\n'
    assert parse_manifest("pyproject.toml", text) == []


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('[project]\nname = "demo"\ndependencies = [\n  "torch",\n  oops\n]\n', 5),
        ('[project]\nname = "demo"\n[project]\n', 3),
    ],
)
def test_pyproject_invalid_toml_raises_with_line(text: str, line: int) -> None:
    with pytest.raises(ManifestError) as caught:
        parse_manifest("pyproject.toml", text)
    assert caught.value.line == line
    assert caught.value.message.startswith("invalid TOML: ")
    assert "\n" not in caught.value.message and "(at line" not in caught.value.message


# --------------------------------------------------------------------------- setup.py

SETUP_PY = '''\
import setuptools
from setuptools import setup

BASE = ["numpy"]
CUDA_EXTRAS = {"cuda": ["flash-attn>=2"], "fp8": "transformer-engine"}
BASE = [
    "numpy>=1.24",
    "torch==2.3.0+cu121",
]
TESTS = """
pytest
  bitsandbytes  # 8-bit optimizers
# a comment line
"""


def read_requirements():
    return open("requirements.txt").read().splitlines()


setup(
    name="demo",
    install_requires=BASE + ["deepspeed"] + read_requirements(),
    setup_requires=("triton",),
    tests_require=TESTS,
    extras_require={**CUDA_EXTRAS, "dyn": read_requirements(), "x": ["xformers"]},
    description="not a dependency: apex",
)
'''


def test_setup_py_literals_names_strings_and_concatenation() -> None:
    found = parse_manifest("setup.py", SETUP_PY)
    # `**CUDA_EXTRAS` unpacks a dict bound to a name: its extras are read too.
    assert [fields(r) for r in found] == [
        ("package", "flash-attn", ">=2", "pip", 5, 26, 5, 39),
        ("package", "transformer-engine", "", "pip", 5, 51, 5, 69),
        ("package", "numpy", ">=1.24", "pip", 7, 6, 7, 17),
        ("package", "torch", "==2.3.0+cu121", "pip", 8, 6, 8, 24),
        ("package", "pytest", "", "pip", 11, 1, 11, 7),
        ("package", "bitsandbytes", "", "pip", 12, 3, 12, 15),
        ("package", "deepspeed", "", "pip", 23, 31, 23, 40),
        ("package", "triton", "", "pip", 24, 22, 24, 28),
        ("package", "xformers", "", "pip", 26, 71, 26, 79),
    ]
    for r in found:
        assert covered(SETUP_PY, r) == r.raw
    assert [r.extra for r in found] == ["cuda", "fp8", None, None, None, None, None, None, "x"]


def test_setup_py_extras_require_bound_to_a_name_and_attribute_callee() -> None:
    text = (
        'import setuptools\n'
        'EXTRAS = {"cuda": ["flash-attn"], "8bit": "bitsandbytes\\n"}\n'
        "setuptools.setup(extras_require=EXTRAS, install_requires=[u'é', u'cupy-cuda12x'])\n"
    )
    found = parse_manifest("setup.py", text)
    assert [fields(r) for r in found] == [
        ("package", "flash-attn", "", "pip", 2, 21, 2, 31),
        ("package", "bitsandbytes", "", "pip", 2, 44, 2, 56),
        # 'é' is two UTF-8 bytes: columns must count characters, not bytes.
        ("package", "cupy-cuda12x", "", "pip", 3, 67, 3, 79),
    ]
    assert covered(text, found[2]) == "cupy-cuda12x"


def test_setup_py_dynamic_values_are_ignored() -> None:
    text = (
        "from setuptools import setup\n"
        "import json\n"
        "setup(\n"
        "    install_requires=json.load(open('deps.json')),\n"
        "    extras_require=dict(cuda=['apex']),\n"
        "    tests_require=[f'torch=={json.__name__}'],\n"
        "    **{'setup_requires': ['triton']},\n"
        ")\n"
    )
    assert parse_manifest("setup.py", text) == []


def test_setup_py_uses_the_last_assignment_before_the_call() -> None:
    text = (
        'REQS = ["apex"]\n'
        'REQS = ["xformers"]\n'
        "setup(install_requires=REQS)\n"
        'REQS = ["triton"]\n'
    )
    found = parse_manifest("setup.py", text)
    assert [(r.name, r.line) for r in found] == [("xformers", 2)]


def test_setup_py_syntax_error_raises_with_line() -> None:
    text = "from setuptools import setup\nsetup(\n    install_requires=['torch',\n"
    with pytest.raises(ManifestError) as caught:
        parse_manifest("setup.py", text)
    assert caught.value.line == 3


def test_setup_py_is_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    text = (
        f"open({str(marker)!r}, 'w').write('ran')\n"
        "import setuptools\n"
        f"setuptools.setup(install_requires=['torch'] + [open({str(marker)!r}, 'w').name])\n"
    )
    found = parse_manifest("setup.py", text)
    assert [r.name for r in found] == ["torch"]
    assert not marker.exists()


# --------------------------------------------------------------------------- setup.cfg

SETUP_CFG = """\
[metadata]
name = demo
install_requires = not-a-dependency

[options]
python_requires = >=3.10
install_requires =
    torch==2.3.0+cu121
    # a comment
    flash-attn>=2; platform_system == "Linux"

    apex  # inline
setup_requires = triton; deepspeed; python_version < "3.11"
tests_require = file: test-requirements.txt

[options.extras_require]
cuda = bitsandbytes
gpu =
  xformers
  cupy-cuda12x
"""


def test_setup_cfg_entries_and_positions() -> None:
    found = parse_manifest("setup.cfg", SETUP_CFG)
    assert [fields(r) for r in found] == [
        ("package", "torch", "==2.3.0+cu121", "pip", 8, 5, 8, 23),
        ("package", "flash-attn", '>=2; platform_system == "Linux"', "pip", 10, 5, 10, 46),
        ("package", "apex", "", "pip", 12, 5, 12, 9),
        ("package", "triton", "", "pip", 13, 18, 13, 24),
        ("package", "deepspeed", '; python_version < "3.11"', "pip", 13, 26, 13, 60),
        ("package", "bitsandbytes", "", "pip", 17, 8, 17, 20),
        ("package", "xformers", "", "pip", 19, 3, 19, 11),
        ("package", "cupy-cuda12x", "", "pip", 20, 3, 20, 15),
    ]
    for r in found:
        assert covered(SETUP_CFG, r) == r.raw


# --------------------------------------------------------------------------- environment.yml

ENVIRONMENT = """\
name: demo
channels:
  - pytorch
  - nvidia
dependencies:
  - python=3.11
  - pytorch::pytorch=2.3.0=py3.11_cuda12.1_cudnn8.9.2_0
  - pytorch-cuda=12.1
  - nvidia::cuda-toolkit
  - "cudatoolkit>=11.8"
  - conda-forge/linux-64::cupy 13.*
  - 3.5
  - pip
  - pip:
      - --extra-index-url https://download.pytorch.org/whl/cu121
      - flash-attn==2.5.6  # a YAML comment
      - -r requirements.txt
      - 'xformers'
"""


def test_environment_yml_conda_and_pip_entries() -> None:
    found = parse_manifest("environment.yml", ENVIRONMENT)
    assert [fields(r) for r in found] == [
        ("package", "python", "=3.11", "conda", 6, 5, 6, 16),
        ("package", "pytorch", "=2.3.0=py3.11_cuda12.1_cudnn8.9.2_0", "conda", 7, 5, 7, 56),
        ("package", "pytorch-cuda", "=12.1", "conda", 8, 5, 8, 22),
        ("package", "cuda-toolkit", "", "conda", 9, 5, 9, 25),
        ("package", "cudatoolkit", ">=11.8", "conda", 10, 6, 10, 23),
        ("package", "cupy", "13.*", "conda", 11, 5, 11, 36),
        ("package", "pip", "", "conda", 13, 5, 13, 8),
        ("index", "", "https://download.pytorch.org/whl/cu121", "pip", 15, 9, 15, 65),
        ("package", "flash-attn", "==2.5.6", "pip", 16, 9, 16, 26),
        ("package", "xformers", "", "pip", 18, 10, 18, 18),
    ]
    for r in found:
        assert covered(ENVIRONMENT, r) == r.raw
    # Channels are not packages.
    assert not any(r.name == "nvidia" for r in found)


def test_environment_yml_non_mapping_and_empty_documents() -> None:
    assert parse_manifest("environment.yml", "") == []
    assert parse_manifest("environment.yml", "- torch\n- apex\n") == []
    assert parse_manifest("conda.yaml", "just a string\n") == []
    assert parse_manifest("conda.yaml", "name: x\ndependencies: torch\n") == []


def test_environment_yml_invalid_yaml_raises_with_line() -> None:
    text = "name: demo\ndependencies:\n  - torch\n  - [apex\n"
    with pytest.raises(ManifestError) as caught:
        parse_manifest("environment.yml", text)
    assert caught.value.line == 5
    assert caught.value.message.startswith("invalid YAML: ")
    assert "\n" not in caught.value.message
    text = "name: demo\ndependencies:\n  - torch\n   bad: indentation\n"
    with pytest.raises(ManifestError) as caught:
        parse_manifest("environment.yml", text)
    assert caught.value.line == 4


def test_environment_yml_python_tags_are_rejected_not_constructed(tmp_path: Path) -> None:
    marker = tmp_path / "constructed"
    text = (
        "name: demo\n"
        "dependencies:\n"
        "  - torch\n"
        f"  - !!python/object/apply:os.system ['touch {marker}']\n"
    )
    with pytest.raises(ManifestError) as caught:
        parse_manifest("environment.yml", text)
    assert caught.value.line == 4
    assert not marker.exists()
    with pytest.raises(ManifestError):
        parse_manifest("conda-env.yaml", "dependencies: !!python/object:collections.OrderedDict {}\n")


def test_environment_yml_unprintable_character_raises_with_line() -> None:
    text = "name: demo\ndependencies:\n  - torch\n  - ap\x07ex\n"
    with pytest.raises(ManifestError) as caught:
        parse_manifest("environment.yml", text)
    assert caught.value.line == 4


# --------------------------------------------------------------------------- leniency

NASTY = [
    "\\",
    "\\\n\\\n",
    "-",
    "--=",
    "-e",
    "[options]\ninstall_requires\n  =\n",
    "[options\ninstall_requires = [\n",
    "= torch\n  apex\n",
    "\x00\x0c\u2028\x85",
    "torch @\n@ torch\n",
    "https://\nfile:\n.whl\n-1.tar.gz\n",
]


@pytest.mark.parametrize("text", NASTY)
@pytest.mark.parametrize("path", ["requirements.txt", "setup.cfg"])
def test_lenient_formats_never_raise(path: str, text: str) -> None:
    for r in parse_manifest(path, text):
        assert r.kind in ("package", "index")
        assert r.name or r.kind == "index"


# --------------------------------------------------------------------------- optional extras: one finding per package and extra

EXTRAS_PYPROJECT = """\
[project]
name = "demo"
dependencies = ["flash-attn>=2"]

[project.optional-dependencies]
cu121 = [
    "xformers==0.0.26 ; python_version >= '3.10'",
    "xformers==0.0.25 ; python_version < '3.10'",
    "flash-attn>=2",
]
cu118 = ["xformers==0.0.26"]
"""


def test_optional_extras_report_once_per_package_and_extra_at_most_minor(tmp_path: Path) -> None:
    from tpucheck.engine import ScanOptions, scan
    from tpucheck.ruleset import load_ruleset

    (tmp_path / "pyproject.toml").write_text(EXTRAS_PYPROJECT)
    result = scan(str(tmp_path), load_ruleset(), ScanOptions(jobs=1))
    got = [(f.rule, f.span.line, f.span.column, f.severity, f.guarded, f.detail) for f in result.findings]
    assert got == [
        ("DEP002", 3, 18, "blocker", False, "flash-attn"),
        # xformers installs and imports on a TPU host: listed, it is no work (its imports are)
        ("DEP003", 7, 6, "info", True, "xformers [extra: cu121]"),
        ("DEP002", 9, 6, "minor", True, "flash-attn [extra: cu121]"),  # a CUDA-only package kept optional: minor
        ("DEP003", 11, 11, "info", True, "xformers [extra: cu118]"),
    ]
    assert [r.extra for r in parse_manifest("pyproject.toml", EXTRAS_PYPROJECT)] == [None, "cu121", "cu121", "cu121", "cu118"]


def test_extras_in_setup_cfg_and_poetry_are_named() -> None:
    cfg = "[options]\ninstall_requires =\n    torch\n[options.extras_require]\ncuda =\n    apex\n    flash-attn\n"
    assert [(r.name, r.extra) for r in parse_manifest("setup.cfg", cfg)] == [("torch", None), ("apex", "cuda"), ("flash-attn", "cuda")]
    poetry = (
        "[tool.poetry.dependencies]\npython = '^3.10'\ntorch = '^2.3'\n"
        "flash-attn = {version = '^2.5', optional = true}\napex = {version = '*', optional = true}\n"
        "[tool.poetry.extras]\ngpu = ['flash-attn']\n"
        "[tool.poetry.group.cuda]\noptional = true\n[tool.poetry.group.cuda.dependencies]\nxformers = '*'\n"
    )
    assert [(r.name, r.extra) for r in parse_manifest("pyproject.toml", poetry)] == [
        ("torch", None),
        ("flash-attn", "gpu"),
        ("apex", "optional"),
        ("xformers", "cuda"),
    ]
