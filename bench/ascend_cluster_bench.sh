#!/usr/bin/env bash
# Issue 38, build 6: the cluster view of an Ascend job of RANKS ranks that left
# only their summaries (step_trace_time.csv, communication.json,
# communication_matrix.json, profiler_metadata.json), made from the real
# level-1 rank by tests/analyze/ascend/make_cluster.py (8 pipeline stages;
# the last stage computes 20 ms more a step, the last rank frees 50 ms more).
# Same run, same machine, the job at 64 ranks and at RANKS: `opscope analyze`'s
# wall time and peak memory, per rank and their ratio (a cluster view that
# scales with its ranks keeps both near 1), the terminal's lines, and the
# planted slow stage and rank found.
# Usage: bench/ascend_cluster_bench.sh [RANKS] [OPSCOPE]
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${1:-1024}
opscope=$(realpath "${2:-build/release/opscope}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for n in 64 "$ranks"; do
  /usr/bin/python3 tests/analyze/ascend/make_cluster.py tests/data/ascend/level1_text/rank0_ascend_pt \
    "$work/job$n" "$n" 8 > "$work/planted$n.json"
  /usr/bin/time -f "%e %M" -o "$work/time$n" "$opscope" analyze "$work/job$n" \
    --out "$work/out$n" > "$work/terminal$n" 2> /dev/null
done
/usr/bin/python3 - "$work" "$ranks" <<'PY'
import json, os, sys
work, ranks = sys.argv[1], int(sys.argv[2])
rows = {}
for n in (64, ranks):
    seconds, kib = open(os.path.join(work, f"time{n}")).read().split()
    lines = sum(1 for _ in open(os.path.join(work, f"terminal{n}")))
    planted = json.load(open(os.path.join(work, f"planted{n}.json")))
    doc = json.load(open(os.path.join(work, f"out{n}", "analysis.json")))
    titles = {t["section"]: t["title"] for t in doc["tables"]}
    found_rank = f"rank {planted['slow_rank']} is the slowest" in titles.get("reported_step_ranks", "")
    found_stage = f"stage {planted['slow_stage']} computes" in titles.get("reported_stages", "")
    rows[n] = (float(seconds), int(kib) / 1024, lines, found_rank and found_stage)
    print(f"{n:5d} ranks: {float(seconds):6.2f} s, peak {int(kib) / 1024:7.1f} MiB, "
          f"{lines} terminal lines, planted slow rank and stage found: {found_rank and found_stage}")
(t0, m0, _, _), (t1, m1, _, _) = rows[64], rows[ranks]
print(f"per rank, {ranks} vs 64: time {t1 / ranks / (t0 / 64):.2f}x, "
      f"peak memory {m1 / ranks / (m0 / 64):.2f}x (whole: {m1 / m0:.2f}x for {ranks / 64:.0f}x the ranks)")
PY
