#!/usr/bin/env bash
# Decides whether opscope's own pickle reader (importers/torch_memory/) earns
# its place: `opscope analyze` of a PyTorch caching-allocator snapshot with
# ENTRIES history entries (bench/make_big_snapshot.py) against Python's
# pickle.load of the same file alone (what PyTorch's own memory_viz and every
# script start with), same machine, same run, the file read once first.
# Goal: faster than pickle.load alone, in less memory.
# Usage: bench/torch_snapshot_vs_python.sh [ENTRIES] [OPSCOPE]
set -euo pipefail
cd "$(dirname "$0")/.."
entries=${1:-2000000}
opscope=${2:-build/release/opscope}
tmp=${TMPDIR:-/tmp}
snapshot=$tmp/opscope-bench-${entries}_snapshot.pickle
[ -f "$snapshot" ] || /usr/bin/python3 bench/make_big_snapshot.py "$snapshot" "$entries" >&2
bytes=$(stat -c %s "$snapshot")

measure() {  # command... ; prints seconds and peak RSS in KB
  { /usr/bin/time -f '%e %M' "$@" > /dev/null; } 2>&1 | tail -n 1
}

cat "$snapshot" > /dev/null
read -r ours_s ours_kb < <(measure "$opscope" analyze "$snapshot" --top 10 \
  --out "$tmp/opscope-bench-snapshot-report")
read -r py_s py_kb < <(measure /usr/bin/python3 -c '
import pickle, sys
with open(sys.argv[1], "rb") as f:
    pickle.load(f)
' "$snapshot")
awk -v b="$bytes" -v n="$entries" -v os="$ours_s" -v ok="$ours_kb" -v ps="$py_s" -v pk="$py_kb" 'BEGIN {
  printf "PyTorch memory snapshot of %.0f MB, %d history entries, same machine, one run each\n", b / 1e6, n
  printf "  opscope analyze (decode, replay, tables): %6.2f s, peak %6.0f MB\n", os, ok / 1024
  printf "  python pickle.load alone:                 %6.2f s, peak %6.0f MB\n", ps, pk / 1024
  printf "ratio pickle.load / opscope: time %.2fx, memory %.2fx (goal: both > 1): %s\n", ps / os, pk / ok,
         (ps / os > 1 && pk / ok > 1 ? "met" : "NOT MET")
}'
