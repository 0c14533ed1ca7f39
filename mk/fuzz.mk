# Fuzzing (docs/reliability.md): the whole library and application built with clang, ASan and
# UBSan into build-fuzz/libqkv.a (the Makefile's one compile rule, with clang and these flags),
# and each libFuzzer target fuzz/fuzz_NAME.c linked against it. Each runs FUZZ_SECONDS (default
# 60) from its seeds in fuzz/corpus/NAME/; the inputs it finds go to build-fuzz/corpus/NAME/. A
# crash fails the target and is kept as build-fuzz/crash-NAME-*; the log of a run is
# build-fuzz/fuzz_NAME.log. (deps installs clang and its libFuzzer runtime.)
.PHONY: fuzz
FUZZ_SECONDS ?= 60
FUZZ_BUILD   := build-fuzz
FUZZ_TARGETS := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
CLANG        := clang
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS  := -std=c11 -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
                -ffp-contract=off -D_POSIX_C_SOURCE=200809L -Isrc $(PKG_CFLAGS) -DQKV_VERSION='"$(VERSION)"'
FUZZ_KFLAGS  :=
CLANGXX      := clang++
FUZZ_CXXFLAGS := -std=c++17 -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
                 -D_POSIX_C_SOURCE=200809L -Isrc $(SPM_CFLAGS)
$(eval $(call build_rules,$(FUZZ_BUILD),CLANG,FUZZ_CFLAGS,FUZZ_KFLAGS,CLANGXX,FUZZ_CXXFLAGS))

$(FUZZ_BUILD)/libqkv.a: $(call lib_objs,$(FUZZ_BUILD)) $(call app_objs,$(FUZZ_BUILD))
	$(archive)

# (the targets' objects are kept: make would delete them as intermediate files; linked by the
# C++ driver, which brings the sanitizers' C++ runtime the tokenizer's C++ file needs)
.SECONDARY: $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/obj/fuzz/fuzz_%.o)
$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/obj/fuzz/fuzz_%.o $(FUZZ_BUILD)/libqkv.a
	@echo "  FUZZER  $@"
	$(Q)$(CLANGXX) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS) $(APP_LIBS)

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
