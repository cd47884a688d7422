# softcon — plain GNU make. `make` builds lib/libsoftcon.a and bin/*; `make test` runs the
# test suite; `make asan` runs it again under AddressSanitizer + UBSan; `make bench` runs the
# benchmarks; `make fuzz FUZZ_SECONDS=N` runs every libFuzzer harness of tests/fuzz for N s;
# `make check-layout` checks lib/'s include graph against lib/LAYOUT; `make lint` runs cppcheck
# against its reviewed baseline; `make compile_commands.json` (bear) for clangd and clang-tidy;
# `make format` / `make check-format` apply / check .clang-format on lib/ and cmd/.
# Dependencies come from scripts/install-deps.sh and are found with pkg-config.
#
# Build configurations: everything a configuration builds stays inside its BUILD folder (all
# git-ignored). Only the default one (build/release) also installs bin/* and lib/libsoftcon.a;
# any other BUILD (make BUILD=build/asan SAN=...) puts its tools in $(BUILD)/bin. Objects are
# rebuilt when the compiler flags of their folder change ($(BUILD)/.flags).

CC      ?= gcc
ifeq ($(origin CC),default)
CC      := gcc
endif
MPIEXEC := mpiexec.mpich
DEFAULT_BUILD := build/release
BUILD   ?= $(DEFAULT_BUILD)
ifeq ($(BUILD),$(DEFAULT_BUILD))
BIN     ?= bin
PUBLIC_LIB := lib/libsoftcon.a
else
BIN     ?= $(BUILD)/bin
PUBLIC_LIB :=
endif
OPT     ?= -O2 -march=x86-64-v3 -g
SAN     ?=
MOCAP   ?= $(abspath ../shared/mocap)
MESHES  ?= $(abspath ../shared/meshes)
# sources left out of a configuration (none by default)
LIB_EXCLUDE ?=

ifneq ($(SAN),)
ifeq ($(BUILD),$(DEFAULT_BUILD))
$(error SAN=... needs its own BUILD folder (e.g. make BUILD=build/asan SAN=...), so sanitized objects never mix with $(DEFAULT_BUILD))
endif
endif

PKGS := hdf5-serial yaml-0.1 ode mpich lapacke openblas
MISSING_PKGS := $(foreach p,$(PKGS),$(if $(shell pkg-config --exists $(p) && echo y),,$(p)))
# three.js for render --html, embedded at build time (lib/render/viewer_assets.h)
THREE_DIR ?= /usr/share/javascript/three
MISSING_HDRS := $(if $(wildcard /usr/include/suitesparse/cholmod.h),,cholmod.h(libsuitesparse-dev)) \
                $(if $(wildcard $(THREE_DIR)/three.min.js),,three.min.js(libjs-three))
MISSING_PROGS := $(foreach p,tetgen h5dump mpicc.mpich mpiexec.mpich,$(if $(shell command -v $(p)),,$(p)))
MISSING := $(strip $(MISSING_PKGS) $(MISSING_HDRS) $(MISSING_PROGS))

ifneq ($(MISSING),)
ifeq ($(filter clean help,$(MAKECMDGOALS)),)
$(error missing dependencies: $(MISSING). Install them with: sudo scripts/install-deps.sh)
endif
endif

DEP_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null) -I/usr/include/suitesparse
DEP_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lcholmod -lm -lpthread

VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
# clang knows no -Wformat-truncation and rejects unknown -Wno-* options unless told not to
CC_WARN := $(if $(findstring clang,$(CC)),-Wno-unknown-warning-option)
CFLAGS  := -std=c11 -D_GNU_SOURCE $(OPT) $(SAN) -Wall -Wextra -Wshadow -Werror -Wno-unused-parameter $(CC_WARN) -Wno-format-truncation \
           -Ilib -DSC_VERSION='"$(VERSION)"' -DSC_GIT_REV='"$(GIT_REV)"' $(DEP_CFLAGS) -MMD -MP
LDFLAGS := $(SAN)

