#!/usr/bin/env python3
"""Kineto's own log of a recording (issue 37, trace health: a producer's loss
counters): libkineto's logger collector writes the lines of each severity as
a top-level array of the trace ("INFO", "WARNING", "ERROR"; each line
"SEVERITY:date time pid:tid file:line] text", libkineto/src/Logger.cpp).
Two of its warnings say device activity is missing: "Exceeded max GPU buffer
count (N >= M) - terminating tracing" (CuptiActivityApi::bufferRequested)
and "Dropped N activity records" (bufferCompleted).

- the real MTIA sample's ERROR line is said in the import notes;
- a real CUDA sample (cuda_event_sync_multi_stream) given those two warnings,
  the dropped counts 1,200 and 34, and another warning logged twice: the
  notes say tracing stopped, 1,234 records dropped, and the other warning
  with its count; INFO lines say nothing; the rest of the analysis (the
  kernels table) is as on the clean trace; the producer_dropped finding
  weighs the 1,234 against the device records the trace holds (its severity
  from that share, the stop said), a stop alone is a warning, and neither
  the clean trace nor another warning alone has it.

    kineto_log_test.py OPSCOPE DATA_DIR
"""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()


def notes(out):
    with open(os.path.join(out, "analysis.json")) as f:
        return [r["note"] for r in json.load(f)["results"] if r["section"] == "import_notes"]


with gzip.open(os.path.join(data, "kineto", "mtia_inference_rank_0.json.gz"), "rt") as f:
    mtia = json.load(f)
errors = [line.split("] ", 1)[1] for line in mtia.get("ERROR", [])]
run, out = c.analyze(opscope, os.path.join(data, "kineto", "mtia_inference_rank_0.json.gz"),
                     "mtia")
said = notes(out)
c.check(errors and all(any(e in n for n in said) for e in errors),
        f"the MTIA sample's {len(errors)} ERROR line(s) are said: {errors}")

sample = os.path.join(data, "kineto", "cuda_event_sync_multi_stream.json.gz")
with gzip.open(sample, "rt") as f:
    doc = json.load(f)
prefix = "WARNING:2024-04-11 13:30:09 3727853:3727853 CuptiActivityApi.cpp:{}] "
doc["WARNING"] = [
    prefix.format(160) + "Exceeded max GPU buffer count (16 >= 16) - terminating tracing",
    prefix.format(326) + "Dropped 1200 activity records",
    prefix.format(326) + "Dropped 34 activity records",
    prefix.format(99) + "Some other thing happened",
    prefix.format(99) + "Some other thing happened",
]
doc["INFO"] = doc.get("INFO", []) + ["INFO:2024-04-11 13:30:09 1:1 X.cpp:1] nothing to say"]
path = os.path.join(c.scratch, "logged.json")
with open(path, "w") as f:
    json.dump(doc, f)
run, logged = c.analyze(opscope, path, "logged")
c.check(run.returncode == 0, f"analysed (exit {run.returncode})")
said = notes(logged)
c.check(any("stopped recording device activity" in n and "(16 >= 16)" in n for n in said),
        "the buffer limit is said to have stopped the recording")
c.check(any("dropped 1234 activity records" in n for n in said),
        "the dropped records are summed: 1234")
c.check(any("'warning: Some other thing happened' (2 times)" in n for n in said),
        "another warning is said once with its count")
c.check(not any("nothing to say" in n for n in said), "INFO lines say nothing")
run, clean = c.analyze(opscope, sample, "clean")

def kernels(out):
    return [{k: v for k, v in r.items() if k != "trace"} for r in c.rows(out, "kernels")]


c.check(kernels(clean) == kernels(logged) and kernels(clean),
        "the kernels table is the clean trace's")


def findings(out):
    with open(os.path.join(out, "analysis.json")) as f:
        return {r["id"]: r for r in json.load(f)["results"] if r["section"] == "findings"}


# The producer_dropped finding: the device records the trace holds (kernels,
# copies, sets, as Kineto's categories name them) beside the 1234 dropped:
# critical from 10%, and the stop said.
device = sum(1 for e in doc["traceEvents"] if e.get("ph") == "X"
             and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
share = 100 * 1234 / (1234 + device)
f = findings(logged).get("producer_dropped", {})
c.check(f.get("severity") == ("critical" if share >= 10 else "warning" if share >= 1 else "info")
        and f"dropped 1234 device records while recording ({share:.1f}% of the {1234 + device}"
        in f.get("title", "") and "stopped recording device activity" in f.get("title", ""),
        f"producer_dropped: {share:.1f}% of {1234 + device} device records "
        f"({f.get('severity')}: {f.get('title', '')[:160]})")
c.check("producer_dropped" not in findings(clean), "clean: no producer_dropped finding")
# Only the stop, no count: a warning that says so; another warning alone: nothing.
doc["WARNING"] = doc["WARNING"][:1]
path = os.path.join(c.scratch, "stopped.json")
with open(path, "w") as g:
    json.dump(doc, g)
run, stopped = c.analyze(opscope, path, "stopped")
f = findings(stopped).get("producer_dropped", {})
c.check(f.get("severity") == "warning" and "stopped recording device activity before the end"
        in f.get("title", ""), f"a stop alone is a warning ({f.get('title', '')[:120]})")
# Counts a file can hold but no sum can: two of 2^63 - 1 records saturate
# (UBSan, in the asan preset, would stop a signed overflow) and read as all.
doc["WARNING"] = [prefix.format(326) + "Dropped 9223372036854775807 activity records"] * 2
with open(path, "w") as g:
    json.dump(doc, g)
run, huge = c.analyze(opscope, path, "huge")
f = findings(huge).get("producer_dropped", {}) if run.returncode == 0 else {}
c.check(run.returncode == 0 and f.get("severity") == "critical" and "dropped 9223372036854775807 device records" in f.get("title", ""),
        f"2 x (2^63 - 1) dropped records: analysed, critical, all of it ({run.returncode}: "
        f"{f.get('title', run.stderr[-200:])[:120]})")
doc["WARNING"] = [prefix.format(99) + "Some other thing happened"]
with open(path, "w") as g:
    json.dump(doc, g)
run, other = c.analyze(opscope, path, "other")
c.check("producer_dropped" not in findings(other), "another warning alone: no producer_dropped")
sys.exit(c.done())
