# qkv: plain Makefile. `make` builds the library and the command, `make test` runs the Check
# suites, `make help` lists the other targets (mk/*.mk: the study, the benchmarks, fuzzing,
# further checks, install).
#
# Reading this file installs nothing. A goal that builds is made in two passes: the first runs
# `deps` (mk/deps.mk: the Debian packages the goals need, installed when missing and root;
# otherwise the apt-get line to run) and then a second make with DEPS_DONE=1, which builds the
# goals. The second make reads this file after the install, so what it reads from the installed
# packages (pkg-config's flags, libxsmm or OpenBLAS alone, the flags stamp named after them) is
# right on a bare machine too. `make -n GOAL` prints the install and the build and runs neither;
# `make DEPS_DONE=1 GOAL` builds with what is installed, without the deps step.

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
# GEMM unset: GEMM_AUTO is what the default tries (GEMM is decided in the second pass)
ifeq ($(origin GEMM),undefined)
GEMM_AUTO := $(if $(filter x86_64-%,$(shell $(CC) -dumpmachine 2>/dev/null)),libxsmm,openblas)
endif
GEMM_ASKED := $(GEMM)
BUILD   ?= build$(if $(filter 1,$(MPI)),-mpi)$(if $(filter openblas,$(GEMM_ASKED)),-openblas)
Q ?= @
VERSION := 0.1.0
.DEFAULT_GOAL := all

include mk/deps.mk

ifneq ($(DEPS_DONE),1)
# --- the first pass: deps, then the goals in a second make (one, for all of them) ----------
BUILD_GOALS := $(filter-out deps clean uninstall help,$(or $(MAKECMDGOALS),all))
ifneq ($(BUILD_GOALS),)
.PHONY: $(BUILD_GOALS) second-pass
$(BUILD_GOALS): second-pass
	@:
second-pass: deps
	+@$(MAKE) --no-print-directory DEPS_DONE=1 $(BUILD_GOALS)
endif
else
# --- the second pass: the build --------------------------------------------------------------
# the packages' flags, read now that they are installed (quietly: `make -n` on a bare machine
# reads them too); the default GEMM is libxsmm when it is installed, else OpenBLAS alone
pkgs = $(shell pkg-config $(1) $(2) 2>/dev/null)
ifdef GEMM_AUTO
GEMM := $(if $(filter libxsmm,$(GEMM_AUTO)),$(shell pkg-config --exists libxsmm 2>/dev/null && echo libxsmm),openblas)
GEMM := $(or $(GEMM),openblas)
# (the note is not for a dry run: there deps has not run)
ifeq ($(GEMM_AUTO)-$(GEMM)-$(findstring n,$(firstword -$(MAKEFLAGS))),libxsmm-openblas-)
$(shell echo "qkv: note: libxsmm is not installed and could not be (libxsmm-dev: not root, or no such package), so $(BUILD)/ uses OpenBLAS alone for every product" >&2)
endif
endif
PC_REQUIRES_PRIVATE := openblas libcjson liblzma$(if $(filter libxsmm,$(GEMM)), libxsmm)
PKG_CFLAGS   := $(call pkgs,--cflags,openblas libcjson liblzma)
PKG_LIBS     := $(call pkgs,--libs,openblas libcjson liblzma) -lm
# the application's one C++ file (src/tasks/tokenizer_spm.cc) and Debian's sentencepiece behind it;
# nettle's SHA-256 names a run's vocabulary in its model files (src/train/vocabulary.h)
SPM_CFLAGS   := $(call pkgs,--cflags,sentencepiece)
APP_LIBS     := $(call pkgs,--libs,sentencepiece nettle) -lstdc++
CHECK_CFLAGS := $(call pkgs,--cflags,check)
CHECK_LIBS   := $(call pkgs,--libs,check)
# the tests read what qkv writes with an XML parser (expat): its SVG and HTML are well-formed
XML_LIBS     := $(call pkgs,--libs,expat)
ifeq ($(MPI),1)
PKG_CFLAGS += $(shell mpicc --showme:compile 2>/dev/null) -DQKV_MPI
PKG_LIBS   += $(shell mpicc --showme:link 2>/dev/null)
endif
# Debian's libxsmm is a static library (built -fPIC): linked into libqkv.so without exporting
# its names, and named in qkv.pc for static links
ifeq ($(GEMM),libxsmm)
PKG_CFLAGS += $(call pkgs,--cflags,libxsmm) -DQKV_GEMM_LIBXSMM=1
PKG_LIBS   := $(call pkgs,--libs,libxsmm) $(PKG_LIBS)
SO_LIBS_FLAGS := -Wl,--exclude-libs,libxsmm.a
endif

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
CXXFLAGS_Q := -std=c++17 $(OPT) -g -fPIC -fvisibility=hidden -ffp-contract=off -D_POSIX_C_SOURCE=200809L \
              -Wall -Wextra -Werror -Wshadow -Isrc $(SPM_CFLAGS) $(SAN_FLAGS) $(CXXFLAGS)

