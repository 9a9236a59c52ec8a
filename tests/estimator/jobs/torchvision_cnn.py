# A torchvision classifier: model from the constructor, image size from the transforms.
import torch
import torchvision.models as models
import torchvision.transforms as T
from torch.utils.data import DataLoader

train_tf = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor()])  # read: image_size=224
net = models.resnet18(num_classes=100).cuda()  # read: model=resnet18
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)  # read: optimizer=sgd
loader = DataLoader(train_set, batch_size=512, shuffle=True, num_workers=8)  # read: batch_size=512

for epoch in range(90):  # entry: training-loop
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(net(x.cuda()), y.cuda()).backward()
        optimizer.step()
# verdict: a100-80gb FITS
