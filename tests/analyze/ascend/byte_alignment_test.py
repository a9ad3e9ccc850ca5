#!/usr/bin/env python3
"""The byte_alignment rule against msprof-analyze's published rule (its
advisor's rules/en/byte_alignment.yaml, min_size 512, and
ByteAlignmentChecker's conditions), restated over each form of torch_npu's
communication plane tasks read with Python's json and sqlite3 modules
(docs/formats/ascend.md 3.1, 4.5 and the ENUM_HCCL_* tables):

- the tasks: Memcpy and Reduce_Inline over SDMA (transport type "SDMA",
  transportType 0) on a link between chips (not ON_CHIP, linkType 0) moving
  more than 512 bytes;
- an operation (hcom_*) is named where one of its tasks' size is not a
  multiple of 512; its unaligned time is those tasks' time;
- trace_view.json: a task belongs to the hcom_* event whose span holds its
  start; the database: to COMMUNICATION_OP by opId.

Checked on the level-1 text rank and the level-1 database (each its own
run): the operations named and each one's unaligned tasks and time.

    byte_alignment_test.py OPSCOPE DATA_DIR
"""
import decimal
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()


def ns(v):
    return int((decimal.Decimal(str(v)) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def checked(name, transport, link, size):
    return name in ("Memcpy", "Reduce_Inline") and transport == "SDMA" and \
        link not in ("ON_CHIP", None) and size > 512


def from_trace_view(path):
    with open(path) as f:
        events = [e for e in json.load(f) if e.get("ph") == "X"]
    ops = sorted(((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]) for e in events
                  if e["name"].lower().startswith("hcom")))
    out = {}
    for e in events:
        a = e.get("args") or {}
        size = int(a.get("size(Byte)", 0) or 0)
        if not checked(e["name"], a.get("transport type"), a.get("link type"), size):
            continue
        t = ns(e["ts"])
        holders = [o for o in ops if o[0] <= t <= o[1]]
        if not holders:
            continue
        op = max(holders)[2]
        if size % 512:
            n, d = out.get(op, (0, 0))
            out[op] = (n + 1, d + ns(e["dur"]))
    return out


LINKS = ["ON_CHIP", "HCCS", "PCIE", "ROCE", "SIO", "HCCS_SW", "STANDARD_ROCE"]


def from_db(path):
    db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    strings = dict(db.execute("SELECT id, value FROM STRING_IDS"))
    ops = {op_id: strings[name] for op_id, name in db.execute("SELECT opId, opName FROM COMMUNICATION_OP")}
    out = {}
    for task, transport, link, size, op, start, end in db.execute(
            "SELECT i.taskType, i.transportType, i.linkType, i.size, i.opId, t.startNs, t.endNs "
            "FROM COMMUNICATION_TASK_INFO i JOIN TASK t ON t.globalTaskId = i.globalTaskId"):
        name = strings.get(task, "")
        transport = ["SDMA", "RDMA", "LOCAL"][transport] if 0 <= transport <= 2 else None
        link = LINKS[link] if 0 <= link < len(LINKS) else None
        if not checked(name, transport, link, size) or op not in ops:
            continue
        if size % 512:
            n, d = out.get(ops[op], (0, 0))
            out[ops[op]] = (n + 1, d + int(end) - int(start))
    return out


cases = [
    ("ascend/level1_text_2rank/rank0_ascend_pt",
     from_trace_view(os.path.join(data, "ascend/level1_text_2rank/rank0_ascend_pt/"
                                  "ASCEND_PROFILER_OUTPUT/trace_view.json"))),
    ("ascend/level1_db/rank0_ascend_pt",
     from_db(os.path.join(data, "ascend/level1_db/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
                          "ascend_pytorch_profiler_0.db"))),
]
for rank, want in cases:
    run, out = c.analyze(opscope, os.path.join(data, rank), rank.replace("/", "_"))
    got = {r["operation"]: (int(r["unaligned_tasks"]), int(r["unaligned_ns"]))
           for r in c.rows(out, "byte_alignment")}
    c.check(run.returncode == 0 and want and got == want,
            f"{rank}: operations with unaligned copies {want} (got {got})")
    with open(os.path.join(out, "analysis.json")) as f:
        found = [r for r in json.load(f)["results"]
                 if r.get("section") == "findings" and r["id"] == "byte_alignment"]
    c.check(len(found) == 1 and found[0]["title"].startswith(f"{len(want)} communication operations"),
            f"{rank}: one byte_alignment finding naming {len(want)} operations "
            f"({[f['title'] for f in found]})")

# A rank whose plane tasks are all whole 512-byte units: no finding.
run, out = c.analyze(opscope, os.path.join(data, "ascend/level0_text/rank0_ascend_pt"), "level0")
with open(os.path.join(out, "analysis.json")) as f:
    found = [r for r in json.load(f)["results"]
             if r.get("section") == "findings" and r["id"] == "byte_alignment"]
c.check(not found, f"Level0 (no plane tasks recorded): no byte_alignment finding ({found})")
sys.exit(c.done())
