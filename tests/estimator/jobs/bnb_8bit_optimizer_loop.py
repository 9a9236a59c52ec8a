# A plain loop with bitsandbytes' 8-bit AdamW and gradient checkpointing via torch.utils.checkpoint.
import bitsandbytes as bnb
import torch
from torch.utils.checkpoint import checkpoint
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-1.5B", torch_dtype=torch.bfloat16)  # read: model=Qwen/Qwen2.5-1.5B; read: precision=pure-bf16
opt = bnb.optim.AdamW8bit(model.parameters(), lr=1e-5)  # read: optimizer=adamw-8bit


def step(batch):
    return checkpoint(model, **batch, use_reentrant=False).loss  # read: gradient_checkpointing=true


def train(loader):
    for batch in loader:  # entry: training-loop
        step(batch).backward()
        opt.step()
        opt.zero_grad()
