#!/usr/bin/env bash
# Launches a 4-GPU fine-tuning run on one node.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_P2P_DISABLE=1
export OMP_NUM_THREADS=8

torchrun --nproc_per_node=4 -m gpu_trainer.train --fp16 --config configs/accelerate.yaml "$@"
