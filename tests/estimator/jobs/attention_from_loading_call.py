# The attention implementation is read from the loading call; a value chosen at run time is
# unknown (the interval then spans eager through SDPA), the older flash flag is read too.
import argparse

import torch
from transformers import AutoModelForCausalLM

parser = argparse.ArgumentParser()
parser.add_argument("--attn")
args = parser.parse_args()

model = AutoModelForCausalLM.from_pretrained("gpt2", attn_implementation=args.attn)  # read: model=gpt2; unknown: attention
draft = AutoModelForCausalLM.from_pretrained("gpt2", use_flash_attention_2=True)
opt = torch.optim.AdamW(model.parameters())
for batch in batches:  # entry: training-loop
    model(**batch).loss.backward()
    opt.step()
