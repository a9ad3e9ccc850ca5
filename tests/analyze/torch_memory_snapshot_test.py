#!/usr/bin/env python3
"""PyTorch's caching-allocator snapshot (issue 37: torch.cuda.memory.
_dump_snapshot's pickle) against an independent reading of the same data.

No CUDA device records one here, so the snapshot is built below as PyTorch
documents it (the docstring of torch.cuda.memory._snapshot and the
"Understanding CUDA Memory Usage" page: "segments" with their "blocks" and
"frames", "device_traces" with alloc / free_requested / free_completed /
segment_alloc / segment_free / oom entries, "time_us", "device_free") and
written with Python's pickle at protocols 2, 4 and 5, plain and gzipped. Its
history starts after blocks were allocated (the history is a ring buffer):
one is freed in the history, one is still live at the end.

The expected figures are computed here from the dict, with PyTorch's
definitions: a block counts as allocated from its alloc to its
free_requested (torch.cuda.memory_allocated), at the requested size the
history records (the state's blocks at their requested_size too; the pools
at the rounded sizes the allocator holds); the state before the history
is what the end state and the history's frees imply; the peak is the first
highest total; a site is the innermost frame outside torch/ of a Python
file, else the innermost Python frame, else the outermost at::_ops entry.

    torch_memory_snapshot_test.py OPSCOPE [REAL_SNAPSHOT.pickle]

A real snapshot given as the second argument is checked the same way (its
dict read with a restricted unpickler that loads no class).
"""
import collections
import gzip
import io
import json
import os
import pickle
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

opscope = sys.argv[1]
real = sys.argv[2] if len(sys.argv) > 2 else None
c = Checks()
MiB = 1024 * 1024


def frame(name, filename, line):
    return {"name": name, "filename": filename, "line": line}


USER = [frame("at::native::empty_cuda", "EmptyTensor.cpp", 0),
        frame("at::_ops::linear::call", "??", 0),
        frame("forward", "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", 116),
        frame("forward", "/home/u/model.py", 40),
        frame("train_step", "/home/u/train.py", 88)]
TORCH_ONLY = [frame("step", "/usr/lib/python3/dist-packages/torch/optim/adam.py", 150)]
CPP_ONLY = [frame("c10::cuda::CUDACachingAllocator::malloc", "??", 0),
            frame("at::_ops::empty_strided::call", "??", 0),
            frame("at::_ops::to_dtype_layout::call", "??", 0)]
LOSS = [frame("loss_fn", "/home/u/train.py", 70)]


