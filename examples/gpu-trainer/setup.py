"""Builds the fused GeLU extension. Needs nvcc from the CUDA toolkit on PATH."""

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="gpu-trainer",
    version="0.4.0",
    packages=find_packages(exclude=["tests"]),
    ext_modules=[
        CUDAExtension(
            "gpu_trainer._fused_ops",
            ["csrc/fused_gelu.cu", "csrc/bindings.cpp"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    install_requires=[
        "torch>=2.3",
        "transformers>=4.41",
        "bitsandbytes>=0.43",
        "pyyaml>=6.0",
    ],
)
