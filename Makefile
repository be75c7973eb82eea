# convlab's two commands: `make run` (the main job) and `make test` (every test). Each installs what is
# missing (scripts/deps.sh), configures, builds, then runs.
BUILD ?= build
JOBS ?= $(shell nproc)
OUT ?= out/run
CMAKE_ARGS ?=

.PHONY: all run test build configure clean deps-run deps-test deps-power bench-oracle power

all: build

deps-run:
	@bash scripts/deps.sh run

deps-test:
	@bash scripts/deps.sh test

deps-power:
	@bash scripts/deps.sh power

configure:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

run: deps-run
	@$(MAKE) --no-print-directory build
	./$(BUILD)/harness/convlab run --out $(OUT) --html

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

test: deps-test
	@$(MAKE) --no-print-directory build
	cd $(BUILD) && ctest --verbose --timeout 1500

clean:
	rm -rf $(BUILD)
