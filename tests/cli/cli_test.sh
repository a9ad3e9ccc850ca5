#!/usr/bin/env bash
# The command line: version, help, output formats, exit codes, the demo trace.
set -uo pipefail
opscope=$1 python=$2 tools=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0

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

expect_status 0 "--version" "$opscope" --version
expect_grep "opscope 0\." "$dir/out" "version printed"
expect_status 0 "--help" "$opscope" --help
expect_grep "info" "$dir/out" "help lists info"
expect_grep "demo" "$dir/out" "help lists demo"
expect_status 2 "no subcommand" "$opscope"
expect_status 2 "unknown subcommand" "$opscope" frobnicate
expect_status 2 "unknown option" "$opscope" info --bogus
expect_status 2 "bad --format" "$opscope" info --format xml
expect_status 5 "absent device" "$opscope" info --device cuda:0
expect_grep "unavailable device 'cuda:0'" "$dir/err" "device error names the device"

expect_status 0 "info table" "$opscope" info
expect_grep "logical_cpus" "$dir/out" "info table has cpus"
expect_status 0 "info json" "$opscope" info --format json
cp "$dir/out" "$dir/info-stdout.json"
expect_status 0 "info json shape" "$python" "$tools/check_json_output.py" --require property < "$dir/info-stdout.json"
expect_status 0 "info csv" "$opscope" info --format csv
expect_grep "^Property,Value" "$dir/out" "csv header"
expect_status 0 "info --out" "$opscope" info --format json --out "$dir/info.json"
expect_status 0 "info --out shape" "$python" "$tools/check_json_output.py" < "$dir/info.json"
expect_status 4 "unwritable --out" "$opscope" info --out /nonexistent-dir/info.json
expect_grep "/nonexistent-dir/info.json" "$dir/err" "io error names the path"

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
expect_status 3 "bad schedule" "$opscope" demo --out "$dir/bad" --schedule active=0
expect_grep "active" "$dir/err" "schedule error explains"
expect_status 3 "unreadable schedule" "$opscope" demo --out "$dir/bad" --schedule 'wait=x'
expect_status 3 "bad threads" "$opscope" demo --threads 0
if [ -e "$dir/bad" ] && [ -n "$(ls -A "$dir/bad")" ]; then
  echo "FAIL: failed demo left files"; failures=$((failures + 1)); fi

[ "$failures" -eq 0 ]
