"""The file each editor test opens: one retained graph (TG001) with a safe `.detach()` fix,
after UTF-16 surrogate pairs on the same line, so every client's column arithmetic is exercised."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train(model: nn.Module, loader, optimizer):
    torch.manual_seed(0)
    model.train()
    losses = []
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
        print("step é 日本 😀"); losses.append(loss)  # multi-byte text before the finding
    print(f"mean loss {sum(l.item() for l in losses) / len(losses):.4f}")
