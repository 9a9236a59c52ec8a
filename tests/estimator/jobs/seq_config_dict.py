# An alpaca-lora-style config dict: `cutoff_len` is the tokenizer's truncation length.
import torch
from transformers import AutoModelForCausalLM

CONFIG = {"model": "gpt2", "cutoff_len": 256, "micro_batch_size": 4}  # read: seq_len=256

model = AutoModelForCausalLM.from_pretrained("gpt2")  # read: model=gpt2
opt = torch.optim.AdamW(model.parameters())
for batch in batches:  # entry: training-loop
    model(**batch).loss.backward()
    opt.step()
