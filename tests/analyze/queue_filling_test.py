#!/usr/bin/env python3
"""Leading steps that only fill the launch queue are not averaged with the
steady ones (issue 36, class 7).

A PyTorch loop launches asynchronously: until the launch queue is full the
host runs ahead of the device, and its first steps are short because their
work runs later, in the spans of the steps after. HTA's ns_resolution sample
(five ProfilerSteps of 35, 72, 96, 96 and 96 ms, each launching about 95 ms
of device work) is such a trace. The rule (steps.h), restated here over the
raw JSON with Python's json module: from the first step on, while a step is
at most 0.9x the median of the later complete steps (two or more) and the
device's backlog grew in it by half what it is short of that median or
more, it is "queue-filling" (the backlog at an instant: the end of the device
work launched before it, by correlation id, past it; none is 0), at most
half the steps. The steps table must give the statuses and backlogs the
script computes, and the attribution covers the complete steps only. A real
trace whose first steps are not short (resnet50_dataloader_kineto2021) keeps
all its steps.

    queue_filling_test.py OPSCOPE DATA_DIR
"""
import gzip
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attribution_expected import ns  # noqa: E402
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
RUNTIME = ("cuda_runtime", "cuda_driver", "Runtime")
DEVICE = ("kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset")


def load(name):
    with gzip.open(os.path.join(data, "kineto", name), "rt") as f:
        return json.load(f)["traceEvents"]


def expected(events):
    """Each step's (name, begin, duration, status, backlog at start, at end)."""
    steps = sorted(((e["name"], ns(e["ts"]), ns(e["dur"])) for e in events
                    if e.get("ph") == "X" and e.get("cat") in ("user_annotation", "Operator")
                    and str(e.get("name", "")).startswith("ProfilerStep#")),
                   key=lambda s: s[1])
    calls = sorted((ns(e["ts"]), e["args"]["correlation"]) for e in events
                   if e.get("ph") == "X" and e.get("cat") in RUNTIME
                   and "correlation" in (e.get("args") or {}))
    work_end = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in DEVICE and "correlation" in (e.get("args") or {}):
            i = e["args"]["correlation"]
            work_end[i] = max(work_end.get(i, -1), ns(e["ts"]) + ns(e["dur"]))

    def launched_end(begin, end):
        ends = [work_end[i] for t, i in calls if begin <= t < end and i in work_end]
        return max(ends) if ends else None

    rows, marked = [], 0
    status = ["complete"] * len(steps)
    backlog = [(None, None)] * len(steps)
    for k, (_, begin, d) in enumerate(steps):
        if 2 * (marked + 1) > len(steps):
            break
        later = [s[2] for s in steps[k + 1:]]
        if len(later) < 2:
            break
        median = statistics.median(later)  # of integers: exact (its half rounds below)
        if d > 0.9 * median:
            break
        after = launched_end(begin, begin + d)
        if after is None:
            break
        before = launched_end(-1, begin)
        lag_begin = 0 if before is None else max(0, before - begin)
        lag_end = max(0, after - (begin + d))
        if 2 * (lag_end - lag_begin) < median - d:
            break
        status[k], backlog[k] = "queue-filling", (lag_begin, lag_end)
        marked += 1
    for k, (name, begin, d) in enumerate(steps):
        rows.append((name, begin, d, status[k], *backlog[k]))
    return rows


def analyze(name):
    run, out = c.analyze(opscope, os.path.join(data, "kineto", name), name)
    c.check(run.returncode == 0, f"{name}: analysed (exit {run.returncode}: {run.stderr[-300:]})")
    return out


def check(name, want_filling):
    want = expected(load(name))
    filling = [w for w in want if w[3] == "queue-filling"]
    c.check(len(filling) == want_filling,
            f"{name}: the script finds {len(filling)} queue-filling steps, {want_filling} expected")
    out = analyze(name)
    got = {r["step"]: r for r in c.rows(out, "steps")}
    for step, begin, d, status, lag_begin, lag_end in want:
        row = got.get(step, {})
        c.check(row.get("status") == status and int(row.get("duration_ns", -1)) == d,
                f"{name} {step}: {status}, {d} ns: {row.get('status')} {row.get('duration_ns')}")
        if status != "queue-filling":
            continue
        m = re.search(r"grew from ([\d.]+) ms at its start to ([\d.]+) ms at its end",
                      row.get("status_reason", ""))
        c.check(m is not None and abs(float(m.group(1)) * 1e6 - lag_begin) < 1000
                and abs(float(m.group(2)) * 1e6 - lag_end) < 1000,
                f"{step}: backlog {lag_begin / 1e6:.3f} -> {lag_end / 1e6:.3f} ms: "
                f"{row.get('status_reason', '')[:200]}")
    complete = sum(w[2] for w in want if w[3] == "complete")
    total = sum(int(r["time_ns"]) for r in c.rows(out, "attribution"))
    c.check(total == complete, f"{name}: the attribution covers the complete steps: {total} ns, "
            f"raw {complete}")


check("ns_resolution_rank0.json.gz", 2)
check("resnet50_dataloader_kineto2021.json.gz", 0)

# The same trace with its launch calls' correlation ids taken out: what the
# steps launched is not known, and no step is judged to have only queued it.
events = load("ns_resolution_rank0.json.gz")
for e in events:
    if e.get("cat") in RUNTIME:
        (e.get("args") or {}).pop("correlation", None)
planted = os.path.join(c.scratch, "unlinked.json")
with open(planted, "w") as f:
    json.dump({"traceEvents": events}, f)
run, out = c.analyze(opscope, planted, "unlinked")
statuses = [r["status"] for r in c.rows(out, "steps")]
c.check(run.returncode == 0 and statuses == ["complete"] * 5,
        f"without linked launches every step is complete: {statuses}")
sys.exit(c.done())
