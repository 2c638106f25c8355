"""Distributed fine-tuning of the ticket classifier.

    torchrun --nproc_per_node=4 -m gpu_trainer.train --fp16
"""

import argparse
import json
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda import amp
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from gpu_trainer.model import ClassifierConfig, TicketClassifier
from gpu_trainer.utils import log_gpu_memory, pick_amp_dtype

try:
    from apex.optimizers import FusedAdam
except ImportError:
    FusedAdam = None


class TicketDataset(Dataset):
    """Pre-tokenized tickets, one JSON object per line: {"input_ids": [...], "label": 3}."""

    def __init__(self, path: str, max_len: int):
        with open(path) as f:
            self.rows = [json.loads(line) for line in f]
        self.max_len = max_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        ids = self.rows[i]["input_ids"][: self.max_len]
        padded = ids + [0] * (self.max_len - len(ids))
        mask = [1] * len(ids) + [0] * (self.max_len - len(ids))
        return torch.tensor(padded), torch.tensor(mask), torch.tensor(self.rows[i]["label"])


def build_optimizer(model, args):
    params = [p for p in model.parameters() if p.requires_grad]
    if args.optim == "adam8bit":
        import bitsandbytes as bnb

        return bnb.optim.AdamW8bit(params, lr=args.lr, weight_decay=0.01)
    if FusedAdam is not None:
        return FusedAdam(params, lr=args.lr, weight_decay=0.01, adam_w_mode=True)
    return torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01, fused=True)


def class_statistics(labels: torch.Tensor, num_classes: int) -> dict:
    present = torch.unique(labels)
    counts = torch.bincount(labels, minlength=num_classes)
    return {"present": present.tolist(), "counts": counts.tolist()}


@torch.no_grad()
def evaluate(model, loader, num_classes: int) -> dict:
    model.eval()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    confusion = torch.zeros(num_classes, num_classes, dtype=torch.float64, device=device)
    median_confidence, batches = torch.zeros((), device=device), 0
    for input_ids, mask, labels in loader:
        input_ids, mask, labels = input_ids.to(device), mask.to(device), labels.to(device)
        probs = model(input_ids, mask).softmax(dim=-1)
        preds = probs.argmax(dim=-1)
        # a robust calibration summary: half the batch's predictions are at least this sure
        median_confidence += torch.median(probs.amax(dim=-1))
        batches += 1
        confusion.index_put_((labels, preds), torch.ones_like(labels, dtype=torch.float64),
                             accumulate=True)
    dist.all_reduce(confusion)
    per_class_recall = confusion.diag() / confusion.sum(dim=1).clamp(min=1)
    model.train()
    return {"accuracy": (confusion.diag().sum() / confusion.sum()).item(),
            "macro_recall": per_class_recall.mean().item(),
            "median_confidence": (median_confidence / max(batches, 1)).item()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", default="data/train.jsonl")
    parser.add_argument("--valid", default="data/valid.jsonl")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--optim", choices=["adam", "adam8bit"], default="adam")
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--config", default=None, help="ignored; kept for launch.sh")
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(local_rank)
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    cfg = ClassifierConfig()
    model = TicketClassifier(cfg)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model.cuda()
    model = DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank)

    train_set = TicketDataset(args.train, cfg.max_len)
    sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler,
                        num_workers=8, pin_memory=True, drop_last=True)
    valid_loader = DataLoader(TicketDataset(args.valid, cfg.max_len),
                              batch_size=args.batch_size, num_workers=4, pin_memory=True)
    if dist.get_rank() == 0:
        labels = torch.tensor([row["label"] for row in train_set.rows])
        print("class stats:", class_statistics(labels, cfg.num_classes))

    optimizer = build_optimizer(model, args)
    scaler = amp.GradScaler(enabled=args.fp16)
    amp_dtype = torch.float16 if args.fp16 else pick_amp_dtype()

    step = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for input_ids, mask, labels in loader:
            input_ids = input_ids.cuda(non_blocking=True)
            mask = mask.cuda(non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            try:
                with torch.autocast("cuda", dtype=amp_dtype):
                    loss = F.cross_entropy(model(input_ids, mask), labels)
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
            except torch.cuda.OutOfMemoryError:
                # A few very long tickets blow up memory; skip the batch instead of dying.
                print(f"[rank {local_rank}] OOM at step {step}, skipping batch")
                torch.cuda.empty_cache()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            if step % 50 == 0 and dist.get_rank() == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        end.record()
        torch.cuda.synchronize()
        if dist.get_rank() == 0:
            peak_gib = torch.cuda.max_memory_allocated() / 2**30
            print(f"epoch {epoch}: {start.elapsed_time(end) / 1000:.1f}s, peak {peak_gib:.1f} GiB")
            log_gpu_memory()
        metrics = evaluate(model, valid_loader, cfg.num_classes)
        if dist.get_rank() == 0:
            print(f"epoch {epoch} valid {metrics}")
            torch.save(model.module.state_dict(), f"checkpoints/epoch{epoch}.pt")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
