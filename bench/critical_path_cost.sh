#!/usr/bin/env bash
# What the steps' critical path adds to the analysis (issue 36's bound: at
# most 25% of the analysis time, within today's memory bound): on a Kineto
# trace of at least 500 MB (a real sample replicated, bench/make_big_trace.py),
# bench/critical_path_cost imports it and runs every pass and rule with the
# graph and critical-path passes and without them, in separate processes
# alternated RUNS times. Prints the medians of the passes' time, of import
# plus passes, and of peak resident memory, each side and their ratio.
# Usage: bench/critical_path_cost.sh [SIZE_MB] [RUNS] [BENCH_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-520}
runs=${2:-5}
bin=${3:-build/release/bench/critical_path_cost}
trace=${TMPDIR:-/tmp}/opscope-bench-kineto-${size}MB.json
[ -f "$trace" ] || /usr/bin/python3 bench/make_big_trace.py tests/data/kineto/sampled_rank-0.json.gz "$trace" "$size" >&2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
cat "$trace" > /dev/null  # both sides read it from the page cache
for ((i = 0; i < runs; ++i)); do
  for side in without with; do "$bin" "$trace" "$side" 3 >> "$out"; done
done
/usr/bin/python3 - "$out" "$(stat -L -c %s "$trace")" "$runs" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1]) if line.strip()]
mb, runs = int(sys.argv[2]) / 1e6, sys.argv[3]
def med(side, key):
    return statistics.median(float(r[r.index(key) + 1]) for r in rows if r[0] == side)
print(f"Kineto trace of {mb:.0f} MB: every pass and rule (median of 3 in a process), "
      f"median of {runs} alternated processes each side")
for side in ("without", "with"):
    print(f"  {side:7}: passes and rules {med(side, 'analysis_ms'):7.1f} ms, import + them "
          f"{med(side, 'import_ms') + med(side, 'analysis_ms'):7.1f} ms, "
          f"peak {med(side, 'peak_kib') / 1024:6.1f} MiB ({med(side, 'peak_kib') * 1024 / (mb * 1e6):.2f}x the file)")
a, b = med("with", "analysis_ms"), med("without", "analysis_ms")
whole_a = a + med("with", "import_ms")
whole_b = b + med("without", "import_ms")
print(f"  with/without: passes and rules {a / b:.3f}x, import + them {whole_a / whole_b:.3f}x, "
      f"peak memory {med('with', 'peak_kib') / med('without', 'peak_kib'):.3f}x")
PY
