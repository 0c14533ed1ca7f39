# Checks beside make test: the examples, every float through the fast math, valgrind.
.PHONY: examples check-fastmath valgrind

# Examples: each examples/NAME.c linked into $(BUILD)/examples/NAME, then all run (one BLAS
# thread, like the tests); any failing example fails the target.
EXAMPLES     := xor_mlp attention_recall custom_op
EXAMPLE_BINS := $(EXAMPLES:%=$(BUILD)/examples/%)

# examples include <qkv/qkv.h> (the library alone) as an installed program does ($(BUILD)/include/qkv
# stands for the installed include/qkv; scripts/check-install.sh builds them against a real install)
$(BUILD)/include/qkv:
	@mkdir -p $(BUILD)/include
	@ln -sfn $(abspath src) $@
$(EXAMPLES:%=$(BUILD)/obj/examples/%.o): | $(BUILD)/include/qkv
$(BUILD)/obj/examples/%.o: EXTRA_CFLAGS = -I$(BUILD)/include

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

# every float through the float kernels' exp, normal CDF and GELU (tests/test_fastmath.c), one
# process per core; make test checks every 61st
check-fastmath: $(BUILD)/run_tests
	$(Q)n=$$(nproc); k=0; pids=; while [ $$k -lt $$n ]; do \
	    (cd tests && QKV_FASTMATH_ALL=$$k/$$n CK_RUN_SUITE=fastmath CK_RUN_CASE=accuracy ../$(BUILD)/run_tests) & pids="$$pids $$!"; \
	    k=$$((k + 1)); done; rc=0; for p in $$pids; do wait $$p || rc=1; done; exit $$rc

# the end-to-end commands under valgrind memcheck (docs/reliability.md; deps installs valgrind)
valgrind: all
	scripts/valgrind-e2e.sh $(BUILD)
