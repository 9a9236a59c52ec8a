"""Train a small MLP classifier on synthetic data, optionally with DDP.

The same job as bad_train.py, written correctly: `preflight check examples/good_train.py`
reports nothing.
"""
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class SmallNet(nn.Module):
    def __init__(self, in_features=32, hidden=64, classes=10):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.dropout = nn.Dropout(0.1)
        self.fc2 = nn.Linear(hidden, classes)
        self.aux = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.dropout(F.relu(self.fc1(x)))
        return self.fc2(h), self.aux(h).squeeze(1)


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def make_loaders(batch_size=64, distributed=False):
    generator = torch.Generator().manual_seed(0)
    features = torch.randn(2560, 32, generator=generator)
    labels = torch.randint(0, 10, (2560,), generator=generator)
    order = np.random.permutation(2560)
    features, labels = features[order], labels[order]
    train_set = TensorDataset(features[:2048], labels[:2048])
    val_set = TensorDataset(features[2048:], labels[2048:])
    train_sampler = DistributedSampler(train_set) if distributed else None
    val_sampler = DistributedSampler(val_set, shuffle=False) if distributed else None
    train_loader = DataLoader(
        train_set,
        batch_size=batch_size,
        shuffle=train_sampler is None,
        sampler=train_sampler,
        num_workers=2,
        pin_memory=True,
    )
    val_loader = DataLoader(
        val_set, batch_size=batch_size, sampler=val_sampler, num_workers=2, pin_memory=True
    )
    return train_loader, val_loader


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct, seen = 0, 0
    for xb, yb in loader:
        xb, yb = xb.to(device), yb.to(device)
        logits, _ = model(xb)
        correct += (logits.argmax(dim=1) == yb).sum().item()
        seen += yb.size(0)
    return correct / seen


def train(epochs=5, lr=1e-3, accumulation_steps=4, distributed=False):
    seed_everything(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if distributed:
        dist.init_process_group("nccl")
    train_loader, val_loader = make_loaders(distributed=distributed)
    model = SmallNet().to(device)
    if distributed:
        model = DDP(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    class_weights = torch.ones(10, device=device)
    history = []
    for epoch in range(epochs):
        model.train()
        optimizer.zero_grad(set_to_none=True)
        for step, (xb, yb) in enumerate(train_loader):
            xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
            logits, aux = model(xb)
            loss = F.cross_entropy(logits, yb, weight=class_weights)
            loss = loss + F.binary_cross_entropy_with_logits(aux, (yb > 4).float())
            (loss / accumulation_steps).backward()
            if (step + 1) % accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            history.append(loss.item())
        accuracy = evaluate(model, val_loader, device)
        print(f"epoch {epoch}: last loss {history[-1]:.4f}, val accuracy {accuracy:.3f}")
    return model, history


def main():
    model, history = train()
    print(f"trained {sum(p.numel() for p in model.parameters())} parameters")
    print(f"{len(history)} steps")


if __name__ == "__main__":
    main()
