#!/usr/bin/env python3
"""A copy made synchronous in a real GPU trace (issue 36, build item 5: edit
real samples where a case needs a GPU). The 2021 ResNet-50 Kineto trace in
tests/data trains with a host-bound forward, a backward that gets the host
about 30 ms ahead of the device, then optimizer.step(). Here each of
ProfilerStep#5-#9 reads the loss on the host between the backward and
optimizer.step() (`print(loss.item())`), as PyTorch does it: aten::item ->
aten::_local_scalar_dense -> cudaMemcpyAsync of 4 bytes to pageable memory,
which returns once the copy is done, i.e. once the device has run all it was
given (the backward's tail), then cudaStreamSynchronize.

The edit replays the device queue (replay() below): every host event from
the planted call on moves by the call's length (the host waited that long);
each device task launched from then on starts when its launch allows (its
own launch delay where it started on an idle stream, else the trace's median
one) and its stream is free, never earlier than that, with its own length.
The step is then longer by the wait, and the wait's cost is all of it: the
backward's tail ran beside optimizer.step()'s host work and the next step's
data loading before, and removing the call gives the unedited trace back.

Expected, from the edited events (Python's json): each planted step longer
by its wait, the last step unchanged; a synchronous-copy finding, a warning,
whose saving counts the planted calls in full (the device worked through
them, yet each cost its whole length: before the old rule, which saved only
a wait's device-idle part, there was no finding) and is at most the length
of every blocking copy call in the complete steps (the planted ones and the
trace's own pageable input copies, each followed by a host-bound forward
that could run beside it); data loading, which costs more, named first.

    planted_sync_copy_test.py OPSCOPE DATA_DIR
"""
import decimal
import gzip
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
PLANTED = [f"ProfilerStep#{n}" for n in range(5, 10)]
path = os.path.join(data, "kineto/resnet50_dataloader_kineto2021.json.gz")
with gzip.open(path, "rt") as f:
    doc = json.load(f, parse_float=decimal.Decimal)
events = doc["traceEvents"]
DEVICE = ("Kernel", "Memcpy", "Memset")


