#!/usr/bin/env python3
"""What an Nsight Systems SQLite export holds, computed from the raw tables
with Python's sqlite3 alone (NVIDIA's "SQLite Export Schema Reference" and
"Common SQLite examples"), independently of opscope: device tasks by name,
copies by direction, runtime calls and NVTX ranges, as nsys_test.py compares
them with `opscope analyze`.

    nsys_expected.py FILE.sqlite     prints the figures as JSON
"""
import collections
import json
import re
import sqlite3
import sys


def expected(path):
    db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    q = lambda sql: db.execute(sql).fetchall()  # noqa: E731
    tables = {r[0] for r in q("SELECT name FROM sqlite_master WHERE type = 'table'")}
    strings = dict(q("SELECT id, value FROM StringIds")) if "StringIds" in tables else {}
    out = {"kernels": {}, "copies": {}, "runtime": 0, "nvtx_ranges": 0, "operators": {},
           "events": 0}
    kernels = collections.defaultdict(lambda: [0, 0])
    for start, end, name in q("SELECT start, end, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        if end is not None and end >= start:
            kernels[strings.get(name, "")][0] += 1
            kernels[strings.get(name, "")][1] += end - start
            out["events"] += 1
    out["kernels"] = {k: {"count": c, "total_ns": t} for k, (c, t) in kernels.items()}
    kinds = dict(q("SELECT id, name FROM ENUM_CUDA_MEMCPY_OPER"))
    direction = {"HTOD": "HtoD", "HTOA": "HtoD", "DTOH": "DtoH", "ATOH": "DtoH", "DTOD": "DtoD",
                 "ATOA": "DtoD", "ATOD": "DtoD", "DTOA": "DtoD", "PTOP": "PtoP", "HTOH": "HtoH"}
    copies = collections.defaultdict(lambda: [0, 0, 0])
    for start, end, nbytes, kind in q("SELECT start, end, bytes, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"):
        if end is None or end < start:
            continue
        d = direction.get(kinds.get(kind, "").rsplit("_", 1)[-1], "other")
        copies[d][0] += 1
        copies[d][1] += nbytes
        copies[d][2] += end - start
        out["events"] += 1
    out["copies"] = {d: {"count": c, "bytes": b, "total_ns": t} for d, (c, b, t) in copies.items()}
    for table in ("CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"):
        if table in tables:
            out["events"] += q(f"SELECT count(*) FROM {table} WHERE end >= start")[0][0]
    out["runtime"] = q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE end >= start")[0][0]
    out["events"] += out["runtime"]
    types = dict(q("SELECT name, id FROM ENUM_NSYS_EVENT_TYPE"))
    ranges = (types["NvtxPushPopRange"], types["NvtxStartEndRange"], types["KhrDebugPushPopRange"])
    operators = collections.Counter()
    for text, text_id, start, end, kind in q("SELECT text, textId, start, end, eventType FROM NVTX_EVENTS"):
        if kind not in ranges or end is None or end < start:
            continue
        out["nvtx_ranges"] += 1
        text = text if text is not None else strings.get(text_id, "")
        # PyTorch's emit_nvtx: "aten::mm, seq = 12, op_id = 3" is aten::mm.
        m = re.match(r"^([^ ,]+::[^ ,]+)(, (seq|op_id|sizes|input_op_ids)\b.*)?$", text)
        if m:
            operators[m.group(1)] += 1
    out["events"] += out["nvtx_ranges"]
    out["operators"] = dict(operators)
    return out


if __name__ == "__main__":
    print(json.dumps(expected(sys.argv[1]), indent=1, sort_keys=True))
