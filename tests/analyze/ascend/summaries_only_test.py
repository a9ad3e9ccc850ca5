#!/usr/bin/env python3
"""A rank that left only its summaries is a rank (issue 38): msprof-analyze's
cluster analysis needs only each rank's step_trace_time.csv and
communication files, and a real job can hold ranks whose timelines were not
kept. A two-rank job is built: rank 0 the real level-1 two-rank sample
(timeline and all), rank 1 only profiler_info_1.json and, in
ASCEND_PROFILER_OUTPUT, the level-1 sample's step_trace_time.csv with 50 ms
more Free time, its communication.json and communication_matrix.json.
Checked against those files read with Python's csv and json modules:

- both ranks are analysed (rank 1's step_trace_time.csv is its trace, none of
  its files is listed as not read);
- rank 1's reported_steps row and reported_communication sums equal its
  files;
- the ranks-by-step_trace_time table names rank 1 the slowest, by its free
  time;
- the ranks table (timeline figures) gives rank 1 no figures, and says why;
- step_trace_time.csv named alone is analysed the same way;
- a four-rank job of summaries only with two pipeline-parallel groups: the
  stages' table (ranks per stage, their mean computing) and the imbalance
  planted in stage 1.

    summaries_only_test.py OPSCOPE DATA_DIR
"""
import csv
import decimal
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()