def build():
    """A device-0 history over two segments, blocks from before it, an OOM;
    device 1 with less activity."""
    A0 = 0x7f0000000000  # large segment (20 MiB)
    S0 = 0x7f1000000000  # small segment (2 MiB)
    A1 = 0x7f2000000000  # large segment allocated in the history (40 MiB)
    t = 1700000000000000
    history = [
        {"action": "free_requested", "addr": A0, "size": 4 * MiB, "stream": 0, "time_us": t + 1,
         "frames": LOSS},                               # allocated before the history
        {"action": "free_completed", "addr": A0, "size": 4 * MiB, "stream": 0, "time_us": t + 2,
         "frames": LOSS},
        {"action": "alloc", "addr": A0, "size": 6 * MiB, "stream": 0, "time_us": t + 3,
         "frames": USER},
        {"action": "segment_alloc", "addr": A1, "size": 40 * MiB, "stream": 0, "time_us": t + 4,
         "frames": USER},
        {"action": "alloc", "addr": A1, "size": 30 * MiB, "stream": 0, "time_us": t + 5,
         "frames": USER},
        {"action": "alloc", "addr": S0 + 512, "size": 500, "stream": 0, "time_us": t + 6,
         "frames": CPP_ONLY},
        {"action": "alloc", "addr": A1 + 30 * MiB, "size": 8 * MiB, "stream": 0,
         "time_us": t + 7, "frames": TORCH_ONLY},       # the peak
        {"action": "oom", "addr": 0, "size": 64 * MiB, "stream": 0, "time_us": t + 8,
         "device_free": 3 * MiB, "frames": USER},
        {"action": "oom", "addr": 0, "size": 4 * MiB, "stream": 0, "time_us": t + 8,
         "device_free": 1 * MiB, "frames": LOSS},     # 16 MiB cached unused: fragmentation
        {"action": "free_requested", "addr": A1, "size": 30 * MiB, "stream": 0, "time_us": t + 9,
         "frames": USER},
        {"action": "free_completed", "addr": A1, "size": 30 * MiB, "stream": 0,
         "time_us": t + 10, "frames": USER},
        {"action": "free_requested", "addr": A1 + 30 * MiB, "size": 8 * MiB, "stream": 0,
         "time_us": t + 11, "frames": TORCH_ONLY},     # pending free at the end
        {"action": "snapshot", "addr": 0, "size": 0, "stream": 0, "time_us": t + 12,
         "frames": []},
    ]
    segments = [
        {"device": 0, "address": A0, "total_size": 20 * MiB, "stream": 0, "segment_type": "large",
         "allocated_size": 6 * MiB + 2 * MiB, "active_size": 8 * MiB, "blocks": [
             {"address": A0, "size": 6 * MiB, "requested_size": 6 * MiB,
              "state": "active_allocated", "frames": USER},
             {"address": A0 + 6 * MiB, "size": 2 * MiB, "requested_size": 2 * MiB,
              "state": "active_allocated", "frames": LOSS},   # live since before the history
             {"address": A0 + 8 * MiB, "size": 12 * MiB, "requested_size": 0, "state": "inactive",
              "frames": []}]},
        {"device": 0, "address": A1, "total_size": 40 * MiB, "stream": 0, "segment_type": "large",
         "allocated_size": 0, "active_size": 8 * MiB, "blocks": [
             {"address": A1, "size": 30 * MiB, "requested_size": 0, "state": "inactive",
              "frames": []},
             {"address": A1 + 30 * MiB, "size": 8 * MiB, "requested_size": 8 * MiB,
              "state": "active_pending_free", "frames": TORCH_ONLY},
             {"address": A1 + 38 * MiB, "size": 2 * MiB, "requested_size": 0, "state": "inactive",
              "frames": []}]},
        {"device": 0, "address": S0, "total_size": 2 * MiB, "stream": 0, "segment_type": "small",
         "allocated_size": 512, "active_size": 512, "blocks": [
             {"address": S0, "size": 512, "requested_size": 0, "state": "inactive", "frames": []},
             {"address": S0 + 512, "size": 512, "requested_size": 500,
              "state": "active_allocated", "frames": CPP_ONLY},
             {"address": S0 + 1024, "size": 2 * MiB - 1024, "requested_size": 0,
              "state": "inactive", "frames": []}]},
        {"device": 1, "address": 0x7e0000000000, "total_size": 2 * MiB, "stream": 0,
         "segment_type": "small", "allocated_size": 0, "active_size": 0, "blocks": []},
    ]
    return {"segments": segments,
            "device_traces": [history, [{"action": "snapshot", "addr": 0, "size": 0,
                                         "stream": 0, "time_us": t, "frames": []}]]}


# ---- The expected figures, from the dict ----------------------------------

def site(frames):
    py = [f for f in frames or [] if f.get("filename", "").endswith(".py")]
    for f in py:
        name = f["filename"]
        if "/torch/" not in name and not name.startswith("torch/"):
            return f"{f['name']} ({os.path.basename(name)}:{f.get('line', 0)})"
    if py:
        f = py[0]
        return f"{f['name']} ({os.path.basename(f['filename'])}:{f.get('line', 0)})"
    for f in reversed(frames or []):
        if f.get("name", "").startswith("at::_ops::"):
            return "at::_ops::" + f["name"][len("at::_ops::"):].split("::")[0]
    for f in frames or []:
        if f.get("name") and f["name"] != "??":
            return f["name"][:200]
    return "(no stack recorded)"


BEFORE = "(allocated before the recorded history)"


