#!/usr/bin/env python3
"""The roofline's FLOPs from recorded shapes of matrix multiplies (issue 36,
roofline), on a Kineto trace that writes "Input Dims" indented over lines, as
PyTorch 2 does (h100_Qwen1.5-0.5B-Chat: every value on its own line). Before
this test the shape reader stopped at the first line break and the trace had
no roofline at all.

Expected values from the raw trace with Python's json: per operator, its
calls and 2*m*k*n summed over them (aten::mm [[m,k],[k,n]]; aten::addmm
[bias,[m,k],[k,n],..]; aten::linear [[...,k],[n,k],...], m the product of the
leading dimensions). The same trace written compact gives the same table.

    roofline_shapes_test.py OPSCOPE DATA_DIR
"""
import gzip
import json
import os
import sys
from math import prod

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
path = os.path.join(data, "kineto/h100_Qwen1.5-0.5B-Chat.json.gz")
trace = json.load(gzip.open(path, "rt"))
raw = gzip.open(path, "rt").read()
c.check('"Input Dims": [\n' in raw, "the sample writes Input Dims indented over lines")


def flops(name, dims):
    if name == "aten::mm" and len(dims) == 2:
        (m, k), (_, n) = dims
    elif name == "aten::addmm" and len(dims) == 5:
        (m, k), (_, n) = dims[1], dims[2]
    elif name == "aten::linear" and len(dims) in (2, 3):
        m, k, n = prod(dims[0][:-1]), dims[0][-1], dims[1][0]
    else:
        return None
    return 2 * m * k * n


want = {}
for e in trace["traceEvents"]:
    if e.get("ph") != "X" or e.get("cat") != "cpu_op":
        continue
    f = flops(e["name"], e.get("args", {}).get("Input Dims", []))
    if f is not None:
        calls, total = want.get(e["name"], (0, 0))
        want[e["name"]] = (calls + 1, total + f)
c.check(set(want) == {"aten::mm", "aten::addmm", "aten::linear"},
        f"the raw trace has {sorted(want)}")


def roofline(trace_path, name):
    run, out = c.analyze(opscope, trace_path, name)
    c.check(run.returncode == 0, f"{name}: analysed (exit {run.returncode})")
    return {r["operator"]: {k: v for k, v in r.items() if k != "trace"}
            for r in c.rows(out, "roofline")}


got = roofline(path, "indented")
for op, (calls, total) in sorted(want.items()):
    row = got.get(op)
    c.check(row is not None and int(row["calls"]) == calls and int(row["flops"]) == total,
            f"indented: {op}: {calls} calls, {total / 1e9:.3f} GFLOP "
            f"(opscope: {row and row['calls']}, {row and int(row['flops']) / 1e9:.3f})")

compact = os.path.join(c.scratch, "compact.json")
with open(compact, "w") as f:
    json.dump(trace, f, separators=(",", ":"))
c.check(roofline(compact, "compact") == got, "compact: the same roofline table")
sys.exit(c.done())
