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
import sys


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


if __name__ == "__main__":
    print(json.dumps(expected(sys.argv[1]), indent=1, sort_keys=True))
