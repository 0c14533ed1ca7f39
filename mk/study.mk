# The study of docs/qkv-answer.md: its fourth edition, what was cut from it to fit 90 minutes and
# the learning-rate pilot whose choices both use; the third edition (within 90 minutes on 2 cores) with what was cut from it and its pilot;
# the second edition (quick, within an hour) and the study as designed (configs/study/,
# scripts/study.sh)
.PHONY: study study-pilot study-extra study-third study-third-extra study-third-pilot study-second study-full
study: all
	QKV=$(BUILD)/qkv scripts/study.sh fourth
study-pilot: all
	QKV=$(BUILD)/qkv scripts/study.sh fourth-pilot
study-extra: all
	QKV=$(BUILD)/qkv scripts/study.sh fourth-extra
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
