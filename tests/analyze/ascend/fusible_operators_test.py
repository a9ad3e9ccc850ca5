#!/usr/bin/env python3
"""The fusible_operators rule and its table (fusible_sequences) against the
rule restated here over kernel_details.csv read with Python's csv module,
from msprof-analyze's rules/en/fusible_operator.yaml and the differences
opscope states (src/analyze/importers/ascend/fusible_sequences.h):

- the tasks in start order; each is its Name with its Input and Output
  Shapes; a task on the AI CPU or of communication (Accelerator Core or Type
  AI_CPU, HCCL or COMMUNICATION; a name starting hcom, lccl or lcoc) breaks
  runs;
- a run is 2 to 10 consecutive tasks; its occurrences are summed (span: the
  first start to the latest end; device: the durations; idle: the gaps
  between its operators in which no compute task of the file runs, except a
  gap within 50 us of which another task ends before the next operator
  starts (it waited for that task), and a gap before a graph model's task
  (Model ID other than 4294967295); MTE: the larger MTE2 of the two
  cores plus the larger of fixpipe and MTE3; core: the larger of
  aicore_time and aiv_time);
- reported where it recurs 6 times or more and is host-bound (idle over 60%
  of the span; then its span 1% or more of the tasks' span) or MTE-bound
  (MTE over 80% of the core time);
- what a run puts at stake: its idle time where host-bound, its operators'
  time where MTE-bound (both where both);
- the candidates taken by stake (then length, then first position), the
  first 64, each keeping the occurrences that share no task with a run
  already kept (nor with its own), reported if those still make it one; the
  first 20 by stake.

Cases: the real level-1 rank (191 tasks, nothing recurs 6 times): no table,
no finding; its step repeated 8 times (each copy 1 ms after the last), read
as the rank's folder and as the CSV alone: the same runs, counts, rows,
spans, idle and device times and MTE shares as here, and no run across the
65 ms the step's TensorMove waits for the all-reduce host-bound
(msprof-analyze's test, the run's own tasks against its span, calls it so);
the same tasks in a graph model (Model ID 1): MTE-bound runs only; the same
with communication tasks placed between the repeated copies' operators; the
level-0 rank's file (no PMU columns) repeated: host-bound runs only, no MTE
share (info: under 30% of the tasks' span at stake); the tasks of its most
idle run alone, repeated: a warning.

    fusible_operators_test.py OPSCOPE DATA_DIR
"""
import csv
import json
import os
import shutil
import struct
import sys
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
LEVEL1 = os.path.join(data, "ascend", "level1_text", "rank0_ascend_pt")
LEVEL0 = os.path.join(data, "ascend", "level0_text", "rank0_ascend_pt")


