#!/usr/bin/env python3
"""PyTorch's side of bench/resnet50_vs_torch.sh: the same ResNet-50 training
step (torchvision.models.resnet50, softmax cross-entropy, SGD with momentum,
fp32) and inference, timed the same way as `opscope bench resnet50`: warm-up
iterations excluded, the median of the measured ones. Prints one JSON line."""
import argparse
import json
import statistics
import time

import torch
import torchvision


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--image-size", type=int, default=224)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = torchvision.models.resnet50()
    images = torch.randn(args.batch, 3, args.image_size, args.image_size)
    labels = torch.randint(0, 1000, (args.batch,))
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(), "batch": args.batch,
           "parameters": sum(p.numel() for p in model.parameters())}

    model.train()
    times = []
    for i in range(args.warmup + args.iters):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        elapsed = time.perf_counter() - start
        if i >= args.warmup:
            times.append(elapsed * 1e3)
    out["train_step_ms"] = statistics.median(times)
    out["train_loss"] = float(loss)

    model.eval()
    times = []
    with torch.no_grad():
        for i in range(args.warmup + args.iters):
            start = time.perf_counter()
            model(images)
            elapsed = time.perf_counter() - start
            if i >= args.warmup:
                times.append(elapsed * 1e3)
    out["infer_ms"] = statistics.median(times)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
