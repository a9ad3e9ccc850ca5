#!/usr/bin/env python3
"""Independent validation of an opscope Chrome trace with Python's json module.

Checks the document shape, every event's required fields, per-thread nesting of
complete events (a child ends no later than its parent), and the metadata counts.
Prints a JSON summary (events per name, per thread) on success; exits 1 with the
reason on failure.
"""
import argparse
import collections
import gzip
import json
import sys


def fail(message):
    print(f"check_trace: {message}", file=sys.stderr)
    sys.exit(1)


def ns(value):
    return round(value * 1000)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("--expect-events", type=int)
    parser.add_argument("--expect-dropped", type=int)
    parser.add_argument("--expect-name", action="append", default=[],
                        help="NAME=COUNT of complete events")
    parser.add_argument("--expect-threads", type=int, help="threads with events")
    args = parser.parse_args()

    opener = gzip.open if args.trace.endswith(".gz") else open
    with opener(args.trace, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("not a JSON object with a traceEvents array")
    if doc.get("displayTimeUnit") not in ("ns", "ms"):
        fail("displayTimeUnit missing")
    other = doc.get("otherData")
    if not isinstance(other, dict) or other.get("schemaVersion") != 1:
        fail("otherData.schemaVersion missing")
    for key in ("opscope_version", "host", "dropped_events", "events", "pid"):
        if key not in other:
            fail(f"otherData.{key} missing")

    spans = collections.defaultdict(list)
    names = collections.Counter()
    non_metadata = 0
    for i, e in enumerate(doc["traceEvents"]):
        ph = e.get("ph")
        if ph not in ("X", "i", "C", "M", "s", "f"):
            fail(f"event {i}: unexpected phase {ph!r}")
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            fail(f"event {i}: pid/tid missing")
        if ph == "M":
            if e.get("name") not in ("process_name", "thread_name",
                                     "process_sort_index", "thread_sort_index"):
                fail(f"event {i}: unknown metadata {e.get('name')!r}")
            continue
        non_metadata += 1
        if not isinstance(e.get("ts"), (int, float)):
            fail(f"event {i}: ts missing")
        if not isinstance(e.get("name"), str):
            fail(f"event {i}: name missing")
        if ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                fail(f"event {i}: bad dur")
            start = ns(e["ts"])
            spans[(e["pid"], e["tid"])].append((start, start + ns(e["dur"]), e["name"]))
            names[e["name"]] += 1
        if ph in ("s", "f") and "id" not in e:
            fail(f"event {i}: flow without id")

    for track, events in spans.items():
        events.sort(key=lambda s: (s[0], -(s[1] - s[0])))
        stack = []
        for start, end, name in events:
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                fail(f"thread {track}: {name!r} [{start},{end}] overlaps "
                     f"{stack[-1][2]!r} [{stack[-1][0]},{stack[-1][1]}] without nesting")
            stack.append((start, end, name))

    if other["events"] != non_metadata:
        fail(f"otherData.events={other['events']} but {non_metadata} events present")
    if args.expect_events is not None and non_metadata != args.expect_events:
        fail(f"expected {args.expect_events} events, found {non_metadata}")
    if args.expect_dropped is not None and other["dropped_events"] != args.expect_dropped:
        fail(f"expected dropped_events={args.expect_dropped}, "
             f"found {other['dropped_events']}")
    for item in args.expect_name:
        name, count = item.rsplit("=", 1)
        if names[name] != int(count):
            fail(f"expected {count} events named {name!r}, found {names[name]}")
    if args.expect_threads is not None:
        threads = {t for (_, t) in spans}
        if len(threads) != args.expect_threads:
            fail(f"expected {args.expect_threads} threads, found {len(threads)}")
    json.dump({"events": non_metadata, "names": names, "tracks": len(spans)},
              sys.stdout, ensure_ascii=True)
    print()


if __name__ == "__main__":
    main()