# The sources, in the three floors of src/ (README, "Layout"), the one list every build takes
# them from (the library and the command, the tests, asan, the examples, install, fuzz):
#   the library (libqkv.a, libqkv.so, <qkv/qkv.h>): tensor, io, autograd, nn, optim; its typed
#     kernels (src/tensor/k_*.c) are compiled once for float, once for double;
#   the application (build/libqkv-app.a, qkv_app.h; not installed): a run (config, tasks,
#     train), the study (ablate), the documents (report);
#   the command (src/cli/) and the tests, linked with both.
LIB_SRCS    := $(wildcard $(addsuffix /*.c,$(addprefix src/,tensor io autograd nn optim)))
APP_SRCS    := $(wildcard $(addsuffix /*.c,$(addprefix src/,app tasks train config ablate report)))
APP_CXX_SRCS := $(wildcard $(addsuffix /*.cc,$(addprefix src/,app tasks train config ablate report)))
KERNEL_SRCS := $(filter src/tensor/k_%.c,$(LIB_SRCS))
# $(call lib_objs,DIR): the library's objects under DIR/obj/, the kernels' under DIR/obj/f32/
# and DIR/obj/f64/; $(call app_objs,DIR): the application's
lib_objs = $(patsubst %.c,$(1)/obj/%.o,$(filter-out $(KERNEL_SRCS),$(LIB_SRCS))) \
           $(KERNEL_SRCS:%.c=$(1)/obj/f32/%.o) $(KERNEL_SRCS:%.c=$(1)/obj/f64/%.o)
app_objs = $(APP_SRCS:%.c=$(1)/obj/%.o) $(APP_CXX_SRCS:%.cc=$(1)/obj/%.o)
CLI_OBJS  := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard src/cli/*.c))
TEST_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/*.c))

# One compile rule for every build. $(call build_rules,DIR,CC,CFLAGS,KFLAGS,CXX,CXXFLAGS) (the
# names of the variables holding the compilers and flags) compiles DIR/obj/X.o from X.c with them
# and EXTRA_CFLAGS (set per target below), the typed kernels DIR/obj/f32/X.o and DIR/obj/f64/X.o
# with KFLAGS instead, and DIR/obj/X.o from X.cc with the C++ compiler and its flags; each object depends on DIR's flags stamp, named after the flags, so
# changing them rebuilds it. -MMD -MP: the compiler writes each object's header dependencies
# beside it (included at the end): a header edit rebuilds only what includes it.
# The kernels' declarations are written from their definitions (scripts/kernel-index.sh --decls)
# into DIR/gen/tensor/kernels_decl.h, found through -IDIR/gen, before anything is compiled; the
# file is rewritten only when a declaration changed (the stamp records that it was checked), so
# an edit inside a kernel's body rebuilds that kernel alone.
DEPFLAGS := -MMD -MP
define build_rules
$(1)_STAMP := $(1)/.flags-$$(shell echo '$$($(2)) $$($(3)) $$($(4)) $$($(5)) $$($(6)) $$(DEPFLAGS)' | cksum | cut -d' ' -f1)
$$($(1)_STAMP):
	@mkdir -p $(1)
	@rm -f $(1)/.flags-*
	@touch $$@
$(1)/gen/tensor/kernels_decl.h: $(1)/gen/.kernels_decl.stamp ;
$(1)/gen/.kernels_decl.stamp: $(KERNEL_SRCS) scripts/kernel-index.sh
	@mkdir -p $(1)/gen/tensor
	@printf '  %-7s %s\n' GEN $(1)/gen/tensor/kernels_decl.h
	$(Q)scripts/kernel-index.sh --decls $(1)/gen/tensor/kernels_decl.h
	@touch $$@
$(1)/obj/%.o: %.c $$($(1)_STAMP) | $(1)/gen/tensor/kernels_decl.h
	$$(call compile,$(2),$$($(2)) $$($(3)) -I$(1)/gen $$(EXTRA_CFLAGS))
$(1)/obj/f32/%.o: %.c $$($(1)_STAMP) | $(1)/gen/tensor/kernels_decl.h
	$$(call compile,$(2) f32,$$($(2)) $$($(3)) $$($(4)) -I$(1)/gen -DQKV_KERNEL_F64=0)
$(1)/obj/f64/%.o: %.c $$($(1)_STAMP) | $(1)/gen/tensor/kernels_decl.h
	$$(call compile,$(2) f64,$$($(2)) $$($(3)) $$($(4)) -I$(1)/gen -DQKV_KERNEL_F64=1)
$(1)/obj/%.o: %.cc $$($(1)_STAMP)
	$$(call compile,$(5),$$($(5)) $$($(6)))
endef
define compile
@mkdir -p $(@D)
@printf '  %-7s %s\n' '$(1)' '$<'
$(Q)$(2) $(DEPFLAGS) -c $< -o $@
endef
CXX_Q := $(if $(filter clang,$(CC)),clang++,g++)
$(eval $(call build_rules,$(BUILD),CC,CFLAGS_Q,KOPT,CXX_Q,CXXFLAGS_Q))
# the optimizer's update loop is a kernel too: -O3 unswitches its branches so it vectorises,
# and without errno sqrtf is one (correctly rounded, so identical) instruction
$(BUILD)/obj/src/optim/optim.o: EXTRA_CFLAGS = $(KOPT) -fno-math-errno
$(BUILD)/obj/tests/%.o: EXTRA_CFLAGS = $(CHECK_CFLAGS) -Wno-missing-prototypes

.PHONY: all test asan demo
all: $(BUILD)/libqkv.a $(BUILD)/libqkv.so $(BUILD)/libqkv-app.a $(BUILD)/qkv

$(BUILD)/libqkv.a: $(call lib_objs,$(BUILD))
$(BUILD)/libqkv-app.a: $(call app_objs,$(BUILD))
define archive
@echo "  AR      $@"
$(Q)rm -f $@
$(Q)ar rcs $@ $^
endef
$(BUILD)/libqkv.a $(BUILD)/libqkv-app.a:
	$(archive)

# --no-undefined: the library stands alone (nothing in it needs the application's objects)
$(BUILD)/libqkv.so: $(call lib_objs,$(BUILD))
	@echo "  LD      $@"
	$(Q)$(CC) -shared -Wl,-soname,libqkv.so.0 -Wl,--no-undefined $(LDFLAGS_Q) $(SO_LIBS_FLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/qkv: $(CLI_OBJS) $(BUILD)/libqkv-app.a $(BUILD)/libqkv.a
$(BUILD)/run_tests: $(TEST_OBJS) $(BUILD)/libqkv-app.a $(BUILD)/libqkv.a
$(BUILD)/run_tests: LINK_LIBS = $(CHECK_LIBS) $(XML_LIBS)
$(BUILD)/qkv $(BUILD)/run_tests:
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS_Q) -o $@ $^ $(PKG_LIBS) $(APP_LIBS) $(LINK_LIBS)

# The tests' heap-allocation counter (tests/shim/alloc_count.c), preloaded into the qkv command by
# the tests that prove a steady step allocates nothing, and by make bench; never installed,
# and not built with a sanitizer (which has its own malloc)
ALLOC_SHIM := $(if $(SAN_FLAGS),,$(BUILD)/tests/alloc_count.so)
$(BUILD)/tests/alloc_count.so: $(BUILD)/obj/tests/shim/alloc_count.o
	@mkdir -p $(@D)
	@echo "  LD      $@"
	$(Q)$(CC) -shared $(LDFLAGS_Q) -o $@ $<

# The tests' read-only file system without a mount (tests/shim/erofs.c), preloaded into the qkv
# command by the row that needs one where no mount namespace can be made; built without the
# build's flags or sanitizer (an interposer of libc's calls, loaded ahead of everything), so a
# sanitizer's build is told not to insist on coming first
EROFS_SHIM := $(BUILD)/tests/erofs.so
$(EROFS_SHIM): tests/shim/erofs.c
	@mkdir -p $(@D)
	@echo "  LD      $@"
	$(Q)$(CC) -std=gnu11 -O2 -g -fPIC -shared -Wall -Wextra -o $@ $< -ldl

# Another CPU's /proc/cpuinfo (tests/shim/cpuinfo.c), preloaded into the qkv command by the row
# that refuses bf16 products on a CPU without AVX512_BF16; built as the one above
CPUINFO_SHIM := $(BUILD)/tests/cpuinfo.so
$(CPUINFO_SHIM): tests/shim/cpuinfo.c
	@mkdir -p $(@D)
	@echo "  LD      $@"
	$(Q)$(CC) -std=gnu11 -O2 -g -fPIC -shared -Wall -Wextra -o $@ $< -ldl

# One BLAS thread in tests: results must not depend on the machine's core count. Under the
# sanitizers an allocation beyond ASan's limit (1 TiB) returns NULL, as malloc's does, rather
# than aborting: the library reports it (tape/counting_huge asks for 2^62 bytes).
# ... libqkv.so exports exactly the documented API (no internal names), each layer of src/
# uses only the layers below it, reading the Makefile installs nothing, the answer's tables
# are what its committed results make, its picture what its committed runs recorded and the
# committed plots what their results.json draws
test: all $(BUILD)/run_tests $(ALLOC_SHIM) $(EROFS_SHIM) $(CPUINFO_SHIM)
	cd tests && OPENBLAS_NUM_THREADS=1 QKV_BIN=$(abspath $(BUILD))/qkv \
	    $(if $(ALLOC_SHIM),QKV_ALLOC_SHIM=$(abspath $(ALLOC_SHIM))) QKV_EROFS_SHIM=$(abspath $(EROFS_SHIM)) \
	    QKV_CPUINFO_SHIM=$(abspath $(CPUINFO_SHIM)) \
	    $(if $(SAN_FLAGS),ASAN_OPTIONS=verify_asan_link_order=0:allocator_may_return_null=1) ../$(BUILD)/run_tests
	scripts/check-exports.sh $(BUILD)
	scripts/check-layers.sh
	scripts/check-make-dry.sh
	scripts/kernel-index.sh --check
	$(BUILD)/qkv summarize --check-doc docs/qkv-answer.md
	$(BUILD)/qkv summarize --check-doc docs/qkv-answer.zh.md
	$(MAKE) --no-print-directory check-figures
	$(MAKE) --no-print-directory check-plots

asan:
	$(MAKE) BUILD=build-asan OPT=-O1 KOPT=-O1 \
	    SAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	    CK_TIMEOUT_MULTIPLIER=10 test

# the README's first command: the Q/K/V ablation on recall, at demo size (3.5 minutes on 2 cores)
demo: all
	$(BUILD)/qkv ablate configs/ablate-qkv-recall-demo.json --out runs/demo --jobs 2

include mk/checks.mk mk/study.mk mk/bench.mk mk/fuzz.mk mk/install.mk

# the header dependencies the compiler wrote (DEPFLAGS)
-include $(shell find $(BUILD) $(FUZZ_BUILD) -name '*.d' 2>/dev/null)
endif

# --- both passes -------------------------------------------------------------------------------
.PHONY: clean uninstall help
# (build-xsmm and build-mpi-xsmm: the GEMM=libxsmm builds of older versions)
clean:
	rm -rf build build-asan build-fuzz build-mpi build-openblas build-mpi-openblas build-xsmm build-mpi-xsmm

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/include/qkv $(DESTDIR)$(PREFIX)/lib/libqkv.* \
	    $(DESTDIR)$(PREFIX)/lib/pkgconfig/qkv.pc $(DESTDIR)$(PREFIX)/bin/qkv

help:
	@echo "make            build build/libqkv.a, build/libqkv.so (the library), build/libqkv-app.a, build/qkv"
	@echo "                (on x86-64 with libxsmm for the small float products: GEMM below)"
	@echo "make deps       install the missing Debian packages (as root; every target that builds does it first)"
	@echo "make test       run the test suites"
	@echo "make asan       run the test suites under ASan + UBSan"
	@echo "make demo       the Q/K/V ablation on recall, 4 variants x 8 seeds, ~3.5 minutes (report in runs/demo/)"
	@echo "make study      the study of docs/qkv-answer.md, fourth edition (its rates from make study-pilot)"
	@echo "make study-pilot the fourth edition's learning-rate pilot (one seed, three rates)"
	@echo "make study-sixth the sixth edition: its two-seed pilot, then every ablation (docs/results/study-sixth/)"
	@echo "make study-third the third edition (within 90 min on 2 cores)"
	@echo "make study-extra what was cut from the fourth edition to fit (noisy recall, rope elsewhere, text)"
	@echo "make study-bf16 the demo and the recall ablation with bf16 products (docs/performance.md)"
	@echo "make study-third-extra what was cut from the third edition (recall d_model 128, induction, ...)"
	@echo "make study-third-pilot the learning-rate pilot of the third edition's text ablation (~10 min)"
	@echo "make study-second the second edition (quick + extra, ~70 min)"
	@echo "make study-full the study as designed (docs/qkv-answer.md gives its compute)"
	@echo "make figures    draw the answer's attention picture from its committed runs (make figure-runs: train them)"
	@echo "make plots      draw the committed sweeps' plots under docs/results/ again from their results.json"
	@echo "make examples   build and run examples/"
	@echo "make check-fastmath  every float through the kernels' exp, normal CDF (against libm) and GELU"
	@echo "make valgrind   the end-to-end commands under valgrind memcheck"
	@echo "make bench      time the training step of the standard sizes"
	@echo "make bench-gemm time one recall step's sgemm calls on OpenBLAS, BLIS and libxsmm"
	@echo "make bench-bf16 time bf16 products (libxsmm, sbgemm) against float32 at the layer shapes"
	@echo "make bench-sweep  time a sweep of tiny training runs (runs per minute)"
	@echo "make bench-against REF=R  this build beside a build of revision R, alternating"
	@echo "make fuzz       run the libFuzzer targets, FUZZ_SECONDS each (default 60)"
	@echo "make install    install (PREFIX=$(PREFIX), DESTDIR=)"
	@echo "GEMM=openblas   (with any target) OpenBLAS alone for every product, into build-openblas/"
	@echo "GEMM=libxsmm    (with any target) small float products through libxsmm, the rest through OpenBLAS:"
	@echo "                the default on x86-64 (an error instead of OpenBLAS alone when libxsmm cannot be had)"
