# A step-counted while loop (nanoGPT style) with a block-size constant passed to the model config.
import torch
from transformers import AutoModelForCausalLM

batch_size = 12  # a module constant the script never hands to a loader: not the batch
model = AutoModelForCausalLM.from_pretrained("gpt2").cuda()  # read: model=gpt2
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, fused=True)  # read: optimizer_impl=fused
step = 0
while step < 5000:  # entry: training-loop
    x, y = get_batch("train")
    loss = model(x, labels=y).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    step += 1
# check-default: batch_size
