#!/usr/bin/env python3
"""Writes a synthetic multi-rank job from one real Kineto trace, and what its
collective waits must be, computed here from the generated values.

Each rank's trace is the sample (HolisticTraceAnalysis' sampled_rank-0, a real
NCCL job) replicated until it reaches TARGET_MB, its steps renumbered, its
clock shifted by a per-rank offset. Every NCCL kernel becomes one collective
call of the job: rank r arrives at call k at the sample's start plus a jitter
(uniform in [0, JITTER] ns), plus DELAY for the straggler at every EVERY-th
call; the call ends on every rank at the last arrival plus the sample's
duration (the transfer), so each rank's kernel lasts from its arrival to that
end. With --args the kernels carry what newer PyTorch records on them
("Collective name", "Process Group Name", "Seq", "In msg nelems", "dtype").

expected.json holds, per rank, the figures `opscope merge` reports, from
their definitions over these durations: wait (duration beyond the call's
shortest), calls at which it was last (the shortest duration, the lowest rank
on ties) by a gap to the second shortest of at least 20 us and three times
the median spread of the other durations (longest - second shortest), and
the others' wait for it there (the gap times the other ranks).
"""
import argparse
import gzip
import json
import os
import random
import re

p = argparse.ArgumentParser()
p.add_argument("sample")
p.add_argument("outdir")
p.add_argument("ranks", type=int)
p.add_argument("target_mb", type=float)
p.add_argument("--straggler", type=int, default=-1)
p.add_argument("--every", type=int, default=10)
p.add_argument("--delay-us", type=float, default=2000)
p.add_argument("--jitter-us", type=float, default=30)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--args", action="store_true")
p.add_argument("--gzip", action="store_true")
a = p.parse_args()

with gzip.open(a.sample, "rt", encoding="utf-8") as f:
    doc = json.load(f)
events = doc["traceEvents"]
head = [e for e in events if e.get("ph") == "M"]
body = [e for e in events if e.get("ph") != "M"]


def ns(us):
    return int(round(us * 1000))


timed = [e for e in body if isinstance(e.get("ts"), (int, float))]
start = min(ns(e["ts"]) for e in timed)
end = max(ns(e["ts"]) + ns(e.get("dur", 0)) for e in timed)
span = end - start + 1_000_000
steps = sorted({e["name"] for e in body if str(e.get("name", "")).startswith("ProfilerStep#")})
step_count = max(len(steps), 1)


def is_comm(e):
    return e.get("cat") == "kernel" and "nccl" in e.get("name", "").lower()


comm_per_copy = sorted((ns(e["ts"]), i) for i, e in enumerate(body) if is_comm(e))
order = {i: k for k, (_, i) in enumerate(comm_per_copy)}
copy_bytes = len(json.dumps(body))
copies = max(1, int(round(a.target_mb * 1e6 / copy_bytes)))
calls = copies * len(comm_per_copy)

rng = random.Random(a.seed)
jitter = [[rng.randint(0, ns(a.jitter_us)) for _ in range(calls)] for _ in range(a.ranks)]
offsets = [r * 1_234_567 + rng.randint(0, 5_000_000) for r in range(a.ranks)]
delay = ns(a.delay_us)


def late(r, k):
    return r == a.straggler and k % a.every == a.every - 1


# Per call: base start, transfer, every rank's arrival and duration.
base = [(ns(body[i]["ts"]), ns(body[i]["dur"])) for _, i in comm_per_copy]
arrival = [[0] * calls for _ in range(a.ranks)]
duration = [[0] * calls for _ in range(a.ranks)]
for k in range(calls):
    copy, j = divmod(k, len(comm_per_copy))
    s, transfer = base[j]
    s += copy * span
    arr = [s + jitter[r][k] + (delay if late(r, k) else 0) for r in range(a.ranks)]
    finish = max(arr) + transfer
    for r in range(a.ranks):
        arrival[r][k] = arr[r]
        duration[r][k] = finish - arr[r]

