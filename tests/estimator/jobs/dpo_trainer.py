# trl's DPOTrainer with a DPOConfig: the batch from the config, training not inference.
from transformers import AutoModelForCausalLM
from trl import DPOConfig, DPOTrainer

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2-0.5B")  # read: model=Qwen/Qwen2-0.5B
config = DPOConfig(output_dir="dpo", per_device_train_batch_size=8, bf16=True)  # read: batch_size=8; read: precision=amp-bf16
trainer = DPOTrainer(model=model, args=config, train_dataset=pairs)
trainer.train()  # entry: hf-trainer
# check-default: inference_only
