#!/usr/bin/env python3
"""Golden tests of `opscope analyze` on the real third-party samples, checked
against figures computed here, independently, with Python's json module: the
format detected, the number of complete events, and every operator's count and
total time to the nanosecond. Spans of the whole trace (cat "Trace") and
torch_npu's derived "Overlap Analysis" rows are left out of operator
statistics on both sides."""
import collections
import csv
import decimal
import gzip
import json
import subprocess
import sys
import tempfile

opscope, samples = sys.argv[1], sys.argv[2]
cases = {
    "kineto/alexnet_cuda_rank0.json.gz": "kineto",
    "kineto/cuda_event_sync_multi_stream.json.gz": "kineto",
    "kineto/mi250_rocm_train.json.gz": "kineto",
    "kineto/cpu_only.pt.trace.json.gz": "kineto",
    "kineto/sampled_rank-0.json.gz": "kineto",
    "kineto/sampled_rank-1.json.gz": "kineto",
    "ascend/trace_view.json": "ascend-trace-view",
    "torch-cpu/small_cnn_train_torch1.13.json": "pytorch-legacy",
    "ascend/kernel_details.csv": "ascend-kernel-details",
}


def ns(value):
    return int((decimal.Decimal(str(value)) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


failures = 0
for relative, expected_format in cases.items():
    path = f"{samples}/{relative}"
    if path.endswith(".csv"):  # kernel_details.csv: one device task per row
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        events = [{"ph": "X", "name": r["Name"], "dur": r["Duration(us)"].strip()} for r in rows]
    else:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            doc = json.load(f)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
    derived = {e["pid"] for e in events
               if e.get("ph") == "M" and e.get("name") == "process_name"
               and e["args"].get("name") == "Overlap Analysis"}
    complete = [e for e in events if e.get("ph") == "X"]
    want = collections.defaultdict(lambda: [0, 0])
    for e in complete:
        if e.get("cat") == "Trace" or e.get("pid") in derived:
            continue
        want[e.get("name", "")][0] += 1
        want[e.get("name", "")][1] += ns(e["dur"])
    with tempfile.TemporaryDirectory() as report:
        out = subprocess.run([opscope, "analyze", path, "--top", "0", "--format", "json", "--out", report],
                             capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        print(f"FAIL {relative}: exit {out.returncode}: {out.stderr}")
        failures += 1
        continue
    rows = [r for r in json.loads(out.stdout)["results"] if r.get("section") == "operators"]
    got = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        got[r["operator"]][0] += r["count"]
        got[r["operator"]][1] += round(r["total_us"] * 1000)
    problems = []
    if rows[0]["format"] != expected_format:
        problems.append(f"format {rows[0]['format']}, expected {expected_format}")
    if rows[0]["events"] != len(complete):
        problems.append(f"{rows[0]['events']} complete events, expected {len(complete)}")
    for name in sorted(set(want) | set(got)):
        if want[name] != got[name]:
            problems.append(f"{name!r}: opscope {got[name]}, python {want[name]}")
    top = max(want, key=lambda n: want[n][1])
    if problems:
        failures += 1
        print(f"FAIL {relative}: " + "; ".join(problems[:5]))
    else:
        print(f"ok {relative}: {len(complete)} events, {len(want)} operators agree "
              f"(longest: {top!r}, {want[top][1] / 1e3:.3f} us)")
# A folder of rank files: one row per rank, its rank from distributedInfo and its
# step count as Python counts ProfilerStep spans.
import shutil
with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as report:
    expected = {}
    for name in ("sampled_rank-0.json.gz", "sampled_rank-1.json.gz"):
        shutil.copy(f"{samples}/kineto/{name}", folder)
        with gzip.open(f"{samples}/kineto/{name}", "rt", encoding="utf-8") as f:
            doc = json.load(f)
        expected[doc["distributedInfo"]["rank"]] = sum(
            1 for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))
    out = subprocess.run([opscope, "analyze", folder, "--format", "json", "--out", report],
                         capture_output=True, text=True, timeout=120)
    rows = [r for r in json.loads(out.stdout)["results"] if r.get("section") == "ranks"] if out.returncode == 0 else []
    got = {r["rank"]: r["steps"] for r in rows}
    if got != expected:
        failures += 1
        print(f"FAIL ranks: opscope {got}, python {expected}; {out.stderr}")
    else:
        print(f"ok ranks: {len(got)} ranks from a folder, steps agree {got}")
sys.exit(1 if failures else 0)
