# A layer whose shape is computed at run time makes the count unknown, with that expression.
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, 10)
        self.extra = nn.Linear(10, config.hidden)


model = Net(128).cuda()  # unknown: params
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:  # entry: training-loop
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    opt.zero_grad()
