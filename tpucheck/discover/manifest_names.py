"""Which files are dependency manifests, by name: the one list discovery (stage one, which
must not load the parsers) and the manifest parsers both read.

Case follows the tools that read the files. pip and setuptools open exactly
`pyproject.toml`, `setup.py` and `setup.cfg` (a `Setup.py` is never run), and conda's
`environment.yml` likewise; a requirements file is whatever `-r` names, so any case of
`requirements*.txt` counts (Windows- and macOS-authored repositories ship `Requirements.txt`).
"""

from __future__ import annotations

__all__ = ["is_manifest", "manifest_format"]

_EXACT = {"pyproject.toml": "pyproject", "setup.py": "setup.py", "setup.cfg": "setup.cfg"}
_CONDA_ENV_NAMES = ("environment.yml", "environment.yaml")


def manifest_format(relpath: str) -> str | None:
    """The reader a '/'-separated relative path needs, or None for a file that is not a
    manifest: pyproject, setup.py, setup.cfg, conda or requirements."""
    parts = [p for p in relpath.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts:
        return None
    name = parts[-1]
    if name in _EXACT:
        return _EXACT[name]
    lower = name.lower()
    if name in _CONDA_ENV_NAMES or (lower.endswith((".yml", ".yaml")) and _conda_stem(lower.rpartition(".")[0])):
        return "conda"
    parent = parts[-2].lower() if len(parts) > 1 else ""
    # `requirements*.txt` plus the common `dev-requirements.txt` / `test-requirements.txt`
    # spellings, pip-tools inputs (`*.in`), and everything in a `requirements/` folder.
    if lower.endswith((".txt", ".in")) and ("requirements" in lower or parent == "requirements"):
        return "requirements"
    if lower.startswith("constraints") and lower.endswith(".txt"):
        return "requirements"
    return None


def _conda_stem(stem: str) -> bool:
    """`conda env create --file` takes any name, and READMEs give it as `env.yml`,
    `environment-cuda.yml` or `conda_env.yaml` as often as `environment.yml` (audit AH:
    BYOL's `env.yml` pinned torch 1.4 and nobody saw it). A YAML file of one of these
    names is read as a conda environment too; one with no `dependencies:` (a gym `env.yaml`)
    gives no requirements, and it stays a config file for the config rules. A variant per
    platform (`env_torch.gpu.yml`, `env-cpu.yaml`: audit BC, deepchem's pinned CUDA 11.8
    wheels) is one too."""
    return stem in ("env", "conda") or stem.startswith(("environment", "conda_", "conda-", "env_", "env-", "env.")) or stem.endswith(("_env", "-env"))


def is_manifest(relpath: str) -> bool:
    return manifest_format(relpath) is not None
