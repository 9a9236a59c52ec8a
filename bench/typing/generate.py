#!/usr/bin/env python3
"""Generates the three training-file shapes the typing bench (type_client.py) edits.

  script   ~5,000 lines: a training script of top-level functions (loaders, models, losses,
           optimizers, evaluation and logging helpers) with 20+ training functions, each with
           its own loop (zero_grad / forward / loss / backward / step) and a main() at the end.
  trainer  ~3,000 lines: one Trainer class (state on self, setup / training / evaluation /
           checkpoint / logging methods) and a few module-level lines around it.
  helpers  the file preflight_lsp_bench generates (bench/lsp_bench.cpp, generated_file(): 250
           helpers and one training loop), plus the marker line the client types after.

Deterministic: the only randomness is random.Random(SEED), so the same command writes the same
bytes. Python standard library only.

  python3 bench/typing/generate.py OUTDIR        # writes OUTDIR/{script,trainer,helpers}.py
"""
import os
import random
import sys

SEED = 24

# Where type_client.py types: the generator puts this marker comment on the line after which
# the typing happens (inside a training loop), so the client does not have to guess.
MARK = "# <typing here>"

DATASETS = ["cifar", "mnist", "imagenet", "text", "audio", "tabular", "pets", "flowers", "coco", "squad"]
ACTS = ["nn.ReLU()", "nn.GELU()", "nn.SiLU()", "nn.Tanh()", "nn.LeakyReLU(0.1)"]
OPTIMS = ["torch.optim.AdamW", "torch.optim.SGD", "torch.optim.Adam", "torch.optim.RMSprop"]
LOSSES = ["nn.CrossEntropyLoss()", "nn.MSELoss()", "nn.BCEWithLogitsLoss()", "nn.SmoothL1Loss()"]

HEADER = """\
\"\"\"Training experiments: data, models, losses, optimisers and the training loops that use them.\"\"\"
import argparse
import json
import logging
import math
import os
import random
import time
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, TensorDataset

logger = logging.getLogger(__name__)

DEFAULT_SEED = 1234
CHECKPOINT_DIR = os.environ.get("CHECKPOINT_DIR", "checkpoints")
LOG_EVERY = 50

"""


def dataset_block(name, rng):
    n = rng.choice([512, 1024, 2048, 4096])
    d = rng.choice([16, 32, 64, 128])
    k = rng.choice([2, 5, 10, 100])
    return f'''
class {name.capitalize()}Dataset(Dataset):
    """Synthetic stand-in for the {name} data: {n} samples of {d} features, {k} classes."""

    def __init__(self, split="train", size={n}, features={d}, classes={k}, seed=0):
        generator = torch.Generator().manual_seed(seed + (0 if split == "train" else 1))
        self.inputs = torch.randn(size, features, generator=generator)
        self.targets = torch.randint(0, classes, (size,), generator=generator)
        self.split = split

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        x = self.inputs[index]
        if self.split == "train":
            x = x + 0.01 * torch.randn_like(x)
        return x, self.targets[index]


def build_{name}_loaders(batch_size=64, workers=2, seed=0):
    train_set = {name.capitalize()}Dataset("train", seed=seed)
    valid_set = {name.capitalize()}Dataset("valid", seed=seed)
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True, num_workers=workers,
                              pin_memory=True, drop_last=True)
    valid_loader = DataLoader(valid_set, batch_size=batch_size * 2, shuffle=False, num_workers=workers)
    return train_loader, valid_loader

'''


def model_block(i, rng):
    width = rng.choice([64, 128, 256, 512])
    depth = rng.choice([2, 3, 4])
    act = rng.choice(ACTS)
    drop = rng.choice([0.0, 0.1, 0.2])
    return f'''
class Net{i}(nn.Module):
    """A {depth}-block MLP of width {width}."""

    def __init__(self, features, classes, width={width}, depth={depth}, dropout={drop}):
        super().__init__()
        layers = [nn.Linear(features, width), {act}]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), {act}, nn.Dropout(dropout)]
        self.body = nn.Sequential(*layers)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        h = self.body(x)
        h = self.norm(h)
        return self.head(h)

    def num_parameters(self):
        return sum(p.numel() for p in self.parameters() if p.requires_grad)

'''


