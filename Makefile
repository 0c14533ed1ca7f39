# qkv: plain Makefile. `make` builds the library and the command, `make test` runs the
# Check suites, `make asan` runs them under AddressSanitizer + UBSan. Missing Debian
# packages are installed by scripts/install-deps.sh (see README).

PREFIX  ?= /usr/local
DESTDIR ?=
ifeq ($(origin CC),default)
CC := gcc
endif
# make MPI=1: data-parallel training over OpenMPI (docs/distributed.md), built into build-mpi/
# The matrix products (docs/performance.md, "Small products"):
#   make              on x86-64, small float products through libxsmm's JIT kernels and the rest
#                     through OpenBLAS (libxsmm-dev is installed when missing and root); when
#                     libxsmm cannot be had, or on another architecture, OpenBLAS alone (on x86-64,
#                     with one note); into build/ (build-mpi/)
#   make GEMM=libxsmm the same, but an error when libxsmm cannot be had; into build/ (build-mpi/)
#   make GEMM=openblas OpenBLAS alone; into build-openblas/ (build-mpi-openblas/)
ifneq ($(origin GEMM),undefined)
ifneq ($(filter-out 1,$(words $(GEMM)))$(filter-out openblas libxsmm,$(GEMM)),)
$(error GEMM=$(GEMM): use GEMM=libxsmm (the default on x86-64) or GEMM=openblas)
endif
endif
# GEMM unset: GEMM_AUTO is what the default tries (GEMM is decided once the dependencies are in)
ifeq ($(origin GEMM),undefined)
GEMM_AUTO := $(if $(filter x86_64-%,$(shell $(CC) -dumpmachine 2>/dev/null)),libxsmm,openblas)
endif
GEMM_ASKED := $(GEMM)
BUILD   ?= build$(if $(filter 1,$(MPI)),-mpi)$(if $(filter openblas,$(GEMM_ASKED)),-openblas)
Q ?= @
VERSION := 0.1.0

# --- dependencies: checked (and installed when root) before anything is built -------------
# `make fuzz` also needs clang and its libFuzzer runtime
ifneq ($(filter fuzz build-fuzz/%,$(MAKECMDGOALS)),)
EXTRA_PKGS += clang libclang-rt-14-dev
endif
# `make bench-gemm` also needs BLIS (Debian's serial build) and libxsmm
ifneq ($(filter bench-gemm %/bench/gemm_shapes,$(MAKECMDGOALS)),)
EXTRA_PKGS += libblis-serial-dev libxsmm-dev
endif
ifeq ($(MPI),1)
EXTRA_PKGS += libopenmpi-dev openmpi-bin
endif
# the tests use these when present (installed when missing and root; never an error): the
# fortunes corpus (task.corpus fortunes) and xz, whose size the xz baseline is checked against
ifneq ($(filter test asan,$(MAKECMDGOALS)),)
OPTIONAL_PKGS += fortunes xz-utils
endif
ifeq ($(GEMM),libxsmm)
EXTRA_PKGS += libxsmm-dev
endif
# the default on x86-64: libxsmm when it is installed or can be (when not, no error: a note)
ifeq ($(GEMM_AUTO),libxsmm)
TRY_PKGS += $(if $(shell pkg-config --exists libxsmm 2>/dev/null && echo yes),,libxsmm-dev)
endif
NODEPS_GOALS := clean help
ifneq ($(filter-out $(NODEPS_GOALS),$(or $(MAKECMDGOALS),all)),)
DEPS_OK := $(shell QKV_EXTRA_PKGS="$(EXTRA_PKGS)" QKV_OPTIONAL_PKGS="$(OPTIONAL_PKGS)" QKV_TRY_PKGS="$(TRY_PKGS)" \
                   scripts/install-deps.sh >&2 && echo ok)
