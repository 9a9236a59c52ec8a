# SGD with momentum from a constant, foreach=False; an fp16 autocast without a dtype.
import torch
import torchvision
from torch.utils.data import DataLoader

MOMENTUM = 0.9
model = torchvision.models.vgg16().cuda()  # read: model=vgg16
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=MOMENTUM, foreach=False)  # read: optimizer=sgd-momentum; read: optimizer_impl=for-loop
loader = DataLoader(ds, batch_size=64)  # read: batch_size=64

for x, y in loader:  # entry: training-loop
    with torch.autocast("cuda"):  # read: precision=amp-fp16
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    loss.backward()
    opt.step()
    opt.zero_grad()
