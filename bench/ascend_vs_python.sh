#!/usr/bin/env bash
# Decides issue "Ascend, whole"'s speed goal: `opscope analyze` of a 1 GB
# kernel_details.csv (the real level-1 sample replicated with shifted start
# times; its PMU columns make the AI Core pipeline run too) against Python's
# csv module reading the same file row by row (nothing kept), and an 8-rank
# torch_npu tree (the level-1 sample as 8 ranks) analysed with one command.
# Same machine, same run; the file is read once first so both sides read it
# from the page cache. Goals: >= 20x faster than the csv module, peak memory
# <= 0.5x the file.
# Usage: bench/ascend_vs_python.sh [SIZE_MB] [OPSCOPE]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-1000}
opscope=${2:-build/release/opscope}
tmp=${TMPDIR:-/tmp}
csv=$tmp/opscope-bench-kernel_details-${size}MB/kernel_details.csv
mkdir -p "$(dirname "$csv")"
sample=tests/data/ascend/level1_text/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv
[ -f "$csv" ] || /usr/bin/python3 bench/make_big_kernel_details.py "$sample" "$csv" "$size" >&2
bytes=$(stat -c %s "$csv")

measure() {  # command... ; prints seconds and peak RSS in KB
  { /usr/bin/time -f '%e %M' "$@" > /dev/null; } 2>&1 | tail -n 1
}

cat "$csv" > /dev/null
read -r ours_s ours_kb < <(measure "$opscope" analyze "$csv" --top 10 --out "$tmp/opscope-bench-kd-report")
# The floor on this machine: counting the file's lines (wc -l reads every byte
# and does nothing else), for what a ratio against the csv module can reach.
read -r wc_s wc_kb < <(measure wc -l "$csv")
# opscope's CSV reader alone, on every core (no model, no numbers, no analyses):
# what the importer costs at the least.
tokenize=$(dirname "$opscope")/bench/csv_tokenize
tok_s=0
[ -x "$tokenize" ] && read -r tok_s _ < <("$tokenize" "$csv")
read -r py_s py_kb < <(measure /usr/bin/python3 -c '
import csv, sys
n = 0
with open(sys.argv[1], newline="") as f:
    for row in csv.reader(f):
        n += 1
' "$csv")

# Eight ranks of the level-1 tree in one job folder.
job=$tmp/opscope-bench-ascend-job
if [ ! -d "$job" ]; then
  for r in 0 1 2 3 4 5 6 7; do
    d=$job/host/h_${r}_20250101000000000_ascend_pt
    mkdir -p "$d"
    cp -r tests/data/ascend/level1_text/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT "$d/"
    echo '{}' > "$d/profiler_info_$r.json"
  done
fi
read -r job_s job_kb < <(measure "$opscope" analyze "$job" --out "$tmp/opscope-bench-job-report")

awk -v b="$bytes" -v os="$ours_s" -v ok="$ours_kb" -v ps="$py_s" -v pk="$py_kb" -v ws="$wc_s" \
    -v js="$job_s" -v jk="$job_kb" -v ts="$tok_s" 'BEGIN {
  printf "kernel_details.csv of %.0f MB, same machine, one run each\n", b / 1e6
  printf "  opscope analyze (import, AI Core pipeline, analyses, reports): %6.2f s, peak %6.0f MB = %.2fx the file\n", os, ok / 1024, ok * 1024 / b
  printf "  python csv module, reading every row:                          %6.2f s, peak %6.0f MB\n", ps, pk / 1024
  printf "  wc -l, reading every byte and nothing else (the floor):        %6.2f s\n", ws
  if (ts > 0) printf "  opscope CSV reader alone, all cores (fields, nothing else):    %6.2f s = %.1fx faster than the csv module\n", ts, ps / ts
  printf "ratio csv module / opscope: %.1fx (goal >= 20x): %s; csv module / wc -l: %.1fx\n", ps / os, (ps / os >= 20 ? "met" : "NOT MET"), (ws > 0 ? ps / ws : 0)
  printf "peak memory / file size: %.2f (goal <= 0.5): %s\n", ok * 1024 / b, (ok * 1024 / b <= 0.5 ? "met" : "NOT MET")
  printf "8-rank torch_npu tree (the level-1 sample x 8), one command: %.2f s, peak %.0f MB\n", js, jk / 1024
}'
