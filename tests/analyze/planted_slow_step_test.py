#!/usr/bin/env python3
"""A step made slow in a real GPU trace (issue 36, build item 5: edit real
samples where a case needs a GPU). The 2021 ResNet-50 Kineto trace in
tests/data has six complete steps of 164-181 ms. Here its DataLoader
iterator in ProfilerStep#8 stalls for STALL ms, at a moment the device has
finished all it was given before the iterator began (checked): every event
that starts at or after that moment moves STALL later, and the events that
span it (the step, the iterator and what encloses it) last STALL longer: a
slow batch (a cold file cache, a network filesystem's hiccup).

Expected, from the edited events (Python's json): the steps' durations; the
lower median of the six (the steps pass's median); steps_vary names
ProfilerStep#8 with the ratio to the median, and saves what the steps twice
the median or more take beyond it; ProfilerStep#8 is not called warm-up; the
data loading state (the device idle while the host is in the iterator) grows
by the stall, and the rest of the attribution is the unedited trace's; data
loading, now half of the steps, is named first.

    planted_slow_step_test.py OPSCOPE DATA_DIR
"""
import decimal
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
STALL_US = 400_000
path = os.path.join(data, "kineto/resnet50_dataloader_kineto2021.json.gz")
with gzip.open(path, "rt") as f:
    doc = json.load(f, parse_float=decimal.Decimal)
events = doc["traceEvents"]


def ns(us):
    return int((decimal.Decimal(str(us)) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


step8 = next(e for e in events if e.get("ph") == "X" and e["name"] == "ProfilerStep#8")
loader = min((e for e in events if e.get("ph") == "X" and e["name"].startswith("enumerate(DataLoader)")
              and step8["ts"] <= e["ts"] < step8["ts"] + step8["dur"]), key=lambda e: e["ts"])
# The moment: inside the iterator, once the device has run all it was given
# before the iterator began (a stall of the process delays what it launches
# next, not what the device already has).
device = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("Kernel", "Memcpy", "Memset")]
launched = {e["args"]["correlation"]: e["ts"] for e in events
            if e.get("ph") == "X" and e.get("cat") == "Runtime" and "correlation" in e.get("args", {})}
at = max([loader["ts"]] + [e["ts"] + e["dur"] for e in device
                           if launched.get(e.get("args", {}).get("correlation"), 10**30)
                           < loader["ts"]])
pending = [e for e in device if e["ts"] + e["dur"] > at and
           launched.get(e.get("args", {}).get("correlation"), 10**30) < at]
c.check(loader["ts"] <= at < loader["ts"] + loader["dur"] and not pending,
        f"at the stall the device has finished all it was given (+{at - loader['ts']} us into "
        f"the iterator; {len(pending)} tasks pending)")
for e in events:
    if not isinstance(e.get("ts"), (int, decimal.Decimal)):
        continue
    if e["ts"] >= at:
        e["ts"] += STALL_US
    elif e.get("ph") == "X" and e["ts"] + e["dur"] > at:
        e["dur"] += STALL_US  # it spans the stall: the step and what encloses the iterator
edited = os.path.join(c.scratch, "slow_step.json")
with open(edited, "w") as f:
    json.dump(doc, f, default=str)

steps = {e["name"]: ns(e["dur"]) for e in events
         if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")}
durations = sorted(steps.values())
median = durations[(len(durations) - 1) // 2]
over = sum(d - median for d in durations if d >= 2 * median)
ratio = steps["ProfilerStep#8"] / median


def report(trace, name):
    run, out = c.analyze(opscope, trace, name)
    c.check(run.returncode == 0, f"{name}: analysed (exit {run.returncode})")
    with open(os.path.join(out, "analysis.json")) as f:
        return json.load(f)["results"], out


results, out = report(edited, "slow")
got = {r["step"]: (r["status"], int(r["duration_ns"])) for r in c.rows(out, "steps")}
c.check(got == {n: ("complete", d) for n, d in steps.items()},
        f"the six steps complete at their edited durations, ProfilerStep#8 {steps['ProfilerStep#8']} ns "
        f"({got.get('ProfilerStep#8')})")
findings = {r["id"]: r for r in results if r["section"] == "findings"}
vary = findings.get("steps_vary")
c.check(vary is not None and "ProfilerStep#8" in vary["title"] and f"{ratio:.1f}x" in vary["title"]
        and vary.get("saving_ns") == over,
        f"steps_vary names ProfilerStep#8, {ratio:.1f}x the median, saving {over} ns "
        f"({vary and vary['title']}, {vary and vary.get('saving_ns')})")
c.check(not any("warm-up" in (r.get("status_reason") or "") for r in c.rows(out, "steps")),
        "no step is called warm-up")
first = next((r for r in results if r["section"] == "findings"), None)
c.check(first is not None and first["id"] in ("host_blocked_data_loading", "step_data_loading"),
        f"data loading, now half the steps, named first ({first and first['id']})")

clean, _ = report(path, "clean")


def states(rows):
    return {r["state"]: int(r["time_ns"]) for r in rows if r["section"] == "attribution"}


before, after = states(clean), states(results)
grew = after.get("data_loading", 0) - before.get("data_loading", 0)
c.check(grew == STALL_US * 1000, f"data loading grows by the stall, {STALL_US * 1000} ns (by {grew})")
rest = {s: v for s, v in after.items() if s != "data_loading"}
c.check(rest == {s: v for s, v in before.items() if s != "data_loading"},
        "the rest of the attribution is the unedited trace's")
sys.exit(c.done())
