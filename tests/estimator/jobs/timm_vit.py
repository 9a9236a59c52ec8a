# timm.create_model with a literal name, bf16 autocast from torch.amp.
import timm
import torch
from torch.utils.data import DataLoader

model = timm.create_model("vit_base_patch16_224", pretrained=True).cuda()  # read: model=vit_base_patch16_224
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
loader = DataLoader(ds, batch_size=128)  # read: batch_size=128

for images, labels in loader:  # entry: training-loop
    with torch.amp.autocast("cuda", dtype=torch.bfloat16):  # read: precision=amp-bf16
        loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
    loss.backward()
    opt.step()
    opt.zero_grad()
