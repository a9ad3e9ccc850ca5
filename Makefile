# Quick start: `make run` and `make test`. See README.md.
SHELL := /bin/bash
JOBS ?= $(shell nproc)

.PHONY: deps deps-run build run test check check-release test-asan test-tsan test-minimal test-fuzz bench format clean python

# What building and running need (`make run`); the tests' packages (Chromium,
# PyTorch, clang, Open MPI, Jupyter, Prometheus) come with `make test`/`make check`.
deps-run:
	@scripts/install-deps --run

deps:
	@scripts/install-deps

build: deps-run
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

# The main job on the default device: the whole suite into one report,
# opscope-report/index.html (see `opscope run --help`).
REPORT := opscope-report
run: build
	build/release/opscope run --out $(REPORT)

# The fast tiers on the release build: unit, golden and cli (tests/CMakeLists.txt
# gives each test its tier; `ctest --preset release -L browser` runs one tier).
TIERS := -L '^(unit|golden|cli)$$' -LE '^(browser|slow)$$'
test: deps
	@$(MAKE) --no-print-directory build
	ctest --preset release -j $(JOBS) $(TIERS)

# The whole matrix, as CI runs it (.ci/run): every tier on the release build, then
# the sanitized, minimal and fuzzing builds.
check: check-release test-asan test-tsan test-minimal test-fuzz

check-release: deps
	@$(MAKE) --no-print-directory build
	ctest --preset release -j $(JOBS)

# The same suite under AddressSanitizer and UndefinedBehaviorSanitizer. The
# preset turns off ASan's tracking of dynamic TLS: GCC 12's LeakSanitizer reads
# a bogus dynamic-TLS range at exit in processes that dlopen the CUDA plugin
# and crashes (deterministically, depending on memory layout), failing tests
# that passed. Built at -O1 -g1 (CMakePresets.json): line tables serve ASan's
# reports, and a file compiles in 55% of the time of -O2 -g (passes/roofline.cc:
# 7.9 s against 14.2 s).
test-asan: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j $(JOBS)
	ctest --preset asan -j $(JOBS)

# The profiler library under ThreadSanitizer: its tests of threads that exit
# with scopes open, fork while recording and Stop from any thread, in loops.
# Some kernels' address randomisation leaves ThreadSanitizer no room ("unexpected
# memory mapping"): the tests then run with it off (setarch -R), and where
# ThreadSanitizer cannot start at all they are skipped, saying so.
TSAN_PROBE := build/tsan/tests/opscope_collect_tests --gtest_list_tests
test-tsan: deps
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan -j $(JOBS)
	@if $(TSAN_PROBE) >/dev/null 2>&1; then ctest --preset tsan -j $(JOBS); \
	elif setarch -R $(TSAN_PROBE) >/dev/null 2>&1; then \
	  echo "ThreadSanitizer runs here only with address randomisation off: setarch -R"; \
	  setarch -R ctest --preset tsan -j $(JOBS); \
	else echo "SKIPPED: ThreadSanitizer cannot start on this machine:"; $(TSAN_PROBE) 2>&1 | tail -3; fi

# The analyzer, reports and monitoring built without any backend (no oneDNN,
# OpenBLAS, OpenMP or CUDA): the layers that must not depend on them.
test-minimal: deps
	cmake --preset minimal >/dev/null
	cmake --build --preset minimal -j $(JOBS)
	ctest --preset minimal -j $(JOBS)

# Each importer's libFuzzer target for a bounded time (OPSCOPE_FUZZ_SECONDS).
test-fuzz: deps
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz -j $(JOBS)
	ctest --preset fuzz -j $(JOBS)

# The Python package into .venv (made with Debian's numpy, pandas and pybind11
# visible), reusing build/release: `.venv/bin/python -c "import opscope"`.
python: build
	/usr/bin/python3 -m venv --system-site-packages .venv
	OPSCOPE_BUILD_DIR=build/release .venv/bin/python -m pip install --no-build-isolation --no-index .
	@echo "opscope installed in .venv: .venv/bin/python -c 'import opscope'"

# The benchmarks that decide the issues: each prints both sides and the ratio.
bench: build
	@scripts/install-deps --bench
	build/release/bench/scope_bench
	build/release/bench/ceiling_vs_peak
	build/release/bench/copy_vs_memcpy
	build/release/bench/matmul_vs_numpy
	bench/analyze_vs_python.sh
	bench/python_vs_hta.sh
	PYTHONPATH=build/release/python /usr/bin/python3 bench/python_scope_cost.py
	bench/ascend_vs_python.sh
	bench/ascend_cluster_bench.sh 1024
	bench/torch_snapshot_vs_python.sh
	bench/resnet50_vs_torch.sh
	bench/exporter_soak.py build/release/opscope 60

format:
	clang-format -i $$(git ls-files '*.h' '*.cc' '*.c')

clean:
	rm -rf build opscope-report
