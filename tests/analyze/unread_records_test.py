#!/usr/bin/env python3
"""Trace health (issue 37, build item 3): a real trace with planted defects.
Events of the ROCm sample (HTA's mi250 Kineto trace) are damaged here, each a
defect of one class (a "ts" that is no time, a "dur" that is no duration),
on framework operators only: every defect must be counted (the import note
names each class with its count), the kernels table must be the clean
trace's (the defects touch no kernel), and the unread_records finding must
weigh the share left out: none on the clean trace, info under 10%, a
warning from 10%, critical from 30% (docs/rules.md). The trace_health table
(analysis.json: every check) counts them against all the records, and its
other checks find here what the raw file holds: events of no duration (the
complete events whose "dur" is 0), none overlapping unevenly. With --strict
the damaged trace fails (exit 3), the count named, nothing written; the clean
one is analysed; a folder holding both fails too (without --strict both are
analysed, the damaged one with its count).

    unread_records_test.py OPSCOPE DATA_DIR
"""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
with gzip.open(os.path.join(data, "kineto/mi250_rocm_train.json.gz"), "rt") as f:
    clean = json.load(f)
complete = [e for e in clean["traceEvents"] if e.get("ph") == "X"]
operators = [i for i, e in enumerate(clean["traceEvents"])
             if e.get("ph") == "X" and e.get("cat") == "cpu_op"]


def planted(name, bad_ts, bad_dur):
    """The trace with the first bad_ts operators' ts and the next bad_dur
    operators' dur damaged; its analysis: (findings, kernels rows, notes)."""
    doc = json.loads(json.dumps(clean))
    for k, i in enumerate(operators[:bad_ts + bad_dur]):
        if k < bad_ts:
            doc["traceEvents"][i]["ts"] = "n/a"
        else:
            doc["traceEvents"][i]["dur"] = {"us": 3}
    path = os.path.join(c.scratch, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    run, out = c.analyze(opscope, path, name)
    c.check(run.returncode == 0, f"{name}: analysed (exit {run.returncode})")
    with open(os.path.join(out, "analysis.json")) as f:
        results = json.load(f)["results"]
    findings = {r["id"]: r for r in results if r["section"] == "findings"}
    notes = " ".join(r["note"] for r in results if r["section"] == "import_notes")
    health = {r["check"].split(" (")[0]: r for r in results if r["section"] == "trace_health"}
    left = bad_ts + bad_dur
    unusable = health.get("records not usable as events")
    c.check(unusable is not None and unusable["count"] == left and unusable["of"] == n,
            f"{name}: trace_health counts {left} of {n} records not usable "
            f"({unusable and (unusable['count'], unusable['of'])})")
    zero = sum(1 for i, e in enumerate(doc["traceEvents"]) if e.get("ph") == "X"
               and e.get("dur") == 0 and i not in operators[:left])
    c.check(health.get("events of no duration", {}).get("count") == zero,
            f"{name}: trace_health counts the {zero} events of no duration")
    kernels = [{k: v for k, v in r.items() if k not in ("trace", "events")}
               for r in c.rows(out, "kernels")]
    return findings, kernels, notes


n = len(complete)
findings, clean_kernels, _ = planted("clean", 0, 0)
c.check("unread_records" not in findings and clean_kernels, "clean: no unread_records finding")

for name, bad_ts, bad_dur, severity in (("few", 3, 2, "info"),
                                        ("tenth", (n + 9) // 10 - 4, 4, "warning"),
                                        ("third", n // 3 - 10, 10, "critical")):
    findings, kernels, notes = planted(name, bad_ts, bad_dur)
    left = bad_ts + bad_dur
    f = findings.get("unread_records")
    c.check(f is not None and f["severity"] == severity and
            f"{left} of the input's {n} records" in f["title"],
            f"{name}: unread_records {severity}, {left} of {n} records "
            f"({f and f['severity']}: {f and f['title'][:120]})")
    c.check(f'"ts" is not a time in microseconds ({bad_ts},' in notes and
            f'"dur" is not a duration in microseconds ({bad_dur},' in notes,
            f"{name}: each class counted in the note ({notes[:240]})")
    c.check(kernels == clean_kernels, f"{name}: the kernels table is the clean trace's")

# All or nothing: --strict.
for name in ("clean", "few"):
    run, out = c.analyze(opscope, os.path.join(c.scratch, name + ".json"), name + "-strict",
                         "--strict")
    if name == "clean":
        c.check(run.returncode == 0, f"--strict: the clean trace is analysed (exit {run.returncode})")
    else:
        c.check(run.returncode == 3 and "--strict: 5 records could not be read" in run.stderr
                and not os.path.exists(out),
                f"--strict: the damaged trace fails, the count named, nothing written "
                f"(exit {run.returncode}: {run.stderr[-200:]})")
folder = os.path.join(c.scratch, "both")
os.makedirs(folder)
for name in ("clean", "few"):
    os.link(os.path.join(c.scratch, name + ".json"), os.path.join(folder, f"rank-{name}.json"))
run, _ = c.analyze(opscope, folder, "both-strict", "--strict")
c.check(run.returncode == 3, f"--strict: a folder with the damaged trace fails (exit {run.returncode})")
sys.exit(c.done())
