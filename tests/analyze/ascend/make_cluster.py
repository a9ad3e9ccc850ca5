#!/usr/bin/env python3
"""An Ascend job of N ranks that left only their summaries (issue 38, build
6), made from one real rank's files: each rank folder rankR_ascend_pt holds
profiler_info_R.json, profiler_metadata.json (its pipeline-parallel group:
STAGES stages, rank R in stage R // (N / STAGES)) and, in
ASCEND_PROFILER_OUTPUT, the source's step_trace_time.csv,
communication.json and communication_matrix.json. Planted, so that the
expected answer is known: every rank of the last stage computes SLOW_US more
per step, and rank N - 1 frees FREE_US more on top.

    make_cluster.py SOURCE_RANK_FOLDER OUT_DIR [N] [STAGES] [SLOW_US] [FREE_US]

Prints one JSON line: the ranks, stages, the slow stage and the slow rank.
"""
import csv
import decimal
import json
import os
import shutil
import sys


def main():
    source, out = sys.argv[1:3]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
    stages = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    slow_us = decimal.Decimal(sys.argv[5] if len(sys.argv) > 5 else "20000")
    free_us = decimal.Decimal(sys.argv[6] if len(sys.argv) > 6 else "50000")
    if n % stages:
        sys.exit("N must be a multiple of STAGES")
    per_stage = n // stages
    src = os.path.join(source, "ASCEND_PROFILER_OUTPUT")
    with open(os.path.join(src, "step_trace_time.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    header = list(rows[0].keys())
    # Pipeline groups: one per position within a stage, its ranks one per stage.
    groups = {f"group_pp_{k}": {"group_name": "pp", "group_rank": 0,
                                "global_ranks": [s * per_stage + k for s in range(stages)]}
              for k in range(per_stage)}
    for rank in range(n):
        folder = os.path.join(out, f"rank{rank}_ascend_pt")
        o = os.path.join(folder, "ASCEND_PROFILER_OUTPUT")
        os.makedirs(o)
        for name in ("communication.json", "communication_matrix.json"):
            shutil.copy(os.path.join(src, name), o)
        stage = rank // per_stage
        with open(os.path.join(o, "step_trace_time.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=header)
            w.writeheader()
            for r in rows:
                r = dict(r)
                more = slow_us if stage == stages - 1 else 0
                free = free_us if rank == n - 1 else 0
                r["Computing"] = str(decimal.Decimal(r["Computing"]) + more)
                r["Free"] = str(decimal.Decimal(r["Free"]) + free)
                r["Stage"] = str(decimal.Decimal(r["Stage"]) + more + free)
                w.writerow(r)
        with open(os.path.join(folder, f"profiler_info_{rank}.json"), "w") as f:
            json.dump({"config": {}}, f)
        pp = next(k for k, g in groups.items() if rank in g["global_ranks"])
        with open(os.path.join(folder, "profiler_metadata.json"), "w") as f:
            json.dump({"parallel_group_info": {pp: groups[pp]}}, f)
    print(json.dumps({"ranks": n, "stages": stages, "slow_stage": stages - 1,
                      "slow_rank": n - 1}))


if __name__ == "__main__":
    main()
