# The study of docs/qkv-answer.md: its fourth edition, what was cut from it to fit 90 minutes and
# the learning-rate pilot whose choices both use; the third edition (within 90 minutes on 2 cores) with what was cut from it and its pilot;
# the second edition (quick, within an hour) and the study as designed (configs/study/,
# scripts/study.sh)
.PHONY: study study-pilot study-extra study-bf16 study-third study-third-extra study-third-pilot study-second study-full \
        study-sixth
# the sixth edition (docs/results/study-sixth/predictions.md): its pilot, the rates it chose written
# into configs/study/sixth/ (scripts/study-configs.py stops, naming the rates to add, where a
# chosen rate is at an end of the grid), then every ablation of it; each ablation within 90
# minutes on 2 cores; then the predictions' rules applied to what was committed
# (scripts/sixth-decide.py writes docs/results/study-sixth/decisions.md)
study-sixth: all
	QKV=$(BUILD)/qkv scripts/study.sh sixth-pilot
	python3 scripts/study-configs.py
	QKV=$(BUILD)/qkv scripts/study.sh sixth
	python3 scripts/sixth-decide.py
study: all
	QKV=$(BUILD)/qkv scripts/study.sh fourth
study-pilot: all
	QKV=$(BUILD)/qkv scripts/study.sh fourth-pilot
study-extra: all
	QKV=$(BUILD)/qkv scripts/study.sh fourth-extra
study-bf16: all
	QKV=$(BUILD)/qkv scripts/study.sh bf16
study-third: all
	QKV=$(BUILD)/qkv scripts/study.sh third
study-third-extra: all
	QKV=$(BUILD)/qkv scripts/study.sh third-extra
study-third-pilot: all
	QKV=$(BUILD)/qkv scripts/study.sh third-pilot
study-second: all
	QKV=$(BUILD)/qkv scripts/study.sh quick && QKV=$(BUILD)/qkv scripts/study.sh extra
study-full: all
	QKV=$(BUILD)/qkv scripts/study.sh full

# The answer's picture (docs/qkv-answer.md's first screen): one recall example's attention in the
# seed-0 runs of full, qk_tied and qk_diag_alt, the fourth edition's recipe
# (configs/figures/recall-attention.json). make figures draws it from the committed runs; make
# figure-runs trains them again (about a minute on 2 cores) and keeps what the picture and qkv
# inspect read: config.json, model.safetensors, observed.safetensors, summary.json, metrics.jsonl
FIGURE := docs/results/study-fourth/recall-attention
FIGURE_RUNS := full qk_tied qk_diag_alt
# the picture drawn into $(1), in English; figure_zh_cmd: in Chinese (the Chinese answer's)
figure_cmd = $(BUILD)/qkv inspect $(FIGURE_RUNS:%=$(FIGURE)/runs/%/seed0) --figure $(1) \
    --label full --label "Q = K tied (qk_tied)" --label "signed tied (qk_diag_alt)"
figure_zh_cmd = $(BUILD)/qkv inspect $(FIGURE_RUNS:%=$(FIGURE)/runs/%/seed0) --figure $(1) --lang zh \
    --label full --label "绑定的 Q = K（qk_tied）" --label "带符号的绑定得分（qk_diag_alt）"
.PHONY: figures figure-runs check-figures
figures: all
	$(call figure_cmd,$(FIGURE)/attention.svg)
	$(call figure_zh_cmd,$(FIGURE)/attention.zh.svg)
figure-runs: all
	$(BUILD)/qkv ablate configs/figures/recall-attention.json --out runs/figure-recall-attention --jobs 2
	for v in $(FIGURE_RUNS); do mkdir -p $(FIGURE)/runs/$$v/seed0 && \
	    cp $(addprefix runs/figure-recall-attention/runs/$$v/seed0/,config.json model.safetensors \
	    observed.safetensors summary.json metrics.jsonl) $(FIGURE)/runs/$$v/seed0/ || exit 1; done
	$(MAKE) figures
# the committed pictures are what their committed runs draw (make test)
check-figures: all
	$(call figure_cmd,$(BUILD)/attention.svg)
	$(call figure_zh_cmd,$(BUILD)/attention.zh.svg)
	for f in attention.svg attention.zh.svg; do cmp $(BUILD)/$$f $(FIGURE)/$$f || \
	    { echo "check-figures: $(FIGURE)/$$f is not what its runs draw: make figures" >&2; exit 1; }; done

# The committed sweeps' plots drawn from their results.json alone (qkv summarize --plots): make
# plots draws them again with this qkv; make check-plots (make test) draws them into build/ and
# fails on one that differs, so they cannot drift from the code (the attention maps and symmetry
# plots need the runs, which are not committed, and are left as they are)
PLOT_DIRS = $(patsubst %/results.json,%,$(wildcard docs/results/*/results.json docs/results/*/*/results.json))
PLOT_FILES := accuracy.svg loss.svg learning-rate.svg
.PHONY: plots check-plots
plots: all
	for d in $(PLOT_DIRS); do $(BUILD)/qkv summarize --plots $$d --quiet || exit 1; done
check-plots: all
	rm -rf $(BUILD)/check-plots
	for d in $(PLOT_DIRS); do \
	    $(BUILD)/qkv summarize --plots $$d --out $(BUILD)/check-plots/$$d --quiet || exit 1; \
	    for f in $(PLOT_FILES); do \
	        [ -e $$d/plots/$$f ] || [ -e $(BUILD)/check-plots/$$d/plots/$$f ] || continue; \
	        cmp -s $(BUILD)/check-plots/$$d/plots/$$f $$d/plots/$$f || \
	            { echo "check-plots: $$d/plots/$$f is not what its results.json draws: make plots" >&2; exit 1; }; \
	    done; \
	done
	@echo "check-plots: the plots of $(words $(PLOT_DIRS)) committed sweeps are what their results.json draws"
