/* The documents of a sweep: what the study (src/ablate/) aggregated from its runs, rendered as
 * tables, plots, Markdown and HTML. The report layer reads results and files only; it never
 * builds a model or trains (the runs recorded what it shows: train/observe.h). */
#ifndef QKV_REPORT_H
#define QKV_REPORT_H

#include "qkv_api.h"

#include "ablate/results.h"

#include <stdbool.h>
#include <stdio.h>

/* Write results.md, results.csv, results.json, plots/ (SVG files), report.md and report.html into
 * out_dir (atomically, file by file); also print the markdown table to `table` if non-NULL.
 * 0, or -1 with e */
QKV_INTERNAL int qkv__report_write(const qkv_ablate_results *r, const char *out_dir, FILE *table, qkv_err *e);
/* Only r's summary plots (report_plots.c's list: those drawn from results.json's numbers, not the
 * attention maps or the symmetry plot, whose data results.json does not hold) into
 * out_dir/plots/, each file atomically, after every one was drawn in memory; their paths relative
 * to out_dir, joined by ", ", into names (n bytes). The number written, or -1 with e */
QKV_INTERNAL int qkv__report_write_plots(const qkv_ablate_results *r, const char *out_dir, char *names, size_t n,
                                         qkv_err *e);
/* text into dir/name, atomically (a reader never sees half a file); 0, or -1 with e */
QKV_INTERNAL int qkv__report_write_text(const char *dir, const char *name, const char *text, qkv_err *e);
/* out_dir, and with plots its plots/ directory, made where missing; 0, or -1 with e */
QKV_INTERNAL int qkv__report_mkdirs(const char *out_dir, bool plots, qkv_err *e);
#endif
