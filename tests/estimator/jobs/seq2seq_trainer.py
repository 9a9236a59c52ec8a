# Seq2SeqTrainer with Seq2SeqTrainingArguments: Adafactor from `optim=`.
from transformers import AutoModelForSeq2SeqLM, Seq2SeqTrainer, Seq2SeqTrainingArguments

model = AutoModelForSeq2SeqLM.from_pretrained("t5-base")  # read: model=t5-base
args = Seq2SeqTrainingArguments(
    output_dir="t5-out",
    per_device_train_batch_size=16,  # read: batch_size=16
    optim="adafactor",  # read: optimizer=adafactor
    predict_with_generate=True,
)
trainer = Seq2SeqTrainer(model=model, args=args, train_dataset=train)
trainer.train()  # entry: hf-trainer
# verdict: a100-80gb FITS
