"""What audit L (docs/audits/audit-l.md) judged wrong, each with a probe that fails on the
commit it audited (b86cc21) and a look-alike that must keep its finding."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from tpucheck.engine import ScanOptions, scan
from tpucheck.ruleset import load_ruleset

RULESET = load_ruleset()


def found(root: Path, path: str, code: str, rules: tuple[str, ...]) -> list[tuple[str, int, int, str]]:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(dedent(code), encoding="utf-8")
    result = scan(str(root), RULESET, ScanOptions(jobs=1, use_cache=False))
    return sorted((f.rule, f.span.line, f.span.column, f.severity) for f in result.findings if f.rule in rules)


def test_an_autocast_turned_off_names_no_device(tmp_path: Path) -> None:
    code = """\
        import torch

        def quantize(x, use_amp):
            with torch.autocast("cuda", enabled=False):
                x = x.float()
            with torch.amp.autocast(device_type="cuda", enabled=False):
                x = x.float()
            with torch.autocast("cuda", enabled=use_amp):
                x = x.float()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return x
        """
    # adversarial: an autocast an expression may turn on, or one always on, keeps its device
    assert found(tmp_path, "pkg/vq.py", code, ("CA003", "CA014")) == [
        ("CA014", 8, 10, "major"),
        ("CA014", 10, 10, "major"),
    ]


def test_a_gpu_only_trainer_optimizer_is_a_known_one_word_edit(tmp_path: Path) -> None:
    code = """\
        from transformers import Trainer, TrainingArguments

        args = TrainingArguments(output_dir="out", optim="paged_adamw_32bit")
        plain = TrainingArguments(output_dir="out", optim="adamw_torch")
        Trainer(model=model, args=args).train()
        """
    assert found(tmp_path, "train.py", code, ("HF005",)) == [("HF005", 3, 44, "major")]


def test_a_public_apis_count_of_cuda_devices_guards_as_the_count_does(tmp_path: Path) -> None:
    # TrainingArguments.n_gpu is torch.cuda.device_count(): 0 on a TPU host
    code = """\
        import torch

        def wrap(self, model):
            if self.args.n_gpu > 1:
                model = torch.nn.DataParallel(model)
            if self.args.world_size > 1:
                model = torch.nn.DataParallel(model)
            return model
        """
    # adversarial: a world size is no count of CUDA devices
    # (guarded, DataParallel is a note: score.guarded.info, audit W)
    assert found(tmp_path, "pkg/trainer.py", code, ("CA019",)) == [("CA019", 5, 17, "info"), ("CA019", 7, 17, "major")]
