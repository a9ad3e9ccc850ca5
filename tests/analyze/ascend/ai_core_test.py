#!/usr/bin/env python3
"""The AI Core pipeline table of `opscope analyze`, checked against an
independent computation over the raw kernel_details.csv and l2_cache.csv with
Python's csv module.

The rules computed here come from the documents, not from opscope's code:
- CANN's PipeUtilization reference: each *_ratio is the share of a core's
  cycles in one pipe's instructions; aic_* are the cube core's, aiv_* the
  vector core's (a task that did not run on a core writes 0 there, with 0
  total cycles).
- msprof-analyze's advisor: a pipe at 80% or more bounds an operator; an
  operator of 20 us or more with every pipe below 80% is bound by none.
Per operator (kernel name), each pipe's ratio is the mean over its tasks
weighted by task duration; scalar and MTE2, present on both cores, take the
larger of the two per task. L2 rates join l2_cache.csv on (stream, task, name).

    ai_core_test.py OPSCOPE DATA_DIR
"""
import collections
import csv
import decimal
import json
import os
import subprocess
import sys
import tempfile

PIPES = ["cube", "vector", "scalar", "mte1", "mte2", "mte3", "fixpipe"]
# pipe -> [(column, core)]; core: the cycles column that says the core ran.
COLUMNS = {
    "cube": [("aic_mac_ratio", "aic_total_cycles")],
    "vector": [("aiv_vec_ratio", "aiv_total_cycles")],
    "scalar": [("aic_scalar_ratio", "aic_total_cycles"), ("aiv_scalar_ratio", "aiv_total_cycles")],
    "mte1": [("aic_mte1_ratio", "aic_total_cycles")],
    "mte2": [("aic_mte2_ratio", "aic_total_cycles"), ("aiv_mte2_ratio", "aiv_total_cycles")],
    "mte3": [("aiv_mte3_ratio", "aiv_total_cycles")],
    "fixpipe": [("aic_fixpipe_ratio", "aic_total_cycles")],
}


