#!/usr/bin/env python3
"""Records the CPU-only PyTorch traces in this folder with Debian's
python3-torch (1.13, no Kineto): a small CNN and a small Transformer, three
training steps each under torch.autograd.profiler.profile(record_shapes=True),
each step inside record_function("ProfilerStep#N") as torch.profiler names
them, exported with export_chrome_trace.

    record_cpu_traces.py OUT_DIR
"""
import os
import sys

import torch
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)
out = sys.argv[1]


def record(name, model, make_batch, steps=3):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    with torch.autograd.profiler.profile(record_shapes=True) as prof:
        for step in range(steps):
            with torch.autograd.profiler.record_function(f"ProfilerStep#{step}"):
                x, y = make_batch()
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
    prof.export_chrome_trace(os.path.join(out, name))


cnn = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                    nn.Flatten(), nn.Linear(32, 10))
record("small_cnn_train_3steps_torch1.13.json", cnn,
       lambda: (torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))))


class TinyTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 64)
        layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(64, 100)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens))).mean(dim=1)


record("small_transformer_train_3steps_torch1.13.json", TinyTransformer(),
       lambda: (torch.randint(0, 100, (4, 32)), torch.randint(0, 100, (4,))))
