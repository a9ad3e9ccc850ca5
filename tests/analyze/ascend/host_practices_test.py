#!/usr/bin/env python3
"""Host practices Ascend's advisors check (issue 38): Python's
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
same figures. And msprof-analyze's memory rule (the CANN memory calls taking
10 ms or more in all), planted the same way, with the device's idle time
during them restated from the raw JSON.

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

# msprof-analyze's memory rule (rules/en/memory.yaml, MemCollector): the CANN
# calls AscendCL@aclMallocMemInner, AscendCL@aclrtFreePhysical and
# AscendCL@aclrtFree, a finding where one name's calls take 10,000 us or more
# in all. The real trace has one aclMallocMemInner of 72.8 us: silent. Planted
# on a thread of the CANN process: 40 aclrtFree calls of 300 us inside the
# step (12 ms: listed) and 20 aclMallocMemInner of 400 us (8.07 ms with the
# real one: not listed). The device's idle time during the frees inside the
# step, from the raw JSON: the step less the union of the "Ascend Hardware"
# process's events, intersected with each call.
findings, _ = run(events, "memory_real")
c.check("memory_operators" not in findings, "the real trace's one allocation: no finding")
cann = next(e for e in events if e["name"] == "AscendCL@aclMallocMemInner")
planted = copy.deepcopy(events)
frees = []
for i in range(40):
    ts = b + 500 + 310 * i
    planted.append({"ph": "X", "name": "AscendCL@aclrtFree", "pid": cann["pid"], "tid": 999999,
                    "ts": str(ts), "dur": 300})
    frees.append((ns(str(ts)), ns(str(ts)) + 300_000))
for i in range(20):
    planted.append({"ph": "X", "name": "AscendCL@aclMallocMemInner", "pid": cann["pid"],
                    "tid": 999998, "ts": str(b + 500 + 410 * i), "dur": 400})
hardware = next(e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
                and e["args"]["name"] == "Ascend Hardware")
busy = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events
              if e.get("ph") == "X" and e["pid"] == hardware and ns(e["dur"]) > 0)
merged = []
for lo, hi in busy:
    if merged and lo <= merged[-1][1]:
        merged[-1][1] = max(merged[-1][1], hi)
    else:
        merged.append([lo, hi])
step_end = s0 + step_ns


def idle_in(lo, hi):
    lo, hi = max(lo, s0), min(hi, step_end)
    if hi <= lo:
        return 0
    return (hi - lo) - sum(max(0, min(hi, y) - max(lo, x)) for x, y in merged)


idle = sum(idle_in(lo, hi) for lo, hi in frees)
findings, _ = run(planted, "memory_planted")
m = findings.get("memory_operators", {})
c.check(f"for 12.000 ms, and the device idles {idle / 1e6:.3f} ms of it" in m.get("title", "")
        and "AscendCL@aclrtFree 40 calls 12.000 ms" in m.get("evidence", "")
        and "aclMallocMemInner" not in m.get("evidence", "") and "empty_cache" in m.get("action", "")
        and "expandable_segments" not in m.get("action", ""),
        f"memory_operators: the frees, 12.000 ms, {idle} ns of device idle ({m.get('title')}; "
        f"{m.get('evidence')})")
# The allocations over 10 ms too (26 of 400 us): both listed, both levers.
planted += [{"ph": "X", "name": "AscendCL@aclMallocMemInner", "pid": cann["pid"], "tid": 999998,
             "ts": str(b + 500 + 410 * i), "dur": 400} for i in range(20, 26)]
findings, _ = run(planted, "memory_both")
m = findings.get("memory_operators", {})
# The title's time is the union of the listed calls (the two threads' calls
# overlap), the device's idle time within it.
union = sorted(frees + [(ns(str(b + 500 + 410 * i)), ns(str(b + 500 + 410 * i)) + 400_000)
                        for i in range(26)] + [(ns(cann["ts"]), ns(cann["ts"]) + ns(cann["dur"]))])
calls = []
for lo, hi in union:
    if calls and lo <= calls[-1][1]:
        calls[-1][1] = max(calls[-1][1], hi)
    else:
        calls.append([lo, hi])
total, idle = sum(hi - lo for lo, hi in calls), sum(idle_in(lo, hi) for lo, hi in calls)
c.check("AscendCL@aclMallocMemInner 27 calls 10.473 ms" in m.get("evidence", "")
        and "expandable_segments:True" in m.get("action", "")
        and f"for {total / 1e6:.3f} ms, and the device idles {idle / 1e6:.3f} ms of it ("
        f"{100 * idle / step_ns:.1f}% of" in m.get("title", ""),
        f"memory_operators: 27 allocations of 10.473 ms listed with their lever, the union "
        f"{total} ns, {idle} ns idle ({m.get('title')})")

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

# msprof-analyze's synchronize rule (rules/en/synchronize.yaml): the CANN calls
# Node@launch and AscendCL@aclrtSynchronizeStream* in time order; a
# synchronisation directly after a launch is a co-occurrence, and more than
# 0.5 of the launches so followed means a synchronous run. The real Level1
# rank: silent. A copy with a 15 us synchronisation planted after each
# launch on the launching thread: it fires with the counts and time restated
# here, and names the variable as the likely cause (the run records none).
rank_dir = os.path.join(data, "ascend", "level1_text_2rank", "rank0_ascend_pt",
                        "ASCEND_PROFILER_OUTPUT")
with open(os.path.join(rank_dir, "trace_view.json")) as f:
    timeline = json.load(f)


def synchronize_rule(events):
    seq = sorted((ns(e["ts"]), e["name"]) for e in events if e.get("ph") == "X" and (
        e["name"].startswith("Node@launch") or
        e["name"].startswith("AscendCL@aclrtSynchronizeStream")))
    durations = {}
    for e in events:
        if e.get("ph") == "X" and e["name"].startswith("AscendCL@aclrtSynchronizeStream"):
            durations[(ns(e["ts"]), e["name"])] = ns(e["dur"])
    launches = sum(1 for _, n in seq if n.startswith("Node@launch"))
    co = [(t, n) for i, (t, n) in enumerate(seq) if n.startswith("AscendCL@aclrtSynchronizeStream")
          and i > 0 and seq[i - 1][1].startswith("Node@launch")]
    return launches, len(co), sum(durations[k] for k in co)


launches, co, _ = synchronize_rule(timeline)
findings, _ = run(timeline, "sync_real")
c.check(launches > 0 and co / launches <= 0.5 and "launch_blocking" not in findings,
        f"the real rank: {co} of {launches} launches followed by a synchronisation: silent")
planted = copy.deepcopy(timeline)
for e in timeline:
    if e.get("ph") == "X" and e["name"] == "Node@launch":
        end = decimal.Decimal(str(e["ts"])) + decimal.Decimal(str(e["dur"]))
        planted.append({"name": "AscendCL@aclrtSynchronizeStream", "pid": e["pid"],
                        "tid": e["tid"], "ts": str(end + decimal.Decimal("0.5")), "dur": 15,
                        "ph": "X", "args": {"Thread Id": e["tid"], "Mode": "ACL_RTS",
                                            "level": "acl"}})
launches, co, co_ns = synchronize_rule(planted)
findings, _ = run(planted, "sync_planted")
f = findings.get("launch_blocking", {})
c.check(co / launches > 0.5 and f.get("severity") == "warning" and
        f"({co} of {launches})" in f.get("title", "") and
        f"{co_ns / 1e6:.3f} ms in them" in f.get("evidence", "") and
        "ASCEND_LAUNCH_BLOCKING=1" in f.get("action", ""),
        f"planted: {co} of {launches} launches followed, {co_ns} ns: {f.get('title')} | "
        f"{f.get('evidence', '')[:160]}")

# The same planted timeline in a rank whose profiler_metadata.json records the
# variable: set to 1, the environment finding says it and this one is silent;
# set to 0, this one fires and says the variable is not the cause.
for value in ("1", "0"):
    rank = os.path.join(c.scratch, f"blocking_{value}", "rank0_ascend_pt")
    os.makedirs(os.path.join(rank, "ASCEND_PROFILER_OUTPUT"))
    with open(os.path.join(rank, "ASCEND_PROFILER_OUTPUT", "trace_view.json"), "w") as out_file:
        json.dump(planted, out_file)
    with open(os.path.join(rank, "profiler_metadata.json"), "w") as out_file:
        json.dump({"ENV_VARIABLES": {"ASCEND_LAUNCH_BLOCKING": value}}, out_file)
    result, out = c.analyze(opscope, rank, f"blocking_{value}_out")
    with open(os.path.join(out, "analysis.json")) as f:
        ids = {r["id"]: r for r in json.load(f)["results"] if r["section"] == "findings"}
    if value == "1":
        c.check("environment" in ids and "ASCEND_LAUNCH_BLOCKING" in
                json.dumps(ids["environment"]) and "launch_blocking" not in ids,
                f"ASCEND_LAUNCH_BLOCKING=1 recorded: the environment finding only ({list(ids)})")
    else:
        lb = ids.get("launch_blocking", {})
        c.check("ASCEND_LAUNCH_BLOCKING=0" in lb.get("evidence", "") and
                "is not 1" in lb.get("action", ""),
                f"ASCEND_LAUNCH_BLOCKING=0 recorded: the cause is not the variable "
                f"({lb.get('evidence', '')[-60:]})")
sys.exit(c.done())
