#!/usr/bin/env python3
"""Records CPU-only PyTorch traces with planted problems for the diagnosis
tests (issue 36, build item 5), with Debian's python3-torch (1.13, no
Kineto): four steps each under torch.autograd.profiler.profile(
record_shapes=True), each step inside record_function("ProfilerStep#N") as
torch.profiler names them, exported with export_chrome_trace and gzipped.

- planted_tiny_ops: each step a Python loop of 400 iterations over a
  4-element tensor (y * 1.0001 + 0.0001): 800 operators a step of a few
  microseconds each; the framework's cost per call is the work.
- planted_lazy_first_step: step 0 builds an 8-layer MLP and its Adam
  optimizer and initialises the weights orthogonally (QR decompositions);
  steps 1-3 train it: a one-off first step before steady ones.
- planted_no_steps: ten training iterations of a 2-layer MLP (SGD) with no
  step annotation at all: the steps are the iterations the loop ran, to be
  inferred from the operators it calls each time.
- planted_loader_workers: six steps of a linear model on batches from a
  DataLoader with two worker processes (num_workers=2) whose dataset sleeps
  4 ms an item (16 items a batch): the workers cannot keep up; the
  prefetched batches hide it for a few steps, then a step waits for its
  batch.
- planted_batch1_inference: five steps of batch-1 inference (torch.no_grad)
  through 24 blocks of Linear, LayerNorm and GELU on 64 features, five
  passes a step: hundreds of calls of a few microseconds with the Python
  between them.

    record_planted_traces.py OUT_DIR
"""
import gzip
import os
import shutil
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
torch.set_num_threads(1)
out = sys.argv[1]


def record(name, body, steps=4, annotate=True):
    with torch.autograd.profiler.profile(record_shapes=True) as prof:
        for step in range(steps):
            if annotate:
                with torch.autograd.profiler.record_function(f"ProfilerStep#{step}"):
                    body(step)
            else:
                body(step)
    path = os.path.join(out, name)
    prof.export_chrome_trace(path)
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(path)


x = torch.randn(4)


def tiny(step):
    y = x
    for _ in range(400):
        y = y * 1.0001 + 0.0001


record("planted_tiny_ops_torch1.13.json", tiny)

state = {}


def lazy(step):
    if step == 0:
        state["m"] = nn.Sequential(*[nn.Linear(256, 256) for _ in range(8)])
        state["opt"] = torch.optim.Adam(state["m"].parameters())
        for p in state["m"].parameters():
            if p.dim() == 2:
                nn.init.orthogonal_(p)
    m, opt = state["m"], state["opt"]
    opt.zero_grad()
    m(torch.randn(32, 256)).sum().backward()
    opt.step()


record("planted_lazy_first_step_torch1.13.json", lazy)

mlp = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
sgd = torch.optim.SGD(mlp.parameters(), lr=0.01)


def iteration(step):
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    sgd.zero_grad()
    nn.functional.cross_entropy(mlp(x), y).backward()
    sgd.step()


record("planted_no_steps_torch1.13.json", iteration, steps=10, annotate=False)


class SlowItems(Dataset):
    def __len__(self):
        return 400

    def __getitem__(self, i):
        time.sleep(0.004)  # reading and decoding a sample
        return torch.randn(256), i % 10


linear = nn.Linear(256, 10)
linear_sgd = torch.optim.SGD(linear.parameters(), lr=0.01)


def main():
    batches = iter(DataLoader(SlowItems(), batch_size=16, num_workers=2))

    def loader_step(step):
        x, y = next(batches)
        linear_sgd.zero_grad()
        nn.functional.cross_entropy(linear(x), y).backward()
        linear_sgd.step()

    record("planted_loader_workers_torch1.13.json", loader_step, steps=6)

    net = nn.Sequential(*[nn.Sequential(nn.Linear(64, 64), nn.LayerNorm(64), nn.GELU())
                          for _ in range(24)]).eval()
    one = torch.randn(1, 64)

    def inference(step):
        with torch.no_grad():
            for _ in range(5):
                net(one)

    record("planted_batch1_inference_torch1.13.json", inference, steps=5)


if __name__ == "__main__":  # the DataLoader's workers import this file
    main()
