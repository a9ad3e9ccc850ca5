#!/usr/bin/env bash
# Two builds of opscope on the same Kineto trace of at least 500 MB (a real
# sample replicated, bench/make_big_trace.py), alternated in one run: the wall
# time and peak resident memory of `opscope analyze` (import, every pass,
# advisor, reports), the median of RUNS runs each, and the ratio. For a change
# that must leave the analysis no slower and no larger: BEFORE is a build of
# the commit before it.
# Usage: bench/analyze_before_after.sh BEFORE_OPSCOPE [AFTER_OPSCOPE] [SIZE_MB] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?usage: bench/analyze_before_after.sh BEFORE_OPSCOPE [AFTER_OPSCOPE] [SIZE_MB] [RUNS]}
after=${2:-build/release/opscope}
size=${3:-520}
runs=${4:-5}
trace=${TMPDIR:-/tmp}/opscope-bench-kineto-${size}MB.json
[ -f "$trace" ] || /usr/bin/python3 bench/make_big_trace.py tests/data/kineto/sampled_rank-0.json.gz "$trace" "$size" >&2
size_bytes=$(stat -L -c %s "$trace")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cat "$trace" > /dev/null  # both sides read it from the page cache
for ((i = 0; i < runs; ++i)); do
  for side in before after; do
    bin=$before; [ "$side" = after ] && bin=$after
    /usr/bin/time -f "$side %e %M" -a -o "$out/times" "$bin" analyze "$trace" --top 10 \
      --out "$out/report" > /dev/null 2>&1
  done
done
/usr/bin/python3 - "$out/times" "$size_bytes" "$runs" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1]) if line.strip()]
mb, runs = int(sys.argv[2]) / 1e6, sys.argv[3]
med = {side: (statistics.median(float(r[1]) for r in rows if r[0] == side),
              statistics.median(int(r[2]) for r in rows if r[0] == side) / 1024)
       for side in ("before", "after")}
print(f"Kineto trace of {mb:.0f} MB, `opscope analyze`, median of {runs} alternated runs each")
for side in ("before", "after"):
    s, m = med[side]
    spread = sorted(float(r[1]) for r in rows if r[0] == side)
    print(f"  {side:6}: {s:6.2f} s (runs {spread[0]:.2f}-{spread[-1]:.2f}), peak {m:6.0f} MiB")
print(f"  after/before: time {med['after'][0] / med['before'][0]:.3f}x, "
      f"peak memory {med['after'][1] / med['before'][1]:.3f}x")
PY
