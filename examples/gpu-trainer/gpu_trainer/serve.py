"""Serving: the classifier routes a ticket, then a generator drafts a reply for the agent."""

import deepspeed
import torch
import xformers.ops as xops
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    BitsAndBytesConfig,
    pipeline,
)

from gpu_trainer.model import ClassifierConfig, TicketClassifier

GENERATOR = "our-org/reply-drafter-7b"


def load_generator(name: str = GENERATOR, quantize: bool = False):
    tokenizer = AutoTokenizer.from_pretrained(name)
    if quantize:
        # 4-bit for the smaller L4 boxes in the staging pool.
        bnb_config = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_compute_dtype=torch.float16,
            bnb_4bit_use_double_quant=True,
        )
        model = AutoModelForCausalLM.from_pretrained(
            name, device_map="cuda", quantization_config=bnb_config
        )
    else:
        model = AutoModelForCausalLM.from_pretrained(
            name,
            device_map="cuda",
            torch_dtype=torch.float16,
            attn_implementation="flash_attention_2",
        )
    return tokenizer, model


def build_reply_pipeline(name: str = GENERATOR):
    tokenizer, model = load_generator(name)
    return pipeline("text-generation", model=model, tokenizer=tokenizer, device=0)


def load_generator_deepspeed(name: str = GENERATOR, world_size: int = 2):
    """Tensor-parallel generator for the production pool (2 GPUs per replica)."""
    model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.float16)
    engine = deepspeed.init_inference(
        model,
        tensor_parallel={"tp_size": world_size},
        dtype=torch.float16,
        replace_with_kernel_inject=True,
    )
    return engine.module


def memory_efficient_attention(q, k, v):
    """Used by the retrieval re-ranker: (batch, seq, heads, dim) in, same out."""
    return xops.memory_efficient_attention(q, k, v, attn_bias=xops.LowerTriangularMask())


class TicketRouter:
    def __init__(self, checkpoint: str):
        self.model = TicketClassifier(ClassifierConfig())
        self.model.load_state_dict(torch.load(checkpoint, map_location="cuda:0"))
        self.model = self.model.half().to("cuda:0").eval()
        self.drafter = build_reply_pipeline()

    @torch.inference_mode()
    def handle(self, input_ids: torch.Tensor, text: str) -> dict:
        input_ids = input_ids.unsqueeze(0).to("cuda:0", non_blocking=True)
        logits, scores, positions = self.model(
            input_ids, torch.ones_like(input_ids), return_token_scores=True
        )
        queue = int(logits.argmax(-1).item())
        draft = self.drafter(text, max_new_tokens=200, do_sample=False)[0]["generated_text"]
        return {"queue": queue, "draft": draft, "highlights": positions[:, 1].tolist()}
