# DeepSpeed through TrainingArguments with a JSON file: the pure reader names the file
# (ScriptJob::deepspeed_file) and the CLI / language server read it next to the script
# (ds_zero3.json: ZeRO-3, parameters offloaded; estimate_command_test checks what it applies).
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("mistralai/Mistral-7B-v0.1")  # read: model=mistralai/Mistral-7B-v0.1
args = TrainingArguments(
    "out",
    per_device_train_batch_size=1,  # read: batch_size=1
    bf16=True,  # read: precision=amp-bf16
    deepspeed="ds_zero3.json",  # check-default: sharding
)
Trainer(model=model, args=args, train_dataset=ds).train()  # entry: hf-trainer