def details(rank):
    return os.path.join(rank, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def us_to_ns(text):
    return int(Decimal(text.strip()) * 1000)


def f32(x):
    """The finder keeps a task's MTE and core times as 32-bit floats."""
    return struct.unpack("f", struct.pack("f", x))[0]


def number(row, column):
    text = (row.get(column) or "").strip()
    if text in ("", "N/A"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def larger(a, b):
    return b if a is None else a if b is None else max(a, b)


def shape(text):
    text = (text or "").strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1]
    return "" if text == "N/A" else text


def label(row):
    ins, outs = shape(row.get("Input Shapes")), shape(row.get("Output Shapes"))
    if not ins and not outs:
        return row["Name"]
    return f"{row['Name']} [{ins or '?'}->{outs or '?'}]"


def breaks(row):
    kinds = (row.get("Accelerator Core", ""), row.get("Type", ""))
    return any(k in ("AI_CPU", "HCCL", "COMMUNICATION") for k in kinds) or \
        row["Name"][:4].lower() in ("hcom", "lccl", "lcoc")


def expected(rows):
    """The runs the rule reports, as table rows."""
    header = rows[0].keys()
    mte_columns = "aic_mte2_time(us)" in header and \
        ("aic_fixpipe_time(us)" in header or "aiv_mte3_time(us)" in header) and \
        ("aicore_time(us)" in header or "aiv_time(us)" in header)
    tasks = []
    for row_number, r in enumerate(rows):
        start = us_to_ns(r["Start Time(us)"])
        end = start + max(us_to_ns(r["Duration(us)"]), 0)
        mte = core = None
        if mte_columns:
            into = larger(number(r, "aic_mte2_time(us)"), number(r, "aiv_mte2_time(us)"))
            out = larger(number(r, "aic_fixpipe_time(us)"), number(r, "aiv_mte3_time(us)"))
            if into is not None or out is not None:
                mte = f32((into or 0) + (out or 0))
            core = larger(number(r, "aicore_time(us)"), number(r, "aiv_time(us)"))
            core = None if core is None else f32(core)
        model_id = (r.get("Model ID") or "").strip()
        in_graph = model_id.isdigit() and model_id != "4294967295"
        tasks.append({"key": None if breaks(r) else label(r), "start": start, "end": end,
                      "mte": mte, "core": core, "row": row_number, "graph": in_graph})
    tasks.sort(key=lambda t: t["start"])  # stable: rows in file order at one start
    n = len(tasks)
    span = max(t["end"] for t in tasks) - tasks[0]["start"]
    occurs = {}
    for t in tasks:
        if t["key"] is not None:
            occurs[t["key"]] = occurs.get(t["key"], 0) + 1

    def usable(i):
        return tasks[i]["key"] is not None and occurs[tasks[i]["key"]] >= 6

    # The time between a run's operators it waits for the host: gaps in which
    # no compute task (one that does not break runs) runs, unless some task
    # ends within 50 us before the next operator starts (it waited for it).
    merged = []
    for t in tasks:
        if t["key"] is None:
            continue
        if merged and t["start"] <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], t["end"])
        else:
            merged.append([t["start"], t["end"]])
    ends = [t["end"] for t in tasks]

    def host_gap(reach, following):
        if following <= reach:
            return 0
        since = max(reach, following - 50_000)
        if any(since < e <= following for e in ends):
            return 0
        covered = sum(max(0, min(e, following) - max(b, reach)) for b, e in merged
                      if b < following and e > reach)
        return (following - reach) - covered

    def judge(s):
        host = s["wall"] > 0 and s["wall"] - s["idle"] < 0.4 * s["wall"]
        mte = s["core"] > 0 and s["mte"] > 0.8 * s["core"]
        reported = s["count"] >= 6 and (host or mte) and (mte or s["wall"] >= 0.01 * span)
        stake = (s["idle"] if host else 0) + (s["device"] if mte else 0)
        return host, mte, reported, stake

    def occurrence(p, length, s):
        end = tasks[p]["end"]
        for k in range(p, p + length):
            t = tasks[k]
            # A graph model's task was launched with its graph: no host wait.
            s["idle"] += 0 if t["graph"] else host_gap(end, t["start"])
            end = max(end, t["end"])
            s["device"] += t["end"] - t["start"]
            s["mte"] += t["mte"] or 0.0
            s["core"] += t["core"] or 0.0
        s["count"] += 1
        s["wall"] += end - tasks[p]["start"]

    runs = {}
    for i in range(n):
        if not usable(i):
            continue
        for length in range(2, 11):
            if i + length > n or not usable(i + length - 1):
                break
            keys = tuple(t["key"] for t in tasks[i:i + length])
            run = runs.setdefault(keys, {"first": i, "length": length, "count": 0, "wall": 0,
                                         "idle": 0, "device": 0, "mte": 0.0, "core": 0.0})
            occurrence(i, length, run)
    candidates = [(keys, r) for keys, r in runs.items() if judge(r)[2]]
    candidates.sort(key=lambda kr: (-judge(kr[1])[3], -kr[1]["length"], kr[1]["first"]))
    taken = [False] * n
    out = []
    for keys, r in candidates[:64]:
        length = r["length"]
        s = {"count": 0, "wall": 0, "idle": 0, "device": 0, "mte": 0.0, "core": 0.0}
        mine = []
        for p in range(n):
            if p + length > n:
                break
            if any(taken[p:p + length]):
                continue
            if tuple(t["key"] for t in tasks[p:p + length]) != keys:
                continue
            for k in range(p, p + length):
                taken[k] = True
            occurrence(p, length, s)
            mine.append(p)
        host, mte, reported, stake = judge(s)
        if not reported:
            for p in mine:
                for k in range(p, p + length):
                    taken[k] = False
            continue
        out.append({"operators": " -> ".join(keys), "length": length, "count": s["count"],
                    "first_row": tasks[mine[0]]["row"], "wall_ns": s["wall"],
                    "device_ns": s["device"], "idle_ns": s["idle"],
                    "mte_pct": 100 * s["mte"] / s["core"] if s["core"] > 0 else None,
                    "host": host, "mte": mte, "stake": stake})
    out.sort(key=lambda x: -x["stake"])
    return out[:20], span