def ns(us):
    return int((decimal.Decimal(str(us)) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def x_events(cat=None):
    return [e for e in events if e.get("ph") == "X" and (cat is None or e.get("cat") == cat)]


def launches():
    return {e["args"]["correlation"]: e for e in x_events("Runtime") if "correlation" in e["args"]}


original = {e["name"]: e["dur"] for e in x_events() if e["name"].startswith("ProfilerStep#")}
tasks0 = [e for e in x_events() if e.get("cat") in DEVICE]
calls0 = launches()
# The median launch delay of tasks that started on an idle stream.
delays, last_end = [], {}
for t in sorted(tasks0, key=lambda e: e["ts"]):
    if t["ts"] > last_end.get(t["tid"], -1):
        delays.append(t["ts"] - calls0[t["args"]["correlation"]]["ts"])
    last_end[t["tid"]] = t["ts"] + t["dur"]
LATENCY = decimal.Decimal(statistics.median_low(delays))  # a time of the trace: exact


def replay(at, wait):
    """Moves what follows host instant `at` by `wait`, replaying the device."""
    calls = launches()
    tasks = [e for e in x_events() if e.get("cat") in DEVICE]
    moved = {t["args"]["correlation"] for t in tasks if calls[t["args"]["correlation"]]["ts"] >= at}
    before = {}  # the delay each moved task had past its launch, on an idle stream
    free = {}
    for t in sorted(tasks, key=lambda e: e["ts"]):
        idle = t["ts"] > free.get(t["tid"], -1)
        free[t["tid"]] = t["ts"] + t["dur"]
        if t["args"]["correlation"] in moved:
            before[id(t)] = t["ts"] - calls[t["args"]["correlation"]]["ts"] if idle else LATENCY
    flows = {}
    for e in events:
        if not isinstance(e.get("ts"), (int, decimal.Decimal)) or e.get("pid") == 0:
            continue
        if e["ts"] >= at:
            e["ts"] += wait
        elif e.get("ph") == "X" and e["ts"] + e["dur"] > at:
            e["dur"] += wait  # it spans the wait: the step
    free = {}
    for t in sorted(tasks, key=lambda e: e["ts"]):
        if id(t) in before:
            launch = calls[t["args"]["correlation"]]["ts"]  # moved already
            t["ts"] = max(launch + before[id(t)], free.get(t["tid"], -1))
            flows[t["args"]["correlation"]] = t["ts"]
        free[t["tid"]] = t["ts"] + t["dur"]
    for e in events:
        if e.get("ph") == "f" and e.get("id") in flows:
            e["ts"] = flows[e["id"]]


main_tid = next(e for e in x_events() if e["name"] == PLANTED[0])["tid"]
next_id = max(calls0) + 1
planted_calls, waits = [], {}
for name in PLANTED:
    step = next(e for e in x_events() if e["name"] == name)
    opt = next(e for e in x_events("Operator") if e["name"].startswith("Optimizer.step#")
               and step["ts"] <= e["ts"] < step["ts"] + step["dur"])
    at = opt["ts"]
    spanning = [e["name"] for e in x_events() if e.get("pid") != 0 and e["tid"] == main_tid
                and e["ts"] < at < e["ts"] + e["dur"]]
    c.check(spanning == [name], f"{name}: only the step spans the planted call ({spanning})")
    calls = launches()
    drain = max(t["ts"] + t["dur"] for t in x_events() if t.get("cat") in DEVICE
                and calls[t["args"]["correlation"]]["ts"] < at)
    c.check(drain - at > 10_000, f"{name}: the device holds {drain - at} us of work at the call")
    end = drain + 11  # the copy [drain+1, drain+4], the calls' returns after it
    wait = end - at
    replay(at, wait)
    host = {"pid": opt["pid"], "tid": main_tid, "cat": "Operator"}
    cid = next_id
    next_id += 1
    memcpy = dict(host, ph="X", cat="Runtime", name="cudaMemcpyAsync", ts=at + 2, dur=drain + 4 + 2 - (at + 2),
                  args={"cbid": 41, "correlation": cid, "external id": 0})
    events.extend([
        dict(host, ph="X", name="aten::item", ts=at, dur=wait, args={}),
        dict(host, ph="X", name="aten::_local_scalar_dense", ts=at + 1, dur=wait - 2, args={}),
        memcpy,
        dict(host, ph="X", cat="Runtime", name="cudaStreamSynchronize", ts=drain + 7, dur=2,
             args={"cbid": 131, "correlation": cid + 10**6, "external id": 0}),
        {"ph": "X", "cat": "Memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0,
         "tid": "stream 7", "ts": drain + 1, "dur": 3,
         "args": {"device": 0, "context": 1, "stream": 7, "correlation": cid, "external id": 0,
                  "bytes": 4}},
        {"ph": "s", "id": cid, "pid": opt["pid"], "tid": int(main_tid), "ts": at + 2, "cat": "async",
         "name": "launch"},
        {"ph": "f", "id": cid, "pid": 0, "tid": "stream 7", "ts": drain + 1, "cat": "async",
         "name": "launch", "bp": "e"},
    ])
    planted_calls.append(memcpy)
    waits[name] = wait

# The edit is a schedule a GPU could run: on each stream, tasks one at a
# time, each after its launch call began.
calls = launches()
ok = True
for stream in {t["tid"] for t in x_events() if t.get("cat") in DEVICE}:
    run = sorted((t for t in x_events() if t.get("cat") in DEVICE and t["tid"] == stream),
                 key=lambda e: e["ts"])
    ok &= all(a["ts"] + a["dur"] <= b["ts"] for a, b in zip(run, run[1:]))
    ok &= all(t["ts"] >= calls[t["args"]["correlation"]]["ts"] for t in run)
c.check(ok, "the replayed device runs one task at a time per stream, each after its launch")
edited = os.path.join(c.scratch, "sync_copy.json")
with open(edited, "w") as f:
    json.dump(doc, f, default=str)

steps = {e["name"]: e["dur"] for e in x_events() if e["name"].startswith("ProfilerStep#")}
c.check(all(steps[n] == original[n] + waits.get(n, 0) for n in steps),
        f"each planted step is longer by its wait ({ {n: waits[n] for n in PLANTED} } us), "
        f"the others unchanged")

# Every blocking copy call inside the complete steps: the planted ones and the
# trace's own pageable HtoD input copies (cudaMemcpyAsync whose copy is pageable).
pageable = {t["args"]["correlation"] for t in x_events("Memcpy") if "Pageable" in t["name"]}
window = [(e["ts"], e["ts"] + e["dur"]) for e in x_events() if e["name"].startswith("ProfilerStep#")]
blocking = [e for e in x_events("Runtime") if e["name"] == "cudaMemcpyAsync"
            and e["args"].get("correlation") in pageable
            and any(b <= e["ts"] and e["ts"] + e["dur"] <= f for b, f in window)]
blocked = sum(ns(e["dur"]) for e in blocking)
planted = sum(ns(e["dur"]) for e in planted_calls)

run, out = c.analyze(opscope, edited, "planted")
c.check(run.returncode == 0, f"analysed (exit {run.returncode})")
with open(os.path.join(out, "analysis.json")) as f:
    results = json.load(f)["results"]
findings = [r for r in results if r["section"] == "findings"]
copy = next((r for r in findings if r["id"] == "host_blocked_synchronous_copy"), None)
saving = copy and copy.get("saving_ns")
c.check(copy is not None and copy["severity"] == "warning" and planted <= saving <= blocked,
        f"the synchronous copies' finding saves the planted calls' {planted} ns in full, and no "
        f"more than all {len(blocking)} blocking copy calls' {blocked} ns "
        f"({copy and copy['severity']}, {saving})")
c.check(findings and findings[0]["id"] in ("step_data_loading", "host_blocked_data_loading"),
        f"data loading, which costs more, is named first ({findings and findings[0]['id']})")
row = next((r for r in c.rows(out, "host_waits") if r["kind"] == "synchronous copy"), None)
c.check(row is not None and int(row["calls"]) == len(blocking) and int(row["blocked_ns"]) == blocked,
        f"the host_waits table's synchronous copies are the {len(blocking)} calls, {blocked} ns "
        f"({row and row['calls']}, {row and row['blocked_ns']})")
sys.exit(c.done())
