#!/usr/bin/env python3
"""What a rocpd database (rocprofv3) holds, from its tables with Python's
sqlite3 alone, independently of opscope: kernel dispatches by kernel name
(display_name without the ".kd" suffix), copies by direction (the copy's
name), host calls, ROCTx ranges, and the delay from each launch call to its
kernel's start (the two records' events share their internal correlation id,
stack_id: rocprofv3's generateRocpd writes correlation_id.internal there),
each set of tables (name suffix) on its own.

    rocpd_expected.py FILE.db    prints the figures as JSON
"""
import collections
import json
import sqlite3
import sys


def expected(path):
    db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    sets = [n[len("rocpd_string"):] for (n,) in db.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'rocpd_string%'")]
    kernels = collections.defaultdict(lambda: [0, 0])
    copies = collections.defaultdict(lambda: [0, 0, 0])
    out = {"calls": 0, "markers": [], "events": 0, "devices": set()}
    delays = []
    for u in sets:
        strings = dict(db.execute(f'SELECT id, string FROM "rocpd_string{u}"'))
        symbols = {}
        for i, display, name in db.execute(f'SELECT id, display_name, kernel_name FROM "rocpd_info_kernel_symbol{u}"'):
            name = display or name
            for suffix in (" [clone .kd]", ".kd"):
                if name.endswith(suffix):
                    name = name[: -len(suffix)]
            symbols[i] = name
        out["devices"] |= {p for (p,) in db.execute(
            f'SELECT product_name FROM "rocpd_info_agent{u}" WHERE type = \'GPU\'')}
        for kid, start, end in db.execute(f'SELECT kernel_id, start, "end" FROM "rocpd_kernel_dispatch{u}"'):
            kernels[symbols[kid]][0] += 1
            kernels[symbols[kid]][1] += end - start
            out["events"] += 1
        for name_id, size, start, end in db.execute(
                f'SELECT name_id, size, start, "end" FROM "rocpd_memory_copy{u}"'):
            d = {"MEMORY_COPY_HOST_TO_DEVICE": "HtoD", "MEMORY_COPY_DEVICE_TO_HOST": "DtoH"}.get(
                strings[name_id], "other")
            copies[d][0] += 1
            copies[d][1] += size
            copies[d][2] += end - start
            out["events"] += 1
        for name_id, cat, start, end in db.execute(
                f'SELECT R.name_id, E.category_id, R.start, R."end" FROM "rocpd_region{u}" R '
                f'JOIN "rocpd_event{u}" E ON E.id = R.event_id'):
            if "MARKER" in strings[cat]:
                out["markers"].append(strings[name_id])
            else:
                out["calls"] += 1
            out["events"] += 1
        delays += [k - r for (r, k) in db.execute(
            f'SELECT R.start, K.start FROM "rocpd_region{u}" R '
            f'JOIN "rocpd_event{u}" RE ON RE.id = R.event_id '
            f'JOIN "rocpd_event{u}" KE ON KE.stack_id = RE.stack_id AND KE.stack_id > 0 '
            f'JOIN "rocpd_kernel_dispatch{u}" K ON K.event_id = KE.id')]
    delays.sort()
    out["launch_delay_p50_ns"] = delays[len(delays) // 2] if delays else None
    out["kernels"] = {k: {"count": c, "total_ns": t} for k, (c, t) in kernels.items()}
    out["copies"] = {d: {"count": c, "bytes": b, "total_ns": t} for d, (c, b, t) in copies.items()}
    out["devices"] = sorted(out["devices"])
    return out


if __name__ == "__main__":
    print(json.dumps(expected(sys.argv[1]), indent=1, sort_keys=True))
