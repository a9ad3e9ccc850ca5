#!/usr/bin/env python3
"""The AI Core operators by family (the ai_core_families table and the
ai_core_shapes finding), as msprof-analyze's advisor checks them, against
ai_core_families_expected.py over the real kernel_details.csv samples in
tests/data/ascend: the same operators and shapes judged, with the same
verdict, and a finding naming the shapes called not affine. A planted copy
whose matmul inner axis is padded to a multiple of 256 is then judged affine.

    ai_core_families_test.py OPSCOPE DATA_DIR
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ai_core_families_expected  # noqa: E402
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
checks = Checks()
check = checks.check


def judged(sample, tag):
    run, out = checks.analyze(opscope, sample, tag)
    check(run.returncode == 0, f"{tag}: analysed ({run.stderr.strip()[:200]})")
    path = os.path.join(out, "tables", "ai_core_families.csv")
    rows = list(csv.DictReader(open(path))) if os.path.exists(path) else []
    with open(os.path.join(out, "analysis.json")) as f:
        findings = [r for r in json.load(f)["results"] if r["section"] == "findings"]
    return rows, findings


for sample in ("kernel_details.csv", "kernel_details_advisor.csv",
               os.path.join("level1_text", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT",
                             "kernel_details.csv")):
    path = os.path.join(data, "ascend", sample)
    want = ai_core_families_expected.families(path)
    rows, findings = judged(path, sample.replace(os.sep, "_"))
    got = sorted((r["family"], r["name"], int(r["count"]), r["verdict"]) for r in rows)
    expect = sorted((w["family"], w["name"], w["count"], w["verdict"]) for w in want)
    check(got == expect, f"{sample}: {len(expect)} shapes judged alike "
          f"(only opscope: {[g for g in got if g not in expect][:3]}; "
          f"only expected: {[e for e in expect if e not in got][:3]})")
    not_affine = [w for w in want if w["verdict"] == "not affine"]
    shapes = [f for f in findings if f["id"] == "ai_core_shapes"]
    if not_affine:
        check(len(shapes) == 1 and all(w["name"] in shapes[0]["evidence"] for w in not_affine[:3]),
              f"{sample}: the finding names the {len(not_affine)} shapes not affine")
    else:
        check(not shapes, f"{sample}: no shape finding where every shape is affine")

# The same file with MatMulV5's inner axis 15365 padded to 15616 (61 x 256):
# affine, judged by its ratios instead.
source = os.path.join(data, "ascend", "kernel_details.csv")
os.makedirs(os.path.join(checks.scratch, "planted"))
planted = os.path.join(checks.scratch, "planted", "kernel_details.csv")
with open(source) as f:
    text = f.read()
check("8192,15365" in text, "the sample holds the unaligned matmul")
with open(planted, "w") as f:
    f.write(text.replace("8192,15365", "8192,15616"))
rows, _ = judged(planted, "padded")
v5 = [r for r in rows if r["name"].endswith("MatMulV5")]
check(len(v5) == 1 and v5[0]["verdict"] != "not affine",
      f"the padded matmul is affine ({[r['verdict'] for r in v5]})")
want = ai_core_families_expected.families(planted)
check(sorted((r["name"], r["verdict"]) for r in rows) ==
      sorted((w["name"], w["verdict"]) for w in want), "the padded file judged as expected")

sys.exit(checks.done())
