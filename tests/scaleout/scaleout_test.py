#!/usr/bin/env python3
"""Scale-out analysis end to end, on a synthetic job made from a real Kineto
trace by make_job.py (which computes the expected waits itself):

- the merge finds the planted straggler, and every rank's wait, late calls
  and caused wait equal make_job.py's figures;
- one process, several threads, stage 1 + stage 2 by hand, and (with
  --mpirun) mpirun -n 1, 2 and 4 give identical results;
- merged operator counts and totals equal sums over the raw traces, and p50 /
  p99 are within the sketch's stated bound of the exact values;
- a job without a straggler names none; summaries stay small; bad summaries
  are refused with the file and field named.

Usage: scaleout_test.py OPSCOPE SAMPLE.json.gz WORKDIR [--mpirun PATH]
Exit 77 (skipped) for --mpi-only when this opscope has no MPI.
"""
import argparse
import gzip
import json
import math
import os
import shutil
import subprocess
import sys

p = argparse.ArgumentParser()
p.add_argument("opscope")
p.add_argument("sample")
p.add_argument("work")
p.add_argument("--mpirun", default="")
p.add_argument("--mpi-only", action="store_true")
a = p.parse_args()
HERE = os.path.dirname(os.path.abspath(__file__))
shutil.rmtree(a.work, ignore_errors=True)
os.makedirs(a.work)
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(*args, env=None, expect=0):
    r = subprocess.run([str(x) for x in args], capture_output=True, text=True, env=env, timeout=300)
    if r.returncode != expect:
        print(r.stdout[-3000:], r.stderr[-3000:])
        raise SystemExit(f"{' '.join(map(str, args))}: exit {r.returncode}, expected {expect}")
    return r


def results(folder):
    with open(os.path.join(folder, "merge.json")) as f:
        return json.load(f)["results"]


def make_job(name, *extra):
    out = os.path.join(a.work, name)
    run(sys.executable, os.path.join(HERE, "make_job.py"), a.sample, out, *extra)
    with open(os.path.join(out, "expected.json")) as f:
        return out, json.load(f)


def traces(job):
    return sorted(os.path.join(job, f) for f in os.listdir(job) if f.startswith("rank-"))


def mpi_env():
    env = dict(os.environ)
    if os.geteuid() == 0:  # Open MPI refuses root without these
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    # In containers without ptrace rights, shared memory's single-copy
    # transfers fail; plain copies work everywhere.
    env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    return env


job, expected = make_job("job", "4", "3", "--straggler", "2", "--every", "5", "--args")
files = traces(job)

if a.mpi_only:
    if not a.mpirun:
        print("SKIPPED: this opscope was built without MPI (Debian: libopenmpi-dev openmpi-bin)")
        raise SystemExit(77)
    base = os.path.join(a.work, "threads1")
    run(a.opscope, "analyze", "--scale-out", *files, "--out", base)
    reference = results(base)
    for n in (1, 2, 4):
        out = os.path.join(a.work, f"mpi{n}")
        r = run(a.mpirun, "--oversubscribe", "-n", n, a.opscope, "analyze", "--mpi", *files,
                "--out", out, env=mpi_env())
        check(f"{n} MPI processes" in r.stderr, f"mpirun -n {n} reports its processes")
        check(results(out) == reference, f"mpirun -n {n} gives the one-process result")
    # A list file places traces on processes: all on process 1.
    listing = os.path.join(a.work, "list.txt")
    with open(listing, "w") as f:
        f.write("# process trace\n" + "".join(f"1 {t}\n" for t in files))
    out = os.path.join(a.work, "mpilist")
    r = run(a.mpirun, "--oversubscribe", "-n", 2, a.opscope, "analyze", "--mpi", "--mpi-list",
            listing, "--out", out, env=mpi_env())
    check("traces per process: 0, 4" in r.stderr, "the list puts every trace on process 1")
    check(results(out) == reference, "the listed run gives the same result")
    # A process's error reaches process 0 and fails the run.
    bad = os.path.join(a.work, "bad.json")
    with open(bad, "w") as f:
        f.write('{"traceEvents": [{"ph": "X", "ts": 1}]}')
    r = run(a.mpirun, "--oversubscribe", "-n", 2, a.opscope, "analyze", "--mpi", files[0], bad,
            "--out", os.path.join(a.work, "mpibad"), env=mpi_env(), expect=3)
    check("process 1" in r.stderr and "bad.json" in r.stderr, "a failing process is named")
    print("mpi:", "FAILED" if failures else "ok")
    raise SystemExit(1 if failures else 0)

# --- one process, threads, by hand ---
outs = {}
for threads in (1, 3):
    out = os.path.join(a.work, f"threads{threads}")
    run(a.opscope, "analyze", "--scale-out", "--threads", threads, *files, "--out", out)
    outs[f"threads{threads}"] = results(out)
# opscope runs the scale-out commands in opscope-scaleout beside it; alone
# (no such program beside it) it runs them itself, with the same result.
solo = os.path.join(a.work, "solo")
os.makedirs(solo)
shutil.copy(a.opscope, os.path.join(solo, "opscope"))
out = os.path.join(a.work, "solo-out")
run(os.path.join(solo, "opscope"), "analyze", "--scale-out", *files, "--out", out)
outs["in opscope itself"] = results(out)
sums = os.path.join(a.work, "sums")
os.makedirs(sums)
for t in files:
    rank = os.path.basename(t).split("-")[1].split(".")[0]
    run(a.opscope, "analyze", "--summary-only", t, "--out", os.path.join(sums, f"r{rank}.summary"))
    size = os.path.getsize(os.path.join(sums, f"r{rank}.summary"))
    check(size < 1 << 20, f"rank {rank}'s summary is {size} bytes, under 1 MiB")