ifneq ($(DEPS_OK),ok)
$(error qkv: build dependencies are missing (see the message above))
endif
ifdef GEMM_AUTO
ifeq ($(GEMM_AUTO),libxsmm)
GEMM := $(if $(shell pkg-config --exists libxsmm && echo yes),libxsmm,openblas)
ifeq ($(GEMM),openblas)
$(shell echo "qkv: note: libxsmm is not installed and could not be (libxsmm-dev: not root, or no such package), so $(BUILD)/ uses OpenBLAS alone for every product" >&2)
endif
else
GEMM := openblas
endif
endif
PKG_CFLAGS := $(shell pkg-config --cflags openblas libcjson liblzma)
PKG_LIBS   := $(shell pkg-config --libs openblas libcjson liblzma) -lm
CHECK_CFLAGS := $(shell pkg-config --cflags check)
CHECK_LIBS   := $(shell pkg-config --libs check)
ifeq ($(MPI),1)
PKG_CFLAGS += $(shell mpicc --showme:compile) -DQKV_MPI
PKG_LIBS   += $(shell mpicc --showme:link)
endif
# Debian's libxsmm is a static library (built -fPIC): linked into libqkv.so without exporting
# its names, and named in qkv.pc for static links
ifeq ($(GEMM),libxsmm)
PKG_CFLAGS += $(shell pkg-config --cflags libxsmm) -DQKV_GEMM_LIBXSMM=1
PKG_LIBS   := $(shell pkg-config --libs libxsmm) $(PKG_LIBS)
SO_LIBS_FLAGS := -Wl,--exclude-libs,libxsmm.a
PC_REQUIRES_PRIVATE := openblas libcjson liblzma libxsmm
endif
endif
PC_REQUIRES_PRIVATE ?= openblas libcjson liblzma

# -ffp-contract=off: no fused multiply-add contraction, so results do not depend on
# whether the compiler found an FMA (determinism across builds of the same code).
OPT      ?= -O2
# the typed kernels: full loop vectorisation; no FP-exception traps, so selects if-convert
# (no result changes: qkv never reads the floating-point exception flags)
KOPT     ?= -O3 -fno-trapping-math
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla
# -fvisibility=hidden: libqkv.so exports only what the installed headers declare QKV_API (src/qkv_api.h)
CFLAGS_Q := -std=c11 $(OPT) -g -fPIC -fvisibility=hidden -ffp-contract=off -D_POSIX_C_SOURCE=200809L \
            $(WARN) -Isrc $(PKG_CFLAGS) -DQKV_VERSION='"$(VERSION)"' $(SAN_FLAGS) $(CFLAGS)
LDFLAGS_Q := $(SAN_FLAGS) $(LDFLAGS)

