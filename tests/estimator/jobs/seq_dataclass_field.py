# The sequence length as a dataclass field default (`field(default=...)`), as the Hugging Face
# example scripts declare their data arguments.
from dataclasses import dataclass, field

from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


@dataclass
class DataArguments:
    dataset: str = "wikitext"
    max_seq_length: int = field(default=2048, metadata={"help": "tokens per sample"})  # read: seq_len=2048


model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-1.5B")  # read: model=Qwen/Qwen2.5-1.5B
args = TrainingArguments("out", per_device_train_batch_size=2)  # read: batch_size=2
Trainer(model=model, args=args, train_dataset=ds).train()  # entry: hf-trainer
