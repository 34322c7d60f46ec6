# tpbsim — top-level convenience targets.
#   make demo   install missing packages, build, run the default workload, then hbm_pipeline (HBM -> DMA -> ... -> HBM)
#   make test   install missing packages, build, run the whole test suite
#   make bench  build and run the benchmarks (numbers for docs/PERFORMANCE.md)
#   make asan   build (clang, -O1, ASan + UBSan + libFuzzer coverage) and run the
#               whole test suite under the sanitizers (build-asan/)
#   make fuzz   build build-asan/ and run every fuzz target FUZZ_SECONDS (60) each,
#               FUZZ_JOBS (2) at a time, from its seed corpus (docs/FUZZING.md)
#   make tsan   build the pure C++ tests with ThreadSanitizer (clang, build-tsan/) and
#               run those of the host-thread pool, the kernels split over host threads
#               and the numerics they call (TSAN_TESTS; docs/PERFORMANCE.md)

BUILD      ?= build
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
DEMO_OUT   ?= out/demo

.PHONY: all deps build demo test bench asan asan-build fuzz tsan clean format

all: build

deps:
	@scripts/install-deps.sh

# Ninja when it is there (scripts/install-deps.sh installs it): it keeps both
# cores busy across targets; a build directory keeps the generator it has.
GEN = $$(test -f $(1)/CMakeCache.txt || ! command -v ninja >/dev/null || echo -G Ninja)

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(call GEN,$(BUILD)) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The demo needs the tool alone, not every test and benchmark.
demo: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target tpbsim
	@scripts/demo.sh $(BUILD)/tpbsim $(DEMO_OUT)
	@echo; echo "== the same kernel from HBM through the DMA queues and back (traces/workloads/hbm_pipeline)"
	@DEMO_WORKLOAD=hbm_pipeline scripts/demo.sh $(BUILD)/tpbsim $(DEMO_OUT)/hbm_pipeline

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300

bench: build
	@for b in $(BUILD)/bench/bench_*; do [ -x "$$b" ] && "$$b" --benchmark_min_time=0.5; done

# One sanitizer build serves the whole test suite and the fuzz targets: clang,
# ASan + UBSan at -O1, coverage for libFuzzer (TPBSIM_FUZZ); no benchmarks,
# and no Verilated co-simulation (its four RTL builds would take CI past its
# budget; `make asan CMAKE_ARGS=-DTPBSIM_COSIM=ON` runs it under the
# sanitizers too, docs/COSIM.md). No Python module either: an instrumented
# extension cannot load into Debian's uninstrumented python3 (the C++ under
# it runs under the sanitizers through the C++ tests).
ASAN_BUILD   ?= build-asan
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 2
# LeakSanitizer is on for every test; see docs/FUZZING.md for where SystemC
# keeps it from saying anything useful.
SAN_ENV = ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1 \
          UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

asan-build: deps
	@grep -qs 'CMAKE_CXX_COMPILER:.*clang' $(ASAN_BUILD)/CMakeCache.txt || rm -rf $(ASAN_BUILD)
	cmake -S . -B $(ASAN_BUILD) $(call GEN,$(ASAN_BUILD)) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
	  -DTPBSIM_SANITIZE=ON -DTPBSIM_FUZZ=ON -DTPBSIM_BENCH=OFF -DTPBSIM_COSIM=OFF -DTPBSIM_PYTHON=OFF $(CMAKE_ARGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)

asan: asan-build
	cd $(ASAN_BUILD) && $(SAN_ENV) ctest --output-on-failure -j $(JOBS) --timeout 900

fuzz: asan-build
	$(SAN_ENV) sc_tests/fuzz/run_fuzzers.sh $(ASAN_BUILD) $(FUZZ_SECONDS) $(FUZZ_JOBS)

# ThreadSanitizer over the pure C++ tests (sc_tests/unit: no SystemC) that
# run code on host threads. The SystemC tests are left out: SystemC 2.3's
# QuickThreads coroutines switch stacks without telling TSan (they announce
# fibres to ASan only), and the functional work that runs on host threads is
# the same code the unit tests drive through a recording KernelContext
# (docs/PERFORMANCE.md). The parsers' and encoders' randomised tests, which
# run on one thread, stay with make test / make asan.
TSAN_BUILD ?= build-tsan
TSAN_ENV = TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
TSAN_TESTS ?= TraceAsyncWriter*:HostThreads*:KernelThreads*:MxMatmul*:DveQuantizeMxKernel*:EngineState*:BundleCosts*:DequantStream*:DequantRatio*:MxQuantize*

tsan: deps
	@grep -qs 'CMAKE_CXX_COMPILER:.*clang' $(TSAN_BUILD)/CMakeCache.txt || rm -rf $(TSAN_BUILD)
	cmake -S . -B $(TSAN_BUILD) $(call GEN,$(TSAN_BUILD)) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
	  -DTPBSIM_TSAN=ON -DTPBSIM_BENCH=OFF -DTPBSIM_COSIM=OFF -DTPBSIM_PYTHON=OFF $(CMAKE_ARGS)
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target tsan_tests
	cd $(TSAN_BUILD) && $(TSAN_ENV) ./sc_tests/tsan_tests --gtest_filter='$(TSAN_TESTS)'

format:
	@git ls-files '*.cpp' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD) build-asan build-tsan out