def expected(snap):
    segments = snap.get("segments", [])
    traces = snap.get("device_traces", [])
    weight = collections.Counter()
    for s in segments:
        weight[s.get("device", 0)] += 1
    for d, t in enumerate(traces):
        weight[d] += len(t)
    device = max(sorted(weight), key=lambda d: weight[d])
    history = traces[device] if device < len(traces) else []

    pools = {}
    end_alloc = {}
    for s in segments:
        if s.get("device", 0) != device:
            continue
        p = pools.setdefault(s.get("segment_type") or "(pool not recorded)",
                             collections.Counter())
        p["segments"] += 1
        p["reserved_bytes"] += s["total_size"]
        for b in s["blocks"]:
            if b["state"] == "active_allocated":
                p["allocated_bytes"] += b["size"]
                p["active_bytes"] += b["size"]
                # The history records requested sizes: so does the state it ends in.
                end_alloc[b["address"]] = (b.get("requested_size") or b["size"],
                                           site(b.get("frames")))
            elif b["state"] in ("active_pending_free", "active_awaiting_free"):
                p["active_bytes"] += b["size"]
            else:
                p["free_bytes"] += b["size"]
                p["free_blocks"] += 1
                p["largest_free_bytes"] = max(p["largest_free_bytes"], b["size"])

    frees = ("free", "free_requested")
    before, live = {}, {}
    for e in history:
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
        elif e["action"] in frees:
            if e["addr"] in live:
                del live[e["addr"]]
            elif e["addr"] not in before:
                before[e["addr"]] = (e["size"], BEFORE)
    for addr, (size, where) in end_alloc.items():
        if addr not in live and addr not in before:
            before[addr] = (size, BEFORE if where == "(no stack recorded)" else where)

    allocated = sum(size for size, _ in before.values())
    reserved = (sum(s["total_size"] for s in segments if s.get("device", 0) == device)
                - sum(e["size"] if e["action"] in ("segment_alloc", "segment_map") else
                      -e["size"] if e["action"] in ("segment_free", "segment_unmap") else 0
                      for e in history))
    peak = (allocated, reserved, -1)
    blocks = dict((a, (s, w)) for a, (s, w) in before.items())
    at_peak = dict(blocks)
    ooms = []
    for i, e in enumerate(history):
        a = e["action"]
        if a == "alloc":
            allocated += e["size"]
            blocks[e["addr"]] = (e["size"], site(e.get("frames")))
        elif a in frees:
            allocated -= blocks.pop(e["addr"])[0] if e["addr"] in blocks else e["size"]
        elif a in ("segment_alloc", "segment_map"):
            reserved += e["size"]
        elif a in ("segment_free", "segment_unmap"):
            reserved -= e["size"]
        elif a == "oom":
            ooms.append((site(e.get("frames")), e["size"], e.get("device_free", -1), allocated,
                         reserved))
        if allocated > peak[0]:
            peak = (allocated, reserved, i)
            at_peak = dict(blocks)
    holders = collections.defaultdict(lambda: [0, 0])
    for size, where in at_peak.values():
        holders[where][0] += 1
        holders[where][1] += size
    return {"device": device, "peak": peak, "holders": dict(holders), "pools": pools,
            "ooms": ooms, "before": len(before),
            "peak_site": blocks_site(history, peak[2], at_peak)}


def blocks_site(history, i, at_peak):
    if i < 0:
        return "(before the recorded history)"
    addr = history[i]["addr"]
    return at_peak[addr][1] if addr in at_peak else "(no stack recorded)"


# ---- The checks -----------------------------------------------------------

def check_report(path, want, name):
    run, out = c.analyze(opscope, path, name)
    c.check(run.returncode == 0, f"{name}: analysed (exit {run.returncode}) {run.stderr[-300:]}")
    if run.returncode != 0:
        return
    peak_rows = c.rows(out, "reported_memory_peak")
    got = {r["operator"]: (int(r["blocks"]), round(float(r["bytes"]))) for r in peak_rows}
    c.check(got == {k: tuple(v) for k, v in want["holders"].items()},
            f"{name}: the blocks live at the peak by site ({len(want['holders'])} sites, "
            f"{sum(v[1] for v in want['holders'].values())} bytes, the peak "
            f"{want['peak'][0]} bytes)")
    c.check(sum(b for _, b in got.values()) == want["peak"][0],
            f"{name}: the live blocks add up to the peak")
    with open(os.path.join(out, "analysis.json")) as f:
        text = f.read()
    c.check(want["peak_site"] in text, f"{name}: the peak is reached by {want['peak_site']}")
    c.check("the history and the state disagree" not in text, f"{name}: the replayed history ends in the snapshot's state")
    pools = {r["pool"]: r for r in c.rows(out, "reported_memory_pools")}
    every = collections.Counter()
    for p in want["pools"].values():
        every.update(p)
    for pool, w in list(want["pools"].items()) + [("all", every)]:
        r = pools.get(pool)
        ok = r is not None and all(
            round(float(r[k])) == w[k] for k in ("segments", "reserved_bytes", "allocated_bytes",
                                                  "active_bytes", "free_bytes", "free_blocks"))
        largest = (max(p["largest_free_bytes"] for p in want["pools"].values())
                   if pool == "all" else w["largest_free_bytes"])
        ok = ok and round(float(r["largest_free_bytes"])) == largest
        c.check(ok, f"{name}: pool {pool}: {w['segments']} segments, {w['reserved_bytes']} "
                    f"reserved, {w['allocated_bytes']} allocated, {w['free_bytes']} free in "
                    f"{w['free_blocks']} blocks (largest {largest})")
    ooms = [(r["site"], round(float(r["bytes"])),
             round(float(r["device_free_bytes"])) if r["device_free_bytes"] else -1,
             round(float(r["allocated_bytes"])), round(float(r["reserved_bytes"])))
            for r in c.rows(out, "reported_memory_oom")]
    c.check(ooms == want["ooms"], f"{name}: {len(want['ooms'])} out-of-memory errors")
    findings = [r for r in json.loads(text)["results"] if r["section"] == "findings"]
    oom = [f for f in findings if f["id"] == "memory_oom"]
    c.check(len(oom) == (1 if want["ooms"] else 0)
            and all(f["severity"] == "critical" and f"{len(want['ooms'])} allocation" in f["title"]
                    for f in oom),
            f"{name}: a critical memory_oom finding where the history records failures, none "
            f"else")
    if oom:
        # Fragmentation's advice only where the cache then held what was asked.
        fragmented = any(o[4] - o[3] >= o[1] for o in want["ooms"])
        c.check(("expandable_segments" in oom[0]["action"]) == fragmented,
                f"{name}: the advice is {'fragmentation' if fragmented else 'live tensors'}'s")
    return out


