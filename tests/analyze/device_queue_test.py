#!/usr/bin/env python3
"""A device that waits with work queued is said to wait (issue 36, class 2:
blocked is not busy).

In TraceLens's sglang decode sample (Qwen3-8B on an MI300), kernels launched
in the trace's first half millisecond start 463 ms later, while the host
waits in a device-to-host copy (hipMemcpyWithStream) for them and the device
computes about 2% of the trace. Computed here from the raw JSON with
Python's json module: the time where launched work waits more than 50 us
after its launch call returned and no device task runs (the attribution's
"queued" state). opscope must name the device waiting behind a dependency
first, and say neither that the host's blocking copy costs that time (the
device had work queued: the copy waits on the same dependency) nor that the
waiting copy is first-use work.

    device_queue_test.py OPSCOPE DATA_DIR
"""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks, union  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
path = os.path.join(data, "kineto", "sglang_decode_qwen3_8b.json.gz")
with gzip.open(path, "rt") as f:
    events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and "dur" in e]


def minus(a, b):
    """Union a less union b."""
    out = []
    for x, y in a:
        for u, v in b:
            if v <= x or u >= y:
                continue
            if u > x:
                out.append([x, u])
            x = max(x, v)
        if x < y:
            out.append([x, y])
    return out


device_cats = ("kernel", "gpu_memcpy", "gpu_memset")
calls = {(e.get("args") or {}).get("correlation"): e for e in events
         if e.get("cat") in ("cuda_runtime", "cuda_driver")}
busy = union([(e["ts"], e["ts"] + e["dur"]) for e in events if e.get("cat") in device_cats])
held = []
for e in events:
    call = calls.get((e.get("args") or {}).get("correlation")) if e.get("cat") in device_cats else None
    if call is not None and e["ts"] > call["ts"] + call["dur"] + 50:
        held.append((call["ts"] + call["dur"] + 50, e["ts"]))
queued = sum(y - x for x, y in minus(union(held), busy))
span = max(e["ts"] + e["dur"] for e in events) - min(e["ts"] for e in events)
c.check(queued >= 0.5 * span, f"the raw trace: work queued with the device idle {queued / 1e3:.3f} "
                              f"ms of {span / 1e3:.3f} ms")

run, out = c.analyze(opscope, path, "sglang")
c.check(run.returncode == 0, f"analysed (exit {run.returncode})")
with open(os.path.join(out, "analysis.json")) as f:
    results = json.load(f)["results"]
findings = [r for r in results if r["section"] == "findings"]
first = findings[0] if findings else {}
c.check(first.get("id") == "step_device_waiting" and "queued behind a dependency" in
        first.get("title", ""), f"first: the device waits behind a dependency ({first.get('title')})")
share = float(first.get("title", "0%").split("waits ")[-1].split("%")[0] or 0)
c.check(abs(share - 100.0 * queued / span) < 0.5,
        f"its share {share}% is the queued time's {100.0 * queued / span:.1f}%")
ids = [f["id"] for f in findings]
c.check(not any(i.startswith("host_blocked") for i in ids), f"no host-blocked finding: {ids}")
c.check("first_calls" not in ids, f"no first-call finding: {ids}")
sys.exit(c.done())
