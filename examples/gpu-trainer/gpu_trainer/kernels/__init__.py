"""Hand-written GPU kernels."""
