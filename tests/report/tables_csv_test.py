#!/usr/bin/env python3
"""Every table of `opscope analyze` as its own CSV (DIR/tables/<section>.csv),
each loading with pandas.read_csv unchanged: unique column names, and the same
rows and columns as the table's rows in analysis.json.

Inputs: the real torch_npu level-1 tree (Ascend tables) and two ranks of a
real Kineto NCCL job (per-trace tables of one section in one file).

    tables_csv_test.py OPSCOPE DATA_DIR
"""
import collections
import glob
import json
import math
import os
import subprocess
import sys
import tempfile

try:
    import pandas
except ImportError:
    print("SKIP: pandas is not installed (scripts/install-deps installs python3-pandas)")
    sys.exit(77)


def check(opscope, inputs, out, failures):
    subprocess.run([opscope, "analyze"] + inputs + ["--top", "0", "--format", "json",
                                                    "--out", out],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    doc = json.load(open(os.path.join(out, "analysis.json")))
    by_section = collections.defaultdict(list)
    for r in doc["results"]:
        by_section[r["section"]].append(r)
    # Every table, empty ones too, with its columns (analysis.json's `tables`).
    listed = {}
    for t in doc["tables"]:
        listed.setdefault(t["section"], [c["key"] for c in t["columns"]])
        if t["rows"] != 0 and t["section"] not in by_section:
            failures.append("%s: %s lists %d rows, results has none" % (inputs, t["section"], t["rows"]))
    for section, rows in by_section.items():
        if sum(t["rows"] for t in doc["tables"] if t["section"] == section) != len(rows):
            failures.append("%s: tables and results disagree on %s's rows" % (inputs, section))
    files = sorted(glob.glob(os.path.join(out, "tables", "*.csv")))
    names = {os.path.basename(f)[:-4] for f in files}
    if names != set(listed):
        failures.append("%s: files %s, sections %s" % (inputs, sorted(names), sorted(listed)))
    for f in files:
        section = os.path.basename(f)[:-4]
        frame = pandas.read_csv(f, keep_default_na=False)
        columns = list(frame.columns)
        if len(set(columns)) != len(columns):
            failures.append("%s: duplicate columns %s" % (f, columns))
        rows = by_section.get(section, [])
        keys = [k for k in rows[0] if k != "section"] if rows else listed.get(section, [])
        if columns != keys:
            failures.append("%s: columns %s, analysis.json has %s" % (f, columns, keys))
            continue
        if len(frame) != len(rows):
            failures.append("%s: %d rows, analysis.json has %d" % (f, len(frame), len(rows)))
            continue
        for i, row in enumerate(rows):
            for k in keys:
                want, got = row[k], frame[k][i]
                if want is None:
                    ok = got == ""
                elif isinstance(want, (int, float)) and not isinstance(want, bool):
                    ok = got != "" and math.isclose(float(got), float(want), rel_tol=1e-3,
                                                    abs_tol=1e-3)
                else:
                    ok = str(got) == str(want)
                if not ok:
                    failures.append("%s row %d %s: %r, analysis.json %r" % (f, i, k, got, want))
                    break
    return len(files)


def main():
    opscope, data = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        n = check(opscope, [os.path.join(data, "ascend", "level1_text")],
                  os.path.join(tmp, "ascend"), failures)
        m = check(opscope, [os.path.join(data, "kineto", "sampled_rank-0.json.gz"),
                            os.path.join(data, "kineto", "sampled_rank-1.json.gz")],
                  os.path.join(tmp, "kineto"), failures)
    if failures:
        print("\n".join(failures[:30]))
        return 1
    print("tables: %d and %d CSVs load with pandas, each as analysis.json has it" % (n, m))
    return 0


if __name__ == "__main__":
    sys.exit(main())
