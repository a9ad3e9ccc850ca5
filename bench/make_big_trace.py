#!/usr/bin/env python3
"""Writes a large Kineto trace by replicating a real sample: each copy's
timestamps are shifted past the previous copy's end, and its correlation and
external ids are offset, so the result is one long, consistent trace.
Usage: make_big_trace.py SAMPLE.json.gz OUT.json TARGET_MB"""
import gzip
import json
import sys

sample, out_path, target_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
with gzip.open(sample, "rt", encoding="utf-8") as f:
    doc = json.load(f)
events = doc["traceEvents"]
xs = [e for e in events if isinstance(e.get("ts"), (int, float))]
start = min(e["ts"] for e in xs)
end = max(e["ts"] + e.get("dur", 0) for e in xs)
span = end - start + 1000
meta = {k: v for k, v in doc.items() if k != "traceEvents"}
body = [e for e in events if e.get("ph") != "M"]
head = [e for e in events if e.get("ph") == "M"]
target = int(target_mb * 1e6)
written = 0
with open(out_path, "w", encoding="utf-8") as out:
    out.write("{")
    for k, v in meta.items():
        out.write(json.dumps(k) + ": " + json.dumps(v) + ",\n")
    out.write('"traceEvents": [\n')
    first = True
    for e in head:
        out.write(("" if first else ",\n") + json.dumps(e))
        first = False
    copy = 0
    while written < target:
        shift = copy * span
        lines = []
        for e in body:
            e2 = dict(e)
            if isinstance(e2.get("ts"), (int, float)):
                e2["ts"] = e2["ts"] + shift
            if "id" in e2 and isinstance(e2["id"], int):
                e2["id"] = e2["id"] + copy * 10_000_000
            if isinstance(e2.get("args"), dict):
                a = dict(e2["args"])
                for key in ("correlation", "External id"):
                    if isinstance(a.get(key), int):
                        a[key] = a[key] + copy * 10_000_000
                e2["args"] = a
            lines.append(json.dumps(e2))
        chunk = ",\n" + ",\n".join(lines)
        out.write(chunk)
        written += len(chunk)
        copy += 1
    out.write("\n]}\n")
print(f"{out_path}: {copy} copies, {written / 1e6:.0f} MB of events")
