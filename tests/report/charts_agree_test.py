#!/usr/bin/env python3
"""analysis.html's charts agree with the tables of analysis.json.

For real traces (two Kineto ranks with communication, torch_npu folders, a
PyTorch CPU trace): each step's bar has the table's compute, communication
not overlapped, copies/sets not overlapped and idle time, and its parts add
up to the step's duration (a stacked bar as long as its step); each rank's bar
is the mean of its complete steps, as the table's rows give it; the class-share
chart's bars are each class's share of the op tables' self time (device and
host apart), and the top-operators chart's bars are those tables' figures.

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


BAR = re.compile(r'<rect [^>]*class="bar"><title>(.*?)</title>')
OP_SECTIONS = ("operators", "kernels", "host_calls", "annotations")
DEVICE_CLASSES = {"kernel", "communication", "memcpy", "memset", "dma", "device_wait"}


def simple_bars(html_part):
    """[(label, value)] of the BarSvg charts in a piece of the page."""
    out = []
    for title in BAR.findall(html_part):
        label, value = html.unescape(title).rsplit(": ", 1)
        out.append((label, float(value.split()[0])))
    return out


def check_bar_charts(inputs, part, rows, failures):
    """A trace's class-share and top-operators charts against its op tables."""
    compared = 0
    share_at = part.find("<h3>Time by event class</h3>")
    top_at = part.find("<h3>Top ")
    steps_at = part.find("<h3>Step breakdown</h3>")
    if share_at < 0 or top_at < 0:
        failures.append(f"{inputs}: no class or top chart")
        return 0
    device, host = collections.defaultdict(float), collections.defaultdict(float)
    for r in rows:
        if r["category"] in ("step", "derived", "device_annotation"):
            continue
        (device if r["category"] in DEVICE_CLASSES else host)[r["category"]] += r["self_ns"]
    want = {}
    for side, by in (("device", device), ("host", host)):
        total = sum(by.values())
        for cls, ns in by.items():
            want[f"{side}: {cls}"] = 100 * ns / total if total else 0
    got = dict(simple_bars(part[share_at:top_at]))
    if set(got) != set(want):
        failures.append(f"{inputs}: class chart {sorted(got)}, tables {sorted(want)}")
    for label, value in got.items():
        if label in want and abs(value - want[label]) > 0.0005 + 1e-9:
            failures.append(f"{inputs}: class chart {label} {value:.3f}%, tables {want[label]:.6f}%")
    compared += len(got)
    heading = part[top_at:part.find("</h3>", top_at)]
    device_chart = "device kernels" in heading
    key = "total_ns" if device_chart else "self_ns"
    by_name = {}
    for r in rows:
        if (r["category"] in DEVICE_CLASSES) == device_chart:
            by_name.setdefault(r["operator"], r[key])
    for label, value in simple_bars(part[top_at:steps_at if steps_at > 0 else None]):
        if label not in by_name:
            failures.append(f"{inputs}: top chart's {label!r} is in no table")
        elif abs(value - by_name[label] / 1e6) > 0.0005 + 1e-9:
            failures.append(f"{inputs}: top chart {label!r} {value:.3f} ms, table "
                            f"{by_name[label] / 1e6:.6f}")
        compared += 1
    return compared


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
    ops = collections.defaultdict(list)
    for r in doc["results"]:
        if r["section"] in OP_SECTIONS:
            ops[r["trace"]].append(r)
    compared = 0
    for part in parts[1:]:
        path = html.unescape(part.split(" ", 1)[0].split("<", 1)[0])
        per_trace[path] = bars(part)
        compared += check_bar_charts(inputs, part, ops[path], failures)
    if not steps:
        failures.append(f"{inputs}: no steps to compare")
        return compared
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
    print(f"charts: {n} bars agree with their tables (steps, class shares, top operators), and "
          "each step's bar adds up to its step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
