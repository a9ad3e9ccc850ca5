#!/usr/bin/env bash
# `pip install --no-build-isolation .` into a fresh venv made with
# --system-site-packages, as the README shows, reusing this build's configured
# folder (OPSCOPE_BUILD_DIR) so the module is not compiled twice; then
# `import opscope` from outside the clone analyses a real trace.
#   install_test.sh PYTHON SOURCE_DIR BUILD_DIR SAMPLE
set -euo pipefail
python=$1 source_dir=$2 build_dir=$3 sample=$4
unset PYTHONPATH  # the installed package, not the build's
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m venv --system-site-packages "$work/venv"
OPSCOPE_BUILD_DIR=$build_dir "$work/venv/bin/python" -m pip install --quiet --no-build-isolation \
  --no-index "$source_dir" >"$work/pip.log" 2>&1 || { cat "$work/pip.log"; exit 1; }
cd "$work"
"$work/venv/bin/python" - "$sample" "$work/venv" <<'PY'
import sys
import opscope
sample, venv = sys.argv[1:3]
assert opscope.__file__.startswith(venv), opscope.__file__
a = opscope.analyze(sample)
assert len(a.ops) > 0 and "self_ns" in a.ops.columns
print(f"install: opscope {opscope.__version__} from {opscope.__file__}: {len(a.ops)} operators")
PY
