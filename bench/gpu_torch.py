#!/usr/bin/env python3
"""PyTorch's side of scripts/gpu-check, on the same GPU in the same run.

Each subcommand prints one JSON object. Times come from CUDA events around the
timed region, after warm-up; the figure is the median of the repetitions.
  mm      --dtype bf16 --n 8192          torch.mm, TFLOP/s = 2 n^3 / time
  copy    --bytes 1073741824             b.copy_(a), GB/s = (read + written) / time
  resnet  --batch 8 --iters 20           ResNet-50 fp32 training step (forward,
          [--no-tf32]                    backward, SGD), images per second; eager,
                                         PyTorch's defaults unless --no-tf32
"""
import argparse
import json
import statistics
import sys

import torch


def timed(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times), times


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["mm", "copy", "resnet"])
    p.add_argument("--dtype", default="bf16")
    p.add_argument("--n", type=int, default=8192)
    p.add_argument("--bytes", type=int, default=1 << 30)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--no-tf32", action="store_true",
                   help="strict fp32 convolutions (PyTorch's default lets cuDNN use TF32)")
    a = p.parse_args()
    if a.no_tf32:
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    if not torch.cuda.is_available():
        sys.exit("torch sees no CUDA device")
    dev = torch.device("cuda:0")
    out = {"what": a.what, "torch": torch.__version__, "device": torch.cuda.get_device_name(0)}
    if a.what == "mm":
        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[a.dtype]
        x = torch.randn(a.n, a.n, device=dev, dtype=dtype)
        y = torch.randn(a.n, a.n, device=dev, dtype=dtype)
        ms, _ = timed(lambda: torch.mm(x, y), a.warmup, 50)
        out.update(dtype=a.dtype, n=a.n, median_ms=ms, tflops=2 * a.n ** 3 / (ms / 1e3) / 1e12)
    elif a.what == "copy":
        n = a.bytes // 4
        x = torch.randn(n, device=dev)
        y = torch.empty_like(x)
        ms, _ = timed(lambda: y.copy_(x), a.warmup, 50)
        assert torch.equal(x, y)
        out.update(bytes=a.bytes, median_ms=ms, gbps=2 * a.bytes / (ms / 1e3) / 1e9)
    else:
        import torchvision

        model = torchvision.models.resnet50().to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        loss_fn = torch.nn.CrossEntropyLoss()
        images = torch.randn(a.batch, 3, 224, 224, device=dev)
        labels = torch.randint(0, 1000, (a.batch,), device=dev)

        def step():
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(images), labels)
            loss.backward()
            opt.step()

        ms, times = timed(step, a.warmup, a.iters)
        out.update(batch=a.batch, tf32_convolutions=torch.backends.cudnn.allow_tf32, median_ms=ms, images_per_second=a.batch / (ms / 1e3),
                   p10_ms=sorted(times)[len(times) // 10], p90_ms=sorted(times)[len(times) * 9 // 10])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
