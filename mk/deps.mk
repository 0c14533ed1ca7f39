# The Debian packages the goals need, and `make deps`, which installs the missing ones
# (scripts/install-deps.sh: with apt-get when root; otherwise it prints the apt-get line and
# fails). The Makefile runs it before any goal that builds; reading this file runs nothing.
# Every build needs pkg-config, OpenBLAS, cJSON, liblzma, Check, sentencepiece, nettle, expat (the
# tests' XML parser) and g++ (install-deps.sh's own list); these goals and settings need more:
DEPS_GOALS := $(or $(MAKECMDGOALS),all)
# $(call deps_if,GOAL PATTERNS,PACKAGES): the packages when a goal matches
deps_if = $(if $(filter $(1),$(DEPS_GOALS)),$(2))
DEPS_PKGS := $(call deps_if,fuzz build-fuzz/%,clang libclang-rt-14-dev) \
             $(call deps_if,bench-gemm %/bench/gemm_shapes,libblis-serial-dev libxsmm-dev) \
             $(call deps_if,valgrind,valgrind) \
             $(if $(filter 1,$(MPI)),libopenmpi-dev openmpi-bin) \
             $(if $(filter libxsmm,$(GEMM)),libxsmm-dev)
# the tests use these when present (installed when missing and root; never an error): the
# fortunes corpora (task.corpus fortunes and fortunes-zh) and xz, whose size the xz baseline is
# checked against
DEPS_OPTIONAL := $(call deps_if,test asan,fortunes fortunes-zh xz-utils)
# the default build on x86-64 takes libxsmm when it is installed or can be (when not, no error:
# the build uses OpenBLAS alone, with a note)
DEPS_TRY := $(if $(filter libxsmm,$(GEMM_AUTO)),libxsmm-dev)

.PHONY: deps
deps:
	@QKV_EXTRA_PKGS="$(strip $(DEPS_PKGS))" QKV_OPTIONAL_PKGS="$(DEPS_OPTIONAL)" QKV_TRY_PKGS="$(DEPS_TRY)" \
	    scripts/install-deps.sh
