#!/usr/bin/env python3
"""PyTorch's memory events in a Kineto trace (issue 37: profile_memory=True's
"[memory]" instant events) against the raw JSON read with Python's json
module, on the two samples that record them (the same model on an H100 and
an MI300):

- the device: the one other than the CPU ("Device Type" 0) with the most
  events; its events in time order (file order among equal times);
- the peak: the first event at the highest "Total Allocated", the "Total
  Reserved" then, and the operator whose allocation reached it: the
  innermost cpu_op on the event's thread around its time (the latest to
  start of those that hold it);
- the allocations ("Bytes" > 0): how many, their sum; the blocks live at the
  peak (allocated at or before it, their "Addr" not freed by then) summed
  per allocating operator;
- the allocator's highest reserved total.

Every figure of the reported_memory_peak and reported_memory_components
tables must equal these.

    kineto_memory_test.py OPSCOPE DATA_DIR
"""
import collections
import decimal
import gzip
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()


def ns(v):
    return int((decimal.Decimal(str(v)) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def expected(path):
    with gzip.open(path, "rt") as f:
        events = json.load(f, parse_float=decimal.Decimal)["traceEvents"]
    memory = [e for e in events if e.get("name") == "[memory]" and e.get("ph") in ("i", "I")]
    devices = collections.Counter((e["args"]["Device Type"], e["args"]["Device Id"])
                                  for e in memory if e["args"]["Device Type"] != 0)
    device = devices.most_common(1)[0][0]
    memory = sorted((e for e in memory
                     if (e["args"]["Device Type"], e["args"]["Device Id"]) == device),
                    key=lambda e: ns(e["ts"]))
    ops = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "cpu_op":
            ops[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]))

    def operator(e):
        t = ns(e["ts"])
        around = [o for o in ops[(e["pid"], e["tid"])] if o[0] <= t <= o[1]]
        return max(around, key=lambda o: o[0])[2] if around else "(no operator)"

    peak = max(range(len(memory)), key=lambda i: (memory[i]["args"]["Total Allocated"], -i))
    live = {}
    for i, e in enumerate(memory[: peak + 1]):
        a = e["args"]
        if a["Bytes"] > 0:
            live[a["Addr"]] = (operator(e), a["Bytes"])
        elif a["Bytes"] < 0:
            live.pop(a["Addr"], None)
    at_peak = collections.defaultdict(lambda: [0, 0])
    for op, size in live.values():
        at_peak[op][0] += 1
        at_peak[op][1] += size
    allocations = [e["args"]["Bytes"] for e in memory if e["args"]["Bytes"] > 0]
    return {"peak": memory[peak]["args"]["Total Allocated"],
            "reserved_at_peak": memory[peak]["args"]["Total Reserved"],
            "operator": operator(memory[peak]),
            "blocks": len(allocations), "allocated": sum(allocations),
            "at_peak": {k: v for k, v in at_peak.items()},
            "reserved_max": max(e["args"]["Total Reserved"] for e in memory)}


MIB = 1024 * 1024
for sample in ("kineto/h100_Qwen1.5-0.5B-Chat.json.gz", "kineto/mi300_Qwen1.5-0.5B-Chat.json.gz"):
    want = expected(os.path.join(data, sample))
    run, out = c.analyze(opscope, os.path.join(data, sample), os.path.basename(sample),
                         "--format", "json")
    doc = json.loads(run.stdout) if run.returncode == 0 else {"results": [], "tables": []}
    rows = [r for r in doc["results"] if r.get("section") == "reported_memory_peak"]
    got = {r["operator"]: [r["blocks"], round(r["bytes"])] for r in rows}
    c.check(got == {k: [b, s] for k, (b, s) in want["at_peak"].items()},
            f"{sample}: blocks live at the peak by operator ({len(got)} operators)")
    title = next((t["title"] for t in doc["tables"] if t["section"] == "reported_memory_peak"), "")
    text = (f"peak {want['peak'] / MIB:.1f} MiB allocated ({want['reserved_at_peak'] / MIB:.1f} "
            f"MiB reserved) when {want['operator']} allocated")
    c.check(text in title, f"{sample}: '{text}' ({title})")
    shown = subprocess.run(
        [opscope, "analyze", os.path.join(data, sample), "--table", "reported_memory_peak",
         "--out", os.path.join(c.scratch, os.path.basename(sample) + ".table")],
        capture_output=True, text=True).stdout.replace("\n", " ")
    text = f"window's {want['blocks']} allocations ({want['allocated'] / MIB:.1f} MiB in all"
    c.check(text in shown, f"{sample}: '{text}'")
    comp = [r for r in doc["results"] if r.get("section") == "reported_memory_components"]
    c.check(len(comp) == 1 and round(comp[0]["peak_reserved_bytes"]) == want["reserved_max"]
            and round(comp[0]["peak_allocated_bytes"]) == want["peak"],
            f"{sample}: the allocator's peaks, {want['peak']} allocated and "
            f"{want['reserved_max']} reserved ({comp})")
sys.exit(c.done())
