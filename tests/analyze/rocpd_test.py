#!/usr/bin/env python3
"""rocprofv3's rocpd database (importers/rocpd): a database built to the
published schema by rocpd_make.py (two processes' table sets, and the views
that join them) must read as rocpd_expected.py reads its tables on its own:
every kernel's dispatch count and time, copies by direction with bytes, the
events in all, ROCTx "step N" ranges as steps, the GPU's name, launch calls
linked to their kernels by the events' internal correlation ids (stack_id;
the external correlation_id, 0 in every row, links nothing). A database with only
some tables is read for what it has and names the others; a record whose end
precedes its start is left out and counted.

    rocpd_test.py OPSCOPE DATA_DIR
"""
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rocpd_expected  # noqa: E402
import rocpd_make  # noqa: E402
from checks import Checks  # noqa: E402

opscope = sys.argv[1]
checks = Checks()
check = checks.check


rows = checks.rows


sample = os.path.join(checks.scratch, "4000_results.db")
rocpd_make.make(sample)
want = rocpd_expected.expected(sample)
run, out = checks.analyze(opscope, sample, "rocpd")
check(run.returncode == 0, f"the database is read ({run.stderr.strip()[:200]})")
kernels = checks.kernels_and_copies(out, want)
check(kernels.get("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", {}).get("category")
      == "communication", "RCCL's kernel is communication")
transfers = {r["direction"]: r for r in rows(out, "transfers")}
for direction, c in want["copies"].items():
    got = transfers.get(direction)
    check(got is not None and int(got["count"]) == c["count"] and int(got["bytes"]) == c["bytes"]
          and int(got["total_ns"]) == c["total_ns"],
          f"copies {direction}: {c['count']}, {c['bytes']} B, {c['total_ns']} ns")
check(int(rows(out, "kernels")[0]["events"]) == want["events"], f"{want['events']} complete events")
steps = sorted(r["step"] for r in rows(out, "steps"))
check(steps == sorted(want["markers"]), f"the ROCTx ranges are the steps ({steps})")
launch = rows(out, "launch")
kernel_count = sum(k["count"] for n, k in want["kernels"].items() if not n.startswith("nccl"))
check(launch and int(launch[0]["kernels"]) == kernel_count
      and launch[0]["launch_delay_p50_ns"] == str(want["launch_delay_p50_ns"]),
      f"the launch calls are linked to their {kernel_count} compute kernels, median delay "
      f"{want['launch_delay_p50_ns']} ns ({launch[:1]})")
with open(os.path.join(out, "analysis.json")) as f:
    text = f.read()
check(all(d in text for d in want["devices"]), f"the GPU is named ({want['devices']})")

# Only the strings and the dispatches (a --kernel-trace run), one of whose
# rows ends before it starts.
partial = os.path.join(checks.scratch, "partial_results.db")
rocpd_make.make(partial, sets=["_0011"])
db = sqlite3.connect(partial)
for table in ("rocpd_region", "rocpd_memory_copy", "rocpd_event"):
    db.execute(f'DROP VIEW IF EXISTS "{table}"')
    db.execute(f'DROP TABLE "{table}_0011"')
db.execute('UPDATE "rocpd_kernel_dispatch_0011" SET "end" = start - 1 WHERE id = 1')
(valid,), = db.execute('SELECT count(*) FROM "rocpd_kernel_dispatch_0011" WHERE "end" >= start')
db.commit()
db.close()
run, out = checks.analyze(opscope, partial, "partial")
check(run.returncode == 0, f"a database with some tables is read ({run.stderr.strip()[:200]})")
notes = " ".join(r["note"] for r in rows(out, "import_notes"))
check("rocpd_region_0011" in notes and "rocpd_memory_copy_0011" in notes,
      f"the missing tables are named ({notes[:200]})")
check("1 records without a valid start and end" in notes, "the row ending before it starts is counted")
check(sum(int(r["count"]) for r in rows(out, "kernels")) == valid, f"the other {valid} dispatches are read")

# Not a rocpd database: an SQLite file with other tables is not claimed.
other = os.path.join(checks.scratch, "other_results.db")
db = sqlite3.connect(other)
db.execute("CREATE TABLE t (x)")
db.commit()
db.close()
run, _ = checks.analyze(opscope, other, "other")
check(run.returncode != 0, f"another SQLite file is refused ({run.stderr.strip()[:160]})")

sys.exit(checks.done())
