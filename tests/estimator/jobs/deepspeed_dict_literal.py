# DeepSpeed with its config as a dict literal in the script: the reader folds it (a module
# constant for the stage) and hands its values to the core; "auto" stays unknown.
import deepspeed
from transformers import AutoModelForCausalLM

STAGE = 3
model = AutoModelForCausalLM.from_pretrained("gpt2")  # read: model=gpt2
zero = {"stage": STAGE, "offload_optimizer": {"device": "cpu"}}
ds_config = {"zero_optimization": zero, "bf16": {"enabled": True}, "train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": "auto"}  # read: sharding=zero-3; read: offload_optimizer=true; read: precision=fp16-master; read: batch_size=8; unknown: accumulation_steps
engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)

for batch in loader:  # entry: training-loop
    loss = engine(**batch).loss
    engine.backward(loss)
    engine.step()
