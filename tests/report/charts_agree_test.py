#!/usr/bin/env python3
"""analysis.html's step charts agree with the steps table of analysis.json.

For real traces (two Kineto ranks with communication, torch_npu folders, a
PyTorch CPU trace): each step's bar has the table's compute, communication
not overlapped, copies/sets not overlapped and idle time, and its parts add
up to the step's duration (a stacked bar as long as its step); each rank's bar
is the mean of its complete steps, as the table's rows give it.

Usage: charts_agree_test.py OPSCOPE DATA_DIR"""
import collections
import html
import json
import os
import re
import subprocess
import sys
import tempfile

PART_KEYS = {"compute": "compute_ns", "communication": "communication_exposed_ns",
             "memory": "memory_exposed_ns", "idle": "idle_ns"}
RECT = re.compile(r'<rect [^>]*class="(compute|communication|memory|idle)"><title>(.*?)</title>')


def bars(page):
    """{label: {part: ms}} of every stacked bar on the page."""
    out = collections.defaultdict(dict)
    for part, title in RECT.findall(page):
        title = html.unescape(title)
        label, kind, value = title.rsplit(": ", 2)
        assert kind == part, title
        out[label][part] = float(value.split()[0])
    return out


def check(opscope, inputs, failures):
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([opscope, "analyze", *inputs, "--top", "0", "--out", tmp], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        page = open(os.path.join(tmp, "analysis.html"), encoding="utf-8").read()
        doc = json.load(open(os.path.join(tmp, "analysis.json")))
    steps = [r for r in doc["results"] if r["section"] == "steps"]
    # Each trace's section of the page (<h2 id="traceN">PATH ...) draws its steps;
    # what comes before the first is the ranks' chart.
    parts = re.split(r'<h2 id="trace\d+">', page)
    drawn = bars(parts[0])
    per_trace = {}
    for part in parts[1:]:
        path = html.unescape(part.split(" ", 1)[0].split("<", 1)[0])
        per_trace[path] = bars(part)
    if not steps:
        failures.append(f"{inputs}: no steps to compare")
        return 0
    compared = 0
    for row in steps:
        label = f"{row['step']} ({row['status']})"
        bar = per_trace.get(row["trace"], {}).get(label)
        if bar is None:
            failures.append(f"{inputs}: no bar for {label}")
            continue
        for part, key in PART_KEYS.items():
            want = row[key] / 1e6
            if abs(bar[part] - want) > 0.0005 + 1e-9:
                failures.append(f"{inputs}: {label} {part}: bar {bar[part]:.3f} ms, table {want:.6f}")
        total = sum(bar.values())
        if abs(total - row["duration_ns"] / 1e6) > 0.002:
            failures.append(f"{inputs}: {label}: the bar is {total:.3f} ms, the step "
                            f"{row['duration_ns'] / 1e6:.3f} ms")
        compared += 1
    if len(inputs) > 1:
        ranks = {r["trace"]: r["rank"] for r in doc["results"] if r["section"] == "ranks"}
        by_trace = collections.defaultdict(list)
        for row in steps:
            if row["status"] == "complete":
                by_trace[row["trace"]].append(row)
        for trace, rows in by_trace.items():
            label = f"rank {ranks.get(trace, '?')} (mean of {len(rows)} steps)"
            bar = drawn.get(label)
            if bar is None:
                failures.append(f"{inputs}: no bar '{label}' (bars: {sorted(drawn)[:6]})")
                continue
            for part, key in PART_KEYS.items():
                want = sum(r[key] for r in rows) / len(rows) / 1e6
                if abs(bar[part] - want) > 0.0005 + 1e-9:
                    failures.append(f"{inputs}: {label} {part}: bar {bar[part]:.3f}, table mean "
                                    f"{want:.6f}")
            compared += 1
    return compared


def main():
    opscope, data = sys.argv[1], sys.argv[2]
    failures = []
    n = 0
    for inputs in ([f"{data}/kineto/sampled_rank-0.json.gz", f"{data}/kineto/sampled_rank-1.json.gz"],
                   [f"{data}/ascend/level1_text_2rank"],
                   [f"{data}/ascend/level1_db"],
                   [f"{data}/torch-cpu/small_transformer_train_3steps_torch1.13.json"]):
        n += check(opscope, inputs, failures)
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print(f"charts: {n} bars agree with the steps table and add up to their steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
