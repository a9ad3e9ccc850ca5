#!/usr/bin/env python3
"""Records a CPU-only PyTorch trace with Debian's python3-torch (1.13, no
Kineto) of a small MLP trained for three steps on batches drawn from a
torch.utils.data.DataLoader (num_workers=0, a dataset that sleeps 2 ms an
item: a data-loading-bound loop). The DataLoader's iterator records itself
as "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__". Each step
is inside record_function("ProfilerStep#N"), as torch.profiler names them;
exported with export_chrome_trace.

    record_dataloader_trace.py OUT_DIR
"""
import os
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
torch.set_num_threads(1)
out = sys.argv[1]


class SlowDataset(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        time.sleep(0.002)  # reading and decoding a sample
        return torch.randn(32), i % 10


model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
loader = DataLoader(SlowDataset(), batch_size=8, num_workers=0)
with torch.autograd.profiler.profile(record_shapes=True) as prof:
    batches = iter(loader)
    for step in range(3):
        with torch.autograd.profiler.record_function(f"ProfilerStep#{step}"):
            x, y = next(batches)
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
prof.export_chrome_trace(os.path.join(out, "mlp_dataloader_3steps_torch1.13.json"))
