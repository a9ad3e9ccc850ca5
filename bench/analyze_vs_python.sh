#!/usr/bin/env bash
# Decides the analyzer's speed goal: parse + analyses of a Kineto trace of at
# least 500 MB (a real sample replicated with shifted timestamps and ids)
# against Python's json.load of the same file alone, and against pandas
# building a DataFrame of its events (HTA's default path), same machine, same
# run. Goals: >= 20x faster than json.load alone; peak memory <= 0.5x the file.
# Usage: bench/analyze_vs_python.sh [SIZE_MB] [OPSCOPE]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-520}
opscope=${2:-build/release/opscope}
trace=${TMPDIR:-/tmp}/opscope-bench-kineto-${size}MB.json
sample=tests/data/kineto/sampled_rank-0.json.gz
[ -f "$trace" ] || /usr/bin/python3 bench/make_big_trace.py "$sample" "$trace" "$size" >&2
bytes=$(stat -c %s "$trace")

measure() {  # label command... ; prints seconds and peak RSS in KB
  local out
  out=$( { /usr/bin/time -f '%e %M' "$@" > /dev/null; } 2>&1 | tail -n 1)
  echo "$out"
}

# Both sides read the file from the page cache: read it once before timing either.
cat "$trace" > /dev/null
read -r ours_s ours_kb < <(measure "$opscope" analyze "$trace" --top 10)
read -r json_s json_kb < <(measure /usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$trace")
pandas_line=$(measure /usr/bin/python3 -c '
import json, sys
import pandas
doc = json.load(open(sys.argv[1]))
frame = pandas.DataFrame(doc["traceEvents"])
' "$trace" || echo "n/a n/a")
read -r pandas_s pandas_kb <<< "$pandas_line"

awk -v b="$bytes" -v os="$ours_s" -v ok="$ours_kb" -v js="$json_s" -v jk="$json_kb" \
    -v ps="$pandas_s" -v pk="$pandas_kb" 'BEGIN {
  mb = b / 1e6
  printf "Kineto trace of %.0f MB, same machine, one run each\n", mb
  printf "  opscope analyze (parse + analyses): %6.2f s, peak %6.0f MB = %.2fx the file\n", os, ok / 1024, ok * 1024 / b
  printf "  python json.load alone:             %6.2f s, peak %6.0f MB\n", js, jk / 1024
  if (ps != "n/a") printf "  python json.load + pandas DataFrame: %5.2f s, peak %6.0f MB\n", ps, pk / 1024
  printf "ratio json.load / opscope: %.1fx (goal >= 20x): %s\n", js / os, (js / os >= 20 ? "met" : "NOT MET")
  printf "peak memory / file size: %.2f (goal <= 0.5): %s\n", ok * 1024 / b, (ok * 1024 / b <= 0.5 ? "met" : "NOT MET")
}'
