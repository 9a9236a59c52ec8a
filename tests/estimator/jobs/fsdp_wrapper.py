# FSDP: FULL_SHARD read from the wrapper (SHARD_GRAD_OP would keep every parameter on each device).
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import ShardingStrategy
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("meta-llama/Meta-Llama-3-8B")  # read: model=meta-llama/Meta-Llama-3-8B
model.gradient_checkpointing_enable()  # read: gradient_checkpointing=true
model = FSDP(model, sharding_strategy=ShardingStrategy.FULL_SHARD)  # read: sharding=fsdp
opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)  # read: optimizer_impl=fused


def train(loader):
    for batch in loader:  # entry: training-loop
        with torch.autocast("cuda", dtype=torch.bfloat16):  # read: precision=amp-bf16
            loss = model(**batch).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
# verdict: 8xa100-80gb FITS