def repeated(rows, copies, between=None):
    """`rows` in start order `copies` times, each copy 1 ms after the last
    ends; `between(copy)`: rows placed right after each copy's first task."""
    starts = [us_to_ns(r["Start Time(us)"]) for r in rows]
    ends = [s + us_to_ns(r["Duration(us)"]) for s, r in zip(starts, rows)]
    period = max(ends) - min(starts) + 1_000_000
    out = []
    for k in range(copies):
        for i, r in enumerate(rows):
            copy = dict(r)
            copy["Start Time(us)"] = str(Decimal(starts[i] + k * period) / 1000)
            out.append(copy)
            if i == 0 and between is not None:
                out.extend(between(r, starts[i] + k * period))
    return out


def analyze(label_, path):
    run, out = c.analyze(opscope, path, label_)
    if run.returncode != 0:
        return None, None
    with open(os.path.join(out, "analysis.json")) as f:
        results = json.load(f)["results"]
    found = [r for r in results if r.get("section") == "findings" and r["id"] == "fusible_operators"]
    table = os.path.join(out, "tables", "fusible_sequences.csv")
    got = read(table) if os.path.exists(table) else []
    return found, got


def analyze_rows(label_, rows_):
    """`rows_` written as a kernel_details.csv of its own, analysed."""
    path_ = os.path.join(c.scratch, label_, "kernel_details.csv")
    os.makedirs(os.path.dirname(path_))
    write(path_, rows_)
    return analyze(label_ + "-report", path_)


def compare(what, found, got, want, span=1):
    c.check(found is not None, f"{what}: analysed")
    if found is None:
        return
    c.check(len(got) == len(want), f"{what}: {len(want)} runs in the table (got {len(got)})")
    for g, w in zip(got, want):
        mte = g["mte_pct"]
        same = (g["operators"] == w["operators"] and int(g["length"]) == w["length"] and
                int(g["count"]) == w["count"] and int(g["first_row"]) == w["first_row"] and
                int(g["wall_ns"]) == w["wall_ns"] and int(g["device_ns"]) == w["device_ns"] and
                int(g["idle_ns"]) == w["idle_ns"] and
                ((mte == "" and w["mte_pct"] is None) or
                 (mte != "" and w["mte_pct"] is not None and
                  abs(float(mte) - w["mte_pct"]) < 1e-6)))
        c.check(same, f"{what}: {w['operators'][:80]} x{w['count']} from row {w['first_row']}, "
                      f"{w['wall_ns']} ns ({g})")
    if want:
        hosts = sum(w["host"] for w in want)
        mtes = sum(w["mte"] for w in want)
        stake = sum(w["stake"] for w in want)
        idle = sum(w["idle_ns"] for w in want if w["host"])
        device = sum(w["device_ns"] for w in want if w["mte"])
        c.check(len(found) == 1 and found[0]["title"].startswith(
            f"{len(want)} recurring run{'s' if len(want) > 1 else ''} of operators worth fusing, "
            f"{stake / 1e6:.3f} ms at stake"),
            f"{what}: one finding naming {len(want)} runs, {stake} ns at stake "
            f"({[f['title'] for f in found]})")
        title = found[0]["title"] if found else ""
        c.check((hosts == 0 or f"{hosts} host-bound, the device idle {idle / 1e6:.3f} ms" in title)
                and (mtes == 0 or f"{mtes} bound by data movement, {device / 1e6:.3f} ms" in title),
                f"{what}: {hosts} host-bound, {mtes} MTE-bound ({title})")
        severity = "warning" if 100 * stake / span >= 30 else "info"
        c.check(bool(found) and found[0]["severity"] == severity,
                f"{what}: {severity} at {100 * stake / span:.1f}% of the tasks' span")
    else:
        c.check(not found, f"{what}: no finding ({found})")


# The real rank: nothing recurs often enough.
rows = read(details(LEVEL1))
want, _ = expected(rows)
found, got = analyze("level1", LEVEL1)
c.check(not want, f"the real rank: no run recurs 6 times ({len(want)})")
compare("the real level-1 rank", found, got, want)

# Its step eight times over.
eight = repeated(rows, 8)
want, span = expected(eight)
c.check(len(want) >= 2 and any(w["mte"] for w in want) and any(w["host"] for w in want),
        f"the repeated step has host-bound and MTE-bound runs ({[(w['host'], w['mte']) for w in want]})")
