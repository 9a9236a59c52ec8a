# 8-bit loading for generation; a greedy decode to max_length.
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-13b-hf", load_in_8bit=True, device_map="auto")  # read: quantization=int8


def complete(ids):
    return model.generate(input_ids=ids, max_length=2048)  # entry: generation; read: max_context=2048
# verdict: a100-40gb FITS
# verdict: t4 CERTAIN_OOM