def us(text):
    return int((decimal.Decimal(text) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def ms(value):
    return int((decimal.Decimal(str(value)) * 1000000).to_integral_value(decimal.ROUND_HALF_UP))


job = os.path.join(c.scratch, "job")
shutil.copytree(os.path.join(data, "ascend", "level1_text_2rank", "rank0_ascend_pt"),
                os.path.join(job, "rank0_ascend_pt"))
out1 = os.path.join(job, "rank1_ascend_pt", "ASCEND_PROFILER_OUTPUT")
os.makedirs(out1)
source = os.path.join(data, "ascend", "level1_text", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
for name in ("communication.json", "communication_matrix.json"):
    shutil.copy(os.path.join(source, name), out1)
with open(os.path.join(source, "step_trace_time.csv"), newline="") as f:
    rows = list(csv.DictReader(f))
header = list(rows[0].keys())
for r in rows:  # 50 ms more of free time: rank 1 is the slow one
    r["Free"] = str(decimal.Decimal(r["Free"]) + 50000)
    r["Stage"] = str(decimal.Decimal(r["Stage"]) + 50000)
with open(os.path.join(out1, "step_trace_time.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=header)
    w.writeheader()
    w.writerows(rows)
with open(os.path.join(job, "rank1_ascend_pt", "profiler_info_1.json"), "w") as f:
    json.dump({"config": {}, "start_info": {}, "end_info": {}}, f)

run, out = c.analyze(opscope, job, "job-report", "--format", "json")
c.check(run.returncode == 0, f"the job is analysed (exit {run.returncode}: {run.stderr[-300:]})")
results = json.loads(run.stdout)["results"] if run.returncode == 0 else []


def section(name, rank=None):
    return [r for r in results if r.get("section") == name and (rank is None or r.get("rank") == rank)]


traces = {r["trace"] for r in results if r.get("section") == "findings"} | \
         {r["trace"] for r in section("ranks")}
c.check(any(t.endswith("rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv") for t in traces),
        f"rank 1's step_trace_time.csv is its trace ({sorted(traces)})")
unused = [r["file"] if "file" in r else r.get("path", "") for r in section("unused_files")]
c.check(not any("rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/" in u for u in unused),
        f"none of rank 1's files is listed as not read ({unused})")

want_steps = [(r["Step"], us(r["Computing"]), us(r["Free"])) for r in rows]
got_steps = [(r["step"], r["computing_ns"], r["free_ns"]) for r in section("reported_steps")
             if "rank1_ascend_pt" in r["trace"]]
c.check(got_steps == want_steps, f"rank 1's steps {got_steps} are its file's {want_steps}")

with open(os.path.join(out1, "communication.json")) as f:
    doc = json.load(f)
ops = [op for step in doc.values() for kind in step.values() for name, op in kind.items()
       if name != "Total Op Info"]
elapse = sum(ms(op["Communication Time Info"]["Elapse Time(ms)"]) for op in ops)
comm = section("reported_communication", 1)
c.check(len(comm) == 1 and comm[0]["operations"] == len(ops) and abs(comm[0]["elapse_ns"] - elapse) <= len(ops),
        f"rank 1's communication: {len(ops)} operations, {elapse} ns ({comm})")

slow = [t["title"] for t in json.loads(run.stdout)["tables"]
        if t["section"] == "reported_step_ranks"] if run.returncode == 0 else []
c.check(bool(slow) and "rank 1 is the slowest" in slow[0] and "free" in slow[0],
        f"rank 1 is the slowest by its free time ({slow})")

ranks = {r["rank"]: r for r in section("ranks")}
c.check(set(ranks) == {0, 1} and ranks[1]["steps"] is None and ranks[1]["mean_step_ns"] is None
        and ranks[0]["steps"] == 1, f"the ranks table: rank 1 without timeline figures ({ranks})")

# Pipeline stages: four ranks of summaries only, whose profiler_metadata.json
# records two pipeline-parallel groups, [0, 2] and [1, 3] (stage 0: ranks 0
# and 1; stage 1: ranks 2 and 3); the ranks of stage 1 compute 170 ms more
# (and rank 3 another 10 ms). The stages' figures are the means of their
# ranks' step means, from the files written here.
pp = os.path.join(c.scratch, "pp")
extra = {0: 0, 1: 0, 2: 170000, 3: 180000}  # us of computing added
groups = {"group_pp_a": {"group_name": "pp", "group_rank": 0, "global_ranks": [0, 2]},
          "group_pp_b": {"group_name": "pp", "group_rank": 0, "global_ranks": [1, 3]}}
means = {}
for rank, more in extra.items():
    out_r = os.path.join(pp, f"rank{rank}_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    os.makedirs(out_r)
    planted = []
    for r in rows:
        r = dict(r)
        r["Computing"] = str(decimal.Decimal(r["Computing"]) + more)
        planted.append(r)
    with open(os.path.join(out_r, "step_trace_time.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerows(planted)
    with open(os.path.join(pp, f"rank{rank}_ascend_pt", f"profiler_info_{rank}.json"), "w") as f:
        json.dump({"config": {}}, f)
    with open(os.path.join(pp, f"rank{rank}_ascend_pt", "profiler_metadata.json"), "w") as f:
        json.dump({"parallel_group_info": {k: g for k, g in groups.items() if rank in g["global_ranks"]}}, f)
    means[rank] = sum(us(r["Computing"]) for r in planted) // len(planted)
stage_computing = {0: (means[0] + means[1]) // 2, 1: (means[2] + means[3]) // 2}
run, out = c.analyze(opscope, pp, "pp-report", "--format", "json")
doc = json.loads(run.stdout) if run.returncode == 0 else {"results": [], "tables": []}
got = {r["stage"]: r for r in doc["results"] if r.get("section") == "reported_stages"}
c.check(run.returncode == 0 and set(got) == {0, 1} and got[0]["ranks"] == "0, 1"
        and got[1]["ranks"] == "2, 3"
        and all(got[k]["computing_ns"] == v for k, v in stage_computing.items()),
        f"two stages of two ranks, computing {stage_computing} ({got})")
title = [t["title"] for t in doc["tables"] if t["section"] == "reported_stages"]
imbalance = stage_computing[1] - stage_computing[0]
c.check(bool(title) and f"stage 1 computes {imbalance / 1e6:.3f} ms more per step than stage 0" in title[0],
        f"the stage imbalance, {imbalance} ns, is named ({title})")

# step_trace_time.csv named alone.
alone = os.path.join(out1, "step_trace_time.csv")
run, out = c.analyze(opscope, alone, "alone", "--format", "json")
got = [r for r in json.loads(run.stdout)["results"] if r.get("section") == "reported_steps"] \
    if run.returncode == 0 else []
c.check(run.returncode == 0 and [(r["step"], r["computing_ns"], r["free_ns"]) for r in got] == want_steps,
        f"step_trace_time.csv alone: its steps ({run.returncode}, {got})")
sys.exit(c.done())
