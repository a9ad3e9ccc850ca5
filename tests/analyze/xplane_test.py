#!/usr/bin/env python3
"""XPlane (importers/xplane): what `opscope analyze` reports of the real JAX
XSpace in tests/data/xplane must equal what xplane_expected.py computes from
the raw protobuf with its own decoder (every kernel's count and time, the
timed events in all); the damaged TPU copy (bytes replaced by U+FFFD) is
refused with the offset and the damage named, never read as garbage.

    xplane_test.py OPSCOPE DATA_DIR
"""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xplane_expected  # noqa: E402
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
checks = Checks()
check = checks.check

sample = os.path.join(data, "xplane", "jax_conv_mi300.xplane.pb")
want = xplane_expected.expected(sample)
run, out = checks.analyze(opscope, sample, "jax")
check(run.returncode == 0, f"the XSpace is read ({run.stderr.strip()[:200]})")
with open(os.path.join(out, "tables", "kernels.csv")) as f:
    rows = list(csv.DictReader(f))
kernels = {}
for r in rows:
    if r["category"] in ("kernel", "memcpy", "memset", "communication"):
        kernels[r["operator"]] = r
for name, k in want["kernels"].items():
    got = kernels.get(name)
    check(got is not None and int(got["count"]) == k["count"] and int(got["total_ns"]) == k["total_ns"],
          f"kernel {name[:60]}: {k['count']} calls, {k['total_ns']} ns")
check(int(rows[0]["events"]) == want["events"], f"{want['events']} timed events")

damaged = os.path.join(data, "xplane", "tpu_inference_2.xplane.pb")
run, _ = checks.analyze(opscope, damaged, "tpu")
check(run.returncode == 3 and "not a valid XSpace protobuf at byte" in run.stderr
      and "258174 U+FFFD sequences" in run.stderr,
      f"the damaged copy is refused, its damage named ({run.stderr.strip()[:200]})")

sys.exit(checks.done())
