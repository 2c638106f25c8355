"""Forward-pass throughput benchmark: python -m gpu_trainer.bench --batch-size 64"""

import argparse
import time

import torch as T

from gpu_trainer.model import ClassifierConfig, TicketClassifier


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--iters", type=int, default=50)
    args = parser.parse_args()

    cfg = ClassifierConfig()
    model = TicketClassifier(cfg).half().cuda().eval()
    ids = T.randint(0, cfg.vocab_size, (args.batch_size, cfg.max_len), device="cuda")

    with T.inference_mode():
        for _ in range(5):  # warm-up: cuDNN autotuning and the JIT-built kernels
            model(ids)
        T.cuda.synchronize()
        tic = time.perf_counter()
        for _ in range(args.iters):
            model(ids)
        T.cuda.synchronize()
    elapsed = time.perf_counter() - tic
    print(f"{args.iters * args.batch_size / elapsed:.0f} tickets/s")


if __name__ == "__main__":
    main()
