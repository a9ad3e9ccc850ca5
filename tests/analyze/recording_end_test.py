#!/usr/bin/env python3
"""A step that outlasts the recording is no step (issue 36, class 7: "a step
span longer than the whole recording accepted as complete").

libkineto ends every trace with a global instant "Record Window End" at the
end of its capture window (ChromeTraceLogger::finalizeTrace), and PyTorch's
profiler closes its last ProfilerStep before it stops. A step annotation that
ends after that instant was not seen to end: HTA's triton_example sample holds
a ProfilerStep#1 on another process, 13.3 s long, where the operators, the
kernel and the recording window take under 2 ms. Computed here from the raw
JSON with Python's json module:
  - each step that ends more than 1 ms after Record Window End must be
    "overrun" in the steps table, and no complete step is left;
  - the window diagnosed is then the trace's span without it (the other
    complete events, less Kineto's own 'Trace' spans), and the attribution
    and the critical path add up to that window;
  - the critical path runs through the operators, not through the annotation.
A planted copy of a real six-step trace (resnet50_dataloader_kineto2021) whose
last step is made to end 2 s after the recording: that step overrun, the
other five complete at their raw durations.

    recording_end_test.py OPSCOPE DATA_DIR
"""
import gzip
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attribution_expected import ns  # noqa: E402
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
SLACK_NS = 1_000_000


def load(name):
    with gzip.open(os.path.join(data, "kineto", name), "rt") as f:
        return json.load(f)


def record_window_end(events):
    ends = [ns(e["ts"]) for e in events if e.get("name") == "Record Window End"]
    return max(ends) if ends else None


def steps_of(events):
    # user_annotation today; Operator in 2021's Kineto (its category then).
    return [e for e in events if e.get("ph") == "X"
            and e.get("cat") in ("user_annotation", "Operator")
            and str(e.get("name", "")).startswith("ProfilerStep#")]


def analyze(path, name):
    run, out = c.analyze(opscope, path, name)
    c.check(run.returncode == 0, f"{name}: analysed (exit {run.returncode}: {run.stderr[-300:]})")
    return out


# HTA's triton_example.
doc = load("triton_example.json.gz")
events = doc["traceEvents"]
end = record_window_end(events)
overrun = [e for e in steps_of(events) if ns(e["ts"]) + ns(e["dur"]) > end + SLACK_NS]
c.check(end is not None and len(overrun) == 1,
        f"the sample has a step past its Record Window End: {len(overrun)}")
kept = [e for e in events if e.get("ph") == "X" and e.get("cat") != "Trace"
        and not any(e is o for o in overrun)]
window = max(ns(e["ts"]) + ns(e["dur"]) for e in kept) - min(ns(e["ts"]) for e in kept)

out = analyze(os.path.join(data, "kineto", "triton_example.json.gz"), "triton")
steps = {r["step"]: r for r in c.rows(out, "steps")}
for o in overrun:
    row = steps.get(o["name"], {})
    c.check(row.get("status") == "overrun" and "Record Window End" in row.get("status_reason", ""),
            f"{o['name']} is overrun: {row.get('status')} ({row.get('status_reason', '')[:90]})")
c.check(all(r["status"] != "complete" for r in steps.values()), "no complete step is left")
attribution = c.rows(out, "attribution")
total = sum(int(r["time_ns"]) for r in attribution)
c.check(total == window, f"the attribution covers the span without the overrun step: "
        f"{total} ns, raw {window} ns")
path = c.rows(out, "critical_path")
path_total = sum(int(r["time_ns"]) for r in path)
c.check(path_total == window, f"the critical path adds up to the window: {path_total} ns")
on_step = sum(int(r["time_ns"]) for r in path if r["what"].startswith("ProfilerStep"))
c.check(on_step == 0, f"the critical path does not run through the overrun annotation: {on_step} ns")
operators = {e["name"] for e in kept if e.get("cat") == "cpu_op"}
through = sum(int(r["time_ns"]) for r in path if r["what"] in operators)
c.check(2 * through > window, f"it runs through the operators: {through} of {window} ns")
with open(os.path.join(out, "analysis.json")) as f:
    found = [r for r in json.load(f)["results"] if r["section"] == "findings"]
c.check(found and found[0]["id"] != "step_untraced",
        f"the first finding is about the recorded work, not the annotation: "
        f"{found[0]['id'] if found else None}")
c.check(not any(re.search(r"13336|\b\d+ complete steps?\b", f["title"]) for f in found),
        "no finding measures the overrun step")

# The trace_health row: every event that ends past the recording, as the raw
# JSON counts them, and how many are annotations or steps.
for name, spans in (("triton_example.json.gz", 1), ("mtia_inference_rank_0.json.gz", 0),
                    ("b200_eager.json.gz", None)):
    events = load(name)["traceEvents"]
    end = record_window_end(events)
    past = None if end is None else [e for e in events if e.get("ph") == "X" and
                                      ns(e["ts"]) + ns(e.get("dur", 0)) > end + SLACK_NS]
    out = analyze(os.path.join(data, "kineto", name), "health_" + name)
    row = next((r for r in c.rows(out, "trace_health")
                if r["check"].startswith("events that end after the producer stopped")), {})
    if past is None:
        c.check(row.get("count") == "0" and "no end" in row.get("treatment", ""),
                f"{name}: no Record Window End, said: {row.get('treatment')}")
    else:
        annotations = sum(1 for e in past if e.get("cat") == "user_annotation")
        c.check(int(row.get("count", -1)) == len(past) and annotations == spans and
                (spans == 0 or f"the {spans} annotation" in row.get("treatment", "")),
                f"{name}: {len(past)} events past the recording, {annotations} annotations: "
                f"{row.get('count')} ({row.get('treatment')})")

# A real six-step trace with its last step planted to end 2 s after the recording.
doc = load("resnet50_dataloader_kineto2021.json.gz")
events = doc["traceEvents"]
end = record_window_end(events)
steps = sorted(steps_of(events), key=lambda e: float(e["ts"]))
c.check(end is not None and len(steps) == 6, f"the sample records its window end and 6 steps")
last = steps[-1]
last["dur"] = (end + 2_000_000_000 - ns(last["ts"])) / 1000
planted = os.path.join(c.scratch, "overrun.json")
with open(planted, "w") as f:
    json.dump(doc, f)
out = analyze(planted, "planted")
rows = {r["step"]: r for r in c.rows(out, "steps")}
c.check(rows.get(last["name"], {}).get("status") == "overrun",
        f"the planted {last['name']} is overrun: {rows.get(last['name'], {}).get('status')}")
for s in steps[:-1]:
    r = rows.get(s["name"], {})
    c.check(r.get("status") == "complete" and int(r.get("duration_ns", -1)) == ns(s["dur"]),
            f"{s['name']} stays complete at {ns(s['dur'])} ns: {r.get('status')} "
            f"{r.get('duration_ns')}")
attribution = c.rows(out, "attribution")
total = sum(int(r["time_ns"]) for r in attribution)
want = sum(ns(s["dur"]) for s in steps[:-1])
c.check(total == want, f"the attribution covers the five complete steps: {total} ns, raw {want}")
sys.exit(c.done())
