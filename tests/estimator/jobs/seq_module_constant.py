# nanoGPT-style module constants: BLOCK_SIZE is the context the model is trained on.
import torch
from transformers import AutoModelForCausalLM

BLOCK_SIZE = 1024 // 4  # read: seq_len=256
model = AutoModelForCausalLM.from_pretrained("gpt2")  # read: model=gpt2
opt = torch.optim.AdamW(model.parameters())
for step in range(100):  # entry: training-loop
    model(get_batch(BLOCK_SIZE)).loss.backward()
    opt.step()
