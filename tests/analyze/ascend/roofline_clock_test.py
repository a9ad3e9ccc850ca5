#!/usr/bin/env python3
"""The chip a roofline assumes, against the clock the tasks imply (issue 36,
class 9). A kernel_details.csv without the run's info.json names no chip:
opscope assumes the 910B family's figures (20 cube cores x 8192 FLOP/cycle x
1.8 GHz). The producer turns each task's cycles into aicore_time(us) at the
chip's clock (docs/formats/ascend.md 3.2), so aic_total_cycles /
(aicore_time(us) x Block Dim) is that clock, in MHz.

- The real sample (msprof-analyze's advisor fixture, tests/data/ascend): its
  AI_CORE tasks imply 1800 MHz, as assumed: the roofline's title says so and
  keeps the assumed peaks.
- A copy whose aicore_time(us) is 1800/1650 times longer (a part clocked at
  1650 MHz): the title names 1650 MHz and the compute peaks scaled by
  1650/1800, so each compute-bound operator's share of its roofline is
  1800/1650 times the real sample's (its FLOPs and time unchanged).

Expected values from the CSV (Python's csv): each AI_CORE task's implied
clock, rounded to the MHz, and their median (the lower middle value).

    roofline_clock_test.py OPSCOPE DATA_DIR
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
path = os.path.join(data, "ascend", "kernel_details.csv")
with open(path, newline="") as f:
    reader = csv.DictReader(f)
    header, rows = reader.fieldnames, list(reader)


def implied(rows):
    clocks = []
    for r in rows:
        try:
            cycles, us, blocks = float(r["aic_total_cycles"]), float(r["aicore_time(us)"]), \
                float(r["Block Dim"])
        except ValueError:
            continue
        if r["Accelerator Core"] == "AI_CORE" and cycles > 0 and us > 0 and blocks > 0:
            clocks.append(round(cycles / (us * blocks)))
    clocks.sort()
    return clocks[(len(clocks) - 1) // 2], len(clocks)


def roofline(csv_path, name):
    run, out = c.analyze(opscope, csv_path, name)
    c.check(run.returncode == 0, f"{name}: analysed (exit {run.returncode}: {run.stderr[-300:]})")
    with open(os.path.join(out, "analysis.json")) as f:
        doc = json.load(f)
    title = next((t["title"] for t in doc["tables"] if t["section"] == "roofline"), "")
    return title, {r["operator"]: r for r in doc["results"] if r["section"] == "roofline"}


mhz, tasks = implied(rows)
c.check(mhz == 1800 and tasks > 0, f"the real sample's {tasks} AI_CORE tasks imply {mhz} MHz")
title, real = roofline(path, "real")
c.check(f"imply a {mhz} MHz clock, as assumed" in title and "scaled" not in title,
        f"the real sample: the assumed clock confirmed ({title})")

slower = os.path.join(c.scratch, "kernel_details.csv")
for r in rows:
    try:
        r["aicore_time(us)"] = repr(float(r["aicore_time(us)"]) * 1800 / 1650)
    except ValueError:
        pass
with open(slower, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=header)
    w.writeheader()
    w.writerows(rows)
mhz2, _ = implied(rows)
c.check(mhz2 == 1650, f"the copy's tasks imply {mhz2} MHz")
title, scaled = roofline(slower, "slower")
c.check(f"imply a {mhz2} MHz clock, not the assumed 1800 MHz" in title
        and f"scaled by {1650 / 1800:.3f}" in title,
        f"the copy: the clock named and the peaks scaled ({title})")
compute = [op for op, r in real.items() if r["bound"] == "compute"]
c.check(bool(compute) and all(
    abs(scaled[op]["pct_of_attainable"] - real[op]["pct_of_attainable"] * 1800 / 1650)
    <= 1e-6 * real[op]["pct_of_attainable"] for op in compute),
    f"each compute-bound operator's share of its roofline is 1800/1650 times the real one's "
    f"({[(op[:30], real[op]['pct_of_attainable'], scaled[op]['pct_of_attainable']) for op in compute]})")
sys.exit(c.done())
