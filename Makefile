# tpbsim — top-level convenience targets.
#   make demo   install missing packages, build, run the default workload
#   make test   install missing packages, build, run the whole test suite
#   make bench  build and run the benchmarks (numbers for docs/PERFORMANCE.md)
#   make asan   build and test under AddressSanitizer + UBSan (build-asan/)

BUILD      ?= build
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
DEMO_OUT   ?= out/demo

.PHONY: all deps build demo test bench asan clean format

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)/tpbsim $(DEMO_OUT)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300

bench: build
	@for b in $(BUILD)/bench/bench_*; do [ -x "$$b" ] && "$$b" --benchmark_min_time=0.5; done

asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTPBSIM_SANITIZE=ON -DTPBSIM_BENCH=OFF $(CMAKE_ARGS)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -j $(JOBS) --timeout 900

format:
	@git ls-files '*.cpp' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD) build-asan out
