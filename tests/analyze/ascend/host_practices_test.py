#!/usr/bin/env python3
"""Three host practices Ascend's advisors check (issue 38): Python's
garbage collector (its rules/en/gc.yaml: torch_npu's "GC" events of 1000 us
or more, gc_threshold as msprof-analyze has had it since 2024-12-04) and SyncBatchNorm (rules/sync_batchnorm.yaml: 20 or more framework
events named SyncBatchNorm), on a real torch_npu timeline and on a copy of it
with both planted; and an optimizer torch_npu fuses (MindStudio's
affinity-optimizer advice), on the real timeline's Adam.

The real trace_view.json records neither: both checks are silent. The edited
copy adds, on the main thread of the step, garbage collections of 5, 300,
999, 1,000 and 2,000 us (category "GC", as torch_npu writes them with
gc_detect_threshold) and 25 SyncBatchNorm operators (category cpu_op).
Restated here over the raw JSON with Python's json module: the collections
of 1000 us or more, their count and total, and the count of SyncBatchNorm
events against the limit of 20; opscope's findings and table must give the
same figures.

    host_practices_test.py OPSCOPE DATA_DIR
"""
import copy
import decimal
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from attribution_expected import ns  # noqa: E402
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
with open(os.path.join(data, "ascend", "trace_view.json")) as f:
    events = json.load(f)



def expected(events):
    gc = [ns(e["dur"]) for e in events if e.get("ph") == "X" and
          str(e.get("cat", "")).lower() == "gc" and ns(e["dur"]) >= 1_000_000]
    syncbn = sum(1 for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op" and
                 e["name"].lower() == "syncbatchnorm")
    return len(gc), sum(gc), syncbn


def run(events, name):
    results = c.analyze_events(opscope, events, name)
    return ({r["id"]: r for r in results if r["section"] == "findings"},
            {r["what"]: r for r in results if r["section"] == "host_practices"})


gc, gc_ns, syncbn = expected(events)
c.check(gc == 0 and syncbn == 0, f"the real trace: {gc} collections, {syncbn} SyncBatchNorm")
findings, rows = run(events, "real")
c.check("python_gc" not in findings and "sync_batchnorm" not in findings and not rows,
        "opscope: neither finding nor table on the real trace")

step = next(e for e in events if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#"))
b = decimal.Decimal(str(step["ts"]))
edited = copy.deepcopy(events)
at = b + 100
for dur in (5, 300, 999, 1000, 2000):  # one after another, before the SyncBatchNorms
    edited.append({"ph": "X", "cat": "GC", "name": "GC", "pid": step["pid"], "tid": step["tid"],
                   "ts": str(at), "dur": dur})
    at += dur + 100
for i in range(25):
    edited.append({"ph": "X", "cat": "cpu_op", "name": "SyncBatchNorm", "pid": step["pid"],
                   "tid": step["tid"], "ts": str(b + 6000 + 100 * i), "dur": 20})
gc, gc_ns, syncbn = expected(edited)
findings, rows = run(edited, "edited")
g = findings.get("python_gc")
c.check(g is not None and gc == 2 and f"ran {gc} times for 1000 us or more: {gc_ns / 1e6:.3f} ms" in g["title"],
        f"python_gc: {gc} collections, {gc_ns} ns ({g and g['title']})")
row = rows.get("garbage collections of 1000 us or more")
c.check(row is not None and int(row["count"]) == gc and round(row["total_ns"]) == gc_ns,
        f"the table's collections: {row and (row['count'], row['total_ns'])}")
s = findings.get("sync_batchnorm")
c.check(s is not None and s["title"].startswith(f"{syncbn} SyncBatchNorm calls"),
        f"sync_batchnorm: {syncbn} calls ({s and s['title']})")

# Under the limit: 19 SyncBatchNorm events are no finding.
fewer = [e for e in edited if e["name"] != "SyncBatchNorm"] + [
    e for e in edited if e["name"] == "SyncBatchNorm"][:19]
findings, _ = run(fewer, "fewer")
c.check("sync_batchnorm" not in findings, "19 SyncBatchNorm events: no finding")
# The fused-optimizer advice (MindStudio's affinity-optimizer check): the real
# torch_npu step runs Optimizer.step#Adam.step, which torch_npu fuses as
# NpuFusedAdam; its share of the step, from the raw JSON.
step_ns = ns(step["dur"])
s0 = ns(step["ts"])
adam = sum(min(ns(e["ts"]) + ns(e["dur"]), s0 + step_ns) - max(ns(e["ts"]), s0)
           for e in events if e.get("ph") == "X" and e["name"] == "Optimizer.step#Adam.step"
           and ns(e["ts"]) < s0 + step_ns and ns(e["ts"]) + ns(e["dur"]) > s0)
findings, _ = run(events, "optimizer")
o = findings.get("fused_optimizer")
c.check(adam > 0 and o is not None and
        f"take {100.0 * adam / step_ns:.1f}% of the window ({adam / 1e6:.3f} ms)" in o["title"]
        and "NpuFusedAdam" in o["title"],
        f"fused_optimizer: Adam {adam} ns of {step_ns} ns ({o and o['title']})")
# The same optimizer on a GPU trace (Kineto, ROCm): no torch_npu advice.
result, out = c.analyze(opscope, os.path.join(data, "kineto", "mi250_rocm_train.json.gz"), "gpu")
with open(os.path.join(out, "analysis.json")) as f:
    gpu = [r["id"] for r in json.load(f)["results"] if r["section"] == "findings"]
c.check("fused_optimizer" not in gpu, f"a GPU trace with an optimizer step: no advice ({gpu})")

# The database export's GC_RECORD (startNs, endNs, globalTid), planted in a
# copy of the Level1 database rank with the same five collections.
database = os.path.join(data, "ascend", "level1_db", "rank0_ascend_pt")
copied, db_file = c.copy_rank(database, "db_gc")
con = sqlite3.connect(db_file)
start = con.execute("SELECT MIN(startNs) FROM TASK").fetchone()[0]
con.execute("CREATE TABLE GC_RECORD (startNs INTEGER, endNs INTEGER, globalTid INTEGER)")
for i, dur in enumerate((5, 300, 999, 1000, 2000)):
    con.execute("INSERT INTO GC_RECORD VALUES (?, ?, 0)",
                (start + 1_000_000 * i, start + 1_000_000 * i + dur * 1000))
con.commit()
con.close()
result, out = c.analyze(opscope, copied, "db_gc_out")
with open(os.path.join(out, "analysis.json")) as f:
    ids = {r["id"]: r for r in json.load(f)["results"] if r["section"] == "findings"}
g = ids.get("python_gc")
c.check(result.returncode == 0 and g is not None and
        "ran 2 times for 1000 us or more: 3.000 ms" in g["title"],
        f"the database's GC_RECORD: 2 collections, 3.000 ms ({g and g['title']})")
sys.exit(c.done())
