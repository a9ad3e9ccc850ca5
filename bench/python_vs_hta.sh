#!/usr/bin/env bash
# Decides issue 16's analysis goal: opscope.analyze() on a Kineto trace of at
# least 500 MB (a real sample replicated with shifted timestamps and ids, as
# bench/analyze_vs_python.sh makes it) and reading `ops` and `steps` as
# DataFrames, against json.load + pandas.json_normalize of traceEvents (HTA's
# loading path), each in its own process, same machine, same run; peak memory
# (RSS) of each. Goals: >= 30x faster; opscope's peak <= 0.5x the file.
# Usage: bench/python_vs_hta.sh [SIZE_MB] [PYTHONPATH_OF_THE_PACKAGE]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-520}
package=${2:-build/release/python}
python=/usr/bin/python3
trace=${TMPDIR:-/tmp}/opscope-bench-kineto-${size}MB.json
sample=tests/data/kineto/sampled_rank-0.json.gz
[ -f "$trace" ] || "$python" bench/make_big_trace.py "$sample" "$trace" "$size" >&2
bytes=$(stat -c %s "$trace")

measure() {  # command... ; prints "seconds peak_KB" and the command's last line of stdout
  local log
  log=$(mktemp)
  /usr/bin/time -f '%e %M' -o "$log.time" "$@" > "$log"
  echo "$(cat "$log.time") $(tail -n 1 "$log")"
  rm -f "$log" "$log.time"
}

# Both sides read the file from the page cache: read it once before timing either.
cat "$trace" > /dev/null
read -r ours_s ours_kb ours_line < <(measure env PYTHONPATH="$package" "$python" -c '
import sys, time
t0 = time.perf_counter()
import opscope
a = opscope.analyze(sys.argv[1])
ops, steps = a.ops, a.steps
print(f"{len(ops)} operators, {len(steps)} steps, {int(a.traces.events[0])} events; "
      f"in-process {time.perf_counter() - t0:.2f} s")
' "$trace")
read -r hta_s hta_kb hta_line < <(measure "$python" -c '
import json, sys, time
t0 = time.perf_counter()
import pandas
with open(sys.argv[1]) as f:
    doc = json.load(f)
frame = pandas.json_normalize(doc["traceEvents"])
print(f"{len(frame)} rows x {len(frame.columns)} columns; in-process {time.perf_counter() - t0:.2f} s")
' "$trace")

echo "Kineto trace of $((bytes / 1000000)) MB, same machine, one process each"
echo "  opscope.analyze + ops + steps as DataFrames: ${ours_s} s, peak $((ours_kb / 1024)) MB  ($ours_line)"
echo "  json.load + pandas.json_normalize (HTA):      ${hta_s} s, peak $((hta_kb / 1024)) MB  ($hta_line)"
awk -v b="$bytes" -v os="$ours_s" -v ok="$ours_kb" -v hs="$hta_s" 'BEGIN {
  printf "ratio HTA path / opscope: %.1fx (goal >= 30x): %s\n", hs / os, (hs / os >= 30 ? "met" : "NOT MET")
  printf "opscope peak memory / file size: %.2f (goal <= 0.5): %s\n", ok * 1024 / b, (ok * 1024 / b <= 0.5 ? "met" : "NOT MET")
}'
