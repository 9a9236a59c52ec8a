# DeepSpeed through TrainingArguments with a JSON file: the file is not read (pure core), so
# the sharding is unknown with the expression that names it — never silently "none".
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("mistralai/Mistral-7B-v0.1")  # read: model=mistralai/Mistral-7B-v0.1
args = TrainingArguments(
    "out",
    per_device_train_batch_size=1,  # read: batch_size=1
    bf16=True,  # read: precision=amp-bf16
    deepspeed="ds_zero3.json",  # unknown: sharding
)
Trainer(model=model, args=args, train_dataset=ds).train()  # entry: hf-trainer