def loss_block(i, rng):
    smoothing = rng.choice([0.0, 0.05, 0.1])
    return f'''
def loss_fn_{i}(logits, targets, smoothing={smoothing}, reduction="mean"):
    """Cross entropy with label smoothing {smoothing} and an entropy bonus."""
    log_probs = F.log_softmax(logits, dim=-1)
    nll = -log_probs.gather(dim=-1, index=targets.unsqueeze(-1)).squeeze(-1)
    smooth = -log_probs.mean(dim=-1)
    loss = (1.0 - smoothing) * nll + smoothing * smooth
    entropy = -(log_probs.exp() * log_probs).sum(dim=-1)
    loss = loss - 0.001 * entropy
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss

'''


def optimizer_block(i, rng):
    opt = rng.choice(OPTIMS)
    lr = rng.choice(["1e-3", "3e-4", "1e-4", "5e-2"])
    extra = ", momentum=0.9" if opt.endswith("SGD") else ""
    return f'''
def make_optimizer_{i}(model, lr={lr}, weight_decay=0.01, warmup_steps=100, total_steps=10000):
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        (no_decay if param.ndim == 1 or name.endswith(".bias") else decay).append(param)
    groups = [{{"params": decay, "weight_decay": weight_decay}}, {{"params": no_decay, "weight_decay": 0.0}}]
    optimizer = {opt}(groups, lr=lr{extra})

    def schedule(step):
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    return optimizer, scheduler

'''


def eval_block(i, rng):
    return f'''
def evaluate_{i}(model, loader, device, criterion=None):
    """Accuracy and mean loss over `loader`, without gradients."""
    model.eval()
    total, correct, loss_sum = 0, 0, 0.0
    with torch.no_grad():
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            logits = model(inputs)
            if criterion is not None:
                loss_sum += criterion(logits, targets).item() * targets.size(0)
            correct += (logits.argmax(dim=-1) == targets).sum().item()
            total += targets.size(0)
    model.train()
    return {{"accuracy": correct / max(1, total), "loss": loss_sum / max(1, total)}}

'''


def logging_block(i, rng):
    return f'''
def log_metrics_{i}(step, metrics, history=None, prefix="train"):
    line = " ".join(f"{{prefix}}/{{k}}={{v:.4f}}" for k, v in sorted(metrics.items()))
    logger.info("step %d %s", step, line)
    if history is not None:
        for key, value in metrics.items():
            history[f"{{prefix}}/{{key}}"].append((step, float(value)))
    return line


def save_history_{i}(history, path):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as handle:
        json.dump({{k: list(v) for k, v in history.items()}}, handle, indent=2)

'''


def utility_block(i, rng):
    return f'''
def set_seed_{i}(seed=DEFAULT_SEED):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def count_correct_{i}(logits, targets):
    predictions = logits.argmax(dim=-1)
    return int((predictions == targets).sum())


def moving_average_{i}(values, window=20):
    if not values:
        return 0.0
    tail = values[-window:]
    return sum(tail) / len(tail)

'''