snapshot = build()
want = expected(snapshot)
# The scenario's own facts, so that the expectation above cannot drift with it.
c.check(want["peak"][0] == 2 * MiB + 6 * MiB + 30 * MiB + 500 + 8 * MiB
        and want["before"] == 2 and want["peak"][2] == 6 and len(want["ooms"]) == 2,
        "the scenario: a peak of 46 MiB + 500 B at the 7th entry, two blocks from before the "
        "history, two out-of-memory errors")
for protocol in (2, 4, 5):
    path = os.path.join(c.scratch, f"p{protocol}_snapshot.pickle")
    with open(path, "wb") as f:
        pickle.dump(snapshot, f, protocol=protocol)
    out = check_report(path, want, f"protocol{protocol}")
gz = os.path.join(c.scratch, "memory_snapshot.pickle.gz")
with gzip.open(gz, "wb") as f:
    pickle.dump(snapshot, f, protocol=4)
check_report(gz, want, "gzipped")

# Bad inputs: each a clear error naming the file, never a crash.
bad = {
    "not_a_snapshot.pickle": pickle.dumps({"model": [1, 2, 3]}, protocol=4),
    "segments_not_a_list_snapshot.pickle": pickle.dumps({"segments": 5}, protocol=4),
    "truncated_snapshot.pickle": pickle.dumps(snapshot, protocol=4)[:1000],
    "persistent_snapshot.pickle": b"\x80\x04}\x94(\x8c\x08segments\x94]\x94" + b"N" + b"Q" + b"u.",
    # Sizes no allocator has, whose sums would overflow: refused, not added up.
    "overflowing_snapshot.pickle": pickle.dumps(
        {"segments": [], "device_traces": [[{"action": "alloc", "addr": i, "size": 1 << 50,
                                             "stream": 0, "frames": []} for i in range(3000)]]},
        protocol=4),
}
for name, data in bad.items():
    path = os.path.join(c.scratch, name)
    with open(path, "wb") as f:
        f.write(data)
    run, _ = c.analyze(opscope, path, "bad_" + name)
    c.check(0 < run.returncode < 128 and name in run.stderr and "Traceback" not in run.stderr,
            f"{name}: refused with a message naming it (exit {run.returncode}): "
            f"{run.stderr.strip()[-160:]}")
run, _ = c.analyze(opscope, os.path.join(c.scratch, "not_a_snapshot.pickle"), "not2")
c.check("pickle but not a PyTorch memory snapshot" in run.stderr,
        "a pickle of something else is said to be one")
run, _ = c.analyze(opscope, os.path.join(c.scratch, "truncated_snapshot.pickle"), "truncated2")
c.check("byte " in run.stderr and "ends before STOP" in run.stderr,
        "the truncated snapshot's error gives the byte where it ends")

# A class reference in the pickle is data, never imported or called.
odd = dict(snapshot, allocator_settings=collections.OrderedDict(a=1), when=io.StringIO)
path = os.path.join(c.scratch, "with_globals_snapshot.pickle")
with open(path, "wb") as f:
    pickle.dump(odd, f, protocol=4)
check_report(path, want, "with_globals")

if real:
    class DataOnly(pickle.Unpickler):
        def find_class(self, module, name):
            raise pickle.UnpicklingError(f"{module}.{name}")

    with (gzip.open if real.endswith(".gz") else open)(real, "rb") as f:
        snap = DataOnly(f).load()
    w = expected(snap)
    print(f"real snapshot: device {w['device']}, peak {w['peak'][0]} bytes at entry "
          f"{w['peak'][2]} by {w['peak_site']}, {w['before']} blocks before the history, "
          f"{len(w['holders'])} sites live at the peak")
    check_report(real, w, "real")

sys.exit(c.done())
