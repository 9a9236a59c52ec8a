# torchvision's registry: `get_model(name)` builds the model its argument names (was read as a
# model called "get_model"); a name chosen at run time is unknown.
import argparse

import torch
import torchvision

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="resnet50")  # read: model=resnet50
parser.add_argument("--other")
args = parser.parse_args()

net = torchvision.models.get_model(args.arch, weights=None).cuda()
teacher = torchvision.models.get_model(args.other)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for x, y in loader:  # entry: training-loop
    torch.nn.functional.cross_entropy(net(x), y).backward()
    optimizer.step()