LIB_SRC  := $(filter-out $(LIB_EXCLUDE),$(sort $(wildcard lib/*/*.c)))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/viewer_assets.o
LIB      := $(BUILD)/libsoftcon.a
TOOLS    := $(notdir $(basename $(wildcard cmd/*.c)))
TOOL_BIN := $(TOOLS:%=$(BIN)/%)
CMD_COMMON := $(wildcard cmd/common/*.c)
CMD_COMMON_OBJ := $(CMD_COMMON:%.c=$(BUILD)/%.o)
TEST_SRC := $(sort $(wildcard tests/*.c))
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
TEST_BIN := $(BUILD)/softcon_test
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all test asan bench fuzz fuzz-build fuzz-seeds clean help FORCE check-layout lint format check-format compile_commands.json
all: $(TOOL_BIN) $(PUBLIC_LIB)

lib/libsoftcon.a: $(LIB)
	cp $< $@

# the flags a folder was built with; objects depend on it, so changing OPT/SAN/CC rebuilds them
# (not the git revision: a commit alone does not rebuild everything)
FLAGS_STAMP := $(BUILD)/.flags
STAMPED := $(CC) $(filter-out -DSC_GIT_REV=%,$(CFLAGS)) $(LDFLAGS)
$(FLAGS_STAMP): FORCE
	@mkdir -p $(BUILD)
	@echo '$(STAMPED)' | cmp -s - $@ || echo '$(STAMPED)' > $@

$(BUILD)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "CC $<"
	@$(CC) $(CFLAGS) -c $< -o $@

# the files render --html embeds (lib/render/viewer_assets.h), as C arrays
VIEWER_ASSETS := sc_asset_viewer_html=lib/render/viewer.html sc_asset_three_js=$(THREE_DIR)/three.min.js \
                 sc_asset_orbit_js=$(THREE_DIR)/examples/js/controls/OrbitControls.js
$(BUILD)/gen/viewer_assets.c: $(foreach a,$(VIEWER_ASSETS),$(lastword $(subst =, ,$(a)))) scripts/embed-assets.py
	@mkdir -p $(dir $@)
	python3 scripts/embed-assets.py $@ $(VIEWER_ASSETS)
$(BUILD)/gen/viewer_assets.o: $(BUILD)/gen/viewer_assets.c $(FLAGS_STAMP)
	@echo "CC $<"
	@$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN)/%: $(BUILD)/cmd/%.o $(CMD_COMMON_OBJ) $(LIB)
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -o $@ $^ $(DEP_LIBS)

$(TEST_BIN): $(TEST_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(DEP_LIBS)

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(DEP_LIBS)

# The suite runs the real tools in $(BIN) and reads the CMU clips from ../shared/mocap and the
# real bodies from ../shared/meshes. TEST_SHARDS=N runs it as N shares side by side.
TEST_SHARDS ?= 1
test: $(TOOL_BIN) $(TEST_BIN)
	SOFTCON_BIN=$(abspath $(BIN)) SOFTCON_MOCAP_PATH=$(MOCAP) SOFTCON_MESH_PATH=$(MESHES) \
	SOFTCON_ROOT=$(CURDIR) $(if $(filter-out 1,$(TEST_SHARDS)),scripts/test-shards.sh $(TEST_SHARDS)) $(TEST_BIN) $(T)

# HWLOC_COMPONENTS=-pci: hwloc's PCI plugin (libhwloc-plugins, pulled in by other packages) loads
# libpciaccess, which leaks at MPI_Finalize from a library already unloaded (no suppression can name it)
# Most tests run one process on one core: two shares side by side take about 60 % of the time.
asan:
	HWLOC_COMPONENTS=-pci ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(MAKE) test TEST_SHARDS=2 BUILD=build/asan BIN=build/asan/bin OPT="-O1 -g -fno-omit-frame-pointer" \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"

bench: $(TOOL_BIN) $(BENCH_BIN)
	SOFTCON_BIN=$(abspath $(BIN)) SOFTCON_MOCAP_PATH=$(MOCAP) \
	SOFTCON_ROOT=$(CURDIR) scripts/bench.sh $(BENCH_BIN)

# ---- fuzzing (tests/fuzz/README.md): libFuzzer harnesses built by clang in build/fuzz ----
FUZZ_CC      ?= clang
FUZZ_BUILD   := build/fuzz
FUZZ_SAN     := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_SRC     := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_NAMES   := $(FUZZ_SRC:tests/fuzz/%.c=%)
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   ?=
FUZZ         ?= $(FUZZ_NAMES)

# inside the fuzz configuration: one binary per harness, linked with libFuzzer's main
$(BUILD)/fuzzers/%: $(BUILD)/tests/fuzz/%.o $(BUILD)/tests/fuzz/common.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(DEP_LIBS)
fuzz-build: $(FUZZ_NAMES:%=$(BUILD)/fuzzers/%)

# the HDF5 seed files of tests/fuzz/corpus, written by softcon's own writers (committed)
$(BUILD)/fuzz_seeds: $(BUILD)/tests/fuzz/seeds.o $(BUILD)/tests/fuzz/common.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(DEP_LIBS)
fuzz-seeds: $(BUILD)/fuzz_seeds
	$(BUILD)/fuzz_seeds tests/fuzz/corpus

fuzz:
	@command -v $(FUZZ_CC) >/dev/null && test -n "$$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a 2>/dev/null)" || \
	  { echo "make fuzz needs clang and libFuzzer (clang, libclang-rt-14-dev): sudo scripts/install-deps.sh"; exit 1; }
	$(MAKE) fuzz-build CC=$(FUZZ_CC) BUILD=$(FUZZ_BUILD) OPT="-O1 -g -fno-omit-frame-pointer" \
	  SAN="$(FUZZ_SAN)"
	scripts/fuzz.sh $(FUZZ_BUILD)/fuzzers $(FUZZ_SECONDS) "$(FUZZ_FLAGS)" $(FUZZ)

# ---- habits: layout, static analysis, formatting, compilation database ----
check-layout:
	python3 scripts/check-layout.py

# cppcheck on lib/ and cmd/; every finding not in scripts/cppcheck-baseline.txt (reviewed: each
# line says why it is not a defect) fails
lint:
	scripts/lint.sh

# lib/ and cmd/ are formatted with .clang-format (clang-format 14); check-format runs in CI
FORMATTED := $(wildcard lib/*/*.c lib/*/*.h cmd/*.c cmd/common/*.c cmd/common/*.h)
format:
	clang-format -i $(FORMATTED)
check-format:
	@clang-format --dry-run -Werror $(FORMATTED) && echo "check-format: $(words $(FORMATTED)) files formatted"

# for clangd / clang-tidy: every compile of a full build, recorded by bear in a build folder of its own
compile_commands.json:
	rm -rf build/compdb
	bear --output $@ -- $(MAKE) --no-print-directory BUILD=build/compdb all $(TEST_BIN:$(BUILD)/%=build/compdb/%)

clean:
	rm -rf build bin lib/libsoftcon.a compile_commands.json

help:
	@echo "targets: all test asan bench fuzz clean check-layout check-format format lint compile_commands.json   (T=filter selects tests by name; FUZZ_SECONDS=N per harness)"

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(TOOLS:%=$(BUILD)/cmd/%.d) $(CMD_COMMON_OBJ:.o=.d) $(BENCH_SRC:%.c=$(BUILD)/%.d) \
         $(wildcard $(BUILD)/tests/fuzz/*.d)

# The FEM element kernels: each file is compiled for its instruction set (also in builds whose
# OPT has no -march, like make asan) and only called after a run-time CPU check
# (lib/sim/fem.c), so the build still runs on CPUs without AVX-512; -O3 outside sanitizer
# builds.
FEM_KERNELS := $(BUILD)/lib/sim/fem_avx2.o $(BUILD)/lib/sim/fem_avx512.o $(BUILD)/lib/sim/fem_avx2_f32.o $(BUILD)/lib/sim/fem_avx512_f32.o
$(BUILD)/lib/sim/fem_avx2.o $(BUILD)/lib/sim/fem_avx2_f32.o: CFLAGS += -march=x86-64-v3
$(BUILD)/lib/sim/fem_avx512.o $(BUILD)/lib/sim/fem_avx512_f32.o: CFLAGS += -march=x86-64-v4
ifeq ($(SAN),)
$(FEM_KERNELS): CFLAGS += -O3 -ffp-contract=fast
# the skinning and pose-damping loops of the step and the tree solver's 6 x 6 blocks vectorize at -O3
$(BUILD)/lib/skin/lbs.o $(BUILD)/lib/sim/fem.o $(BUILD)/lib/sim/tree_solve.o: CFLAGS += -O3
endif

# keep object files between runs (they are intermediates of the pattern rules)
.PRECIOUS: $(BUILD)/%.o
