#!/usr/bin/env bash
# Runs the C API program and validates its trace with Python's json module.
# Steps 2 and 3 are recorded (wait 1, warm-up 1, active 2): two of each scope.
set -euo pipefail
c_api_test=$1 python=$2 checker=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trace=$("$c_api_test" "$dir")
"$python" "$checker" "$trace" --expect-name c_step_work=2 --expect-name c_inner=2 \
  --expect-name 'ProfilerStep#2=1' --expect-name 'ProfilerStep#3=1' --expect-dropped 0
grep -q '"name":"c main"' "$trace"
grep -q '"ph":"C"' "$trace"