def ns(text):
    return int((decimal.Decimal(text.strip()) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def number(text):
    text = (text or "").strip()
    if text in ("", "N/A"):
        return None
    return float(text)


def expected(output_dir):
    with open(os.path.join(output_dir, "l2_cache.csv"), newline="") as f:
        l2 = collections.defaultdict(list)
        for r in csv.DictReader(f):
            l2[(r["Stream Id"].strip(), r["Task Id"].strip(), r["Op Name"].strip())].append(
                (number(r["Hit Rate"]), number(r["Victim Rate"])))
    with open(os.path.join(output_dir, "kernel_details.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    ops = {}
    for r in rows:
        name = r["Name"].strip()
        dur = ns(r["Duration(us)"])
        w = max(dur, 1)
        op = ops.setdefault(name, {"count": 0, "total": 0, "measured": 0,
                                   "sum": collections.defaultdict(float),
                                   "weight": collections.defaultdict(float),
                                   "blocks": [0.0, 0.0], "victim": [0.0, 0.0]})
        op["count"] += 1
        op["total"] += dur
        blocks = number(r["Block Dim"])
        if blocks is not None:
            op["blocks"][0] += blocks * w
            op["blocks"][1] += w
        values = {}
        for pipe, cols in COLUMNS.items():
            for col, cycles in cols:
                v = number(r[col])
                ran = (number(r[cycles]) or 0) > 0
                if v is not None and ran:
                    values[pipe] = max(values.get(pipe, -1), min(v, 1.0))
        if values:
            op["measured"] += 1
            for pipe, v in values.items():
                op["sum"][pipe] += v * w
                op["weight"][pipe] += w
        queue = l2.get((r["Stream ID"].strip(), r["Task ID"].strip(), name))
        if queue:
            hit, victim = queue.pop(0)
            if victim is not None:
                op["victim"][0] += victim * w
                op["victim"][1] += w
    out = {}
    for name, op in ops.items():
        if op["measured"] == 0 and op["victim"][1] == 0:
            continue
        ratio = {p: op["sum"][p] / op["weight"][p] for p in PIPES if op["weight"][p] > 0}
        best = max(ratio, key=lambda p: ratio[p]) if ratio else None
        mean_task = op["total"] / op["count"]
        if best is None:
            bound = ""
        elif ratio[best] >= 0.8:
            bound = {"cube": "cube-bound", "vector": "vector-bound",
                     "scalar": "scalar-bound"}.get(best, "memory-bound (%s)" % best.upper()
                                                   .replace("FIXPIPE", "fixpipe"))
        elif mean_task >= 20000:
            bound = "bound by no pipe"
        else:
            bound = ""
        out[name] = {"count": op["count"], "total_us": op["total"] / 1000, "ratio": ratio,
                     "bound": bound, "victim": op["victim"][0] / op["victim"][1]
                     if op["victim"][1] else None,
                     "blocks": op["blocks"][0] / op["blocks"][1] if op["blocks"][1] else None}
    return out


def main():
    opscope, data = sys.argv[1], sys.argv[2]
    tree = os.path.join(data, "ascend", "level1_text")
    output_dir = os.path.join(tree, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    want = expected(output_dir)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([opscope, "analyze", tree, "--top", "0", "--out", tmp], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(tmp, "analysis.json")) as f:
            results = json.load(f)["results"]
    got = {r["name"]: r for r in results if r.get("section") == "core_pipes"}
    if set(got) != set(want):
        failures.append("operators differ: only opscope %s, only expected %s" %
                        (sorted(set(got) - set(want))[:5], sorted(set(want) - set(got))[:5]))
    bounds = collections.Counter()
    for name, w in want.items():
        g = got.get(name)
        if g is None:
            continue
        if g["count"] != w["count"] or abs(g["total_ns"] / 1e3 - w["total_us"]) > 1e-6:
            failures.append("%s: count/total %s/%s us, expected %s/%s" %
                            (name, g["count"], g["total_ns"] / 1e3, w["count"], w["total_us"]))
        for p in PIPES:
            e, a = w["ratio"].get(p), g[p + "_ratio"]
            if (e is None) != (a is None) or (e is not None and abs(e - a) > 1e-9):
                failures.append("%s: %s ratio %s, expected %s" % (name, p, a, e))
        if g["bound"] != w["bound"]:
            failures.append("%s: bound %r, expected %r" % (name, g["bound"], w["bound"]))
        for key, mine in (("l2_victim_rate", w["victim"]), ("mean_blocks", w["blocks"])):
            a = g[key]
            if (mine is None) != (a is None) or (mine is not None and abs(mine - a) > 1e-9):
                failures.append("%s: %s %s, expected %s" % (name, key, a, mine))
        bounds[w["bound"]] += 1
    # The same file on standard input (no name to recognise it by, no
    # l2_cache.csv beside it): the same operators, ratios and verdicts.
    with tempfile.TemporaryDirectory() as tmp, \
            open(os.path.join(output_dir, "kernel_details.csv"), "rb") as f:
        subprocess.run([opscope, "analyze", "-", "--top", "0", "--out", tmp], check=True,
                       stdin=f, stdout=subprocess.DEVNULL)
        with open(os.path.join(tmp, "analysis.json")) as out:
            piped = {r["name"]: r for r in json.load(out)["results"]
                     if r.get("section") == "core_pipes"}
    if set(piped) != set(want):
        failures.append("on standard input, operators differ: %d vs %d expected" %
                        (len(piped), len(want)))
    for name, g in piped.items():
        w = want.get(name)
        if w is None:
            continue
        for p in PIPES:
            e, a = w["ratio"].get(p), g[p + "_ratio"]
            if (e is None) != (a is None) or (e is not None and abs(e - a) > 1e-9):
                failures.append("on standard input, %s: %s ratio %s, expected %s" % (name, p, a, e))
        if g["bound"] != w["bound"] or g["l2_victim_rate"] is not None:
            failures.append("on standard input, %s: bound %r (expected %r), L2 victim rate %s" %
                            (name, g["bound"], w["bound"], g["l2_victim_rate"]))
    # Roofline points of the matrix multiplies, from their shapes: 2*M*N*K with
    # M, N the output's dimensions and K the one the inputs share (ND formats).
    flops = collections.defaultdict(int)
    with open(os.path.join(output_dir, "kernel_details.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["Type"] not in ("MatMulV2", "MatMulV3") or "FORMAT_ND" not in r["Input Formats"]:
                continue
            a_shape, b_shape = [[int(d) for d in t.split(",")]
                                for t in r["Input Shapes"].strip('"').split(";")[:2]]
            m, n = [int(d) for d in r["Output Shapes"].strip('"').split(",")]
            k = a_shape[1] if a_shape[0] == m else a_shape[0]
            assert sorted(b_shape) == sorted([k, n]), r["Name"]
            flops[r["Name"]] += 2 * m * n * k
    roofline = {r["operator"]: r for r in results if r.get("section") == "roofline"}
    for name, f in flops.items():
        if name not in roofline or abs(roofline[name]["flops"] - f) > 1e-3:
            failures.append("roofline %s: %s FLOPs, expected %s" %
                            (name, roofline.get(name, {}).get("flops"), f))
    if len(flops) < 3:
        failures.append("the sample has %d matrix multiplies: the check is too weak" % len(flops))
    # The sample must exercise the verdicts, or this test proves little.
    for needed in ("memory-bound (MTE2)", "cube-bound", "bound by no pipe"):
        if bounds[needed] == 0:
            failures.append("the sample has no %r operator: the check is too weak" % needed)
    if failures:
        print("\n".join(failures[:40]))
        return 1
    print("AI Core pipeline: %d operators match (%s)" %
          (len(want), ", ".join("%s %d" % (k or "not judged", v) for k, v in bounds.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
