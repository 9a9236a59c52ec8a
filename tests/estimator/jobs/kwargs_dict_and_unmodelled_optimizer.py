# pytorch/examples style: loader keywords in a dict handed over as **kwargs; Adadelta has no
# state model here, so the optimizer is unknown (not silently AdamW).
import argparse

import torch
import torch.nn as nn
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=64)  # read: batch_size=64
    args = parser.parse_args()
    train_kwargs = {"batch_size": args.batch_size}
    train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
    model = Net().to("cuda")  # read: params=1181066
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)  # unknown: optimizer
    for epoch in range(1, 15):  # entry: training-loop
        for data, target in train_loader:
            optimizer.zero_grad()
            nn.functional.nll_loss(model(data), target).backward()
            optimizer.step()
