#!/usr/bin/env python3
"""Communication that loses bandwidth to MatMul beside it (issue 38, build 3):
msprof-analyze's bandwidth-contention check, and where opscope differs.

The real torch_npu rank in tests/data/ascend/level1_text has four all-reduces
that moved data over SDMA (communication.json); one of them runs while MatMul
tasks do (kernel_details.csv), at 15.77 GB/s, above msprof-analyze's mark of
0.8 x 18 GB/s (its rules/cn/bandwidth_contention.yaml): no finding. Edited
copies of the folder:
- beside: that operation's SDMA transfer takes twice as long (7.9 GB/s):
  contended, against the median bandwidth of the rank's SDMA operations that
  overlap no MatMul; the saving is its transfer time beyond that bandwidth;
- links: every SDMA transfer 2.2 times as long: the operation beside MatMul
  is under 14.4 GB/s (msprof-analyze reports it), but the rank's other
  operations are as slow without MatMul: the links are slow, not contended,
  and opscope says nothing;
- alone: only an operation that overlaps no MatMul made slow: nothing.

Expected values from the raw files (json, csv): the SDMA entry's size and
time per operation (MB = 10^6 bytes, ms), each operation's span from its
Start Timestamp(us) for its Elapse Time(ms), the MatMul tasks' spans (a
Name holding "matmul", Start Time(us), Duration(us)).

    bandwidth_contention_test.py OPSCOPE DATA_DIR
"""
import csv
import json
import os
import shutil
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
RANK = os.path.join(data, "ascend/level1_text/rank0_ascend_pt")
OUT = "ASCEND_PROFILER_OUTPUT"
with open(os.path.join(RANK, OUT, "communication.json")) as f:
    communication = json.load(f)
with open(os.path.join(RANK, OUT, "kernel_details.csv")) as f:
    matmuls = [(float(r["Start Time(us)"]), float(r["Duration(us)"]))
               for r in csv.DictReader(f) if "matmul" in r["Name"].lower()]


def operations(doc):
    """Each operation that moved data over SDMA: name -> (bytes, ns, beside MatMul)."""
    out = {}
    for step in doc.values():
        for ops in step.values():
            for name, op in ops.items():
                time = op["Communication Time Info"]
                sdma = op["Communication Bandwidth Info"].get("SDMA", {})
                if "Start Timestamp(us)" not in time or not sdma.get("Transit Size(MB)"):
                    continue
                begin = time["Start Timestamp(us)"]
                end = begin + time["Elapse Time(ms)"] * 1000
                beside = any(s < end and s + d > begin for s, d in matmuls)
                out[name.split("@")[0]] = (round(sdma["Transit Size(MB)"] * 1e6),
                                           round(sdma["Transit Time(ms)"] * 1e6), beside)
    return out


def edited(name, scale):
    """A copy of the rank whose operations `scale` names (name -> factor) take
    that much longer to move their SDMA data (HCCS, which it sums, too)."""
    folder = os.path.join(c.scratch, name + "_in", "rank0_ascend_pt")
    shutil.copytree(RANK, folder)
    doc = json.loads(json.dumps(communication))
    for step in doc.values():
        for ops in step.values():
            for op_name, op in ops.items():
                factor = scale(op_name.split("@")[0])
                if factor == 1:
                    continue
                for transport in ("SDMA", "HCCS"):
                    bw = op["Communication Bandwidth Info"][transport]
                    bw["Transit Time(ms)"] *= factor
                    if bw["Transit Time(ms)"] > 0:
                        bw["Bandwidth(GB/s)"] = bw["Transit Size(MB)"] / bw["Transit Time(ms)"]
    with open(os.path.join(folder, OUT, "communication.json"), "w") as f:
        json.dump(doc, f)
    return folder, doc


def report(path, name):
    run, out = c.analyze(opscope, path, name)
    c.check(run.returncode == 0, f"{name}: analysed (exit {run.returncode}) {run.stderr[-300:]}")
    with open(os.path.join(out, "analysis.json")) as f:
        found = [r for r in json.load(f)["results"] if r["section"] == "findings"
                 and r["id"] == "bandwidth_contention"]
    return found, c.rows(out, "bandwidth_contention")


ops = operations(communication)
beside = [n for n, (_, _, b) in ops.items() if b]
alone = [n for n, (_, _, b) in ops.items() if not b]
c.check(len(beside) == 1 and len(alone) == 3,
        f"the real rank: one SDMA operation beside MatMul ({beside}), three not ({alone})")
target = beside[0]
gbps = ops[target][0] / ops[target][1]
c.check(gbps >= 14.4, f"it moved its data at {gbps:.2f} GB/s, not under 14.4")

found, rows = report(RANK, "clean")
c.check(not found, f"the real rank: no finding ({found and found[0]['title']})")
c.check([(r["operation"], r["contended"]) for r in rows] == [(target, "no")]
        and abs(float(rows[0]["bytes_per_s"]) - gbps * 1e9) < 1e3,
        f"the real rank: the table lists '{target}' at {gbps:.2f} GB/s, not contended ({rows})")

# Twice as slow beside MatMul: contended.
folder, doc = edited("beside", lambda n: 2 if n == target else 1)
ops2 = operations(doc)
reference = statistics.median(ops2[n][0] / ops2[n][1] for n in alone)
slow = ops2[target][0] / ops2[target][1]
c.check(slow < 14.4 and slow < 0.9 * reference,
        f"edited: {slow:.2f} GB/s, under 14.4 and 90% of the {reference:.2f} GB/s without MatMul")
lost = ops2[target][1] - int(ops2[target][0] / reference)
found, rows = report(folder, "beside")
c.check(len(found) == 1 and target in found[0]["evidence"] and f"{slow:.2f} GB/s" in found[0]["evidence"]
        and f"{reference:.2f} GB/s" in found[0]["evidence"]
        and abs(found[0]["saving_ns"] - lost) <= 2,
        f"contended: the finding names '{target}' at {slow:.2f} GB/s against {reference:.2f} GB/s, "
        f"saving {lost} ns ({found and (found[0]['evidence'][:200], found[0]['saving_ns'])}; "
        "within 2 ns: the median is a quotient of doubles)")
c.check([r["contended"] for r in rows] == ["yes"], "the table marks it contended")

# Every link slow: under msprof-analyze's mark, but not contention.
folder, doc = edited("links", lambda n: 2.2)
ops3 = operations(doc)
reference = statistics.median(ops3[n][0] / ops3[n][1] for n in alone)
slow = ops3[target][0] / ops3[target][1]
c.check(slow < 14.4 and slow >= 0.9 * reference,
        f"links: {slow:.2f} GB/s beside MatMul, under 14.4, but not under 90% of "
        f"{reference:.2f} GB/s without it")
found, rows = report(folder, "links")
c.check(not found, f"links slow everywhere: no finding ({found and found[0]['title']})")
c.check([r["contended"] for r in rows] == ["no"], "the table lists it, not contended")

# Only an operation that overlaps no MatMul slow: nothing.
found, _ = report(edited("alone", lambda n: 3 if n == alone[0] else 1)[0], "alone")
c.check(not found, "a slow transfer beside no MatMul: no finding")
sys.exit(c.done())
