import pytest
import torch

from gpu_trainer.model import ClassifierConfig, TicketClassifier

requires_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def small_config() -> ClassifierConfig:
    return ClassifierConfig(vocab_size=100, hidden=64, heads=4, layers=2, max_len=32)


@requires_gpu
def test_forward_shapes_fp16():
    device = torch.device("cuda")
    cfg = small_config()
    model = TicketClassifier(cfg).to(device).half()
    ids = torch.randint(0, cfg.vocab_size, (3, cfg.max_len), device=device)
    mask = torch.ones_like(ids)
    mask[0, 20:] = 0
    logits = model(ids, mask)
    assert logits.shape == (3, cfg.num_classes)
    assert torch.isfinite(logits).all()


@requires_gpu
def test_token_scores_cover_real_tokens_only():
    device = torch.device("cuda")
    cfg = small_config()
    model = TicketClassifier(cfg).to(device).half().eval()
    ids = torch.randint(0, cfg.vocab_size, (2, cfg.max_len), device=device)
    mask = torch.ones_like(ids)
    mask[1, 10:] = 0
    _, scores, positions = model(ids, mask, return_token_scores=True)
    assert scores.shape[0] == positions.shape[0] == cfg.max_len + 10
