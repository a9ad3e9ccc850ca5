#!/usr/bin/env python3
"""Graph replays charged to the operators that captured them (issue 37,
graph_capture.h): `opscope analyze REPLAY --graph-capture CAPTURE` on the
vLLM HIP-graph sample (tests/data/kineto/graph_replay) against the raw JSON
of both traces, read with Python's json module:

- the capture window: hipStreamBeginCapture to hipStreamEndCapture; each
  kernel launch call inside it (hip*LaunchKernel), in time order, with the
  innermost cpu_op on its thread around it, and the kernel it names (its
  "kernel" argument);
- the replay: the kernels that carry the hipGraphLaunch's correlation id, in
  order of start;
- first, that the two orders are the same nodes: the i-th replayed kernel's
  name holds the i-th launch's kernel name (the premise of the match, checked
  here on the data, not assumed);
- then every replayed kernel's time summed per capturing operator must equal
  the graph_kernels table, and every kernel be charged.

Without --graph-capture the table is absent; a capture trace whose window
holds a different number of launches charges nothing and says why.

    graph_capture_test.py OPSCOPE DATA_DIR
"""
import collections
import decimal
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
folder = os.path.join(data, "kineto", "graph_replay", "vllm_decode_full")
replay_path = os.path.join(folder, "graph_execution.json.gz")
capture_path = os.path.join(folder, "capture_traces", "graph_capture_rank_0.pt.trace.json.gz")


def ns(v):
    return int((decimal.Decimal(str(v)) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def load(path):
    with gzip.open(path, "rt") as f:
        return [e for e in json.load(f, parse_float=decimal.Decimal)["traceEvents"]
                if e.get("ph") == "X" and "ts" in e]


capture = sorted(load(capture_path), key=lambda e: ns(e["ts"]))
begin = next(e for e in capture if e["name"] == "hipStreamBeginCapture")
end = next(e for e in capture if e["name"] == "hipStreamEndCapture")
lane = (begin["pid"], begin["tid"])
ops = [e for e in capture if e.get("cat") == "cpu_op" and (e["pid"], e["tid"]) == lane]
launches = []
for e in capture:
    if e.get("cat") == "cuda_runtime" and e["name"].endswith("LaunchKernel") and \
            (e["pid"], e["tid"]) == lane and ns(begin["ts"]) <= ns(e["ts"]) <= ns(end["ts"]):
        s, f = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
        around = [o for o in ops if ns(o["ts"]) <= s and ns(o["ts"]) + ns(o["dur"]) >= f]
        op = max(around, key=lambda o: ns(o["ts"]))["name"] if around else "(no operator)"
        launches.append((op, e["args"].get("kernel", "")))

replay = load(replay_path)
graph = next(e for e in replay if e["name"] == "hipGraphLaunch")
kernels = sorted((e for e in replay if e.get("cat") == "kernel"
                  and e["args"].get("correlation") == graph["args"]["correlation"]),
                 key=lambda e: ns(e["ts"]))
c.check(len(kernels) == len(launches) == 421,
        f"421 replayed kernels and 421 captured launches ({len(kernels)}, {len(launches)})")
c.check(all(name and name in k["name"] for (_, name), k in zip(launches, kernels)),
        "the replay ran the captured launches' kernels in their order (names agree one by one)")
want = collections.defaultdict(lambda: [0, 0])
for (op, _), k in zip(launches, kernels):
    want[op][0] += 1
    want[op][1] += ns(k["dur"])

run, out = c.analyze(opscope, replay_path, "replay", "--graph-capture", capture_path)
got = {r["operator"]: [int(r["kernels"]), int(r["device_ns"])]
       for r in c.rows(out, "graph_kernels")}
c.check(run.returncode == 0 and got == dict(want),
        f"graph_kernels: every kernel charged to its capturing operator "
        f"({len(got)} operators; vllm::moe_forward {got.get('vllm::moe_forward')} vs "
        f"{want.get('vllm::moe_forward')})")

run, out = c.analyze(opscope, replay_path, "plain")
c.check(run.returncode == 0 and not c.rows(out, "graph_kernels"),
        "without --graph-capture: no graph_kernels table")

# A capture of another graph (its window with one launch fewer): nothing charged, and why.
trimmed = os.path.join(c.scratch, "other_capture.json")
with gzip.open(capture_path, "rt") as f:
    doc = json.load(f)
dropped = False
kept = []
for e in doc["traceEvents"]:
    if not dropped and e.get("name") == "hipLaunchKernel" and \
            float(begin["ts"]) <= float(e["ts"]) <= float(end["ts"]):
        dropped = True
        continue
    kept.append(e)
doc["traceEvents"] = kept
with open(trimmed, "w") as f:
    json.dump(doc, f)
run, out = c.analyze(opscope, replay_path, "other", "--graph-capture", trimmed, "--format", "json")
tables = [t for t in json.loads(run.stdout)["tables"] if t["section"] == "graph_kernels"] \
    if run.returncode == 0 else []
c.check(bool(tables) and tables[0]["title"].startswith("Graph replays: 0 of 1 launch charged"),
        f"a capture of another graph charges nothing ({[t['title'] for t in tables]})")
sys.exit(c.done())