# The sources, in the three floors of src/ (README, "Layout"), the one list every build takes
# them from (the library and the command, the tests, asan, the examples, install, fuzz):
#   the library (libqkv.a, libqkv.so, <qkv/qkv.h>): tensor, io, autograd, nn, optim; its typed
#     kernels (src/tensor/k_*.c) are compiled once for float, once for double;
#   the application (build/libqkv-app.a, qkv_app.h; not installed): a run (config, tasks,
#     train), the study (ablate), the documents (report);
#   the command (src/cli/) and the tests, linked with both.
LIB_DIRS    := tensor io autograd nn optim
APP_DIRS    := app tasks train config ablate report
LIB_SRCS    := $(wildcard $(LIB_DIRS:%=src/%/*.c))
APP_SRCS    := $(wildcard $(APP_DIRS:%=src/%/*.c))
KERNEL_SRCS := $(filter src/tensor/k_%.c,$(LIB_SRCS))
# $(call lib_objs,DIR): the library's objects under DIR/obj/, the kernels' under DIR/obj/f32/
# and DIR/obj/f64/; $(call app_objs,DIR): the application's
lib_objs = $(patsubst %.c,$(1)/obj/%.o,$(filter-out $(KERNEL_SRCS),$(LIB_SRCS))) \
           $(KERNEL_SRCS:%.c=$(1)/obj/f32/%.o) $(KERNEL_SRCS:%.c=$(1)/obj/f64/%.o)
app_objs = $(APP_SRCS:%.c=$(1)/obj/%.o)
CLI_SRCS    := $(wildcard src/cli/*.c)
TEST_SRCS   := $(wildcard tests/*.c)

LIB_OBJS  := $(call lib_objs,$(BUILD))
APP_OBJS  := $(call app_objs,$(BUILD))
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/obj/%.o)
# every object's header dependencies, written by the compiler (-MMD -MP) beside it: a header edit
# rebuilds only what includes it
# (the .d files are included at the end, after `all`, the default goal)
DEPFLAGS  := -MMD -MP
# objects depend on a stamp named after the flags (the dependency flags too: objects compiled
# without them have no .d files), so changing flags rebuilds them
FLAGS_STAMP := $(BUILD)/.flags-$(shell echo '$(CC) $(CFLAGS_Q) $(KOPT) $(DEPFLAGS)' | cksum | cut -d' ' -f1)

.PHONY: all test asan install uninstall clean help check-fastmath bench bench-torch bench-gemm bench-sweep \
        bench-sweep-torch demo valgrind examples fuzz study study-extra study-pilot study-second study-full
all: $(BUILD)/libqkv.a $(BUILD)/libqkv.so $(BUILD)/libqkv-app.a $(BUILD)/qkv

$(FLAGS_STAMP):
	@mkdir -p $(BUILD)
	@rm -f $(BUILD)/.flags-*
	@touch $@

$(BUILD)/obj/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS_Q) $(DEPFLAGS) $(EXTRA_CFLAGS) -c $< -o $@

# the optimizer's update loop is a kernel too: -O3 unswitches its branches so it vectorises,
# and without errno sqrtf is one (correctly rounded, so identical) instruction
$(BUILD)/obj/src/optim/optim.o: EXTRA_CFLAGS = $(KOPT) -fno-math-errno

# typed kernels: the same source compiled for float and for double
$(BUILD)/obj/f32/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC f32  $<"
	$(Q)$(CC) $(CFLAGS_Q) $(DEPFLAGS) $(KOPT) -DQKV_KERNEL_F64=0 -c $< -o $@
$(BUILD)/obj/f64/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC f64  $<"
	$(Q)$(CC) $(CFLAGS_Q) $(DEPFLAGS) $(KOPT) -DQKV_KERNEL_F64=1 -c $< -o $@

$(BUILD)/obj/tests/%.o: tests/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS_Q) $(DEPFLAGS) $(CHECK_CFLAGS) -Wno-missing-prototypes -c $< -o $@

$(BUILD)/libqkv.a: $(LIB_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

# --no-undefined: the library stands alone (nothing in it needs the application's objects)
$(BUILD)/libqkv.so: $(LIB_OBJS)
	@echo "  LD      $@"
	$(Q)$(CC) -shared -Wl,-soname,libqkv.so.0 -Wl,--no-undefined $(LDFLAGS_Q) $(SO_LIBS_FLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/libqkv-app.a: $(APP_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

$(BUILD)/qkv: $(CLI_OBJS) $(BUILD)/libqkv-app.a $(BUILD)/libqkv.a
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_Q) -o $@ $(CLI_OBJS) $(BUILD)/libqkv-app.a $(BUILD)/libqkv.a $(PKG_LIBS)

$(BUILD)/run_tests: $(TEST_OBJS) $(BUILD)/libqkv-app.a $(BUILD)/libqkv.a
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_Q) -o $@ $(TEST_OBJS) $(BUILD)/libqkv-app.a $(BUILD)/libqkv.a $(PKG_LIBS) $(CHECK_LIBS)

# One BLAS thread in tests: results must not depend on the machine's core count.
# ... libqkv.so exports exactly the documented API (no internal names), each layer of src/
# uses only the layers below it, and the answer's tables are what its committed results make
test: all $(BUILD)/run_tests
	cd tests && OPENBLAS_NUM_THREADS=1 QKV_BIN=$(abspath $(BUILD))/qkv ../$(BUILD)/run_tests
	scripts/check-exports.sh $(BUILD)
	scripts/check-layers.sh
	$(BUILD)/qkv summarize --check-doc docs/qkv-answer.md

# Examples: each examples/NAME.c linked into $(BUILD)/examples/NAME, then all run (one BLAS
# thread, like the tests); any failing example fails the target.
EXAMPLES     := xor_mlp attention_recall custom_op
EXAMPLE_BINS := $(EXAMPLES:%=$(BUILD)/examples/%)

# examples include <qkv/qkv.h> (the library alone) as an installed program does ($(BUILD)/include/qkv
# stands for the installed include/qkv; scripts/check-install.sh builds them against a real install)
$(BUILD)/include/qkv:
	@mkdir -p $(BUILD)/include
	@ln -sfn $(abspath src) $@
$(BUILD)/obj/examples/%.o: examples/%.c $(FLAGS_STAMP) | $(BUILD)/include/qkv
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS_Q) $(DEPFLAGS) -I$(BUILD)/include -c $< -o $@

# (linked with the library alone: an example that used the application layer would not link)
$(EXAMPLE_BINS): $(BUILD)/examples/%: $(BUILD)/obj/examples/%.o $(BUILD)/libqkv.a
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_Q) -o $@ $< $(BUILD)/libqkv.a $(PKG_LIBS)

# custom_op runs twice: its gradient must pass the check, and a wrong one (--wrong) must not
examples: $(EXAMPLE_BINS)
	$(Q)for run in xor_mlp attention_recall custom_op "custom_op --wrong"; do \
	    echo "  RUN     $(BUILD)/examples/$$run"; \
	    OPENBLAS_NUM_THREADS=1 $(BUILD)/examples/$$run || exit 1; done

asan:
	$(MAKE) BUILD=build-asan OPT=-O1 KOPT=-O1 \
	    SAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	    CK_TIMEOUT_MULTIPLIER=10 test

# the README's first command: the Q/K/V ablation on recall, at demo size (3.5 minutes on 2 cores)
demo: all
	$(BUILD)/qkv ablate configs/ablate-qkv-recall-demo.json --out runs/demo --jobs 2

# the study of docs/qkv-answer.md, third edition: within 90 minutes on 2 cores; what was cut from
# it to fit; the learning-rate pilot its text ablation's rates come from; the second edition
# (quick, within an hour) and the study as designed (configs/study/, scripts/study.sh)
study: all
	QKV=$(BUILD)/qkv scripts/study.sh third
study-extra: all
	QKV=$(BUILD)/qkv scripts/study.sh third-extra
study-pilot: all
	QKV=$(BUILD)/qkv scripts/study.sh third-pilot
study-second: all
	QKV=$(BUILD)/qkv scripts/study.sh quick && QKV=$(BUILD)/qkv scripts/study.sh extra
study-full: all
	QKV=$(BUILD)/qkv scripts/study.sh full

# every size at 1 and 2 threads (docs/performance.md)
# every float through the float kernels' exp and normal CDF (tests/test_fastmath.c), one
# process per core; make test checks every 61st
check-fastmath: $(BUILD)/run_tests
	$(Q)n=$$(nproc); k=0; pids=; while [ $$k -lt $$n ]; do \
	    (cd tests && QKV_FASTMATH_ALL=$$k/$$n CK_RUN_SUITE=fastmath CK_RUN_CASE=accuracy ../$(BUILD)/run_tests) & pids="$$pids $$!"; \
	    k=$$((k + 1)); done; rc=0; for p in $$pids; do wait $$p || rc=1; done; exit $$rc

bench: all
	$(BUILD)/qkv bench --threads 1
	$(BUILD)/qkv bench --threads 2

# qkv and PyTorch side by side (needs Debian's python3-torch)
bench-torch: all
	@/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "make bench-torch needs PyTorch: apt-get install python3-torch"; exit 1; }
	/usr/bin/python3 bench/compare.py

# Single-threaded sgemm on the products of one recall training step: OpenBLAS, BLIS, libxsmm
# (bench/gemm_shapes.c; docs/performance.md). Not part of the library. BLIS is Debian's serial
# build, linked statically from its own directory (libblis.so may point at another variant);
# OpenBLAS comes first on the link line, since BLIS defines cblas_sgemm and sgemm_ as well.
BLIS_DIR := /usr/lib/$(shell $(CC) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/blis-serial
BLIS_INC := /usr/include/$(shell $(CC) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/blis-serial
BENCH_GEMM_ARGS ?=
$(BUILD)/bench/gemm_shapes: bench/gemm_shapes.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -DHAVE_BLIS -DHAVE_LIBXSMM -isystem $(BLIS_INC) \
	    $(shell pkg-config --cflags openblas libxsmm) $< -o $@ \
	    $(shell pkg-config --libs openblas) $(BLIS_DIR)/libblis.a $(shell pkg-config --libs libxsmm) -lm

bench-gemm: $(BUILD)/bench/gemm_shapes
	$(BUILD)/bench/gemm_shapes $(BENCH_GEMM_ARGS)

# a sweep of tiny runs (recall x 4 variants x 3 seeds, one `qkv train --threads 1` per core at
# a time): runs per minute, tokens/s per core, FLOPs (docs/performance.md)
bench-sweep: all
	$(BUILD)/qkv bench --sweep

# the same sweep in PyTorch (bench/torch_sweep.py), alternating with qkv's, 3 rounds each
bench-sweep-torch: all
	@/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "make bench-sweep-torch needs PyTorch: apt-get install python3-torch"; exit 1; }
	/usr/bin/python3 bench/compare_sweep.py

# Fuzzing (docs/reliability.md): the whole library (the list above) built with clang, ASan and
# UBSan into build-fuzz/libqkv.a (the objects above are gcc's), and each libFuzzer target
# fuzz/fuzz_NAME.c linked against it. Each runs FUZZ_SECONDS (default 60) from its seeds in
# fuzz/corpus/NAME/; the inputs it finds go to build-fuzz/corpus/NAME/. A crash fails the
# target and is kept as build-fuzz/crash-NAME-*; the log of a run is build-fuzz/fuzz_NAME.log.
FUZZ_SECONDS ?= 60
FUZZ_BUILD   := build-fuzz
FUZZ_TARGETS := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_CFLAGS  := -std=c11 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
                -fno-sanitize-recover=all -ffp-contract=off -D_POSIX_C_SOURCE=200809L -Isrc $(PKG_CFLAGS) \
                -DQKV_VERSION='"$(VERSION)"'
FUZZ_OBJS    := $(call lib_objs,$(FUZZ_BUILD)) $(call app_objs,$(FUZZ_BUILD))
FUZZ_STAMP   := $(FUZZ_BUILD)/.flags-$(shell echo 'clang $(FUZZ_CFLAGS) $(DEPFLAGS)' | cksum | cut -d' ' -f1)

$(FUZZ_STAMP):
	@mkdir -p $(FUZZ_BUILD)
	@rm -f $(FUZZ_BUILD)/.flags-*
	@touch $@

$(FUZZ_BUILD)/obj/%.o: %.c $(FUZZ_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CLANG   $<"
	$(Q)clang $(FUZZ_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(FUZZ_BUILD)/obj/f32/%.o: %.c $(FUZZ_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CLANG f32 $<"
	$(Q)clang $(FUZZ_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link -DQKV_KERNEL_F64=0 -c $< -o $@
$(FUZZ_BUILD)/obj/f64/%.o: %.c $(FUZZ_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CLANG f64 $<"
	$(Q)clang $(FUZZ_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link -DQKV_KERNEL_F64=1 -c $< -o $@

$(FUZZ_BUILD)/libqkv.a: $(FUZZ_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c $(FUZZ_BUILD)/libqkv.a $(FUZZ_STAMP)
	@echo "  FUZZER  $@"
	$(Q)clang $(FUZZ_CFLAGS) $(DEPFLAGS) -MF $@.d -MT $@ -fsanitize=fuzzer -o $@ $< $(FUZZ_BUILD)/libqkv.a $(PKG_LIBS)

fuzz: $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)
	$(Q)for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
	    echo "  FUZZ    $$t, $(FUZZ_SECONDS) s"; \
	    $(FUZZ_BUILD)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	        -artifact_prefix=$(FUZZ_BUILD)/crash-$$t- $(FUZZ_BUILD)/corpus/$$t fuzz/corpus/$$t \
	        > $(FUZZ_BUILD)/fuzz_$$t.log 2>&1 || { tail -n 60 $(FUZZ_BUILD)/fuzz_$$t.log; \
	        echo "make fuzz: fuzz_$$t failed; the input is $(FUZZ_BUILD)/crash-$$t-*"; exit 1; }; \
	    grep -E '^(Done|stat::number_of_executed_units|stat::new_units_added)' $(FUZZ_BUILD)/fuzz_$$t.log; \
	    echo "corpus: $$(find $(FUZZ_BUILD)/corpus/$$t fuzz/corpus/$$t -type f | wc -l) files"; \
	done

# the end-to-end commands under valgrind memcheck (docs/reliability.md)
valgrind: all
	@QKV_EXTRA_PKGS="valgrind" scripts/install-deps.sh
	scripts/valgrind-e2e.sh $(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(BUILD)/libqkv.a $(DESTDIR)$(PREFIX)/lib/libqkv.a
	install -m 755 $(BUILD)/libqkv.so $(DESTDIR)$(PREFIX)/lib/libqkv.so.$(VERSION)
	ln -sf libqkv.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libqkv.so.0
	ln -sf libqkv.so.0 $(DESTDIR)$(PREFIX)/lib/libqkv.so
	install -m 755 $(BUILD)/qkv $(DESTDIR)$(PREFIX)/bin/qkv
	for h in $$(scripts/public-headers.sh lib); do \
	    d=$(DESTDIR)$(PREFIX)/include/qkv/$$(dirname $${h#src/}); install -d $$d; \
	    install -m 644 $$h $$d/; done
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@REQUIRES_PRIVATE@|$(PC_REQUIRES_PRIVATE)|' qkv.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/qkv.pc

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/include/qkv $(DESTDIR)$(PREFIX)/lib/libqkv.* \
	    $(DESTDIR)$(PREFIX)/lib/pkgconfig/qkv.pc $(DESTDIR)$(PREFIX)/bin/qkv

# (build-xsmm and build-mpi-xsmm: the GEMM=libxsmm builds of older versions)
clean:
	rm -rf build build-asan build-fuzz build-mpi build-openblas build-mpi-openblas build-xsmm build-mpi-xsmm

help:
	@echo "make            build build/libqkv.a, build/libqkv.so (the library), build/libqkv-app.a, build/qkv"
	@echo "                (on x86-64 with libxsmm for the small float products: GEMM below)"
	@echo "make test       run the test suites"
	@echo "make asan       run the test suites under ASan + UBSan"
	@echo "make demo       the Q/K/V ablation on recall, 4 variants x 8 seeds, ~3.5 minutes (report in runs/demo/)"
	@echo "make study      the study of docs/qkv-answer.md, third edition (within 90 min on 2 cores)"
	@echo "make study-extra what was cut from make study to fit (recall d_model 128, induction, noisy recall: more)"
	@echo "make study-pilot the learning-rate pilot of the study's text ablation (~10 min)"
	@echo "make study-second the second edition (quick + extra, ~70 min)"
	@echo "make study-full the study as designed (docs/qkv-answer.md gives its compute)"
	@echo "make check-fastmath  every float through the kernels' exp and normal CDF (against libm)"
	@echo "make bench      time the training step of the standard sizes"
	@echo "make bench-gemm time one recall step's sgemm calls on OpenBLAS, BLIS and libxsmm"
	@echo "make bench-sweep  time a sweep of tiny training runs (runs per minute)"
	@echo "make fuzz       run the libFuzzer targets, FUZZ_SECONDS each (default 60)"
	@echo "make install    install (PREFIX=$(PREFIX), DESTDIR=)"
	@echo "GEMM=openblas   (with any target) OpenBLAS alone for every product, into build-openblas/"
	@echo "GEMM=libxsmm    (with any target) small float products through libxsmm, the rest through OpenBLAS:"
	@echo "                the default on x86-64 (an error instead of OpenBLAS alone when libxsmm cannot be had)"

# the header dependencies the compiler wrote (DEPFLAGS)
-include $(shell find $(BUILD) $(if $(filter fuzz build-fuzz/%,$(MAKECMDGOALS)),build-fuzz) -name '*.d' 2>/dev/null)
