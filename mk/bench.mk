# Benchmarks (docs/performance.md). The step benchmark runs with the tests' allocation counter
# preloaded (the Makefile's ALLOC_SHIM), for its allocs/step column.
.PHONY: bench bench-torch bench-gemm bench-bf16 bench-sweep bench-sweep-torch bench-against

# every size at 1 and 2 threads
bench: all $(ALLOC_SHIM)
	$(if $(ALLOC_SHIM),LD_PRELOAD=$(abspath $(ALLOC_SHIM))) $(BUILD)/qkv bench --threads 1
	$(if $(ALLOC_SHIM),LD_PRELOAD=$(abspath $(ALLOC_SHIM))) $(BUILD)/qkv bench --threads 2

# qkv and PyTorch side by side (needs Debian's python3-torch)
bench-torch: all
	@/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "make bench-torch needs PyTorch: apt-get install python3-torch"; exit 1; }
	/usr/bin/python3 bench/compare.py

# Single-threaded sgemm on the products of one recall training step: OpenBLAS, BLIS, libxsmm
# (bench/gemm_shapes.c). Not part of the library: a program of its own, with its own flags.
# BLIS is Debian's serial build, linked statically from its own directory (libblis.so may point
# at another variant); OpenBLAS comes first on the link line, since BLIS defines cblas_sgemm
# and sgemm_ as well.
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
BLIS_DIR  := /usr/lib/$(MULTIARCH)/blis-serial
BLIS_INC  := /usr/include/$(MULTIARCH)/blis-serial
BENCH_GEMM_ARGS ?=
$(BUILD)/bench/gemm_shapes: bench/gemm_shapes.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -DHAVE_BLIS -DHAVE_LIBXSMM -isystem $(BLIS_INC) \
	    $(call pkgs,--cflags,openblas libxsmm) $< -o $@ \
	    $(call pkgs,--libs,openblas) $(BLIS_DIR)/libblis.a $(call pkgs,--libs,libxsmm) -lm

bench-gemm: $(BUILD)/bench/gemm_shapes
	$(BUILD)/bench/gemm_shapes $(BENCH_GEMM_ARGS)

# a sweep of tiny runs (recall x 4 variants x 3 seeds, one `qkv train --threads 1` per core at
# a time): runs per minute, tokens/s per core, FLOPs
bench-sweep: all
	$(BUILD)/qkv bench --sweep

# the same sweep in PyTorch (bench/torch_sweep.py), alternating with qkv's, 3 rounds each
bench-sweep-torch: all
	@/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "make bench-sweep-torch needs PyTorch: apt-get install python3-torch"; exit 1; }
	/usr/bin/python3 bench/compare_sweep.py

# this build beside a build of git revision REF, alternating (scripts/bench-against.sh):
# make bench-against REF=3f1d3a7 [ROUNDS=5]
bench-against:
	@test -n "$(REF)" || { echo "usage: make bench-against REF=<git revision> [ROUNDS=5]"; exit 2; }
	scripts/bench-against.sh $(REF) $(or $(ROUNDS),5)

# Single-threaded bf16 products (libxsmm's bf16 kernels, OpenBLAS's sbgemm when exported) against
# float32 ones at the recall and text models' layer shapes (bench/bf16_gemm.c)
# (qkv's own bf16 product, a column of it, comes from the build's libqkv.a)
$(BUILD)/bench/bf16_gemm: bench/bf16_gemm.c $(BUILD)/libqkv.a
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -Isrc $(call pkgs,--cflags,openblas libxsmm) $< -o $@ \
	    $(BUILD)/libqkv.a $(PKG_LIBS) -lpthread -ldl -lm

bench-bf16: $(BUILD)/bench/bf16_gemm
	$(BUILD)/bench/bf16_gemm $(BENCH_BF16_ARGS)
