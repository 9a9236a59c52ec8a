"""Fine-tune Llama-2-7B on an instruction dataset with the Hugging Face Trainer.

Written for a single 24 GB card, it would run out of memory at the first backward: a full
fine-tune in bf16 with AdamW needs several times that. See what it needs and what would make
it fit, before renting anything:

    preflight estimate examples/finetune_llm.py --gpu rtx4090
    preflight check examples/finetune_llm.py --target-gpu rtx4090     # TG010
"""
import argparse

import torch
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="meta-llama/Llama-2-7b-hf")
parser.add_argument("--batch-size", type=int, default=4)
parser.add_argument("--max-length", type=int, default=1024)
args = parser.parse_args()

tokenizer = AutoTokenizer.from_pretrained(args.model)
tokenizer.pad_token = tokenizer.eos_token
model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16)


def tokenize(example):
    return tokenizer(example["text"], truncation=True, padding="max_length", max_length=args.max_length)


dataset = load_dataset("tatsu-lab/alpaca", split="train").map(tokenize)

training_args = TrainingArguments(
    output_dir="llama-sft",
    per_device_train_batch_size=args.batch_size,
    gradient_accumulation_steps=8,
    learning_rate=2e-5,
    num_train_epochs=1,
    bf16=True,
    logging_steps=10,
)
trainer = Trainer(model=model, args=training_args, train_dataset=dataset)
trainer.train()
