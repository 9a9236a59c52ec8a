# run_clm-style: the block size the script packs its texts into is an argparse default; the
# model's maximum position (131,072 for Qwen2.5) is only the interval's top.
import argparse

import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM

parser = argparse.ArgumentParser()
parser.add_argument("--max_length", type=int, default=4096)
parser.add_argument("--block_size", type=int, default=512)  # read: seq_len=512
args = parser.parse_args()

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-1.5B")  # read: model=Qwen/Qwen2.5-1.5B
opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
loader = DataLoader(group_texts(raw, args.block_size), batch_size=4)  # read: batch_size=4
for batch in loader:  # entry: training-loop
    model(**batch).loss.backward()
    opt.step()
    opt.zero_grad()
