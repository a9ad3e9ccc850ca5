#!/usr/bin/env python3
"""numpy's fp32 matmul timed with opscope's discipline: fresh random inputs, the
first run timed apart, 2 warm-up runs excluded, then repetitions until >= 10 and
>= 2 s; prints one JSON line. The result is checked at 64 sampled elements
against float64 dot products."""
import json
import sys
import time

import numpy as np

n = int(sys.argv[1])
rng = np.random.default_rng()
a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
start = time.perf_counter()
c = a @ b
first_ms = (time.perf_counter() - start) * 1e3
for _ in range(2):
    c = a @ b
samples = []
while len(samples) < 10 or sum(samples) < 2000:
    start = time.perf_counter()
    c = a @ b
    samples.append((time.perf_counter() - start) * 1e3)
samples.sort()
worst = 0.0
for _ in range(64):
    i, j = rng.integers(0, n, 2)
    products = a[i, :].astype(np.float64) * b[:, j].astype(np.float64)
    worst = max(worst, abs(float(c[i, j]) - products.sum()) / np.abs(products).sum())
try:
    from threadpoolctl import threadpool_info
    blas = threadpool_info()
except ImportError:
    blas = "threadpoolctl absent"
print(json.dumps({"median_ms": samples[len(samples) // 2], "p10_ms": samples[len(samples) // 10],
                  "p90_ms": samples[(len(samples) * 9) // 10], "first_run_ms": first_ms,
                  "reps": len(samples), "max_rel_error": worst, "blas": str(blas)}))
