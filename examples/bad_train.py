"""Train a small MLP classifier on synthetic data, optionally with DDP.

This version runs, and its loss curve even looks plausible, but it wastes memory and GPU
time and learns the wrong thing. Run `preflight check examples/bad_train.py` to see why;
`good_train.py` is the same script written correctly.
"""
import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


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


def make_loaders(batch_size=64):
    generator = torch.Generator().manual_seed(0)
    features = torch.randn(2560, 32, generator=generator)
    labels = torch.randint(0, 10, (2560,), generator=generator)
    order = np.random.permutation(2560)
    features, labels = features[order], labels[order]
    train_set = TensorDataset(features[:2048], labels[:2048])
    val_set = TensorDataset(features[2048:], labels[2048:])
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=batch_size, num_workers=2, pin_memory=True)
    return train_loader, val_loader


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
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if distributed:
        dist.init_process_group("nccl")
    train_loader, val_loader = make_loaders()
    model = SmallNet().to(device)
    if distributed:
        model = DDP(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    history = []
    model.train()
    for epoch in range(epochs):
        for step, (xb, yb) in enumerate(train_loader):
            xb, yb = xb.to(device), yb.to(device)
            class_weights = torch.tensor([1.0] * 10).to(device)
            logits, aux = model(xb)
            probs = F.softmax(logits, dim=1)
            loss = F.cross_entropy(probs, yb, weight=class_weights)
            loss = loss + F.binary_cross_entropy_with_logits(torch.sigmoid(aux), (yb > 4).float())
            loss.backward()
            if (step + 1) % accumulation_steps == 0:
                optimizer.step()
            history.append(loss)
            for i in range(len(yb)):
                if logits[i].argmax().item() != yb[i].item():
                    break
        accuracy = evaluate(model, val_loader, device)
        print(f"epoch {epoch}: last loss {history[-1]:.4f}, val accuracy {accuracy:.3f}")
    return model, history


def main():
    model, history = train()
    print(f"trained {sum(p.numel() for p in model.parameters())} parameters")
    print(f"{len(history)} steps")


if __name__ == "__main__":
    main()