def train_block(i, data, groups, rng):
    """A training function with its loop: the shape the issue measured."""
    clip = rng.choice(["1.0", "5.0", "0.5"])
    accum = rng.choice([1, 2, 4])
    epochs = rng.choice([3, 5, 10, 20])
    ev, model, opt, loss, util = (rng.randrange(0, groups) for _ in range(5))
    amp = rng.random() < 0.5
    scaler_init = '    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)\n' if amp else ''
    if amp:
        forward = (
            "            with torch.autocast(device_type=device.type, enabled=use_amp):\n"
            "                logits = model(inputs)\n"
            f"                loss = loss_fn_{loss}(logits, targets) / {accum}\n"
            "            scaler.scale(loss).backward()\n"
            f"            if (step + 1) % {accum} == 0:\n"
            "                scaler.unscale_(optimizer)\n"
            f"                torch.nn.utils.clip_grad_norm_(model.parameters(), {clip})\n"
            "                scaler.step(optimizer)\n"
            "                scaler.update()\n"
            "                optimizer.zero_grad(set_to_none=True)\n"
            "                scheduler.step()\n")
    else:
        forward = (
            "            optimizer.zero_grad()\n"
            "            logits = model(inputs)\n"
            f"            loss = loss_fn_{loss}(logits, targets)\n"
            "            loss.backward()\n"
            f"            torch.nn.utils.clip_grad_norm_(model.parameters(), {clip})\n"
            "            optimizer.step()\n"
            "            scheduler.step()\n")
    return f'''
def train_{data}_{i}(args, device=None, history=None):
    """Experiment {i}: Net{model} on the {data} data, {epochs} epochs."""
    device = device or torch.device("cuda" if torch.cuda.is_available() else "cpu")
    set_seed_{util}(args.seed + {i})
    train_loader, valid_loader = build_{data}_loaders(args.batch_size, args.workers, args.seed)
    model = Net{model}(features=train_loader.dataset.inputs.shape[1], classes=int(train_loader.dataset.targets.max()) + 1)
    model = model.to(device)
    optimizer, scheduler = make_optimizer_{opt}(model, lr=args.lr, total_steps={epochs} * len(train_loader))
    use_amp = {amp} and device.type == "cuda"
{scaler_init}    history = history if history is not None else defaultdict(list)
    best_accuracy, step = 0.0, 0
    running_loss, seen = 0.0, 0
    start = time.time()
    for epoch in range({epochs}):
        model.train()
        for inputs, targets in train_loader:
            inputs = inputs.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
{forward}            running_loss += loss.item() * targets.size(0)
            seen += targets.size(0)
            step += 1
            {MARK if i == 0 else "# next batch"}
            if step % LOG_EVERY == 0:
                lr = scheduler.get_last_lr()[0]
                log_metrics_{util}(step, {{"loss": running_loss / max(1, seen), "lr": lr}}, history)
                running_loss, seen = 0.0, 0
        metrics = evaluate_{ev}(model, valid_loader, device)
        log_metrics_{util}(step, metrics, history, prefix="valid")
        if metrics["accuracy"] > best_accuracy:
            best_accuracy = metrics["accuracy"]
            os.makedirs(CHECKPOINT_DIR, exist_ok=True)
            torch.save({{"model": model.state_dict(), "epoch": epoch, "step": step}},
                       os.path.join(CHECKPOINT_DIR, "{data}_{i}.pt"))
    elapsed = time.time() - start
    logger.info("experiment {i}: best accuracy %.4f in %.1f s", best_accuracy, elapsed)
    save_history_{util}(history, os.path.join(CHECKPOINT_DIR, "{data}_{i}.json"))
    return best_accuracy

'''


