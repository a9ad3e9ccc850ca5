#!/usr/bin/env python3
"""PyTorch's profiler before Kineto, with use_cuda=True (issue 37: every trace
users have; issue 36, class 8: silent misreads). torch.autograd.profiler's
EventList.export_chrome_trace (PyTorch 1.4 to 1.13 without Kineto) writes,
for each operator, an X event on pid "CPU functions" and, for each of its
GPU intervals (timed with CUDA events), a flow "s" on the operator's thread
at its start and "f" on pid "CUDA functions" at the GPU interval's start
(cat "cpu_to_cuda", one id per pair), and an X event named after the
operator on pid "CUDA functions", tid the device. Before these were read,
such a trace exited 0 with its GPU time "in categories opscope does not
understand" and the device counted idle.

The machine has no GPU, so the trace is a real one of this project's CPU
recordings (torch-cpu/small_cnn_train_3steps_torch1.13.json, PyTorch 1.13's
legacy exporter, the same writer) with a GPU interval planted for each
top-level operator inside the steps, written as that exporter writes them:
each starts 5 us after its operator (or when the previous one ends) and
lasts as long as the operator's CPU time.

Expected, from the planted events with Python's json module:
- every GPU interval in the kernels table (count and total per name) and
  none left unclassified;
- each operator's device self time the sum of its own GPU intervals (every
  interval linked to its operator by its flow);
- the diagnosis names the family the operator names imply: convolution
  (aten::conv2d) and GEMM (aten::linear) are device compute, not
  elementwise.

    legacy_cuda_test.py OPSCOPE DATA_DIR
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
with open(os.path.join(data, "torch-cpu", "small_cnn_train_3steps_torch1.13.json")) as f:
    events = json.load(f)
ops = [e for e in events if e.get("ph") == "X" and e.get("pid") == "CPU functions"]
steps = [e for e in ops if e["name"].startswith("ProfilerStep#")]
c.check(len(steps) == 3 and all(isinstance(e["ts"], int) for e in ops),
        f"the real trace: {len(ops)} operators, {len(steps)} steps")


def inside(e, outer):
    return outer["ts"] <= e["ts"] and e["ts"] + e["dur"] <= outer["ts"] + outer["dur"] and \
        e is not outer


# The top-level operators of the steps: in a step, inside no other operator.
top = [e for e in ops if not e["name"].startswith("ProfilerStep#") and
       any(inside(e, s) for s in steps) and
       not any(inside(e, o) for o in ops if not o["name"].startswith("ProfilerStep#"))]
top.sort(key=lambda e: e["ts"])
planted, gpu = list(events), collections.defaultdict(lambda: [0, 0])
end = 0
for flow_id, op in enumerate(top):
    start = max(op["ts"] + 5, end)
    dur = max(op["dur"], 1)
    end = start + dur
    planted.append({"name": op["name"], "ph": "s", "ts": op["ts"], "tid": op["tid"],
                    "pid": "CPU functions", "id": flow_id, "cat": "cpu_to_cuda", "args": {}})
    planted.append({"name": op["name"], "ph": "f", "ts": start, "tid": 0,
                    "pid": "CUDA functions", "id": flow_id, "cat": "cpu_to_cuda", "args": {}})
    planted.append({"name": op["name"], "ph": "X", "ts": start, "dur": dur, "tid": 0,
                    "pid": "CUDA functions", "args": {}})
    gpu[op["name"]][0] += 1
    gpu[op["name"]][1] += dur * 1000
names = set(gpu)
c.check({"aten::conv2d", "aten::linear"} <= names, f"planted GPU time for {sorted(names)}")
path = os.path.join(c.scratch, "legacy_cuda.json")
with open(path, "w") as f:
    json.dump(planted, f)

run, out = c.analyze(opscope, path, "legacy")
c.check(run.returncode == 0, f"analysed (exit {run.returncode}): {run.stderr[-300:]}")
kernels = {r["operator"]: (int(r["count"]), int(r["total_ns"])) for r in c.rows(out, "kernels")
           if r["category"] == "kernel"}
c.check(kernels == {k: tuple(v) for k, v in gpu.items()},
        f"the kernels table holds every planted GPU interval ({len(kernels)} names)")
findings = c.rows(out, "findings")
c.check(not any(r["id"] == "unclassified_events" for r in findings),
        f"no event left unclassified ({[r['id'] for r in findings]})")
device_self = collections.defaultdict(int)
for r in c.rows(out, "operators"):
    if r["operator"] in gpu and r["device_self_ns"]:
        device_self[r["operator"]] += int(float(r["device_self_ns"]))
want_self = {k: v[1] for k, v in gpu.items()}
c.check(dict(device_self) == want_self,
        f"each operator's device self time is its own GPU intervals ({dict(device_self)})")
first = findings[0] if findings else {}
c.check(first.get("id") == "step_compute" and "elementwise" not in first.get("title", "").split(
        ":")[-1].split("are the largest")[0],
        f"the diagnosis: device compute, its largest family not elementwise ({first.get('title')})")
sys.exit(c.done())
