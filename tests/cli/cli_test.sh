#!/usr/bin/env bash
# The command line: version, help, output formats, exit codes, the demo trace.
#
#   cli_test.sh OPSCOPE PYTHON TOOLS [CASE ...]
#
# Each case_NAME function below is one ctest entry, cli_NAME (tests/CMakeLists.txt
# reads the names from this file), so the cases run in parallel and a failure
# names its case; with no CASE every case runs in turn.
set -uo pipefail
opscope=$1 python=$2 tools=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
data=$(cd "$(dirname "$0")/../data" && pwd)
# Reports written without --out land in the current folder: the scratch one.
cd "$dir" || exit 1
samples=$data/ascend
# analysis.html's only script is the report's own (src/report/report_script.js).
report_script="$tools/../../src/report/report_script.js"

expect_status() {  # expected-status description command...
  local expected=$1 what=$2; shift 2
  "$@" >"$dir/out" 2>"$dir/err"
  local status=$?
  if [ "$status" -ne "$expected" ]; then
    echo "FAIL: $what: exit $status, expected $expected"; cat "$dir/out" "$dir/err"
    failures=$((failures + 1))
  else
    echo "ok: $what"
  fi
}

expect_grep() {  # pattern file description
  if grep -q -- "$1" "$2"; then echo "ok: $3"; else
    echo "FAIL: $3: '$1' not in $2:"; cat "$2"; failures=$((failures + 1)); fi
}

expect_empty() {  # file description: nothing half-written on stdout
  if [ -s "$1" ]; then echo "FAIL: $2: output was written:"; cat "$1"; failures=$((failures + 1)); else
    echo "ok: $2: no partial output"; fi
}

