#!/usr/bin/env bash
# Decides issue 19's benchmark: a synthetic job of RANKS ranks x SIZE_MB each,
# made from a real multi-rank NCCL trace (HolisticTraceAnalysis' sampled_rank-0)
# by tests/scaleout/make_job.py: per-rank clock offsets, jitter on every
# collective, and one planted straggler (rank 17, late to every 10th call by
# 2 ms). Same run, same machine:
#   - one process (`opscope analyze --scale-out`) vs `mpirun -n 2 opscope
#     analyze --mpi`: wall time and each process's peak memory (all of it, and
#     its private part; bench/peak_rss.py), against the goal of <= 0.5x the
#     largest trace; the two results must be identical;
#   - stage 1 by hand (--summary-only) then `opscope merge`: summary sizes
#     (goal <= 1 MB) and the merge's peak memory (goal <= 50 MB);
#   - the planted straggler found, with its late calls and the wait it causes,
#     against make_job.py's own figures.
# Usage: bench/scaleout_bench.sh [RANKS] [SIZE_MB] [OPSCOPE]
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${1:-64}
size=${2:-64}
opscope=$(realpath "${3:-build/release/opscope}")
python=/usr/bin/python3
job=${TMPDIR:-/tmp}/opscope-scaleout-${ranks}x${size}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ ! -f "$job/expected.json" ]; then
  "$python" tests/scaleout/make_job.py tests/data/kineto/sampled_rank-0.json.gz "$job" "$ranks" \
    "$size" --straggler 17 --every 10 --args >&2
fi
traces=("$job"/rank-*.json)
largest=$(stat -c %s "${traces[@]}" | sort -n | tail -1)
cat "${traces[@]}" > /dev/null  # every run reads from the page cache
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

measure() {  # command... ; the last stdout line of peak_rss.py
  "$python" bench/peak_rss.py -- "$@" 2> "$work/log" | tail -n 1
}
one=$(measure "$opscope" analyze --scale-out "${traces[@]}" --out "$work/one")
mpi='{"seconds": null, "processes": []}'
if command -v mpirun > /dev/null && ! "$opscope" analyze --mpi 2>&1 | grep -q "built without MPI"; then
  mpi=$(measure mpirun --oversubscribe -n 2 "$opscope" analyze --mpi "${traces[@]}" \
        --out "$work/mpi")
fi
stage1=$(measure "$opscope" analyze --summary-only "${traces[@]}" --out "$work/summaries")
merge=$(measure "$opscope" merge "$work/summaries" --out "$work/merge")

"$python" - "$job/expected.json" "$work" "$largest" "$ranks" "$size" <<PY
import json, os, sys
expected = json.load(open(sys.argv[1]))
work, largest, ranks, size = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
one, mpi, stage1, merge = (json.loads(x) for x in ('''$one''', '''$mpi''', '''$stage1''', '''$merge'''))
mb = lambda kb: kb / 1024
goal = largest / 2 / 1e6
def verdict(ok): return "met" if ok else "NOT MET"
print(f"Scale-out benchmark: {ranks} ranks x {size} MB (largest trace {largest / 1e6:.1f} MB), "
      f"{os.cpu_count()} cores, same run")
def line(label, run):
    if run["seconds"] is None:
        print(f"  {label}: skipped (no MPI in this opscope or no mpirun)")
        return
    for p in run["processes"]:
        rss, anon = p["peak_rss_kb"] * 1024 / 1e6, p["peak_anon_kb"] * 1024 / 1e6
        print(f"  {label}: {run['seconds']:.2f} s; process {p['pid']}: peak {rss:.1f} MB = "
              f"{rss * 1e6 / largest:.2f}x the largest trace ({verdict(rss <= goal)}; goal <= 0.5x), "
              f"private {anon:.1f} MB = {anon * 1e6 / largest:.2f}x")
line("one process (--scale-out)", one)
line("mpirun -n 2 (--mpi)       ", mpi)
a = json.load(open(os.path.join(work, "one", "merge.json")))["results"]
if mpi["seconds"] is not None:
    b = json.load(open(os.path.join(work, "mpi", "merge.json")))["results"]
    print(f"  one process and mpirun -n 2 give identical results: {a == b}")
sizes = [os.path.getsize(os.path.join(work, "summaries", f)) for f in os.listdir(os.path.join(work, "summaries"))]
print(f"  stage 1 by hand: {stage1['seconds']:.2f} s; summaries: {len(sizes)}, largest "
      f"{max(sizes) / 1e3:.1f} kB, mean {sum(sizes) / len(sizes) / 1e3:.1f} kB "
      f"({verdict(max(sizes) <= 1e6)}; goal <= 1 MB)")
m = merge["processes"][0]
print(f"  merge of {len(sizes)} summaries: {merge['seconds']:.2f} s, peak {m['peak_rss_kb'] * 1024 / 1e6:.1f} MB "
      f"({verdict(m['peak_rss_kb'] * 1024 <= 50e6)}; goal <= 50 MB), private {m['peak_anon_kb'] * 1024 / 1e6:.1f} MB")
c = json.load(open(os.path.join(work, "merge", "merge.json")))["results"]
print(f"  stage 1 + merge by hand equals one process: {c == a}")
rows = {r["rank"]: r for r in a if r["section"] == "scaleout_ranks"}
found = [f for f in a if f["section"] == "scaleout_findings" and f["rule"] == "straggler"]
s = expected["straggler"]
want = expected["ranks"][str(s)]
ok = (len(found) == 1 and found[0]["title"].startswith(f"Rank {s} ")
      and rows[s]["last_arrivals"] == want["last_arrivals"] == expected["planted_calls"]
      and rows[s]["caused_wait_ns"] == want["caused_wait_ns"])
print(f"  planted straggler: rank {s}, late to {expected['planted_calls']} of {expected['calls']} calls; "
      f"found: {found[0]['title'] if found else 'nothing'}; its late calls {rows[s]['last_arrivals']}, "
      f"others' wait caused {rows[s]['caused_wait_ns'] / 1e6:.2f} ms (make_job.py: "
      f"{want['caused_wait_ns'] / 1e6:.2f} ms) -> {verdict(ok)}")
PY
