#!/usr/bin/env python3
"""A job of many ranks as a cluster (issue 38, build 6): 64 ranks of
summaries only made from the real level-1 rank by make_cluster.py (8
pipeline stages of 8 ranks; the last stage computes 20 ms more a step, rank
63 frees 50 ms more on top).

The terminal (and analysis.html) shows the job, not 64 reports: the
findings counted across the ranks, the tables of ranks 0, 1 and the slow one
only, the ranks' tables cut to the 20 that matter most (the slowest first),
the stages' ranks as ranges, the files not read one row per reason. The
JSON keeps every rank's rows. Expected values from the files written (the
planted slow rank and stage, the ranks of each stage) and from analysis.json
itself where the terminal only regroups it (each finding's count of traces
is the number of traces whose findings hold it there).

    cluster_view_test.py OPSCOPE DATA_DIR
"""
import collections
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
N, STAGES = 64, 8
job = os.path.join(c.scratch, "job")
made = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                    "make_cluster.py"),
                       os.path.join(data, "ascend/level1_text/rank0_ascend_pt"), job, str(N),
                       str(STAGES)], capture_output=True, text=True)
c.check(made.returncode == 0, f"the job is made ({made.stderr[-200:]})")
planted = json.loads(made.stdout)

run, out = c.analyze(opscope, job, "report")
c.check(run.returncode == 0, f"analysed (exit {run.returncode}: {run.stderr[-300:]})")
with open(os.path.join(out, "analysis.json")) as f:
    doc = json.load(f)
results = doc["results"]
terminal = subprocess.run([opscope, "analyze", job, "--out", os.path.join(c.scratch, "again")],
                          capture_output=True, text=True).stdout
lines = terminal.splitlines()
c.check(len(lines) < 600, f"the terminal shows the job in {len(lines)} lines, not {N} reports")

# Every rank's rows stay in analysis.json.
traces = {r["trace"] for r in results if r["section"] == "findings"}
c.check(len(traces) == N, f"analysis.json holds the findings of all {N} traces ({len(traces)})")
c.check(sum(r["section"] == "reported_step_ranks" for r in results) == N,
        "analysis.json's reported_step_ranks has a row per rank")

# Findings across the ranks: the count of traces holding each, as analysis.json has them.
held = collections.Counter()
for t in traces:
    held.update({(r["severity"], r["id"]) for r in results
                 if r["section"] == "findings" and r["trace"] == t})
across = [r for r in results if r["section"] == "findings_across_ranks"]
c.check(not across, "findings_across_ranks is a terminal and page view, not a JSON section")
rows = re.findall(r"^(critical|warning|info)\s+(\S+)\s+(\d+)\s", terminal, re.M)
c.check(rows and all(held[(s, i)] == int(n) for s, i, n in rows)
        and len(rows) == len(held),
        f"the findings across ranks: each with its count of traces ({rows}; {dict(held)})")

# The ranks' own tables: the first two and the slow one.
shown = re.findall(r"^(\S+step_trace_time\.csv) \(ascend-step-trace\)", terminal, re.M)
slow = planted["slow_rank"]
want = [os.path.join(job, f"rank{r}_ascend_pt", "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv")
        for r in (0, 1, slow)]
c.check(shown == want, f"the tables of ranks 0, 1 and the slow rank {slow} ({shown})")

with open(os.path.join(c.scratch, "again", "analysis.html")) as f:  # the default --top
    html = f.read()
sections = re.findall(r'<h2 id="trace\d+">([^<]*?) ', html)
c.check(sections == want, f"analysis.html has the same three ranks' sections ({sections})")

# The ranks by step time: 20 rows, the slowest first.
block = terminal.split("Ranks by step_trace_time.csv")[1] if "Ranks by step_trace_time.csv" in \
    terminal else ""
ranks = [int(m) for m in re.findall(r"^\s*(\d+)\s+/", block.split("\n\n")[0], re.M)]
per = N // STAGES
c.check(len(ranks) == 20 and ranks[0] == slow and set(ranks[1:per]) == set(range(N - per, N - 1)),
        f"the ranks by step: 20, the slow rank then its stage's ({ranks})")
c.check(f"The 20 of {N} ranks with the most Mean step" in block,
        "a note says how many ranks the table leaves to analysis.json")

# The stages' ranks as ranges; the JSON keeps the lists.
ranges = re.findall(r"^\s+(\d+)\s+(\d+-\d+)\s", terminal.split("Pipeline stages")[1], re.M)
c.check(ranges[:STAGES] == [(str(s), f"{s * per}-{s * per + per - 1}") for s in range(STAGES)],
        f"the stages' ranks as ranges ({ranges[:STAGES]})")
stages = [r for r in results if r["section"] == "reported_stages"]
c.check(stages and stages[0]["ranks"] == ", ".join(str(r) for r in range(per)),
        "analysis.json lists each stage's ranks")

# The job's links table is the job's own (its slowest links first): the
# terminal shows its first rows whatever ranks they come from.
links = [r for r in results if r["section"] == "reported_links"]
block = terminal.split("Links (communication_matrix.json)")[1].split("\n\n")[0] if \
    "Links (communication_matrix.json)" in terminal else ""
rows_shown = re.findall(r"^\s*\d+\s+step", block, re.M)
c.check(links and len(rows_shown) == min(20, len(links)),
        f"the links table keeps its first rows ({len(rows_shown)} of {len(links)})")

# The files not read: one row per reason on the terminal, every file in the JSON.
unused = [r for r in results if r["section"] == "unused_files"]
reasons = {r["reason"] for r in unused}
c.check(len(unused) == N and len(reasons) == 1, f"{N} files not read, one reason ({len(unused)})")
c.check(f"and {N - 1} more" in terminal, "the terminal gives them as one row")
sys.exit(c.done())
