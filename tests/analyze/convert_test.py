#!/usr/bin/env python3
"""`opscope convert --to perfetto` (issue 37, build item 4), checked against
the raw inputs read here with Python's standard library:

- a Kineto trace: every complete ("X") event of the input is in the output
  once, with its name and its start and duration to the nanosecond (the raw
  microseconds read as exact decimals); every launch flow of the input (an
  "ac2g" flow id with both ends, libkineto's launch -> kernel arrows) is in the
  output with the same two times; every thread is named and every process
  named once;
- two ranks in one file: each rank's processes named by its rank, no pid
  shared between the ranks, flow ids unique;
- an Nsight Systems export: one event per kernel, copy, set and runtime call
  and synchronisation of its tables (counted with sqlite3);
- what must not happen: `-o` naming an input (exit 2, the input unchanged),
  an unreadable input (exit 3, no output file), an output in a folder that
  does not exist (exit 4);
- the written trace read back by `opscope analyze` gives the same kernels
  and steps tables as the input.

    convert_test.py OPSCOPE DATA_DIR
"""
import collections
import decimal
import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()


def ns(us):
    """Microseconds as JSON wrote them -> integer nanoseconds, exactly."""
    return int(decimal.Decimal(str(us)) * 1000)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def convert(name, *inputs, out_name=None, expect=0):
    out = os.path.join(c.scratch, out_name or name + ".json")
    run = subprocess.run([opscope, "convert", *inputs, "--to", "perfetto", "-o", out],
                         capture_output=True, text=True, timeout=300)
    c.check(run.returncode == expect,
            f"{name}: exit {run.returncode} (want {expect}) {run.stderr.strip()[:300]}")
    return out, run


def events_of(trace):
    return trace["traceEvents"] if isinstance(trace, dict) else trace


# --- A Kineto trace: events, names, times and flows -------------------------
kineto = os.path.join(data, "kineto/h100_Qwen1.5-0.5B-Chat.json.gz")
raw = events_of(load(kineto))
out, _ = convert("kineto", kineto)
got = events_of(load(out))

want_x = collections.Counter((e["name"], ns(e["ts"]), ns(e.get("dur", 0)))
                             for e in raw if e.get("ph") == "X")
got_x = collections.Counter((e["name"], ns(e["ts"]), ns(e["dur"]))
                            for e in got if e.get("ph") == "X")
c.check(sum(want_x.values()) > 10000, f"kineto: the input holds {sum(want_x.values())} X events")
c.check(got_x == want_x, f"kineto: every X event kept once, name and times to the ns "
        f"({sum(got_x.values())} vs {sum(want_x.values())}; missing "
        f"{list((want_x - got_x).items())[:2]}, extra {list((got_x - want_x).items())[:2]})")

starts = {e["id"]: ns(e["ts"]) for e in raw if e.get("ph") == "s" and e.get("cat") == "ac2g"}
ends = {e["id"]: ns(e["ts"]) for e in raw if e.get("ph") == "f" and e.get("cat") == "ac2g"}
want_flows = collections.Counter((starts[i], ends[i]) for i in starts if i in ends)
got_s = {e["id"]: e for e in got if e.get("ph") == "s"}
got_f = {e["id"]: e for e in got if e.get("ph") == "f"}
c.check(set(got_s) == set(got_f), "kineto: each flow has its start and its end, once")
c.check(all(e.get("bp") == "e" for e in got_f.values()),
        "kineto: each flow ends bound to the enclosing slice (bp e), as libkineto writes it")
got_flows = collections.Counter((ns(got_s[i]["ts"]), ns(got_f[i]["ts"])) for i in got_s)
c.check(len(want_flows) > 1000 and got_flows == want_flows,
        f"kineto: every launch flow with both ends kept, at its two times "
        f"({sum(got_flows.values())} vs {sum(want_flows.values())})")

meta = [e for e in got if e.get("ph") == "M"]
process_names = collections.Counter(e["pid"] for e in meta if e["name"] == "process_name")
thread_names = {(e["pid"], e["tid"]) for e in meta if e["name"] == "thread_name"}
used = {(e["pid"], e["tid"]) for e in got if e.get("ph") in ("X", "s", "f")}
c.check(set(process_names.values()) == {1} and {p for p, _ in used} <= set(process_names),
        "kineto: every process named once")
