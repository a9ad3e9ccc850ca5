#!/usr/bin/env python3
"""What a rocprofv3 JSON file (rocprofiler-sdk-tool) holds, from the raw
document with Python's json and gzip alone, independently of opscope: kernel
dispatches by kernel name (the symbol's demangled name without its ".kd"
suffix), copies by direction, host calls, and the GPUs' product names.

    rocprof_expected.py FILE.json[.gz]    prints the figures as JSON
"""
import collections
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden.make_expected import covered, union  # noqa: E402  (interval sums, shared)


def expected(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        doc = json.load(f)
    out = {"kernels": {}, "copies": {}, "calls": 0, "events": 0, "devices": []}
    kernels = collections.defaultdict(lambda: [0, 0])
    copies = collections.defaultdict(lambda: [0, 0, 0])
    for tool in doc["rocprofiler-sdk-tool"]:
        out["devices"] += [a.get("product_name") or a.get("name") for a in tool["agents"]
                           if a["type"] == 2]
        names = {}
        for k in tool["kernel_symbols"]:
            name = k.get("demangled_kernel_name") or k.get("formatted_kernel_name") or k["kernel_name"]
            for suffix in (" [clone .kd]", ".kd"):
                if name.endswith(suffix):
                    name = name[: -len(suffix)]
            names[k["kernel_id"]] = name
        kinds = tool["strings"]["buffer_records"]
        records = tool["buffer_records"]
        for r in records.get("kernel_dispatch", []):
            if r["end_timestamp"] < r["start_timestamp"]:
                continue
            k = kernels[names.get(r["dispatch_info"]["kernel_id"], "(unknown kernel)")]
            k[0] += 1
            k[1] += r["end_timestamp"] - r["start_timestamp"]
            out["events"] += 1
        for r in records.get("memory_copy", []):
            op = kinds[r["kind"]]["operations"][r["operation"]]
            d = {"HOST_TO_DEVICE": "HtoD", "DEVICE_TO_HOST": "DtoH", "HOST_TO_HOST": "HtoH"}.get(
                op.replace("MEMORY_COPY_", ""), "DtoD")
            c = copies[d]
            c[0] += 1
            c[1] += r.get("bytes", 0)
            c[2] += r["end_timestamp"] - r["start_timestamp"]
            out["events"] += 1
        for kind in ("hip_api", "rccl_api", "marker_api"):
            n = sum(1 for r in records.get(kind, []) if r["end_timestamp"] > r["start_timestamp"]
                    or kind != "marker_api")
            out["events"] += n
            if kind != "marker_api":
                out["calls"] += n
    out["kernels"] = {k: {"count": c, "total_ns": t} for k, (c, t) in kernels.items()}
    out["copies"] = {d: {"count": c, "bytes": b, "total_ns": t} for d, (c, b, t) in copies.items()}
    return out


def steps(path):
    """The steps of a file that records none, as the trace's kernels show
    them: a kernel dispatched once per iteration repeats with the same number
    of dispatches between two of its own (within 10%, 100 or more), the
    least-dispatched such kernel (7 dispatches or more; of equals, the first
    dispatched) marks them; each step runs from one of its dispatches to the
    next. Leading steps over 1.5x the median of the later ones are warm-up.
    For each step: (begin, duration, status, exposed RCCL ns, compute ns)."""
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        tool = json.load(f)["rocprofiler-sdk-tool"][0]
    agents = collections.defaultdict(list)
    for r in tool["buffer_records"].get("kernel_dispatch", []):
        if r["end_timestamp"] >= r["start_timestamp"]:
            agents[r["dispatch_info"]["agent_id"]["handle"]].append(
                (r["start_timestamp"], r["end_timestamp"], r["dispatch_info"]["kernel_id"]))
    names = {k["kernel_id"]: k.get("demangled_kernel_name") or k["kernel_name"]
             for k in tool["kernel_symbols"]}
    rows = sorted(max(agents.values(), key=len), key=lambda x: x[0])
    at = collections.defaultdict(list)
    for i, (_, _, kernel) in enumerate(rows):
        at[names[kernel]].append(i)
    # Of the kernels dispatched the fewest times that repeat so, the one whose
    # intervals run exactly the same kernels most often, then the first.
    marker, best = None, None
    for name, where in sorted(at.items(), key=lambda kv: (len(kv[1]), kv[1][0])):
        gaps = [b - a for a, b in zip(where, where[1:])]
        if len(where) < 7 or (marker and len(where) > len(marker)):
            continue
        median = sorted(gaps)[len(gaps) // 2]
        if median >= 100 and all(abs(g - median) <= median / 10 for g in gaps):
            same = collections.Counter(
                tuple(sorted(collections.Counter(rows[i][2] for i in range(a, b)).items()))
                for a, b in zip(where, where[1:])).most_common(1)[0][1]
            if best is None or same > best:
                marker, best = where, same
    if marker is None:
        return []
    spans = [(rows[a][0], rows[b][0] - rows[a][0]) for a, b in zip(marker, marker[1:])]
    comm = union([(b, e) for b, e, k in rows if names[k].startswith("ncclDevKernel")])
    compute = union([(b, e) for b, e, k in rows if not names[k].startswith("ncclDevKernel")])
    out = []
    warm = True
    for i, (b, d) in enumerate(spans):
        later = sorted(x[1] for x in spans[i + 1:])
        warm = warm and len(later) >= 2 and d > 1.5 * later[len(later) // 2]
        both = union([(x, min(y, b + d)) for x, y in comm + compute if y > b and x < b + d])
        exposed = covered(both, b, b + d) - covered(compute, b, b + d)
        out.append((b, d, "warm-up" if warm else "complete", exposed, covered(compute, b, b + d)))
    return out


if __name__ == "__main__":
    print(json.dumps(expected(sys.argv[1]), indent=1, sort_keys=True))
