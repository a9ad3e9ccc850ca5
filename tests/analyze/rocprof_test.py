#!/usr/bin/env python3
"""rocprofv3's JSON output (importers/rocprof): what `opscope analyze`
reports of the real file in tests/data/rocprofv3 must equal what
rocprof_expected.py computes from the raw document on its own (every
kernel's dispatch count and time, the events in all, the device's name,
RCCL's kernels as communication, the steps the kernels show and what fills
them); a document without the tool's array is refused by name.

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

# The file records no steps; the kernels show the iterations (a kernel
# dispatched once per step), and the steady steps wait in communication.
want_steps = rocprof_expected.steps(sample)
with open(os.path.join(out, "tables", "steps.csv")) as f:
    got_steps = list(csv.DictReader(f))
check(len(got_steps) == len(want_steps) > 6, f"{len(want_steps)} inferred steps ({len(got_steps)})")
for got, (b, d, status, exposed, compute) in zip(got_steps, want_steps):
    check(int(got["duration_ns"]) == d and got["status"] == status and
          int(got["communication_exposed_ns"]) == exposed and int(got["compute_ns"]) == compute,
          f"{got['step']}: {d} ns, {status}, {exposed} ns of exposed communication, {compute} ns of "
          f"compute ({got['duration_ns']}, {got['status']}, {got['communication_exposed_ns']}, "
          f"{got['compute_ns']})")
complete = [s for s in want_steps if s[2] == "complete"]
exposed_pct = 100.0 * sum(s[3] for s in complete) / sum(s[1] for s in complete)
with open(os.path.join(out, "analysis.json")) as f:
    findings = [r for r in json.load(f)["results"] if r["section"] == "findings"]
first = findings[0] if findings else {}
check(first.get("id") == "step_device_waiting" and "communication" in first.get("title", "")
      and f"{exposed_pct:.1f}% of the {len(complete)} complete inferred steps" in first.get("title", ""),
      f"first: the steady steps wait {exposed_pct:.1f}% in communication ({first.get('title', '')[:160]})")
check(not any(f["id"] in ("dominant_operator", "step_host_overhead", "low_device_utilization")
              for f in findings),
      "no finding says to optimise the collective kernel, host-bound or idle from the whole window")

bad = os.path.join(checks.scratch, "bad_results.json")
with open(bad, "w") as f:
    json.dump({"rocprofiler-sdk-tool": {"metadata": {}}}, f)
run, _ = checks.analyze(opscope, bad, "bad")
check(run.returncode != 0 and "not rocprofv3's JSON output" in run.stderr,
      f"a document without the tool's array is refused ({run.stderr.strip()[:160]})")

sys.exit(checks.done())
