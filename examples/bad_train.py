"""Train a small MLP classifier on synthetic data.

This version runs, and its loss curve even looks plausible, but it wastes memory and
learns the wrong thing. Run `preflight check examples/bad_train.py` to see why.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class SmallNet(nn.Module):
    def __init__(self, in_features=32, hidden=64, classes=10):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.dropout = nn.Dropout(0.1)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc2(self.dropout(F.relu(self.fc1(x))))


def make_loaders(batch_size=64):
    generator = torch.Generator().manual_seed(0)
    features = torch.randn(2560, 32, generator=generator)
    labels = torch.randint(0, 10, (2560,), generator=generator)
    train_set = TensorDataset(features[:2048], labels[:2048])
    val_set = TensorDataset(features[2048:], labels[2048:])
    train_loader = DataLoader(
        train_set, batch_size=batch_size, shuffle=True, num_workers=2, pin_memory=True
    )
    val_loader = DataLoader(val_set, batch_size=batch_size, num_workers=2, pin_memory=True)
    return train_loader, val_loader


def evaluate(model, loader, device):
    model.eval()
    correct, seen = 0, 0
    for xb, yb in loader:
        xb, yb = xb.to(device), yb.to(device)
        logits = model(xb)
        correct += (logits.argmax(dim=1) == yb).sum().item()
        seen += yb.size(0)
    return correct / seen


def train(epochs=5, lr=1e-3):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader, val_loader = make_loaders()
    model = SmallNet().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    history = []
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_loader:
            xb, yb = xb.to(device), yb.to(device)
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
            history.append(loss)
        accuracy = evaluate(model, val_loader, device)
        print(f"epoch {epoch}: last loss {history[-1]:.4f}, val accuracy {accuracy:.3f}")
    return model, history


def main():
    model, history = train()
    print(f"trained {sum(p.numel() for p in model.parameters())} parameters")
    print(f"{len(history)} steps")


if __name__ == "__main__":
    main()
