# Quick start: `make run` and `make test`. See README.md.
SHELL := /bin/bash
JOBS ?= $(shell nproc)

.PHONY: deps build run test test-release test-asan bench format clean

deps:
	@scripts/install-deps

build: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

# The main job on the default device; the report goes to opscope-report/.
run: build
	build/release/opscope info
	build/release/opscope demo --out opscope-report

test: test-release test-asan

test-release: build
	ctest --preset release -j $(JOBS)

# The same suite under AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j $(JOBS)
	ctest --preset asan -j $(JOBS)

bench: build
	build/release/bench/scope_bench

format:
	clang-format -i $$(git ls-files '*.h' '*.cc' '*.c')

clean:
	rm -rf build opscope-report
