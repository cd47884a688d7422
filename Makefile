# softcon — plain GNU make. `make` builds lib/libsoftcon.a and bin/*; `make test` runs the
# test suite; `make asan` runs it again under AddressSanitizer + UBSan; `make bench` runs the
# benchmarks. Dependencies come from scripts/install-deps.sh and are found with pkg-config.

CC      := gcc
MPIEXEC := mpiexec.mpich
BUILD   ?= build/release
BIN     ?= bin
OPT     ?= -O2 -march=x86-64-v3 -g
SAN     ?=
MOCAP   ?= $(abspath ../shared/mocap)

PKGS := hdf5-serial yaml-0.1 ode mpich lapacke openblas
MISSING_PKGS := $(foreach p,$(PKGS),$(if $(shell pkg-config --exists $(p) && echo y),,$(p)))
MISSING_HDRS := $(if $(wildcard /usr/include/suitesparse/cholmod.h),,cholmod.h(libsuitesparse-dev))
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
CFLAGS  := -std=c11 -D_GNU_SOURCE $(OPT) $(SAN) -Wall -Wextra -Werror -Wno-unused-parameter -Wno-format-truncation \
           -Ilib -DSC_VERSION='"$(VERSION)"' -DSC_GIT_REV='"$(GIT_REV)"' $(DEP_CFLAGS) -MMD -MP
LDFLAGS := $(SAN)

LIB_SRC  := $(sort $(wildcard lib/*/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
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

.PHONY: all test asan bench clean help
all: $(TOOL_BIN) lib/libsoftcon.a

lib/libsoftcon.a: $(LIB)
	cp $< $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
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

# The suite runs the real tools in $(BIN) and reads the CMU clips from ../shared/mocap.
test: $(TOOL_BIN) $(TEST_BIN)
	SOFTCON_BIN=$(abspath $(BIN)) SOFTCON_MOCAP_PATH=$(MOCAP) \
	SOFTCON_ROOT=$(CURDIR) $(TEST_BIN) $(T)

asan:
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(MAKE) test BUILD=build/asan BIN=build/asan/bin OPT="-O1 -g -fno-omit-frame-pointer" \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"

bench: $(TOOL_BIN) $(BENCH_BIN)
	SOFTCON_BIN=$(abspath $(BIN)) SOFTCON_MOCAP_PATH=$(MOCAP) \
	SOFTCON_ROOT=$(CURDIR) scripts/bench.sh $(BENCH_BIN)

clean:
	rm -rf build bin lib/libsoftcon.a

help:
	@echo "targets: all test asan bench clean   (T=filter selects tests by name)"

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(TOOLS:%=$(BUILD)/cmd/%.d) $(CMD_COMMON_OBJ:.o=.d) $(BENCH_SRC:%.c=$(BUILD)/%.d)

# The FEM element kernels: each file is compiled for its instruction set (also in builds whose
# OPT has no -march, like make asan) and only called after a run-time CPU check
# (lib/sim/fem.c), so the build still runs on CPUs without AVX-512; -O3 outside sanitizer
# builds.
FEM_KERNELS := $(BUILD)/lib/sim/fem_avx2.o $(BUILD)/lib/sim/fem_avx512.o
$(BUILD)/lib/sim/fem_avx2.o: CFLAGS += -march=x86-64-v3
$(BUILD)/lib/sim/fem_avx512.o: CFLAGS += -march=x86-64-v4
ifeq ($(SAN),)
$(FEM_KERNELS): CFLAGS += -O3 -ffp-contract=fast
# the skinning and pose-damping loops of the step vectorize at -O3
$(BUILD)/lib/skin/lbs.o $(BUILD)/lib/sim/fem.o: CFLAGS += -O3
endif

# keep object files between runs (they are intermediates of the pattern rules)
.PRECIOUS: $(BUILD)/%.o
