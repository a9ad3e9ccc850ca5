#!/usr/bin/env python3
"""Checks that a command's JSON output has the shape every opscope command shares:
schema_version, opscope_version, command, machine, and a results array of objects
whose keys are snake_case, each once, and name base units (ns, bytes, FLOPs,
bytes/s, FLOP/s: never _us, _ms, _mib, gbps, ...). Optional --require KEY:
every result has KEY."""
import json
import re
import sys

args = sys.argv[1:]
required = [args[i + 1] for i, a in enumerate(args) if a == "--require"]


def unique_keys(pairs):
    keys = [k for k, _ in pairs]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        sys.exit(f"key {repeated[0]!r} appears twice in one object: {dict(pairs)}")
    return dict(pairs)


NOT_BASE = re.compile(r"(^|_)(us|ms|mib|kib|mb|gbytes|gbps|gflops|tflops|gflop)(_|$)")
doc = json.load(sys.stdin, object_pairs_hook=unique_keys)
for key in ("schema_version", "opscope_version", "command", "machine", "results"):
    if key not in doc:
        sys.exit(f"missing top-level key {key!r}")
if doc["schema_version"] != 4:
    sys.exit("schema_version is not 4")
for key in ("host", "cpu_model", "logical_cpus", "memory_bytes"):
    if key not in doc["machine"]:
        sys.exit(f"machine.{key} missing")
if not isinstance(doc["results"], list) or not doc["results"]:
    sys.exit("results is not a non-empty array")
for row in doc["results"]:
    for key in row:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", key):
            sys.exit(f"result key {key!r} is not snake_case")
        if NOT_BASE.search(key):
            sys.exit(f"result key {key!r} names a unit that is not a base unit")
    for key in required:
        if key not in row:
            sys.exit(f"result without {key!r}: {row}")
print("ok")
