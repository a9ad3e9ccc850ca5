#!/usr/bin/env python3
"""A real Kineto trace of 2021 (issue 53, build item 4; issue 36, class 8):
the TensorBoard plugin's ResNet-50 sample with DataLoader(num_workers=0), as
PyTorch 1.9's Kineto wrote it (schemaVersion 1; categories Operator, Runtime,
Kernel, Memcpy, Memset). Before these spellings were read, such a trace
exited 0 with every event outside every figure.

Expected values from the raw JSON with Python's json module:
- every Kernel event in the kernels table (count, total ns), the 12 Memcpy
  events as HtoD copies with their bytes, the six ProfilerSteps complete at
  their durations;
- the device idle while a DataLoader iterator runs (the union of the
  `enumerate(DataLoader)` spans inside the steps, less the union of the
  Kernel, Memcpy and Memset spans), as a share of the steps: opscope's data
  loading state within one point of it (its attribution first gives device
  time where launched work is queued behind a dependency);
- the diagnosis: data loading named first (the plugin's own advice for this
  sample is more DataLoader workers, and its num_workers=4 run is faster),
  and no finding calls the step device-bound while the device idles in data
  loading a third of it.

    early_kineto_test.py OPSCOPE DATA_DIR
"""
import collections
import decimal
import gzip
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks, covered, union  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
path = os.path.join(data, "kineto/resnet50_dataloader_kineto2021.json.gz")
with gzip.open(path, "rt") as f:
    doc = json.load(f, parse_float=decimal.Decimal)


def ns(us):
    return int((decimal.Decimal(str(us)) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


events = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
categories = collections.Counter(e.get("cat") for e in events)
c.check(doc.get("schemaVersion") == 1 and {"Operator", "Runtime", "Kernel", "Memcpy", "Memset"}
        <= set(categories) and not {"cpu_op", "kernel", "cuda_runtime"} & set(categories),
        f"the sample is early Kineto: schemaVersion {doc.get('schemaVersion')}, {dict(categories)}")

run, out = c.analyze(opscope, path, "early")
c.check(run.returncode == 0, f"analysed (exit {run.returncode}): {run.stderr[-300:]}")

kernels = [e for e in events if e.get("cat") == "Kernel"]
rows = c.rows(out, "kernels")
c.check(rows and all(r["format"] == "kineto" for r in rows), "read as Kineto")
got = (sum(int(r["count"]) for r in rows if r["category"] == "kernel"),
       sum(int(r["total_ns"]) for r in rows if r["category"] == "kernel"))
want = (len(kernels), sum(ns(e["dur"]) for e in kernels))
c.check(got == want, f"kernels: {want[0]} calls, {want[1]} ns (opscope {got})")

copies = [e for e in events if e.get("cat") == "Memcpy"]
htod = [r for r in c.rows(out, "transfers") if r["direction"] == "HtoD"]
want = (len(copies), sum(ns(e["dur"]) for e in copies))
c.check(len(copies) == 12 and all("HtoD" in e["name"] for e in copies) and htod and
        (int(htod[0]["count"]), int(htod[0]["total_ns"])) == want,
        f"copies: {want[0]} HtoD, {want[1]} ns (opscope {htod and (htod[0]['count'], htod[0]['total_ns'])})")

steps = {e["name"]: (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events
         if e["name"].startswith("ProfilerStep#")}
got = {r["step"]: (r["status"], int(r["duration_ns"])) for r in c.rows(out, "steps")}
c.check(got == {n: ("complete", e - b) for n, (b, e) in steps.items()} and len(got) == 6,
        f"steps: six complete at their durations ({got})")

device = union([(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events
                if e.get("cat") in ("Kernel", "Memcpy", "Memset")])
loading = union([(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events
                 if e["name"].startswith("enumerate(DataLoader)")])
window = sum(e - b for b, e in steps.values())
idle_loading = 0
for b, e in steps.values():
    for lb, le in loading:
        lb, le = max(lb, b), min(le, e)
        if le > lb:
            idle_loading += (le - lb) - covered(device, lb, le)
want_pct = 100.0 * idle_loading / window
got_pct = {r["state"]: float(r["share_pct"]) for r in c.rows(out, "attribution")}.get("data_loading")
c.check(want_pct > 30 and got_pct is not None and abs(got_pct - want_pct) <= 1.0,
        f"data loading with the device idle: {want_pct:.1f}% of the steps (opscope {got_pct})")

with open(os.path.join(out, "analysis.json")) as f:
    findings = [r for r in json.load(f)["results"] if r["section"] == "findings"]
c.check(findings and findings[0]["id"] in ("host_blocked_data_loading", "step_data_loading"),
        f"data loading named first ({findings[0]['id'] if findings else None})")
bound = [f["title"] for f in findings if re.search(r"step is device-bound", f["title"])]
c.check(not bound, f"no finding calls the step device-bound ({bound})")
sys.exit(c.done())
