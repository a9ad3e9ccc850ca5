#!/usr/bin/env python3
"""The NPU memory tables of `opscope analyze` for the level-1 torch_npu sample,
against an independent computation over its operator_memory.csv and
memory_record.csv with Python's csv module. The rules, from docs/formats/ascend.md 3.7:
sizes in KB of 1024 bytes, totals in MB of 1024 KB; the peak is the highest
"Allocation Total Allocated"; a block is live at the peak when it was
allocated at or before it and not released by then (an empty release: never).

The same on the level-1 SQLite export (issue 36, class 8: its memory tables
were not read), over its OP_MEMORY and MEMORY_RECORD tables with Python's
sqlite3 module (docs/formats/ascend.md 4: names and components are STRING_IDS
ids, sizes and totals in bytes, times in ns, a NULL release: never); and
msprof's own form of it, NPU_OP_MEM, where torch_npu's tables are absent.

    memory_test.py OPSCOPE DATA_DIR
"""
import collections
import csv
import decimal
import json
import os
import sqlite3
import subprocess
import sys
import tempfile


def ns(text):
    return int((decimal.Decimal(text.strip()) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def main():
    opscope, data = sys.argv[1], sys.argv[2]
    tree = os.path.join(data, "ascend", "level1_text")
    out_dir = os.path.join(tree, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    with open(os.path.join(out_dir, "operator_memory.csv"), newline="") as f:
        rows = [r for r in csv.DictReader(f) if float(r["Size(KB)"]) >= 0]
    peak = max(rows, key=lambda r: float(r["Allocation Total Allocated(MB)"]))
    peak_ns = ns(peak["Allocation Time(us)"])
    live = collections.defaultdict(float)
    for r in rows:
        alloc = ns(r["Allocation Time(us)"])
        release = r["Release Time(us)"].strip()
        if alloc <= peak_ns and (not release or ns(release) > peak_ns):
            live[r["Name"]] += float(r["Size(KB)"]) * 1024
    with open(os.path.join(out_dir, "memory_record.csv"), newline="") as f:
        reserved = collections.defaultdict(float)
        for r in csv.DictReader(f):
            if r["Total Reserved(MB)"].strip():
                reserved[r["Component"]] = max(reserved[r["Component"]],
                                               float(r["Total Reserved(MB)"]))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([opscope, "analyze", tree, "--top", "0", "--format", "json", "--out", tmp],
                       check=True, stdout=subprocess.DEVNULL)
        results = json.load(open(os.path.join(tmp, "analysis.json")))["results"]
    failures = []
    got = {r["operator"]: r for r in results if r.get("section") == "reported_memory_peak"}
    if set(got) != set(live):
        failures.append("live operators %s, expected %s" % (sorted(got), sorted(live)))
    for name, bytes_ in live.items():
        if name in got and abs(got[name]["bytes"] - bytes_) > 1:
            failures.append("%s: %s bytes live, expected %s" % (name, got[name]["bytes"], bytes_))
    comps = {r["component"]: r for r in results if r.get("section") == "reported_memory_components"}
    for name, mb in reserved.items():
        if name not in comps or abs(comps[name]["peak_reserved_bytes"] / 2**20 - mb) > 1e-3:
            failures.append("%s: peak reserved %s, expected %s MiB" % (name, comps.get(name), mb))
    if not failures:
        print("memory: peak at %s (%s), %d operators live, %d components match" %
              (peak["Allocation Time(us)"].strip(), peak["Name"], len(live), len(reserved)))
    failures += check_db(opscope, data)
    failures += check_npu_op_mem(opscope, data)
    if failures:
        print("\n".join(failures))
        return 1
    return 0


def check_db(opscope, data):
    tree = os.path.join(data, "ascend", "level1_db")
    db = os.path.join(tree, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT",
                      "ascend_pytorch_profiler_0.db")
    c = sqlite3.connect(db)
    names = dict(c.execute("SELECT id, value FROM STRING_IDS"))
    rows = [r for r in c.execute("SELECT name, size, allocationTime, releaseTime, "
                                 "allocationTotalAllocated FROM OP_MEMORY")
            if r[1] is not None and r[1] >= 0 and r[2] is not None]
    peak_total = max(r[4] for r in rows)
    peak_ns = min(r[2] for r in rows if r[4] == peak_total)
    live = collections.defaultdict(int)
    for name, size, alloc, release, _ in rows:
        if alloc <= peak_ns and (release is None or release > peak_ns):
            live[names[name]] += size
    comps = collections.defaultdict(lambda: [-1, -1])
    for component, allocated, reserved in c.execute(
            "SELECT component, totalAllocated, totalReserved FROM MEMORY_RECORD"):
        peak = comps[names[component]]
        peak[0], peak[1] = max(peak[0], allocated), max(peak[1], reserved)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([opscope, "analyze", tree, "--top", "0", "--format", "json", "--out", tmp],
                       check=True, stdout=subprocess.DEVNULL)
        results = json.load(open(os.path.join(tmp, "analysis.json")))["results"]
    failures = []
    got = {r["operator"]: r["bytes"] for r in results
           if r.get("section") == "reported_memory_peak"}
    if got != dict(live):
        failures.append("db: live at the peak %s, expected %s" % (got, dict(live)))
    got = {r["component"]: [r["peak_allocated_bytes"], r["peak_reserved_bytes"]]
           for r in results if r.get("section") == "reported_memory_components"}
    if got != dict(comps):
        failures.append("db: components %s, expected %s" % (got, dict(comps)))
    if not failures:
        print("memory (db): %d operators live at the peak (%d bytes allocated), %d components "
              "match" % (len(live), peak_total, len(comps)))
    return failures


def check_npu_op_mem(opscope, data):
    """msprof's own database holds neither OP_MEMORY nor MEMORY_RECORD (those
    are torch_npu's) but NPU_OP_MEM, the graph engine's operator memory: one
    row per allocation and per release, type a STRING_IDS id of "allocate" or
    "release", the same addr pairing them, sizes and the totals after each row
    in bytes (msprof's NpuOpMemProcessor, docs/formats/ascend.md 4.3). The
    real level-1 database with torch_npu's two tables dropped: the blocks live
    at the peak and the components' peaks from NPU_OP_MEM alone."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "level1_db")
        subprocess.run(["cp", "-r", os.path.join(data, "ascend", "level1_db"), tree], check=True)
        db = os.path.join(tree, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT",
                          "ascend_pytorch_profiler_0.db")
        c = sqlite3.connect(db)
        c.execute("DROP TABLE OP_MEMORY")
        c.execute("DROP TABLE MEMORY_RECORD")
        c.commit()
        names = dict(c.execute("SELECT id, value FROM STRING_IDS"))
        rows = sorted(c.execute("SELECT timestampNs, operatorName, addr, type, size, "
                                "totalAllocate, totalReserve, component FROM NPU_OP_MEM"))
        c.close()
        blocks, open_ = [], {}
        comps = collections.defaultdict(lambda: [-1, -1])
        for t, name, addr, kind, size, allocated, reserved, component in rows:
            peak = comps[names[component]]
            peak[0], peak[1] = max(peak[0], allocated), max(peak[1], reserved)
            if names[kind] == "allocate":
                open_[addr] = len(blocks)
                blocks.append([names[name], size, t, None, allocated])
            elif names[kind] == "release" and addr in open_:
                blocks[open_.pop(addr)][3] = t
        peak_total = max(b[4] for b in blocks)
        peak_ns = min(b[2] for b in blocks if b[4] == peak_total)
        live = collections.defaultdict(int)
        for name, size, alloc, release, _ in blocks:
            if alloc <= peak_ns and (release is None or release > peak_ns):
                live[name] += size
        out = os.path.join(tmp, "out")
        subprocess.run([opscope, "analyze", tree, "--top", "0", "--format", "json", "--out", out],
                       check=True, stdout=subprocess.DEVNULL)
        results = json.load(open(os.path.join(out, "analysis.json")))["results"]
    failures = []
    got = {r["operator"]: r["bytes"] for r in results
           if r.get("section") == "reported_memory_peak"}
    if got != dict(live) or not live:
        failures.append("NPU_OP_MEM: live at the peak %s, expected %s" % (got, dict(live)))
    got = {r["component"]: [r["peak_allocated_bytes"], r["peak_reserved_bytes"]]
           for r in results if r.get("section") == "reported_memory_components"}
    if got != dict(comps):
        failures.append("NPU_OP_MEM: components %s, expected %s" % (got, dict(comps)))
    if not failures:
        print("memory (NPU_OP_MEM): %d blocks, %d operators live at the peak (%d bytes "
              "allocated), components %s match" % (len(blocks), len(live), peak_total,
                                                   sorted(comps)))
    return failures


if __name__ == "__main__":
    sys.exit(main())
