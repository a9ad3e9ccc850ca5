#!/usr/bin/env python3
"""The block_dim rule against msprof-analyze's BlockDimChecker, restated over
a rank's kernel_details.csv read with Python's csv module and the chip its
run recorded (a PROF_*/device_0/info.json.0 written here, as msprof writes
it: DeviceInfo's ai_core_num and aiv_num; docs/formats/ascend.md 1.4):

- an operator (kernel Name) on the AI Core, the vector core or mixed
  (Accelerator Core AI_CORE, AI_VECTOR_CORE, MIX_AIC) whose tasks all run
  the same Block Dim, and that not a multiple of its cores (ai_core_num for
  AI_CORE, aiv_num for the others), is uneven;
- a mixed operator (MIX_AIC) whose tasks all run the same Mix Block Dim,
  and that a multiple of aiv_num, is exempt (its vector part fills every
  vector core);
- the rule names how many, and their share of the time of the tasks with
  hardware counters.

Checked on the level-1 rank with a chip of 24 AI cores and 48 vector cores;
with a chip of one core of each (every block count divides): no finding;
without info.json: no finding; and on a copy whose two uneven vector
operators are made mixed, one with a Mix Block Dim of 48 (exempt), one of 40
(still uneven).

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


def read(rank):
    with open(os.path.join(rank, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv"), newline="") as f:
        return list(csv.DictReader(f))


def uneven_names(rows, cores, vector):
    blocks = {}
    for r in rows:
        if r["Accelerator Core"] in ("AI_CORE", "AI_VECTOR_CORE", "MIX_AIC"):
            core, dims, mix = blocks.setdefault(r["Name"], (r["Accelerator Core"], set(), set()))
            dims.add(int(r["Block Dim"]))
            mix.add(int(r["Mix Block Dim"] or 0))
    uneven = []
    for name, (core, dims, mix) in blocks.items():
        n = cores if core == "AI_CORE" else vector
        exempt = core == "MIX_AIC" and len(mix) == 1 and next(iter(mix)) > 0 and \
            next(iter(mix)) % vector == 0
        if len(dims) == 1 and next(iter(dims)) % n and not exempt:
            uneven.append(name)
    return uneven


def expected(cores, vector):
    return len(uneven_names(read(source), cores, vector))


def finding(label, chip, edit=None):
    rank = os.path.join(c.scratch, label, "rank0_ascend_pt")
    shutil.copytree(source, rank)
    if edit is not None:
        edit(rank)
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


def mixed(rank):
    """Two uneven vector operators made mixed: Mix Block Dim 48 and 40."""
    rows = read(source)
    vector = [n for n in uneven_names(rows, 24, 48)
              if any(r["Name"] == n and r["Accelerator Core"] == "AI_VECTOR_CORE" for r in rows)]
    mix = dict(zip(vector[:2], ("48", "40")))
    for r in rows:
        if r["Name"] in mix:
            r["Accelerator Core"], r["Mix Block Dim"] = "MIX_AIC", mix[r["Name"]]
    path = os.path.join(rank, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    return len(mix)


made = []
rc, got = finding("mixed", (24, 48), lambda rank: made.append(mixed(rank)))
want_mixed = len(uneven_names(read(os.path.join(c.scratch, "mixed", "rank0_ascend_pt")), 24, 48))
c.check(made == [2] and want_mixed == want - 1 and rc == 0 and len(got) == 1 and
        got[0]["title"].startswith(f"{want_mixed} operators run a number of blocks"),
        f"a mixed operator whose mix block dim fills the 48 vector cores is exempt, one of 40 "
        f"is not: {want_mixed} uneven ({[g['title'] for g in got]})")
sys.exit(c.done())
