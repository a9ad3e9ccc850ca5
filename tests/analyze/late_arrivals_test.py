#!/usr/bin/env python3
"""Across ranks, the rank whose late arrival at collectives kept the others
waiting, and what made it late (analyze/late_arrivals.h): two ranks' Kineto
traces written here, eight iterations of a GEMM then an all-reduce that ends
on both ranks at once. Rank 1 arrives 5 ms late at every call, once because
its GEMM runs 5 ms longer (its own compute), once because its device idles
5 ms before the GEMM (its host). The expected figures come from the events
written: the late rank's calls are the shorter (the calls end together), the
lateness is the difference, a lead-in runs from the previous call's end to
this call's start, and its compute is the GEMM inside it.

    late_arrivals_test.py OPSCOPE
"""
import csv
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

opscope = sys.argv[1]
checks = Checks()
check = checks.check
GEMM, LATE, TRANSFER, ITERATIONS = 10_000, 5_000, 1_000, 8  # us


def write(folder, cause):
    """Two ranks' traces; returns each rank's (start, duration) of its calls and
    its (lead-in, compute) before each call but the first, in us."""
    os.makedirs(folder)
    calls, leads = {}, {}
    for rank in (0, 1):
        events, t, prev_end = [], 0, None
        calls[rank], leads[rank] = [], []
        for _ in range(ITERATIONS):
            idle = LATE if rank == 1 and cause == "host" else 0
            gemm = GEMM + (LATE if rank == 1 and cause == "compute" else 0)
            events.append({"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0,
                           "tid": 7, "ts": t + idle, "dur": gemm})
            start, end = t + idle + gemm, t + GEMM + LATE + TRANSFER  # both ranks end together
            events.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                           "pid": 0, "tid": 20, "ts": start, "dur": end - start})
            if prev_end is not None:
                leads[rank].append((start - prev_end, gemm))
            calls[rank].append((start, end - start))
            prev_end, t = end, end + 500
        with open(os.path.join(folder, f"rank{rank}.json"), "w") as f:
            json.dump({"distributedInfo": {"rank": rank, "world_size": 2}, "traceEvents": events}, f)
    return calls, leads


for cause in ("compute", "host"):
    folder = os.path.join(checks.scratch, cause)
    calls, leads = write(folder, cause)
    late = [0 if a[1] < b[1] else 1 for a, b in zip(calls[0], calls[1])]
    gaps = [abs(a[1] - b[1]) * 1000 for a, b in zip(calls[0], calls[1])]
    run, out = checks.analyze(opscope, folder, cause + "-report")
    check(run.returncode == 0, f"{cause}: the two ranks are analysed ({run.stderr.strip()[:200]})")
    path = os.path.join(out, "tables", "late_ranks.csv")
    rows = list(csv.DictReader(open(path))) if os.path.exists(path) else []
    check(len(rows) == 1 and int(rows[0]["rank"]) == 1 and int(rows[0]["late_calls"]) == late.count(1)
          and int(rows[0]["calls"]) == ITERATIONS,
          f"{cause}: rank 1 arrives last at {late.count(1)} of {ITERATIONS} calls ({rows})")
    if not rows:
        continue
    r = rows[0]
    check(int(r["median_gap_ns"]) == statistics.median(gaps) and int(r["caused_wait_ns"]) == sum(gaps),
          f"{cause}: late by {statistics.median(gaps)} ns, the other waits {sum(gaps)} ns")
    mine = [(lead * 1000, compute * 1000) for lead, compute in leads[1]]
    theirs = [(lead * 1000, compute * 1000) for lead, compute in leads[0]]
    want = (sum(m[0] for m in mine) // len(mine), sum(t[0] for t in theirs) // len(theirs),
            sum(m[1] for m in mine) // len(mine), sum(t[1] for t in theirs) // len(theirs))
    got = tuple(int(r[k]) for k in ("lead_ns", "others_lead_ns", "compute_ns", "others_compute_ns"))
    check(got == want, f"{cause}: lead-ins and their compute {want} ({got})")
    made = "its compute" if cause == "compute" else "its idle device (host)"
    check(r["made_late_by"] == made, f"{cause}: made late by {made} ({r['made_late_by']})")

# One rank alone: no comparison.
single = os.path.join(checks.scratch, "single")
write(single, "compute")
os.remove(os.path.join(single, "rank1.json"))
run, out = checks.analyze(opscope, single, "single-report")
check(run.returncode == 0 and not os.path.exists(os.path.join(out, "tables", "late_ranks.csv")),
      "one rank: no late-arrival table")

sys.exit(checks.done())
