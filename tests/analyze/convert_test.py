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
  does not exist (exit 4); of a folder of ranks, a damaged one is listed as
  not read and the other written;
- the written trace read back by `opscope analyze` gives the same kernels
  and steps tables as the input;
- torch_npu's host-to-device flows, also those that end before they start;
- `--to sqlite`: the slices view holds every X event (name, ns times), the
  launches view every two-ended launch flow, each rank its events; the
  analysis tables hold analysis.json's rows; standard output and the input
  as output are refused.

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
    """Microseconds as JSON wrote them -> nanoseconds, to the nearest (torch_npu
    writes some durations to a hundredth of a picosecond)."""
    return int((decimal.Decimal(str(us)) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def load(path):
    """JSON with its numbers as written: a time since the epoch in us (1.7e15)
    as a float would lose its nanoseconds."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=decimal.Decimal)


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

# --- torch_npu's host-to-device flows ------------------------------------------
# Each flow id's start and its first end (the task starting on the device),
# also where the end is before the start (the clocks disagree: 218 of 274 in
# this sample), as the input holds them.
npu = os.path.join(data, "ascend/trace_view.json")
starts, ends = {}, {}
npu_raw = events_of(load(npu))
for e in npu_raw:
    if e.get("cat") == "HostToDevice" and "id" in e:
        if e.get("ph") == "s":
            starts.setdefault(e["id"], ns(e["ts"]))
        elif e.get("ph") == "f":
            ends[e["id"]] = min(ends.get(e["id"], ns(e["ts"])), ns(e["ts"]))
want_flows = collections.Counter((starts[i], ends[i]) for i in starts if i in ends)
out, _ = convert("torch_npu", npu)
got = events_of(load(out))
got_s = {e["id"]: e for e in got if e.get("ph") == "s"}
got_f = {e["id"]: e for e in got if e.get("ph") == "f"}
got_flows = collections.Counter((ns(got_s[i]["ts"]), ns(got_f[i]["ts"])) for i in got_s)
backward = sum(n for (a, b), n in want_flows.items() if b < a)
c.check(backward > 0 and got_flows == want_flows,
        f"torch_npu: every host-to-device flow kept at its two times, {backward} ending before "
        f"they start among them ({sum(got_flows.values())} vs {sum(want_flows.values())})")
npu_want = collections.Counter((e["name"], ns(e["ts"]), ns(e.get("dur", 0)))
                               for e in npu_raw if e.get("ph") == "X")
npu_got = collections.Counter((e["name"], ns(e["ts"]), ns(e["dur"])) for e in got if e.get("ph") == "X")
c.check(npu_got == npu_want and all(isinstance(e["ts"], str) for e in got if e.get("ph") == "X"),
        f"torch_npu: every X event at its time since the epoch to the ns, written as a string "
        f"as torch_npu writes it ({sum(npu_got.values())} vs {sum(npu_want.values())}; missing "
        f"{list((npu_want - npu_got).items())[:2]}, extra {list((npu_got - npu_want).items())[:2]})")
run, report = c.analyze(opscope, out, "torch_npu_back")
with open(os.path.join(report, "analysis.json")) as f:
    formats = {r.get("format") for r in json.load(f)["results"] if r.get("format")}
c.check(run.returncode == 0 and formats == {"opscope-convert"},
        f"torch_npu: the converted trace is read as opscope convert's ({formats})")

# --- Two ranks in one file ---------------------------------------------------
ranks = [os.path.join(data, f"kineto/sampled_rank-{r}.json.gz") for r in (0, 1)]
out, _ = convert("two_ranks", *ranks, out_name="two.json.gz")
two = events_of(load(out))
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
# Of several inputs, one that cannot be read is listed and the others written.
folder = os.path.join(c.scratch, "ranks")
os.makedirs(folder)
shutil.copy(ranks[0], os.path.join(folder, "rank0.json.gz"))
shutil.copy(bad, os.path.join(folder, "rank1.json"))
out, run = convert("one damaged rank", folder, out_name="partial.json")
written = events_of(load(out)) if os.path.exists(out) else []
c.check(sum(1 for e in written if e.get("ph") == "X") == sum(1 for e in events_of(load(ranks[0]))
                                                          if e.get("ph") == "X")
        and "not read:" in run.stderr and "rank1.json" in run.stderr,
        "one damaged rank: the readable rank written, the other listed as not read")

# --- SQLite -----------------------------------------------------------------
def sqlite_of(name, *inputs, expect=0):
    out = os.path.join(c.scratch, name + ".sqlite")
    run = subprocess.run([opscope, "convert", *inputs, "--to", "sqlite", "-o", out],
                         capture_output=True, text=True, timeout=300)
    c.check(run.returncode == expect,
            f"sqlite {name}: exit {run.returncode} (want {expect}) {run.stderr.strip()[:300]}")
    return out


db = sqlite3.connect(sqlite_of("kineto", kineto))
got_x = collections.Counter(db.execute("SELECT name, start_ns, dur_ns FROM slices").fetchall())
c.check(got_x == want_x, f"sqlite kineto: the slices view holds every X event once, name and "
        f"times to the ns ({sum(got_x.values())} vs {sum(want_x.values())})")
starts = {e["id"]: ns(e["ts"]) for e in raw if e.get("ph") == "s" and e.get("cat") == "ac2g"}
ends = {e["id"]: ns(e["ts"]) for e in raw if e.get("ph") == "f" and e.get("cat") == "ac2g"}
want_pairs = collections.Counter((starts[i], ends[i]) for i in starts if i in ends)
got_pairs = collections.Counter(db.execute("SELECT launch_ns, task_ns FROM launches").fetchall())
c.check(got_pairs == want_pairs, f"sqlite kineto: the launches view holds every two-ended launch "
        f"flow ({sum(got_pairs.values())} vs {sum(want_pairs.values())})")
want_classes = collections.Counter()
for e in raw:
    if e.get("ph") == "X" and e.get("cat") == "kernel":
        want_classes["kernel"] += 1
got_classes = dict(db.execute("SELECT class, count(*) FROM events GROUP BY class").fetchall())
c.check(got_classes.get("kernel", 0) + got_classes.get("communication", 0) == want_classes["kernel"],
        f"sqlite kineto: {want_classes['kernel']} kernels (got {got_classes})")
# The analysis tables are analyze's own (the figures are tested against the
# raw files elsewhere): the same rows as analysis.json, in its base units.
run, report = c.analyze(opscope, kineto, "sqlite_analysis")
with open(os.path.join(report, "analysis.json")) as f:
    results = json.load(f)["results"]
for section in ("steps", "kernels", "findings", "attribution"):
    want_rows = [{k: v for k, v in r.items() if k != "section"} for r in results
                 if r["section"] == section]
    cursor = db.execute(f"SELECT * FROM analysis_{section}")
    keys = [d[0] for d in cursor.description]
    got_rows = [dict(zip(keys, row)) for row in cursor.fetchall()]
    c.check(want_rows and got_rows == want_rows,
            f"sqlite kineto: analysis_{section} holds analysis.json's {len(want_rows)} rows")
db.close()

db = sqlite3.connect(sqlite_of("two_ranks", *ranks))
got = dict(db.execute("SELECT rank, events FROM inputs").fetchall())
want = {r: sum(1 for e in events_of(load(path)) if e.get("ph") == "X") for r, path in enumerate(ranks)}
per_rank = dict(db.execute("SELECT rank, count(*) FROM slices GROUP BY rank").fetchall())
c.check(got == want and per_rank == want, f"sqlite two ranks: each rank's events ({per_rank} vs {want})")
db.close()
run = subprocess.run([opscope, "convert", kineto, "--to", "sqlite", "-o", "-"],
                     capture_output=True, text=True, timeout=60)
c.check(run.returncode == 2 and run.stdout == "",
        f"sqlite to standard output: refused, exit {run.returncode}: {run.stderr.strip()[:200]}")
_, run = (None, subprocess.run([opscope, "convert", copy, "--to", "sqlite", "-o", copy],
                               capture_output=True, text=True, timeout=60))
c.check(run.returncode == 2 and open(copy, "rb").read() == before,
        f"sqlite output is the input: exit {run.returncode}, the input unchanged")

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
