#!/usr/bin/env python3
"""The exposed_communication rule against an independent reading of each
sample's step_trace_time.csv (docs/formats/ascend.md: Computing,
Communication(Not Overlapped), Overlapped, Communication, Free, Preparing, in
µs): the steps' time is Preparing + Computing + Communication(Not Overlapped)
+ Free (Preparing: the step's start to its first device task, absent in older
outputs), and the rule
must fire exactly when the not-overlapped communication is at least 20% of
it and 1 ms per step, critical from 40%, with the share in its title. Then
the same rank with the breakdown rewritten so that communication is mostly
overlapped: no finding. Where the timeline's step-time diagnosis (the first
finding) is step_device_waiting, that finding gives the account instead:
exposed_communication must then be absent and the diagnosis's evidence must
cite the breakdown's not-overlapped time and step time.

    exposed_communication_test.py OPSCOPE DATA_DIR
"""
import csv
import decimal
import json
import os
import shutil
import subprocess
import sys
import tempfile


def us_to_ns(text):
    return int((decimal.Decimal(text) * 1000).quantize(decimal.Decimal(1),
                                                        rounding=decimal.ROUND_HALF_UP))


def expected(path):
    exposed = step = steps = 0
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            e = us_to_ns(row["Communication(Not Overlapped)"])
            s = us_to_ns(row["Computing"]) + e + us_to_ns(row["Free"]) + \
                us_to_ns(row.get("Preparing") or "0")
            if s > 0:
                exposed, step, steps = exposed + e, step + s, steps + 1
    if not steps:
        return None
    pct = 100.0 * exposed / step
    if pct < 20 or exposed / steps < 1e6:
        return None
    return ("critical" if pct >= 40 else "warning", f"{pct:.1f}%",
            f"communication not overlapped {exposed / 1e6:.3f} ms of {step / 1e6:.3f} ms")


def findings(opscope, folder):
    with tempfile.TemporaryDirectory() as report:
        out = subprocess.run([opscope, "analyze", folder, "--format", "json", "--out", report],
                             capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"FAIL analyze {folder}: exit {out.returncode}: {out.stderr}")
    return [r for r in json.loads(out.stdout)["results"] if r.get("section") == "findings"]


def check(opscope, folder, csv_path, failures):
    want = expected(csv_path)
    rows = findings(opscope, folder)
    got = [r for r in rows if r.get("id") == "exposed_communication"]
    if want is None:
        if got:
            failures.append(f"{folder}: exposed_communication fired ({got[0]['title']}), "
                            "expected no finding")
        return "no finding"
    if rows and rows[0].get("id") == "step_device_waiting":
        if got:
            failures.append(f"{folder}: exposed_communication fired beside the diagnosis "
                            f"step_device_waiting: {got[0]['title']}")
        if want[2] not in rows[0]["evidence"]:
            failures.append(f"{folder}: the diagnosis does not cite '{want[2]}': "
                            f"{rows[0]['evidence']}")
        return f"said by step_device_waiting: {want[2]}"
    if len(got) != 1 or got[0]["severity"] != want[0] or want[1] not in got[0]["title"]:
        failures.append(f"{folder}: expected one {want[0]} finding with {want[1]}, got {got}")
    return f"{want[0]} {want[1]}"


def main():
    opscope, data = sys.argv[1], sys.argv[2]
    failures, checked = [], 0
    for root, _, files in sorted(os.walk(os.path.join(data, "ascend"))):
        if "step_trace_time.csv" in files and root.endswith("ASCEND_PROFILER_OUTPUT"):
            rank = os.path.dirname(root)
            print(f"{os.path.relpath(rank, data)}: "
                  f"{check(opscope, rank, os.path.join(root, 'step_trace_time.csv'), failures)}")
            checked += 1
    if checked == 0:
        failures.append("no sample has a step_trace_time.csv: the rule was not checked")
    # A rank whose communication is mostly overlapped: the rule must not fire.
    with tempfile.TemporaryDirectory() as tmp:
        rank = os.path.join(tmp, "rank0_ascend_pt")
        shutil.copytree(os.path.join(data, "ascend", "level1_text", "rank0_ascend_pt"), rank)
        path = os.path.join(rank, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv")
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        header = list(rows[0].keys())
        for r in rows:  # 100 ms computing, 5 ms of 90 ms communication exposed
            r.update({"Computing": "100000", "Communication(Not Overlapped)": "5000",
                      "Overlapped": "85000", "Communication": "90000", "Free": "1000"})
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=header)
            w.writeheader()
            w.writerows(rows)
        print(f"overlapped copy: {check(opscope, rank, path, failures)}")
    if failures:
        print("\n".join("FAIL " + f for f in failures))
        sys.exit(1)
    print("ok: exposed_communication fires exactly where step_trace_time.csv says it should")


if __name__ == "__main__":
    main()
