#!/usr/bin/env bash
# Installs the build into a scratch prefix and builds a consumer against it, with
# find_package(opscope) and with pkg-config, as users would.
set -euo pipefail
build_dir=$1 source_dir=$2 python=$3 checker=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir/tests/package/consumer" -B "$work/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" >/dev/null
trace=$("$work/build/consumer" "$work/traces")
"$python" "$checker" "$trace" --expect-name work=3
trace=$(LD_LIBRARY_PATH="$work/prefix/lib" "$work/build/consumer_c" "$work/traces-c")
"$python" "$checker" "$trace" --expect-name from_c=1
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
c++ -O2 "$source_dir/tests/package/consumer/main.cc" -o "$work/pc_consumer" \
  $(pkg-config --cflags --libs --static opscope)
trace=$("$work/pc_consumer" "$work/traces-pc")
"$python" "$checker" "$trace" --expect-name work=3
echo "package: find_package and pkg-config consumers work"
