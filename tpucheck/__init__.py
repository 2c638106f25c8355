"""tpucheck: how ready is a PyTorch codebase to move from CUDA GPUs to TPUs."""

__version__ = "0.1.0"
