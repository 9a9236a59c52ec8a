# DeepSpeed config named by an argparse default and passed to TrainingArguments: the reader
# names the file for the caller to read (deepspeed_file = ds_zero3.json).
import argparse

from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

parser = argparse.ArgumentParser()
parser.add_argument("--deepspeed", type=str, default="ds_zero3.json")
args = parser.parse_args()
model = AutoModelForCausalLM.from_pretrained("gpt2")  # read: model=gpt2
targs = TrainingArguments("out", per_device_train_batch_size=2, deepspeed=args.deepspeed)  # read: batch_size=2
Trainer(model=model, args=targs, train_dataset=ds).train()  # entry: hf-trainer
