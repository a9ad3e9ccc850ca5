#!/usr/bin/env python3
"""rocprofv3's JSON output (importers/rocprof): what `opscope analyze`
reports of the real file in tests/data/rocprofv3 must equal what
rocprof_expected.py computes from the raw document on its own (every
kernel's dispatch count and time, the events in all, the device's name,
RCCL's kernels as communication); a document without the tool's array is
refused by name.

    rocprof_test.py OPSCOPE DATA_DIR
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rocprof_expected  # noqa: E402
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
checks = Checks()
check = checks.check

sample = os.path.join(data, "rocprofv3", "908_results.json.gz")
want = rocprof_expected.expected(sample)
run, out = checks.analyze(opscope, sample, "908")
check(run.returncode == 0, f"the file is read ({run.stderr.strip()[:200]})")
with open(os.path.join(out, "tables", "kernels.csv")) as f:
    rows = list(csv.DictReader(f))
kernels = {r["operator"]: r for r in rows}
for name, k in want["kernels"].items():
    got = kernels.get(name)
    check(got is not None and int(got["count"]) == k["count"] and int(got["total_ns"]) == k["total_ns"],
          f"kernel {name[:60]}: {k['count']} dispatches, {k['total_ns']} ns")
check(int(rows[0]["events"]) == want["events"], f"{want['events']} complete events")
check(all(r["category"] == "communication" for r in rows if r["operator"].startswith("ncclDevKernel")),
      "RCCL's kernels are communication")
with open(os.path.join(out, "analysis.json")) as f:
    text = f.read()
check(want["devices"] and want["devices"][0] in text, f"the device is named ({want['devices'][:1]})")

bad = os.path.join(checks.scratch, "bad_results.json")
with open(bad, "w") as f:
    json.dump({"rocprofiler-sdk-tool": {"metadata": {}}}, f)
run, _ = checks.analyze(opscope, bad, "bad")
check(run.returncode != 0 and "not rocprofv3's JSON output" in run.stderr,
      f"a document without the tool's array is refused ({run.stderr.strip()[:160]})")

sys.exit(checks.done())