def script(rng, loops=24, groups=33):
    parts = [HEADER]
    for name in DATASETS:
        parts.append(dataset_block(name, rng))
    for i in range(groups):
        parts.append(model_block(i, rng))
        parts.append(loss_block(i, rng))
        parts.append(optimizer_block(i, rng))
        parts.append(eval_block(i, rng))
        parts.append(logging_block(i, rng))
        parts.append(utility_block(i, rng))
    names = []
    # The marked loop (i == 0) goes in the middle of the file, as a loop being worked on is.
    order = list(range(1, loops // 2)) + [0] + list(range(loops // 2, loops))
    for i in order:
        data = DATASETS[i % len(DATASETS)]
        names.append(f"train_{data}_{i}")
        parts.append(train_block(i, data, groups, rng))
    parts.append("\nEXPERIMENTS = {\n")
    for n in sorted(names):
        parts.append(f'    "{n}": {n},\n')
    parts.append("}\n\n")
    parts.append('''
def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--experiment", choices=sorted(EXPERIMENTS), default=sorted(EXPERIMENTS)[0])
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    accuracy = EXPERIMENTS[args.experiment](args)
    print(json.dumps({"experiment": args.experiment, "accuracy": accuracy}))


if __name__ == "__main__":
    main()
''')
    return "".join(parts)


# --- trainer: one big class ---------------------------------------------------------------

TRAINER_HEADER = """\
\"\"\"A trainer for sequence classification: one class that owns the model, the data, the
optimisation, evaluation, checkpoints and logging.\"\"\"
import json
import logging
import math
import os
import shutil
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler

logger = logging.getLogger(__name__)


@dataclass
class TrainingArguments:
    output_dir: str = "outputs"
    learning_rate: float = 5e-5
    weight_decay: float = 0.0
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999
    adam_epsilon: float = 1e-8
    max_grad_norm: float = 1.0
    num_train_epochs: int = 3
    warmup_steps: int = 0
    per_device_train_batch_size: int = 8
    per_device_eval_batch_size: int = 8
    gradient_accumulation_steps: int = 1
    logging_steps: int = 500
    eval_steps: int = 500
    save_steps: int = 500
    save_total_limit: Optional[int] = None
    seed: int = 42
    fp16: bool = False
    dataloader_num_workers: int = 0
    report_to: List[str] = field(default_factory=list)


"""


def trainer_methods(rng):
    """The Trainer's methods, in the order a real trainer file keeps them."""
    out = []
    out.append('''
class Trainer:
    """Runs training and evaluation of `model` on the given datasets."""

    def __init__(self, model, args, train_dataset=None, eval_dataset=None, data_collator=None,
                 compute_metrics=None, callbacks=None, optimizers=(None, None)):
        self.model = model
        self.args = args
        self.train_dataset = train_dataset
        self.eval_dataset = eval_dataset
        self.data_collator = data_collator
        self.compute_metrics = compute_metrics
        self.callbacks = list(callbacks or [])
        self.optimizer, self.lr_scheduler = optimizers
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device)
        self.scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)
        self.global_step = 0
        self.epoch = 0.0
        self.total_flos = 0
        self.log_history = []
        self.best_metric = None
        self.best_model_checkpoint = None
        self._loss_scalar = 0.0
        self._logging_loss_scalar = 0.0
        self._last_log_step = 0
        self._train_start = None
        self._saved_checkpoints = []
        self._metrics_cache = {}
        self._set_seed(args.seed)
''')
    out.append('''
    def _set_seed(self, seed):
        np.random.seed(seed)
        torch.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)

    def get_train_dataloader(self):
        if self.train_dataset is None:
            raise ValueError("Trainer: training requires a train_dataset.")
        sampler = RandomSampler(self.train_dataset)
        return DataLoader(self.train_dataset, batch_size=self.args.per_device_train_batch_size,
                          sampler=sampler, collate_fn=self.data_collator,
                          num_workers=self.args.dataloader_num_workers, pin_memory=True, drop_last=True)

    def get_eval_dataloader(self, eval_dataset=None):
        dataset = eval_dataset if eval_dataset is not None else self.eval_dataset
        if dataset is None:
            raise ValueError("Trainer: evaluation requires an eval_dataset.")
        return DataLoader(dataset, batch_size=self.args.per_device_eval_batch_size,
                          sampler=SequentialSampler(dataset), collate_fn=self.data_collator,
                          num_workers=self.args.dataloader_num_workers)

    def create_optimizer(self):
        if self.optimizer is not None:
            return self.optimizer
        decay_parameters = [n for n, p in self.model.named_parameters() if not n.endswith("bias") and "norm" not in n]
        groups = [
            {"params": [p for n, p in self.model.named_parameters() if n in decay_parameters and p.requires_grad],
             "weight_decay": self.args.weight_decay},
            {"params": [p for n, p in self.model.named_parameters() if n not in decay_parameters and p.requires_grad],
             "weight_decay": 0.0},
        ]
        self.optimizer = torch.optim.AdamW(groups, lr=self.args.learning_rate,
                                           betas=(self.args.adam_beta1, self.args.adam_beta2),
                                           eps=self.args.adam_epsilon)
        return self.optimizer

    def create_scheduler(self, num_training_steps):
        if self.lr_scheduler is not None:
            return self.lr_scheduler
        warmup = self.args.warmup_steps

        def lr_lambda(step):
            if step < warmup:
                return float(step) / float(max(1, warmup))
            return max(0.0, float(num_training_steps - step) / float(max(1, num_training_steps - warmup)))

        self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lr_lambda)
        return self.lr_scheduler
''')
    # Many small methods of the kinds a trainer accumulates: callbacks, metrics, state.
    hooks = ["train_begin", "train_end", "epoch_begin", "epoch_end", "step_begin", "step_end",
             "evaluate", "save", "log", "predict", "substep_end", "optimizer_step"]
    for hook in hooks:
        out.append(f'''
    def _call_on_{hook}(self, **kwargs):
        """Calls every callback's on_{hook}; a callback may ask to stop or to log."""
        control = {{"should_stop": False, "should_log": False, "should_save": False}}
        for callback in self.callbacks:
            handler = getattr(callback, "on_{hook}", None)
            if handler is None:
                continue
            result = handler(self.args, self.global_step, control, model=self.model, **kwargs)
            if result:
                control.update(result)
        return control
''')
    metrics = ["accuracy", "f1", "precision", "recall", "perplexity", "loss", "mcc", "auc",
               "top5", "bleu", "rouge", "exact_match", "calibration", "entropy", "margin",
               "latency", "throughput", "tokens", "grad_norm", "lr", "recall_at_k", "ndcg", "wer", "cer",
               "kl", "reward", "clip_fraction", "value_loss"]
    for m in [f"{split}_{m}" for split in ("train", "eval") for m in metrics]:
        window = rng.choice([10, 20, 50, 100])
        out.append(f'''
    def _update_{m}(self, value, step=None):
        """Keeps the last {window} values of {m} and their mean."""
        step = self.global_step if step is None else step
        values = self._metrics_cache.setdefault("{m}", [])
        values.append((step, float(value)))
        if len(values) > {window}:
            del values[: len(values) - {window}]
        mean = sum(v for _, v in values) / len(values)
        self._metrics_cache["{m}_mean"] = [(step, mean)]
        return mean

    def get_{m}_history(self):
        return list(self._metrics_cache.get("{m}", []))
''')
    out.append('''
    def _prepare_inputs(self, inputs):
        prepared = {}
        for key, value in inputs.items():
            if isinstance(value, torch.Tensor):
                prepared[key] = value.to(self.device, non_blocking=True)
            else:
                prepared[key] = value
        return prepared

    def compute_loss(self, model, inputs, return_outputs=False):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        logits = outputs["logits"] if isinstance(outputs, dict) else outputs
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))
        return (loss, outputs) if return_outputs else loss

    def training_step(self, model, inputs):
        model.train()
        inputs = self._prepare_inputs(inputs)
        with torch.autocast(device_type=self.device.type, enabled=self.args.fp16):
            loss = self.compute_loss(model, inputs)
        if self.args.gradient_accumulation_steps > 1:
            loss = loss / self.args.gradient_accumulation_steps
        self.scaler.scale(loss).backward()
        return loss.detach()

    def _clip_and_step(self):
        self.scaler.unscale_(self.optimizer)
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.lr_scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        return float(grad_norm)
''')
    out.append(f'''
    def train(self, resume_from_checkpoint=None):
        """The training loop: epochs of batches, accumulation, clipping, logging, evaluation."""
        train_dataloader = self.get_train_dataloader()
        steps_per_epoch = max(1, len(train_dataloader) // self.args.gradient_accumulation_steps)
        max_steps = math.ceil(self.args.num_train_epochs * steps_per_epoch)
        self.create_optimizer()
        self.create_scheduler(max_steps)
        if resume_from_checkpoint is not None:
            self._load_checkpoint(resume_from_checkpoint)
        self._train_start = time.time()
        self._call_on_train_begin()
        tr_loss = torch.tensor(0.0, device=self.device)
        self.model.zero_grad()
        for epoch in range(int(self.args.num_train_epochs)):
            self._call_on_epoch_begin(epoch=epoch)
            for step, inputs in enumerate(train_dataloader):
                self._call_on_step_begin()
                tr_loss_step = self.training_step(self.model, inputs)
                tr_loss += tr_loss_step
                {MARK}
                if (step + 1) % self.args.gradient_accumulation_steps == 0:
                    grad_norm = self._clip_and_step()
                    self._update_grad_norm(grad_norm)
                    self.global_step += 1
                    self.epoch = epoch + (step + 1) / len(train_dataloader)
                    control = self._call_on_step_end()
                    self._maybe_log_save_evaluate(tr_loss, grad_norm, control)
                    if control["should_stop"]:
                        break
            self._call_on_epoch_end()
            self._maybe_log_save_evaluate(tr_loss, None, {{"should_log": True, "should_save": True}})
        self._call_on_train_end()
        runtime = time.time() - self._train_start
        logger.info("training done in %.1f s, %d steps", runtime, self.global_step)
        return {{"global_step": self.global_step, "training_loss": self._loss_scalar, "runtime": runtime}}

    def _maybe_log_save_evaluate(self, tr_loss, grad_norm, control):
        if control.get("should_log") or self.global_step % self.args.logging_steps == 0:
            tr_loss_scalar = tr_loss.item()
            logs = {{"loss": (tr_loss_scalar - self._logging_loss_scalar) / max(1, self.global_step - self._last_log_step)}}
            if grad_norm is not None:
                logs["grad_norm"] = grad_norm
            logs["learning_rate"] = self.lr_scheduler.get_last_lr()[0]
            self._logging_loss_scalar = tr_loss_scalar
            self._loss_scalar = tr_loss_scalar
            self._last_log_step = self.global_step
            self.log(logs)
        if self.args.eval_steps and self.global_step % self.args.eval_steps == 0 and self.eval_dataset is not None:
            metrics = self.evaluate()
            self._save_best(metrics)
        if control.get("should_save") or (self.args.save_steps and self.global_step % self.args.save_steps == 0):
            self._save_checkpoint()
''')
    out.append('''
    def evaluate(self, eval_dataset=None, metric_key_prefix="eval"):
        dataloader = self.get_eval_dataloader(eval_dataset)
        self.model.eval()
        losses, predictions, labels = [], [], []
        start = time.time()
        for inputs in dataloader:
            inputs = self._prepare_inputs(inputs)
            with torch.no_grad():
                loss, outputs = self.compute_loss(self.model, dict(inputs), return_outputs=True)
            logits = outputs["logits"] if isinstance(outputs, dict) else outputs
            losses.append(loss.item())
            predictions.append(logits.argmax(dim=-1).cpu())
            labels.append(inputs["labels"].cpu())
        self.model.train()
        metrics = {f"{metric_key_prefix}_loss": float(np.mean(losses)) if losses else float("nan")}
        if self.compute_metrics is not None and predictions:
            computed = self.compute_metrics(torch.cat(predictions).numpy(), torch.cat(labels).numpy())
            metrics.update({f"{metric_key_prefix}_{k}": v for k, v in computed.items()})
        metrics[f"{metric_key_prefix}_runtime"] = time.time() - start
        self.log(metrics)
        self._call_on_evaluate(metrics=metrics)
        return metrics

    def predict(self, test_dataset):
        dataloader = self.get_eval_dataloader(test_dataset)
        self.model.eval()
        outputs = []
        with torch.no_grad():
            for inputs in dataloader:
                inputs = self._prepare_inputs(inputs)
                inputs.pop("labels", None)
                logits = self.model(**inputs)
                outputs.append(logits.cpu())
        self.model.train()
        return torch.cat(outputs) if outputs else None

    def log(self, logs):
        logs = dict(logs)
        logs["epoch"] = round(self.epoch, 4)
        logs["step"] = self.global_step
        self.log_history.append(logs)
        logger.info(json.dumps(logs))
        self._call_on_log(logs=logs)

    def _save_best(self, metrics, metric="eval_loss", greater_is_better=False):
        value = metrics.get(metric)
        if value is None:
            return
        better = self.best_metric is None or (value > self.best_metric if greater_is_better else value < self.best_metric)
        if better:
            self.best_metric = value
            self.best_model_checkpoint = os.path.join(self.args.output_dir, f"checkpoint-{self.global_step}")

    def _save_checkpoint(self):
        output_dir = os.path.join(self.args.output_dir, f"checkpoint-{self.global_step}")
        os.makedirs(output_dir, exist_ok=True)
        torch.save(self.model.state_dict(), os.path.join(output_dir, "model.pt"))
        torch.save(self.optimizer.state_dict(), os.path.join(output_dir, "optimizer.pt"))
        torch.save(self.lr_scheduler.state_dict(), os.path.join(output_dir, "scheduler.pt"))
        torch.save(self.scaler.state_dict(), os.path.join(output_dir, "scaler.pt"))
        with open(os.path.join(output_dir, "trainer_state.json"), "w") as handle:
            json.dump({"global_step": self.global_step, "epoch": self.epoch, "log_history": self.log_history,
                       "best_metric": self.best_metric}, handle, indent=2)
        self._saved_checkpoints.append(output_dir)
        self._rotate_checkpoints()
        self._call_on_save(output_dir=output_dir)

    def _rotate_checkpoints(self):
        limit = self.args.save_total_limit
        if limit is None or len(self._saved_checkpoints) <= limit:
            return
        for path in self._saved_checkpoints[: len(self._saved_checkpoints) - limit]:
            if path == self.best_model_checkpoint:
                continue
            shutil.rmtree(path, ignore_errors=True)
        self._saved_checkpoints = self._saved_checkpoints[-limit:]

    def _load_checkpoint(self, path):
        self.model.load_state_dict(torch.load(os.path.join(path, "model.pt"), map_location=self.device))
        if os.path.exists(os.path.join(path, "optimizer.pt")):
            self.optimizer.load_state_dict(torch.load(os.path.join(path, "optimizer.pt")))
        if os.path.exists(os.path.join(path, "scheduler.pt")):
            self.lr_scheduler.load_state_dict(torch.load(os.path.join(path, "scheduler.pt")))
        with open(os.path.join(path, "trainer_state.json")) as handle:
            state = json.load(handle)
        self.global_step = state["global_step"]
        self.epoch = state["epoch"]
        self.log_history = state["log_history"]
        self.best_metric = state.get("best_metric")
''')
    # Utilities of the kinds large trainers grow: per-feature helpers, each a few lines.
    features = ["label_smoothing", "mixup", "cutmix", "ema", "swa", "layer_decay", "freeze",
                "unfreeze", "distill", "prune", "quantize", "profile", "memory", "tokens",
                "padding", "truncation", "bucketing", "curriculum", "reweight", "resample",
                "gradient_noise", "lookahead", "warm_restart", "early_stop", "checkpoint_average",
                "teacher", "student", "adapter", "prompt", "prefix", "lora", "bitfit",
                "dropout_schedule", "temperature", "focal", "dice", "contrastive", "triplet",
                "margin_loss", "center_loss", "r_drop", "sam", "lamb", "adafactor", "zero_redundancy",
                "activation_checkpointing", "cpu_offload", "sequence_packing", "length_grouping",
                "span_masking", "token_dropout", "stochastic_depth", "weight_averaging", "loss_scaling",
                "gradient_centralization", "spectral_norm", "orthogonal_init", "label_noise",
                "hard_negative", "in_batch_negative", "kl_penalty", "entropy_bonus", "value_clip",
                "reward_norm", "advantage_norm", "kd_temperature", "hidden_distill", "attention_distill",
                "tied_embeddings", "vocab_pruning", "dynamic_padding", "bucket_sampler", "epoch_shuffle",
                "data_echo", "replay_buffer", "mixed_precision_bf16", "fused_adam", "grad_sync_skip",
                "pipeline_stage", "tensor_parallel"]
    for f in features:
        scale = rng.choice(["0.1", "0.5", "1.0", "2.0"])
        out.append(f'''
    def enable_{f}(self, scale={scale}, start_step=0):
        """Turns on {f.replace("_", " ")} from `start_step`, with strength `scale`."""
        self._metrics_cache["{f}_config"] = [(start_step, float(scale))]
        logger.info("{f}: enabled at step %d with scale %.3f", start_step, scale)
        return self

    def _{f}_active(self):
        config = self._metrics_cache.get("{f}_config")
        if not config:
            return False
        start_step, scale = config[-1]
        return self.global_step >= start_step and scale > 0

    def _{f}_scale(self, default=1.0):
        config = self._metrics_cache.get("{f}_config")
        if not config:
            return default
        _, scale = config[-1]
        warm = min(1.0, (self.global_step + 1) / 100.0)
        return float(scale) * warm
''')
    return "".join(out)


def trainer(rng):
    return TRAINER_HEADER + trainer_methods(rng) + '''

def main():
    logging.basicConfig(level=logging.INFO)
    args = TrainingArguments()
    model = nn.Sequential(nn.Embedding(1000, 64), nn.Flatten(), nn.Linear(64 * 16, 2))
    trainer = Trainer(model, args)
    print(trainer.args.output_dir)


if __name__ == "__main__":
    main()
'''


# --- helpers: preflight_lsp_bench's generated file ------------------------------------------

def helpers():
    parts = ["import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"]
    for i in range(250):
        parts.append(
            f"def helper_{i}(model, batch, scale=1.0):\n"
            "    x, y = batch\n"
            "    logits = model(x)\n"
            "    loss = F.cross_entropy(logits, y)\n"
            "    total = 0.0\n"
            "    for k in range(4):\n"
            "        total += float(k) * scale\n"
            "    if total > 10:\n"
            "        total = total / 2\n"
            "    stats = {'loss': loss.item(), 'total': total}\n"
            "    values = [v for v in stats.values()]\n"
            "    names = sorted(stats)\n"
            "    message = ' '.join(names)\n"
            "    assert message\n"
            "    result = sum(values)\n"
            "    result = result + 0\n"
            "    return loss, result\n"
            "\n\n\n")
    parts.append(
        "def train(model, loader, optimizer):\n"
        "    losses = []\n"
        "    for xb, yb in loader:\n"
        "        optimizer.zero_grad()\n"
        "        loss = F.cross_entropy(model(xb), yb)\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        f"        {MARK}\n"
        "        losses.append(loss)\n"
        "    return losses\n")
    return "".join(parts)


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: generate.py OUTDIR")
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    shapes = {"script": script(random.Random(SEED)), "trainer": trainer(random.Random(SEED)), "helpers": helpers()}
    for name, text in shapes.items():
        path = os.path.join(out, name + ".py")
        with open(path, "w", newline="\n") as handle:
            handle.write(text)
        print(f"{path}: {text.count(chr(10))} lines, {len(text)} bytes")


if __name__ == "__main__":
    main(sys.argv)
