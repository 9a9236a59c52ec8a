# Only a cap: the tokenizer is loaded with model_max_length; the estimate uses it, and a
# module constant spelled in capitals would count as well.
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("Qwen/Qwen2.5-1.5B", model_max_length=768)  # read: seq_len=768
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-1.5B")  # read: model=Qwen/Qwen2.5-1.5B
opt = torch.optim.AdamW(model.parameters())
for batch in batches:  # entry: training-loop
    model(**batch).loss.backward()
    opt.step()
