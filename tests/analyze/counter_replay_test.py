#!/usr/bin/env python3
"""A counter capture is said to be one (issue 36, class 8: CUPTI range-profiler
captures were analysed as normal runs).

Kineto writes the ranges of CUPTI's range profiler as `cuda_profiler_range`
events (libkineto's ActivityType CUDA_PROFILER_RANGE), each a profiled kernel
with its hardware counters as arguments; the profiler replays each kernel to
read them, so the trace's times are not the run's. Read with Python's json
module, the sample (HTA's cupti_profiler test data) holds such ranges with
counter arguments and no kernel events; opscope must name it a counter
capture first, count its ranges as the raw file does, and leave every
judgement of its times out (host-bound, an operator's share, first calls).
A normal trace from the same samples gets no such verdict.

    counter_replay_test.py OPSCOPE DATA_DIR
"""
import gzip
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()


def raw(name):
    with gzip.open(os.path.join(data, "kineto", name), "rt") as f:
        return json.load(f)["traceEvents"]


def findings(name):
    run, out = c.analyze(opscope, os.path.join(data, "kineto", name), name)
    c.check(run.returncode == 0, f"{name}: analysed (exit {run.returncode}: {run.stderr[-300:]})")
    with open(os.path.join(out, "analysis.json")) as f:
        return [r for r in json.load(f)["results"] if r["section"] == "findings"]


events = raw("cupti_range_profiler.json.gz")
ranges = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cuda_profiler_range"]
counters = [e for e in ranges if any(re.match(r"(smsp|sm|dram|lts|l1tex)__", k)
                                     for k in (e.get("args") or {}))]
kernels = [e for e in events if e.get("cat") == "kernel"]
c.check(len(ranges) > 0 and len(counters) == len(ranges) and not kernels,
        f"the sample is a counter capture: {len(ranges)} ranges, {len(counters)} with counters, "
        f"{len(kernels)} kernel events")

found = findings("cupti_range_profiler.json.gz")
first = found[0] if found else {}
c.check(first.get("id") == "step_counter_replay",
        f"the first finding names the counter capture: {first.get('id')}")
c.check(re.search(rf"\b{len(ranges)} ranges\b", first.get("title", "")) is not None,
        f"it counts the {len(ranges)} ranges: {first.get('title', '')[:120]}")
c.check(first.get("saving_ns", -1) in (None, -1), "it projects no saving")
judged = [f["id"] for f in found if f["id"] != "step_counter_replay"]
c.check(not judged, f"no finding judges the replayed times: {judged}")
for f in found:
    c.check(not re.search(r"host-bound|dominant|first calls", f["title"], re.I),
            f"no time judgement in '{f['title'][:80]}'")

# A run is not a counter capture.
normal = findings("mi250_rocm_train.json.gz")
c.check(all(f["id"] != "step_counter_replay" for f in normal),
        "a normal run gets no counter-capture verdict")
sys.exit(c.done())
