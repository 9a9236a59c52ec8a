# Found by fuzz_analysis: TG002's fix put `import torch` at the end of the imports, which
# follow the function, so its edits were unsorted and the decorator ran before the import.
def inference(accelerator, base, loader):
    wrapped = accelerator.prepare(base)
    for batch in loader:
        out = wrapped(batch)
from torch.utils.data import DataLoader