out = os.path.join(a.work, "byhand")
run(a.opscope, "merge", sums, "--out", out, "--format", "json")
outs["byhand"] = results(out)
for name, res in outs.items():
    check(res == outs["threads1"], f"{name} gives the same result as one thread")

res = outs["threads1"]
rows = {r["rank"]: r for r in res if r["section"] == "scaleout_ranks"}
for rank, want in expected["ranks"].items():
    got = rows[int(rank)]
    for key in ("wait_ns", "last_arrivals", "caused_wait_ns"):
        check(got[key] == want[key], f"rank {rank} {key}: {got[key]} == {want[key]}")
findings = [r for r in res if r["section"] == "scaleout_findings"]
stragglers = [f for f in findings if f["rule"] == "straggler"]
check(len(stragglers) == 1 and stragglers[0]["title"].startswith("Rank 2 "),
      f"the planted straggler is found: {[f['title'] for f in findings]}")
check(rows[2]["last_arrivals"] == expected["planted_calls"],
      "the straggler is late at every planted call and no other")
calls = [r for r in res if r["section"] == "scaleout_collectives"]
check(len(calls) == expected["calls"], "one row per call")
check(sum(c["wait_ns"] for c in calls) == expected["total_wait_ns"], "total wait")
check(all(c["op"] == "alltoall" and c["group"] == "0" and c["bytes"] == 4 << 20 for c in calls),
      "the calls take PyTorch's collective name, group and size")

# Merged operators against the raw traces.
raw = {}
for t in files:
    with open(t) as f:
        for e in json.load(f)["traceEvents"]:
            if e.get("ph") == "X" and e.get("cat") == "kernel":
                raw.setdefault(e["name"], []).append(round(float(e["dur"]) * 1000))
ops = {(r["name"], r["class"]): r for r in res if r["section"] == "scaleout_operators"}


def nearest_rank(values, q):
    v = sorted(values)
    return v[min(max(math.ceil(q * len(v)), 1), len(v)) - 1]


checked = 0
for name, durs in raw.items():
    row = ops.get((name, "kernel"))
    if row is None:
        continue
    checked += 1
    check(row["count"] == len(durs) and row["total_ns"] == sum(durs), f"{name[:40]}: count, total")
    check(row["max_ns"] == max(durs), f"{name[:40]}: max")
    for q, key in ((0.5, "p50_ns"), (0.99, "p99_ns")):
        exact = nearest_rank(durs, q)
        check(abs(row[key] - exact) <= 0.01 * exact + 0.5, f"{name[:40]} {key} {row[key]} ~ {exact}")
check(checked >= 5, f"{checked} kernels compared")

# Positional matching (no Seq): the same waits.
job2, expected2 = make_job("job_positional", "4", "3", "--straggler", "2", "--every", "5")
out = os.path.join(a.work, "positional")
r = run(a.opscope, "analyze", "--scale-out", *traces(job2), "--out", out)
rows2 = {r["rank"]: r for r in results(out) if r["section"] == "scaleout_ranks"}
for rank, want in expected2["ranks"].items():
    check(all(rows2[int(rank)][k] == want[k] for k in want), f"positional rank {rank}")
check("matched by their position" in r.stdout.replace("\n", " "),
      "the report says calls were matched by position")

# No straggler: none named.
job3, expected3 = make_job("job_even", "4", "3", "--seed", "5")
out = os.path.join(a.work, "even")
run(a.opscope, "analyze", "--scale-out", *traces(job3), "--out", out)
check(not [r for r in results(out) if r["section"] == "scaleout_findings" and r["rule"] == "straggler"],
      "a job without a straggler names none")
html = open(os.path.join(out, "merge.html"), encoding="utf-8").read()
check("Step time per rank and step" in html and html.count("<rect") >= 16, "the heat map is drawn")

# Bad summaries.
good = os.path.join(sums, "r0.summary")
with gzip.open(good, "rt") as f:
    doc = f.read()
cases = {
    "truncated.summary": (doc[: len(doc) // 2], "not a JSON document"),
    "kind.summary": (doc.replace('"kind":"opscope-rank-summary"', '"kind":"x"'), "not an opscope rank summary"),
    "version.summary": (doc.replace('"version":1', '"version":2'), "summary version 2"),
    "field.summary": (doc.replace('"events":', '"events":"many","x":', 1), 'field "events"'),
}
for name, (text, message) in cases.items():
    path = os.path.join(a.work, name)
    with open(path, "w") as f:
        f.write(text)
    r = run(a.opscope, "merge", path, os.path.join(sums, "r1.summary"), "--out",
            os.path.join(a.work, "badout"), expect=3)
    check(name in r.stderr and message in r.stderr, f"{name}: {r.stderr.strip()}")
check(not os.path.exists(os.path.join(a.work, "badout", "merge.json")), "no report from bad input")
r = run(a.opscope, "merge", good, good, "--out", os.path.join(a.work, "twice"), expect=3)
check("rank 0 twice" in r.stderr, "a rank given twice is refused")

print("scaleout:", "FAILED" if failures else "ok")
raise SystemExit(1 if failures else 0)
