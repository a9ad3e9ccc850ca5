#!/usr/bin/env bash
# Installs the build into a scratch prefix and builds a consumer against it, with
# find_package(opscope) and with pkg-config, as users would.
set -euo pipefail
build_dir=$1 source_dir=$2 python=$3 checker=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
# Bash completion where bash-completion looks for it, loading and completing.
completion="$work/prefix/share/bash-completion/completions/opscope"
[ -f "$completion" ] || { echo "FAIL: no $completion installed"; exit 1; }
got=$(bash -c 'source "$1"; COMP_WORDS=(opscope anal); COMP_CWORD=1; _opscope; echo "${COMPREPLY[*]}"' _ "$completion")
[ "$got" = analyze ] || { echo "FAIL: the installed completion gives '$got' for 'opscope anal'"; exit 1; }
cmake -S "$source_dir/tests/package/consumer" -B "$work/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" >/dev/null
trace=$("$work/build/consumer" "$work/traces")
"$python" "$checker" "$trace" --expect-name work=3
trace=$(LD_LIBRARY_PATH="$work/prefix/lib" "$work/build/consumer_c" "$work/traces-c")
"$python" "$checker" "$trace" --expect-name from_c=1
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
# As a user types it: without --static (the library is an archive, so its own
# dependencies are in Libs), then with it.
for static in "" --static; do
  # shellcheck disable=SC2046,SC2086
  c++ -O2 "$source_dir/tests/package/consumer/main.cc" -o "$work/pc_consumer" \
    $(pkg-config --cflags --libs $static opscope)
  trace=$("$work/pc_consumer" "$work/traces-pc$static")
  "$python" "$checker" "$trace" --expect-name work=3
done
# The C API through its own module, opscope-c.
# shellcheck disable=SC2046
cc -O2 "$source_dir/tests/package/consumer/main_c.c" -o "$work/pc_consumer_c" \
  $(pkg-config --cflags --libs opscope-c)
trace=$(LD_LIBRARY_PATH="$work/prefix/lib" "$work/pc_consumer_c" "$work/traces-pc-c")
"$python" "$checker" "$trace" --expect-name from_c=1
echo "package: find_package and pkg-config (opscope, opscope-c) consumers work; bash completion installed"