rank = os.path.join(c.scratch, "eight", "rank0_ascend_pt")
shutil.copytree(LEVEL1, rank)
write(details(rank), eight)
found, got = analyze("eight-folder", rank)
compare("the step repeated 8 times, the rank's folder", found, got, want, span)
# TensorMove starts 3 us after the all-reduce that holds the step ends, 65
# ms after the Mul before it: msprof-analyze's test (the run's own tasks
# against its span) makes any run across that gap host-bound; it waited for
# the collective, so here the gap is no host time.
hccl_ends = [us_to_ns(r["Start Time(us)"]) + us_to_ns(r["Duration(us)"]) for r in rows
             if r["Accelerator Core"] == "HCCL"]
move = next(i for i, r in enumerate(rows) if r["Name"].startswith("aclnnInplaceCopy") and
            any(0 <= us_to_ns(r["Start Time(us)"]) - e <= 50_000 for e in hccl_ends))
start = us_to_ns(rows[move]["Start Time(us)"])
before = us_to_ns(rows[move - 1]["Start Time(us)"]) + us_to_ns(rows[move - 1]["Duration(us)"])
own = sum(us_to_ns(r["Duration(us)"]) for r in rows[move - 1:move + 1])
c.check(start - before > 60_000_000 and own < 0.4 * (start + us_to_ns(
        rows[move]["Duration(us)"]) - us_to_ns(rows[move - 1]["Start Time(us)"])),
        f"TensorMove {start - before} ns after the Mul, as the all-reduce ends: host-bound by "
        f"msprof-analyze's test")
across = [g for g in got if f"{label(rows[move - 1])} -> {label(rows[move])}" in g["operators"]]
c.check(not any("host" in g["bound"] for g in across),
        f"no run across the all-reduce's gap is host-bound ({[g['bound'] for g in across]})")
found, got = analyze_rows("eight-csv", eight)
compare("the same kernel_details.csv alone", found, got, want, span)


def communication(row, start_ns):
    """A 5 us HCCL task right after `row`'s start, on another stream."""
    hccl = {k: "N/A" for k in row}
    hccl.update({"Name": "hcom_allReduce__123_0_1", "Type": "hcom_allReduce_",
                 "Accelerator Core": "HCCL", "Step Id": row.get("Step Id", ""),
                 "Start Time(us)": str(Decimal(start_ns + 1) / 1000), "Duration(us)": "5",
                 "Wait Time(us)": "0", "Block Dim": "0"})
    return [hccl]


# The same tasks in a graph model (Model ID 1, not the single-operator
# 4294967295): the host launched the graph, not each operator, so no run is
# host-bound; MTE-bound ones stay.
graph = [dict(r, **{"Model ID": "1"}) for r in eight]
want_graph, span_graph = expected(graph)
c.check(want_graph and all(w["mte"] and not w["host"] and w["idle_ns"] == 0 for w in want_graph),
        f"a graph model's runs: MTE-bound only, no idle time ({len(want_graph)})")
found, got = analyze_rows("graph", graph)
compare("the repeated step as a graph model's tasks", found, got, want_graph, span_graph)

# Communication between the copies' first and second tasks: no run crosses it.
broken = repeated(rows, 8, communication)
want_broken, span_broken = expected(broken)
first_pair = f"{label(rows[0])} -> {label(rows[1])}"
c.check(all(not w["operators"].startswith(first_pair) for w in want_broken),
        "no expected run crosses the communication task")
found, got = analyze_rows("broken", broken)
compare("communication between the copies' first operators", found, got, want_broken,
        span_broken)

# A file without PMU columns: host-bound runs only, no MTE share.
level0 = repeated(read(details(LEVEL0)), 8)
want0, span0 = expected(level0)
c.check(want0 and all(w["host"] and not w["mte"] and w["mte_pct"] is None for w in want0),
        f"level 0 repeated: host-bound runs only ({len(want0)})")
found, got = analyze_rows("level0", level0)
compare("the level-0 rank's step repeated 8 times (no PMU columns)", found, got, want0, span0)

# Only the tasks of the level-0 step's most idle run, eight times over: the
# runs are most of the tasks' span, a warning.
top = want0[0]
dense = repeated(read(details(LEVEL0))[top["first_row"]:top["first_row"] + top["length"]], 8)
want_dense, span_dense = expected(dense)
c.check(want_dense and 100 * sum(w["stake"] for w in want_dense) / span_dense >= 30,
        f"the dense copy puts 30% of its span at stake ({len(want_dense)} runs)")
found, got = analyze_rows("dense", dense)
compare("one host-bound run of the level-0 step, eight times over", found, got, want_dense,
        span_dense)
sys.exit(c.done())
