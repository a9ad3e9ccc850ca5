#!/usr/bin/env python3
"""TransData tasks and the framework operators that needed them, checked
against an independent computation with Python's json module over the real
torch_npu trace_view.json samples (tests/data/ascend/trace_view.json and the
level-0 tree's).

docs/formats/ascend.md 3.1: an "async_npu" flow (torch_to_npu) starts inside the torch
operator that launched a device task, on its thread, and ends at the task's
start on its stream. For each TransData task: its flow's start, the innermost
cpu_op open at that time on that thread (the latest started; the last in the
file among equal starts), and past any layout or copy operator
(npu_format_cast, contiguous, copy_, clone, to, _to_copy) to the operator around
it. Counted per operator, the most time first, the largest four shown as
"name xN (T ms)".

    layout_test.py OPSCOPE DATA_DIR
"""
import collections
import decimal
import json
import os
import subprocess
import sys
import tempfile

LAYOUT_OR_COPY = {"contiguous", "npu_format_cast", "npu_format_cast_", "_npu_format_cast",
                  "copy_", "clone", "to", "_to_copy"}


def ns(v):
    return int((decimal.Decimal(str(v)) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def op_type(name):
    for part in reversed(name.split("_")):
        if part and not part.isdigit():
            return part
    return name


def expected(path):
    events = json.load(open(path))
    process = {e["pid"]: e["args"]["name"] for e in events
               if e.get("ph") == "M" and e.get("name") == "process_name"}
    ops = collections.defaultdict(list)  # (pid, tid) -> [(start, end, index, name)]
    tasks = {}
    for i, e in enumerate(events):
        if e.get("ph") != "X":
            continue
        start = ns(e["ts"])
        end = start + ns(e["dur"])
        if e.get("cat") == "cpu_op":
            ops[(e["pid"], e["tid"])].append((start, end, i, e["name"]))
        elif process.get(e["pid"]) == "Ascend Hardware":
            tasks[(e["pid"], e["tid"], start)] = (e["name"], end - start)
    flows = collections.defaultdict(dict)
    for e in events:
        if e.get("ph") in ("s", "f") and e.get("cat") == "async_npu":
            flows[e["id"]][e["ph"]] = e

    def enclosing(key, t, inside=None):
        best = None
        for o in ops[key]:
            if o[0] <= t <= o[1] and o is not inside and (
                    inside is None or (o[0] <= inside[0] and o[1] >= inside[1])):
                if best is None or (o[0], o[2]) > (best[0], best[2]):
                    best = o
        return best

    causes = collections.defaultdict(lambda: [0, 0])
    transdata = 0
    for pair in flows.values():
        if "s" not in pair or "f" not in pair:
            continue
        f = pair["f"]
        task = tasks.get((f["pid"], f["tid"], ns(f["ts"])))
        if task is None or op_type(task[0]) != "TransData":
            continue
        s = pair["s"]
        key = (s["pid"], s["tid"])
        op = enclosing(key, ns(s["ts"]))
        while op is not None and op[3].split("::")[-1] in LAYOUT_OR_COPY:
            outer = enclosing(key, op[0], inside=op)
            if outer is None:
                break
            op = outer
        if op is None:
            continue
        transdata += 1
        causes[op[3]][0] += 1
        causes[op[3]][1] += task[1]
    ranked = sorted(sorted(causes.items()), key=lambda kv: -kv[1][1])
    text = ", ".join("%s x%d (%.3f ms)" % (n, c, t / 1e6) for n, (c, t) in ranked[:4])
    if len(ranked) > 4:
        text += ", %d more" % (len(ranked) - 4)
    return text, transdata, sum(1 for k, v in tasks.items() if op_type(v[0]) == "TransData")


def main():
    opscope, data = sys.argv[1], sys.argv[2]
    failures = []
    for sample in (os.path.join(data, "ascend", "trace_view.json"),
                   os.path.join(data, "ascend", "level0_text", "rank0_ascend_pt",
                                "ASCEND_PROFILER_OUTPUT", "trace_view.json")):
        want, linked, total = expected(sample)
        if linked < 10:
            failures.append("%s: only %d TransData tasks linked: the check proves nothing" %
                            (sample, linked))
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([opscope, "analyze", sample, "--top", "0", "--format", "json",
                            "--out", tmp], check=True, stdout=subprocess.DEVNULL)
            results = json.load(open(os.path.join(tmp, "analysis.json")))["results"]
        rows = [r for r in results if r.get("section") == "layout_conversions" and
                r["name"] == "TransData"]
        if len(rows) != 1:
            failures.append("%s: TransData rows %s" % (sample, rows))
            continue
        got = rows[0]["caused_by"]
        if linked < total:
            want += "; x%d not linked to an operator" % (total - linked)
        if got != want:
            failures.append("%s:\n  got      %s\n  expected %s" % (sample, got, want))
        else:
            print("%s: %d of %d TransData tasks linked: %s" % (sample, linked, total, got))
    if failures:
        print("\n".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
