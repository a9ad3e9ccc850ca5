#!/usr/bin/env python3
"""The independent side of the golden tests: reads each real sample in
tests/data with Python's json and csv modules (nothing of opscope's) and writes
what `opscope analyze` must report for it into golden/<case>.json: the format
detected, the number of complete events, and every operator's count and total
time in nanoseconds, and its nearest-rank p50 and p99 (the value of rank
ceil(P/100 * n) among its n sorted durations) and maximum. Spans of the whole trace (cat "Trace") and torch_npu's
derived "Overlap Analysis" rows are left out of operator statistics.

    make_expected.py DATA_DIR OUT_DIR     write the expected files
    make_expected.py DATA_DIR OUT_DIR --check
                                          exit 1 if a checked-in file differs
                                          from what this script computes
"""
import collections
import csv
import decimal
import gzip
import json
import os
import sys

# Traces whose every complete event is a host event: their operators' self
# times are expected too.
HOST_ONLY = {"cpu_only", "torch_cpu_small_cnn"}
# case name -> (sample path under tests/data, the format opscope must report)
CASES = {
    "alexnet_cuda_rank0": ("kineto/alexnet_cuda_rank0.json.gz", "kineto"),
    "cuda_event_sync_multi_stream": ("kineto/cuda_event_sync_multi_stream.json.gz", "kineto"),
    "mi250_rocm_train": ("kineto/mi250_rocm_train.json.gz", "kineto"),
    "cpu_only": ("kineto/cpu_only.pt.trace.json.gz", "kineto"),
    "sampled_rank-0": ("kineto/sampled_rank-0.json.gz", "kineto"),
    "sampled_rank-1": ("kineto/sampled_rank-1.json.gz", "kineto"),
    "ascend_trace_view": ("ascend/trace_view.json", "ascend-trace-view"),
    "torch_cpu_small_cnn": ("torch-cpu/small_cnn_train_torch1.13.json", "pytorch-legacy"),
    "ascend_kernel_details": ("ascend/kernel_details.csv", "ascend-kernel-details"),
}
# A folder holding the two ranks of one job: rank -> ProfilerStep spans.
RANK_FOLDER = ("kineto/sampled_rank-0.json.gz", "kineto/sampled_rank-1.json.gz")


def ns(value):
    return int((decimal.Decimal(str(value).strip()) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def load_events(path):
    if path.endswith(".csv"):  # kernel_details.csv: one device task per row
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        return [{"ph": "X", "name": r["Name"], "dur": r["Duration(us)"]} for r in rows], None
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    return (doc["traceEvents"] if isinstance(doc, dict) else doc), doc


def self_times(events):
    """Each event's self time: the time during which it is the innermost event
    open on its (pid, tid), the one opened last (by start, the longer first).
    Computed segment by segment between consecutive boundaries, not with a
    stack. Returns name -> summed self time."""
    by_thread = collections.defaultdict(list)
    for e in events:
        by_thread[(str(e.get("pid")), str(e.get("tid")))].append(e)
    result = collections.defaultdict(int)
    for thread in by_thread.values():
        spans = [(ns(e["ts"]), ns(e["dur"]), i, e.get("name", "")) for i, e in enumerate(thread)]
        order = {s[2]: k for k, s in enumerate(sorted(spans, key=lambda s: (s[0], -s[1], s[2])))}
        bounds = sorted({b for begin, dur, _, _ in spans for b in (begin, begin + dur)})
        for lo, hi in zip(bounds, bounds[1:]):
            covering = [s for s in spans if s[0] <= lo and hi <= s[0] + s[1]]
            if covering:
                innermost = max(covering, key=lambda s: order[s[2]])
                result[innermost[3]] += hi - lo
        for begin, dur, _, name in spans:
            result[name] += 0  # every name present, zero-length calls included
    return result


def expected_case(case, data, relative, fmt):
    events, _ = load_events(os.path.join(data, relative))
    derived = {e["pid"] for e in events
               if e.get("ph") == "M" and e.get("name") == "process_name"
               and e["args"].get("name") == "Overlap Analysis"}
    complete = [e for e in events if e.get("ph") == "X"]
    durations = collections.defaultdict(list)
    for e in complete:
        if e.get("cat") == "Trace" or e.get("pid") in derived:
            continue
        durations[e.get("name", "")].append(ns(e["dur"]))

    def nearest_rank(values, percent):
        ordered = sorted(values)
        return ordered[max(1, (percent * len(ordered) + 99) // 100) - 1]

    operators = {name: {"count": len(d), "total_ns": sum(d), "p50_ns": nearest_rank(d, 50),
                        "p99_ns": nearest_rank(d, 99), "max_ns": max(d)}
                 for name, d in sorted(durations.items())}
    if case in HOST_ONLY:
        nested = [e for e in complete if e.get("cat") != "Trace" and e.get("pid") not in derived]
        for name, value in self_times(nested).items():
            operators[name]["self_ns"] = value
    return {"sample": relative, "format": fmt, "complete_events": len(complete),
            "operators": operators}


def expected_ranks(data):
    ranks = {}
    for relative in RANK_FOLDER:
        _, doc = load_events(os.path.join(data, relative))
        ranks[str(doc["distributedInfo"]["rank"])] = sum(
            1 for e in doc["traceEvents"]
            if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))
    return {"samples": list(RANK_FOLDER), "steps_by_rank": ranks}


def main():
    data, out = sys.argv[1], sys.argv[2]
    check = "--check" in sys.argv[3:]
    files = {f"{case}.json": expected_case(case, data, rel, fmt) for case, (rel, fmt) in CASES.items()}
    files["ranks.json"] = expected_ranks(data)
    stale = 0
    for name, content in files.items():
        text = json.dumps(content, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
        path = os.path.join(out, name)
        if check:
            try:
                with open(path, encoding="utf-8") as f:
                    current = f.read()
            except FileNotFoundError:
                current = None
            if current != text:
                print(f"stale: {path} differs from what make_expected.py computes")
                stale += 1
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    if check:
        print(f"{len(files) - stale} of {len(files)} expected files current")
    sys.exit(1 if stale else 0)


if __name__ == "__main__":
    main()
