# convlab's two commands: `make run` (the main job) and `make test` (every test). Each installs what is
# missing (scripts/deps.sh), configures, builds, then runs.
BUILD ?= build
JOBS ?= $(shell nproc)
OUT ?= out/run
CMAKE_ARGS ?=

FUZZ_SECONDS ?= 600

.PHONY: all run test build build-convlab configure clean deps-run deps-test deps-power deps-fuzz bench-oracle power \
	test-avx2 test-cpu-only test-sanitize fuzz fuzz-ci

all: build

deps-run:
	@bash scripts/deps.sh run

deps-test:
	@bash scripts/deps.sh test

deps-power:
	@bash scripts/deps.sh power

deps-fuzz:
	@bash scripts/deps.sh fuzz

configure:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# `make run` needs the program only: scripts/make_run.sh builds it (CMake's output in a log, a line every
# 15 s), runs the job and says where the reports are.
build-convlab: configure
	@cmake --build $(BUILD) -j $(JOBS) --target convlab

RUN_ARGS ?=
run: deps-run
	@CMAKE_ARGS="$(CMAKE_ARGS)" bash scripts/make_run.sh $(BUILD) $(OUT) $(JOBS) $(RUN_ARGS)

# The oracle's speed against im2col + OpenBLAS DGEMM on the same cores (reference/oracle.c).
bench-oracle: deps-run
	@$(MAKE) --no-print-directory build
	./$(BUILD)/bench/bench_oracle

# The explainer measured like a detector (bench/power.h): detection rate per bug class and size, false
# alarms over correct outputs that convlab did not compute. POWER_ARGS: e.g. --shard 2/8 or --check.
POWER_ARGS ?=
power: deps-power configure
	@cmake --build $(BUILD) -j $(JOBS) --target bench_power
	./$(BUILD)/bench/bench_power $(POWER_ARGS)

# Before the work, how long it takes: ctest's own record of the last run's times when there is one.
# The suites run JOBS at a time (each also runs its own tests two at a time).
test: deps-test
	@if [ -f $(BUILD)/Testing/Temporary/CTestCostData.txt ]; then \
	  awk '/^---/{exit} NF==3{s+=$$3} END{printf "make test: the suites took %.0f s here last time (added up; they run $(JOBS) at a time)\n", s}' \
	    $(BUILD)/Testing/Temporary/CTestCostData.txt; \
	else echo "make test: builds everything, then every suite: about 4 min on an idle 2-core machine"; fi
	@$(MAKE) --no-print-directory build
	cd $(BUILD) && ctest --verbose -j $(JOBS) --timeout 1500

# What CI runs after `make test` (.ci/run); each in its own build folder, none of them part of make test.
# The build without CUDA, as on a machine without nvcc: every suite must build and pass, except
# real_corpus_cpu: its arithmetic is the CPU's libraries' and the explainer's, the same in both builds,
# and make test has just run it (3 minutes).
test-cpu-only: deps-test
	@cmake -S . -B $(BUILD)-cpu -DCMAKE_BUILD_TYPE=Release -DC1D_WITH_CUDA=OFF >/dev/null
	@cmake --build $(BUILD)-cpu -j $(JOBS)
	cd $(BUILD)-cpu && ctest --output-on-failure -j $(JOBS) --timeout 1500 -E '^real_corpus_cpu$$'

# The suites again, on make test's build, as this machine would run them on an AVX2-only CPU of its kind
# (scripts/emulate_avx2.sh: oneDNN, OpenBLAS, ATen and the oracle on their AVX2 kernels, PyTorch's bf16
# convolutions on its own path): CI machines are not all one CPU, and a test that holds only on AVX-512
# blocks every landing.
test-avx2: deps-test
	@$(MAKE) --no-print-directory build
	cd $(BUILD) && $(CURDIR)/scripts/emulate_avx2.sh ctest --output-on-failure -j $(JOBS) --timeout 1500

# The CPU suites under AddressSanitizer and UndefinedBehaviorSanitizer (leaks included). malloc returns
# NULL for an impossible size, as the code under test expects (it reports the failure).
test-sanitize: deps-test
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Release -DC1D_WITH_CUDA=OFF -DC1D_SANITIZE=ON >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 \
	  UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) --timeout 1500

# The fuzz targets (fuzz/): FUZZ_SECONDS each (default 600); fuzz-ci runs each for a minute.
fuzz: deps-fuzz
	@bash scripts/fuzz.sh $(FUZZ_SECONDS)

fuzz-ci: deps-fuzz
	@bash scripts/fuzz.sh 60

clean:
	rm -rf $(BUILD) $(BUILD)-cpu $(BUILD)-asan build-fuzz
