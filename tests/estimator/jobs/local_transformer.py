# A local GPT: its parameter count from literal shapes across the class tree — an embedding,
# blocks stacked by a comprehension, a block built from constructor arguments, a final norm.
import torch
import torch.nn as nn

VOCAB = 50304
DIM = 768
LAYERS = 12


class Block(nn.Module):
    def __init__(self, dim, hidden_mult=4):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 12, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden_mult * dim), nn.GELU(), nn.Linear(hidden_mult * dim, dim))
        self.dropout_p = 0.1


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.zeros(1, 1024, DIM))
        self.blocks = nn.ModuleList([Block(DIM) for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)


model = GPT().cuda()  # read: params=163109376
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)

for x, y in loader:  # entry: training-loop
    loss = nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
    loss.backward()
    opt.step()
    opt.zero_grad()
