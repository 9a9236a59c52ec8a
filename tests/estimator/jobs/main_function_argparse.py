# Everything inside main(): argparse defaults, a constant learning rate, the loop in main.
import argparse

import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name", default="gpt2-medium")  # read: model=gpt2-medium
    p.add_argument("--bs", dest="batch_size", type=int, default=24)  # read: batch_size=24
    return p


def main():
    args = parse().parse_args()
    model = AutoModelForCausalLM.from_pretrained(args.model_name).cuda()
    loader = DataLoader(data, batch_size=args.batch_size)
    opt = torch.optim.Adam(model.parameters())  # read: optimizer=adam
    for batch in loader:  # entry: training-loop
        model(**batch).loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