c.check(used <= thread_names, "kineto: every thread that holds an event is named")
raw_names = {e["args"]["name"] for e in raw if e.get("ph") == "M" and e.get("name") == "thread_name"}
got_names = {e["args"]["name"] for e in meta if e["name"] == "thread_name"}
c.check(raw_names <= got_names, f"kineto: the input's thread names kept ({sorted(raw_names)[:3]})")

# --- Two ranks in one file ---------------------------------------------------
ranks = [os.path.join(data, f"kineto/sampled_rank-{r}.json.gz") for r in (0, 1)]
out, _ = convert("two_ranks", *ranks, out_name="two.json.gz")
with gzip.open(out, "rt") as f:
    two = events_of(json.load(f))
names = {e["pid"]: e["args"]["name"] for e in two
         if e.get("ph") == "M" and e["name"] == "process_name"}
by_rank = collections.defaultdict(set)
for pid, name in names.items():
    by_rank[name.split(":")[0]].add(pid)
c.check(set(by_rank) == {"rank 0", "rank 1"} and not (by_rank["rank 0"] & by_rank["rank 1"]),
        f"two ranks: each rank's processes named by its rank, no pid shared ({sorted(names.values())[:4]})")
for r, path in enumerate(ranks):
    n = sum(1 for e in events_of(load(path)) if e.get("ph") == "X")
    m = sum(1 for e in two if e.get("ph") == "X" and e["pid"] in by_rank[f"rank {r}"])
    c.check(n == m, f"two ranks: rank {r}'s {n} X events under its processes (got {m})")
ids = [e["id"] for e in two if e.get("ph") == "s"]
c.check(len(ids) == len(set(ids)), "two ranks: flow ids unique across the ranks")

# --- An Nsight Systems export ------------------------------------------------
nsys = os.path.join(data, "nsys/h100_2gpu_1s.sqlite")
db = sqlite3.connect(f"file:{nsys}?mode=ro&immutable=1", uri=True)
tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
want = collections.Counter()
for table, what in [("CUPTI_ACTIVITY_KIND_KERNEL", "kernel"), ("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"),
                    ("CUPTI_ACTIVITY_KIND_MEMSET", "memset"), ("CUPTI_ACTIVITY_KIND_RUNTIME", "runtime"),
                    ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "sync")]:
    if table in tables:
        want[what] = db.execute(f"SELECT count(*) FROM {table} WHERE end > start").fetchone()[0]
out, _ = convert("nsys", nsys)
got = collections.Counter()
for e in events_of(load(out)):
    if e.get("ph") == "X" and e["args"]["class"] in ("kernel", "communication"):
        got["kernel"] += 1
    elif e.get("ph") == "X" and e["args"]["class"] in ("memcpy", "memset"):
        got[e["args"]["class"]] += 1
    elif e.get("ph") == "X" and e["args"]["class"] in ("runtime", "sync"):
        got[e["args"]["class"]] += 1
c.check(all(want[k] > 0 for k in ("kernel", "memcpy", "runtime", "sync")) and got == want,
        f"nsys: one event per kernel, copy, set and runtime call ({dict(got)} vs {dict(want)})")

# --- What must not happen ----------------------------------------------------
copy = os.path.join(c.scratch, "input.json.gz")
shutil.copy(kineto, copy)
before = open(copy, "rb").read()
_, run = convert("output is the input", copy, out_name="input.json.gz", expect=2)
c.check(open(copy, "rb").read() == before, "output is the input: the input unchanged")
bad = os.path.join(c.scratch, "damaged.json")
with open(bad, "w") as f:
    f.write('{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}, {')
out, run = convert("damaged input", bad, out_name="damaged_out.json", expect=3)
c.check(not os.path.exists(out) and "damaged.json" in run.stderr,
        "damaged input: no output file, the error names the input")
_, run = convert("no such folder", kineto, out_name="missing/folder/out.json", expect=4)

# --- Read back ---------------------------------------------------------------
out, _ = convert("read back", kineto, out_name="back.json")
tables = {}
for name, path in (("input", kineto), ("converted", out)):
    run, report = c.analyze(opscope, path, "back_" + name)
    c.check(run.returncode == 0, f"read back: {name} analysed")
    tables[name] = {t: [{k: v for k, v in r.items() if k not in ("trace", "format")}
                        for r in c.rows(report, t)] for t in ("kernels", "steps", "operators")}
for t in ("kernels", "steps", "operators"):
    c.check(tables["input"][t] and tables["input"][t] == tables["converted"][t],
            f"read back: the {t} table is the input's ({len(tables['converted'][t])} rows)")

sys.exit(c.done())
