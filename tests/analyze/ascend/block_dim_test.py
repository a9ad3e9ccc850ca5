#!/usr/bin/env python3
"""The block_dim rule against msprof-analyze's BlockDimChecker, restated over
a rank's kernel_details.csv read with Python's csv module and the chip its
run recorded (a PROF_*/device_0/info.json.0 written here, as msprof writes
it: DeviceInfo's ai_core_num and aiv_num; docs/formats/ascend.md 1.4):

- an operator (kernel Name) on the AI Core, the vector core or mixed
  (Accelerator Core AI_CORE, AI_VECTOR_CORE, MIX_AIC) whose tasks all run
  the same Block Dim, and that not a multiple of its cores (ai_core_num for
  AI_CORE, aiv_num for the others), is uneven;
- the rule names how many, and their share of the time of the tasks with
  hardware counters.

Checked on the level-1 rank with a chip of 24 AI cores and 48 vector cores;
with a chip of one core of each (every block count divides): no finding;
without info.json: no finding.

    block_dim_test.py OPSCOPE DATA_DIR
"""
import csv
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
source = os.path.join(data, "ascend", "level1_text", "rank0_ascend_pt")


def expected(cores, vector):
    with open(os.path.join(source, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    blocks = {}
    for r in rows:
        if r["Accelerator Core"] in ("AI_CORE", "AI_VECTOR_CORE", "MIX_AIC"):
            blocks.setdefault(r["Name"], (r["Accelerator Core"], set()))[1].add(int(r["Block Dim"]))
    uneven = 0
    for core, dims in blocks.values():
        n = cores if core == "AI_CORE" else vector
        if len(dims) == 1 and next(iter(dims)) % n:
            uneven += 1
    return uneven


def finding(label, chip):
    rank = os.path.join(c.scratch, label, "rank0_ascend_pt")
    shutil.copytree(source, rank)
    if chip is not None:
        device = os.path.join(rank, "PROF_000001_20250109080000000_ABCDEFGH", "device_0")
        os.makedirs(device)
        with open(os.path.join(device, "info.json.0"), "w") as f:
            json.dump({"rank_id": 0, "devices": "0",
                       "DeviceInfo": [{"id": 0, "ai_core_num": chip[0], "aiv_num": chip[1],
                                       "aic_frequency": "1800"}]}, f)
    run, out = c.analyze(opscope, rank, label + "-report")
    with open(os.path.join(out, "analysis.json")) as f:
        got = [r for r in json.load(f)["results"]
               if r.get("section") == "findings" and r["id"] == "block_dim"]
    return run.returncode, got


want = expected(24, 48)
rc, got = finding("chip24", (24, 48))
c.check(rc == 0 and want > 0 and len(got) == 1 and
        got[0]["title"].startswith(f"{want} operators run a number of blocks"),
        f"24 AI cores, 48 vector: {want} uneven operators ({[g['title'] for g in got]})")
rc, got = finding("chip1", (1, 1))
c.check(rc == 0 and not got, f"one core of each: no finding ({got})")
rc, got = finding("nochip", None)
c.check(rc == 0 and not got, f"no info.json: no finding ({got})")
sys.exit(c.done())
