# transformers' older spelling of FlashAttention-2 on the loading call.
import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("gpt2", use_flash_attention_2=True)  # read: model=gpt2; read: attention=flash
opt = torch.optim.AdamW(model.parameters())
for batch in batches:  # entry: training-loop
    model(**batch).loss.backward()
    opt.step()