demo_trace() {  # the demo's trace ($trace), for the cases that analyse one
  if [ -z "${trace:-}" ]; then
    "$opscope" demo --out "$dir/demo-trace" --threads 3 --steps 4 >/dev/null 2>&1
    trace=$(ls "$dir"/demo-trace/*.opscope.json)
  fi
}

steps_trace() {  # file step-us jitter-seed
  "$python" - "$1" "$2" "$3" <<'PY'
import json, random, sys
path, step, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
events, t = [], 0.0
for i in range(12):
    d = step * (1 + rng.uniform(-0.1, 0.1))
    events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "pid": 1, "tid": 1, "ts": t, "dur": d})
    events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": t + 1, "dur": d / 2})
    t += d
json.dump(events, open(path, "w"))
PY
}

# Version, help, usage errors, standard output that fails, --out onto special files.
case_usage() {
expect_status 0 "--version" "$opscope" --version
expect_grep "opscope 0\." "$dir/out" "version printed"
# The version, where it was built from and the build type. In a git checkout,
# the commit is the checkout's (the build ran from it; -dirty may differ).
if grep -qE '^opscope [0-9]+\.[0-9]+\.[0-9]+ \((git [0-9a-z.-]+|not from a git checkout), [A-Za-z ]+\)$' "$dir/out"; then
  echo "ok: --version names the build's source and type"
else
  echo "FAIL: --version: not 'opscope X.Y.Z (git DESCRIBED, TYPE)':"; cat "$dir/out"; failures=$((failures + 1))
fi
# In a git checkout, the commit it names is this checkout's HEAD or one before it
# (a build is not remade by committing).
source_root="$tools/../.."
if git -C "$source_root" rev-parse HEAD >/dev/null 2>&1; then
  built=$(sed -n 's/^opscope [0-9.]* (git \([0-9a-f]*\).*/\1/p' "$dir/out")
  if [ -n "$built" ] && git -C "$source_root" merge-base --is-ancestor "$built" HEAD 2>/dev/null; then
    echo "ok: --version names a commit of this checkout ($built)"
  else
    echo "FAIL: --version names '$built', not a commit of this checkout:"; cat "$dir/out"
    failures=$((failures + 1))
  fi
fi
expect_status 0 "--help" "$opscope" --help
expect_grep "info" "$dir/out" "help lists info"
expect_grep "demo" "$dir/out" "help lists demo"
expect_status 2 "no subcommand" "$opscope"
expect_status 2 "unknown subcommand" "$opscope" frobnicate
expect_status 2 "unknown option" "$opscope" info --bogus
expect_grep "opscope: error: '--bogus' is not an option of 'opscope info'" "$dir/err" \
  "an unknown option is named, with the usual prefix"
# A mistyped command or option: the nearest one is offered.
expect_status 2 "mistyped command" "$opscope" anaylze x
expect_grep "opscope: error: 'anaylze' is not a command; did you mean 'analyze'?" "$dir/err" \
  "a mistyped command gets the nearest"
expect_status 2 "mistyped option" "$opscope" info --formt json
expect_grep "'--formt' is not an option of 'opscope info'; did you mean '--format'?" "$dir/err" \
  "a mistyped option gets the nearest"
expect_status 2 "mistyped bench case" "$opscope" bench matmull
expect_grep "'matmull' is not a command of 'opscope bench'; did you mean 'matmul'?" "$dir/err" \
  "a mistyped command of a command gets the nearest"
expect_status 2 "bench without a case" "$opscope" bench
expect_grep "'opscope bench' needs one of its commands: matmul, conv2d" "$dir/err" \
  "a command of commands lists them"
expect_status 2 "a word far from any command" "$opscope" frobnicate
if grep -q "did you mean" "$dir/err"; then
  echo "FAIL: nothing is near 'frobnicate'"; cat "$dir/err"; failures=$((failures + 1))
else
  echo "ok: no suggestion when nothing is near"
fi
expect_status 2 "bad --format" "$opscope" info --format xml
expect_status 5 "absent device" "$opscope" info --device cuda:0
expect_grep "unavailable device 'cuda:0'" "$dir/err" "device error names the device"
# A write to standard output that fails is an error (exit 4), never a silent success.
if [ -w /dev/full ]; then
  for args in "info --format json" "smi --format json" "analyze $data/kineto/cpu_only.pt.trace.json.gz --format csv --table operators --out $dir/full-analysis"; do
    # shellcheck disable=SC2086
    "$opscope" $args > /dev/full 2> "$dir/err"; status=$?
    if [ "$status" -eq 4 ] && grep -q "cannot write to standard output" "$dir/err"; then echo "ok: '$args' > /dev/full exits 4"; else
      echo "FAIL: '$args' > /dev/full exited $status"; failures=$((failures + 1)); fi
  done
else
  echo "skip: /dev/full is not writable here: standard-output errors not tested"
fi
# --out into a FIFO writes through it and leaves it a FIFO; a folder is refused (exit 4).
mkfifo "$dir/fifo"
cat "$dir/fifo" > "$dir/from_fifo" &
expect_status 0 "--out into a FIFO" "$opscope" info --format json --out "$dir/fifo"
wait
if [ -p "$dir/fifo" ] && grep -q '"results"' "$dir/from_fifo"; then echo "ok: the FIFO stays a FIFO and carried the output"; else
  echo "FAIL: --out replaced the FIFO or wrote nothing through it"; failures=$((failures + 1)); fi
mkdir -p "$dir/a_folder"
expect_status 4 "--out onto a folder" "$opscope" info --format json --out "$dir/a_folder"
expect_grep "not a regular file" "$dir/err" "the refusal says why"
}

# opscope trace.
case_trace() {
# opscope trace: with no CUDA here, a program that never initializes CUDA gives no
# trace and says why; without the CUDA backend, the command says that instead.
# Either way the status is 5, "unsupported here" (docs/commands/README.md).
"$opscope" trace -o "$dir/traced.json" -- true >"$dir/out" 2>"$dir/err"
status=$?
have_cuda_backend=0
grep -q "did not initialize CUDA" "$dir/err" && have_cuda_backend=1
if { [ $status -eq 5 ] && [ $have_cuda_backend -eq 1 ]; } ||
   { [ $status -eq 5 ] && grep -q "no cuda backend" "$dir/err"; }; then
  echo "ok: trace of a program without CUDA explained"
else
  echo "FAIL: trace of a program without CUDA: exit $status"; cat "$dir/err"; failures=$((failures + 1))
fi
if [ -e "$dir/traced.json" ] || ls -a "$dir" | grep -q opscope-trace; then
  echo "FAIL: trace left files behind"; ls -a "$dir"; failures=$((failures + 1))
else
  echo "ok: trace left nothing behind"
fi
# The collection, with a stand-in for the injected library: the program writes
# the per-process traces the library would, for itself and for one child.
if [ $have_cuda_backend -eq 1 ]; then
  "$opscope" trace -o "$dir/t/run.json" -- sh -c '
    [ -f "$CUDA_INJECTION64_PATH" ] || exit 9
    echo "{\"traceEvents\":[]}" > "$OPSCOPE_TRACE_DIR/opscope_cuda.$$.json"
    echo "{\"traceEvents\":[]}" > "$OPSCOPE_TRACE_DIR/opscope_cuda.99999.json"
    exit 4' >"$dir/out" 2>"$dir/err"
  status=$?
  if [ $status -eq 4 ] && [ -f "$dir/t/run.json" ] && [ -f "$dir/t/run.99999.json" ] &&
     ! ls -a "$dir/t" | grep -q opscope-trace && grep -q "exited with status 4" "$dir/err"; then
    echo "ok: trace collects each process's file and passes the exit status on"
  else
    echo "FAIL: trace collection: exit $status"; ls -a "$dir/t"; cat "$dir/err"
    failures=$((failures + 1))
  fi
fi
expect_status 2 "trace without a program" "$opscope" trace -o "$dir/traced.json"
expect_grep "after --" "$dir/err" "trace names the missing program"
}

# opscope info: table, JSON, CSV, the cached clock, --out.
case_info() {
expect_status 0 "info table" "$opscope" info
expect_grep "cores_used" "$dir/out" "info table has cores"
expect_grep "peak_fp32" "$dir/out" "info shows the fp32 peak"
expect_grep "FMA pipes x" "$dir/out" "info shows the peak formula"
expect_status 0 "info json" "$opscope" info --format json
cp "$dir/out" "$dir/info-stdout.json"
expect_status 0 "info json shape" "$python" "$tools/check_json_output.py" --require property < "$dir/info-stdout.json"
# One peak per machine (issue 18): a second info reuses the first one's clock.
OPSCOPE_CACHE_DIR="$dir/clock-cache" expect_status 0 "info, first call" "$opscope" info --format json
cp "$dir/out" "$dir/info-first.json"
OPSCOPE_CACHE_DIR="$dir/clock-cache" expect_status 0 "info, second call" "$opscope" info --format json
cp "$dir/out" "$dir/info-second.json"
expect_status 0 "two info calls agree on the peaks within 1%" "$python" -c '
import json, sys
def peaks(path):
    rows = json.load(open(path))["results"]
    values = {r["property"]: r["value"] for r in rows}
    return values, {k: float(v.split()[0]) for k, v in values.items() if k.startswith("peak_")}
(v1, p1), (v2, p2) = peaks(sys.argv[1]), peaks(sys.argv[2])
assert p1 and p1.keys() == p2.keys(), (p1, p2)
for k in p1:
    assert abs(p1[k] - p2[k]) <= 0.01 * p1[k], (k, p1[k], p2[k])
if "there is no cpufreq" in v1["clock"]:
    assert "reused from" in v2["clock"], v2["clock"]
' "$dir/info-first.json" "$dir/info-second.json"
expect_status 0 "info csv" "$opscope" info --format csv
expect_grep "^property,value" "$dir/out" "csv header (the JSON keys)"
expect_status 0 "info --out" "$opscope" info --format json --out "$dir/info.json"
expect_status 0 "info --out shape" "$python" "$tools/check_json_output.py" < "$dir/info.json"
expect_status 4 "unwritable --out" "$opscope" info --out /nonexistent-dir/info.json
expect_grep "/nonexistent-dir/info.json" "$dir/err" "io error names the path"
}

# opscope demo and its schedule.
case_demo() {
expect_status 0 "demo" "$opscope" demo --out "$dir/demo" --threads 3 --steps 4 --format json
cp "$dir/out" "$dir/demo-stdout.json"
expect_status 0 "demo json shape" "$python" "$tools/check_json_output.py" --require trace_file < "$dir/demo-stdout.json"
trace=$(ls "$dir"/demo/*.opscope.json)
expect_status 0 "demo trace valid" "$python" "$tools/check_trace.py" "$trace" \
  --expect-name matmul=12 --expect-name load_batch=12 --expect-name dispatch=4 \
  --expect-name 'ProfilerStep#3=1' --expect-dropped 0
expect_status 0 "demo with schedule" "$opscope" demo --out "$dir/sched" --steps 8 \
  --schedule wait=1,warmup=1,active=2,repeat=2
expect_grep "sched" "$dir/out" "schedule run lists traces"
count=$(ls "$dir"/sched/*.opscope.json | wc -l)
if [ "$count" -eq 2 ]; then echo "ok: two scheduled traces"; else
  echo "FAIL: $count scheduled traces, expected 2"; failures=$((failures + 1)); fi
expect_status 2 "bad schedule" "$opscope" demo --out "$dir/bad" --schedule active=0
expect_grep "active" "$dir/err" "schedule error explains"
expect_status 2 "unreadable schedule" "$opscope" demo --out "$dir/bad" --schedule 'wait=x'
expect_status 2 "bad threads" "$opscope" demo --threads 0
if [ -e "$dir/bad" ] && [ -n "$(ls -A "$dir/bad")" ]; then
  echo "FAIL: failed demo left files"; failures=$((failures + 1)); fi
}

# Options at their limits: repeated keys, process ids, long watches, too many threads, SIGINT.
case_limits() {
expect_status 2 "conv2d: a key given twice" "$opscope" bench conv2d --configs mb16ic8ih8oc8kh3mb4
expect_grep "mb is given twice" "$dir/err" "the repeated key is named"
expect_status 2 "conv2d: an empty --configs" "$opscope" bench conv2d --configs ''
expect_grep "empty item" "$dir/err" "an empty --configs is refused like an empty --sizes"
expect_status 2 "smi --pid -1" "$opscope" smi --pid -1
expect_grep "a process id is a positive number" "$dir/err" "a negative pid is refused"
expect_status 2 "smi --pid of no process" "$opscope" smi --pid 2147483646
expect_grep "no such process" "$dir/err" "an absent pid is refused"
# An hourly watch is accepted (it was refused): its first reading comes after the
# first hour (a rate over the interval), so it is still running when stopped.
expect_status 124 "smi --watch 1h is accepted" timeout 2 "$opscope" smi --watch 1h --count 1 --format json
# More threads than CPUs are capped, with a note: 4096 on a small machine took
# 26 s for a 64^3 matmul and seconds to obey SIGINT.
cpus=$("$python" -c 'import os; print(len(os.sched_getaffinity(0)))')
expect_status 0 "bench with --threads 4096" timeout 60 "$opscope" bench matmul --sizes 64 --dtype fp32 \
  --threads 4096 --format json
expect_grep "threads 4096 is more than the $cpus CPUs this process may use: using $cpus" "$dir/err" \
  "the cap is said"
expect_status 0 "info with --threads 4096" "$opscope" info --threads 4096 --format json
expect_grep "\"cores_used\",\"value\":\"$cpus of $cpus\"" "$dir/out" "--threads 4096 uses the $cpus CPUs"
# Promptly: within 3 s even on a loaded test machine (ctest -j beside a build);
# before the fix it took tens of seconds.
expect_status 0 "SIGINT stops a long benchmark within 3 s" "$python" - "$opscope" <<'PY'
import signal, subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "bench", "matmul", "--sizes", "2048,4096,8192", "--threads", "4096"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(2)
if p.poll() is not None:
    sys.exit("the benchmark ended before the signal: give it more work")
sent = time.monotonic()
p.send_signal(signal.SIGINT)
try:
    p.wait(timeout=10)
except subprocess.TimeoutExpired:
    p.kill()
took = time.monotonic() - sent
print(f"SIGINT took {took:.3f} s")
sys.exit(0 if took < 3.0 and p.returncode == -signal.SIGINT else 1)
PY
}

# opscope bench and bw: JSON and CSV shapes, sizes refused, ceilings files.
case_bench() {
quick=(--min-reps 2 --min-time 0 --warmup 0)
expect_status 0 "bench matmul json" "$opscope" bench matmul --sizes 64,32x48x40 --dtype fp32,bf16 \
  --format json "${quick[@]}"
cp "$dir/out" "$dir/matmul.json"
expect_status 0 "bench matmul json shape" "$python" "$tools/check_json_output.py" \
  --require median_ns --require flop_per_s --require flops --require pct_peak --require status < "$dir/matmul.json"
expect_grep '"status":"waived"' "$dir/matmul.json" "openblas bf16 waived, not failed"
expect_grep '"size":"32x48x40"' "$dir/matmul.json" "MxNxK sizes"
expect_status 0 "bench matmul json has the doubts" "$python" "$tools/check_json_output.py" \
  --require spread_pct --require flags < "$dir/matmul.json"
expect_status 2 "--max-time below --min-time" "$opscope" bench matmul --sizes 64 --min-time 400 --max-time 10
expect_grep "max-time" "$dir/err" "--max-time error names it"
expect_status 2 "bw --max-time 0" "$opscope" bw --sizes 64K --max-time 0
expect_status 2 "matmul size zero" "$opscope" bench matmul --sizes 0
expect_grep "is zero" "$dir/err" "zero size explained"
expect_empty "$dir/out" "matmul size zero"
expect_status 2 "matmul negative size" "$opscope" bench matmul --sizes=-5
expect_grep "is negative" "$dir/err" "negative size explained"
expect_status 2 "matmul non-numeric size" "$opscope" bench matmul --sizes 12a
expect_grep "not a positive integer" "$dir/err" "non-numeric size explained"
expect_status 6 "matmul larger than memory" "$opscope" bench matmul --sizes 200000 --dtype fp32
expect_grep "needs 447.0 GiB" "$dir/err" "memory need stated"
expect_empty "$dir/out" "matmul larger than memory"
expect_status 2 "unknown dtype" "$opscope" bench matmul --dtype fp64
expect_status 2 "unknown impl" "$opscope" bench matmul --impl cublas --sizes 64
expect_status 0 "bench conv2d custom" "$opscope" bench conv2d --configs mb2ic8ih14oc16kh3sh1 \
  --format json "${quick[@]}"
cp "$dir/out" "$dir/conv.json"
expect_status 0 "conv2d json shape" "$python" "$tools/check_json_output.py" \
  --require macs --require flops --require flop_per_s --require median_ns < "$dir/conv.json"
expect_status 2 "bad conv config" "$opscope" bench conv2d --configs mb2ic8
expect_grep "missing ih" "$dir/err" "conv error names the missing key"
expect_status 0 "bw csv" "$opscope" bw --sizes 64K,1M --format csv --min-reps 2 --min-time 0
expect_grep "^case,type,kernel,size,size_bytes" "$dir/out" "bw csv header (the JSON keys, base units)"
expect_grep "not applicable: host memory is device memory" "$dir/out" "h2d not faked"
expect_status 2 "bw bad size" "$opscope" bw --sizes 0K..1M
expect_status 2 "bw bad type" "$opscope" bw --type p2p
expect_status 0 "roofline" "$opscope" bench roofline --out "$dir/ceilings.json" --min-reps 3 --min-time 0
expect_grep "Spread %" "$dir/out" "roofline shows each ceiling's spread"
expect_grep '"clock":{"ghz"' "$dir/ceilings.json" "ceilings.json carries the clock"
expect_status 0 "matmul with ceilings file" "$opscope" bench matmul --sizes 64 --dtype fp32 \
  --ceilings "$dir/ceilings.json" "${quick[@]}"
expect_grep "ceilings.json" "$dir/out" "the ceilings source is named"
echo '{"kind":"opscope-ceilings","flops_per_second":{"fp32":"fast"}}' > "$dir/bad-ceilings.json"
expect_status 3 "bad ceilings file" "$opscope" bench matmul --sizes 64 --ceilings "$dir/bad-ceilings.json"
expect_grep "bad-ceilings.json" "$dir/err" "ceilings error names the file"
}

# opscope smi: snapshot, JSON, watch lines.
case_smi() {
expect_status 0 "smi snapshot" "$opscope" smi
expect_grep "cpu_utilization_percent" "$dir/out" "smi shows utilization"
expect_grep "no NVIDIA driver" "$dir/out" "smi names the missing NVIDIA driver"
expect_status 0 "smi json" "$opscope" smi --format json
cp "$dir/out" "$dir/smi.json"
expect_status 0 "smi json shape" "$python" "$tools/check_json_output.py" --require metric --require value < "$dir/smi.json"
expect_status 5 "smi absent gpu" "$opscope" smi --device cuda:0
expect_grep "no NVIDIA driver" "$dir/err" "absent gpu explained"
expect_status 2 "smi interval too short" "$opscope" smi --watch 5ms --count 2
expect_status 2 "smi bad interval" "$opscope" smi --watch soon --count 2
expect_status 0 "smi watch json lines" "$opscope" smi --watch 50ms --count 10 --format json
cp "$dir/out" "$dir/watch.jsonl"
expect_status 0 "watch lines are JSON at the interval" "$python" -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 10, len(lines)
times = [l["time_s"] for l in lines]
assert all(abs(t - 0.05 * (i + 1)) < 0.02 for i, t in enumerate(times)), times
assert all(l["sample_cost_us"] > 0 for l in lines)
assert any(m["metric"] == "cpu_utilization_percent" and m["value"] is not None for m in lines[-1]["metrics"])
' "$dir/watch.jsonl"
expect_status 0 "smi watch csv" "$opscope" smi --watch 20ms --count 3 --format csv
expect_grep "^time_s,sample_cost_us,cpu:cpu_utilization_percent" "$dir/out" "watch csv header"
}

# opscope monitor: built-in workloads, a busy baseline, a command.
case_monitor() {
expect_status 0 "monitor built-in workload" "$opscope" monitor --workload matmul:256 --duration 1s \
  --idle 300ms --interval 50ms --trace "$dir/monitor.json" --format json
cp "$dir/out" "$dir/monitor-out.json"
expect_status 0 "monitor json shape" "$python" "$tools/check_json_output.py" --require idle --require loaded < "$dir/monitor-out.json"
expect_grep "trace busy" "$dir/monitor-out.json" "monitor shows the trace-derived busy share"
expect_status 0 "monitor trace valid" "$python" "$tools/check_trace.py" "$dir/monitor.json"
expect_grep '"ph":"C"' "$dir/monitor.json" "monitor trace has counter tracks"
expect_grep '"name":"matmul"' "$dir/monitor.json" "monitor trace has the operators"
# An idle baseline beside a busy process says it was not idle, and names it.
"$python" -c 'while True: pass' & spinner=$!
expect_status 0 "monitor beside a busy process" "$opscope" monitor --workload matmul:64 \
  --duration 300ms --idle 600ms --interval 50ms
kill "$spinner"; wait "$spinner" 2>/dev/null
expect_grep "the idle baseline was not idle" "$dir/out" "monitor warns of a busy baseline"
expect_grep "% of a CPU" "$dir/out" "monitor names the busiest processes"
expect_status 0 "monitor a command" "$opscope" monitor --idle 200ms --duration 5s -- sleep 0.3
expect_grep "exited with status 0" "$dir/out" "monitor reports the command's exit"
expect_status 2 "monitor unknown workload" "$opscope" monitor --workload conv:3
expect_status 2 "monitor missing command" "$opscope" monitor --idle 100ms -- /nonexistent/program
expect_grep "No such file" "$dir/err" "monitor says why the command did not run"
}

# opscope analyze: our own trace, hostile names, truncated and huge inputs.
case_analyze() {
demo_trace
expect_status 0 "analyze our own trace" "$opscope" analyze "$trace" --format json
expect_grep '"format":"opscope"' "$dir/out" "analyze recognises opscope traces"
printf '[{"ph":"X","cat":"cpu_op","name":"\\u001b[2J<img src=x onerror=alert(1)>,=1+1","ts":1,"dur":2,"pid":1,"tid":1}]' > "$dir/hostile.json"
# Without --out the report goes into the current folder, named after the input.
expect_status 0 "analyze hostile names" sh -c 'cd "$1" && "$2" analyze "$3"' _ "$dir" "$opscope" "$dir/hostile.json"
if grep -q $'\x1b' "$dir/out"; then echo "FAIL: an escape sequence reached the terminal"; failures=$((failures + 1)); else
  echo "ok: terminal output escapes control characters"; fi
expect_grep '\\x1b\[2J<img' "$dir/out" "the name is shown, escaped"
expect_status 0 "analyze hostile names html" "$python" "$tools/check_html.py" "$dir/hostile.opscope-analysis/analysis.html" \
  --script "$report_script" --contains "<img src=x onerror=alert(1)>"
expect_grep '"\\x1b\[2J<img src=x onerror=alert(1)>,=1+1"' "$dir/hostile.opscope-analysis/summary.csv" "summary.csv quotes and defuses the name"
expect_status 0 "analysis.json shape" "$python" "$tools/check_json_output.py" < "$dir/hostile.opscope-analysis/analysis.json"
# A read-only data folder: the report is written where the user stands, not beside the data.
mkdir -p "$dir/readonly" "$dir/here"
cp "$dir/hostile.json" "$dir/readonly/ro.json"
chmod a-w "$dir/readonly"
expect_status 0 "analyze a trace in a read-only folder" sh -c 'cd "$1" && "$2" analyze "$3"' _ \
  "$dir/here" "$opscope" "$dir/readonly/ro.json"
if [ -f "$dir/here/ro.opscope-analysis/analysis.json" ] && [ ! -e "$dir/readonly/ro.opscope-analysis" ]; then
  echo "ok: the default report folder is in the current folder"
else
  echo "FAIL: the default report folder is not ./ro.opscope-analysis"; ls -R "$dir/here" "$dir/readonly"
  failures=$((failures + 1))
fi
expect_status 0 "analyze a folder named with a trailing slash" sh -c 'cd "$1" && "$2" analyze "$3/"' _ \
  "$dir/here" "$opscope" "$dir/readonly"
if [ -f "$dir/here/readonly.opscope-analysis/analysis.json" ]; then
  echo "ok: a folder's report is named after the folder"
else
  echo "FAIL: no ./readonly.opscope-analysis"; ls "$dir/here"; failures=$((failures + 1))
fi
chmod u+w "$dir/readonly"
expect_status 0 "analyze hostile names csv" "$opscope" analyze "$dir/hostile.json" --format csv --table operators
expect_grep '"\\x1b\[2J<img src=x onerror=alert(1)>,=1+1"' "$dir/out" "csv quotes the name" 
# Every row in the report's files; the terminal lists the top 20 and says so.
"$python" - "$dir/thirty.json" <<'PY'
import json, sys
json.dump([{"ph": "X", "cat": "cpu_op", "name": f"op{i:02d}", "pid": 1, "tid": 1, "ts": 10 * i,
            "dur": 1 + i} for i in range(30)], open(sys.argv[1], "w"))
PY
expect_status 0 "analyze thirty operators" "$opscope" analyze "$dir/thirty.json" --out "$dir/thirty"
expect_grep "10 more (--top 0 lists all)" "$dir/out" "the terminal says how many rows it leaves out"
rows=$("$python" -c 'import csv, sys; print(sum(1 for _ in csv.DictReader(open(sys.argv[1]))))' "$dir/thirty/tables/operators.csv")
if [ "$rows" = 30 ]; then echo "ok: tables/operators.csv holds all 30 operators"; else
  echo "FAIL: tables/operators.csv holds $rows operators, not 30"; failures=$((failures + 1)); fi
"$python" - "$dir/thirty/analysis.json" <<'PY' || failures=$((failures + 1))
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["results"] if r["section"] == "operators"]
assert len(rows) == 30, f"analysis.json has {len(rows)} operators, not 30"
print("ok: analysis.json holds all 30 operators")
PY
expect_status 0 "analyze --format csv --table operators" "$opscope" analyze "$dir/thirty.json" --format csv --table operators --out "$dir/thirty"
"$python" - "$dir/out" <<'PY' || failures=$((failures + 1))
import sys
import pandas as pd
frame = pd.read_csv(sys.argv[1])
assert len(frame) == 30 and "self_ns" in frame.columns, frame
print("ok: --format csv --table reads with pandas.read_csv, every row")
PY
# CSV is one table: several are refused before any work, naming --table.
expect_status 2 "analyze --format csv without --table" "$opscope" analyze "$dir/hostile.json" --format csv
expect_grep "prints one table: name it with --table SECTION" "$dir/err" "the refusal names --table"
expect_status 2 "analyze --table of no such section" "$opscope" analyze "$dir/hostile.json" --table nosuch --out "$dir/nosuch"
expect_grep "its tables: findings, trace_health, operators" "$dir/err" "an unknown section is refused, naming the sections"
expect_status 2 "info --format csv with several tables" "$opscope" info --format csv --table nosuch

printf '{"traceEvents":[{"ph":"X","ts":1,' > "$dir/truncated.json"
expect_status 3 "analyze truncated" "$opscope" analyze "$dir/truncated.json"
expect_grep "truncated.json: byte 33: the JSON ends early" "$dir/err" "truncation names the byte"
# One huge event (a 256 MiB name in a 250 KB gzip): refused at its first byte,
# with memory bounded by the 64 MiB cap on one event, not by the input (it took
# over 1 GiB before the cap).
"$python" - "$dir/huge_event.json.gz" <<'PY'
import sys, zlib
with open(sys.argv[1], "wb") as f:
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    f.write(c.compress(b'{"traceEvents":[{"ph":"i","ts":1,"pid":1,"tid":1},{"ph":"i","name":"'))
    for _ in range(256):
        f.write(c.compress(b"n" * (1 << 20)))
    f.write(c.compress(b'","ts":1}]}') + c.flush())
PY
expect_status 3 "analyze a gzip whose one event is 256 MiB" "$python" "$tools/peak_rss.py" 512 \
  "$opscope" analyze "$dir/huge_event.json.gz" --out "$dir/huge_event-analysis"
expect_grep "huge_event.json.gz: byte 50: an event is longer than 64 MiB" "$dir/err" "the huge event is named by its byte"
}

# torch_npu output trees and job folders.
case_ascend_tree() {
# A torch_npu output tree (the real level-1 sample, and a job folder holding
# two ranks of it): one timeline per rank, ranks from profiler_info_{rank}.json,
# the other files listed with why they are not read, never counted as ranks.
expect_status 0 "analyze a torch_npu output folder" "$opscope" analyze "$samples/level1_text" \
  --format json --out "$dir/tree-analysis"
expect_grep '"section":"unused_files"' "$dir/out" "the files not read are listed"
expect_grep 'ASCEND_PROFILER_OUTPUT","reason":"no analyse.done' "$dir/out" \
  "a folder whose parse may be partial is listed with its reason"
expect_grep '"section":"reported_apis"' "$dir/out" "api_statistic.csv is read beside the timeline"
expect_grep '"section":"reported_communication","rank":0' "$dir/out" "communication.json is read beside the timeline"
expect_grep '"section":"reported_links"' "$dir/out" "communication_matrix.json is read beside the timeline"
expect_status 0 "the files not read are in analysis.html" "$python" "$tools/check_html.py" \
  "$dir/tree-analysis/analysis.html" --script "$report_script" --contains "Files found and not read"
if grep -q '"section":"ranks"' "$dir/out"; then echo "FAIL: one rank's files counted as several ranks"; failures=$((failures + 1)); else
  echo "ok: one rank's files are one rank"; fi
mkdir -p "$dir/job/host"
cp -r "$samples/level0_text/rank0_ascend_pt" "$dir/job/host/h_1_20260101000000000_ascend_pt"
cp -r "$samples/level0_text/rank0_ascend_pt" "$dir/job/host/h_2_20260101000000000_ascend_pt"
echo '{}' > "$dir/job/host/h_1_20260101000000000_ascend_pt/profiler_info_0.json"
echo '{"rank_id": "1"}' > "$dir/job/host/h_2_20260101000000000_ascend_pt/profiler_info.json"
expect_status 0 "analyze a job folder of two ranks" "$opscope" analyze "$dir/job" --out "$dir/job-analysis"
expect_grep '^0,.*h_1_20260101000000000_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json' "$dir/job-analysis/tables/ranks.csv" "rank 0 from profiler_info_0.json"
expect_grep '^1,.*h_2_20260101000000000_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json' "$dir/job-analysis/tables/ranks.csv" "rank 1 from rank_id"
# Links inside the job folder (issue 39): one to a rank's output is read as
# that rank; one to / is listed, not walked (it ended on a permission error
# under /proc, after listing the whole filesystem).
mkdir -p "$dir/linked"
ln -s "$dir/job/host/h_1_20260101000000000_ascend_pt" "$dir/linked/rank0"
ln -s / "$dir/linked/everything"
expect_status 0 "analyze a job folder with a link to / and one to a rank" \
  timeout 60 "$opscope" analyze "$dir/linked" --out "$dir/linked-analysis"
expect_grep 'linked/everything,a symbolic link to a folder that is no rank' \
  "$dir/linked-analysis/tables/unused_files.csv" "the link to / is listed, not walked"
expect_grep 'h_1_20260101000000000_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json' "$dir/linked-analysis/summary.csv" \
  "the link to a rank's output is read"
}

# Two ranks whose step_trace_time.csv differ.
case_ascend_ranks() {
# Two ranks of the level-1 folder, rank 1 given 50 ms more free time per step
# in its step_trace_time.csv: rank 1 is the slow rank, and free time is why.
mkdir -p "$dir/job2"
for r in 0 1; do
  cp -r "$samples/level1_text/rank0_ascend_pt" "$dir/job2/h_${r}_20260101000000000_ascend_pt"
  rm "$dir/job2/h_${r}_20260101000000000_ascend_pt/profiler_info_0.json"
  echo '{}' > "$dir/job2/h_${r}_20260101000000000_ascend_pt/profiler_info_$r.json"
done
"$python" - "$dir/job2/h_1_20260101000000000_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
free = rows[0].index("Free")
for row in rows[1:]:
    row[free] = str(float(row[free]) + 50000)
csv.writer(open(sys.argv[1], "w", newline="")).writerows(rows)
PY
expect_status 0 "analyze two ranks with step_trace_time.csv" "$opscope" analyze "$dir/job2" --out "$dir/job2-analysis"
expect_grep "rank 1 is the slowest, 15.5% above the median rank: free time 25.000 ms over the median" "$dir/out" \
  "the slow rank and its component (free: +50 ms over two ranks' median of +25)"
}

# Ascend side files: the AI Core pipeline, broken side files, layouts, AI CPU.
case_ascend_side_files() {
# The AI Core pipeline of the level-1 folder (its PMU columns), in every output.
expect_status 0 "analyze a level-1 folder for its AI Core pipeline" "$opscope" analyze "$samples/level1_text" \
  --out "$dir/ai-core-analysis"
expect_grep 'aclnnForeachAddListV2_ForeachAddListV2_ForeachAddList,.*memory-bound (MTE2)' "$dir/ai-core-analysis/tables/core_pipes.csv" \
  "the foreach add is memory-bound (MTE2 0.98)"
expect_grep 'AI Core, memory-bound (MTE2): 5 operators' "$dir/ai-core-analysis/analysis.html" \
  "the MTE2 finding is in analysis.html"
# A broken l2_cache.csv: the pipeline is still reported, without L2 rates, and
# the file is listed with its error.
cp -r "$samples/level1_text" "$dir/l2-broken"
printf 'Stream Id,Task Id,Hit Rate,Victim Rate,Op Name\n2,1,N/A,-3,x\n' \
  > "$dir/l2-broken/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/l2_cache.csv"
expect_status 0 "analyze a tree whose l2_cache.csv is broken" "$opscope" analyze "$dir/l2-broken" \
  --out "$dir/l2-broken-analysis"
expect_grep 'aclnnForeachAddListV2_ForeachAddListV2_ForeachAddList,.*memory-bound (MTE2)' \
  "$dir/l2-broken-analysis/tables/core_pipes.csv" "the pipeline stands without L2 rates"
expect_grep "l2_cache.csv,.*could not be read: .*line 2: 'Victim Rate' is not a rate: '-3'" "$dir/l2-broken-analysis/tables/unused_files.csv" \
  "the broken l2_cache.csv is listed with its line and column"
# Layout conversions by format, AI CPU fallbacks by type and data types
# (kernel_details.csv's Input/Output Formats and Data Types; counted by
# tests/data's own rows: 19 TransData NCHW->NC1HWC0, 9 NCHW->FRACTAL_Z; the
# advisor sample's Cast tasks run INT32->UINT64 on the AI CPU, 579.6 us for trans_Cast_5).
expect_grep ',TransData,TransData,layout kernel,57,.*NCHW->NC1HWC0 x19 .*NCHW->FRACTAL_Z x9' "$dir/l2-broken-analysis/tables/layout_conversions.csv" \
  "TransData is reported by format conversion"
expect_status 0 "analyze the advisor sample's AI CPU tasks" "$opscope" analyze "$samples/kernel_details_advisor.csv" \
  --format csv --table cpu_fallback --out "$dir/ai-cpu-analysis"
expect_grep ',AI_CPU task,trans_Cast_5,579600,Cast; INT32->UINT64' "$dir/out" \
  "the AI CPU fallback names its op type and data types"
# A broken side file is listed with its error; the timeline is still analysed.
mkdir -p "$dir/job3"
cp -r "$samples/level0_text/rank0_ascend_pt" "$dir/job3/h_0_20260101000000000_ascend_pt"
printf 'Name,Start Time(us),Duration(us),aic_mac_ratio\nk,1.0,2.0,high\n' \
  > "$dir/job3/h_0_20260101000000000_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"
expect_status 0 "analyze a tree whose kernel_details.csv is broken" "$opscope" analyze "$dir/job3" --out "$dir/job3-analysis"
# (analysis.json: the terminal wraps long reasons to fit 120 columns)
expect_grep "kernel_details.csv: line 2: 'aic_mac_ratio' is not a share of cycles in \[0, 1\]: 'high'" \
  "$dir/job3-analysis/analysis.json" "the broken side file is named with its line and column"
# The same figure in the kernel_details.csv that is the timeline (read once for
# tasks and pipeline): its tasks are analysed, its pipeline listed with the error.
rm "$dir/job3/h_0_20260101000000000_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
expect_status 0 "analyze a tree whose timeline has a broken PMU figure" "$opscope" analyze "$dir/job3" \
  --out "$dir/job3-analysis"
expect_grep ",k,kernel,1," "$dir/job3-analysis/tables/kernels.csv" "the timeline's task is analysed"
expect_grep "kernel_details.csv,.could not be read: .*line 2: 'aic_mac_ratio' is not a share of cycles" "$dir/job3-analysis/tables/unused_files.csv" \
  "its pipeline is listed with the error"
}

# Inputs of every kind: unknown, missing, unwritable reports, pipes.
case_analyze_inputs() {
demo_trace
printf 'hello' > "$dir/unknown.txt"
expect_status 5 "analyze unknown format" "$opscope" analyze "$dir/unknown.txt"
expect_status 4 "analyze missing file" "$opscope" analyze "$dir/absent.json"
expect_status 4 "analyze unwritable report folder" "$opscope" analyze "$trace" --out /proc/opscope-report
# Pipes: standard input, and a process substitution (opened once; the report
# goes to the current folder, since /dev/fd is not a place to write).
expect_status 0 "analyze standard input" sh -c '"$1" analyze - --format json --out "$2" < "$3"' _ \
  "$opscope" "$dir/stdin-analysis" "$trace"
expect_grep '"format":"opscope"' "$dir/out" "a trace on standard input is recognised"
expect_status 0 "analyze a gzip stream from a pipe" bash -c 'cd "$2" && "$1" analyze <(gzip -c < "$3") --format json' _ \
  "$opscope" "$dir" "$trace"
expect_grep '"format":"opscope"' "$dir/out" "a gzip pipe is recognised"
if ls -d "$dir"/*.opscope-analysis/analysis.json >/dev/null 2>&1; then echo "ok: the pipe's report is in the current folder"; else
  echo "FAIL: no report for the pipe in $dir"; ls "$dir"; failures=$((failures + 1)); fi
# A folder of traces, one truncated (issue 37): the other is analysed and the
# broken one listed with its error; a folder of broken traces only fails with
# the first one's error.
mkdir -p "$dir/mixed-folder" "$dir/broken-folder"
cp "$trace" "$dir/mixed-folder/good.json"
head -c 200 "$trace" > "$dir/mixed-folder/cut.json"
head -c 200 "$trace" > "$dir/broken-folder/cut.json"
head -c 100 "$trace" > "$dir/broken-folder/cut2.json"
expect_status 0 "analyze a folder with one truncated trace" "$opscope" analyze "$dir/mixed-folder" \
  --out "$dir/mixed-analysis"
expect_grep 'cut.json,could not be read: .*cut.json: byte [0-9]*: the JSON ends early' \
  "$dir/mixed-analysis/tables/unused_files.csv" "the truncated trace is listed with its error"
expect_grep 'good.json' "$dir/mixed-analysis/summary.csv" "the other trace is analysed"
expect_status 3 "analyze a folder of truncated traces" "$opscope" analyze "$dir/broken-folder" \
  --out "$dir/broken-analysis"
expect_grep "cut.json: byte [0-9]*: the JSON ends early" "$dir/err" "the first one's error is the command's"
}

# opscope bench resnet50 and its trace.
case_resnet50() {
expect_status 0 "bench resnet50 small" "$opscope" bench resnet50 --batch 2 --image-size 64 \
  --warmup 0 --iters 1 --format json --trace "$dir/resnet.json"
expect_grep '"parameters":25557032' "$dir/out" "resnet50 has torchvision's parameter count"
expect_grep '"section":"resnet50_memory"' "$dir/out" "resnet50 reports memory"
expect_grep '"spread_pct":' "$dir/out" "resnet50 reports the iterations' spread"
expect_status 0 "analyze the resnet50 trace" "$opscope" analyze "$dir/resnet.json" --out "$dir/resnet-analysis"
expect_grep "Conv2DBackwardWeights" "$dir/out" "the analyzer lists the traced layers"
expect_status 2 "resnet50 bad layout" "$opscope" bench resnet50 --layout nothing
expect_grep "use nchw, nhwc or blocked" "$dir/err" "the bad layout is named"
expect_status 2 "resnet50 bad mode" "$opscope" bench resnet50 --mode fly
expect_status 2 "resnet50 bad batch" "$opscope" bench resnet50 --batch 0
expect_status 2 "resnet50 bad sweep" "$opscope" bench resnet50 --threads-sweep 1,x
expect_status 2 "resnet50 trace with a sweep" "$opscope" bench resnet50 --threads-sweep 1,2 --trace "$dir/t.json"
expect_status 2 "resnet50 bad dtype" "$opscope" bench resnet50 --dtype int3
}

# opscope diff: gates, noise, rank folders.
case_diff() {
printf '{"traceEvents":[{"ph":"X","ts":1,' > "$dir/truncated.json"
printf '[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000},{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":500}]' > "$dir/before.json"
printf '[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1200},{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":700}]' > "$dir/after.json"
expect_status 7 "diff gate: 20% slower fails --fail-if-slower 10" "$opscope" diff "$dir/before.json" "$dir/after.json" --fail-if-slower 10
expect_grep "slower by 20.0%" "$dir/err" "the gate says by how much"
expect_status 0 "diff gate: within the limit" "$opscope" diff "$dir/before.json" "$dir/after.json" --fail-if-slower 25 --format json
expect_grep '"change_pct":20' "$dir/out" "diff json has the change"
expect_status 0 "diff without a gate" "$opscope" diff "$dir/before.json" "$dir/after.json"
expect_status 3 "diff of a truncated trace" "$opscope" diff "$dir/before.json" "$dir/truncated.json"
for bad in nan -5 inf 1e999 ''; do
  expect_status 2 "diff gate refuses '$bad'" "$opscope" diff "$dir/before.json" "$dir/after.json" --fail-if-slower "$bad"
  expect_grep "fail-if-slower" "$dir/err" "the refusal of '$bad' names the option"
done
# Many steps on each side: a 1% change within the noise between steps passes a
# 0.5% gate; a 20% change beyond it fails. Folders of rank traces compare rank by rank.
mkdir -p "$dir/ranks_before" "$dir/ranks_after"
steps_trace "$dir/noisy_a.json" 1000 1; steps_trace "$dir/noisy_b.json" 1010 2
expect_status 0 "diff gate: 1% inside the noise passes a 0.5% gate" "$opscope" diff "$dir/noisy_a.json" "$dir/noisy_b.json" --fail-if-slower 0.5
expect_grep "no change beyond noise" "$dir/out" "the verdict names the noise"
steps_trace "$dir/ranks_before/rank0.json" 1000 1; steps_trace "$dir/ranks_before/rank1.json" 1000 3
steps_trace "$dir/ranks_after/rank0.json" 1000 4; steps_trace "$dir/ranks_after/rank1.json" 1200 5
expect_status 7 "diff of rank folders: rank 1 is 20% slower" "$opscope" diff "$dir/ranks_before" "$dir/ranks_after" --fail-if-slower 10
expect_grep "rank 1: slower by" "$dir/err" "the gate names the slow rank"
}

# An output never replaces one of the command's own inputs (issue 39): the
# summary onto its trace, a diff onto one side, a report folder onto the
# folder of traces, a hard link of the input; each exits 2 naming the path,
# and the input is byte for byte what it was.
case_outputs_never_inputs() {
steps_trace "$dir/own.json" 1000 1
steps_trace "$dir/other.json" 1100 2
ln "$dir/own.json" "$dir/own_link.json"
sum=$(md5sum < "$dir/own.json")
expect_status 2 "--summary-only onto its own trace" "$opscope" analyze --summary-only "$dir/own.json" --out "$dir/own.json"
expect_grep "one of this command's inputs" "$dir/err" "the refusal says why"
expect_status 2 "diff onto its first trace" "$opscope" diff "$dir/own.json" "$dir/other.json" --out "$dir/own.json"
expect_grep "own.json" "$dir/err" "the refusal names the path"
expect_status 2 "diff onto a hard link of its first trace" "$opscope" diff "$dir/own.json" "$dir/other.json" --out "$dir/own_link.json"
expect_status 2 "analyze --format json onto its trace" "$opscope" analyze "$dir/own.json" --format json --out "$dir/own.json"
[ "$(md5sum < "$dir/own.json")" = "$sum" ] || { echo "FAIL: an input was changed"; failures=$((failures + 1)); }
mkdir -p "$dir/traces_in"
cp "$dir/own.json" "$dir/traces_in/rank0.json"
expect_status 2 "a report folder onto the folder of traces" "$opscope" analyze "$dir/traces_in" --out "$dir/traces_in"
[ ! -e "$dir/traces_in/analysis.json" ] || { echo "FAIL: a report was written into the input folder"; failures=$((failures + 1)); }
expect_status 0 "an output elsewhere is written" "$opscope" diff "$dir/own.json" "$dir/other.json" --out "$dir/diff.txt"
# A file it replaces keeps its mode.
printf 'old' > "$dir/private.txt"; chmod 600 "$dir/private.txt"
expect_status 0 "diff replaces an older output" "$opscope" diff "$dir/own.json" "$dir/other.json" --out "$dir/private.txt"
[ "$(stat -c %a "$dir/private.txt")" = 600 ] || { echo "FAIL: the replaced file lost its mode: $(stat -c %a "$dir/private.txt")"; failures=$((failures + 1)); }
# Standard output that cannot be written (a full disk: /dev/full) is an I/O
# error (exit 4), for --help and --version too; --out - is standard output.
for args in "--help" "--version" "analyze --help" "analyze --summary-only $dir/own.json --out -"; do
  # shellcheck disable=SC2086
  "$opscope" $args > /dev/full 2> "$dir/err"; status=$?
  [ "$status" -eq 4 ] || { echo "FAIL: '$args' into /dev/full: exit $status, expected 4"; cat "$dir/err"; failures=$((failures + 1)); }
done
expect_status 0 "--summary-only --out - writes the summary to standard output" "$opscope" analyze --summary-only "$dir/own.json" --out -
[ ! -e ./- ] && [ ! -e "$dir/-" ] || { echo "FAIL: --out - made a file named '-'"; failures=$((failures + 1)); }
cp "$dir/out" "$dir/stdout.summary"
expect_status 0 "the summary from standard output merges" "$opscope" merge "$dir/stdout.summary" --out "$dir/merged"
expect_status 2 "--out - with several traces" "$opscope" analyze --summary-only "$dir/own.json" "$dir/other.json" --out -
# Two traces of one rank (both say rank 0) would write one rank-0.summary, the
# second replacing the first without a word (issue 39): refused, naming both;
# a zip holding both is read as the two traces it holds, and refused alike.
mkdir -p "$dir/same_rank" && cp "$data/kineto/sampled_rank-0.json.gz" "$dir/same_rank/a.json.gz"
cp "$data/kineto/sampled_rank-0.json.gz" "$dir/same_rank/b.json.gz"
expect_status 3 "two traces of one rank into one summary folder" "$opscope" analyze --summary-only "$dir/same_rank/a.json.gz" "$dir/same_rank/b.json.gz" --out "$dir/same_rank_out"
expect_grep "a.json.gz' and '.*b.json.gz' are both rank 0" "$dir/err" "the refusal names both traces and the rank"
[ ! -e "$dir/same_rank_out/rank-0.summary" ] || { echo "FAIL: a summary was written before the refusal"; failures=$((failures + 1)); }
python3 -c 'import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for f in sys.argv[2:]: z.write(f, f.rsplit("/", 1)[1])' "$dir/same_rank.zip" "$dir/same_rank/a.json.gz" "$dir/same_rank/b.json.gz"
expect_status 3 "a zip of two traces of one rank" "$opscope" analyze --summary-only "$dir/same_rank.zip" --out "$dir/same_rank_out"
expect_grep "same_rank.zip/a.json.gz' and '.*same_rank.zip/b.json.gz' are both rank 0" "$dir/err" "the zip's traces are both named"
# Values that were accepted and meant something else (issue 39).
expect_status 2 "--fail-if-slower in hexadecimal" "$opscope" diff "$dir/own.json" "$dir/other.json" --fail-if-slower 0x10
expect_grep "fail-if-slower" "$dir/err" "the refusal names the option"
expect_status 2 "--rank -1" "$opscope" analyze --summary-only "$dir/own.json" --rank -1 --out "$dir/r.summary"
expect_grep "rank" "$dir/err" "the refusal names --rank"
# Its range in integers (issue 51: it printed DBL_MAX in full, 422 bytes).
expect_status 2 "--rank -5" "$opscope" analyze --summary-only "$dir/own.json" --rank -5 --out "$dir/r.summary"
expect_grep "not in range 0 to 2147483647 " "$dir/err" "the range is said in integers"
[ "$(wc -c < "$dir/err")" -lt 200 ] || { echo "FAIL: the --rank refusal is $(wc -c < "$dir/err") bytes"; failures=$((failures + 1)); }
for cmd in "diff $dir/own.json $dir/other.json" "analyze $dir/own.json" "merge $dir/stdout.summary" "demo"; do
  # shellcheck disable=SC2086
  expect_status 2 "$cmd --out ''" "$opscope" $cmd --out ''
  expect_grep "out" "$dir/err" "the refusal of an empty --out names it"
done
# --out - (issue 51, fault 8): standard output where the output is one
# printed file; refused (exit 2, nothing named '-') where it is a folder or a
# file opscope reads back.
mkdir -p "$dir/dash" && cd "$dir/dash" || exit 1
expect_status 0 "diff --out - prints the diff" "$opscope" diff "$dir/own.json" "$dir/other.json" --out -
expect_grep "Verdict" "$dir/out" "the diff is on standard output"
for cmd in "analyze $dir/own.json" "analyze --scale-out $dir/own.json" "merge $dir/stdout.summary" "demo" "run --quick" "bench roofline"; do
  # shellcheck disable=SC2086
  expect_status 2 "$cmd --out -" "$opscope" $cmd --out -
  expect_grep "standard output" "$dir/err" "the refusal of --out - for $cmd says why"
done
[ ! -e "$dir/dash/-" ] || { echo "FAIL: --out - made a file or folder named '-'"; failures=$((failures + 1)); }
cd "$dir" || exit 1
# A start time beyond 64-bit nanoseconds is out of range, not "not a time".
printf 'Step Id,Name,Type,Start Time(us),Duration(us)\n1,MatMul,MatMul,17364088837041000.212,5\n' > "$dir/kernel_details.csv"
expect_status 3 "kernel_details.csv with a start out of range" "$opscope" analyze "$dir/kernel_details.csv" --out "$dir/kd"
expect_grep "out of range" "$dir/err" "the error says out of range"
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1e400,"dur":1}]}' > "$dir/far.json"
expect_status 3 "a Chrome trace with ts out of range" "$opscope" analyze "$dir/far.json" --out "$dir/far"
expect_grep "out of range" "$dir/err" "the Chrome error says out of range"
# A reused report folder holds one run's tables (issue 39): an earlier run's
# stray file goes, and a tables/ that is a symbolic link is replaced by a
# folder, never written through into its target.
demo_trace
expect_status 0 "a report" "$opscope" analyze "$trace" --out "$dir/reused"
touch "$dir/reused/tables/stale_from_an_earlier_run.csv"
mkdir -p "$dir/link-target"
rm -rf "$dir/reused-link" && mkdir -p "$dir/reused-link" && ln -s "$dir/link-target" "$dir/reused-link/tables"
expect_status 0 "the report again" "$opscope" analyze "$trace" --out "$dir/reused"
expect_status 0 "a report whose tables/ is a link" "$opscope" analyze "$trace" --out "$dir/reused-link"
if [ -e "$dir/reused/tables/stale_from_an_earlier_run.csv" ]; then echo "FAIL: an earlier run's table stayed"; failures=$((failures + 1)); else
  echo "ok: an earlier run's table is gone"; fi
if [ -L "$dir/reused-link/tables" ] || [ -n "$(ls -A "$dir/link-target")" ]; then echo "FAIL: tables/ written through a link"; failures=$((failures + 1)); else
  echo "ok: the link is replaced by a folder, its target untouched"; fi
if ls -a "$dir/reused" | grep -q '^\.tables'; then echo "FAIL: a temporary tables folder stayed"; failures=$((failures + 1)); else
  echo "ok: no temporary folder left"; fi
}

# Inputs by other routes (issue 51): standard input, a companion database the
# run reads beside the rank's .db, and --ceilings are inputs no output
# replaces; a side file that is a FIFO is listed as not read, never waited on.
case_inputs_by_other_routes() {
steps_trace "$dir/in.json" 1000 1
steps_trace "$dir/other.json" 1100 2
sum=$(md5sum < "$dir/in.json")
expect_status 2 "--summary-only - onto the file on standard input" sh -c '"$1" analyze --summary-only - --out "$2" < "$2"' _ "$opscope" "$dir/in.json"
expect_grep "one of this command's inputs" "$dir/err" "the refusal says why"
expect_status 2 "diff - onto the file on standard input" sh -c '"$1" diff - "$3" --out "$2" < "$2"' _ "$opscope" "$dir/in.json" "$dir/other.json"
[ "$(md5sum < "$dir/in.json")" = "$sum" ] || { echo "FAIL: the trace on standard input was replaced"; failures=$((failures + 1)); }
expect_status 0 "--summary-only - elsewhere is written" sh -c '"$1" analyze --summary-only - --out "$2" < "$3"' _ "$opscope" "$dir/in.summary" "$dir/in.json"
cp -a "$samples/level1_db/rank0_ascend_pt" "$dir/rank0_ascend_pt"
db="$dir/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db"
dbsum=$(md5sum < "$db")
expect_status 2 "--summary-only onto the analysis.db the run reads" "$opscope" analyze --summary-only "$dir/rank0_ascend_pt" --out "$db"
expect_grep "analysis.db" "$dir/err" "the refusal names the database"
[ "$(md5sum < "$db")" = "$dbsum" ] || { echo "FAIL: analysis.db was replaced"; failures=$((failures + 1)); }
mkdir -p "$dir/ce"
printf '{"kind":"opscope-ceilings","device":{"id":"cpu","name":"test cpu"},"flops_per_second":{"fp32":1e11},"memory_bytes_per_second":1e10}\n' > "$dir/ce/analysis.json"
cesum=$(md5sum < "$dir/ce/analysis.json")
expect_status 2 "a report folder over its --ceilings file" "$opscope" analyze "$dir/in.json" --ceilings "$dir/ce/analysis.json" --out "$dir/ce"
expect_grep "ceilings\|analysis.json" "$dir/err" "the refusal names the ceilings file"
[ "$(md5sum < "$dir/ce/analysis.json")" = "$cesum" ] || { echo "FAIL: the ceilings file was replaced"; failures=$((failures + 1)); }
expect_status 2 "--summary-only onto its --ceilings file" "$opscope" analyze --summary-only "$dir/in.json" --ceilings "$dir/ce/analysis.json" --out "$dir/ce/analysis.json"
[ "$(md5sum < "$dir/ce/analysis.json")" = "$cesum" ] || { echo "FAIL: the ceilings file was replaced by a summary"; failures=$((failures + 1)); }
# --list-rules (issue 51, fault 12): its JSON rows name their section, as
# every output's rows do, and what it would ignore is refused.
expect_status 0 "--list-rules --format json" "$opscope" analyze --list-rules --format json
expect_grep '"section":"rules","id":"dominant_operator"' "$dir/out" "each rule's row names its section"
for extra in "--table nosuch" "--out $dir/rules.txt" "$dir/in.json" "--summary-only"; do
  # shellcheck disable=SC2086
  expect_status 2 "--list-rules $extra" "$opscope" analyze --list-rules $extra
  expect_grep "not used with it" "$dir/err" "the refusal of $extra with --list-rules says why"
done
# Summaries of a folder of traces into that same folder (issue 51, fault 10).
mkdir -p "$dir/two"
cp "$dir/in.json" "$dir/two/rank0.json"; cp "$dir/other.json" "$dir/two/rank1.json"
expect_status 2 "--summary-only DIR --out DIR" "$opscope" analyze --summary-only "$dir/two" --out "$dir/two"
[ -z "$(ls "$dir/two" | grep summary)" ] || { echo "FAIL: summaries were written among the traces"; failures=$((failures + 1)); }
expect_status 0 "--summary-only DIR --out another folder" "$opscope" analyze --summary-only "$dir/two" --out "$dir/two-summaries"
# profiler_info_0.json as a FIFO nobody writes: the analysis ends, and says so.
rm "$dir/rank0_ascend_pt/profiler_info_0.json"
mkfifo "$dir/rank0_ascend_pt/profiler_info_0.json"
expect_status 0 "a rank whose profiler_info is a FIFO" timeout 60 "$opscope" analyze "$dir/rank0_ascend_pt" --format json --out "$dir/fifo-report"
expect_grep "not a regular file (a FIFO)" "$dir/out" "the FIFO is listed as not read, with why"
}

# A zipped (or tarred) output folder reads as the folder: the same analysis,
# its paths shown inside the archive, nothing left in the temporary folder.
case_analyze_archive() {
"$python" - "$samples/level1_text_2rank" "$dir" <<'PY'
import os, sys, tarfile, zipfile
src, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(os.path.join(out, "job.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    for root, _, files in os.walk(src):
        for f in sorted(files):
            p = os.path.join(root, f)
            z.write(p, os.path.join("job", os.path.relpath(p, src)))
with tarfile.open(os.path.join(out, "job.tar.gz"), "w:gz") as t:
    t.add(src, arcname="job")
with zipfile.ZipFile(os.path.join(out, "slip.zip"), "w") as z:
    z.writestr("job/rank0.json", "[]")
    z.writestr("../slip.json", "[]")
PY
# A scratch folder of this case's own: counted before and after, it holds no
# other test's unpacked archives (tests run side by side).
old_tmpdir=${TMPDIR-}
scratch="$dir/archive_tmp"
mkdir -p "$scratch"
export TMPDIR="$scratch"
before=$(ls -d "$scratch"/opscope-archive-* 2>/dev/null | wc -l)
expect_status 0 "analyze the folder" "$opscope" analyze "$samples/level1_text_2rank" --format json --out "$dir/r-folder"
sed "s#$samples/level1_text_2rank#JOB#g" "$dir/out" > "$dir/folder.json"
for archive in job.zip job.tar.gz; do
  expect_status 0 "analyze $archive" sh -c 'cd "$1" && "$2" analyze "$3" --format json' _ "$dir" "$opscope" "$dir/$archive"
  sed "s#$dir/$archive/job#JOB#g" "$dir/out" > "$dir/archive.json"
  if cmp -s "$dir/folder.json" "$dir/archive.json"; then echo "ok: $archive analyses as its folder, paths inside it"; else
    echo "FAIL: $archive differs from its folder:"; diff "$dir/folder.json" "$dir/archive.json" | head -5; failures=$((failures + 1)); fi
done
expect_grep "job.tar.gz/job/" "$dir/out" "an archive's files are named inside it"
# Every table, the ranks table too (issue 51, fault 9), names the archive's
# files inside it, never the deleted scratch folder: a job of two ranks.
mkdir -p "$dir/ranks_job/job"
cp "$data/kineto/sampled_rank-0.json.gz" "$data/kineto/sampled_rank-1.json.gz" "$dir/ranks_job/job/"
tar -czf "$dir/ranks.tar.gz" -C "$dir/ranks_job" job
expect_status 0 "analyze a .tar.gz of two ranks" "$opscope" analyze "$dir/ranks.tar.gz" --format json --out "$dir/r-ranks"
expect_grep '"section":"ranks"' "$dir/out" "the two ranks are compared"
if grep -q "opscope-archive-" "$dir/out"; then
  echo "FAIL: a table names the archive's scratch folder:"; grep -o '"section":"[a-z_]*"[^}]*opscope-archive-[^"]*' "$dir/out" | head -3
  failures=$((failures + 1))
else echo "ok: no table names the scratch folder"; fi
# Nor any finding (issue 53, item 5): a rank whose online-compilation finding
# quotes its api_statistic.csv by path, zipped.
(cd "$samples/level1_text" && "$python" -c 'import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for root, _, files in os.walk("rank0_ascend_pt"):
        for f in sorted(files): z.write(os.path.join(root, f))' "$dir/rank0.zip")
expect_status 0 "analyze a zipped rank" "$opscope" analyze "$dir/rank0.zip" --format json --out "$dir/r-rank0"
expect_grep 'rank0.zip/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/api_statistic.csv' "$dir/out" "a finding quotes the file inside the zip"
if grep -q "opscope-archive-" "$dir/out" "$dir/r-rank0/analysis.html"; then
  echo "FAIL: a finding or table names the archive's scratch folder"; failures=$((failures + 1))
else echo "ok: no finding names the scratch folder"; fi
# A zip inside a tar is not unpacked in turn, but it is listed as not read,
# with what to do (issue 51, fault 9).
mkdir -p "$dir/nested/job"
cp "$data/kineto/mi250_rocm_train.json.gz" "$dir/nested/job/"
"$python" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], "w"); z.write(sys.argv[2], "r1.json.gz"); z.close()' \
  "$dir/nested/job/inner.zip" "$data/kineto/mi250_rocm_train.json.gz"
tar -czf "$dir/nested.tar.gz" -C "$dir/nested" job
expect_status 0 "a tar holding a trace and a zip" "$opscope" analyze "$dir/nested.tar.gz" --out "$dir/r-nested"
expect_grep "nested.tar.gz/job/inner.zip *an archive inside the input" "$dir/out" "the zip inside is listed as not read, inside its archive"
# An archive its name does not call one, or on standard input, is said to be
# one; a TMPDIR that is not there is named (issue 51, fault 9).
cp "$dir/ranks.tar.gz" "$dir/ranks_renamed.json.gz"
expect_status 5 "a .tar.gz under another name" "$opscope" analyze "$dir/ranks_renamed.json.gz" --out "$dir/r-renamed"
expect_grep "is a tar archive: give it a name ending in .tar" "$dir/err" "the renamed archive is said to be one"
expect_status 5 "a .tar.gz on standard input" sh -c '"$1" analyze - --out "$2" < "$3"' _ "$opscope" "$dir/r-stdin" "$dir/ranks.tar.gz"
expect_grep "'standard input' is a tar archive" "$dir/err" "the archive on standard input is said to be one"
expect_status 4 "an archive with TMPDIR pointing nowhere" env TMPDIR="$dir/nowhere" "$opscope" analyze "$dir/ranks.tar.gz" --out "$dir/r-tmp"
expect_grep "TMPDIR is '$dir/nowhere'" "$dir/err" "the missing TMPDIR is named"
if [ -f "$dir/job.opscope-analysis/analysis.json" ]; then echo "ok: the archive's report is named after it"; else
  echo "FAIL: no job.opscope-analysis"; ls "$dir"; failures=$((failures + 1)); fi
expect_status 3 "analyze a zip whose entry leaves its folder" "$opscope" analyze "$dir/slip.zip"
expect_grep "slip.json" "$dir/err" "the escaping entry is named"
if [ -e "$dir/../slip.json" ] || [ -e "$scratch/slip.json" ]; then echo "FAIL: the entry was written"; failures=$((failures + 1)); else
  echo "ok: nothing was written outside"; fi
after=$(ls -d "$scratch"/opscope-archive-* 2>/dev/null | wc -l)
if [ "$after" -le "$before" ]; then echo "ok: no unpacked folder is left behind"; else
  echo "FAIL: unpacked folders left in $scratch"; failures=$((failures + 1)); fi
if [ -n "$old_tmpdir" ]; then export TMPDIR="$old_tmpdir"; else unset TMPDIR; fi
# A zip of two traces through a pipe, stored or deflated, is refused: only its
# first entry could be read (issue 39: a stored one was read as its first).
for method in ZIP_STORED ZIP_DEFLATED; do
  "$python" - "$dir/two_$method.zip" "$method" <<'PY'
import sys, zipfile
event = '{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":5}'
with zipfile.ZipFile(sys.argv[1], "w", getattr(zipfile, sys.argv[2])) as z:
    z.writestr("a.json", '{"traceEvents":[' + event + ']}')
    z.writestr("b.json", '{"traceEvents":[' + event + ']}')
PY
  "$opscope" analyze - --out "$dir/piped_$method" < "$dir/two_$method.zip" > "$dir/out" 2> "$dir/err"; status=$?
  if [ "$status" -eq 5 ] && grep -q "zip archive of several files" "$dir/err"; then
    echo "ok: a piped $method zip of two traces is refused"
  else
    echo "FAIL: a piped $method zip of two traces: exit $status"; cat "$dir/err"; failures=$((failures + 1))
  fi
done
}

# Bash completion: generated from the option table, so checked against --help,
# which the same table prints: every command, every long option of each, and
# the choices help shows in {a,b,c}.
case_completion() {
expect_status 0 "completion bash" "$opscope" completion bash
cp "$dir/out" "$dir/completion.bash"
built="$(dirname "$opscope")/completions/opscope"
if cmp -s "$dir/completion.bash" "$built"; then echo "ok: the build's completion file is the program's"; else
  echo "FAIL: $built differs from 'opscope completion bash'"; failures=$((failures + 1)); fi
expect_status 2 "completion of an unknown shell" "$opscope" completion tcsh
complete_words() {  # the completions of a command line whose last word is being typed
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
           _opscope; printf "%s\n" "${COMPREPLY[@]}"' _ "$dir/completion.bash" opscope "$@"
}
"$opscope" --help | awk '/^Subcommands:/ { on = 1; next } on && NF { print $1 }' > "$dir/commands"
complete_words "" | sort > "$dir/got"
if [ -s "$dir/commands" ] && diff <(sort "$dir/commands") "$dir/got" >/dev/null; then
  echo "ok: 'opscope <TAB>' offers the $(wc -l < "$dir/commands") commands of --help"
else
  echo "FAIL: 'opscope <TAB>':"; diff <(sort "$dir/commands") "$dir/got"; failures=$((failures + 1)); fi
while read -r command; do
  # The options' own lines ("  -o,--out TEXT ..."), not the descriptions that name options.
  "$opscope" "$command" --help | grep -E '^  +-' | awk '{ print $1 }' | tr ',' '\n' |
    grep -- '^--' | sort -u > "$dir/options"
  complete_words "$command" -- | sort -u > "$dir/got"
  if [ -s "$dir/options" ] && diff "$dir/options" <(grep -- '^--' "$dir/got") >/dev/null; then
    echo "ok: 'opscope $command --<TAB>' offers its $(wc -l < "$dir/options") options"
  else
    echo "FAIL: 'opscope $command --<TAB>':"; diff "$dir/options" <(grep -- '^--' "$dir/got")
    failures=$((failures + 1))
  fi
done < "$dir/commands"
"$opscope" analyze --help | grep -oE -- '--format TEXT:\{[a-z,]+\}' | sed 's/.*{//; s/}//; s/,/\n/g' | sort > "$dir/choices"
for line in "analyze --format" "analyze --top 5 --format ="; do
  # shellcheck disable=SC2086
  complete_words $line "" | sort > "$dir/got"
  if [ -s "$dir/choices" ] && diff "$dir/choices" "$dir/got" >/dev/null; then
    echo "ok: 'opscope $line <TAB>' offers the choices of --help"
  else
    echo "FAIL: 'opscope $line <TAB>':"; cat "$dir/got"; failures=$((failures + 1)); fi
done
complete_words analyze --format=j > "$dir/got"
expect_grep "^--format=json$" "$dir/got" "--format=j as one word completes to --format=json"
complete_words bench "" | sort > "$dir/got"
"$opscope" bench --help | awk '/^Subcommands:/ { on = 1; next } on && NF { print $1 }' | sort > "$dir/commands"
if diff "$dir/commands" "$dir/got" >/dev/null; then echo "ok: nested commands complete"; else
  echo "FAIL: 'opscope bench <TAB>':"; cat "$dir/got"; failures=$((failures + 1)); fi
complete_words trace -o t.json -- bas > "$dir/got"
expect_grep "^bash$" "$dir/got" "after -- a program's name completes"
mkdir -p "$dir/comp files" && : > "$dir/comp files/a trace.json"
complete_words analyze "$dir/comp files/a" > "$dir/got"
expect_grep "^$dir/comp files/a trace.json$" "$dir/got" "a file name with spaces completes whole"
# Issue 51, fault 11: a name with a newline completes as one name; the script
# runs under set -u; completion itself is offered, with its shell.
: > "$dir/comp files/two
lines.json"
n=$(bash -c 'source "$1"; COMP_WORDS=(opscope analyze "$2/comp files/two"); COMP_CWORD=2
             _opscope; echo "${#COMPREPLY[@]}"' _ "$dir/completion.bash" "$dir")
[ "$n" = 1 ] || { echo "FAIL: a file name with a newline completes as $n names"; failures=$((failures + 1)); }
bash -uc 'source "$1"; COMP_WORDS=(opscope analyze --format ""); COMP_CWORD=3; _opscope
          COMP_WORDS=(opscope analyze --out ""); COMP_CWORD=3; _opscope
          COMP_WORDS=(opscope completion ""); COMP_CWORD=2; _opscope; printf "%s\n" "${COMPREPLY[@]}"' \
  _ "$dir/completion.bash" > "$dir/got" 2> "$dir/err"
[ ! -s "$dir/err" ] || { echo "FAIL: the script under set -u:"; cat "$dir/err"; failures=$((failures + 1)); }
expect_grep "^bash$" "$dir/got" "'opscope completion <TAB>' offers bash"
}

cases=("$@")
if [ "${#cases[@]}" -eq 0 ]; then
  mapfile -t cases < <(declare -F | awk '$3 ~ /^case_/ { print substr($3, 6) }')
fi
for name in "${cases[@]}"; do
  if declare -F "case_$name" >/dev/null; then
    echo "== $name"; "case_$name"
  else
    echo "FAIL: no case '$name' in $0"; failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ]
