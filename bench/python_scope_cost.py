#!/usr/bin/env python3
"""Decides issue 16's profiling goal: the cost of `with opscope.scope(...)`
in a Python loop, without a session and while a session records, beside
torch.autograd.profiler.record_function in the same states (torch's legacy
CPU profiler recording, as Debian's torch 1.13 has no Kineto), same process,
same run. Goal: opscope's scope costs at most 0.5x record_function's, in
both states.

Each cost is the time of a loop of N `with` blocks less the same loop around
contextlib.nullcontext() (the loop and `with` machinery), median of R
repetitions after one warm-up repetition, in ns per scope.

    PYTHONPATH=build/release/python python3 bench/python_scope_cost.py [N] [R]
"""
import contextlib
import statistics
import sys
import tempfile
import time

import opscope

try:
    import torch
except ImportError:
    torch = None

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
R = int(sys.argv[2]) if len(sys.argv) > 2 else 15


def loop_ns(make):
    """Median ns per iteration of `with make(): pass`, N iterations, R repetitions."""
    times = []
    for rep in range(R + 1):
        t0 = time.perf_counter_ns()
        for _ in range(N):
            with make():
                pass
        t = (time.perf_counter_ns() - t0) / N
        if rep > 0:  # the first repetition warms caches and allocators
            times.append(t)
    return statistics.median(times), (max(times) - min(times)) / statistics.median(times)


def measure(label, make, base):
    t, spread = loop_ns(make)
    return label, t - base, spread


def main():
    base, _ = loop_ns(contextlib.nullcontext)
    rows = []
    rows.append(measure("opscope.scope, no session", lambda: opscope.scope("step"), base))
    if torch is not None:
        rf = torch.autograd.profiler.record_function
        rows.append(measure("record_function, no profiler", lambda: rf("step"), base))
    with tempfile.TemporaryDirectory() as tmp:
        with opscope.Profiler(output_dir=tmp, max_buffer_bytes=1 << 30):
            rows.append(measure("opscope.scope, session recording",
                                lambda: opscope.scope("step"), base))
    if torch is not None:
        with torch.autograd.profiler.profile():
            rows.append(measure("record_function, profiler recording", lambda: rf("step"),
                                base))
    print(f"Cost of one scope in a Python loop ({N} scopes, median of {R} repetitions, "
          f"less the loop around nullcontext: {base:.0f} ns)")
    for label, t, spread in rows:
        note = "  (noisy: spread {:.0%})".format(spread) if spread > 0.25 else ""
        print(f"  {label:38s} {t:8.0f} ns{note}")
    if torch is None:
        print("torch not installed: no comparison (Debian python3-torch)")
        return 0
    cost = {label: t for label, t, _ in rows}
    verdicts = []
    for ours, theirs, state in (("opscope.scope, no session", "record_function, no profiler",
                                 "no session"),
                                ("opscope.scope, session recording",
                                 "record_function, profiler recording", "recording")):
        ratio = cost[ours] / cost[theirs]
        ok = ratio <= 0.5
        verdicts.append(ok)
        print(f"ratio opscope / record_function, {state}: {ratio:.2f}x (goal <= 0.5x): "
              f"{'met' if ok else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
