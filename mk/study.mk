# The study of docs/qkv-answer.md, third edition: within 90 minutes on 2 cores; what was cut from
# it to fit; the learning-rate pilot its text ablation's rates come from; the second edition
# (quick, within an hour) and the study as designed (configs/study/, scripts/study.sh)
.PHONY: study study-extra study-pilot study-second study-full
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