# The expected figures, from their definitions.
expected = {"ranks": {}, "calls": calls, "straggler": a.straggler}
rows = {r: {"wait_ns": 0, "last_arrivals": 0, "caused_wait_ns": 0} for r in range(a.ranks)}
total_wait = 0
per_call = []
for k in range(calls):
    d = [duration[r][k] for r in range(a.ranks)]
    low = min(d)
    wait = sum(x - low for x in d)
    total_wait += wait
    for r in range(a.ranks):
        rows[r]["wait_ns"] += d[r] - low
    ordered = sorted(d)
    second = ordered[1] if len(d) > 1 else low
    per_call.append((d.index(low), second - low, max(d) - second))
spreads = sorted(spread for _, _, spread in per_call)
n = len(spreads)
median = 0 if n == 0 else spreads[n // 2] if n % 2 else spreads[n // 2 - 1] + (spreads[n // 2] - spreads[n // 2 - 1]) // 2
threshold = max(20_000, 3 * median)
for last, gap, _ in per_call:
    if a.ranks >= 2 and gap >= threshold:
        rows[last]["last_arrivals"] += 1
        rows[last]["caused_wait_ns"] += (a.ranks - 1) * gap
expected["late_threshold_ns"] = threshold
expected["ranks"] = {str(r): v for r, v in rows.items()}
expected["total_wait_ns"] = total_wait
expected["planted_calls"] = sum(1 for k in range(calls) if late(a.straggler, k))

os.makedirs(a.outdir, exist_ok=True)


def fmt_us(v):
    # A marker json.dumps quotes and RAW unquotes: microseconds with exactly
    # three decimals (whole ns), which a double cannot hold at epoch scale.
    return f"@@{v // 1000}.{v % 1000:03d}@@"


RAW = re.compile(r'"@@([0-9.]+)@@"')


for r in range(a.ranks):
    meta = {k: v for k, v in doc.items() if k != "traceEvents"}
    meta["distributedInfo"] = dict(meta.get("distributedInfo", {}), rank=r, world_size=a.ranks)
    path = os.path.join(a.outdir, f"rank-{r}.json" + (".gz" if a.gzip else ""))
    opener = gzip.open if a.gzip else open
    with opener(path, "wt", encoding="utf-8") as out:
        out.write("{")
        for k, v in meta.items():
            out.write(json.dumps(k) + ": " + json.dumps(v) + ",\n")
        out.write('"traceEvents": [\n')
        out.write(",\n".join(json.dumps(e) for e in head))
        for copy in range(copies):
            shift = copy * span + offsets[r]
            lines = []
            for i, e in enumerate(body):
                e2 = dict(e)
                if isinstance(e2.get("ts"), (int, float)):
                    if i in order:
                        k = copy * len(comm_per_copy) + order[i]
                        e2["ts"] = fmt_us(arrival[r][k] + offsets[r])
                        e2["dur"] = fmt_us(duration[r][k])
                    else:
                        e2["ts"] = fmt_us(ns(e2["ts"]) + shift)
                        if isinstance(e2.get("dur"), (int, float)):
                            e2["dur"] = fmt_us(ns(e2["dur"]))
                name = e2.get("name", "")
                if name.startswith("ProfilerStep#"):
                    e2["name"] = "ProfilerStep#%d" % (int(name[13:]) + copy * step_count)
                if isinstance(e2.get("args"), dict):
                    args = dict(e2["args"])
                    for key in ("correlation", "External id"):
                        if isinstance(args.get(key), int):
                            args[key] = args[key] + copy * 10_000_000
                    if a.args and i in order:
                        k = copy * len(comm_per_copy) + order[i]
                        args.update({"Collective name": "all_to_all", "Process Group Name": "0",
                                     "Seq": k, "In msg nelems": 1 << 20, "Out msg nelems": 1 << 20,
                                     "Group size": a.ranks, "dtype": "Float"})
                    e2["args"] = args
                lines.append(RAW.sub(r"\1", json.dumps(e2)))
            out.write(",\n" + ",\n".join(lines))
        out.write("\n]}\n")

with open(os.path.join(a.outdir, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1)
print(f"{a.outdir}: {a.ranks} ranks x {copies} copies ({calls} calls each), "
      f"straggler {a.straggler} late at {expected['planted_calls']} calls")
