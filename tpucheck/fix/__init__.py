"""`tpucheck fix`: codemods that make CUDA-bound PyTorch code device-agnostic while keeping
the GPU path, applied to the findings of a scan (runner.py), one small module per codemod.
What each codemod does, as data, is `tpucheck.ruleset.codemods` (the rules name them)."""
